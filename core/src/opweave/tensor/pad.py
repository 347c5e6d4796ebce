"""``numpy.pad`` for tensors (PyTensor's ``pytensor.tensor.pad``): :func:`pad`, and
:func:`~opweave.tensor.subtensor.flip` re-exported.

The padded tensor is a graph of existing Ops, built one axis after the other as NumPy
pads (so the pads of an axis cover the pads already added to the axes before it):

* ``edge``, ``wrap``, ``symmetric`` and ``reflect`` gather entries with
  :func:`~opweave.tensor.subtensor.take` at indices computed from ``arange`` (each of
  them a periodic or clipped map of the padded positions onto the axis);
* ``constant``, ``linear_ramp`` and the statistics (``maximum``, ``minimum``, ``mean``,
  ``median``) join blocks before and after the tensor with
  :func:`~opweave.tensor.basic.concatenate`.

Pad widths may be symbolic. Gradients and every backend's kernels come with those Ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from opweave.graph.basic import Constant, Variable
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out
from opweave.tensor.basic import alloc, arange, cast, concatenate
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.extra_ops import broadcast_to
from opweave.tensor.reductions import max as _max
from opweave.tensor.reductions import mean as _mean
from opweave.tensor.reductions import min as _min
from opweave.tensor.shape import shape_padaxis
from opweave.tensor.subtensor import flip, take
from opweave.tensor.type import integer_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = ["PadMode", "flip", "pad"]

#: The modes of :func:`pad`.
PadMode = Literal[
    "constant",
    "edge",
    "linear_ramp",
    "maximum",
    "minimum",
    "mean",
    "median",
    "wrap",
    "symmetric",
    "reflect",
]

#: The keyword arguments each mode accepts.
_MODE_OPTIONS: dict[str, frozenset[str]] = {
    "constant": frozenset({"constant_values"}),
    "edge": frozenset(),
    "linear_ramp": frozenset({"end_values"}),
    "maximum": frozenset({"stat_length"}),
    "minimum": frozenset({"stat_length"}),
    "mean": frozenset({"stat_length"}),
    "median": frozenset({"stat_length"}),
    "wrap": frozenset(),
    "symmetric": frozenset({"reflect_type"}),
    "reflect": frozenset({"reflect_type"}),
}

Pair = tuple[Any, Any]


# ====================================================================== arguments


def _pairs(value: Any, ndim: int, name: str, index: bool) -> list[Pair]:
    """``(before, after)`` for each axis, from a scalar, a pair or one pair per axis
    (NumPy's broadcasting of pad arguments); Python numbers where ``value`` is known."""
    if isinstance(value, Variable) and not isinstance(value, Constant):
        symbolic = broadcast_to(value, (ndim, 2))
        return [(symbolic[axis, 0], symbolic[axis, 1]) for axis in range(ndim)]
    data = np.asarray(value.data if isinstance(value, Constant) else value)
    if index:
        if data.dtype.kind not in "iub" and not (
            data.dtype.kind == "f" and np.array_equal(data, np.round(data))
        ):
            raise TypeError(f"pad: {name} must hold integers, got {data.tolist()!r}")
        if (data < 0).any():
            raise ValueError(f"pad: {name} can't contain negative values, got {data.tolist()!r}")
        data = data.astype("int64")
    try:
        table = np.broadcast_to(data, (ndim, 2))
    except ValueError:
        raise ValueError(
            f"pad: {name} of shape {data.shape} does not give (before, after) for "
            f"each of the {ndim} axes"
        ) from None
    return [(table[axis, 0].item(), table[axis, 1].item()) for axis in range(ndim)]


def _check_options(mode: str, given: dict[str, Any]) -> None:
    if mode not in _MODE_OPTIONS:
        raise ValueError(f"Invalid mode: {mode}")
    unsupported = sorted(name for name, value in given.items() if value is not None)
    unsupported = [name for name in unsupported if name not in _MODE_OPTIONS[mode]]
    if unsupported:
        raise ValueError(
            f"Invalid keyword arguments for mode '{mode}': {unsupported}. "
            f"Mode '{mode}' accepts {sorted(_MODE_OPTIONS[mode])}"
        )


# ====================================================================== per axis


def _block_shape(x: TensorVariable, axis: int, length: Any) -> list[Any]:
    """The shape of ``x`` with ``length`` along ``axis``."""
    return [length if i == axis else x.shape[i] for i in range(x.ndim)]


def _along(vector: TensorVariable, axis: int, ndim: int) -> TensorVariable:
    """A vector laid along ``axis`` of an ``ndim``-d tensor (broadcastable elsewhere)."""
    return tensor_out(vector.dimshuffle(*[0 if i == axis else "x" for i in range(ndim)]))


def _edge(x: TensorVariable, axis: int, last: bool) -> TensorVariable:
    """The first (or last) slice of ``x`` along ``axis``, keeping the axis (length 1)."""
    index: list[Any] = [slice(None)] * x.ndim
    index[axis] = -1 if last else 0
    return shape_padaxis(x[tuple(index)], axis)


def _round_for(value: TensorVariable, dtype: str) -> TensorVariable:
    """``value`` in ``dtype``, rounded first when ``dtype`` is an integer dtype."""
    if dtype in integer_dtypes and value.dtype not in integer_dtypes:
        value = tm.round(value)
    return cast(value, dtype)


def _join(x: TensorVariable, axis: int, before: TensorVariable, after: TensorVariable) -> Any:
    return concatenate([before, x, after], axis=axis)


def _constant_axis(x: TensorVariable, axis: int, widths: Pair, values: Pair) -> Any:
    before, after = (
        tensor_out(alloc(cast(as_tensor_variable(v), x.dtype), *_block_shape(x, axis, w)))
        for v, w in zip(values, widths, strict=True)
    )
    return _join(x, axis, before, after)


def _ramp(x: TensorVariable, axis: int, width: Any, end: Any, last: bool) -> TensorVariable:
    """NumPy's ramp from ``end`` to the edge of ``x`` (the edge itself excluded)."""
    edge = _edge(x, axis, last)
    steps = arange(width, dtype="float64")
    if last:
        steps = steps[::-1]
    fraction = _along(steps / tm.maximum(width, 1), axis, x.ndim)
    end = as_tensor_variable(end)
    ramp = end + (edge - end) * fraction
    if x.dtype in integer_dtypes:  # ``numpy.linspace`` floors for integer dtypes
        ramp = tm.floor(ramp)
    return cast(ramp, x.dtype)


def _linear_ramp_axis(x: TensorVariable, axis: int, widths: Pair, ends: Pair) -> Any:
    before = _ramp(x, axis, widths[0], ends[0], last=False)
    after = _ramp(x, axis, widths[1], ends[1], last=True)
    return _join(x, axis, before, after)


def _median(x: TensorVariable, axis: int) -> TensorVariable:
    return shape_padaxis(tm.median(x, axis=axis), axis)


def _stat_block(
    x: TensorVariable,
    axis: int,
    width: Any,
    length: Any,
    stat: Callable[[TensorVariable, int], TensorVariable],
    last: bool,
) -> TensorVariable:
    n = x.shape[axis]
    count = n if length is None else tm.maximum(tm.minimum(length, n), 1)
    index = [slice(None)] * x.ndim
    index[axis] = slice(n - count, None) if last else slice(0, count)
    value = _round_for(stat(x[tuple(index)], axis), x.dtype)
    return tensor_out(alloc(value, *_block_shape(x, axis, width)))


def _stat_axis(
    x: TensorVariable,
    axis: int,
    widths: Pair,
    lengths: Pair,
    stat: Callable[[TensorVariable, int], TensorVariable],
) -> Any:
    before = _stat_block(x, axis, widths[0], lengths[0], stat, last=False)
    after = _stat_block(x, axis, widths[1], lengths[1], stat, last=True)
    return _join(x, axis, before, after)


def _source_index(mode: str, position: TensorVariable, n: Any) -> TensorVariable:
    """The index of the entry of the axis that padded ``position`` (0 is the axis's
    first entry, negative positions are before it) reads."""
    if mode == "edge":
        return tensor_out(tm.clip(position, 0, n - 1))
    if mode == "wrap":
        return tensor_out(tm.mod(position, n))
    if mode == "symmetric":
        folded = tm.mod(position, 2 * n)
        return tensor_out(tm.switch(tm.lt(folded, n), folded, 2 * n - 1 - folded))
    period = tensor_out(tm.maximum(2 * (n - 1), 1))  # reflect: one entry maps onto itself
    folded = tm.mod(position, period)
    return tensor_out(tm.switch(tm.lt(folded, n), folded, period - folded))


def _gather_axis(x: TensorVariable, axis: int, widths: Pair, mode: str) -> Any:
    n = x.shape[axis]
    positions = arange(-as_tensor_variable(widths[0]), n + widths[1], dtype="int64")
    return take(x, _source_index(mode, positions, n), axis=axis)


_STATS: dict[str, Callable[[TensorVariable, int], TensorVariable]] = {
    "maximum": lambda v, axis: _max(v, axis=axis, keepdims=True),
    "minimum": lambda v, axis: _min(v, axis=axis, keepdims=True),
    "mean": lambda v, axis: _mean(v, axis=axis, keepdims=True),
    "median": _median,
}


# ====================================================================== pad


def pad(
    x: Any,
    pad_width: Any,
    mode: PadMode = "constant",
    *,
    constant_values: Any = None,
    end_values: Any = None,
    stat_length: Any = None,
    reflect_type: Literal["even", "odd"] | None = None,
) -> TensorVariable:
    """Pad a tensor, as ``numpy.pad`` does.

    Parameters
    ----------
    x
        The tensor.
    pad_width
        How many entries to add before and after each axis: an int, ``(before, after)``
        for every axis, or ``((before_1, after_1), ..., (before_N, after_N))``; may be
        symbolic.
    mode
        ``"constant"`` (``constant_values``, default 0), ``"edge"`` (the edge entries),
        ``"linear_ramp"`` (from ``end_values``, default 0, to the edge), ``"maximum"``,
        ``"minimum"``, ``"mean"``, ``"median"`` (of the ``stat_length`` entries nearest
        the side, default all; rounded for integer tensors), ``"reflect"`` (mirrored
        on the edge entry), ``"symmetric"`` (mirrored after the edge entry) or
        ``"wrap"`` (the other end's entries).
    constant_values, end_values, stat_length
        Per axis and side, broadcast as ``pad_width`` is; only for the modes above.
    reflect_type
        ``"even"`` (the default) for ``"reflect"`` and ``"symmetric"``.

    Returns
    -------
    TensorVariable
        The padded tensor, of ``x``'s dtype.

    Raises
    ------
    ValueError
        For an unknown mode, a keyword the mode does not take, negative widths, or
        arguments that do not broadcast to ``(ndim, 2)``.
    NotImplementedError
        For ``reflect_type="odd"``.
    TypeError
        For non-integer pad widths or stat lengths.
    """
    _check_options(
        mode,
        {
            "constant_values": constant_values,
            "end_values": end_values,
            "stat_length": stat_length,
            "reflect_type": reflect_type,
        },
    )
    if reflect_type not in (None, "even"):
        if reflect_type == "odd":
            raise NotImplementedError("pad: odd reflection (reflect_type='odd') is not supported")
        raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    x = as_tensor_variable(x)
    widths = _pairs(pad_width, x.ndim, "pad_width", index=True)
    for axis in range(x.ndim):
        if mode == "constant":
            values = _pairs(
                0 if constant_values is None else constant_values,
                x.ndim,
                "constant_values",
                index=False,
            )
            x = _constant_axis(x, axis, widths[axis], values[axis])
        elif mode == "linear_ramp":
            ends = _pairs(
                0 if end_values is None else end_values, x.ndim, "end_values", index=False
            )
            x = _linear_ramp_axis(x, axis, widths[axis], ends[axis])
        elif mode in _STATS:
            lengths = (
                [(None, None)] * x.ndim
                if stat_length is None
                else _pairs(stat_length, x.ndim, "stat_length", index=True)
            )
            x = _stat_axis(x, axis, widths[axis], lengths[axis], _STATS[mode])
        else:
            x = _gather_axis(x, axis, widths[axis], mode)
    return as_tensor_variable(x)
