"""What a function linked by the dask linker runs: its node thunks, its whole call.

This module imports Dask; :class:`~opweave_dask.linker.DaskLinker` imports it when it links
a function (never when the plugin is loaded). Each node's thunk does not compute its
outputs, it builds them as Dask values from its inputs' Dask values
(:mod:`opweave_dask.table` says how, per Op).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import dask
import dask.array as da
import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave_dask.fallback import build_one_worker, whole_node_kernel
from opweave_dask.inputs import check_argument
from opweave_dask.kernel import variable_positions
from opweave_dask.options import chunks_from_flag
from opweave_dask.table import builder_for
from opweave_dask.threads import blas_for_tasks
from opweave_dask.values import as_dask, is_lazy_value

__all__ = ["fast_call", "linked_function", "node_thunk"]


class _NodeRunner:
    """What a node's thunk calls: its chunk-wise runner, else its one-worker runner for
    lazy inputs, and its whole-value kernel (at once) when no input is lazy. The last two
    are built on first use."""

    __slots__ = ("_eager", "_one_worker", "chunked", "node", "positions")

    def __init__(self, node: Apply, linker: str) -> None:
        self.node = node
        self.chunked = builder_for(node.op)(node, linker)
        self.positions = variable_positions(node)
        self._eager: Any = None
        self._one_worker: Any = None

    def __call__(self, values: list[Any]) -> list[Any]:
        if not any(is_lazy_value(v) for v in values):
            if self._eager is None:
                self._eager = whole_node_kernel(self.node)
            out = self._eager.compute(*[values[i] for i in self.positions])
            return [out] if len(self.node.outputs) == 1 else list(out)
        if self.chunked is not None:
            outs = self.chunked(values)
            if outs is not None:
                return list(outs)
        if self._one_worker is None:
            self._one_worker = build_one_worker(self.node, self._eager)
        return list(self._one_worker(values))


def node_thunk(
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    linker: str,
) -> Callable[[], None]:
    """The thunk of ``node``: it stores the node's outputs as Dask (or concrete) values.

    Parameters
    ----------
    node
        The node.
    storage_map, compute_map
        The linked graph's cells.
    linker
        The linker the node's chunk kernels compile with.
    """
    runner = _NodeRunner(node, linker)
    in_cells = [storage_map[v] for v in node.inputs]
    out_cells = [storage_map[v] for v in node.outputs]
    computed = [compute_map[v] for v in node.outputs]

    def thunk() -> None:
        outs = runner([cell[0] for cell in in_cells])
        for cell, value in zip(out_cells, outs, strict=True):
            cell[0] = value
        for flag in computed:
            flag[0] = 1

    thunk.inputs = in_cells  # type: ignore[attr-defined]
    thunk.outputs = out_cells  # type: ignore[attr-defined]
    thunk.lazy = False  # type: ignore[attr-defined]
    thunk.impl = "dask"  # type: ignore[attr-defined]
    return thunk


def linked_function(
    loop: Callable[[], Any],
    tensor_inputs: list[list[Any]],
    outputs: list[list[Any]],
    tensor_outputs: list[list[Any]],
) -> Callable[[], None]:
    """The linked function around the thunk ``loop``: it chunks the NumPy values in
    ``tensor_inputs`` first (as ``config.dask__chunk_size`` says, restoring the cells after)
    and, with ``config.dask__compute``, computes the lazy ``outputs`` last (one
    ``dask.compute`` call); otherwise concrete ``tensor_outputs`` become Dask arrays."""

    def fn() -> None:
        chunks = chunks_from_flag(config.dask__chunk_size)
        saved = [(cell, cell[0]) for cell in tensor_inputs if not is_lazy_value(cell[0])]
        try:
            for cell, value in saved:
                if value is not None:
                    cell[0] = da.from_array(np.asarray(value), chunks=chunks, name=False)
            loop()
        finally:
            for cell, value in saved:
                cell[0] = value
        if config.dask__compute:
            lazy = [cell for cell in outputs if is_lazy_value(cell[0])]
            with blas_for_tasks():
                computed = dask.compute(*[c[0] for c in lazy])
            for cell, value in zip(lazy, computed, strict=True):
                cell[0] = value
        else:
            for cell in tensor_outputs:
                if cell[0] is not None and not is_lazy_value(cell[0]):
                    cell[0] = as_dask(cell[0])

    return fn


def fast_call(
    fn: Callable[[], None],
    lock: AbstractContextManager[Any],
    checks: list[tuple[Variable, Callable[[Any], Any], list[Any]]],
    update_cells: list[tuple[list[Any], list[Any]]],
    user_output_cells: list[list[Any]],
    unpack_single: bool,
    transient_cells: Sequence[list[Any]] = (),
) -> Callable[..., Any]:
    """The whole call of a linked function ``fn``: each argument checked
    (:func:`~opweave_dask.inputs.check_argument`, against its ``(variable, filter, cell)`` in
    ``checks``), the graph built, updates applied, outputs returned; one call at a time
    (``lock``). Returns ``NotImplemented`` for a wrong number of arguments (the generic
    path then reports it)."""
    n = len(checks)

    def call(*args: Any) -> Any:
        if len(args) != n:
            return NotImplemented
        with lock:
            try:
                for (var, filt, cell), value in zip(checks, args, strict=True):
                    cell[0] = check_argument(value, var, filt)
                fn()
                for src, dst in update_cells:
                    dst[0] = src[0]
                if unpack_single:
                    return user_output_cells[0][0]
                return [cell[0] for cell in user_output_cells]
            finally:
                for cell in transient_cells:
                    cell[0] = None

    return call
