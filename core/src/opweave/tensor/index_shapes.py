"""Lengths and shapes of indexing results, constant where they are known, symbolic otherwise.

Every function here takes lengths and index bounds that are Python ints or 0-d integer
variables and folds what is constant: a slice of a dimension of known length has an ``int``
length, one with a symbolic bound builds the arithmetic (``opweave.tensor.math``).

* :func:`slice_length`, :func:`slice_len`, :func:`slice_static_length`: the length of
  ``range(*slice.indices(n))``;
* :func:`get_canonical_form_slice`: a slice as an increasing slice and a direction;
* :func:`group_indices`, :func:`basic_shape`, :func:`indexed_result_shape`: the shape of
  ``a[indices]`` under NumPy's rules for basic and advanced indexing (the broadcast
  advanced-index dimensions go where the first advanced index is when the advanced
  indices are adjacent, else first);
* :func:`static_indexed_shape`: the same with ``None`` for unknown lengths, for the
  static shapes of the Ops' outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any

import numpy as np

from opweave.graph.basic import Constant, Variable
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_var
from opweave.tensor.basic import cast, get_vector_length, where
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.index_list import as_index_literal, is_placeholder
from opweave.tensor.shape import shape_i
from opweave.tensor.type import integer_dtypes
from opweave.tensor.variable import NotScalarConstantError

__all__ = [
    "assemble_indexed_shape",
    "basic_shape",
    "broadcast_index_shapes",
    "get_canonical_form_slice",
    "group_indices",
    "indexed_result_shape",
    "slice_len",
    "slice_length",
    "slice_static_length",
    "static_indexed_shape",
]


# ====================================================================== folding arithmetic


#: The math functions of :func:`_m`, for non-constant arguments.
_SYMBOLIC: dict[str, Callable[..., Any]] = {
    "add": tm.add,
    "sub": tm.sub,
    "mul": tm.mul,
    "maximum": tm.maximum,
    "minimum": tm.minimum,
    "int_div": tm.int_div,
    "neg": tm.neg,
    "lt": tm.lt,
    "ge": tm.ge,
    "eq": tm.eq,
}

_FOLDED: dict[str, Callable[..., Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": max,
    "minimum": min,
    "int_div": lambda a, b: a // b,
    "neg": lambda a: -a,
    "lt": lambda a, b: a < b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
}


def _m(name: str, *args: Any) -> Any:
    """Fold ``name(*args)`` for ints, else build ``opweave.tensor.math.<name>``."""
    if all(isinstance(a, int) for a in args):
        return _FOLDED[name](*args)
    return _SYMBOLIC[name](*args)


def _sel(cond: Any, ift: Any, iff: Any) -> Any:
    """``ift if cond else iff``: folded when ``cond`` is a Python bool."""
    if isinstance(cond, bool):
        return ift if cond else iff
    return where(cond, ift, iff)


def _value(x: Any) -> Any:
    """``None``, an ``int`` when ``x`` is a known constant, else a 0-d tensor variable."""
    if x is None:
        return None
    if isinstance(x, int | np.integer):
        return int(x)
    try:
        known = as_index_literal(x)
    except (NotScalarConstantError, TypeError):
        known = None
    if isinstance(known, int | np.integer):
        return int(known)
    var = as_tensor_variable(x)
    if var.ndim != 0:
        raise ValueError(f"{x} is not a scalar index or length")
    return var


# ====================================================================== slice lengths


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


def slice_length(start: Any, stop: Any, step: Any, n: Any) -> Any:
    """The length of ``range(*slice(start, stop, step).indices(n))``.

    Parameters
    ----------
    start, stop, step
        ``None``, ints or 0-d integer variables.
    n
        The length of the sliced dimension: an int or a 0-d integer variable.

    Returns
    -------
    int or TensorVariable
        An ``int`` when everything is constant.
    """
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


def slice_len(slc: slice, n: Any) -> Any:
    """The length of ``slc`` applied to a dimension of length ``n`` (as PyTensor's).

    Parameters
    ----------
    slc
        A slice of ``None``, ints, or 0-d integer (tensor or scalar) variables.
    n
        The dimension's length (an int or a 0-d integer variable).

    Returns
    -------
    int or TensorVariable
    """
    return slice_length(_value(slc.start), _value(slc.stop), _value(slc.step), _value(n))


def slice_static_length(slc: slice, dim_length: int | None) -> int | None:
    """The length of ``slc`` on a dimension of static length ``dim_length``, or ``None``.

    ``None`` when the length or a bound of the slice is not a known constant (a full
    slice keeps ``dim_length`` even when that is ``None``), except that a slice whose
    constant bounds have the same sign and are not in the step's order (``1:1``,
    ``-1:-1:3``, ``3:1``) is empty whatever the length.
    """
    comps = []
    for c in (slc.start, slc.stop, slc.step):
        if is_placeholder(c):
            return None
        v = _value(c)
        if isinstance(v, Variable):
            return None
        comps.append(v)
    start, stop, step = comps
    if start is None and stop is None and step in (None, 1, -1):
        return dim_length
    if dim_length is None:
        return 0 if _empty_for_any_length(start, stop, step) else None
    return len(range(*slice(start, stop, step).indices(dim_length)))


def _empty_for_any_length(start: int | None, stop: int | None, step: int | None) -> bool:
    """Whether the slice selects nothing on every length: both bounds known, of the same
    sign, and ``stop`` not past ``start`` in the direction of ``step``."""
    if start is None or stop is None or step == 0:
        return False
    if (start < 0) != (stop < 0):
        return False
    return stop <= start if (step is None or step > 0) else stop >= start


def _is_scalar_index(x: Any) -> bool:
    """Whether ``x`` may be a scalar index: a number, or a 0-d variable of a Type with a
    ``dtype`` (a tensor or a scalar), not ``None``/``NoneConst`` nor an array."""
    if isinstance(x, int | np.integer):
        return True
    if isinstance(x, np.ndarray):
        return x.ndim == 0
    xtype = getattr(x, "type", None)
    return getattr(xtype, "dtype", None) is not None and getattr(xtype, "ndim", 0) == 0


def get_canonical_form_slice(theslice: Any, length: Any) -> tuple[Any, Any]:
    """Rewrite an index or slice in canonical form, as PyTensor does.

    Parameters
    ----------
    theslice
        A slice (of ``None``, ints or 0-d integer variables), or a scalar index.
    length
        The length of the indexed dimension (an int or a 0-d integer variable).

    Returns
    -------
    canonical, direction
        For a slice: an increasing ``slice(start, stop, step)`` with
        ``0 <= start <= stop <= length`` and ``step > 0`` selecting the same elements, and
        the direction (``1``, ``-1``, or a 0-d variable) in which to read them:
        ``x[theslice]`` is ``x[canonical][::direction]``. For a scalar index: the
        non-negative index (``idx + length`` for a negative one) and ``1``.

    Raises
    ------
    ValueError
        If ``theslice`` is neither a slice nor a scalar index, or has a zero step.
    """
    n = _value(length)
    if not isinstance(theslice, slice):
        if isinstance(theslice, bool | np.bool_) or not _is_scalar_index(theslice):
            raise ValueError(
                f"{theslice!r} is not a supported slice or scalar index: expected a slice, "
                "an integer or a 0-d integer variable"
            )
        idx = _value(theslice)
        if isinstance(idx, int):
            return (idx if idx >= 0 else _m("add", idx, n)), 1
        if idx.dtype not in integer_dtypes:
            raise ValueError(f"{theslice} is not a supported index: it is not an integer")
        return where(tm.lt(idx, 0), _m("add", idx, n), idx), 1

    start, stop, step = _value(theslice.start), _value(theslice.stop), _value(theslice.step)
    if step == 0 and isinstance(step, int):
        raise ValueError("slice step cannot be zero")
    if all(isinstance(v, int | type(None)) for v in (start, stop, step)) and isinstance(n, int):
        a, b, s = slice(start, stop, step).indices(n)
        if a <= b and s >= 1:
            return slice(a, b, s), 1
    if step is None:
        step = 1

    neg = _m("lt", step, 0)

    def by_sign(if_neg: Any, if_pos: Any) -> Any:
        return _sel(neg, if_neg, if_pos)

    abs_step = by_sign(_m("neg", step), step)
    if start is None:
        start = by_sign(_m("sub", n, 1), 0)
    else:
        start = _sel(_m("lt", start, 0), _m("add", start, n), start)
        start = _sel(_m("lt", start, 0), by_sign(-1, 0), start)
        start = _sel(_m("ge", start, n), by_sign(_m("sub", n, 1), n), start)
    if stop is None:
        stop = by_sign(-1, n)
    else:
        stop = _sel(_m("lt", stop, 0), _m("add", stop, n), stop)
        stop = _sel(_m("lt", stop, 0), -1, stop)
        stop = _sel(_m("ge", stop, n), n, stop)

    new_stop = by_sign(_m("add", start, 1), stop)
    count = _m("add", _m("int_div", _m("sub", _m("sub", start, stop), 1), abs_step), 1)
    count = _sel(_m("lt", count, 0), 0, count)
    low = _m("sub", _m("sub", new_stop, _m("mul", _m("sub", count, 1), abs_step)), 1)
    low = _sel(_m("lt", low, 0), _m("sub", new_stop, 1), low)
    new_start = by_sign(low, start)
    new_start = _sel(_m("lt", new_start, 0), 0, new_start)
    new_stop = _sel(_m("lt", new_stop, 0), 0, new_stop)
    new_start = _sel(_m("lt", new_start, new_stop), new_start, new_stop)
    if isinstance(step, int):
        direction: Any = -1 if step < 0 else 1
    else:
        direction = where(neg, -1, 1)
    return slice(new_start, new_stop, abs_step), direction


# ====================================================================== result shapes


def group_indices(indices: Sequence[Any]) -> list[tuple[bool, list[tuple[int, Any]]]]:
    """Group consecutive indices by kind: basic (slices) or advanced (anything else).

    Returns
    -------
    list of (is_basic, [(dimension, index), ...])
        ``None`` (a new axis) takes no dimension of the indexed array: it carries the
        number of the dimension before it.
    """
    groups = []
    dim = -1
    for basic, members in groupby(indices, key=lambda idx: isinstance(idx, slice)):
        numbered = []
        for idx in members:
            if idx is not None:
                dim += 1
            numbered.append((dim, idx))
        groups.append((basic, numbered))
    return groups


def basic_shape(shape: Sequence[Any], indices: Sequence[Any]) -> tuple[Any, ...]:
    """The shape given by basic indices (slices and ``None``) on dimensions of ``shape``.

    Raises
    ------
    ValueError
        For an index that is neither a slice nor ``None``.
    """
    out: list[Any] = []
    for n, idx in zip(shape[: len(indices)], indices, strict=True):
        if isinstance(idx, slice):
            out.append(slice_len(idx, n))
        elif idx is None:
            out.append(1)
        else:
            raise ValueError(f"invalid basic index {idx!r}")
    return tuple(out)


def _broadcast_pair(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        if a != b and 1 not in (a, b):
            raise ValueError(f"lengths {a} and {b} do not broadcast")
        return b if a == 1 else a
    if isinstance(a, int) and a == 1:
        return b
    if isinstance(b, int) and b == 1:
        return a
    if isinstance(a, int):
        return a
    if isinstance(b, int):
        return b
    return where(tm.eq(a, 1), b, a)


def broadcast_index_shapes(*shapes: Sequence[Any]) -> tuple[Any, ...]:
    """The broadcast of shapes whose lengths are ints or 0-d integer variables.

    A symbolic length combined with a known one other than 1 is that known length (it
    can only be 1 or equal to it).

    Raises
    ------
    ValueError
        If known lengths do not broadcast.
    """
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Any] = []
    for k in range(ndim, 0, -1):
        dims = [_value(s[len(s) - k]) for s in shapes if len(s) >= k]
        acc = dims[0]
        for d in dims[1:]:
            acc = _broadcast_pair(acc, d)
        out.append(acc)
    return tuple(out)


def assemble_indexed_shape(
    dims: Sequence[Any],
    entries: Sequence[tuple[Any, ...]],
    slice_fn: Callable[[slice, Any], Any],
    broadcast_fn: Callable[..., tuple[Any, ...]],
) -> tuple[Any, ...]:
    """The result shape from ``entries``: ``("new",)``, ``("slice", slc, dim)`` and
    ``("adv", shape)``, with ``dims[used:]`` appended after them."""
    kinds = ["adv" if e[0] == "adv" else "basic" for e in entries]
    adv = [i for i, k in enumerate(kinds) if k == "adv"]
    adjacent = not adv or adv == list(range(adv[0], adv[-1] + 1))
    block = broadcast_fn(*[e[1] for e in entries if e[0] == "adv"]) if adv else ()
    out: list[Any] = []
    placed = False
    if adv and not adjacent:
        out.extend(block)
        placed = True
    used = 0
    for e in entries:
        if e[0] == "slice":
            out.append(slice_fn(e[1], dims[e[2]]))
            used = e[2] + 1
        elif e[0] == "new":
            out.append(1)
        else:
            used = e[2]
            if not placed:
                out.extend(block)
                placed = True
    out.extend(dims[used:])
    return tuple(out)


def _vector_entries(array_shape: Any) -> list[Any]:
    if isinstance(array_shape, Variable):
        vector = tensor_var(array_shape)
        return [vector[i] for i in range(get_vector_length(vector))]
    return list(array_shape)


def indexed_result_shape(
    array_shape: Any, indices: Sequence[Any], indices_are_shapes: bool = False
) -> tuple[Any, ...]:
    """The shape of ``a[indices]`` for ``a`` of shape ``array_shape``, by NumPy's rules.

    Parameters
    ----------
    array_shape
        The lengths of ``a``: a sequence of ints and 0-d integer variables, or an integer
        vector of known length.
    indices
        Slices, ``None`` (new axes), and advanced indices: ints, integer arrays or
        boolean masks (variables or values). With ``indices_are_shapes``, each advanced
        index is given by its shape (a tuple) instead, and takes one dimension of ``a``.
    indices_are_shapes
        See ``indices``.

    Returns
    -------
    tuple
        Ints where known, 0-d integer variables otherwise.

    Raises
    ------
    IndexError
        If there are more indices than dimensions.
    ValueError
        If known lengths of the advanced indices do not broadcast.
    """
    dims = _vector_entries(array_shape)
    entries: list[tuple[Any, ...]] = []
    dim = 0
    for idx in indices:
        if idx is None:
            entries.append(("new",))
            continue
        if isinstance(idx, slice):
            entries.append(("slice", idx, dim))
            dim += 1
            continue
        if indices_are_shapes:
            shape, taken = tuple(idx), 1
        elif isinstance(idx, int | np.integer):
            shape, taken = (), 1
        else:
            var = as_tensor_variable(idx)
            if var.dtype == "bool":
                static = var.data if isinstance(var, Constant) else None
                count = (
                    int(np.count_nonzero(static))
                    if static is not None
                    else cast(tm.sum(var), "int64")
                )
                shape, taken = (count,), max(var.ndim, 1)
            else:
                shape = tuple(
                    s if s is not None else shape_i(var, d) for d, s in enumerate(var.type.shape)
                )
                taken = 1
        dim += taken
        entries.append(("adv", shape, dim))
    if dim > len(dims):
        raise IndexError(f"too many indices: {dim} for {len(dims)} dimensions")
    return assemble_indexed_shape(dims, entries, slice_len, broadcast_index_shapes)


def _static_broadcast(*shapes: Sequence[int | None]) -> tuple[int | None, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out: list[int | None] = []
    for k in range(ndim, 0, -1):
        dims = [s[len(s) - k] for s in shapes if len(s) >= k]
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise IndexError(
                "shape mismatch: indexing tensors could not be broadcast together with shapes "
                + "["
                + ", ".join(str(tuple(s)) for s in shapes)
                + "]"
            )
        if known:
            out.append(known.pop())
        else:
            out.append(None if None in dims else 1)
    return tuple(out)


def static_indexed_shape(
    x_shape: Sequence[int | None], entries: Sequence[tuple[Any, ...]]
) -> tuple[int | None, ...]:
    """The static shape of an advanced indexing result (``None`` where unknown).

    Parameters
    ----------
    x_shape
        The static shape of the indexed tensor.
    entries
        ``("slice", slc, dim)`` for a slice of dimension ``dim`` (its bounds ints,
        ``None`` or placeholders), and ``("adv", static_shape, next_dim)`` for an
        advanced index (``next_dim``: the first dimension after the ones it takes).

    Raises
    ------
    IndexError
        If known lengths of the advanced indices do not broadcast.
    """
    return assemble_indexed_shape(list(x_shape), entries, slice_static_length, _static_broadcast)
