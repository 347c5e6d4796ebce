"""Indexing: basic :class:`Subtensor`, :class:`IncSubtensor`, and integer-vector indexing.

``x[key]`` (:func:`getitem`) accepts what NumPy's *basic* indexing does —
integers, slices, ``...`` and ``None`` — with constant or symbolic (0-d integer
tensor) entries, plus a single integer vector combined with full slices, which
becomes :class:`AdvancedSubtensor1` (``take``).

An ``idx_list`` describes a basic index: one entry per indexed dimension, each
an ``int`` (a constant index), a 0-d integer :class:`TensorType` (a symbolic
index, given as an input of the node) or a ``slice`` whose ``start``/``stop``/
``step`` are each ``None``, an ``int`` or such a Type. Symbolic entries appear
in the node's inputs in the order they appear in ``idx_list``.

:func:`set_subtensor` and :func:`inc_subtensor` take the indexing expression
itself, as in PyTensor: ``set_subtensor(x[1:3], y)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.tensor import math as tm
from opweave.tensor.basic import (
    _as_int_scalar,
    _as_tensor_or_scalar,
    _const_int,
    _float_zeros_like,
    _normalize_axis,
    _sum_to,
    transpose,
    where,
    zeros_like,
)
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.shape import _dimshuffle, flatten, reshape, shape_i, shape_padleft
from opweave.tensor.type import TensorType, continuous_dtypes, integer_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor1",
    "IncSubtensor",
    "Subtensor",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor1",
    "advanced_subtensor1",
    "get_idx_list",
    "getitem",
    "inc_subtensor",
    "set_subtensor",
    "subtensor",
    "take",
]

IdxEntry = Any  # int | TensorType | slice


# ====================================================================== idx_list helpers


def _is_placeholder(e: Any) -> bool:
    return isinstance(e, TensorType)


def _check_idx_list(idx_list: Any, who: str) -> tuple[IdxEntry, ...]:
    if not isinstance(idx_list, list | tuple):
        raise TypeError(f"{who}: idx_list must be a tuple, got {idx_list!r}")

    def ok_scalar(e: Any) -> bool:
        if _is_placeholder(e):
            return e.ndim == 0 and e.dtype in integer_dtypes
        return isinstance(e, int) and not isinstance(e, bool)

    for e in idx_list:
        if isinstance(e, slice):
            comps = (e.start, e.stop, e.step)
            if not all(c is None or ok_scalar(c) for c in comps):
                raise TypeError(f"{who}: invalid slice entry {e!r} in idx_list")
            if e.step == 0:
                raise ValueError(f"{who}: slice step cannot be zero")
        elif not ok_scalar(e):
            raise TypeError(
                f"{who}: invalid idx_list entry {e!r}: expected an int, a slice, or a 0-d "
                "integer TensorType"
            )
    return tuple(idx_list)


def _hashable(idx_list: Sequence[IdxEntry]) -> tuple[Any, ...]:
    return tuple(
        ("slice", e.start, e.stop, e.step) if isinstance(e, slice) else e for e in idx_list
    )


def _placeholders(idx_list: Sequence[IdxEntry]) -> list[TensorType]:
    out = []
    for e in idx_list:
        comps = (e.start, e.stop, e.step) if isinstance(e, slice) else (e,)
        out.extend(c for c in comps if _is_placeholder(c))
    return out


def get_idx_list(values: Sequence[Any], idx_list: Sequence[IdxEntry]) -> tuple[Any, ...]:
    """Return ``idx_list`` with its symbolic entries replaced, in order, by ``values``.

    Parameters
    ----------
    values
        One value (or variable) per placeholder of ``idx_list``.
    idx_list
        A :class:`Subtensor`-style index description.

    Returns
    -------
    tuple
        Ints/values and slices, usable as a NumPy index when ``values`` are numbers.
    """
    it = iter(values)

    def sub(c: Any) -> Any:
        if _is_placeholder(c):
            v = next(it)
            return int(v) if isinstance(v, np.ndarray | np.integer) else v
        return c

    out = []
    for e in idx_list:
        if isinstance(e, slice):
            out.append(slice(sub(e.start), sub(e.stop), sub(e.step)))
        else:
            out.append(sub(e))
    return tuple(out)


def _idx_str(idx_list: Sequence[IdxEntry]) -> str:
    def one(c: Any) -> str:
        if c is None:
            return ""
        return c.dtype if _is_placeholder(c) else str(c)

    parts = []
    for e in idx_list:
        if isinstance(e, slice):
            text = f"{one(e.start)}:{one(e.stop)}"
            if e.step is not None:
                text += f":{one(e.step)}"
            parts.append(text)
        else:
            parts.append(one(e))
    return ", ".join(parts)


def _slice_static_len(s: slice, n: int | None) -> int | None:
    comps = (s.start, s.stop, s.step)
    if any(_is_placeholder(c) for c in comps):
        return None
    if s.start is None and s.stop is None and s.step in (None, 1, -1):
        return n
    if n is None:
        return None
    return len(range(*s.indices(n)))


def _static_out_shape(x_shape: Sequence[int | None], idx_list: Sequence[IdxEntry]) -> list[Any]:
    out: list[int | None] = []
    for d, e in enumerate(idx_list):
        if isinstance(e, slice):
            out.append(_slice_static_len(e, x_shape[d]))
    out.extend(x_shape[len(idx_list) :])
    return out


def _check_scalar_inputs(
    who: str, idx_list: Sequence[IdxEntry], inputs: Sequence[Any]
) -> list[Variable]:
    types = _placeholders(idx_list)
    if len(inputs) != len(types):
        raise TypeError(
            f"{who}: idx_list has {len(types)} symbolic entries but {len(inputs)} index inputs "
            "were given"
        )
    converted = []
    for i, (inp, t) in enumerate(zip(inputs, types)):
        var = _as_int_scalar(inp, f"{who}: index input {i}")
        if var.type != t:
            raise TypeError(f"{who}: index input {i} ({var}) has type {var.type!r}, expected {t!r}")
        converted.append(var)
    return converted


def _bounds_check(x: TensorVariable, idx_list: Sequence[IdxEntry]) -> None:
    for d, e in enumerate(idx_list):
        n = x.type.shape[d]
        if isinstance(e, int) and n is not None and not -n <= e < n:
            raise IndexError(f"index {e} is out of bounds for axis {d} with size {n}")


# ====================================================================== symbolic slice lengths


#: The math functions of :func:`_m`, for non-constant arguments.
_SYMBOLIC = {
    "add": tm.add,
    "sub": tm.sub,
    "maximum": tm.maximum,
    "minimum": tm.minimum,
    "int_div": tm.int_div,
    "neg": tm.neg,
}


def _m(name: str, *args: Any) -> Any:
    """Fold ``name(*args)`` for ints, else build ``opweave.tensor.math.<name>``."""
    if all(isinstance(a, int) for a in args):
        a = args
        return {
            "add": lambda: a[0] + a[1],
            "sub": lambda: a[0] - a[1],
            "maximum": lambda: max(a),
            "minimum": lambda: min(a),
            "int_div": lambda: a[0] // a[1],
            "neg": lambda: -a[0],
        }[name]()
    return _SYMBOLIC[name](*args)


def _normalized_bound(b: Any, n: Any, low: int, high_offset: int, default: Any) -> Any:
    """``b`` as ``slice.indices`` normalizes it: negative counts from ``n``, then clipped
    to ``[low, n + high_offset]``."""
    if b is None:
        return default
    if isinstance(b, int):
        shifted = _m("add", b, n) if b < 0 else b
    else:
        shifted = where(tm.lt(b, 0), _m("add", b, n), b)
    return _m("minimum", _m("maximum", shifted, low), _m("add", n, high_offset))


def _slice_length(start: Any, stop: Any, step: Any, n: Any) -> Any:
    """The length of ``range(*slice(start, stop, step).indices(n))``, symbolically."""
    if start is None and stop is None and step in (None, 1, -1):
        return n

    def forward(st: Any) -> Any:
        a = _normalized_bound(start, n, 0, 0, 0)
        b = _normalized_bound(stop, n, 0, 0, n)
        span = (
            _m("sub", b, a)
            if st == 1
            else _m("int_div", _m("add", _m("sub", b, a), _m("sub", st, 1)), st)
        )
        return _m("maximum", span, 0)

    def backward(st: Any) -> Any:
        a = _normalized_bound(start, n, -1, -1, _m("sub", n, 1))
        b = _normalized_bound(stop, n, -1, -1, -1)
        neg = _m("neg", st)
        span = _m("int_div", _m("add", _m("sub", a, b), _m("sub", neg, 1)), neg)
        return _m("maximum", span, 0)

    if step is None:
        return forward(1)
    if isinstance(step, int):
        return forward(step) if step > 0 else backward(step)
    return where(tm.lt(step, 0), backward(step), forward(step))


# ====================================================================== Subtensor


class Subtensor(Op):
    """Basic indexing ``x[idx_list]``; the output is a view of ``x``.

    Parameters
    ----------
    idx_list
        The index description (see the module docstring).
    """

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence[IdxEntry]) -> None:
        self.idx_list = _check_idx_list(idx_list, "Subtensor")

    def __hash__(self) -> int:
        return hash((type(self), _hashable(self.idx_list)))

    def __str__(self) -> str:
        return f"Subtensor{{{_idx_str(self.idx_list)}}}"

    def make_node(self, x: Any, *inputs: Any) -> Apply:
        """``x`` and one 0-d integer per symbolic entry of ``idx_list``."""
        x = as_tensor_variable(x)
        if len(self.idx_list) > x.ndim:
            raise IndexError(
                f"too many indices for the {x.ndim}-d tensor {x}: {len(self.idx_list)} were given"
            )
        ins = _check_scalar_inputs(str(self), self.idx_list, inputs)
        _bounds_check(x, self.idx_list)
        static = _static_out_shape(x.type.shape, self.idx_list)
        return Apply(self, [x, *ins], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sliced dimensions' lengths and the untouched dimensions."""
        xshape = shapes[0]
        entries = get_idx_list(node.inputs[1:], self.idx_list)
        static = node.outputs[0].type.shape
        out: list[Any] = []
        for d, e in enumerate(entries):
            if isinstance(e, slice):
                known = static[len(out)]
                out.append(
                    known
                    if known is not None
                    else _slice_length(e.start, e.stop, e.step, xshape[d])
                )
        out.extend(xshape[len(entries) :])
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The index inputs do not affect the elements' values."""
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros with the output gradient added at the indexed positions."""
        x, *rest = inputs
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            first = _float_zeros_like(x)
        else:
            first = IncSubtensor(self.idx_list)(zeros_like(x), gz, *rest)
        return [first, *[disconnected_type() for _ in rest]]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same indexing of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


class IncSubtensor(Op):
    """``x`` with ``y`` added to (or, with ``set_instead_of_inc``, written into) ``x[idx_list]``.

    Inputs: ``x``, ``y`` (broadcastable to ``x[idx_list]``) and the index inputs.

    Parameters
    ----------
    idx_list
        The index description (see the module docstring).
    inplace
        Write into ``x`` (``destroy_map = {0: [0]}``) instead of a copy.
    set_instead_of_inc
        Replace the indexed elements instead of incrementing them.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc")

    def __init__(
        self,
        idx_list: Sequence[IdxEntry],
        inplace: bool = False,
        set_instead_of_inc: bool = False,
    ) -> None:
        self.idx_list = _check_idx_list(idx_list, "IncSubtensor")
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __hash__(self) -> int:
        return hash((type(self), _hashable(self.idx_list), self.inplace, self.set_instead_of_inc))

    def __str__(self) -> str:
        name = "SetSubtensor" if self.set_instead_of_inc else "IncSubtensor"
        prefix = "Inplace" if self.inplace else ""
        return f"{prefix}{name}{{{_idx_str(self.idx_list)}}}"

    def make_node(self, x: Any, y: Any, *inputs: Any) -> Apply:
        """Check that ``y`` fits ``x[idx_list]``; the output has ``x``'s Type."""
        x = as_tensor_variable(x)
        sub = Subtensor(self.idx_list).make_node(x, *inputs)
        ins = sub.inputs[1:]
        target = sub.outputs[0]
        y = _value_for(y, x, str(self))
        _check_broadcast(y, target.type.shape, str(self))
        return Apply(self, [x, y, *ins], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` and ``y`` are connected; the indices are not."""
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` (zeroed where set) for ``x``; ``gz[idx]`` summed to ``y``'s shape for ``y``."""
        x, y, *rest = inputs
        (gz,) = output_grads
        disc = [disconnected_type() for _ in rest]
        if gz.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(x), _float_zeros_like(y), *disc]
        if self.set_instead_of_inc:
            zero = constant(0, dtype=gz.dtype)  # type: ignore[attr-defined]
            gx = IncSubtensor(self.idx_list, set_instead_of_inc=True)(gz, zero, *rest)
        else:
            gx = gz
        if y.dtype in continuous_dtypes:  # type: ignore[attr-defined]
            gy = _sum_to(Subtensor(self.idx_list)(gz, *rest), y.type)  # type: ignore[arg-type]
        else:
            gy = _float_zeros_like(y)
        return [gx, gy, *disc]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same update applied to the evaluation points."""
        ex, ey = eval_points[:2]
        if ex is None and ey is None:
            return [None]
        ex = zeros_like(inputs[0]) if ex is None else ex
        ey = zeros_like(inputs[1]) if ey is None else ey
        op = IncSubtensor(self.idx_list, set_instead_of_inc=self.set_instead_of_inc)
        return [op(ex, ey, *inputs[2:])]


def _value_for(y: Any, x: TensorVariable, who: str) -> TensorVariable:
    """``y`` as a tensor whose values can be stored in ``x``."""
    if not isinstance(y, Variable):
        arr = np.asarray(y)
        if arr.dtype.kind in "biufc":
            cast_arr = arr.astype(x.dtype)
            with np.errstate(all="ignore"):
                same = bool(np.all(cast_arr == arr))
            if same or np.can_cast(arr.dtype, x.dtype, "same_kind"):
                return constant(cast_arr)
    y = as_tensor_variable(y)
    if not np.can_cast(y.dtype, x.dtype, "same_kind"):
        raise TypeError(
            f"{who}: cannot store values of dtype {y.dtype} ({y}) in a tensor of dtype "
            f"{x.dtype} without changing their kind; cast them first"
        )
    return y


def _check_broadcast(y: TensorVariable, target: Sequence[int | None], who: str) -> None:
    if y.ndim > len(target):
        raise ValueError(
            f"{who}: cannot use a {y.ndim}-d value to update a {len(target)}-d subtensor"
        )
    for ys, ts in zip(reversed(y.type.shape), reversed(tuple(target))):
        if ys not in (None, 1) and ts is not None and ys != ts:
            raise ValueError(
                f"{who}: a value of static shape {y.type.shape} does not broadcast to the "
                f"indexed part's static shape {tuple(target)}"
            )


# ====================================================================== integer-vector indexing


def _index_vector(ilist: Any, who: str) -> TensorVariable:
    if not isinstance(ilist, Variable):
        arr = np.asarray(ilist)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        ilist = constant(arr)
    ilist = as_tensor_variable(ilist)
    if ilist.dtype == "bool":
        raise TypeError(f"{who}: boolean masks are not supported; use nonzero(mask) as indices")
    if ilist.dtype not in integer_dtypes:
        raise TypeError(f"{who}: indices must be integers, got {ilist} of dtype {ilist.dtype}")
    if ilist.ndim != 1:
        raise TypeError(f"{who}: indices must be a vector, got {ilist.ndim} dimensions")
    return ilist


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for an integer vector ``ilist`` (a copy; negative indices allowed)."""

    __props__ = ()

    def make_node(self, x: Any, ilist: Any) -> Apply:
        """``x`` (at least 1-d) and an integer vector."""
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"AdvancedSubtensor1: cannot index the 0-d tensor {x}")
        ilist = _index_vector(ilist, "AdvancedSubtensor1")
        n = x.type.shape[0]
        if isinstance(ilist, Constant) and n is not None and ilist.data.size:
            bad = ilist.data[(ilist.data >= n) | (ilist.data < -n)]
            if bad.size:
                raise IndexError(f"index {int(bad[0])} is out of bounds for axis 0 with size {n}")
        static = (ilist.type.shape[0], *x.type.shape[1:])
        return Apply(self, [x, ilist], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The number of indices, then ``x``'s trailing dimensions."""
        return [(shapes[1][0], *shapes[0][1:])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The indices do not affect the values."""
        return [[True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros with the output gradient's rows added at the indices (repeats accumulate)."""
        x, ilist = inputs
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(x), disconnected_type()]
        return [AdvancedIncSubtensor1()(zeros_like(x), gz, ilist), disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same rows of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


def advanced_subtensor1(x: Any, ilist: Any) -> TensorVariable:
    """``x[ilist]`` for an integer vector ``ilist``."""
    return AdvancedSubtensor1()(x, ilist)  # type: ignore[return-value]


class AdvancedIncSubtensor1(Op):
    """``x`` with ``y`` added to (or written into) the rows ``x[ilist]``.

    Repeated indices accumulate when incrementing (``numpy.add.at``); when setting,
    the last one wins.

    Parameters
    ----------
    inplace
        Write into ``x`` (``destroy_map = {0: [0]}``).
    set_instead_of_inc
        Replace the rows instead of incrementing them.
    """

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False) -> None:
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        name = "AdvancedSetSubtensor1" if self.set_instead_of_inc else "AdvancedIncSubtensor1"
        return f"{name}{{inplace}}" if self.inplace else name

    def make_node(self, x: Any, y: Any, ilist: Any) -> Apply:
        """``x``, ``y`` broadcastable to ``x[ilist]``, and an integer vector."""
        x = as_tensor_variable(x)
        target = AdvancedSubtensor1().make_node(x, ilist)
        ilist = target.inputs[1]
        y = _value_for(y, x, str(self))
        _check_broadcast(y, target.outputs[0].type.shape, str(self))
        return Apply(self, [x, y, ilist], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` and ``y`` are connected; the indices are not."""
        return [[True], [True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` (zeroed at set rows) for ``x``; ``gz[ilist]`` summed to ``y``'s shape."""
        x, y, ilist = inputs
        (gz,) = output_grads
        if gz.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(x), _float_zeros_like(y), disconnected_type()]
        if self.set_instead_of_inc:
            zero = constant(0, dtype=gz.dtype)  # type: ignore[attr-defined]
            gx = AdvancedIncSubtensor1(set_instead_of_inc=True)(gz, zero, ilist)
        else:
            gx = gz
        if y.dtype in continuous_dtypes:  # type: ignore[attr-defined]
            gy = _sum_to(advanced_subtensor1(gz, ilist), y.type)  # type: ignore[arg-type]
        else:
            gy = _float_zeros_like(y)
        return [gx, gy, disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same update applied to the evaluation points."""
        ex, ey = eval_points[:2]
        if ex is None and ey is None:
            return [None]
        ex = zeros_like(inputs[0]) if ex is None else ex
        ey = zeros_like(inputs[1]) if ey is None else ey
        op = AdvancedIncSubtensor1(set_instead_of_inc=self.set_instead_of_inc)
        return [op(ex, ey, inputs[2])]


def advanced_inc_subtensor1(x: Any, y: Any, ilist: Any) -> TensorVariable:
    """``x`` with ``y`` added to the rows ``ilist`` (repeated rows accumulate)."""
    return AdvancedIncSubtensor1()(x, y, ilist)  # type: ignore[return-value]


def advanced_set_subtensor1(x: Any, y: Any, ilist: Any) -> TensorVariable:
    """``x`` with the rows ``ilist`` replaced by ``y``."""
    return AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, ilist)  # type: ignore[return-value]


# ====================================================================== take


def take(a: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> TensorVariable:
    """``numpy.take``: the elements of ``a`` at ``indices`` along ``axis``.

    Parameters
    ----------
    a
        The tensor.
    indices
        Integer scalar, vector or tensor (constant or symbolic).
    axis
        The axis; ``None`` takes from the flattened ``a``.
    mode
        ``"raise"`` (out-of-range indices are an error), ``"wrap"`` or ``"clip"``.
    """
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a, 1), 0
    axis = _normalize_axis(axis, a.ndim, "take")
    if not isinstance(indices, Variable):
        indices = np.asarray(indices)
        if indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype("int64")
        indices = constant(indices)
    indices = as_tensor_variable(indices)
    if indices.dtype not in integer_dtypes:
        raise TypeError(f"take: indices must be integers, got {indices} of dtype {indices.dtype}")
    if mode == "wrap":
        indices = tm.mod(indices, shape_i(a, axis))
    elif mode == "clip":
        indices = tm.clip(indices, 0, tm.sub(shape_i(a, axis), 1))
    elif mode != "raise":
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if indices.ndim == 0:
        return getitem(a, (slice(None),) * axis + (indices,))
    if indices.ndim > 1:
        flat = take(a, flatten(indices, 1), axis)
        dims = (
            [shape_i(a, d) for d in range(axis)]
            + [shape_i(indices, d) for d in range(indices.ndim)]
            + [shape_i(a, d) for d in range(axis + 1, a.ndim)]
        )
        return reshape(flat, dims, ndim=len(dims))
    if axis == 0:
        return advanced_subtensor1(a, indices)
    others = [d for d in range(a.ndim) if d != axis]
    moved = advanced_subtensor1(transpose(a, [axis, *others]), indices)
    back = [*range(1, axis + 1), 0, *range(axis + 1, a.ndim)]
    return transpose(moved, back)


# ====================================================================== getitem


def _scalar_entry(k: Any, what: str) -> Any:
    """An int, a 0-d integer variable (a symbolic entry), or raise."""
    if isinstance(k, bool | np.bool_):
        raise TypeError(f"{what}: boolean scalars are not valid indices")
    if isinstance(k, int | np.integer):
        return int(k)
    if isinstance(k, float | np.floating):
        raise TypeError(f"{what}: indices must be integers, got the float {k!r}")
    if isinstance(k, Variable):
        var = _as_tensor_or_scalar(k)
        if var.ndim != 0 or var.dtype not in integer_dtypes:
            raise TypeError(
                f"{what}: a symbolic index must be a 0-d integer tensor, got {var} of type "
                f"{var.type!r}"
            )
        known = _const_int(var) if isinstance(var, Constant) else None
        return known if known is not None else var
    raise TypeError(f"{what}: invalid index {k!r} of type {type(k).__name__}")


def _classify(k: Any) -> str:
    """``'none'``, ``'ellipsis'``, ``'slice'``, ``'scalar'`` or ``'array'``."""
    if k is None:
        return "none"
    if k is Ellipsis:
        return "ellipsis"
    if isinstance(k, slice):
        return "slice"
    if isinstance(k, Variable):
        return "scalar" if getattr(k.type, "ndim", 0) == 0 else "array"
    if isinstance(k, list | np.ndarray):
        return "scalar" if np.ndim(k) == 0 else "array"
    if isinstance(k, bool | np.bool_ | int | np.integer | float | np.floating):
        return "scalar"
    raise TypeError(
        f"invalid index {k!r} of type {type(k).__name__}: only integers, slices (':'), "
        "ellipsis ('...'), None (newaxis) and integer tensors are valid indices"
    )


def getitem(x: Any, key: Any) -> TensorVariable:
    """``x[key]``: the entry point of ``TensorVariable.__getitem__``.

    Parameters
    ----------
    x
        The tensor.
    key
        An index or a tuple of indices: ints, slices, ``...``, ``None``, 0-d integer
        tensors, and at most one integer vector (constant or symbolic) with the other
        entries full slices.

    Raises
    ------
    IndexError
        Too many indices, several ellipses, or a constant index out of static bounds.
    TypeError
        An index of an invalid kind (float, bool, string, float tensor, ...).
    NotImplementedError
        Advanced indexing beyond one integer vector.
    """
    x = as_tensor_variable(x)
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_classify(k) for k in key]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    n_real = sum(1 for k in kinds if k in ("slice", "scalar", "array"))
    if n_real > x.ndim:
        raise IndexError(f"too many indices for the {x.ndim}-d tensor {x}: {n_real} were given")
    if "ellipsis" in kinds:
        pos = kinds.index("ellipsis")
        fill = (slice(None),) * (x.ndim - n_real)
        key = key[:pos] + fill + key[pos + 1 :]
        kinds = kinds[:pos] + ["slice"] * len(fill) + kinds[pos + 1 :]
    if "none" in kinds:
        return _with_newaxes(x, key, kinds)
    if "array" in kinds:
        return _advanced(x, key, kinds)
    idx_list: list[IdxEntry] = []
    inputs: list[Variable] = []

    def entry(k: Any, what: str) -> Any:
        if k is None:
            return None
        e = _scalar_entry(np.asarray(k).item() if isinstance(k, np.ndarray) else k, what)
        if isinstance(e, Variable):
            inputs.append(e)
            return e.type
        return e

    for d, (k, kind) in enumerate(zip(key, kinds)):
        if kind == "slice":
            s = slice(
                entry(k.start, "slice start"),
                entry(k.stop, "slice stop"),
                entry(k.step, "slice step"),
            )
            if s.step == 0:
                raise ValueError("slice step cannot be zero")
            idx_list.append(s)
        else:
            idx_list.append(entry(k, f"index {d}"))
    while idx_list and idx_list[-1] == slice(None):
        idx_list.pop()
    return Subtensor(tuple(idx_list))(x, *inputs)  # type: ignore[return-value]


#: Alias of :func:`getitem`.
subtensor = getitem


def _with_newaxes(x: TensorVariable, key: tuple[Any, ...], kinds: list[str]) -> TensorVariable:
    base = getitem(x, tuple(k for k, kind in zip(key, kinds) if kind != "none"))
    order: list[Any] = []
    j = 0
    for kind in kinds:
        if kind == "none":
            order.append("x")
        elif kind != "scalar":
            order.append(j)
            j += 1
    order.extend(range(j, base.ndim))
    return _dimshuffle(base, order)


def _advanced(x: TensorVariable, key: tuple[Any, ...], kinds: list[str]) -> TensorVariable:
    arrays = [i for i, kind in enumerate(kinds) if kind == "array"]
    others_full = all(
        kind == "array" or (kind == "slice" and key[i] == slice(None))
        for i, kind in enumerate(kinds)
    )
    if len(arrays) != 1 or not others_full:
        raise NotImplementedError(
            "opweave supports advanced indexing with a single integer vector whose other "
            f"entries are full slices (':'); got the index {key!r}"
        )
    axis = arrays[0]
    idx = key[axis]
    if isinstance(idx, Variable):
        var = as_tensor_variable(idx)
    else:
        arr = np.asarray(idx)
        if arr.size == 0:
            arr = arr.astype("int64")
        var = constant(arr)
    if var.dtype == "bool":
        raise NotImplementedError(
            "boolean mask indexing is not supported; index with nonzero(mask) instead"
        )
    if var.dtype not in integer_dtypes:
        raise TypeError(f"indices must be integers, got {idx!r} of dtype {var.dtype}")
    if var.ndim != 1:
        raise NotImplementedError(
            f"opweave supports advanced indexing with integer vectors only, got {var.ndim} dims"
        )
    return take(x, var, axis)


# ====================================================================== set / inc


def _inner_update(x: TensorVariable, y: Any, inplace: bool, set_: bool, who: str) -> Any:
    owner = x.owner
    if owner is not None and isinstance(owner.op, Subtensor):
        real_x, *idx = owner.inputs
        op = IncSubtensor(owner.op.idx_list, inplace=inplace, set_instead_of_inc=set_)
        return op(real_x, y, *idx)
    if owner is not None and isinstance(owner.op, AdvancedSubtensor1):
        real_x, ilist = owner.inputs
        return AdvancedIncSubtensor1(inplace=inplace, set_instead_of_inc=set_)(real_x, y, ilist)
    new_order = getattr(getattr(owner, "op", None), "new_order", None)
    if owner is not None and new_order is not None:
        inner = owner.inputs[0]
        y = as_tensor_variable(y)
        if y.ndim > x.ndim:
            raise ValueError(f"{who}: cannot use a {y.ndim}-d value to update a {x.ndim}-d tensor")
        y = shape_padleft(y, x.ndim - y.ndim)
        for j, o in enumerate(new_order):
            if o == "x" and y.type.shape[j] != 1:
                raise ValueError(
                    f"{who}: the value has length {y.type.shape[j]} along the inserted axis {j}; "
                    "it must be 1"
                )
        inverse = [new_order.index(k) if k in new_order else "x" for k in range(inner.ndim)]
        result = _inner_update(inner, _dimshuffle(y, inverse), inplace, set_, who)
        return _undo_base_transpose(result, tuple(new_order))
    raise TypeError(
        f"{who}: the first argument must be an indexing expression such as x[1:3] or x[idx] "
        f"(the part of x to update), got {x}"
    )


def _is_permutation(order: Sequence[Any]) -> bool:
    return "x" not in order and sorted(order) == list(range(len(order)))


def _undo_base_transpose(result: Variable, outer: tuple[Any, ...]) -> Variable:
    """Transpose ``result`` back when its indexed base was a transposed tensor.

    ``take(t, i, axis)`` on an axis other than 0 is ``(t.T')[i].T''`` with ``T''`` the
    inverse of ``T'``; updating it gives a ``t.T'``-shaped result, and applying the
    outer permutation ``T''`` brings it back to ``t``'s layout.
    """
    base = result.owner.inputs[0] if result.owner is not None else None
    inner = getattr(getattr(base, "owner", None), "op", None)
    order = getattr(inner, "new_order", None)
    if order is None or not (_is_permutation(outer) and _is_permutation(order)):
        return result
    if len(order) != len(outer) or any(order[outer[k]] != k for k in range(len(outer))):
        return result
    return _dimshuffle(result, outer)  # type: ignore[arg-type]


def set_subtensor(
    x: Any, y: Any, inplace: bool = False, tolerate_inplace_aliasing: bool = False
) -> TensorVariable:
    """Return the tensor that ``x`` indexes, with the indexed part replaced by ``y``.

    Parameters
    ----------
    x
        An indexing expression ``t[idx]``; the result has ``t``'s shape.
    y
        Values broadcastable to ``x``'s shape.
    inplace
        Build the in-place Op (normally left to rewrites).
    tolerate_inplace_aliasing
        Accepted for PyTensor compatibility; unused.

    Examples
    --------
    >>> r = set_subtensor(t[1:3], 0.0)  # doctest: +SKIP
    """
    return inc_subtensor(x, y, inplace=inplace, set_instead_of_inc=True)


def inc_subtensor(
    x: Any,
    y: Any,
    inplace: bool = False,
    set_instead_of_inc: bool = False,
    tolerate_inplace_aliasing: bool = False,
    ignore_duplicates: bool = False,
) -> TensorVariable:
    """Return the tensor that ``x`` indexes, with ``y`` added to the indexed part.

    Parameters
    ----------
    x
        An indexing expression ``t[idx]``; the result has ``t``'s shape.
    y
        Values broadcastable to ``x``'s shape.
    inplace
        Build the in-place Op (normally left to rewrites).
    set_instead_of_inc
        Replace instead of increment (:func:`set_subtensor`).
    tolerate_inplace_aliasing, ignore_duplicates
        Accepted for PyTensor compatibility; repeated integer indices always accumulate.
    """
    who = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    x = as_tensor_variable(x)
    return _inner_update(x, y, inplace, set_instead_of_inc, who)  # type: ignore[no-any-return]
