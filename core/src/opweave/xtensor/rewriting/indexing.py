"""Lowering of :class:`~opweave.xtensor.indexing.Index` and ``IndexUpdate`` to tensor indexing.

xarray's indexing pairs up array indices that share an output dimension (vectorized) and
combines those of different dimensions in every way (orthogonal). NumPy's advanced indexing
only pairs up, so each array index is laid out over all output dimensions, its own
dimensions on their output axes and length 1 on the others: broadcasting then gives the
orthogonal combinations (a generalization of ``numpy.ix_``). A slice on a dimension that an
array index also selects becomes the array ``arange(n)[slice]``, so that it pairs up too;
other slices stay basic indices (and drop their axes from the array indices' layout).

When basic indices separate the array indices, NumPy puts the array indices' dimensions
first: the lowered view is transposed back into the output's order.
"""

from __future__ import annotations

import typing
from itertools import zip_longest

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import node_rewriter
from opweave.tensor.basic import arange
from opweave.tensor.shape import specify_shape
from opweave.tensor.subtensor import inc_subtensor
from opweave.tensor.type_other import NoneTypeT, SliceType
from opweave.tensor.variable import TensorVariable
from opweave.xtensor.basic import tensor_from_xtensor, xtensor_from_tensor
from opweave.xtensor.indexing import Index, IndexUpdate, index
from opweave.xtensor.type import XTensorType

__all__ = ["LOWERINGS", "lower_index", "lower_index_update"]


def _python_slice(idx: Variable) -> slice:
    """The Python slice (with symbolic bounds) that the slice variable ``idx`` stands for.

    Raises
    ------
    TypeError
        For a slice variable that is neither a constant nor built by ``make_slice``.
    """
    if isinstance(idx, Constant):
        return typing.cast(slice, idx.data)
    if idx.owner is None:
        raise TypeError(
            f"Cannot lower indexing by the slice variable {idx}: its bounds are unknown"
        )
    return slice(*[None if isinstance(b.type, NoneTypeT) else b for b in idx.owner.inputs])


def _tensor(var: Variable) -> TensorVariable:
    """The xtensor variable ``var`` as a tensor."""
    return typing.cast(TensorVariable, tensor_from_xtensor(var))


def _xtype(var: Variable) -> XTensorType:
    """The Type of the xtensor variable ``var``."""
    return typing.cast(XTensorType, var.type)


def _is_basic(idx: Variable) -> bool:
    """Whether ``idx`` is a basic index: a slice or an integer scalar."""
    return isinstance(idx.type, SliceType) or (
        isinstance(idx.type, XTensorType) and idx.type.ndim == 0
    )


def _basic_index(idx: Variable) -> typing.Any:
    """``idx`` as an index of tensor indexing: a Python slice or a scalar tensor."""
    if isinstance(idx.type, SliceType):
        return _python_slice(idx)
    return _tensor(idx)


def _non_consecutive(idxs: list[typing.Any]) -> bool:
    """Whether slices separate the array (or scalar) indices of ``idxs``, as NumPy sees it."""
    adv = [i for i, idx in enumerate(idxs) if not isinstance(idx, slice)]
    return bool(adv) and adv[-1] - adv[0] + 1 != len(adv)


def _lower_index(node: Apply) -> tuple[TensorVariable, tuple[str, ...]]:
    """The tensor indexing that ``node`` (an :class:`Index` node) stands for, and its dims.

    The dimensions are the output's, but in NumPy's order of the view, which puts the array
    indices' dimensions first when slices separate the array indices.
    """
    x, *idxs = node.inputs
    out_dims = _xtype(node.outputs[0]).dims
    x_tensor = _tensor(x)
    if all(_is_basic(idx) for idx in idxs):
        return x_tensor[tuple(_basic_index(idx) for idx in idxs)], out_dims

    x_dims = _xtype(x).dims
    out_ndim = len(out_dims)
    aligned: list[typing.Any] = []
    basic_axes: list[int] = []
    full = slice(None)
    for i, (idx, x_dim) in enumerate(zip_longest(idxs, x_dims, fillvalue=None)):
        if idx is None or isinstance(idx.type, SliceType):
            slc = full if idx is None else _python_slice(idx)
            shared = any(
                isinstance(other.type, XTensorType) and x_dim in other.type.dims
                for j, other in enumerate(idxs)
                if j != i
            )
            if not shared:
                aligned.append(slc)
                basic_axes.append(out_dims.index(x_dim))
                continue
            # Another index selects along this dimension: pair the slice up with it.
            positions = arange(x_tensor.shape[i])[slc]
            order: list[typing.Any] = ["x"] * out_ndim
            order[out_dims.index(x_dim)] = 0
            aligned.append(positions.dimshuffle(order))
        elif _xtype(idx).ndim == 0:
            aligned.append(_tensor(idx))
        else:
            order = ["x"] * out_ndim
            for j, d in enumerate(_xtype(idx).dims):
                order[out_dims.index(d)] = j
            aligned.append(_tensor(idx).dimshuffle(order))
    if basic_axes:
        # The basic indices keep their own axes: drop them from the array indices' layout.
        aligned = [
            a.squeeze(axis=basic_axes) if isinstance(a, TensorVariable) and a.type.ndim > 0 else a
            for a in aligned
        ]
    view = x_tensor[tuple(aligned)]
    if basic_axes and _non_consecutive(aligned):
        basic_dims = [out_dims[axis] for axis in basic_axes]
        adv_dims = [d for d in out_dims if d not in basic_dims]
        return view, (*adv_dims, *basic_dims)
    return view, out_dims


@node_rewriter([Index])
def lower_index(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Replace an ``Index`` node by tensor indexing in the output's dimension order."""
    out_type = _xtype(node.outputs[0])
    out_dims = out_type.dims
    view, view_dims = _lower_index(node)
    if view_dims != out_dims:
        view = view.transpose([view_dims.index(d) for d in out_dims])
    # Keep the static lengths that the xtensor output knows.
    view = specify_shape(view, out_type.shape)
    return [xtensor_from_tensor(view, dims=out_dims)]


@node_rewriter([IndexUpdate])
def lower_index_update(fgraph: FunctionGraph, node: Apply) -> list[Variable]:
    """Replace an ``IndexUpdate`` node by ``inc_subtensor``/``set_subtensor`` of the view.

    The value's dimensions are laid out in the order of the lowered view (length 1 where
    the value lacks one), so that it broadcasts over the view.
    """
    x, y, *idxs = node.inputs
    mode = typing.cast(IndexUpdate, node.op).mode
    view, view_dims = _lower_index(index.make_node(x, *idxs))
    y_tensor = _tensor(y)
    y_dims = _xtype(y).dims
    order: list[typing.Any] = [y_dims.index(d) if d in y_dims else "x" for d in view_dims]
    while order and order[0] == "x":
        order.pop(0)
    if order != list(range(y_tensor.type.ndim)):
        y_tensor = y_tensor.dimshuffle(order)
    updated = inc_subtensor(view, y_tensor, set_instead_of_inc=mode == "set")
    return [xtensor_from_tensor(updated, dims=_xtype(x).dims)]


LOWERINGS = (lower_index, lower_index_update)
