"""NumPy implementation of :class:`~opweave.tensor.dimshuffle.DimShuffle`: a view of the input."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.dimshuffle import DimShuffle

__all__ = ["PERFORMS", "dimshuffle_perform"]


def dimshuffle_perform(
    op: DimShuffle, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """A view of the input: transpose, drop length-1 axes, insert new axes.

    Raises
    ------
    ValueError
        If a dropped axis does not have length 1.
    """
    (x,) = inputs
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    for axis in op.drop:
        if x.shape[axis] != 1:
            raise ValueError(
                f"{op}: cannot drop axis {axis} of a value of shape {x.shape} (length is not 1)"
            )
    res = x.transpose(op.transposition) if op.transposition else x.view()
    if op.drop:
        res = res.reshape(res.shape[: len(op.shuffle)])
    if op.augment:
        res = np.expand_dims(res, op.augment)
    output_storage[0][0] = res


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {DimShuffle: dimshuffle_perform}
)
