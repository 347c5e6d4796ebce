"""NumPy implementations of :mod:`opweave.tensor.shape_ops` (``Shape``, ``Shape_i``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.shape_ops import Shape, Shape_i


def shape_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """The input's shape as an int64 vector."""
    out[0][0] = np.asarray(np.shape(inputs[0]), dtype="int64")


def shape_i_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Dimension ``op.i`` of the input's shape as an int64 scalar."""
    shape = np.shape(inputs[0])
    if len(shape) <= op.i:
        raise ValueError(f"Shape_i({op.i}) of a value with only {len(shape)} dimensions")
    out[0][0] = np.asarray(shape[op.i], dtype="int64")


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Shape: shape_perform, Shape_i: shape_i_perform}
)
