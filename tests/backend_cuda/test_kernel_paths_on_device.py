"""Device paths the other tests do not reach, run on the emulated device and checked against
NumPy: ``cuda__check_launches`` with a fault the device reports late (as a GPU does), a
column reduction and the tiled ``gemm`` with more tasks than the grid has blocks (each block
loops), and the cuBLAS call path through an emulated cuBLAS that computes with NumPy.

These tests need the emulated device (its deferred faults, its block selection and its
host-memory allocations); they skip on a real GPU.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.tensor.type import TensorType
from opweave_cuda.kernels import reduction_kernel
from opweave_cuda.kernels.gemm import GEMM_TILE, gemm, gemm_plan
from opweave_cuda.kernels.launch import MAX_BLOCKS
from opweave_cuda.kernels.runtime import KernelLaunchError, launch
from opweave_cuda.kernels.source import KernelSource, translation_unit

pytestmark = pytest.mark.cuda


@pytest.fixture
def emulator() -> Iterator[Any]:
    """The emulated device's ``pycuda._emulator`` (skips on a real GPU)."""
    pycuda = pytest.importorskip("pycuda")
    if not getattr(pycuda, "EMULATED", False):
        pytest.skip("needs the emulated device (deferred faults, block selection)")
    from pycuda import _emulator

    yield _emulator
    _emulator.context().pending = None  # a test that failed half-way leaves no fault behind


@pytest.fixture
def gpuarray() -> Any:
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


def _tt(dtype: str, ndim: int) -> TensorType:
    return TensorType(dtype, (None,) * ndim)


# ---------------------------------------------------------------- cuda__check_launches

#: A kernel writing far past its array: an illegal address on a GPU, a checked write on the
#: emulated device.
_WILD = translation_unit(
    [],
    'extern "C" __global__ void opw_test_wild_write(long long n, npy_float32* y)\n'
    "{ y[n + (1LL << 40) + threadIdx.x] = 1.0f; }\n",
)
WILD = KernelSource("opw_test_wild_write", _WILD, ("long long n", "npy_float32* y"))


