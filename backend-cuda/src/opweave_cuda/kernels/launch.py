"""Launch plans: grid and block sizes, and the strides kernels receive (pure functions)."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "MAX_BLOCKS",
    "MAX_BLOCK_DIMS",
    "MAX_BLOCK_THREADS",
    "MAX_GRID_DIMS",
    "MAX_NDIM",
    "MAX_THREADS",
    "broadcast_strides",
    "check_launch",
    "element_strides",
    "is_c_contiguous",
    "launch_config",
]

#: Most dimensions a strided kernel takes (the shape and strides are scalar arguments).
MAX_NDIM = 8
#: Default threads per block of the grid-stride kernels.
MAX_THREADS = 256
#: Default most blocks of a grid-stride launch (each thread then handles several elements).
MAX_BLOCKS = 65535
#: CUDA's limits on a launch (every architecture since sm_30): grid ``x, y, z`` and block
#: ``x, y, z`` extents, and threads per block.
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_BLOCK_THREADS = 1024


def launch_config(
    n_elements: int, max_threads: int = MAX_THREADS, max_blocks: int = MAX_BLOCKS
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The ``(grid, block)`` of a 1-d grid-stride launch over ``n_elements`` items.

    Parameters
    ----------
    n_elements
        Number of items (``0``: nothing to launch, the grid is empty).
    max_threads
        Most threads per block (a multiple of 32).
    max_blocks
        Most blocks; the kernel's grid-stride loop covers the rest.

    Returns
    -------
    grid, block
        Triples for ``pycuda``'s ``grid=`` and ``block=``: the block is a whole number of
        warps, no larger than needed, and ``grid * block >= n_elements`` unless the grid is
        capped at ``max_blocks``.
    """
    if n_elements < 0:
        raise ValueError(f"launch_config: negative element count {n_elements}")
    if max_threads < 32 or max_threads % 32:
        raise ValueError(f"launch_config: max_threads must be a multiple of 32, got {max_threads}")
    if max_blocks < 1:
        raise ValueError(f"launch_config: max_blocks must be positive, got {max_blocks}")
    threads = min(max_threads, max(32, 32 * math.ceil(n_elements / 32)))
    blocks = min(max_blocks, math.ceil(n_elements / threads))
    return (blocks, 1, 1), (threads, 1, 1)


def element_strides(strides: Sequence[int], itemsize: int) -> tuple[int, ...]:
    """Byte strides as element strides (kernels index typed pointers).

    Raises
    ------
    ValueError
        If a stride is not a multiple of the item size.
    """
    out = []
    for s in strides:
        if s % itemsize:
            raise ValueError(f"stride {s} is not a multiple of the item size {itemsize}")
        out.append(s // itemsize)
    return tuple(out)


def is_c_contiguous(shape: Sequence[int], strides: Sequence[int], itemsize: int) -> bool:
    """Whether an array of ``shape`` and byte ``strides`` is C-contiguous (dimensions of
    length 1 may have any stride, as in NumPy)."""
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        if n == 0:
            return True
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def broadcast_strides(
    shape: Sequence[int], strides: Sequence[int], out_shape: Sequence[int]
) -> tuple[int, ...]:
    """Strides reading an operand of ``shape`` broadcast to ``out_shape`` (0 where it is
    broadcast; same rank).

    Raises
    ------
    ValueError
        If the shapes do not broadcast.
    """
    if len(shape) != len(out_shape):
        raise ValueError(f"operand of rank {len(shape)} for an output of rank {len(out_shape)}")
    out = []
    for n, s, m in zip(shape, strides, out_shape, strict=True):
        if n == m:
            out.append(s if n != 1 else 0)
        elif n == 1:
            out.append(0)
        else:
            raise ValueError(f"shape {tuple(shape)} does not broadcast to {tuple(out_shape)}")
    return tuple(out)


def check_launch(
    grid: Sequence[int], block: Sequence[int]
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """``grid`` and ``block`` as triples of Python ints within CUDA's limits.

    An empty grid (an extent of 0) is allowed: the caller skips the launch.

    Raises
    ------
    ValueError
        If an extent is negative, a grid or block extent exceeds
        :data:`MAX_GRID_DIMS`/:data:`MAX_BLOCK_DIMS`, a block is empty, or the block has
        more than :data:`MAX_BLOCK_THREADS` threads.
    """
    if len(grid) != 3 or len(block) != 3:
        raise ValueError(f"a launch takes 3-d grid and block, got {tuple(grid)}, {tuple(block)}")
    g = (int(grid[0]), int(grid[1]), int(grid[2]))
    b = (int(block[0]), int(block[1]), int(block[2]))
    for axis, (n, most) in enumerate(zip(g, MAX_GRID_DIMS, strict=True)):
        if not 0 <= n <= most:
            raise ValueError(f"grid extent {n} along axis {axis} is outside [0, {most}]")
    for axis, (n, most) in enumerate(zip(b, MAX_BLOCK_DIMS, strict=True)):
        if not 1 <= n <= most:
            raise ValueError(f"block extent {n} along axis {axis} is outside [1, {most}]")
    if b[0] * b[1] * b[2] > MAX_BLOCK_THREADS:
        raise ValueError(f"block {b} has more than {MAX_BLOCK_THREADS} threads")
    return g, b
