"""NumPy implementations of :mod:`opweave.tensor.special` (stable: the maximum is subtracted)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad


def _shifted(x: np.ndarray, axis: int | None) -> np.ndarray:
    """``x - max(x, axis)``, with an infinite maximum replaced by 0."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    return x - m


def softmax_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``exp(x - max) / sum(exp(x - max))`` along ``op.axis``."""
    (x,) = inputs
    if x.size == 0:
        out[0][0] = x.copy()
        return
    with np.errstate(over="ignore", under="ignore"):
        e = np.exp(_shifted(x, op.axis))
        e /= np.sum(e, axis=op.axis, keepdims=True)
    out[0][0] = np.asarray(e, dtype=x.dtype)


def log_softmax_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``(x - max) - log(sum(exp(x - max)))`` along ``op.axis``."""
    (x,) = inputs
    if x.size == 0:
        out[0][0] = x.copy()
        return
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        xs = _shifted(x, op.axis)
        z = xs - np.log(np.sum(np.exp(xs), axis=op.axis, keepdims=True))
    out[0][0] = np.asarray(z, dtype=x.dtype)


def softmax_grad_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``(dy - sum(dy * sm, axis)) * sm``."""
    dy, sm = inputs
    z = (dy - np.sum(dy * sm, axis=op.axis, keepdims=True)) * sm
    out[0][0] = np.asarray(z, dtype=node.outputs[0].type.dtype)  # type: ignore[attr-defined]


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Softmax: softmax_perform, LogSoftmax: log_softmax_perform, SoftmaxGrad: softmax_grad_perform}
)
