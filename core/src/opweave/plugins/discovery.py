"""Finding the ``opweave.plugins`` entry points, remembered from one process to the next.

:func:`importlib.metadata.entry_points` reads the metadata of every installed distribution
to find the few that declare opweave plugins: about 10 ms in a fresh process with some 80
distributions installed, more with more. Every process that compiles a function pays it
before anything else, so what it finds is kept in ``<compiledir>/plugins/``, with what it
was found in:

- the Python executable and version, and ``sys.path``;
- for each entry of ``sys.path``, its device, inode, and modification and change times.

Installing, upgrading or removing a distribution (``pip``, an editable install included)
adds or removes the distribution's metadata directory in one of those directories, which
changes that directory's times (the change time, unlike the modification time, cannot be
set back); a process that finds any of them changed reads the metadata again, and keeps
the new answer. Editing a distribution's ``entry_points.txt`` in place, which no
installer does, goes unnoticed until the next install or until the answers are removed
(``python -m opweave cache clear``).

An answer is not kept when a directory changed within the last :data:`SETTLE_SECONDS`
(a file system's clock is coarser than its timestamps' resolution, so a change right after
the reading could leave the time as it was), nor when a finder other than the standard
path finder (or the ``importlib_metadata`` backport's, which replaces it) can report
distributions (its answers have no directory to watch). A kept
answer is read only when no other user could have written it
(:func:`opweave.plugins.trusted_files.read_trusted`, the rule of the module cache), since it
names modules to import; a damaged one is read again from the metadata.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from importlib import machinery, metadata
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from opweave.configdefaults import config
from opweave.plugins import trusted_files

__all__ = [
    "FORMAT",
    "KEPT_FILES",
    "SETTLE_SECONDS",
    "PluginSource",
    "clear_kept",
    "find_plugins",
    "kept_folder",
    "source_of",
]

#: The version of the kept answers' layout.
FORMAT = 1
#: A directory changed this recently (seconds) makes the answer not kept.
SETTLE_SECONDS = 2.0
#: The most answers kept (one per Python executable and ``sys.path``); keeping one more
#: removes the least recently written.
KEPT_FILES = 64


class PluginSource(NamedTuple):
    """An entry point declaring an opweave plugin, and the distribution declaring it."""

    entry_point: metadata.EntryPoint
    distribution: str | None
    version: str | None


def source_of(ep: metadata.EntryPoint) -> PluginSource:
    """``ep`` with the name and version of its distribution (``None`` when unknown)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return PluginSource(ep, None, None)
    return PluginSource(ep, dist.metadata["Name"], dist.version)


def find_plugins(group: str) -> list[PluginSource]:
    """The entry points of ``group`` in the installed distributions, in
    :func:`importlib.metadata.entry_points` order; the kept answer when nothing it was
    found in has changed since."""
    stamp = _path_stamp()
    if stamp is None:
        return [source_of(ep) for ep in metadata.entry_points(group=group)]
    path = kept_folder() / f"{_name(stamp, group)}.json"
    kept = _read(path, stamp, group)
    if kept is not None:
        return kept
    found = [source_of(ep) for ep in metadata.entry_points(group=group)]
    if _settled(stamp):
        _write(path, stamp, group, found)
    return found


def kept_folder() -> Path:
    """Where the answers are kept: ``<compiledir>/plugins``."""
    return Path(config.compiledir) / "plugins"


def clear_kept() -> int:
    """Remove every kept answer; returns how many there were."""
    files = _files()
    return sum(files.remove_quietly(path) for path in files.files_by_age(kept_folder(), ".json"))


def _files() -> ModuleType:
    """:mod:`opweave.plugins.trusted_files`: the kept answers are read, written and pruned
    under the rule of the module cache."""
    return trusted_files


def _path_stamp() -> dict[str, Any] | None:
    """What the distributions are found in, or ``None`` when a finder other than the
    standard path finder can report them."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and not _searches_sys_path(finder):
            return None
    entries: list[list[Any]] = []
    for entry in sys.path:
        where = os.path.abspath(entry or ".")
        try:
            info = os.stat(where)
        except OSError:
            entries.append([where, None])
        else:
            entries.append([where, info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns])
    return {"python": sys.executable, "version": sys.version, "path": entries}


def _searches_sys_path(finder: Any) -> bool:
    """Whether ``finder`` reports the distributions of ``sys.path``'s directories only: the
    standard path finder, or the ``importlib_metadata`` backport's, which takes its place
    once imported (it removes the standard one's ``find_distributions``)."""
    if finder is machinery.PathFinder:
        return True
    cls = finder if isinstance(finder, type) else type(finder)
    return cls.__module__ == "importlib_metadata" and cls.__qualname__ == "MetadataPathFinder"


def _name(stamp: dict[str, Any], group: str) -> str:
    """The file of the answers for this executable, ``sys.path`` and group."""
    where = [stamp["python"], group, *(entry[0] for entry in stamp["path"])]
    return hashlib.sha256("\0".join(where).encode()).hexdigest()[:32]


def _settled(stamp: dict[str, Any]) -> bool:
    newest = max((entry[3] for entry in stamp["path"] if entry[1] is not None), default=0)
    return newest < time.time_ns() - int(SETTLE_SECONDS * 1e9)


def _read(path: Path, stamp: dict[str, Any], group: str) -> list[PluginSource] | None:
    try:
        data, problem = _files().read_trusted(path)
    except OSError:
        return None
    if data is None or problem is not None:
        return None
    try:
        kept = json.loads(data)
        if kept["format"] != FORMAT or kept["stamp"] != stamp or kept["group"] != group:
            return None
        return [
            PluginSource(metadata.EntryPoint(name, value, group), dist, version)
            for name, value, dist, version in kept["found"]
        ]
    except (ValueError, KeyError, TypeError):
        return None


def _write(path: Path, stamp: dict[str, Any], group: str, found: list[PluginSource]) -> None:
    rows = [[s.entry_point.name, s.entry_point.value, s.distribution, s.version] for s in found]
    text = json.dumps({"format": FORMAT, "stamp": stamp, "group": group, "found": rows})
    files = _files()
    try:
        files.write_whole(path, text.encode())
    except OSError:
        return  # a compile directory that cannot be written: read the metadata each time
    files.keep_newest(path.parent, ".json", KEPT_FILES)
