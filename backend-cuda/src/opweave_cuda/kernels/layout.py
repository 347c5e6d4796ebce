"""Merging the dimensions of a launch that one index can walk (pure functions).

Before a kernel is chosen, the dimensions of a launch are reduced to the fewest that
describe the same walk, as CuPy's ``_reduce_dims`` and libgpuarray's collapse do: length-1
dimensions are dropped, and two neighbours merge when, for *every* operand, the outer one's
stride is the inner one's stride times the inner length (a broadcast dimension, stride 0,
merges with a broadcast neighbour only). A transposed or sliced layout then runs with as few
dimensions as its irregularity needs, and a layout that merges into one dimension of unit
output stride runs the flat kernel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "INT32_MAX",
    "ReductionLayout",
    "fits_int32",
    "merge_dims",
    "merge_reduction_dims",
    "reach",
]

#: The largest value of a 32-bit ``int``.
INT32_MAX = 2**31 - 1


def merge_dims(
    shape: Sequence[int], strides: Sequence[Sequence[int]], order_by: int | None = None
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge the dimensions of ``shape`` that every operand's strides walk as one.

    Parameters
    ----------
    shape
        The extents, outer to inner (none of them 0).
    strides
        Per operand, its element strides along ``shape`` (0 where it is broadcast).
    order_by
        An operand whose walk decides the order of the dimensions first (largest
        ``|stride|`` outermost; ties keep their order), for launches in which the order
        the elements are visited in does not matter: a transposed layout then merges as
        its untransposed one. ``None``: the dimensions keep their order.

    Returns
    -------
    shape, strides
        The merged extents (none of them 1; ``()`` when there is one element) and, per
        operand, its strides along them: the same elements in the same order.

    Raises
    ------
    ValueError
        If an operand's strides do not have one entry per dimension, or an extent is not
        positive.
    """
    ndim = len(shape)
    for k, s in enumerate(strides):
        if len(s) != ndim:
            raise ValueError(f"operand {k} has {len(s)} strides for {ndim} dimensions")
    if any(int(n) < 1 for n in shape):
        raise ValueError(f"merge_dims: every extent must be positive, got {tuple(shape)}")
    if order_by is not None:
        key = strides[order_by]
        perm = sorted(range(ndim), key=lambda d: -abs(int(key[d])))
        shape = [shape[d] for d in perm]
        strides = [[s[d] for d in perm] for s in strides]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides]
    for d, n in enumerate(shape):
        n = int(n)
        if n == 1:
            continue
        if out_shape and all(
            out[-1] == int(s[d]) * n for out, s in zip(out_strides, strides, strict=True)
        ):
            out_shape[-1] *= n
            for out, s in zip(out_strides, strides, strict=True):
                out[-1] = int(s[d])
            continue
        out_shape.append(n)
        for out, s in zip(out_strides, strides, strict=True):
            out.append(int(s[d]))
    return tuple(out_shape), [tuple(s) for s in out_strides]


def reach(shape: Sequence[int], strides: Sequence[int]) -> int:
    """The largest ``|offset|`` (in elements) an index into ``shape`` with ``strides`` takes
    from the first element, and bound of every partial sum of the offset's terms."""
    return sum((int(n) - 1) * abs(int(s)) for n, s in zip(shape, strides, strict=True))


def fits_int32(n_elements: int, shape: Sequence[int], strides: Sequence[Sequence[int]]) -> bool:
    """Whether a launch's index arithmetic fits 32-bit ``int``: the element count (with the
    grid-stride loop's last step, see :data:`~opweave_cuda.kernels.elemwise.INT32_ELEMENTS`)
    and every operand's offsets."""
    from opweave_cuda.kernels.launch import MAX_BLOCKS, MAX_THREADS

    if n_elements > INT32_MAX - MAX_BLOCKS * MAX_THREADS:
        return False
    return all(reach(shape, s) <= INT32_MAX for s in strides) and all(
        int(n) <= INT32_MAX for n in shape
    )


class ReductionLayout:
    """A reduction's dimensions after merging.

    Attributes
    ----------
    kept, x_kept, out_kept
        The merged kept extents (outer to inner, in the output's order) and the input's and
        output's strides along them.
    reduced, x_reduced
        The merged reduced extents and the input's strides along them.
    n_out, n_red
        Elements of the output, and elements reduced into each.
    """

    def __init__(
        self,
        kept: Sequence[int],
        x_kept: Sequence[int],
        out_kept: Sequence[int],
        reduced: Sequence[int],
        x_reduced: Sequence[int],
    ) -> None:
        self.kept = tuple(kept)
        self.x_kept = tuple(x_kept)
        self.out_kept = tuple(out_kept)
        self.reduced = tuple(reduced)
        self.x_reduced = tuple(x_reduced)
        self.n_out = math.prod(self.kept)
        self.n_red = math.prod(self.reduced)

    def __repr__(self) -> str:
        return (
            f"ReductionLayout(kept={self.kept}, x_kept={self.x_kept}, "
            f"out_kept={self.out_kept}, reduced={self.reduced}, x_reduced={self.x_reduced})"
        )


def merge_reduction_dims(
    shape: Sequence[int],
    x_strides: Sequence[int],
    out_strides: Sequence[int],
    axes: Sequence[int],
) -> ReductionLayout:
    """Merge a reduction's kept dimensions (the input's and output's strides together,
    ordered by the output's walk) and its reduced dimensions (ordered by the input's walk:
    the reduction's order of combination is free, as on every GPU).

    Parameters
    ----------
    shape, x_strides
        The input's extents and element strides.
    out_strides
        The output's element strides (one per kept dimension).
    axes
        The reduced axes (sorted).

    Returns
    -------
    ReductionLayout
        With no length-1 dimension; the kept ones are ``()`` for a one-element output, the
        reduced ones ``()`` for a one-element reduction. A length-0 reduced dimension makes
        the reduction ``(0,)`` (nothing to read); callers skip a length-0 output.
    """
    kept_axes = [d for d in range(len(shape)) if d not in axes]
    if len(out_strides) != len(kept_axes):
        raise ValueError(f"{len(out_strides)} output strides for {len(kept_axes)} kept axes")
    k_shape = [int(shape[d]) for d in kept_axes]
    r_shape = [int(shape[d]) for d in axes]
    if 0 in k_shape:
        return ReductionLayout((0,), (0,), (0,), r_shape, [int(x_strides[d]) for d in axes])
    xs = [int(x_strides[d]) for d in kept_axes]
    kept, (xk, ok) = merge_dims(k_shape, [xs, list(out_strides)], order_by=1)
    if 0 in r_shape:
        return ReductionLayout(kept, xk, ok, (0,), (0,))
    reduced, (xr,) = merge_dims(r_shape, [[int(x_strides[d]) for d in axes]], order_by=0)
    return ReductionLayout(kept, xk, ok, reduced, xr)
