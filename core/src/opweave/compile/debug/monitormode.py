"""``MonitorMode``: a mode calling user functions before and after every node runs.

PyTensor's name and contract: ``MonitorMode(pre_func, post_func)`` compiles like
``FAST_RUN`` (or the given ``optimizer``) and runs the nodes one by one, calling
``pre_func(fgraph, i, node, fn)`` before node ``i`` and ``post_func(fgraph, i, node, fn)``
after it, where ``fn`` is the node's thunk: ``fn.inputs`` and ``fn.outputs`` are the
storage cells (one-element lists) of the node's inputs and outputs. :func:`detect_nan` is a
ready-made ``post_func``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from opweave.compile.mode_base import Mode
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import Linker
from opweave.link.loop import LoopLinker
from opweave.printing import debugprint

__all__ = ["MonitorLinker", "MonitorMode", "detect_nan"]

#: ``pre_func``/``post_func``: ``(fgraph, node index, node, thunk) -> None``.
MonitorFunc = Callable[[FunctionGraph, int, Apply, Any], None]


class _MonitoredThunk:
    """A node's thunk, run between the mode's ``pre_func`` and ``post_func``."""

    def __init__(
        self,
        mode: MonitorMode,
        fgraph: FunctionGraph,
        index: int,
        node: Apply,
        thunk: Any,
        storage_map: dict[Variable, list[Any]],
    ) -> None:
        self.mode = mode
        self.fgraph = fgraph
        self.index = index
        self.node = node
        self.thunk = thunk
        self.inputs = [storage_map[v] for v in node.inputs]
        self.outputs = [storage_map[v] for v in node.outputs]
        self.lazy = bool(getattr(thunk, "lazy", False))
        self.impl = getattr(thunk, "impl", None)

    def __call__(self) -> Any:
        if self.mode.pre_func is not None:
            self.mode.pre_func(self.fgraph, self.index, self.node, self)
        result = self.thunk()
        if self.mode.post_func is not None:
            self.mode.post_func(self.fgraph, self.index, self.node, self)
        return result


class MonitorLinker(LoopLinker):
    """The linker of :class:`MonitorMode`: the nodes' Python implementations, one thunk
    per node, each run between the mode's ``pre_func`` and ``post_func``.

    Parameters
    ----------
    mode
        The :class:`MonitorMode` whose functions are called.
    allow_gc
        As for every linker (default ``config.allow_gc``).
    """

    name: ClassVar[str] = "monitor"
    impls: ClassVar[tuple[str | None, ...]] = ("py",)

    def __init__(self, mode: MonitorMode | None = None, allow_gc: bool | None = None) -> None:
        super().__init__(allow_gc=allow_gc)
        self.mode = mode

    def accept(
        self,
        fgraph: FunctionGraph,
        no_recycling: Sequence[Variable] | None = None,
        profile: Any = None,
    ) -> Linker:
        """Take ``fgraph`` (a linker already holding another graph gives a new one)."""
        if self.fgraph is not None and self.fgraph is not fgraph:
            return MonitorLinker(self.mode, self.allow_gc).accept(fgraph, no_recycling, profile)
        return super().accept(fgraph, no_recycling, profile)

    def make_thunks(
        self,
        order: list[Apply],
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
    ) -> list[Any]:
        """The nodes' thunks, each wrapped to call the mode's functions around it."""
        thunks = super().make_thunks(order, storage_map, compute_map)
        if self.mode is None:
            return thunks
        assert self.fgraph is not None
        return [
            _MonitoredThunk(self.mode, self.fgraph, i, node, thunk, storage_map)
            for i, (node, thunk) in enumerate(zip(order, thunks, strict=True))
        ]


class MonitorMode(Mode):
    """A mode calling ``pre_func`` before and ``post_func`` after every node runs.

    Parameters
    ----------
    pre_func, post_func
        ``None`` or ``f(fgraph, i, node, fn)``: ``i`` is the node's position in the run
        order, ``fn`` its thunk (``fn.inputs``, ``fn.outputs``: storage cells).
    optimizer
        As for :class:`~opweave.compile.mode.Mode` (``"default"``: ``fast_run``).
    linker
        Must be ``None``: the mode uses its own linker (:class:`MonitorLinker`).

    Raises
    ------
    ValueError
        When a linker is given.
    """

    def __init__(
        self,
        pre_func: MonitorFunc | None = None,
        post_func: MonitorFunc | None = None,
        optimizer: Any = "default",
        linker: Any = None,
    ) -> None:
        if linker is not None and not (
            isinstance(linker, MonitorLinker) and isinstance(linker.mode, MonitorMode)
        ):
            raise ValueError("MonitorMode uses its own linker: do not pass linker=")
        super().__init__(linker=None, optimizer=optimizer)
        self.linker = MonitorLinker(self)
        self.pre_func = pre_func
        self.post_func = post_func

    def _with(self, **changes: tuple[str, ...]) -> Mode:
        new = MonitorMode(self.pre_func, self.post_func, self.optimizer)
        new._including, new._excluding, new._requiring = (
            self._including,
            self._excluding,
            self._requiring,
        )
        for key, tags in changes.items():
            setattr(new, key, getattr(new, key) + tuple(tags))
        return new

    def clone(self, link_kwargs: Any = None, optimizer: Any = "", **kwargs: Any) -> MonitorMode:
        """A copy with the same functions (``optimizer`` replaces the rewrites when given)."""
        return MonitorMode(
            self.pre_func, self.post_func, self.optimizer if optimizer == "" else optimizer
        )


def detect_nan(fgraph: FunctionGraph, i: int, node: Apply, fn: Any) -> None:
    """A ``post_func`` printing the node, its inputs and outputs when an output holds NaN."""
    for output in fn.outputs:
        value = output[0]
        if isinstance(value, np.random.Generator):
            continue
        try:
            has_nan = bool(np.isnan(value).any())
        except TypeError:  # not numeric
            continue
        if has_nan:
            print("*** NaN detected ***")
            debugprint(node)
            print(f"Inputs : {[cell[0] for cell in fn.inputs]}")
            print(f"Outputs: {[cell[0] for cell in fn.outputs]}")
            break
