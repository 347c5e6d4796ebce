"""The core's own plugin: what opweave provides through the same hooks a third party uses."""

from __future__ import annotations

from typing import Any

from opweave.plugins.forksafe import ForkSafeLock
from opweave.plugins.hookspecs import hookimpl

#: Held while the standard rewrites are first imported: a fork waits for that import (a
#: child could not finish another thread's).
_importing_rewrites = ForkSafeLock(fork_waits=True)


@hookimpl(trylast=True)
def opweave_transfer(var: Any, target: str) -> Any:
    """Built-in target ``'cpu'``: host values stay where they are.

    Plugins whose Types live elsewhere (GPU arrays) are asked first and answer
    for their own variables.
    """
    if target == "cpu":
        return var
    return None


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """The core's standard rewrites (constant folding, canonicalization, shapes, fusion,
    in-place), registered like any plugin's: see :mod:`opweave.tensor.rewriting.plugin`.
    """
    with _importing_rewrites:
        # late: the tensor library (a floor above plugins) holds the standard rewrites
        from opweave.tensor.rewriting.plugin import register_standard_rewrites

    register_standard_rewrites(db)
