"""Reading what opweave itself wrote under ``config.compiledir``, and nothing else.

The rules live in :mod:`opweave.plugins.trusted_files`, below the link layer, because plugin
discovery keeps its answers under the same rule; this module gives the same names at the
path the C backend's module cache and the cache of rewritten graphs import them from.
"""

from __future__ import annotations

from opweave.plugins.trusted_files import (
    OPEN_FLAGS,
    files_by_age,
    keep_newest,
    open_trusted,
    read_trusted,
    remove_quietly,
    trusted_uids,
    unsafe_ancestry,
    unsafe_reason,
    write_whole,
)

__all__ = [
    "OPEN_FLAGS",
    "files_by_age",
    "keep_newest",
    "open_trusted",
    "read_trusted",
    "remove_quietly",
    "trusted_uids",
    "unsafe_ancestry",
    "unsafe_reason",
    "write_whole",
]
