"""The ``vm`` linker: every node's Python implementation in the core's thunk loop."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from opweave.graph.basic import Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.loop import LoopLinker, gc_plan

__all__ = ["VMLinker", "gc_plan"]


class VMLinker(LoopLinker):
    """Run the nodes' Python thunks in a tight loop that frees intermediates early.

    With ``allow_gc`` (default ``config.allow_gc``) each intermediate is freed after its
    last client ran; without it, intermediates stay in their cells so that ``perform`` can
    reuse their memory on the next call, except views of the inputs, emptied at the end of
    each call (see :class:`opweave.link.loop.LoopLinker`).

    The arguments are PyTensor's ``VMLinker``'s.

    Parameters
    ----------
    allow_gc
        Free intermediates after their last use (default ``config.allow_gc``).
    use_cloop, c_thunks
        PyTensor's C loop and C thunks. opweave's ``vm`` runs Python thunks; the ``cvm``
        linker (``Mode(linker="cvm")``, from the opweave-c distribution) runs C thunks. So
        only ``False`` (and ``None`` for ``c_thunks``) is accepted.
    callback, callback_input
        Called as ``f(node=, thunk=, storage_map=, compute_map=)`` after (``callback``) or
        before (``callback_input``) each call of a node's thunk.
    lazy
        ``True``: the lazy loop (only what the outputs need runs); ``False``: every node
        runs (both branches of an ``ifelse``); ``None``: ``config.vm__lazy``.
    schedule, allow_partial_eval
        PyTensor's node scheduler and partial evaluation, which opweave's loop does not
        have: only ``None`` (and ``False`` for ``allow_partial_eval``) is accepted.

    Raises
    ------
    ValueError
        For ``use_cloop=True``, ``c_thunks=True``, a ``schedule`` or
        ``allow_partial_eval=True``.
    """

    name: ClassVar[str] = "vm"
    priority: ClassVar[int] = 20
    #: Nothing to compile: what ``FAST_COMPILE`` picks.
    compile_priority: ClassVar[int] = 20
    impls: ClassVar[tuple[str | None, ...]] = ("py",)

    def __init__(
        self,
        allow_gc: bool | None = None,
        use_cloop: bool = False,
        callback: Callable[..., Any] | None = None,
        callback_input: Callable[..., Any] | None = None,
        lazy: bool | None = None,
        schedule: Callable[..., Any] | None = None,
        c_thunks: bool | None = None,
        allow_partial_eval: bool | None = None,
    ) -> None:
        if use_cloop or c_thunks:
            raise ValueError(
                "VMLinker: use_cloop=True and c_thunks=True ask for C thunks, which the "
                "'vm' linker does not run; use Mode(linker='cvm') (opweave-c) for them"
            )
        if schedule is not None or allow_partial_eval:
            raise ValueError(
                "VMLinker: schedule and allow_partial_eval=True are not supported; the loop "
                "runs the nodes in the graph's order (lazy=True computes only what the "
                "outputs need)"
            )
        if lazy not in (None, True, False):
            raise ValueError(f"VMLinker: lazy must be None, True or False, got {lazy!r}")
        super().__init__(allow_gc=allow_gc)
        self.use_cloop = False
        self.c_thunks = c_thunks
        self.allow_partial_eval = allow_partial_eval
        self.schedule = None
        self.callback = callback
        self.callback_input = callback_input
        self.lazy = lazy

    def accept(
        self,
        fgraph: FunctionGraph,
        no_recycling: Sequence[Variable] | None = None,
        profile: Any = None,
    ) -> VMLinker:
        """Take ``fgraph`` to link; a linker that holds another graph links a new one with
        the same arguments."""
        if self.fgraph is not None and self.fgraph is not fgraph:
            other = type(self)(
                allow_gc=self.allow_gc,
                callback=self.callback,
                callback_input=self.callback_input,
                lazy=self.lazy,
            )
            return other.accept(fgraph, no_recycling, profile)
        super().accept(fgraph, no_recycling, profile)
        return self
