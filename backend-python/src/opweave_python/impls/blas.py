"""NumPy implementations of the products of :mod:`opweave.tensor.blas`:
:class:`~opweave.tensor.blas.Dot` and :class:`~opweave.tensor.blas.MatMul`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.blas import Dot, MatMul

__all__ = ["PERFORMS", "dot_perform", "matmul_perform"]

#: ``sys.getrefcount`` of a previous output that only its storage cell holds (see
#: :mod:`opweave_python.impls.elemwise`).
_UNSHARED_REFS = 3


def _out_dtype(node: Apply) -> np.dtype[Any]:
    return np.dtype(node.outputs[0].type.dtype)  # type: ignore[attr-defined]


def dot_perform(op: Dot, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``np.dot``; written into the previous output array when it fits and nothing else
    references it."""
    x, y = inputs
    dtype = _out_dtype(node)
    z = out[0][0]
    if (
        type(z) is np.ndarray
        and z.ndim == 2
        and x.dtype == dtype
        and y.dtype == dtype
        and z.dtype == dtype
        and z.flags.c_contiguous
        and z.shape == (x.shape[0], y.shape[-1])
        and x.ndim == 2
        and y.ndim == 2
        and x.shape[1] == y.shape[0]
        and not np.may_share_memory(z, x)
        and not np.may_share_memory(z, y)
        and sys.getrefcount(z) <= _UNSHARED_REFS
    ):
        out[0][0] = np.dot(x, y, out=z)
        return
    result = np.dot(x, y)
    out[0][0] = np.asarray(result, dtype=dtype)


def _check_batch(op: Any, node: Apply, x: np.ndarray, y: np.ndarray) -> None:
    xs, ys = node.inputs[0].type.shape, node.inputs[1].type.shape  # type: ignore[attr-defined]
    for axis in range(x.ndim - 2):
        if xs[axis] != 1 and ys[axis] != 1 and x.shape[axis] != y.shape[axis]:
            raise ValueError(
                f"{op}: batch shapes {x.shape[:-2]} and {y.shape[:-2]} do not match on axis "
                f"{axis}; a length-1 axis broadcasts only when its static shape says so"
            )


def matmul_perform(op: MatMul, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``np.matmul`` after checking that only statically broadcastable batch axes broadcast."""
    x, y = inputs
    _check_batch(op, node, x, y)
    out[0][0] = np.asarray(np.matmul(x, y), dtype=_out_dtype(node))


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Dot: dot_perform,
        MatMul: matmul_perform,
    }
)
