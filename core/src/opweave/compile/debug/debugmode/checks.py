"""The individual checks DebugMode runs on each node, and their value helpers.

* :func:`values_match` / :func:`values_equal`: comparing two values of a Type
  (``values_eq_approx`` and ``values_eq``, with exact NumPy shortcuts first).
* :func:`check_destroy_map`, :func:`check_view_map`, :func:`check_valid_outputs`:
  what one run of one implementation must respect.
* :func:`preallocated_storage`: the pre-filled output storage of the storage reuse
  contract ("of the good dtype, but can have the wrong shape and have any stride
  pattern").
"""

from __future__ import annotations

import cmath
import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from opweave.compile.debug.debugmode.errors import (
    BadDestroyMap,
    BadViewMap,
    InvalidValueError,
)
from opweave.graph.basic import Apply, Variable

__all__ = [
    "ALL_PREALLOC_MODES",
    "DEFAULT_PREALLOC_MODES",
    "check_destroy_map",
    "check_valid_outputs",
    "check_view_map",
    "copy_value",
    "is_immutable",
    "preallocated_storage",
    "resolve_prealloc_modes",
    "values_equal",
    "values_match",
]

#: The pre-allocation modes run by default.
DEFAULT_PREALLOC_MODES: tuple[str, ...] = ("previous", "wrong_size", "strided")
#: Every pre-allocation mode DebugMode knows (``"ALL"`` selects them all).
ALL_PREALLOC_MODES: tuple[str, ...] = (
    "previous",
    "wrong_size",
    "strided",
    "c_contiguous",
    "f_contiguous",
)

_IMMUTABLE = (int, float, complex, str, bytes, bool, type(None), np.generic, frozenset)


# ---------------------------------------------------------------------- values


def is_immutable(value: Any) -> bool:
    """True for values that cannot be modified in place (numbers, strings, NumPy scalars)."""
    if isinstance(value, tuple):
        return all(is_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)


def copy_value(value: Any) -> Any:
    """Return a copy of ``value`` that shares no memory with it (immutables are returned)."""
    if is_immutable(value):
        return value
    if isinstance(value, np.ndarray):
        return value.copy(order="K")
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


def _identical(a: Any, b: Any) -> bool:
    """Exact equality that treats NaNs in the same places as equal."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except Exception:
            return False
    if isinstance(a, float | complex | np.inexact) and isinstance(b, float | complex | np.inexact):
        if type(a) is not type(b):
            return False
        if cmath.isnan(a) and cmath.isnan(b):
            return True
    return False


def _safe_bool(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> bool | None:
    try:
        return bool(fn(a, b))
    except Exception:
        return None


def values_equal(var: Variable, a: Any, b: Any) -> bool:
    """True if ``a`` and ``b`` are equal values of ``var``'s Type (``Type.values_eq``)."""
    if _identical(a, b):
        return True
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape != b.shape:
        return False
    return bool(_safe_bool(var.type.values_eq, a, b))


def values_match(var: Variable, a: Any, b: Any, other: Variable | None = None) -> bool:
    """True if ``a`` and ``b`` are approximately equal values of ``var``.

    Uses ``var.tag.values_eq_approx`` (or ``other.tag.values_eq_approx``) when a rewrite
    set one, else ``var.type.values_eq_approx``. Values that are exactly equal (NaNs in
    the same places included) always match. If the comparison itself raises, NumPy arrays
    are compared with ``numpy.allclose`` and anything else counts as different.
    """
    if _identical(a, b):
        return True
    compare = getattr(var.tag, "values_eq_approx", None)
    if compare is None and other is not None:
        compare = getattr(other.tag, "values_eq_approx", None)
    if compare is None:
        compare = var.type.values_eq_approx
    result = _safe_bool(compare, a, b)
    if result is not None:
        return result
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.shape != b.shape:
            return False
        return bool(_safe_bool(lambda x, y: np.allclose(x, y, equal_nan=True), a, b))
    return False


def _all_finite(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return bool(np.isfinite(value).all())
        return True
    if isinstance(value, np.floating | np.complexfloating):
        return bool(np.isfinite(value))
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, complex):
        return cmath.isfinite(value)
    return True


def _may_share_memory(var: Variable, a: Any, b: Any) -> bool:
    if is_immutable(a) or is_immutable(b):
        return False
    try:
        return bool(var.type.may_share_memory(a, b))
    except Exception:
        return False


