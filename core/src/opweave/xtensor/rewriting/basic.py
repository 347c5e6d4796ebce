"""Rewrites removing casts that cancel out (tensor -> xtensor -> tensor and back, and
renames of renames)."""

from __future__ import annotations

from typing import Any

from opweave.graph.rewriting import node_rewriter
from opweave.xtensor.basic import Rename, TensorFromXTensor, XTensorFromTensor, xtensor_from_tensor

__all__ = [
    "LOWERINGS",
    "USELESS_CASTS",
    "useless_rename",
    "useless_tensor_from_xtensor",
    "useless_tensor_from_xtensor_of_rename",
    "useless_xtensor_from_tensor",
]


@node_rewriter([TensorFromXTensor])
def useless_tensor_from_xtensor(fgraph: Any, node: Any) -> list | None:
    """``TensorFromXTensor(XTensorFromTensor(x)) -> x``."""
    [x] = node.inputs
    if x.owner and isinstance(x.owner.op, XTensorFromTensor):
        return [x.owner.inputs[0]]
    return None


@node_rewriter([XTensorFromTensor])
def useless_xtensor_from_tensor(fgraph: Any, node: Any) -> list | None:
    """``XTensorFromTensor(TensorFromXTensor(x)) -> x`` (when the dims are ``x``'s)."""
    [x] = node.inputs
    if x.owner and isinstance(x.owner.op, TensorFromXTensor):
        inner = x.owner.inputs[0]
        if inner.type.dims == node.op.dims:
            return [inner]
    return None


@node_rewriter([TensorFromXTensor])
def useless_tensor_from_xtensor_of_rename(fgraph: Any, node: Any) -> list | None:
    """``TensorFromXTensor(Rename(x)) -> TensorFromXTensor(x)``."""
    [renamed] = node.inputs
    if renamed.owner and isinstance(renamed.owner.op, Rename):
        [x] = renamed.owner.inputs
        return list(node.op(x, return_list=True))
    return None


@node_rewriter([Rename])
def useless_rename(fgraph: Any, node: Any) -> list | None:
    """``Rename(Rename(x)) -> Rename(x)`` and ``Rename(XTensorFromTensor(x)) ->
    XTensorFromTensor(x)`` with the outer names."""
    [renamed] = node.inputs
    owner = renamed.owner
    if owner is None:
        return None
    if isinstance(owner.op, Rename):
        return [node.op(owner.inputs[0])]
    if isinstance(owner.op, XTensorFromTensor):
        return [xtensor_from_tensor(owner.inputs[0], dims=node.op.new_dims)]
    return None


#: The rewrites that also run in the standard phases (``canonicalize``, ``useless``).
USELESS_CASTS = (useless_tensor_from_xtensor, useless_xtensor_from_tensor)

#: Registered into the ``lower_xtensor`` phase.
LOWERINGS = (
    useless_tensor_from_xtensor,
    useless_xtensor_from_tensor,
    useless_tensor_from_xtensor_of_rename,
    useless_rename,
)
