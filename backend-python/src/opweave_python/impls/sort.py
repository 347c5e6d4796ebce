"""NumPy implementations of :mod:`opweave.tensor.sort`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.sort import ArgSortOp, SortOp


def sort_perform(op: SortOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.sort(x, axis, kind=op.kind)``."""
    x, axis = inputs
    out[0][0] = np.sort(x, int(axis), kind=op.kind)


def argsort_perform(
    op: ArgSortOp, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.argsort(x, axis, kind=op.kind)`` as int64."""
    x, axis = inputs
    out[0][0] = np.argsort(x, int(axis), kind=op.kind).astype(np.int64, copy=False)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {SortOp: sort_perform, ArgSortOp: argsort_perform}
)
