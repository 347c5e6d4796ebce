"""Matrix products: the tiled kernel compiles to PTX, and both plans (cuBLAS's column-major
arguments, the tiled kernel's strides) are replayed on the host against ``np.dot``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from opweave_cuda.kernels import gemm_kernel
from opweave_cuda.kernels.cublas import (
    Cublas,
    col_major_ld,
    cublas_plan,
    get_cublas,
    row_major_ld,
)
from opweave_cuda.kernels.gemm import GEMM_TILE, as_matrices, gemm_plan


@pytest.fixture(scope="module")
def ptx(
    compile_ptx: Callable[[Iterable[str], Path], dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    sources = [gemm_kernel(d).source for d in ("float32", "float64")]
    return compile_ptx(sources, tmp_path_factory.mktemp("gemm"))


def test_tiled_kernel_compiles(ptx: dict[str, str], ptx_entry: Callable[[str, str], str]) -> None:
    for dtype, op in (("float32", "mul.rn.f32"), ("float64", "mul.rn.f64")):
        kernel = gemm_kernel(dtype)
        for text in ptx.values():
            entry = ptx_entry(text, kernel.name)
            assert op in entry and "bar.sync" in entry and ".shared" in entry
        assert kernel.block == GEMM_TILE
        assert kernel.params[3] == f"const npy_{dtype}* A"
    with pytest.raises(NotImplementedError):
        gemm_kernel("int32")


def _elements(arr: np.ndarray) -> tuple[int, ...]:
    return tuple(s // arr.itemsize for s in arr.strides)


def _operands() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    m, k, n = 5, 7, 3
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    big = rng.standard_normal((2 * k, 2 * n))
    return [
        ("row_row", a, b, np.empty((m, n))),
        ("col_row", np.asfortranarray(a), b, np.empty((m, n))),
        ("row_col", a, np.asfortranarray(b), np.empty((m, n))),
        ("col_col", np.asfortranarray(a), np.asfortranarray(b), np.empty((m, n))),
        ("padded_ld", a, big[:k, :n], np.empty((m, 2 * n))[:, :n]),
        ("strided_b", a, big[::2, ::2], np.empty((m, n))),
        ("matvec", a, b[:, 0].copy(), np.empty(m)),
        ("matvec_step", a, big[::2, 1], np.empty(m)),
        ("vecmat", a[0].copy(), b, np.empty(n)),
        ("dot", a[0].copy(), a[1].copy(), np.empty(())),
        ("col_out", a, b, np.asfortranarray(np.empty((m, n)))),
    ]


def _colmajor_gemm(plan: Any, operands: dict[str, np.ndarray], c: np.ndarray) -> None:
    """What cuBLAS's column-major gemm does with the plan's arguments, on host buffers."""
    transa, transb, m, n, k, first, lda, second, ldb, ldc = plan

    def view(arr: np.ndarray, rows: int, cols: int, ld: int) -> np.ndarray:
        item = arr.itemsize
        return np.lib.stride_tricks.as_strided(arr, shape=(rows, cols), strides=(item, ld * item))

    a_rows, a_cols = (m, k) if transa == "N" else (k, m)
    b_rows, b_cols = (k, n) if transb == "N" else (n, k)
    op_a = view(operands[first], a_rows, a_cols, lda)
    op_b = view(operands[second], b_rows, b_cols, ldb)
    op_a = op_a if transa == "N" else op_a.T
    op_b = op_b if transb == "N" else op_b.T
    view(c, m, n, ldc)[...] = op_a @ op_b


@pytest.mark.parametrize("case", [c[0] for c in _operands()])
def test_cublas_plan_replays_to_numpy_dot(case: str) -> None:
    _, a, b, out = next(c for c in _operands() if c[0] == case)
    ma, mb, mc = as_matrices(
        a.shape, _elements(a), b.shape, _elements(b), out.shape, _elements(out)
    )
    plan = cublas_plan(ma, mb, mc)
    if case == "col_out" or case == "strided_b":
        assert plan is None  # layouts cuBLAS cannot take without a copy: the kernel runs
        return
    assert plan is not None
    _colmajor_gemm(plan, {"a": a, "b": b}, out)
    np.testing.assert_allclose(out, np.dot(a, b), rtol=1e-12)


@pytest.mark.parametrize("case", [c[0] for c in _operands()])
def test_tiled_plan_replays_to_numpy_dot(case: str) -> None:
    _, a, b, out = next(c for c in _operands() if c[0] == case)
    planned = gemm_plan(a, b, out, use_cublas=False)
    assert planned is not None and planned[0] == "kernel"
    source, grid, block, values = planned[1]
    m, n, k, pa, sa0, sa1, pb, sb0, sb1, pc, sc0, sc1 = values
    assert pa is a and pb is b and pc is out
    assert block == (GEMM_TILE, GEMM_TILE, 1)
    assert grid[0] * GEMM_TILE >= n and grid[1] * GEMM_TILE >= m
    assert len(values) == len(source.params)
    item = a.itemsize
    view_a = np.lib.stride_tricks.as_strided(a, (m, k), (sa0 * item, sa1 * item))
    view_b = np.lib.stride_tricks.as_strided(b, (k, n), (sb0 * item, sb1 * item))
    view_c = np.lib.stride_tricks.as_strided(out, (m, n), (sc0 * item, sc1 * item))
    view_c[...] = view_a @ view_b
    np.testing.assert_allclose(out, np.dot(a, b), rtol=1e-12)


def test_layout_helpers() -> None:
    assert row_major_ld((3, 4), (4, 1)) == 4
    assert row_major_ld((3, 4), (8, 1)) == 8
    assert row_major_ld((3, 4), (1, 3)) is None
    assert row_major_ld((1, 4), (0, 1)) == 4
    assert row_major_ld((4, 1), (2, 0)) == 2
    assert col_major_ld((3, 4), (1, 3)) == 3
    assert col_major_ld((3, 4), (4, 1)) is None


def test_gemm_plan_checks() -> None:
    a = np.zeros((2, 3), "float32")
    with pytest.raises(TypeError, match="float32 or float64"):
        gemm_plan(a, np.zeros((3, 2), "float64"), np.zeros((2, 2), "float32"))
    with pytest.raises(TypeError):
        gemm_plan(a.astype("int32"), a.T.astype("int32"), np.zeros((2, 2), "int32"))
    with pytest.raises(ValueError, match="aligned"):
        gemm_plan(a, a, np.zeros((2, 3), "float32"))
    with pytest.raises(ValueError, match="output"):
        gemm_plan(a, a.T, np.zeros((3, 3), "float32"))
    assert gemm_plan(np.zeros((0, 3)), np.zeros((3, 2)), np.zeros((0, 2))) is None
    # an empty inner dimension is the tiled kernel's (it writes the zeros)
    planned = gemm_plan(np.zeros((2, 0)), np.zeros((0, 2)), np.zeros((2, 2)))
    assert planned is not None and planned[0] == "kernel"
    assert gemm_plan(a, a.T.copy(), np.zeros((2, 2), "float32"))[0] == "cublas"  # type: ignore[index]


def test_cublas_loading_is_optional() -> None:
    missing = Cublas(names=("libopweave-no-such-cublas.so",))
    assert not missing.available and missing.name is None
    lib = get_cublas()
    if lib is not None:  # a toolkit with cuBLAS: the symbols bind
        assert lib.lib.cublasSgemm_v2 is not None and lib.lib.cublasDgemm_v2 is not None
    assert get_cublas() is lib  # loaded once


def test_ptx_assembles_for_each_arch(
    ptx: dict[str, str],
    assemble: Callable[[dict[str, str], Path], dict[str, Path]],
    tmp_path: Path,
) -> None:
    """``ptxas`` accepts every gemm kernel for sm_80 and sm_90 (registers, parameter
    space, shared memory)."""
    cubins = assemble(ptx, tmp_path)
    assert set(cubins) == {"sm_80", "sm_90"} and all(c.stat().st_size > 0 for c in cubins.values())


def test_tiled_plan_caps_the_grid_and_the_kernel_loops_over_row_tiles() -> None:
    """More than 65535 row tiles: the grid stops at 65535 and each block walks row tiles
    ``blockIdx.y, blockIdx.y + gridDim.y, ...`` (a grid-stride loop), covering every row."""

    class Operand:
        """An array-like with a shape, strides and dtype, holding no memory."""

        def __init__(self, shape: tuple[int, ...]) -> None:
            self.shape = shape
            self.strides = tuple(8 * int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
            self.dtype = np.dtype("float64")

    m = 65535 * GEMM_TILE + 5 * GEMM_TILE + 3
    planned = gemm_plan(Operand((m, 4)), Operand((4, 2)), Operand((m, 2)), use_cublas=False)
    assert planned is not None and planned[0] == "kernel"
    source, grid, _, values = planned[1]
    assert grid == (1, 65535, 1) and values[0] == m
    tiles = -(-m // GEMM_TILE)
    covered = {y + step * grid[1] for y in range(grid[1]) for step in range(-(-tiles // grid[1]))}
    assert {t for t in covered if t < tiles} == set(range(tiles))
    text = source.source
    assert "row0 += (long long)gridDim.y *" in text and "row0 < M" in text
