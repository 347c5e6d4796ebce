"""Helpers of the xtensor lowerings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.tensor.variable import TensorVariable

__all__ = ["lower_aligned"]


def lower_aligned(x: Any, out_dims: Sequence[str]) -> TensorVariable:
    """The xtensor ``x`` as a tensor whose axes follow ``out_dims``.

    Each dimension of ``x`` goes to the position of its name in ``out_dims``; names of
    ``out_dims`` that ``x`` lacks become broadcastable axes of length 1.

    Parameters
    ----------
    x
        An xtensor variable whose dims are all in ``out_dims``.
    out_dims
        The order of the result's axes.
    """
    positions = {dim: i for i, dim in enumerate(x.type.dims)}
    order = tuple(positions.get(dim, "x") for dim in out_dims)
    out = x.values.dimshuffle(order)
    assert isinstance(out, TensorVariable)
    return out
