"""Lowerings of indexing: ``Subtensor``, ``IncSubtensor`` (``inc_subtensor`` and
``set_subtensor``), ``AdvancedSubtensor1``, ``AdvancedIncSubtensor1``, ``AdvancedSubtensor``
and ``AdvancedIncSubtensor``, through JAX's indexing and ``x.at[...]`` updates.

Slice bounds must be static (constants, or computed from shapes). Static integer indices
are checked (an ``IndexError`` out of bounds, as NumPy); integer indices and index arrays
that depend on the input values are not: XLA clamps them into bounds instead. Boolean
masks must be static. When setting with repeated advanced indices, which of the values
lands is XLA's choice (NumPy: the last); incrementing accumulates them all, as
``numpy.add.at`` does (unless ``ignore_duplicates``, which JAX does not distinguish).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.index_list import indices_from_subtensor
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
)
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import is_static, static_int

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _bound(value: Any, op: Any) -> int | None:
    return None if value is None else static_int(value, f"a slice bound of {op}")


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
            if not -shape[axis] <= i < shape[axis]:
                raise IndexError(
                    f"{op}: index {i} is out of bounds for axis {axis} with size {shape[axis]}"
                )
            found.append(i)
        else:
            found.append(entry)
    return tuple(found)


def _advanced_index(op: Any, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """The index of an advanced node from its index values (slices made static)."""
    found: list[Any] = []
    for entry in indices_from_subtensor(values, op.idx_list):
        if isinstance(entry, slice):
            found.append(
                slice(_bound(entry.start, op), _bound(entry.stop, op), _bound(entry.step, op))
            )
        elif entry is None:
            found.append(None)
        else:
            found.append(entry if not is_static(entry) else np.asarray(entry))
    return tuple(found)


def subtensor(op: Subtensor, node: Apply) -> Fn:
    """``x[index]``."""

    def run(x: Any, *values: Any) -> Any:
        x = jnp.asarray(x)
        return x[_basic_index(op, x.shape, values)]

    return run


def _update(x: Any, index: Any, y: Any, dtype: np.dtype[Any], set_: bool) -> Any:
    target = jnp.asarray(x).astype(dtype).at[index]
    y = jnp.asarray(y).astype(dtype)
    return target.set(y) if set_ else target.add(y)


def inc_subtensor(op: IncSubtensor, node: Apply) -> Fn:
    """``x.at[index].add(y)`` (``.set(y)`` for ``set_subtensor``)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any, *values: Any) -> Any:
        index = _basic_index(op, jnp.shape(x), values)
        return _update(x, index, y, dtype, op.set_instead_of_inc)

    return run


def advanced_subtensor1(op: AdvancedSubtensor1, node: Apply) -> Fn:
    """``x[ilist]``."""

    def run(x: Any, ilist: Any) -> Any:
        return jnp.asarray(x)[ilist]

    return run


def advanced_inc_subtensor1(op: AdvancedIncSubtensor1, node: Apply) -> Fn:
    """``x.at[ilist].add(y)`` (``.set(y)`` when setting)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any, ilist: Any) -> Any:
        return _update(x, ilist, y, dtype, op.set_instead_of_inc)

    return run


def advanced_subtensor(op: AdvancedSubtensor, node: Apply) -> Fn:
    """``x[index]`` with integer arrays, static masks, ints and static slices."""

    def run(x: Any, *values: Any) -> Any:
        return jnp.asarray(x)[_advanced_index(op, values)]

    return run


def advanced_inc_subtensor(op: AdvancedIncSubtensor, node: Apply) -> Fn:
    """``x.at[index].add(y)`` (``.set(y)`` when setting)."""
    dtype = out_dtype(node)

    def run(x: Any, y: Any, *values: Any) -> Any:
        return _update(x, _advanced_index(op, values), y, dtype, op.set_instead_of_inc)

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
