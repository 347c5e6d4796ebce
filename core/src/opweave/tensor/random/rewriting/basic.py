"""Node rewriters that move random variables below the Ops that use their draws.

Indexing, transposing or broadcasting draws equals drawing from parameters indexed,
transposed or broadcast the same way, when nothing else uses the draws:
``normal(mu, sigma)[0]`` is ``normal(mu[0], sigma[0])`` and ``normal(mu, sigma).T`` is
``normal(mu.T, sigma.T)``. The rewrites here (PyTensor's
``pytensor.tensor.random.rewriting.basic``) make those replacements; each replaces the
advanced generator too, so that the draws and the generator stay one node's outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Variable, ancestors
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting.node import copy_stack_trace, node_rewriter
from opweave.tensor.basic import constant
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.extra_ops import broadcast_to
from opweave.tensor.index_list import indices_from_subtensor
from opweave.tensor.random.op import RandomVariable, _is_none
from opweave.tensor.random.utils import broadcast_params
from opweave.tensor.shape import Shape, Shape_i
from opweave.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1, Subtensor
from opweave.tensor.variable import TensorVariable

__all__ = [
    "is_rv_used_in_graph",
    "local_dimshuffle_rv_lift",
    "local_rv_size_lift",
    "local_subtensor_rv_lift",
    "random_make_inplace",
]


def is_rv_used_in_graph(base_rv: Variable, node: Apply, fgraph: FunctionGraph) -> bool:
    """Whether a node of ``fgraph`` other than ``node`` uses the values of ``base_rv``.

    Nodes that only read its shape (``Shape``, ``Shape_i``) do not count.
    """
    return any(
        client is not node and not isinstance(getattr(client, "op", None), Shape | Shape_i)
        for client, _ in fgraph.clients.get(base_rv, ())
    )


@node_rewriter([RandomVariable], inplace=True)
def random_make_inplace(fgraph: FunctionGraph, node: Apply) -> Any:
    """Let a random variable advance its input generator in place."""
    op = node.op
    if not isinstance(op, RandomVariable) or op.inplace:
        return False
    props = op._props_dict()
    props["inplace"] = True
    new_outputs = type(op)(**props).make_node(*node.inputs).outputs
    for old, new in zip(node.outputs, new_outputs, strict=True):
        copy_stack_trace(old, new)
    return new_outputs


@node_rewriter(None)
def local_rv_size_lift(fgraph: FunctionGraph, node: Apply) -> Any:
    """Move ``size`` into the parameters: broadcast them to it and draw with no size.

    ``normal(0, 1, size=(1, 2))`` becomes ``normal([[0, 0]], [[1, 1]], size=None)``.
    """
    op = node.op
    if not isinstance(op, RandomVariable):
        return None
    rng, size, *dist_params = node.inputs
    if _is_none(size):
        return None
    dist_params = broadcast_params(dist_params, op.ndims_params)
    batch = [size[i] for i in range(op.batch_ndim(node))]
    new_params = []
    for p, nd in zip(dist_params, op.ndims_params, strict=True):
        core = [p.shape[p.ndim - nd + k] for k in range(nd)]
        new_params.append(broadcast_to(p, (*batch, *core)))
    return op.make_node(rng, None, *new_params).outputs


@node_rewriter([DimShuffle])
def local_dimshuffle_rv_lift(fgraph: FunctionGraph, node: Apply) -> Any:
    """Transpose or expand the parameters instead of the draws.

    ``normal(mu, sigma).T`` becomes ``normal(mu.T, sigma.T)``. Only a ``DimShuffle`` that
    drops no dimension and leaves the core (support) dimensions in place is lifted.
    """
    ds_op = node.op
    if ds_op.drop:
        return False
    rv_node = node.inputs[0].owner
    if rv_node is None or not isinstance(rv_node.op, RandomVariable):
        return False
    rv_op = rv_node.op
    rng, size, *dist_params = rv_node.inputs
    next_rng, rv = rv_node.outputs
    if is_rv_used_in_graph(rv, node, fgraph):
        return False
    supp_dims = set(range(rv.ndim - rv_op.ndim_supp, rv.ndim))
    shuffled = {dim for i, dim in enumerate(ds_op.shuffle) if dim != i}
    augmented = {d - rv_op.ndim_supp for d in ds_op.augment}
    if (shuffled | augmented) & supp_dims:
        return False
    batch_ndim = rv.ndim - rv_op.ndim_supp
    batch_order = tuple(o for o in ds_op.new_order if o not in supp_dims)
    if _is_none(size):
        new_size: Any = None
    else:
        new_size = [constant(1, dtype="int64") if o == "x" else size[o] for o in batch_order]
    new_params = [
        p.dimshuffle(*batch_order, *range(batch_ndim, batch_ndim + nd))
        for p, nd in zip(dist_params, rv_op.ndims_params, strict=True)
    ]
    new_next_rng, new_rv = rv_op.make_node(rng, new_size, *new_params).outputs
    if rv.name:
        new_rv.name = f"{rv.name}_lifted"
    [ds_rv] = node.outputs
    return {ds_rv: new_rv, next_rng: new_next_rng}


def _is_array_index(idx: Any, kinds: str) -> bool:
    """Whether ``idx`` is a tensor index of at least one dimension whose dtype kind is one
    of ``kinds`` (``"b"`` for boolean masks, ``"iu"`` for integer arrays)."""
    return (
        isinstance(idx, TensorVariable)
        and idx.type.ndim >= 1
        and np.dtype(idx.type.dtype).kind in kinds
    )


def _is_full_slice(idx: Any) -> bool:
    return isinstance(idx, slice) and idx.start is None and idx.stop is None and idx.step is None


def _indexed_batch_shape(
    node: Apply, rv_node: Apply, indexed: Variable, rv: Variable, fgraph: FunctionGraph
) -> list[Any] | None:
    """The batch shape of the indexed draws, from the shapes of the random variable's
    inputs (not from the draws), or ``None`` where it would depend on the draws."""
    rv_op = rv_node.op
    _, size, *dist_params = rv_node.inputs
    rv_shape = list(rv_op._infer_shape(size, dist_params))
    index_shapes = [[i.shape[k] for k in range(i.ndim)] for i in node.inputs[1:]]
    (out_shape,) = node.op.infer_shape(fgraph, node, [rv_shape, *index_shapes])
    out_shape = list(out_shape)
    batch = out_shape[: len(out_shape) - rv_op.ndim_supp]
    graph_vars = [d for d in batch if isinstance(d, Variable)]
    if {indexed, rv} & set(ancestors(graph_vars)):
        return None
    return batch


def _param_index(
    param: TensorVariable, rv: TensorVariable, indices: tuple[Any, ...]
) -> tuple[Any, ...]:
    """The index of ``param`` that matches ``indices`` on the draws: dimensions where the
    parameter is broadcast take index 0 (or a full slice) instead."""
    bcast_dims = {
        dim
        for dim, (p_bc, rv_bc) in enumerate(
            zip(param.type.broadcastable, rv.type.broadcastable, strict=False)
        )
        if p_bc and not rv_bc
    }
    out: list[Any] = []
    dim = 0
    for idx in indices:
        if _is_array_index(idx, "b"):
            mask_dims = range(dim, dim + idx.type.ndim)
            if bcast_dims & set(mask_dims):
                int_indices = list(idx.nonzero())
                for k in mask_dims:
                    if k in bcast_dims:
                        int_indices[k - dim] = 0
                out.extend(int_indices)
            else:
                out.append(idx)
            dim += idx.type.ndim
        else:
            if dim in bcast_dims:
                out.append(slice(None) if isinstance(idx, slice) else 0)
            else:
                out.append(idx)
            dim += 1
    return tuple(out)


@node_rewriter([Subtensor, AdvancedSubtensor1, AdvancedSubtensor])
def local_subtensor_rv_lift(fgraph: FunctionGraph, node: Apply) -> Any:
    """Index the parameters instead of the draws.

    ``normal(mu, sigma)[0]`` becomes ``normal(mu[0], sigma[0])``. Integers, slices and
    boolean masks over batch dimensions are lifted (core dimensions may only take full
    slices, as in ``mvnormal(mu, cov, size=(2,))[0, :]``); integer-array indexing is not.
    """
    rv_node = node.inputs[0].owner
    if rv_node is None or not isinstance(rv_node.op, RandomVariable):
        return False
    rv_op = rv_node.op
    rng, size, *dist_params = rv_node.inputs
    next_rng, rv = rv_node.outputs
    [indexed_rv] = node.outputs
    if is_rv_used_in_graph(rv, node, fgraph):
        return False
    if isinstance(node.op, AdvancedSubtensor1):
        return False
    indices = indices_from_subtensor(node.inputs[1:], node.op.idx_list)
    if isinstance(node.op, AdvancedSubtensor) and any(_is_array_index(i, "iu") for i in indices):
        return False
    batch_ndim = rv_op.batch_ndim(rv_node)
    used_dims = sum(i.type.ndim if _is_array_index(i, "b") else 1 for i in indices)
    if used_dims > batch_ndim:
        n_core = used_dims - batch_ndim
        if not all(_is_full_slice(i) for i in indices[len(indices) - n_core :]):
            return False
        indices = indices[: len(indices) - n_core]
    if _is_none(size):
        new_size: Any = None
    else:
        new_size = _indexed_batch_shape(node, rv_node, indexed_rv, rv, fgraph)
        if new_size is None:
            return None
    new_params = [p[_param_index(p, rv, indices)] for p in dist_params]
    new_next_rng, new_rv = rv_op.make_node(rng, new_size, *new_params).outputs
    copy_stack_trace(rv, new_rv)
    return {indexed_rv: new_rv, next_rng: new_next_rng}
