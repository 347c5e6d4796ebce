"""Lowering of :class:`~opweave.xtensor.reduction.XReduce` and ``XCumReduce`` to tensor Ops.

A reduction over named dimensions becomes the tensor library's reduction (``Sum``,
``Prod``, ``Max``, ``Min``, ``All``, ``Any``, or a ``CAReduce`` of the scalar Op) over the
axes where those dimensions sit; a running fold becomes one ``CumOp`` per axis.
"""

from __future__ import annotations

import typing

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import node_rewriter
from opweave.tensor.basic import cast
from opweave.tensor.elemwise import CAReduce
from opweave.tensor.extra_ops import CumOp
from opweave.tensor.reductions import All, Any, Max, Min, Prod, Sum
from opweave.tensor.variable import TensorVariable
from opweave.xtensor.basic import tensor_from_xtensor, xtensor_from_tensor
from opweave.xtensor.reduction import XCumReduce, XReduce
from opweave.xtensor.type import XTensorType

__all__ = ["LOWERINGS", "lower_cumreduce", "lower_reduce"]

#: The tensor reduction of each scalar Op that has its own reduction class.
_REDUCTIONS: tuple[tuple[typing.Any, type[CAReduce]], ...] = (
    (ps.add, Sum),
    (ps.mul, Prod),
    (ps.and_, All),
    (ps.or_, Any),
    (ps.maximum, Max),
    (ps.minimum, Min),
)

#: The ``CumOp`` mode of each scalar Op that has one.
_CUM_MODES: tuple[tuple[typing.Any, str], ...] = ((ps.add, "add"), (ps.mul, "mul"))


def _tensor_reduction(binary_op: typing.Any, axis: list[int]) -> CAReduce:
    """The tensor reduction folding ``axis`` with ``binary_op``."""
    for op, cls in _REDUCTIONS:
        if binary_op == op:
            return cls(axis=axis)  # type: ignore[call-arg]  # subclasses fix the scalar Op
    return CAReduce(binary_op, axis=axis)


def _dims(var: Variable) -> tuple[str, ...]:
    """The dims of the xtensor variable ``var``."""
    return typing.cast(XTensorType, var.type).dims


@node_rewriter([XReduce])
def lower_reduce(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Replace an ``XReduce`` by the tensor reduction over the axes of its dimensions."""
    op = typing.cast(XReduce, node.op)
    [x] = node.inputs
    out_type = typing.cast(XTensorType, node.outputs[0].type)
    axis = [_dims(x).index(d) for d in op.dims]
    if not axis:
        return [x]
    reduced = typing.cast(
        TensorVariable, _tensor_reduction(op.binary_op, axis)(tensor_from_xtensor(x))
    )
    if reduced.type.dtype != out_type.dtype:
        reduced = cast(reduced, out_type.dtype)
    return [xtensor_from_tensor(reduced, dims=out_type.dims)]


@node_rewriter([XCumReduce])
def lower_cumreduce(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """Replace an ``XCumReduce`` by one ``CumOp`` per accumulated axis.

    Scalar Ops other than ``add`` and ``mul`` have no tensor counterpart: the node stays.
    """
    op = typing.cast(XCumReduce, node.op)
    [x] = node.inputs
    axes = [_dims(x).index(d) for d in op.dims]
    if not axes:
        return [x]
    mode = next((m for scalar_op, m in _CUM_MODES if op.binary_op == scalar_op), None)
    if mode is None:
        return None
    running: Variable = tensor_from_xtensor(x)
    for axis in axes:
        running = typing.cast(Variable, CumOp(axis=axis, mode=mode)(running))
    return [xtensor_from_tensor(running, dims=_dims(x))]


LOWERINGS = (lower_reduce, lower_cumreduce)
