"""Lowerings of indexing: ``Subtensor``, ``IncSubtensor`` (``inc_subtensor`` and
``set_subtensor``), ``AdvancedSubtensor1``, ``AdvancedIncSubtensor1``, ``AdvancedSubtensor``
and ``AdvancedIncSubtensor``, through JAX's indexing and ``x.at[...]`` updates (a basic
index of slices of step 1 or -1 and integers updates its region with
``lax.dynamic_update_slice``). As on the other backends, an update value broadcasts only
along the dimensions its Type lets broadcast (``ValueError`` otherwise).

Slice bounds must be static (constants, or computed from shapes). Integer indices and index
arrays are checked: an ``IndexError`` out of bounds, as NumPy raises; while tracing for
those known then, after the call for those that depend on the input values (XLA would
clamp them into bounds: :func:`~opweave_jax.context.defer_check`). Boolean
masks must be static, except alone in the index of an update by a 0-d value (then
``jnp.where``). When setting with repeated advanced indices, which of the values
lands is XLA's choice (NumPy: the last); incrementing accumulates them all, as
``numpy.add.at`` does (unless ``ignore_duplicates``, which JAX does not distinguish).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from opweave.graph.basic import Apply
from opweave.tensor.index_list import indices_from_subtensor
from opweave.tensor.runtime_broadcast import check_runtime_broadcast
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
)
from opweave_jax.context import defer_check
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import is_static, static_int

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _bound(value: Any, op: Any) -> int | None:
    return None if value is None else static_int(value, f"a slice bound of {op}")


def _check_bounds(op: Any, index: Any, axis: int, size: int) -> None:
    """Raise NumPy's ``IndexError`` when an integer ``index`` (a scalar or an array) falls
    outside an axis of length ``size``: now when it is known, after the call otherwise."""
    if is_static(index):
        values = np.asarray(index)
        if values.dtype == np.bool_ or values.size == 0:
            return
        low, high = int(values.min()), int(values.max())
        if low < -size or high >= size:
            bad = low if low < -size else high
            raise IndexError(f"{op}: index {bad} is out of bounds for axis {axis} with size {size}")
        return
    if jnp.asarray(index).dtype == np.bool_:
        return
    defer_check(
        jnp.all((index >= -size) & (index < size)),
        IndexError,
        f"{op}: an index is out of bounds for axis {axis} with size {size}",
        warn=False,
    )


def _basic_index(op: Any, shape: tuple[int, ...], values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The index of a basic (``Subtensor``-like) node from its index values."""
    found: list[Any] = []
    for axis, entry in enumerate(indices_from_subtensor(values, op.idx_list)):
        if isinstance(entry, slice):
            found.append(
                slice(_bound(entry.start, op), _bound(entry.stop, op), _bound(entry.step, op))
            )
            if found[-1].step == 0:
                raise ValueError(f"{op}: slice step cannot be zero")
        elif is_static(entry):
            i = int(np.asarray(entry))
            _check_bounds(op, i, axis, shape[axis])
            found.append(i)
        else:
            _check_bounds(op, entry, axis, shape[axis])
            found.append(entry)
    return tuple(found)


def _advanced_index(op: Any, shape: tuple[int, ...], values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The index of an advanced node from its index values (slices made static, integer
    indices checked against the lengths of ``shape``)."""
    found: list[Any] = []
    axis = 0
    for entry in indices_from_subtensor(values, op.idx_list):
        if isinstance(entry, slice):
            found.append(
                slice(_bound(entry.start, op), _bound(entry.stop, op), _bound(entry.step, op))
            )
            axis += 1
        elif entry is None:
            found.append(None)
        else:
            entry = entry if not is_static(entry) else np.asarray(entry)
            if jnp.asarray(entry).dtype == np.bool_:
                axis += max(1, jnp.ndim(entry))
            else:
                if axis < len(shape):
                    _check_bounds(op, entry, axis, shape[axis])
                axis += 1
            found.append(entry)
    return tuple(found)


def subtensor(op: Subtensor, node: Apply) -> Fn:
    """``x[index]``."""

    def run(x: Any, *values: Any) -> Any:
        x = jnp.asarray(x)
        return x[_basic_index(op, x.shape, values)]

    return run


def _check_value(op: Any, node: Apply, x: Any, index: Any, y: Any) -> tuple[int, ...]:
    """The shape of ``x[index]``, after checking that ``y`` broadcasts to it the way its Type
    allows, as on the other backends
    (:func:`~opweave.tensor.runtime_broadcast.check_runtime_broadcast`)."""
    target = tuple(jnp.shape(jnp.asarray(x)[index]))
    static = node.inputs[1].type.shape  # type: ignore[attr-defined]
    check_runtime_broadcast(str(op), static, tuple(jnp.shape(y)), target)
    return target


def _update(x: Any, index: Any, y: Any, dtype: np.dtype[Any], set_: bool) -> Any:
    target = jnp.asarray(x).astype(dtype).at[index]
    y = jnp.asarray(y).astype(dtype)
    return target.set(y) if set_ else target.add(y)


def _region(index: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
    """For a basic index of slices of step 1 or -1 and integers: the start of the region it
    selects on each axis, the region's lengths, the axes read backwards (step -1) and the
    integer-indexed axes; ``None`` for other steps."""
    starts: list[Any] = []
    sizes: list[int] = []
    flipped: list[int] = []
    dropped: list[int] = []
    for axis, n in enumerate(shape):
        entry = index[axis] if axis < len(index) else slice(None)
        if isinstance(entry, slice):
            start, stop, step = entry.indices(n)
            if step == 1:
                size = max(0, stop - start)
            elif step == -1:
                size = max(0, start - stop)
                start = stop + 1 if size else 0
                flipped.append(axis)
            else:
                return None
            starts.append(start)
            sizes.append(size)
        else:
            starts.append(entry + n if is_static(entry) and entry < 0 else entry)
            if not is_static(entry):
                starts[-1] = jnp.where(entry < 0, entry + n, entry)
            sizes.append(1)
            dropped.append(axis)
    return starts, sizes, flipped, dropped


def _update_region(
    x: Any, index: tuple[Any, ...], y: Any, target: tuple[int, ...], set_: bool
) -> Any | None:
    """``x`` with the region of a basic index set to (or incremented by) ``y``, through
    ``lax.dynamic_update_slice``; ``None`` when the index has a step other than 1 or -1.

    XLA's CPU compiler aborts on a scatter that covers a whole array followed by a reversal
    (``zeros(4).at[:].add(u)[::-1]``), which the gradients of scans make; a dynamic update
    does not scatter.
    """
    found = _region(index, jnp.shape(x))
    if found is None:
        return None
    starts, sizes, flipped, dropped = found
    kept = [axis for axis in range(len(sizes)) if axis not in dropped]
    value = jnp.broadcast_to(y, target)
    if flipped:
        value = jnp.flip(value, axis=tuple(kept.index(axis) for axis in flipped))
    value = jnp.reshape(value, tuple(sizes))
    int_type = jnp.asarray(0).dtype
    starts = [jnp.asarray(start).astype(int_type) for start in starts]
    if not set_:
        value = lax.dynamic_slice(x, starts, sizes) + value
    return lax.dynamic_update_slice(x, value, starts)


def inc_subtensor(op: IncSubtensor, node: Apply) -> Fn:
    """``x[index]`` set to (or incremented by) ``y``: a dynamic update of the region the
    index selects (slices of step 1 or -1, integers), else ``x.at[index].add(y)``
    (``.set(y)`` for ``set_subtensor``)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any, *values: Any) -> Any:
        x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype)
        index = _basic_index(op, jnp.shape(x), values)
        target = _check_value(op, node, x, index, y)
        found = _update_region(x, index, y, target, op.set_instead_of_inc)
        if found is not None:
            return found
        return _update(x, index, y, dtype, op.set_instead_of_inc)

    return run


