"""NumPy implementations of the index reductions of :mod:`opweave.tensor.reductions`:
:class:`~opweave.tensor.reductions.Argmax` and :class:`~opweave.tensor.reductions.Argmin`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.elemwise import normalize_axis
from opweave.tensor.reductions import Argmax, Argmin

__all__ = ["PERFORMS", "argmax_perform"]


def argmax_perform(op: Argmax, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``np.argmax`` (``np.argmin`` for :class:`Argmin`); several axes are flattened together.

    Raises
    ------
    ValueError
        For an empty reduction.
    """
    (x,) = inputs
    fn = np.argmin if isinstance(op, Argmin) else np.argmax
    if op.axis is None:
        result = fn(x)
    else:
        axes = normalize_axis(op.axis, x.ndim, str(op))
        if len(axes) == 1:
            result = fn(x, axis=axes[0])
        else:
            keep = [i for i in range(x.ndim) if i not in axes]
            moved = x.transpose(keep + list(axes))
            kept_shape = moved.shape[: len(keep)]
            # Not -1: with a zero-length kept axis the reduced length cannot be inferred.
            flat = moved.reshape((*kept_shape, int(np.prod(moved.shape[len(keep) :]))))
            result = fn(flat, axis=-1)
    out[0][0] = np.asarray(result, dtype=np.int64)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Argmax: argmax_perform,
        Argmin: argmax_perform,
    }
)
