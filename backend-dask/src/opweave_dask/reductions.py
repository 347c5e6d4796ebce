"""Reductions through :func:`dask.array.reduction`, and index reductions.

A :class:`~opweave.tensor.elemwise.CAReduce` whose scalar Op has a NumPy ufunc (``add``,
``mul``, ``maximum``, ``minimum``, ``and``, ``or``, ``xor``) reduces each chunk with that
ufunc in the node's accumulation dtype, combines the partial results the same way and
casts the final one to the output dtype, over any set of axes. ``MapReduce`` is its
elementwise map (blockwise) then its reduction. ``Argmax``/``Argmin`` use Dask's own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.elemwise import CAReduce
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import Argmin
from opweave_dask.elemwise import build_elemwise
from opweave_dask.portable import Portable
from opweave_dask.values import as_dask, meta_for

__all__ = ["build_argmax", "build_careduce", "build_map_reduce", "ufunc_for"]

Runner = Callable[[list[Any]], "list[Any] | None"]


def ufunc_for(scalar_op: Any, acc_dtype: np.dtype[Any]) -> np.ufunc | None:
    """The ufunc reducing like ``scalar_op`` in ``acc_dtype`` (the logical one for
    booleans), or ``None``: the ufunc a NumPy CAReduce of the same node reduces with."""
    describe = getattr(scalar_op, "reduce_ufunc_name", None)
    name = describe(acc_dtype.kind) if describe is not None else None
    ufunc = getattr(np, name, None) if name is not None else None
    return ufunc if isinstance(ufunc, np.ufunc) else None


def _partial(
    x: np.ndarray,
    axis: tuple[int, ...],
    keepdims: bool,
    ufunc: np.ufunc,
    acc_dtype: np.dtype[Any],
    **_: Any,
) -> np.ndarray:
    """A chunk's (or a group of partial results') reduction, in ``acc_dtype``."""
    if x.dtype != acc_dtype:
        x = x.astype(acc_dtype)
    with np.errstate(all="ignore"):
        return ufunc.reduce(x, axis=axis, keepdims=keepdims)  # type: ignore[no-any-return]


def _final(
    x: np.ndarray,
    axis: tuple[int, ...],
    keepdims: bool,
    ufunc: np.ufunc,
    acc_dtype: np.dtype[Any],
    out_dtype: np.dtype[Any],
    **_: Any,
) -> np.ndarray:
    """The last reduction, cast to the output dtype."""
    result = _partial(x, axis, keepdims, ufunc, acc_dtype)
    return np.asarray(result, dtype=out_dtype)


def build_careduce(node: Apply, linker: str) -> Runner | None:
    """A runner reducing with ``dask.array.reduction``; ``None`` (run on one worker) for a
    scalar Op without a NumPy ufunc."""
    op = node.op
    assert isinstance(op, CAReduce)
    out_dtype = np.dtype(node.outputs[0].type.dtype)
    acc_dtype = np.dtype(op.acc_dtype or out_dtype)
    ufunc = ufunc_for(op.scalar_op, acc_dtype)
    if ufunc is None:
        return None
    ndim = node.inputs[0].type.ndim
    axes = op.reduced_axes(ndim)
    out_ndim = ndim - len(axes)
    partial = Portable(_partial, ufunc=ufunc, acc_dtype=acc_dtype)
    final = Portable(_final, ufunc=ufunc, acc_dtype=acc_dtype, out_dtype=out_dtype)

    def run(values: list[Any]) -> list[Any]:
        x = as_dask(values[0])
        if not axes:
            return [x.astype(out_dtype)]
        out = da.reduction(
            x,
            partial,
            final,
            axis=axes,
            keepdims=False,
            dtype=out_dtype,
            combine=partial,
            concatenate=True,
            meta=meta_for(out_ndim, out_dtype),
            name=f"opweave-{type(op).__name__.lower()}",
        )
        return [out]

    return run


def build_map_reduce(node: Apply, linker: str) -> Runner | None:
    """``careduce(elemwise(x))``: the map as a blockwise layer, then the reduction."""
    op = node.op
    assert isinstance(op, MapReduce)
    mapped, reduced = op.unfused(node.inputs[0])
    reduce = build_careduce(reduced, linker)
    if reduce is None:
        return None
    mapping = build_elemwise(mapped, linker)

    def run(values: list[Any]) -> list[Any]:
        return reduce(mapping(values))

    return run


def build_argmax(node: Apply, linker: str) -> Runner:
    """``Argmax``/``Argmin`` with Dask's own; several axes are moved last and flattened
    together (as NumPy's implementation does)."""
    op = node.op
    fn = da.argmin if isinstance(op, Argmin) else da.argmax
    ndim = node.inputs[0].type.ndim
    axes = tuple(range(ndim)) if op.axis is None else tuple(a % ndim for a in op.axis)

    def run(values: list[Any]) -> list[Any] | None:
        x = as_dask(values[0])
        if any(math.isnan(x.shape[a]) for a in axes):
            return None  # Dask's arg-reductions need the lengths: one worker runs it
        if any(x.shape[a] == 0 for a in axes):  # NumPy's refusal, before Dask's own
            raise ValueError(f"attempt to get {fn.__name__} of an empty sequence")
        if op.axis is None or len(axes) == ndim:
            result = fn(x.reshape((-1,)) if ndim != 1 else x, axis=0)
        elif len(axes) == 1:
            result = fn(x, axis=axes[0])
        else:
            keep = [i for i in range(ndim) if i not in axes]
            moved = x.transpose(keep + list(axes))
            kept_shape = moved.shape[: len(keep)]
            size = int(np.prod(moved.shape[len(keep) :]))
            result = fn(moved.reshape((*kept_shape, size)), axis=-1)
        return [result.astype(np.int64)]

    return run