def advanced_subtensor1(op: AdvancedSubtensor1, node: Apply) -> Fn:
    """``x[ilist]``."""

    def run(x: Any, ilist: Any) -> Any:
        x = jnp.asarray(x)
        _check_bounds(op, ilist, 0, x.shape[0])
        return x[ilist]

    return run


def advanced_inc_subtensor1(op: AdvancedIncSubtensor1, node: Apply) -> Fn:
    """``x.at[ilist].add(y)`` (``.set(y)`` when setting)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any, ilist: Any) -> Any:
        _check_bounds(op, ilist, 0, jnp.shape(x)[0])
        _check_value(op, node, x, ilist, y)
        return _update(x, ilist, y, dtype, op.set_instead_of_inc)

    return run


def advanced_subtensor(op: AdvancedSubtensor, node: Apply) -> Fn:
    """``x[index]`` with integer arrays, static masks, ints and static slices."""

    def run(x: Any, *values: Any) -> Any:
        x = jnp.asarray(x)
        return x[_advanced_index(op, x.shape, values)]

    return run


def _masked_update(x: Any, mask: Any, y: Any, set_: bool) -> Any:
    """``x`` with the entries a boolean ``mask`` over its leading axes selects set to (or
    incremented by) a 0-d ``y``: ``jnp.where``, whose shape does not depend on the mask's
    values.

    Raises
    ------
    IndexError
        When the mask's shape is not that of ``x``'s leading axes (as NumPy).
    """
    k = mask.ndim
    if tuple(mask.shape) != tuple(x.shape[:k]):
        raise IndexError(
            f"boolean index of shape {tuple(mask.shape)} does not match the indexed "
            f"dimensions {tuple(x.shape[:k])} of the array"
        )
    mask = jnp.reshape(mask, tuple(mask.shape) + (1,) * (x.ndim - k))
    return jnp.where(mask, y if set_ else x + y, x)


def advanced_inc_subtensor(op: AdvancedIncSubtensor, node: Apply) -> Fn:
    """``x.at[index].add(y)`` (``.set(y)`` when setting); a boolean mask known only when the
    function is called, alone in the index, with a 0-d ``y`` goes through ``jnp.where``
    (as PyTensor's JAX backend rewrites it)."""
    dtype = out_dtype(node)
    scalar_value = node.inputs[1].type.ndim == 0  # type: ignore[attr-defined]

    def run(x: Any, y: Any, *values: Any) -> Any:
        index = _advanced_index(op, jnp.shape(x), values)
        x, y = jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype)
        mask = index[0] if len(index) == 1 else None
        if (
            scalar_value
            and mask is not None
            and not isinstance(mask, slice)
            and not is_static(mask)
            and jnp.asarray(mask).dtype == np.bool_
        ):
            return _masked_update(x, jnp.asarray(mask), y, op.set_instead_of_inc)
        _check_value(op, node, x, index, y)
        return _update(x, index, y, dtype, op.set_instead_of_inc)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Subtensor: subtensor,
    IncSubtensor: inc_subtensor,
    AdvancedSubtensor1: advanced_subtensor1,
    AdvancedIncSubtensor1: advanced_inc_subtensor1,
    AdvancedSubtensor: advanced_subtensor,
    AdvancedIncSubtensor: advanced_inc_subtensor,
}
