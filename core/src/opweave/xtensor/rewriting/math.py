"""Lowering of the generalized dot product (:class:`~opweave.xtensor.math.Dot`) to
``einsum``."""

from __future__ import annotations

from string import ascii_letters
from typing import Any

from opweave.graph.basic import Apply
from opweave.graph.rewriting import node_rewriter
from opweave.tensor.einsum import einsum
from opweave.tensor.shape import specify_shape
from opweave.xtensor.basic import tensor_from_xtensor, xtensor_from_tensor
from opweave.xtensor.math import Dot

__all__ = ["LOWERINGS", "lower_dot"]


@node_rewriter([Dot])
def lower_dot(fgraph: Any, node: Apply) -> list[Any]:
    """``Dot(dims)(x, y)`` -> ``einsum`` with one letter per dimension name, summing the
    contracted dimensions (those missing from the output)."""
    x: Any
    y: Any
    out: Any
    x, y = node.inputs
    [out] = node.outputs
    all_dims = list(dict.fromkeys((*x.type.dims, *y.type.dims, *out.type.dims)))
    if len(all_dims) > len(ascii_letters):
        raise ValueError("Too many dimensions to map to einsum subscripts")
    letter = dict(zip(all_dims, ascii_letters, strict=False))

    def term(dims: tuple[str, ...]) -> str:
        return "".join(letter[d] for d in dims)

    subscripts = f"{term(x.type.dims)},{term(y.type.dims)}->{term(out.type.dims)}"
    out_tensor = einsum(subscripts, tensor_from_xtensor(x), tensor_from_xtensor(y))
    if out_tensor.type.dtype != out.type.dtype:
        out_tensor = out_tensor.astype(out.type.dtype)
    if any(s is not None for s in out.type.shape):
        out_tensor = specify_shape(out_tensor, out.type.shape)
    return [xtensor_from_tensor(out_tensor, dims=out.type.dims)]


LOWERINGS = (lower_dot,)
