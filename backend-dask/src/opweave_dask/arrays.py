"""Products, axis changes, reshapes, joins, indexing and copies through Dask's own array
operations (``dot``, ``transpose``, ``reshape``, ``concatenate``, indexing).

Index and shape inputs are small values Dask needs to build its graph: when one was
computed from the data (a Dask value), it is computed first (:func:`~opweave_dask.values
.concrete`), a synchronisation point; constants and shapes of Dask arrays cost nothing.
A runner returns ``None`` when it cannot handle the values it got (an unknown length):
the node then runs on one worker.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import dask.array as da
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.basic import join_axis
from opweave.tensor.blas import MatMul
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.index_list import indices_from_subtensor
from opweave.tensor.type import TensorType
from opweave_dask.kernel import NodeKernel, detached_inputs, variable_positions
from opweave_dask.portable import Portable
from opweave_dask.values import as_dask, concrete

__all__ = [
    "build_advanced_subtensor1",
    "build_deep_copy",
    "build_dimshuffle",
    "build_dot",
    "build_join",
    "build_reshape",
    "build_shape",
    "build_shape_i",
    "build_specify_shape",
    "build_subtensor",
    "build_view",
]

Runner = Callable[[list[Any]], "list[Any] | None"]


def _out_dtype(node: Apply, k: int = 0) -> np.dtype[Any]:
    return np.dtype(cast(TensorType, node.outputs[k].type).dtype)


def _cast(x: da.Array, dtype: np.dtype[Any]) -> da.Array:
    return x if x.dtype == dtype else x.astype(dtype)


def _known(shape: tuple[float, ...]) -> bool:
    return not any(math.isnan(n) for n in shape)


def build_dot(node: Apply, linker: str) -> Runner:
    """``Dot`` as ``dask.array.dot``, ``MatMul`` as ``dask.array.matmul``."""
    fn = da.matmul if isinstance(node.op, MatMul) else da.dot
    dtype = _out_dtype(node)

    def run(values: list[Any]) -> list[Any]:
        x, y = (_cast(as_dask(v), dtype) for v in values)
        return [_cast(fn(x, y), dtype)]

    return run


def build_dimshuffle(node: Apply, linker: str) -> Runner:
    """Squeeze the dropped axes, transpose the kept ones, add the ``"x"`` axes."""
    op = node.op
    assert isinstance(op, DimShuffle)
    kept = [a for a in range(op.input_ndim) if a not in op.drop]
    perm = [kept.index(a) for a in op.shuffle]
    index = tuple(None if a == "x" else slice(None) for a in op.new_order)

    def run(values: list[Any]) -> list[Any]:
        x = as_dask(values[0])
        if op.drop:
            if any(x.shape[a] != 1 for a in op.drop):
                raise ValueError(
                    f"{op}: cannot drop axes {op.drop} of an array of shape {x.shape}: "
                    "their lengths must be 1"
                )
            x = da.squeeze(x, axis=op.drop)
        if perm != list(range(len(perm))):
            x = x.transpose(perm)
        if op.augment:
            x = x[index]
        return [x]

    return run


def build_reshape(node: Apply, linker: str) -> Runner:
    """``x.reshape(shape)``, the shape computed first when it came from the data."""

    def run(values: list[Any]) -> list[Any] | None:
        x = as_dask(values[0])
        if not _known(x.shape):
            return None
        shape = tuple(int(n) for n in np.asarray(concrete(values[1])).reshape(-1))
        if 0 in x.shape:  # nothing to move: NumPy's reshape (and its errors) on a stand-in
            empty = np.empty(tuple(int(n) for n in x.shape), dtype=x.dtype).reshape(shape)
            return [da.from_array(empty, chunks=empty.shape, name=False)]
        try:
            return [x.reshape(shape)]
        except NotImplementedError:  # not a plain merge or split of axes: through 1-d
            return [x.reshape((-1,)).reshape(shape)]

    return run


def build_join(node: Apply, linker: str) -> Runner:
    """``dask.array.concatenate`` along the axis (the first input), in the output dtype.

    A symbolic axis is computed first; an axis out of range runs the node on one worker
    (the Python backend's error), and so do inputs of unknown length along another axis
    (which Dask refuses to join).
    """
    static_axis = join_axis(node)
    ndim = node.outputs[0].type.ndim  # type: ignore[attr-defined]
    dtype = _out_dtype(node)

    def run(values: list[Any]) -> list[Any] | None:
        axis = static_axis if static_axis is not None else _int_or_none(values[0])
        if axis is None or not -ndim <= axis < ndim:
            return None
        parts = [_cast(as_dask(v), dtype) for v in values[1:]]
        if any(math.isnan(n) for x in parts for a, n in enumerate(x.shape) if a != axis % ndim):
            return None
        return [da.concatenate(parts, axis=axis)]

    return run


def _int_or_none(value: Any) -> Any:
    value = concrete(value)
    return None if value is None else int(value)


def build_subtensor(node: Apply, linker: str) -> Runner:
    """Basic indexing (integers and slices) of the Dask array; indexing an axis of unknown
    length (which Dask refuses) runs the node on one worker."""
    op = node.op

    def run(values: list[Any]) -> list[Any] | None:
        x = as_dask(values[0])
        index = indices_from_subtensor([_int_or_none(v) for v in values[1:]], op.idx_list)  # type: ignore[attr-defined]
        if any(math.isnan(n) and i != slice(None) for n, i in zip(x.shape, index, strict=False)):
            return None
        try:
            return [x[tuple(index)]]
        except IndexError as exc:
            raise IndexError(f"{op}: {exc} (input shape {x.shape})") from None

    return run


def _check_bounds(ilist: np.ndarray, n: int, what: str) -> np.ndarray:
    """``ilist`` after checking every index is in ``[-n, n)``."""
    if ilist.size and (ilist.max() >= n or ilist.min() < -n):
        bad = ilist[(ilist >= n) | (ilist < -n)][0]
        raise IndexError(f"{what}: index {int(bad)} is out of bounds for axis 0 with size {n}")
    return ilist


def build_advanced_subtensor1(node: Apply, linker: str) -> Runner:
    """``x[ilist]`` along axis 0, the indices checked (lazily when they are lazy)."""
    what = str(node.op)

    def run(values: list[Any]) -> list[Any] | None:
        x = as_dask(values[0])
        n = x.shape[0]
        if math.isnan(n):
            return None
        ilist = values[1]
        if isinstance(ilist, da.Array):
            check = Portable(_check_bounds, n=int(n), what=what)
            checked = da.map_blocks(check, ilist, dtype=ilist.dtype)
            return [x[checked]]
        ilist = _check_bounds(np.asarray(ilist), int(n), what)
        return [x[ilist]]

    return run


def build_deep_copy(node: Apply, linker: str) -> Runner | None:
    """A copy of each chunk, so that a computed output never shares memory with an input."""
    if not isinstance(node.outputs[0].type, TensorType):
        return None

    def run(values: list[Any]) -> list[Any]:
        x = as_dask(values[0])
        return [da.map_blocks(np.copy, x, dtype=x.dtype)]

    return run


def build_view(node: Apply, linker: str) -> Runner:
    """The value itself (Dask arrays are never written to)."""

    def run(values: list[Any]) -> list[Any]:
        return [values[0]]

    return run


def build_shape(node: Apply, linker: str) -> Runner:
    """The Dask array's shape, when its lengths are known."""

    def run(values: list[Any]) -> list[Any] | None:
        shape = as_dask(values[0]).shape
        return [np.asarray(shape, dtype="int64")] if _known(shape) else None

    return run


def build_shape_i(node: Apply, linker: str) -> Runner:
    """One length of the Dask array's shape, when it is known."""
    i = node.op.i  # type: ignore[attr-defined]

    def run(values: list[Any]) -> list[Any] | None:
        shape = as_dask(values[0]).shape
        if len(shape) <= i:
            raise ValueError(f"Shape_i({i}) of a value with only {len(shape)} dimensions")
        return [np.asarray(shape[i], dtype="int64")] if _known(shape[i : i + 1]) else None

    return run


def build_specify_shape(node: Apply, linker: str) -> Runner:
    """The value itself, after the node's own check ran on a stand-in of its shape."""
    check = NodeKernel(node.op, detached_inputs(node), "vm", [o.type for o in node.outputs])
    others = [i for i in variable_positions(node) if i > 0]

    def run(values: list[Any]) -> list[Any] | None:
        x = as_dask(values[0])
        if not _known(x.shape):
            return None
        stand_in = np.broadcast_to(np.zeros((), dtype=x.dtype), x.shape)
        args = [stand_in] + [concrete(values[i]) for i in others]
        check(*args)
        return [x]

    return run
