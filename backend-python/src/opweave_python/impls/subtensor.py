"""NumPy implementations of :mod:`opweave.tensor.subtensor`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor1,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
    get_idx_list,
)
from opweave_python.impls.basic import check_broadcast


def _index(op: Any, values: Sequence[Any]) -> tuple[Any, ...]:
    # The trailing Ellipsis makes an all-integer index return a 0-d view, not a scalar.
    return (*get_idx_list(values, op.idx_list), Ellipsis)


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
    check_broadcast(str(op), node.inputs[1].type.shape, np.shape(y), view.shape)  # type: ignore[attr-defined]
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
    check_broadcast(str(op), node.inputs[1].type.shape, np.shape(y), target)  # type: ignore[attr-defined]
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


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Subtensor: subtensor_perform,
        IncSubtensor: inc_subtensor_perform,
        AdvancedSubtensor1: advanced_subtensor1_perform,
        AdvancedIncSubtensor1: advanced_inc_subtensor1_perform,
    }
)
