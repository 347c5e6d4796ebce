"""NumPy implementations of :mod:`opweave.tensor.shape` (``Reshape``, ``SpecifyShape``; those
of ``Shape`` and ``Shape_i``, which it re-exports, are in :mod:`.shape_ops`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.shape import Reshape, SpecifyShape


def reshape_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.reshape`` (a view of the input when NumPy can make one)."""
    x, shp = inputs
    if len(shp) != op.ndim:
        raise ValueError(f"{op}: the new shape {tuple(shp)} has {len(shp)} entries, not {op.ndim}")
    try:
        out[0][0] = np.reshape(x, tuple(int(s) for s in shp))
    except ValueError as exc:
        raise ValueError(f"{op}: {exc}") from None


def specify_shape_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Check the shape; return the input itself."""
    x, *shape = inputs
    if x.ndim != len(shape):
        raise ValueError(f"SpecifyShape: expected a {len(shape)}-d value, got shape {x.shape}")
    for i, s in enumerate(shape):
        if s is not None and x.shape[i] != s:
            wanted = tuple("?" if d is None else int(d) for d in shape)
            raise AssertionError(
                f"SpecifyShape: dimension {i} of the input has length {x.shape[i]}, expected "
                f"{int(s)} (input shape {x.shape}, specified {wanted})"
            )
    out[0][0] = x


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Reshape: reshape_perform,
        SpecifyShape: specify_shape_perform,
    }
)
