"""NumPy implementations of the products and index reductions of ``opweave.tensor.math``:
:class:`~opweave.tensor.blas.Dot`, :class:`~opweave.tensor.blas.MatMul`,
:class:`~opweave.tensor.reductions.Argmax` and :class:`~opweave.tensor.reductions.Argmin`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.blas import Dot, MatMul
from opweave.tensor.elemwise import normalize_axis
from opweave.tensor.reductions import Argmax, Argmin

__all__ = ["PERFORMS", "argmax_perform", "dot_perform", "matmul_perform"]

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
        Dot: dot_perform,
        MatMul: matmul_perform,
        Argmax: argmax_perform,
        Argmin: argmax_perform,
    }
)
