"""Launch limits and dimension merging (pure arithmetic of the kernels' launches)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from opweave_cuda.kernels.cublas import Cublas
from opweave_cuda.kernels.launch import (
    MAX_BLOCK_THREADS,
    MAX_GRID_DIMS,
    check_launch,
)
from opweave_cuda.kernels.layout import merge_dims


def test_check_launch_accepts_cuda_limits_and_returns_ints() -> None:
    grid, block = check_launch((np.int64(65535), 1, 1), (np.int32(256), 1, 1))
    assert grid == (65535, 1, 1) and block == (256, 1, 1)
    assert all(type(n) is int for n in (*grid, *block))
    assert check_launch((2**31 - 1, 65535, 65535), (16, 16, 4))[0] == MAX_GRID_DIMS
    assert check_launch((0, 1, 1), (32, 1, 1))[0] == (0, 1, 1)  # empty: the caller skips


@pytest.mark.parametrize(
    ("grid", "block", "match"),
    [
        ((2**31, 1, 1), (32, 1, 1), "grid extent"),
        ((1, 65536, 1), (32, 1, 1), "grid extent"),
        ((1, 1, 65536), (32, 1, 1), "grid extent"),
        ((-1, 1, 1), (32, 1, 1), "grid extent"),
        ((1, 1, 1), (1025, 1, 1), "block extent"),
        ((1, 1, 1), (1, 1, 65), "block extent"),
        ((1, 1, 1), (0, 1, 1), "block extent"),
        ((1, 1, 1), (64, 32, 1), f"more than {MAX_BLOCK_THREADS} threads"),
        ((1, 1), (32, 1, 1), "3-d"),
    ],
)
def test_check_launch_rejects_what_cuda_rejects(
    grid: tuple[int, ...], block: tuple[int, ...], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        check_launch(grid, block)


def _offsets(sizes: tuple[int, ...], strides: tuple[int, ...]) -> list[int]:
    """Element offsets in the order a flat index walks them (last dimension fastest)."""
    return [
        sum(i * s for i, s in zip(index, strides, strict=True))
        for index in itertools.product(*(range(n) for n in sizes))
    ]


@pytest.mark.parametrize(
    ("sizes", "strides", "expected"),
    [
        ((3, 4, 5), (20, 5, 1), ((60,), (1,))),  # contiguous: one walk
        ((3, 2, 5), (20, 10, 1), ((6, 5), (10, 1))),  # every other row
        ((2, 4, 3), (40, 5, 2), ((2, 4, 3), (40, 5, 2))),  # nothing merges
        ((5, 1, 4), (4, 99, 1), ((20,), (1,))),  # a length-1 axis, any stride
        ((3, 4), (-4, 1), ((3, 4), (-4, 1))),  # negative outer stride
        ((3, 4), (-4, -1), ((12,), (-1,))),  # fully reversed: one backward walk
        ((1, 1), (7, 9), ((), ())),
        ((), (), ((), ())),
    ],
)
def test_merged_dims_visit_the_same_elements(
    sizes: tuple[int, ...], strides: tuple[int, ...], expected: tuple[tuple[int, ...], ...]
) -> None:
    shape, (merged,) = merge_dims(sizes, [strides])
    assert (shape, merged) == expected
    assert _offsets(shape, merged) == _offsets(sizes, strides)


def test_cublas_without_a_library_is_not_usable() -> None:
    missing = Cublas(names=("libopweave-no-such-cublas.so",))
    assert not missing.available and not missing.usable()


def test_launch_refuses_a_block_the_kernel_is_not_written_for() -> None:
    """A reduction's tree assumes its block size: any other is refused before pycuda runs."""
    import opweave.scalar as ps
    from opweave.tensor.type import TensorType
    from opweave_cuda.kernels import reduction_kernel
    from opweave_cuda.kernels.runtime import launch

    kernel = reduction_kernel(
        ps.add, (0,), TensorType("float32", (None,)), TensorType("float32", ()), "float32"
    )
    source = kernel.sources[0]
    assert source.block > 0
    with pytest.raises(ValueError, match=f"written for blocks of {source.block} threads"):
        launch(source, (1, 1, 1), (source.block // 2, 1, 1), [])


def test_check_launches_flag_is_declared_by_the_backend() -> None:
    import opweave

    assert opweave.config.cuda__check_launches is False
    docs = {flag.name: flag.doc for flag in opweave.config.flags()}
    assert "waits for the kernel" in docs["cuda__check_launches"]
