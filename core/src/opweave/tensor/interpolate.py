"""One-dimensional interpolation (PyTensor's ``pytensor.tensor.interpolate``):
:func:`interpolate1d` and the ``numpy.interp``-like :func:`interp`.

Both are graphs of existing Ops: the data points are sorted with
:func:`~opweave.tensor.sort.argsort`, each query point finds its interval with
:func:`~opweave.tensor.extra_ops.searchsorted` (``idx``: the number of data points below
it), and the value is read from the neighbouring points by indexing, with
:func:`~opweave.tensor.basic.switch` choosing the padding outside the data's range. The
gradients and every backend's kernels come with those Ops. Query points may have any
shape; each is interpolated on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from typing import Any, Literal, get_args

from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import switch
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.extra_ops import searchsorted
from opweave.tensor.sort import argsort
from opweave.tensor.variable import TensorVariable

__all__ = [
    "InterpolationMethod",
    "interp",
    "interpolate1d",
    "pad_or_return",
    "valid_methods",
]

#: The methods of :func:`interpolate1d`.
InterpolationMethod = Literal["linear", "nearest", "first", "last", "mean"]
#: Their names, as a tuple.
valid_methods: tuple[str, ...] = get_args(InterpolationMethod)


def pad_or_return(
    x: TensorVariable,
    idx: TensorVariable,
    output: Any,
    left_pad: Any,
    right_pad: Any,
    extrapolate: bool,
) -> TensorVariable:
    """``output``, or (without ``extrapolate``) ``left_pad`` where a query point is
    below every data point (``idx == 0``) and ``right_pad`` where it is above every one
    (``idx == len(x)``)."""
    if extrapolate:
        return as_tensor_variable(output)
    n = x.shape[0]
    return tensor_out(switch(tm.eq(idx, 0), left_pad, switch(tm.eq(idx, n), right_pad, output)))


def _inner(x: TensorVariable, idx: TensorVariable) -> TensorVariable:
    """``idx`` kept in ``[1, len(x) - 1]``: the right end of an interval of data points."""
    return tensor_out(tm.clip(idx, 1, x.shape[0] - 1))


def _linear(x: Any, y: Any, x_hat: Any, idx: Any) -> Any:
    right = _inner(x, idx)
    slope = (x_hat - x[right - 1]) / (x[right] - x[right - 1])
    return y[right - 1] + slope * (y[right] - y[right - 1])


def _nearest(x: Any, y: Any, x_hat: Any, idx: Any) -> Any:
    right = _inner(x, idx)
    closer_left = tm.le(x_hat - x[right - 1], x[right] - x_hat)
    return switch(closer_left, y[right - 1], y[right])


def _first(x: Any, y: Any, x_hat: Any, idx: Any) -> Any:
    return y[tm.clip(idx - 1, 0, x.shape[0] - 1)]


def _last(x: Any, y: Any, x_hat: Any, idx: Any) -> Any:
    return y[tm.clip(idx, 0, x.shape[0] - 1)]


def _mean(x: Any, y: Any, x_hat: Any, idx: Any) -> Any:
    right = _inner(x, idx)
    return (y[right - 1] + y[right]) / 2


_METHODS = {"linear": _linear, "nearest": _nearest, "first": _first, "last": _last, "mean": _mean}


def interpolate1d(
    x: Any,
    y: Any,
    method: InterpolationMethod = "linear",
    left_pad: Any = None,
    right_pad: Any = None,
    extrapolate: bool = True,
) -> Callable[[Any], TensorVariable]:
    """A function interpolating the data points ``(x, y)`` at query points.

    Parameters
    ----------
    x
        The data points' coordinates (a vector; sorted here, ``y`` with it).
    y
        Their values (a vector as long as ``x``).
    method
        ``"linear"`` (the line between the two neighbours), ``"nearest"`` (the closer
        neighbour's value, the left one on a tie), ``"first"`` (the left neighbour's
        value), ``"last"`` (the value of the first data point at or right of the query)
        or ``"mean"`` (the mean of the two neighbours' values).
    left_pad, right_pad
        Without ``extrapolate``: the value for queries strictly below ``x[0]`` (default
        ``y[0]``) and strictly above ``x[-1]`` (default ``y[-1]``), as ``numpy.interp``
        has it.
    extrapolate
        Extend the method beyond the data's range (the pads are then ignored).

    Returns
    -------
    callable
        ``f(x_hat)``: the interpolated values, with the shape of ``x_hat``.

    Raises
    ------
    ValueError
        When ``x`` or ``y`` is not a vector.
    NotImplementedError
        For an unknown ``method`` (the message suggests close names).
    """
    x = as_tensor_variable(x)
    y = as_tensor_variable(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(
            f"interpolate1d: x and y must be vectors (1d), got {x.ndim}d and {y.ndim}d"
        )
    rule = _METHODS.get(method)
    if rule is None:
        raise NotImplementedError(
            f"Unknown interpolation method: {method}. "
            f"Did you mean {get_close_matches(str(method), valid_methods)}?"
        )
    # stable: data points at one coordinate keep their order, as numpy.interp reads them
    order = argsort(x, kind="stable")
    x, y = x[order], y[order]
    left = y[0] if left_pad is None else as_tensor_variable(left_pad)
    right = y[-1] if right_pad is None else as_tensor_variable(right_pad)

    def interpolate(x_hat: Any) -> TensorVariable:
        x_hat = as_tensor_variable(x_hat)
        idx = searchsorted(x, x_hat)
        out = rule(x, y, x_hat, idx)
        if extrapolate:
            return as_tensor_variable(out)
        # strictly below x[0] (``idx == 0`` also holds at x[0] itself) or above x[-1]
        inside = switch(tm.eq(idx, x.shape[0]), right, out)
        return tensor_out(switch(tm.lt(x_hat, x[0]), left, inside))

    return interpolate


def interp(
    x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: None = None
) -> TensorVariable:
    """Linear interpolation with ``numpy.interp``'s signature and values.

    Parameters
    ----------
    x
        The query points (any shape).
    xp, fp
        The data points' coordinates and values (vectors of one length; sorted here by
        ``xp`` with a stable sort, so points at one coordinate keep their order). A query
        on a data point takes its value, the last one's where several points share the
        coordinate, and a NaN query gives NaN, as in ``numpy.interp``.
    left, right
        The value below ``xp[0]`` (default ``fp[0]``) and above ``xp[-1]`` (default
        ``fp[-1]``).
    period
        Not supported (``None`` only), kept for ``numpy.interp``'s signature.

    Returns
    -------
    TensorVariable
        The interpolated values, shaped like ``x``.

    Raises
    ------
    ValueError
        When ``xp`` or ``fp`` is not a vector.
    NotImplementedError
        For a ``period``.
    """
    if period is not None:
        raise NotImplementedError("interp: the period argument is not supported")
    x, xp, fp = as_tensor_variable(x), as_tensor_variable(xp), as_tensor_variable(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(f"interp: xp and fp must be vectors (1d), got {xp.ndim}d and {fp.ndim}d")
    order = argsort(xp, kind="stable")
    xp, fp = xp[order], fp[order]
    n = xp.shape[0]
    # numpy.interp's interval: the last data point at or left of x, and the next one
    hi = tensor_out(tm.clip(searchsorted(xp, x, side="right"), 1, n - 1))
    x_lo, x_hi, f_lo, f_hi = xp[hi - 1], xp[hi], fp[hi - 1], fp[hi]
    # an interval of length 0 is only read where another branch gives the value: keep
    # its slope finite, so that its (unused) gradient is 0 rather than NaN
    width = x_hi - x_lo
    slope = (f_hi - f_lo) / switch(tm.eq(width, 0), 1, width)
    # as numpy.interp: from the left point, else from the right one (infinite values)
    from_left = slope * (x - x_lo) + f_lo
    from_right = slope * (x - x_hi) + f_hi
    line = switch(
        tm.isnan(from_left),
        switch(tm.and_(tm.isnan(from_right), tm.eq(f_lo, f_hi)), f_lo, from_right),
        from_left,
    )
    # a query on a data point takes its value (the last of points at one coordinate)
    inside = switch(tm.eq(x, x_hi), f_hi, switch(tm.eq(x, x_lo), f_lo, line))
    left_value = fp[0] if left is None else as_tensor_variable(left)
    right_value = fp[-1] if right is None else as_tensor_variable(right)
    out = switch(tm.gt(x, xp[-1]), right_value, switch(tm.lt(x, xp[0]), left_value, inside))
    # a NaN query gives NaN (with one data point, numpy.interp returns its value)
    return tensor_out(switch(tm.and_(tm.isnan(x), tm.gt(n, 1)), x, out))
