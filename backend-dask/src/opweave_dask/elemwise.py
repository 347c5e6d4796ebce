"""Elementwise nodes as one :func:`dask.array.blockwise` call each.

The per-chunk body is opweave's own compiled function of the node (a
:class:`~opweave_dask.kernel.NodeKernel`), built for chunks: its inputs keep only the
broadcastable (length 1) axes of the node's static shapes, so a chunk of any length fits.
In-place nodes run not in place (the chunks belong to Dask). Dask aligns the inputs'
chunks and broadcasts axes of length 1 across the other inputs' chunks.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import dask.array as da

from opweave.graph.basic import Apply, Constant
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType
from opweave_dask.kernel import NodeKernel
from opweave_dask.values import as_dask, meta_for

__all__ = ["build_elemwise", "chunk_type", "elemwise_on_chunks"]

Runner = Callable[[list[Any]], "list[Any] | None"]


def chunk_type(type_: TensorType) -> TensorType:
    """``type_`` without its static lengths other than 1: the Type of any of its chunks."""
    return TensorType(type_.dtype, shape=tuple(1 if s == 1 else None for s in type_.shape))


def elemwise_on_chunks(node: Apply, linker: str) -> tuple[NodeKernel, list[int]]:
    """The chunk kernel of an Elemwise ``node`` and the positions of its chunked inputs.

    Constants whose every axis has length 1 (scalars) stay inside the kernel; every other
    input is chunked.
    """
    op = node.op
    assert isinstance(op, Elemwise)
    if op.inplace_pattern:
        op = Elemwise(op.scalar_op, name=op.name)
    specs: list[Any] = []
    chunked: list[int] = []
    for i, var in enumerate(node.inputs):
        if isinstance(var, Constant) and all(s == 1 for s in var.type.shape):
            specs.append(var)
        else:
            specs.append(chunk_type(var.type))
            chunked.append(i)
    return NodeKernel(op, specs, linker), chunked


def _same_chunks(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return len(a) == len(b) and all(
        (math.isnan(x) and math.isnan(y)) or x == y for x, y in zip(a, b, strict=True)
    )


def _aligned(arrays: list[da.Array]) -> bool:
    """Whether Dask can line the arrays' chunks up: on each axis, lengths unknown only
    where every array not of length 1 there has the same chunks."""
    for axis in range(max((a.ndim for a in arrays), default=0)):
        chunks = [a.chunks[axis] for a in arrays if a.ndim > axis and a.shape[axis] != 1]
        unknown = any(math.isnan(n) for c in chunks for n in c)
        if unknown and any(not _same_chunks(c, chunks[0]) for c in chunks):
            return False
    return True


def build_elemwise(node: Apply, linker: str) -> Runner:
    """A runner computing ``node`` (an Elemwise) as one blockwise layer per node (plus one
    ``getitem`` layer per output for a node of several outputs); inputs whose chunks Dask
    cannot line up (lengths unknown on one of them) run the node on one worker."""
    kernel, chunked = elemwise_on_chunks(node, linker)
    ndim = node.outputs[0].type.ndim
    dtypes = [out.type.dtype for out in node.outputs]
    index = tuple(range(ndim))

    def run(values: list[Any]) -> list[Any] | None:
        arrays = [as_dask(values[i]) for i in chunked]
        if not _aligned(arrays):
            return None  # Dask cannot line the chunks up: the node runs on one worker
        pairs: list[Any] = []
        for array in arrays:
            pairs += [array, index]
        if len(dtypes) == 1:
            out = da.blockwise(
                kernel,
                index,
                *pairs,
                dtype=dtypes[0],
                meta=meta_for(ndim, dtypes[0]),
                token="opweave-elemwise",
            )
            return [out]
        packed = da.blockwise(
            kernel,
            index,
            *pairs,
            dtype=object,
            meta=meta_for(ndim, object),
            token="opweave-elemwise",
        )
        return [
            packed.map_blocks(operator.getitem, k, dtype=dt, meta=meta_for(ndim, dt))
            for k, dt in enumerate(dtypes)
        ]

    return run
