"""Lowering of the shape Ops of :mod:`opweave.xtensor.shape` to tensor Ops.

Each rewrite replaces an XOp node by a tensor graph over the node's inputs (read as
tensors with :func:`~opweave.xtensor.basic.tensor_from_xtensor` or aligned with
:func:`~opweave.xtensor.rewriting.utils.lower_aligned`) and labels the result with the
output's dims. ``LOWERINGS`` lists them for the ``lower_xtensor`` phase.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence

from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import node_rewriter
from opweave.tensor import (
    broadcast_arrays,
    broadcast_to,
    concat_with_broadcast,
    expand_dims,
    moveaxis,
    second,
    shape_padright,
    specify_shape,
    squeeze,
    zeros,
)
from opweave.tensor.variable import TensorVariable
from opweave.xtensor.basic import xtensor_from_tensor
from opweave.xtensor.rewriting.utils import lower_aligned
from opweave.xtensor.shape import (
    Broadcast,
    Concat,
    ExpandDims,
    Squeeze,
    Stack,
    Transpose,
    UnStack,
)
from opweave.xtensor.type import XTensorVariable

__all__ = [
    "LOWERINGS",
    "lower_broadcast",
    "lower_concat",
    "lower_expand_dims",
    "lower_squeeze",
    "lower_stack",
    "lower_transpose",
    "lower_unstack",
]


_Op = typing.TypeVar("_Op")


def _xtensors(variables: Sequence[Variable]) -> list[XTensorVariable]:
    """The variables of a node of an XOp, all xtensors."""
    return [typing.cast(XTensorVariable, v) for v in variables]


def _op(node: Apply, op_class: type[_Op]) -> _Op:
    """The Op of ``node``, known to be an ``op_class`` (the rewrite tracks it)."""
    return typing.cast(_Op, node.op)


@node_rewriter([Stack])
def lower_stack(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Move the stacked axes last (in the Op's order) and merge them with a reshape."""
    [x] = _xtensors(node.inputs)
    [out] = _xtensors(node.outputs)
    axes = [x.type.dims.index(d) for d in _op(node, Stack).stacked_dims]
    moved = moveaxis(x.values, axes, list(range(-len(axes), 0)))
    if len(axes) == 1:
        merged = moved
    else:
        n_kept = x.type.ndim - len(axes)
        # The merged length as a product (not -1), so that a zero-length kept dim works.
        merged_length = moved.shape[n_kept]
        for i in range(n_kept + 1, x.type.ndim):
            merged_length = merged_length * moved.shape[i]
        merged = moved.reshape((*(moved.shape[i] for i in range(n_kept)), merged_length))
        merged = specify_shape(merged, out.type.shape)
    return [xtensor_from_tensor(merged, dims=out.type.dims)]


@node_rewriter([UnStack])
def lower_unstack(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Move the split axis last and reshape it into the new lengths."""
    [x] = _xtensors(node.inputs[:1])
    lengths = node.inputs[1:]
    [out] = _xtensors(node.outputs)
    axis = x.type.dims.index(_op(node, UnStack).old_dim_name)
    moved = moveaxis(x.values, axis, -1)
    kept = [moved.shape[i] for i in range(x.type.ndim - 1)]
    split = specify_shape(moved.reshape((*kept, *lengths)), out.type.shape)
    return [xtensor_from_tensor(split, dims=out.type.dims)]


@node_rewriter([Transpose])
def lower_transpose(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """A tensor transpose with the permutation from the input's dims to the output's."""
    [x] = _xtensors(node.inputs)
    [out] = _xtensors(node.outputs)
    permutation = tuple(x.type.dims.index(d) for d in out.type.dims)
    transposed = x.values.transpose(permutation)
    return [xtensor_from_tensor(transposed, dims=out.type.dims)]


@node_rewriter([Concat])
def lower_concat(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Align every input with the output's dims and join them, broadcasting the others."""
    [out] = _xtensors(node.outputs)
    out_dims = out.type.dims
    aligned = [lower_aligned(inp, out_dims) for inp in _xtensors(node.inputs)]
    joined = concat_with_broadcast(aligned, axis=out_dims.index(_op(node, Concat).dim))
    return [xtensor_from_tensor(joined, dims=out_dims)]


@node_rewriter([Squeeze])
def lower_squeeze(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """A tensor squeeze of the dropped dims' axes (checked to have length 1 when run)."""
    [x] = _xtensors(node.inputs)
    [out] = _xtensors(node.outputs)
    axes = tuple(x.type.dims.index(d) for d in _op(node, Squeeze).dims)
    x_tensor = x.values
    if any(x.type.shape[i] is None for i in axes):
        lengths = tuple(1 if i in axes else length for i, length in enumerate(x.type.shape))
        x_tensor = specify_shape(x_tensor, lengths)
    squeezed = squeeze(x_tensor, axis=axes)
    return [xtensor_from_tensor(squeezed, dims=out.type.dims)]


@node_rewriter([ExpandDims])
def lower_expand_dims(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """A new leading axis, broadcast to the given length unless that is statically 1."""
    [x] = _xtensors(node.inputs[:1])
    size = node.inputs[1]
    [out] = _xtensors(node.outputs)
    x_tensor = x.values
    expanded: TensorVariable
    if out.type.shape[0] == 1:
        expanded = expand_dims(x_tensor, 0)
    else:
        x_shape = [x_tensor.shape[i] for i in range(x.type.ndim)]
        expanded = broadcast_to(x_tensor, (size, *x_shape))
    expanded = specify_shape(expanded, out.type.shape)
    return [xtensor_from_tensor(expanded, dims=out.type.dims)]


@node_rewriter([Broadcast])
def lower_broadcast(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Align each input with its output's dims and broadcast the shared (leading) axes.

    Without excluded dims all inputs are broadcast together. Otherwise a zeros tensor
    with the lengths of the broadcast dims (each taken from the first input that has the
    dim), padded with one axis per excluded dim, is broadcast with each input.
    """
    inputs = _xtensors(node.inputs)
    outputs = _xtensors(node.outputs)
    excluded = _op(node, Broadcast).exclude
    aligned = [lower_aligned(x, out.type.dims) for x, out in zip(inputs, outputs, strict=True)]
    results: list[Variable]
    if not excluded:
        results = list(broadcast_arrays(*aligned))
    else:
        shared_dims = [d for d in outputs[0].type.dims if d not in excluded]
        lengths = []
        for d in shared_dims:
            owner = next(x for x in inputs if d in x.type.dims)
            lengths.append(owner.values.shape[owner.type.dims.index(d)])
        template = zeros(lengths, dtype="int8")
        results = [
            typing.cast(
                Variable, second(shape_padright(template, t.type.ndim - len(shared_dims)), t)
            )
            for t in aligned
        ]
    return [
        xtensor_from_tensor(result, dims=out.type.dims)
        for result, out in zip(results, outputs, strict=True)
    ]


LOWERINGS = (
    lower_stack,
    lower_unstack,
    lower_transpose,
    lower_concat,
    lower_squeeze,
    lower_expand_dims,
    lower_broadcast,
)