# ---------------------------------------------------------------------- per-run checks


def _declared(mapping: Mapping[Any, Sequence[int]] | None, index: int) -> set[int]:
    return set((mapping or {}).get(index, ()) or ())


def check_destroy_map(
    node: Apply,
    before: Mapping[Variable, Any],
    after: Mapping[Variable, Any],
    impl: str,
    input_values: Sequence[Any],
    context: str | None = None,
) -> None:
    """Raise :class:`BadDestroyMap` if an input not in ``destroy_map`` changed.

    Parameters
    ----------
    node
        The node that ran.
    before
        ``{input variable: value before the run}`` (pristine values).
    after
        ``{input variable: the object given to the implementation}``, inspected now.
    impl, input_values, context
        For the message.
    """
    destroy_map = node.op.destroy_map or {}
    destroyed = {node.inputs[i] for idxs in destroy_map.values() for i in (idxs or ())}
    seen: set[Variable] = set()
    for i, var in enumerate(node.inputs):
        if var in seen:
            continue
        seen.add(var)
        if var in destroyed:
            continue
        if not values_equal(var, before[var], after[var]):
            raise BadDestroyMap(node, i, before[var], after[var], impl, input_values, context)


def check_view_map(
    node: Apply,
    given_inputs: Mapping[Variable, Any],
    outputs: Sequence[Any],
    hidden: Iterable[int],
    impl: str,
    input_values: Sequence[Any],
    context: str | None = None,
) -> None:
    """Raise :class:`BadViewMap` for memory aliasing that the Op does not declare.

    An output may share memory with an input only if ``view_map`` or ``destroy_map``
    lists that input for that output. Two outputs may share memory only if one of them is
    in ``hidden`` (outputs no node reads: hidden ones, or ones that are only graph
    outputs), or both declare the same input. Immutable values (numbers, strings) are
    never considered aliased.
    """
    op = node.op
    hidden = set(hidden)
    allowed: list[set[Variable]] = []
    for o in range(len(node.outputs)):
        idxs = _declared(op.view_map, o) | _declared(op.destroy_map, o)
        allowed.append({node.inputs[i] for i in idxs if i < len(node.inputs)})
    for o, (ovar, oval) in enumerate(zip(node.outputs, outputs, strict=True)):
        if oval is None or is_immutable(oval):
            continue
        in_alias = []
        seen: set[Variable] = set()
        for i, ivar in enumerate(node.inputs):
            if ivar in seen:
                continue
            seen.add(ivar)
            if ivar in allowed[o]:
                continue
            if _may_share_memory(ovar, oval, given_inputs[ivar]):
                in_alias.append(i)
        if in_alias:
            raise BadViewMap(node, o, oval, in_alias, (), impl, input_values, context)
        out_alias = []
        for o2 in range(o + 1, len(node.outputs)):
            oval2 = outputs[o2]
            if o in hidden or o2 in hidden or (allowed[o] & allowed[o2]):
                continue
            if _may_share_memory(ovar, oval, oval2):
                out_alias.append(o2)
        if out_alias:
            raise BadViewMap(node, o, oval, (), out_alias, impl, input_values, context)


def check_valid_outputs(
    node: Apply,
    outputs: Sequence[Any],
    check_isfinite: bool,
    hidden: Iterable[int],
    impl: str,
    input_values: Sequence[Any],
    context: str | None = None,
) -> None:
    """Raise :class:`InvalidValueError` for an output its Type rejects, or a NaN/inf.

    Validity is ``type.is_valid_value`` (``filter(value, strict=True)`` succeeds); with
    ``check_isfinite``, floating-point arrays and scalars must also be finite, except in
    ``hidden`` outputs (private buffers that may hold uninitialised memory).
    """
    hidden = set(hidden)
    for j, (var, val) in enumerate(zip(node.outputs, outputs, strict=True)):
        try:
            valid = bool(var.type.is_valid_value(val))
        except Exception:
            valid = False
        if not valid:
            try:
                hint = var.type.value_validity_msg(val)
            except Exception as exc:
                hint = f"(value_validity_msg failed: {exc})"
            if val is None:
                hint = "the implementation did not set this output (it is None); " + hint
            raise InvalidValueError(var, val, node, hint, impl, input_values, context)
        if check_isfinite and j not in hidden and not _all_finite(val):
            raise InvalidValueError(
                var, val, node, "non-finite values (NaN or inf)", impl, input_values, context
            )


