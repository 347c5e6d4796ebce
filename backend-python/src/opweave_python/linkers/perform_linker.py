"""The ``py`` linker: every node through its Python implementation, in order."""

from __future__ import annotations

from typing import ClassVar

from opweave.link.loop import LoopLinker

__all__ = ["PerformLinker"]


class PerformLinker(LoopLinker):
    """Run each node's ``perform`` one after the other; keep every value until the end
    of the call (and, but for views of the inputs, until the next one)."""

    name: ClassVar[str] = "py"
    priority: ClassVar[int] = 10
    compile_priority: ClassVar[int] = 10
    impls: ClassVar[tuple[str | None, ...]] = ("py",)
    keep_values: ClassVar[bool] = True
