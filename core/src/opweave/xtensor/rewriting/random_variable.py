"""Lowering of :class:`~opweave.xtensor.random_variable.XRV` nodes to core random variables.

The parameters are lowered with their batch dimensions in the draws' order (missing ones
broadcastable) and their core dimensions last, in the order of the XRV's ``core_dims``.
Without extra dimensions the core Op gets no ``size``; with them its ``size`` is the
extra lengths followed by the parameters' broadcast batch shape.
"""

from __future__ import annotations

from typing import Any, cast

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting.node import node_rewriter
from opweave.tensor.random.op import compute_batch_shape
from opweave.xtensor.basic import xtensor_from_tensor
from opweave.xtensor.random_variable import XRV
from opweave.xtensor.rewriting.utils import lower_aligned
from opweave.xtensor.type import XTensorType

__all__ = ["LOWERINGS", "lower_rv"]


@node_rewriter([XRV])
def lower_rv(fgraph: Any, node: Apply) -> list[Variable]:
    """Replace an XRV node by its core random variable on aligned tensors."""
    op = cast(XRV, node.op)
    core_op = op.core_op
    out_type = cast(XTensorType, node.outputs[1].type)
    rng = op.rng_param(node)
    extra_lengths = op.size_params(node)
    params = op.dist_params(node)

    params_core_dims, out_core_dims = op.core_dims
    batch_ndim = out_type.ndim - len(out_core_dims)
    param_batch_dims = out_type.dims[len(op.extra_dims) : batch_ndim]
    tensor_params = [
        lower_aligned(param, (*param_batch_dims, *core_dims))
        for param, core_dims in zip(params, params_core_dims, strict=True)
    ]

    size = None
    if op.extra_dims:
        # ``size`` is the whole batch shape, the parameters' part included.
        param_batch_shape = (
            tuple(compute_batch_shape(tensor_params, ndims_params=core_op.ndims_params))
            if tensor_params
            else ()
        )
        size = [*extra_lengths, *param_batch_shape]

    next_rng, draws = core_op.make_node(rng, size, *tensor_params).outputs
    return [next_rng, xtensor_from_tensor(draws, dims=out_type.dims)]


LOWERINGS = (lower_rv,)
