"""Lowerings of the other array Ops of :mod:`opweave.tensor.extra_ops` and
:mod:`opweave.tensor.basic`: ``SearchsortedOp``, ``Repeat`` (static counts),
``FillDiagonal``, ``FillDiagonalOffset``, ``UnravelIndex``, ``RavelMultiIndex``, ``AllocDiag``,
``DiagGrad``, ``PermuteRowElements``, ``Choose``, and ``Unique`` and ``Nonzero`` of values
computed from constants (evaluated while compiling; their output lengths depend on the
values, so other inputs are refused when compiling).

Indices out of range raise the ``py`` backend's ``ValueError`` (after the call when they
depend on the input values: :func:`~opweave_jax.context.defer_check`) where NumPy raises.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply, Constant
from opweave.graph.utils import NoImplementationError
from opweave.graph.walks import graph_inputs
from opweave.link.implementations import CAPABILITY_ATTRIBUTE, PARTIAL
from opweave.tensor.basic import AllocDiag, Choose, DiagGrad, Nonzero, PermuteRowElements
from opweave.tensor.extra_ops import (
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)
from opweave_jax.lowerings.linalg import require
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import is_static, static_ints

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _data_dependent(op: Any, node: Apply) -> NoImplementationError:
    return NoImplementationError(
        f"jax linker: no lowering implements {op} (node {node}) for backend 'jax' on values "
        "known only when the function is called: its output length depends on the values, "
        "and XLA compiles for fixed shapes (only an input computed from constants is lowered, "
        "evaluated while compiling)"
    )


def _constant_input(op: Any, node: Apply) -> None:
    """Refuse ``node`` (``NoImplementationError``) unless its input is computed from
    constants only."""
    if not all(isinstance(v, Constant) for v in graph_inputs([node.inputs[0]])):
        raise _data_dependent(op, node)


def searchsorted(op: SearchsortedOp, node: Apply) -> Fn:
    """``jnp.searchsorted`` (through ``x[sorter]`` with a sorter), as int64."""

    def run(x: Any, v: Any, sorter: Any = None) -> Any:
        x = jnp.asarray(x)
        if sorter is not None:
            x = x[jnp.asarray(sorter)]
        return jnp.searchsorted(x, v, side=op.side).astype(np.int64)

    return run


def repeat(op: Repeat, node: Apply) -> Fn:
    """``jnp.repeat`` with the counts known when compiling (they fix the output's length)."""

    def run(x: Any, repeats: Any) -> Any:
        counts = static_ints(repeats, f"the counts of {op}")
        if any(c < 0 for c in counts):
            raise ValueError(f"{op}: negative counts {counts}")
        length = jnp.shape(x)[op.axis]
        if len(counts) not in (1, length):
            raise ValueError(f"{op}: {len(counts)} counts for an axis of length {length}")
        total = counts[0] * length if len(counts) == 1 else sum(counts)
        reps = jnp.asarray(counts if len(counts) > 1 else counts[0])
        return jnp.repeat(x, reps, axis=op.axis, total_repeat_length=total)

    return run


def unique(op: Unique, node: Apply) -> Fn:
    """``numpy.unique`` of a value computed from constants, evaluated while compiling;
    refused otherwise."""
    _constant_input(op, node)

    def run(x: Any) -> Any:
        if not is_static(x):
            raise _data_dependent(op, node)
        numpy_unique: Any = np.unique
        results = numpy_unique(
            np.asarray(x),
            return_index=op.return_index,
            return_inverse=op.return_inverse,
            return_counts=op.return_counts,
            axis=op.axis,
        )
        if not isinstance(results, tuple):
            return jnp.asarray(np.asarray(results, out_dtype(node)))
        return tuple(
            jnp.asarray(np.asarray(r, out_dtype(node, k)).reshape(-1) if k else r)
            for k, r in enumerate(results)
        )

    return run


def nonzero(op: Nonzero, node: Apply) -> Fn:
    """``numpy.nonzero`` of a value computed from constants (an int64 matrix), evaluated
    while compiling; refused otherwise."""
    _constant_input(op, node)

    def run(a: Any) -> Any:
        if not is_static(a):
            raise _data_dependent(op, node)
        a = np.asarray(a)
        return jnp.asarray(np.array(np.nonzero(a), np.int64).reshape(a.ndim, -1))

    return run


def fill_diagonal(op: FillDiagonal, node: Apply) -> Fn:
    """``a`` with ``a[i, ..., i] = val`` for ``i < min(a.shape)``."""

    def run(a: Any, val: Any) -> Any:
        a = jnp.asarray(a)
        if a.ndim > 2 and len(set(a.shape)) > 1:
            raise ValueError(f"{op}: all dimensions of a must have equal length, got {a.shape}")
        i = jnp.arange(min(a.shape))
        return a.at[(i,) * a.ndim].set(jnp.asarray(val).astype(a.dtype))

    return run


def fill_diagonal_offset(op: FillDiagonalOffset, node: Apply) -> Fn:
    """The matrix ``a`` with its ``offset`` diagonal set to ``val`` (``offset`` may depend
    on the values: the diagonal is selected by a mask)."""

    def run(a: Any, val: Any, offset: Any) -> Any:
        a = jnp.asarray(a)
        rows = jnp.arange(a.shape[0])[:, None]
        cols = jnp.arange(a.shape[1])[None, :]
        on = (cols - rows) == jnp.asarray(offset).astype(np.int64)
        return jnp.where(on, jnp.asarray(val).astype(a.dtype), a)

    return run


def _dims(op: Any, dims: Any) -> tuple[int, ...]:
    return static_ints(dims, f"the dims of {op}")


def _strides(dims: tuple[int, ...], order: str) -> list[int]:
    """The element strides of an array of shape ``dims`` in ``order``."""
    axes = range(len(dims)) if order == "F" else reversed(range(len(dims)))
    strides, step = [0] * len(dims), 1
    for ax in axes:
        strides[ax], step = step, step * dims[ax]
    return strides


def unravel_index(op: UnravelIndex, node: Apply) -> Fn:
    """The coordinates of flat indices in an array of the (static) ``dims``; an index out
    of range raises ``ValueError``."""

    def run(indices: Any, dims: Any) -> Any:
        shape = _dims(op, dims)
        if len(shape) != len(node.outputs):
            raise ValueError(
                f"{op}: dims has {len(shape)} entries, but the node was built for "
                f"{len(node.outputs)}"
            )
        indices = jnp.asarray(indices).astype(np.int64)
        size = int(np.prod(shape))
        require(
            (indices >= 0) & (indices < size),
            ValueError,
            f"{op}: an index is out of range for an array of shape {shape}",
        )
        strides = _strides(shape, op.order)
        return tuple((indices // s) % n for s, n in zip(strides, shape, strict=True))

    return run


def ravel_multi_index(op: RavelMultiIndex, node: Apply) -> Fn:
    """The flat indices of coordinates in an array of the (static) ``dims``, with
    ``op.mode`` (``"raise"``: ``ValueError`` for a coordinate out of range)."""

    def run(*inputs: Any) -> Any:
        *coords, dims = inputs
        shape = _dims(op, dims)
        coords = [jnp.asarray(c).astype(np.int64) for c in coords]
        if len(coords) != len(shape):
            raise ValueError(f"{op}: {len(coords)} coordinates for dims {shape}")
        if op.mode == "raise":
            inside = [(c >= 0) & (c < n) for c, n in zip(coords, shape, strict=True)]
            require(
                jnp.all(jnp.stack([jnp.all(x) for x in inside])) if inside else True,
                ValueError,
                f"{op}: invalid entry in coordinates array for dims {shape}",
            )
        elif op.mode == "wrap":
            coords = [c % n for c, n in zip(coords, shape, strict=True)]
        else:
            coords = [jnp.clip(c, 0, n - 1) for c, n in zip(coords, shape, strict=True)]
        strides = _strides(shape, op.order)
        flat = sum((c * s for c, s in zip(coords, strides, strict=True)), jnp.int64(0))
        return jnp.asarray(flat).astype(np.int64)

    return run


def alloc_diag(op: AllocDiag, node: Apply) -> Fn:
    """Zeros with the last axis of ``diag`` on diagonal ``op.offset`` of ``(axis1, axis2)``."""
    dtype = out_dtype(node)

    def run(diag: Any) -> Any:
        diag = jnp.asarray(diag).astype(dtype)
        n = diag.shape[-1]
        side = n + abs(op.offset)
        z = jnp.zeros((*diag.shape[:-1], side, side), dtype)
        i = jnp.arange(n)
        z = z.at[..., i + max(0, -op.offset), i + max(0, op.offset)].set(diag)
        return jnp.moveaxis(z, (-2, -1), (op.axis1, op.axis2))

    return run


def diag_grad(op: DiagGrad, node: Apply) -> Fn:
    """``x`` with its ``op.offset`` diagonal of ``(axis1, axis2)`` replaced by ``y``."""

    def run(x: Any, y: Any) -> Any:
        x = jnp.asarray(x)
        n1, n2 = x.shape[op.axis1], x.shape[op.axis2]
        if op.offset >= 0:
            rows = np.arange(max(0, min(n1, n2 - op.offset)))
            cols = rows + op.offset
        else:
            cols = np.arange(max(0, min(n1 + op.offset, n2)))
            rows = cols - op.offset
        moved = jnp.moveaxis(x, (op.axis1, op.axis2), (-2, -1))
        moved = moved.at[..., rows, cols].set(jnp.asarray(y).astype(x.dtype))
        return jnp.moveaxis(moved, (-2, -1), (op.axis1, op.axis2))

    return run


def permute_row_elements(op: PermuteRowElements, node: Apply) -> Fn:
    """``out[..., i] = x[..., y[..., i]]`` (rows broadcast); with ``op.inverse``,
    ``out[..., y[..., i]] = x[..., i]``."""

    def run(x: Any, y: Any) -> Any:
        x, y = jnp.asarray(x), jnp.asarray(y)
        if x.shape[-1] != y.shape[-1]:
            raise ValueError(
                f"PermuteRowElements: rows of length {x.shape[-1]} cannot be permuted by "
                f"permutations of length {y.shape[-1]}"
            )
        batch = jnp.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        rows = jnp.broadcast_to(x, (*batch, x.shape[-1]))
        perms = jnp.broadcast_to(y, (*batch, y.shape[-1])).astype(np.int64)
        if not op.inverse:
            return jnp.take_along_axis(rows, perms, axis=-1)
        index = (*jnp.indices(perms.shape, sparse=True)[:-1], perms)
        return jnp.zeros_like(rows).at[index].set(rows)

    return run


def choose(op: Choose, node: Apply) -> Fn:
    """``numpy.choose`` with ``op.mode`` (``"raise"``: ``ValueError`` for an index out of
    range, after the call when it depends on the values)."""
    dtype = out_dtype(node)

    def run(a: Any, choices: Any) -> Any:
        a, choices = jnp.asarray(a).astype(np.int64), jnp.asarray(choices).astype(dtype)
        n = choices.shape[0]
        if op.mode == "raise":
            require((a >= 0) & (a < n), ValueError, f"{op}: invalid entry in choice array")
            a = jnp.clip(a, 0, n - 1)
        elif op.mode == "wrap":
            a = a % n
        else:
            a = jnp.clip(a, 0, n - 1)
        return jnp.choose(a, list(choices), mode="clip")

    return run


# Lowered for some nodes only (values computed from constants): ``info --ops`` says "partly".
for _factory in (unique, nonzero):
    setattr(_factory, CAPABILITY_ATTRIBUTE, PARTIAL)

#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    SearchsortedOp: searchsorted,
    Repeat: repeat,
    Unique: unique,
    Nonzero: nonzero,
    FillDiagonal: fill_diagonal,
    FillDiagonalOffset: fill_diagonal_offset,
    UnravelIndex: unravel_index,
    RavelMultiIndex: ravel_multi_index,
    AllocDiag: alloc_diag,
    DiagGrad: diag_grad,
    PermuteRowElements: permute_row_elements,
    Choose: choose,
}
