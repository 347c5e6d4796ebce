"""Thunks built from ``perform``-style implementations: ``fn(node, inputs, output_storage)``.

These are the ``py`` backend's thunks, built by the core for any backend whose
implementations are ``perform``-style callables (an Op's own :meth:`~opweave.graph.op.Op
.perform`, a plugin's answer to ``opweave_implementation``, a table entry bound to its Op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.link.resolver import resolve

__all__ = ["Perform", "find_perform", "make_perform_thunk", "own_perform"]

#: A ``perform``-style implementation: ``fn(node, inputs, output_storage)``.
Perform = Callable[[Apply, Sequence[Any], list[list[Any]]], None]


def own_perform(op: Op) -> Perform | None:
    """Return ``op.perform`` if the Op's class (or instance) defines one, else ``None``."""
    if "perform" in vars(op):
        return op.perform
    for cls in type(op).__mro__:
        if cls is Op:
            return None
        if "perform" in vars(cls):
            return op.perform
    return None


def find_perform(op: Op, node: Apply) -> Perform | None:
    """The ``py`` implementation of ``node`` (:func:`~opweave.link.resolver.resolve`: the
    Op's own ``perform``, a plugin's, or the ``py`` table's), or ``None``."""
    found = resolve(op, node, "py")
    return found.implementation if found.what == "kernel" else None


def make_perform_thunk(
    node: Apply,
    perform: Perform,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
) -> Callable[[], None]:
    """Return a thunk running ``perform`` on ``node``'s cells in ``storage_map``.

    Outputs in ``no_recycling`` have their cell cleared before each run, so
    ``perform`` cannot reuse (and overwrite) a value the caller holds.
    """
    input_cells = [storage_map[v] for v in node.inputs]
    output_cells = [storage_map[v] for v in node.outputs]
    output_computed = [compute_map[v] for v in node.outputs]
    recycle_cells = [storage_map[v] for v in node.outputs if v in no_recycling]

    if recycle_cells:

        def thunk() -> None:
            for cell in recycle_cells:
                cell[0] = None
            perform(node, [c[0] for c in input_cells], output_cells)
            for flag in output_computed:
                flag[0] = 1

    else:

        def thunk() -> None:
            perform(node, [c[0] for c in input_cells], output_cells)
            for flag in output_computed:
                flag[0] = 1

    thunk.inputs = input_cells  # type: ignore[attr-defined]
    thunk.outputs = output_cells  # type: ignore[attr-defined]
    thunk.lazy = False  # type: ignore[attr-defined]
    thunk.perform = perform  # type: ignore[attr-defined]
    return thunk
