"""NumPy implementations of :mod:`opweave.tensor.subtensor`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.runtime_broadcast import check_runtime_broadcast
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    indices_from_subtensor,
)


def _index(op: Any, values: Sequence[Any]) -> tuple[Any, ...]:
    # The trailing Ellipsis makes an all-integer index return a 0-d view, not a scalar.
    return (*indices_from_subtensor(values, op.idx_list), Ellipsis)


def subtensor_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Basic indexing: a view of ``x``."""
    x, *rest = inputs
    try:
        out[0][0] = x[_index(op, rest)]
    except IndexError as exc:
        raise IndexError(f"{op}: {exc} (input shape {x.shape})") from None


def inc_subtensor_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``x`` (copied unless in place) with ``y`` written into or added to ``x[idx]``."""
    x, y, *rest = inputs
    if not op.inplace:
        x = x.copy()
    try:
        view = x[_index(op, rest)]
    except IndexError as exc:
        raise IndexError(f"{op}: {exc} (input shape {x.shape})") from None
    check_runtime_broadcast(str(op), node.inputs[1].type.shape, np.shape(y), view.shape)  # type: ignore[attr-defined]
    try:
        if op.set_instead_of_inc:
            np.copyto(view, y, casting="unsafe")
        else:
            np.add(view, y, out=view, casting="unsafe")
    except ValueError as exc:
        raise ValueError(
            f"{op}: cannot broadcast a value of shape {np.shape(y)} to the indexed part of "
            f"shape {view.shape}: {exc}"
        ) from None
    out[0][0] = x


def _check_indices(op: Any, ilist: np.ndarray, n: int) -> None:
    if ilist.size and (ilist.max() >= n or ilist.min() < -n):
        bad = ilist[(ilist >= n) | (ilist < -n)][0]
        raise IndexError(f"{op}: index {int(bad)} is out of bounds for axis 0 with size {n}")


def advanced_subtensor1_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``x[ilist]`` along axis 0 (a copy)."""
    x, ilist = inputs
    _check_indices(op, ilist, x.shape[0])
    z = out[0][0]
    shape = (len(ilist), *x.shape[1:])
    if type(z) is np.ndarray and z.shape == shape and z.dtype == x.dtype and z.flags.writeable:
        np.take(x, ilist, axis=0, out=z)
    else:
        out[0][0] = np.take(x, ilist, axis=0)


def advanced_inc_subtensor1_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Rows of ``x`` set (last wins) or incremented (``numpy.add.at``: repeats accumulate)."""
    x, y, ilist = inputs
    _check_indices(op, ilist, x.shape[0])
    if not op.inplace:
        x = x.copy()
    target = (len(ilist), *x.shape[1:])
    check_runtime_broadcast(str(op), node.inputs[1].type.shape, np.shape(y), target)  # type: ignore[attr-defined]
    try:
        y = np.broadcast_to(np.asarray(y, dtype=x.dtype), target)
    except ValueError:
        raise ValueError(
            f"{op}: cannot broadcast a value of shape {np.shape(y)} to the indexed rows' shape "
            f"{target}"
        ) from None
    if op.set_instead_of_inc:
        x[ilist] = y
    else:
        np.add.at(x, ilist, y)
    out[0][0] = x


# ====================================================================== advanced indexing


def _advanced_index(op: Any, x: np.ndarray, values: Sequence[Any]) -> tuple[Any, ...]:
    """The NumPy index of an advanced indexing node, after checking its integer indices.

    Each integer index (constant, scalar or array) is checked against the length of the
    dimension it indexes, in order, so the error names the first bad index as the C
    implementation does; masks and broadcasting are left to NumPy.
    """
    index = indices_from_subtensor(values, op.idx_list)
    dim = 0
    for e in index:
        if isinstance(e, slice):
            dim += 1
            continue
        arr = np.asarray(e)
        if arr.dtype == bool:
            dim += max(arr.ndim, 1)
            continue
        if dim < x.ndim and arr.size:
            n = x.shape[dim]
            bad = arr[(arr >= n) | (arr < -n)] if arr.dtype.kind == "i" else arr[arr >= n]
            if bad.size:
                raise IndexError(
                    f"{op}: index {int(bad.flat[0])} is out of bounds for axis {dim} with size {n}"
                )
        dim += 1
    return index


def _numpy_error(op: Any, x: np.ndarray, exc: Exception) -> IndexError:
    return IndexError(f"{op}: {exc} (input shape {x.shape})")


def advanced_subtensor_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """NumPy's advanced indexing ``x[index]`` (always a copy)."""
    x, *rest = inputs
    index = _advanced_index(op, x, rest)
    try:
        result = x[index]
    except IndexError as exc:
        raise _numpy_error(op, x, exc) from None
    if not any(isinstance(e, np.ndarray) and e.ndim > 0 for e in index):
        result = np.array(result, dtype=x.dtype)  # basic indexing gave a view (or a scalar)
    out[0][0] = result


def _indexed_shape(op: Any, x: np.ndarray, index: tuple[Any, ...]) -> tuple[int, ...]:
    """The shape of ``x[index]``, found on a zero-strided stand-in of ``x`` (one byte per
    element of the result is allocated, none of ``x`` is read)."""
    probe = np.broadcast_to(np.zeros((), dtype=np.uint8), x.shape)
    try:
        return tuple(probe[index].shape)
    except IndexError as exc:
        raise _numpy_error(op, x, exc) from None


def advanced_inc_subtensor_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``x`` (copied unless in place) with ``y`` set into, added once to
    (``ignore_duplicates``: ``x[index] += y``), or accumulated into
    (``numpy.add.at``) ``x[index]``."""
    x, y, *rest = inputs
    index = _advanced_index(op, x, rest)
    target = _indexed_shape(op, x, index)
    check_runtime_broadcast(str(op), node.inputs[1].type.shape, np.shape(y), target)  # type: ignore[attr-defined]
    if not op.inplace:
        x = x.copy()
    y = np.asarray(y).astype(x.dtype, copy=False)
    if op.set_instead_of_inc:
        x[index] = y
    elif op.ignore_duplicates:
        part = np.asarray(x[index])  # a copy, a view, or (all integers) a 0-d copy
        np.add(part, y, out=part, casting="unsafe")
        x[index] = part
    else:
        np.add.at(x, index, y)
    out[0][0] = x


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Subtensor: subtensor_perform,
        IncSubtensor: inc_subtensor_perform,
        AdvancedSubtensor1: advanced_subtensor1_perform,
        AdvancedIncSubtensor1: advanced_inc_subtensor1_perform,
        AdvancedSubtensor: advanced_subtensor_perform,
        AdvancedIncSubtensor: advanced_inc_subtensor_perform,
    }
)
