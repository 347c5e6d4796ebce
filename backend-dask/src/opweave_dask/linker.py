"""The ``dask`` linker: a graph run as a lazy Dask graph over chunked arrays.

Linking walks the rewritten graph in the core's thunk loop (:class:`~opweave.link.loop
.LoopLinker`): each node's thunk does not compute its outputs, it builds them as Dask
values from its inputs' Dask values (:mod:`opweave_dask.table` says how, per Op). A call
therefore only builds a Dask graph; the outputs are computed when the caller computes
them, or before the call returns with ``config.dask__compute``.

This module imports no Dask: the plugin hands :class:`DaskLinker` to every opweave user.
Dask is imported (through :mod:`opweave_dask.running`) when a function is first linked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Variable
from opweave.link.loop import LoopLinker
from opweave.plugins.forksafe import ForkSafeLock
from opweave.tensor.type import TensorType
from opweave_dask.kernel import chunk_linker

__all__ = ["DaskLinker"]


class DaskLinker(LoopLinker):
    """``linker='dask'``: compiled functions take Dask (or NumPy) arrays and return lazy
    Dask arrays.

    NumPy arrays given to the function, and the NumPy values of shared variables, are
    chunked as ``config.dask__chunk_size`` says (they are referenced, not copied: changing
    one before the result is computed changes the result). With ``config.dask__compute``
    the outputs, and the new values of updated shared variables, are computed in one
    ``dask.compute`` call before the function returns; otherwise a shared variable's new
    value is the lazy Dask array. ``priority`` is negative: ``linker='auto'`` never picks it.
    """

    name: ClassVar[str] = "dask"
    priority: ClassVar[int] = -10
    compile_priority: ClassVar[int] = -10
    impls: ClassVar[tuple[str | None, ...]] = ("dask",)

    @staticmethod
    def host_values(values: Sequence[Any]) -> list[Any]:
        """The outputs computed (in one ``dask.compute``); values that are not Dask
        collections are returned as they are."""
        import dask  # late: Dask loads only when dask values are handled

        from opweave_dask.threads import blas_for_tasks

        with blas_for_tasks():
            return list(dask.compute(*values))

    def make_thunks(
        self,
        order: list[Apply],
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
    ) -> list[Any]:
        """One thunk per node, building the node's outputs as Dask values."""
        from opweave_dask.running import node_thunk

        linker = chunk_linker(config.dask__kernel_linker)
        return [node_thunk(node, storage_map, compute_map, linker) for node in order]

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link as the loop does; the linked function chunks its NumPy inputs first and, with
        ``config.dask__compute``, computes the outputs last (with the BLAS threads of
        :func:`~opweave_dask.threads.blas_for_tasks`)."""
        from opweave_dask.running import linked_function

        loop, ins, outs, thunks, order = super().make_all(
            input_storage, output_storage, storage_map
        )
        assert self.fgraph is not None
        tensor_inputs = [
            cell
            for var, cell in zip(self.fgraph.inputs, ins, strict=True)
            if isinstance(var.type, TensorType)
        ]
        tensor_outputs = [
            cell
            for var, cell in zip(self.fgraph.outputs, outs, strict=True)
            if isinstance(var.type, TensorType)
        ]
        self._lock = ForkSafeLock()
        fn = linked_function(loop, tensor_inputs, outs, tensor_outputs)
        for attr in ("storage_map", "compute_map", "allow_gc", "loop", "profile"):
            if hasattr(loop, attr):
                setattr(fn, attr, getattr(loop, attr))
        self._fn = fn
        return fn, ins, outs, thunks, order

    def make_fast_call(
        self,
        arg_filters: list[Callable[[Any], Any]],
        update_cells: list[tuple[list[Any], list[Any]]],
        user_output_cells: list[list[Any]],
        unpack_single: bool,
        transient_cells: Sequence[list[Any]] = (),
    ) -> Callable[..., Any] | None:
        """The whole call: each argument checked (:func:`~opweave_dask.inputs
        .check_argument`: a Dask array keeps its chunks, a list is refused), the graph
        built, updates applied, outputs returned. One call at a time (a lock)."""
        from opweave_dask.running import fast_call

        assert self.fgraph is not None
        n = len(arg_filters)
        variables = self.fgraph.inputs[:n]
        cells = [self.fgraph_input_cells[i] for i in range(n)]
        checks = list(zip(variables, arg_filters, cells, strict=True))
        return fast_call(
            self._fn,
            self._lock,
            checks,
            update_cells,
            user_output_cells,
            unpack_single,
            transient_cells,
        )

    def wire_storage(self, input_storage: Any, output_storage: Any, storage_map: Any) -> Any:
        """As the base class's, keeping the input cells for the fast call."""
        wired = super().wire_storage(input_storage, output_storage, storage_map)
        self.fgraph_input_cells = wired[2]
        return wired
