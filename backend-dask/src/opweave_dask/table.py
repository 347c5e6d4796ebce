"""How the dask linker maps each Op: its :class:`~opweave.link.implementations
.ImplementationTable` (Op class -> builder, looked up through the Op's MRO).

A builder is called once per node when a function is linked, as ``builder(node, linker)``
(``linker``: the one the chunk kernels compile with), and returns a runner, a function from
the node's input values to its output values; or ``None`` when the node has no chunk-wise
form (its values are then computed on one worker, :mod:`opweave_dask.fallback`). The entry
for :class:`~opweave.graph.op.Op` itself is that one-worker form, so every Op runs.

The table names its builders (:class:`~opweave_dask.lazy.LazyBuilder`): this module, and the
plugin that publishes the table, import no Dask; a builder's module (and Dask) is imported
when the first node it builds is linked.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.compile.ops import DeepCopyOp, ViewOp
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.link.implementations import ImplementationTable
from opweave.tensor.basic import Join
from opweave.tensor.blas import Dot, MatMul
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import Argmax
from opweave.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from opweave.tensor.subtensor import AdvancedSubtensor1, Subtensor
from opweave_dask.lazy import LazyBuilder

__all__ = ["DASK_OPS", "ONE_WORKER", "builder_for"]


def ONE_WORKER(node: Apply, linker: str) -> None:
    """The entry of Ops without a chunk-wise form: run on one worker."""
    return None


_ARRAYS = "opweave_dask.arrays"
_ELEMWISE = "opweave_dask.elemwise"
_REDUCTIONS = "opweave_dask.reductions"

#: Op class -> builder. Read-only.
DASK_OPS = ImplementationTable(
    "dask",
    {
        Elemwise: LazyBuilder(_ELEMWISE, "build_elemwise"),
        CAReduce: LazyBuilder(_REDUCTIONS, "build_careduce"),
        MapReduce: LazyBuilder(_REDUCTIONS, "build_map_reduce"),
        Argmax: LazyBuilder(_REDUCTIONS, "build_argmax"),
        Dot: LazyBuilder(_ARRAYS, "build_dot"),
        MatMul: LazyBuilder(_ARRAYS, "build_dot"),
        DimShuffle: LazyBuilder(_ARRAYS, "build_dimshuffle"),
        Reshape: LazyBuilder(_ARRAYS, "build_reshape"),
        Join: LazyBuilder(_ARRAYS, "build_join"),
        Subtensor: LazyBuilder(_ARRAYS, "build_subtensor"),
        AdvancedSubtensor1: LazyBuilder(_ARRAYS, "build_advanced_subtensor1"),
        DeepCopyOp: LazyBuilder(_ARRAYS, "build_deep_copy"),
        ViewOp: LazyBuilder(_ARRAYS, "build_view"),
        Shape: LazyBuilder(_ARRAYS, "build_shape"),
        Shape_i: LazyBuilder(_ARRAYS, "build_shape_i"),
        SpecifyShape: LazyBuilder(_ARRAYS, "build_specify_shape"),
        Op: ONE_WORKER,
    },
)


def builder_for(op: Op) -> Callable[[Apply, str], Any]:
    """The builder of ``op``'s nodes (``ONE_WORKER`` for Ops without a chunk-wise form)."""
    found = DASK_OPS.lookup(op)
    return found if found is not None else ONE_WORKER
