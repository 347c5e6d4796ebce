"""The ``cvm`` linker's loop in C: a function's steps run by the runtime, not by Python.

Every generated module exports ``link_steps`` (``opw_link_steps`` in
``csrc/runtime_functions.h``), which binds a sequence of steps to its cells: each step is
a compiled block bound to its cells (:func:`~opweave_c.linkers.block_call.link_block`,
whose function the loop calls directly) or a Python thunk (a node without C, called
through the C API). After each step the loop frees the intermediates whose last use it
was, as the core's loop does (:func:`opweave.link.loop.gc_plan`), and after the last one
the cells :func:`opweave.link.loop.release_plan` names. A lazy graph (``ifelse``) runs on
demand instead, in the order and with the frees of the core's lazy loop
(:mod:`opweave_c.linkers.lazy_plan`): the branch an ``IfElse`` does not take never runs.
When a step raises, the loop calls ``on_failure(exc, i)`` while every cell still holds its
value, then frees the intermediates, and the exception goes on: a failure is reported
exactly as by the core's loop. :meth:`CLoop.fast_call` makes the loop a compiled function's
whole call (arguments filtered and stored, steps run, updates applied, outputs returned) in
one C call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from opweave.link.loop import GcEntry
from opweave.tensor.type import TensorType
from opweave.xtensor.type import XTensorType
from opweave_c.linkers.lazy_plan import LazyProgram

__all__ = ["CLoop", "exact_spec"]

#: What the loop's failure cell says: an argument was refused, or a step failed.
_KINDS = ("input", "step")


def exact_spec(type_: Any) -> tuple[int, int, tuple[int, ...]] | None:
    """What the loop may test in C to pass an argument of ``type_`` without its filter.

    For the core's :class:`~opweave.tensor.type.TensorType` (not a subclass, whose filter
    may differ) whose filter does not check values: ``(type number, rank, static sizes)``
    (``-1`` where the Type fixes no size). A plain, aligned, native-order ndarray of that
    type number, rank and shape is what that filter returns unchanged. ``None`` for
    every other Type: its arguments always go through the filter. A named-dimension
    :class:`~opweave.xtensor.type.XTensorType` answers as its ``tensor_type``: its filter
    is that Type's for every value but an ``xarray.DataArray``, which is no ndarray.
    """
    if type(type_) is XTensorType:
        type_ = type_.tensor_type
    if type(type_) is not TensorType or getattr(type_, "filter_checks_isfinite", False):
        return None
    sizes = tuple(-1 if n is None else int(n) for n in type_.shape)
    return int(np.dtype(type_.dtype).num), int(type_.ndim), sizes


def _cells(entries: Sequence[GcEntry]) -> tuple[tuple[list[Any], ...], tuple[list[int], ...]]:
    return tuple(cell for cell, _ in entries), tuple(done for _, done in entries)


@dataclass
class CLoop:
    """A sequence of steps bound to their cells, run by the runtime.

    Attributes
    ----------
    run
        Runs the steps on what the cells hold (a linked graph's function).
    failcell
        Where the C notes what failed last: ``(0, i)`` argument ``i`` was refused, ``(1,
        i)`` step ``i`` raised (read by :meth:`take_failure`).
    """

    module: Any
    steps: tuple[Any, ...]
    gc_ends: tuple[int, ...]
    gc_cells: tuple[tuple[list[Any], ...], tuple[list[int], ...]]
    release_cells: tuple[tuple[list[Any], ...], tuple[list[int], ...]]
    on_failure: Callable[[BaseException, int], None]
    #: The ``lazy`` argument of ``link_steps`` (a lazy graph's schedule), or ``None``.
    lazy: tuple[Any, ...] | None = None
    failcell: list[Any] = field(default_factory=lambda: [None])
    run: Callable[[], None] = field(init=False)

    def __post_init__(self) -> None:
        self.run = self._link()[0]

    @classmethod
    def link(
        cls,
        module: Any,
        thunks: Sequence[Callable[[], Any]],
        states: Mapping[int, Any],
        plan: Sequence[tuple[GcEntry, ...]] | None,
        release: Sequence[GcEntry],
        on_failure: Callable[[BaseException, int], None],
        lazy: LazyProgram | None = None,
    ) -> CLoop:
        """Bind the steps of a linked graph.

        Parameters
        ----------
        module
            A generated module (any: they all carry the same runtime).
        thunks
            The graph's thunks, in execution order.
        states
            For the steps that are compiled blocks, by position: the state of the bound
            block (``run.__self__`` of :class:`~opweave_c.linkers.block_call.LinkedBlock`),
            which the loop runs directly; the other steps' thunks are called.
        plan
            What to free after each step (:func:`opweave.link.loop.gc_plan`), or ``None``
            to keep every value.
        release
            The cells emptied after every run (:func:`opweave.link.loop.release_plan`).
        on_failure
            Called as ``on_failure(exc, i)`` when step ``i`` raised ``exc``, before the
            intermediates are freed.
        lazy
            For a graph with a lazy node, its schedule
            (:func:`~opweave_c.linkers.lazy_plan.lazy_program`): the steps then run on
            demand, as the core's lazy loop runs them, and free what it frees (``plan``
            is then ``None``).
        """
        steps = tuple(states.get(k, thunk) for k, thunk in enumerate(thunks))
        if lazy is not None:
            held = _cells(lazy.freeable)
            nothing = (0,) * len(steps)  # the lazy schedule says what each step frees
            return cls(module, steps, nothing, held, _cells(list(release)), on_failure, lazy.spec)
        ends: list[int] = []
        entries: list[GcEntry] = []
        for freed in plan if plan is not None else [()] * len(steps):
            entries += freed
            ends.append(len(entries))
        return cls(module, steps, tuple(ends), _cells(entries), _cells(list(release)), on_failure)

    def _link(
        self,
        arg_cells: Sequence[list[Any]] = (),
        filters: Sequence[Any] = (),
        exact: Sequence[Any] = (),
        update_cells: Sequence[tuple[list[Any], list[Any]]] = (),
        user_output_cells: Sequence[list[Any]] = (),
        unpack_single: bool = False,
        clear_cells: Sequence[list[Any]] = (),
    ) -> tuple[Callable[[], None], Callable[..., Any]]:
        run, call = self.module.link_steps(
            self.steps,
            self.gc_ends,
            *self.gc_cells,
            *self.release_cells,
            self.on_failure,
            tuple(arg_cells),
            tuple(filters),
            tuple(exact),
            self.failcell,
            tuple(src for src, _ in update_cells),
            tuple(dst for _, dst in update_cells),
            tuple(user_output_cells),
            unpack_single,
            tuple(clear_cells),
            self.lazy,
        )
        return run, call

    def fast_call(
        self,
        arg_cells: Sequence[list[Any]],
        arg_filters: Sequence[Callable[[Any], Any]],
        arg_types: Sequence[Any],
        update_cells: Sequence[tuple[list[Any], list[Any]]],
        user_output_cells: Sequence[list[Any]],
        unpack_single: bool,
        clear_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any]:
        """The loop as a compiled function's whole call (see
        :meth:`opweave.link.basic.Linker.make_fast_call`).

        Argument ``i`` goes into ``arg_cells[i]`` through ``arg_filters[i]``, unless it
        is exactly a value of ``arg_types[i]`` (:func:`exact_spec`), which that filter
        would return unchanged. A refused argument is noted for :meth:`take_failure`.
        """
        return self._link(
            arg_cells,
            arg_filters,
            [exact_spec(t) for t in arg_types],
            update_cells,
            user_output_cells,
            unpack_single,
            clear_cells,
        )[1]

    def take_failure(self) -> tuple[str, int] | None:
        """What the last failure was, ``("input", i)`` or ``("step", i)``, once: the note
        is cleared."""
        found = self.failcell[0]
        self.failcell[0] = None
        if not isinstance(found, tuple):
            return None
        kind, i = found
        return _KINDS[kind], i