def test_a_deferred_fault_is_reported_by_the_next_wait(
    emulator: Any, gpuarray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emulated device can report a fault late, as a GPU does: the launch returns, the
    next synchronisation (or copy, or launch) raises it, once."""
    import pycuda.driver as drv

    monkeypatch.setenv(emulator.FAULTS_VARIABLE, "deferred")
    y = gpuarray.empty(8, "float32")
    with opweave.config.change_flags(cuda__check_launches=False):
        launch(WILD, (1, 1, 1), (4, 1, 1), [8, y])
    with pytest.raises(drv.LaunchError, match=r"opw_test_wild_write.*past the end"):
        drv.Context.synchronize()
    drv.Context.synchronize()  # reported once
    monkeypatch.setenv(emulator.FAULTS_VARIABLE, "immediate")
    with pytest.raises(drv.LaunchError, match="opw_test_wild_write"):
        launch(WILD, (1, 1, 1), (4, 1, 1), [8, y])
    monkeypatch.setenv(emulator.FAULTS_VARIABLE, "later")
    with pytest.raises(ValueError, match="OPWEAVE_CUDA_EMULATOR_FAULTS='later'"):
        emulator.fault_mode()


def test_check_launches_names_the_kernel_that_failed(
    emulator: Any, gpuarray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(emulator.FAULTS_VARIABLE, "deferred")
    y = gpuarray.to_gpu(np.zeros(8, "float32"))
    with opweave.config.change_flags(cuda__check_launches=True):
        with pytest.raises(KernelLaunchError, match="kernel opw_test_wild_write failed"):
            launch(WILD, (1, 1, 1), (4, 1, 1), [8, y])
    # without the flag the launch returns, and the download that waits for it fails,
    # naming the flag
    from opweave_cuda.device_copy import to_host

    with opweave.config.change_flags(cuda__check_launches=False):
        launch(WILD, (1, 1, 1), (4, 1, 1), [8, y])
        with pytest.raises(RuntimeError, match="cuda__check_launches") as info:
            to_host(y)
    assert not isinstance(info.value, KernelLaunchError)
    np.testing.assert_array_equal(to_host(y), np.zeros(8, "float32"))  # reported once


# ---------------------------------------------------------------- grid-stride loops


def test_column_reduction_with_more_tasks_than_blocks(
    emulator: Any, gpuarray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """65,536 column tiles: the grid stops at 65,535 blocks and block 0 also takes the last
    tile, reusing its shared memory (the barrier at the end of each task keeps the next
    task's writes after this one's reads). Only blocks 0 and the last run; the input is a
    stride-0 view, so that it holds 64 values."""
    from opweave_cuda.device_copy import strided_view

    n_outer, rows, cols = MAX_BLOCKS + 1, 3, 32
    base = np.arange(rows * cols, dtype="float32").reshape(rows, cols) - 40
    g = gpuarray.to_gpu(base)
    x = strided_view(g, (n_outer, rows, cols), (0, *g.strides))
    kernel = reduction_kernel(ps.add, (1,), _tt("float32", 3), _tt("float32", 2))
    out = gpuarray.empty((n_outer, cols), "float32")
    choice = kernel.select(x, out)
    assert choice.path == "columns" and choice.n_part == 1
    monkeypatch.setenv(emulator.BLOCKS_VARIABLE, "0,-1")
    kernel(x, out)
    got = out.get()
    for row in (0, MAX_BLOCKS - 1, MAX_BLOCKS):  # block 0, the last block, block 0 again
        np.testing.assert_array_equal(got[row], base.sum(axis=0), err_msg=f"row {row}")


def test_tiled_gemm_loops_over_row_tiles_beyond_the_grid(
    emulator: Any, gpuarray: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More row tiles than the grid's 65,535: blocks 0 and 5 also compute tiles 65,535 and
    65,540 (the last, partial one); only those blocks and the last run."""
    m = 65535 * GEMM_TILE + 5 * GEMM_TILE + 3
    a = (np.arange(m, dtype="float32") % 1000 - 500).reshape(m, 1)
    b = np.array([[0.5, -2.0]], dtype="float32")
    ga, gb = gpuarray.to_gpu(a), gpuarray.to_gpu(b)
    out = gpuarray.empty((m, 2), "float32")
    planned = gemm_plan(ga, gb, out, use_cublas=False)
    assert planned is not None and planned[0] == "kernel"
    assert planned[1][1] == (1, 65535, 1)
    monkeypatch.setenv(emulator.BLOCKS_VARIABLE, "0,5,-1")
    launch(*planned[1])
    got = out.get()
    for tile in (0, 5, 65534, 65535, 65540):
        rows = slice(tile * GEMM_TILE, min((tile + 1) * GEMM_TILE, m))
        np.testing.assert_array_equal(got[rows], a[rows] @ b, err_msg=f"row tile {tile}")


# ---------------------------------------------------------------- cuBLAS


class EmulatedCublasLib:
    """cuBLAS's ``cublasSgemm_v2``/``cublasDgemm_v2`` on the emulated device: column-major
    ``C = alpha * op(A) @ op(B) + beta * C`` computed with NumPy on the allocations the
    pointers name (every operand's extent checked against its allocation)."""

    def __init__(self, ffi: Any, emulator: Any) -> None:
        self.ffi = ffi
        self.emulator = emulator
        self.calls = 0

    def cublasCreate_v2(self, handle: Any) -> int:
        return 0

    def _matrix(self, pointer: Any, rows: int, cols: int, ld: int, dtype: str) -> np.ndarray:
        item = np.dtype(dtype).itemsize
        assert ld >= max(1, rows), f"leading dimension {ld} below {rows} rows"
        address = int(self.ffi.cast("uintptr_t", pointer))
        nbytes = ((cols - 1) * ld + rows) * item
        self.emulator.context().check_range(address, nbytes, "emulated cuBLAS operand")
        flat = np.frombuffer((ctypes.c_char * nbytes).from_address(address), dtype=dtype)
        return np.lib.stride_tricks.as_strided(flat, (rows, cols), (item, ld * item))

    def _gemm(self, dtype: str, args: tuple[Any, ...]) -> int:
        _, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = args
        self.calls += 1
        op_a = self._matrix(a, *((m, k) if transa == 0 else (k, m)), lda, dtype)
        op_b = self._matrix(b, *((k, n) if transb == 0 else (n, k)), ldb, dtype)
        op_a, op_b = (op_a if transa == 0 else op_a.T), (op_b if transb == 0 else op_b.T)
        result = alpha[0] * (op_a.astype("float64") @ op_b.astype("float64"))
        target = self._matrix(c, m, n, ldc, dtype)
        if beta[0] != 0:  # with beta = 0, cuBLAS does not read C
            result = result + beta[0] * target
        target[...] = result.astype(dtype)
        return 0

    def cublasSgemm_v2(self, *args: Any) -> int:
        return self._gemm("float32", args)

    def cublasDgemm_v2(self, *args: Any) -> int:
        return self._gemm("float64", args)


@pytest.fixture
def emulated_cublas(emulator: Any, monkeypatch: pytest.MonkeyPatch) -> EmulatedCublasLib:
    """The backend's cuBLAS replaced by :class:`EmulatedCublasLib` (the real binding, its
    library swapped)."""
    import opweave_cuda.kernels.gemm as gemm_module
    from opweave_cuda.kernels import cublas

    lib = cublas.Cublas(names=())
    fake = EmulatedCublasLib(lib.ffi, emulator)
    lib.lib, lib.name = fake, "emulated cuBLAS"
    monkeypatch.setattr(gemm_module, "get_cublas", lambda: lib)
    return fake


def _gemm_cases() -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(5)
    m, k, n = 5, 7, 3
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    big = rng.standard_normal((2 * k, 2 * n))
    return [
        ("row_row", a, b, np.empty((m, n))),
        ("col_row", np.asfortranarray(a), b, np.empty((m, n))),
        ("row_col", a, np.asfortranarray(b), np.empty((m, n))),
        ("col_col", np.asfortranarray(a), np.asfortranarray(b), np.empty((m, n))),
        ("padded_ld", a, big[:k, :n], np.empty((m, n))),
        ("matvec", a, b[:, 0].copy(), np.empty(m)),
        ("vecmat", a[0].copy(), b, np.empty(n)),
        ("dot", a[0].copy(), a[1].copy(), np.empty(())),
    ]


def _device_like(gpuarray: Any, host: np.ndarray) -> Any:
    """A GPUArray with ``host``'s values and (non-negative) strides."""
    span = sum((n - 1) * s for n, s in zip(host.shape, host.strides, strict=True)) + host.itemsize
    raw = (ctypes.c_char * span).from_address(host.__array_interface__["data"][0])
    block = gpuarray.to_gpu(np.frombuffer(raw, dtype=np.uint8).copy())
    return gpuarray.GPUArray(
        host.shape, host.dtype, gpudata=int(block.gpudata), strides=host.strides, base=block
    )


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_cublas_path_matches_numpy(
    emulated_cublas: EmulatedCublasLib, gpuarray: Any, dtype: str
) -> None:
    for case, a, b, out in _gemm_cases():
        a, b = a.astype(dtype), b.astype(dtype)
        ga, gb = _device_like(gpuarray, a), _device_like(gpuarray, b)
        gout = gpuarray.empty(out.shape, dtype)
        before = emulated_cublas.calls
        gemm(ga, gb, gout)
        assert emulated_cublas.calls == before + 1, case
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(gout.get(), np.dot(a, b), rtol=rtol, err_msg=case)


def test_compiled_dot_runs_through_cublas(emulated_cublas: EmulatedCublasLib) -> None:
    x, y = ot.matrix("x"), ot.matrix("y")
    f = opweave.function([x, y], ot.dot(x, y.T), mode=opweave.Mode(linker="cuda"))
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 6)), rng.standard_normal((3, 6))
    np.testing.assert_allclose(f(a, b), a @ b.T, rtol=1e-12)
    assert emulated_cublas.calls >= 1
