"""The ``vm`` linker: every node's Python implementation in the core's thunk loop."""

from __future__ import annotations

from typing import ClassVar

from opweave.link.loop import LoopLinker, gc_plan

__all__ = ["VMLinker", "gc_plan"]


class VMLinker(LoopLinker):
    """Run the nodes' Python thunks in a tight loop that frees intermediates early.

    With ``allow_gc`` (default ``config.allow_gc``) each intermediate is freed after its
    last client ran; without it, intermediates stay in their cells so that ``perform`` can
    reuse their memory on the next call, except views of the inputs, emptied at the end of
    each call (see :class:`opweave.link.loop.LoopLinker`).
    """

    name: ClassVar[str] = "vm"
    priority: ClassVar[int] = 20
    #: Nothing to compile: what ``FAST_COMPILE`` picks.
    compile_priority: ClassVar[int] = 20
    impls: ClassVar[tuple[str | None, ...]] = ("py",)
