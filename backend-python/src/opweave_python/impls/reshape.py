"""NumPy implementations of :mod:`opweave.tensor.reshape` (``JoinDims``, ``SplitDims``):
reshapes of the input, views as the Ops' ``view_map`` declares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.reshape import JoinDims, SplitDims


def join_dims_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """The input with dimensions ``start_axis`` to ``start_axis + n_axes`` joined."""
    (x,) = inputs
    start, stop = op.start_axis, op.start_axis + op.n_axes
    joined = 1
    for n in x.shape[start:stop]:
        joined *= n
    out[0][0] = x.reshape((*x.shape[:start], joined, *x.shape[stop:]))


def split_dims_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """The input with dimension ``axis`` split into the lengths of the shape input."""
    x, shape = inputs
    axis = op.axis
    new_shape = (*x.shape[:axis], *(int(n) for n in shape), *x.shape[axis + 1 :])
    out[0][0] = x.reshape(new_shape)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {JoinDims: join_dims_perform, SplitDims: split_dims_perform}
)