# ---------------------------------------------------------------------- pre-allocation


def resolve_prealloc_modes(modes: str | Iterable[str] | None) -> tuple[str, ...]:
    """Turn the ``check_preallocated_output`` argument into a tuple of mode names.

    ``None`` gives :data:`DEFAULT_PREALLOC_MODES`; a string may list modes separated by
    ``:`` or ``,``; ``"ALL"`` selects :data:`ALL_PREALLOC_MODES`; an empty string or list
    turns the check off.

    Raises
    ------
    ValueError
        For an unknown mode name.
    """
    if modes is None:
        return DEFAULT_PREALLOC_MODES
    if isinstance(modes, str):
        modes = [m.strip() for m in modes.replace(",", ":").split(":") if m.strip()]
    result: list[str] = []
    for mode in modes:
        if mode == "ALL":
            result.extend(ALL_PREALLOC_MODES)
        elif mode in ALL_PREALLOC_MODES:
            result.append(mode)
        else:
            raise ValueError(
                f"unknown pre-allocation mode {mode!r}; expected some of "
                f"{', '.join(ALL_PREALLOC_MODES)} or 'ALL'"
            )
    return tuple(dict.fromkeys(result))


def _garbage(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An array of ``shape`` and ``dtype`` filled with values no Op should rely on."""
    arr = np.empty(shape, dtype=dtype)
    kind = arr.dtype.kind
    if kind in "fc":
        arr.fill(np.nan)
    elif kind in "iu":
        arr.fill(np.iinfo(arr.dtype).max)
    elif kind == "b":
        arr.fill(True)
    return arr


def _strided(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A non-contiguous view (every other element of a larger buffer) of ``shape``."""
    big = _garbage(tuple(2 * s for s in shape), dtype)
    return big[(slice(None, None, 2),) * len(shape)]


def preallocated_storage(
    mode: str, reference: Sequence[Any], previous: Sequence[Any] | None
) -> list[list[Any]]:
    """Return the output-storage fillings to try for pre-allocation ``mode``.

    Each filling has one entry per output (``None`` leaves that output's storage empty).

    Parameters
    ----------
    mode
        ``"previous"``: the values of the previous call (or, on the first call, copies of
        this call's reference values), for every output. ``"wrong_size"``: arrays of the
        output's dtype and rank, one larger and one smaller along every dimension.
        ``"strided"``: non-contiguous arrays of the right shape. ``"c_contiguous"``:
        C-ordered arrays of the right shape. ``"f_contiguous"``: Fortran-ordered arrays
        (outputs of rank 2 and more). The arrays are filled with
        NaN (or the largest integer), so an Op reading them gives itself away.
    reference
        The output values computed with empty storage.
    previous
        The reference values of the previous call, if any.
    """
    n = len(reference)
    if mode == "previous":
        source = previous if previous is not None and len(previous) == n else reference
        filling = [None if v is None else copy_value(v) for v in source]
        return [filling] if any(v is not None for v in filling) else []
    arrays = [v if isinstance(v, np.ndarray) else None for v in reference]
    fillings: list[list[Any]] = []
    if mode == "wrong_size":
        bigger = [
            _garbage(tuple(s + 1 for s in a.shape), a.dtype) if a is not None and a.ndim else None
            for a in arrays
        ]
        smaller = [
            _garbage(tuple(max(s - 1, 0) for s in a.shape), a.dtype)
            if a is not None and a.ndim and any(a.shape)
            else None
            for a in arrays
        ]
        fillings = [bigger, smaller]
    elif mode == "strided":
        fillings = [
            [_strided(a.shape, a.dtype) if a is not None and a.ndim else None for a in arrays]
        ]
    elif mode == "c_contiguous":
        fillings = [[_garbage(a.shape, a.dtype) if a is not None else None for a in arrays]]
    elif mode == "f_contiguous":
        fillings = [
            [
                np.asfortranarray(_garbage(a.shape, a.dtype))
                if a is not None and a.ndim >= 2
                else None
                for a in arrays
            ]
        ]
    else:
        raise ValueError(f"unknown pre-allocation mode {mode!r}")
    return [f for f in fillings if any(v is not None for v in f)]
