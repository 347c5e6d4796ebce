"""Lowerings of softmax and a few array Ops: ``Softmax``, ``LogSoftmax``, ``SoftmaxGrad``
(the stable forms the ``py`` backend computes), ``CumOp`` (``cumsum``/``cumprod``),
``Split`` (static lengths), ``ExtractDiag``, ``SortOp`` and ``ArgSortOp`` (stable sorts;
NaN sorts last, as in NumPy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.tensor.basic import ExtractDiag, Split
from opweave.tensor.extra_ops import CumOp
from opweave.tensor.sort import ArgSortOp, SortOp
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import static_int, static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _shifted(x: Any, axis: int | None) -> Any:
    """``x - max(x, axis)``, an infinite maximum replaced by 0."""
    m = jnp.max(x, axis=axis, keepdims=True)
    return x - jnp.where(jnp.isfinite(m), m, jnp.zeros((), x.dtype))


def softmax(op: Softmax, node: Apply) -> Fn:
    """``exp(x - max) / sum(exp(x - max))`` along ``op.axis``."""

    def run(x: Any) -> Any:
        if x.size == 0:
            return x
        e = jnp.exp(_shifted(x, op.axis))
        return e / jnp.sum(e, axis=op.axis, keepdims=True)

    return run


def log_softmax(op: LogSoftmax, node: Apply) -> Fn:
    """``(x - max) - log(sum(exp(x - max)))`` along ``op.axis``."""

    def run(x: Any) -> Any:
        if x.size == 0:
            return x
        s = _shifted(x, op.axis)
        return s - jnp.log(jnp.sum(jnp.exp(s), axis=op.axis, keepdims=True))

    return run


def softmax_grad(op: SoftmaxGrad, node: Apply) -> Fn:
    """``(dy - sum(dy * sm, axis)) * sm``."""

    def run(dy: Any, sm: Any) -> Any:
        return (dy - jnp.sum(dy * sm, axis=op.axis, keepdims=True)) * sm

    return run


def _negative_zero_sums(x: Any, sums: Any, axis: int) -> Any:
    """``sums`` (the running sums of ``x`` along ``axis``) with -0.0 where every element
    so far is -0.0, as in NumPy: XLA starts a running sum from +0.0, which makes them +0.0.
    """
    negative_zero = (jnp.signbit(x) & (x == 0)).astype(jnp.int8)
    so_far = lax.cummin(negative_zero, axis=axis).astype(bool)
    return jnp.where(so_far, jnp.array(-0.0, sums.dtype), sums)


def cum_op(op: CumOp, node: Apply) -> Fn:
    """``jnp.cumsum`` / ``jnp.cumprod`` along ``op.axis`` in the output dtype (a running
    sum of real floats keeps NumPy's -0.0, :func:`_negative_zero_sums`)."""
    fn = jnp.cumsum if op.mode == "add" else jnp.cumprod
    dtype = out_dtype(node)
    signed_zeros = op.mode == "add" and np.dtype(dtype).kind == "f"

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        out = fn(x, axis=op.axis)
        return _negative_zero_sums(x, out, op.axis) if signed_zeros and x.size else out

    return run


def split(op: Split, node: Apply) -> Fn:
    """The pieces along the (static) axis, of the (static) lengths."""

    def run(x: Any, axis: Any, splits: Any) -> Any:
        ax = static_int(axis, "the axis of Split")
        lengths = static_ints(splits, "the lengths of Split")
        if len(lengths) != op.len_splits or any(n < 0 for n in lengths):
            raise ValueError(f"Split: bad lengths {lengths} for {op.len_splits} pieces")
        if sum(lengths) != jnp.shape(x)[ax]:
            raise ValueError(
                f"Split: the lengths {lengths} do not sum to the length {jnp.shape(x)[ax]} of "
                f"axis {ax}"
            )
        return tuple(jnp.split(x, np.cumsum(lengths)[:-1].tolist(), axis=ax))

    return run


def extract_diag(op: ExtractDiag, node: Apply) -> Fn:
    """``jnp.diagonal``."""

    def run(x: Any) -> Any:
        return jnp.diagonal(x, op.offset, op.axis1, op.axis2)

    return run


def _sort(fn: Fn) -> Callable[[Any, Apply], Fn]:
    def factory(op: Any, node: Apply) -> Fn:
        def run(x: Any, axis: Any) -> Any:
            ax = static_int(axis, f"the axis of {op}")
            return fn(x, axis=ax, stable=True)

        return run

    return factory


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Softmax: softmax,
    LogSoftmax: log_softmax,
    SoftmaxGrad: softmax_grad,
    CumOp: cum_op,
    Split: split,
    ExtractDiag: extract_diag,
    SortOp: _sort(jnp.sort),
    ArgSortOp: _sort(jnp.argsort),
}
