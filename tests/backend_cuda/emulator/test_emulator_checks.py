"""The emulated device itself: correct kernels run, faults are reported, never hang.

Negative controls: a barrier inside a divergent branch, a write one element past the end
(through the checked pointer parameter, and through a raw pointer the guard zones catch),
shuffle divergence, out-of-bounds copies. The memory checks (shared-memory races, unwritten
shared memory, global reads out of bounds, two threads writing one global element, 32-bit
index overflow) are in ``test_emulator_memory_checks.py``. Every kernel test runs under
several thread resume orders (``OPWEAVE_CUDA_EMULATOR_ORDER``). These tests run only where
the ``cuda`` tests use the emulated device (see ``tests/backend_cuda/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

#: The stand-in's modules, bound by :func:`_emulated_pycuda` for each test: the conftest puts
#: the emulated device in place only while this directory's tests run, so they are imported
#: then, not when the module is collected.
drv: Any = None
gpuarray: Any = None
_emulator: Any = None
SourceModule: Any = None


@pytest.fixture(autouse=True)
def _emulated_pycuda() -> None:
    global drv, gpuarray, _emulator, SourceModule
    pycuda = pytest.importorskip("pycuda")
    if not getattr(pycuda, "EMULATED", False):
        pytest.skip("the cuda tests use a real GPU here, not the emulated device")
    import pycuda.autoprimaryctx
    import pycuda.compiler
    import pycuda.driver
    import pycuda.gpuarray
    from pycuda import _emulator as emulator

    drv, gpuarray, _emulator, SourceModule = (
        pycuda.driver,
        pycuda.gpuarray,
        emulator,
        pycuda.compiler.SourceModule,
    )


ORDERS = ("forward", "reverse", "random:7")

HEAD = "#include <cuda_fp16.h>\n"


@pytest.fixture(params=ORDERS)
def order(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test with the block's threads resumed in each order."""
    monkeypatch.setenv(_emulator.ORDER_VARIABLE, request.param)
    yield request.param


def _function(source: str, name: str, types: list[Any]) -> Any:
    function = SourceModule(HEAD + source, no_extern_c=True).get_function(name)
    function.prepare(types)
    return function


def _ptr(x: Any) -> np.uintp:
    return np.uintp(int(x.gpudata))


BLOCK_SUM = r"""
extern "C" __global__ void block_sum(const float* x, float* out, long long n)
{
    __shared__ float s[128];
    const unsigned int t = threadIdx.x;
    const long long i = (long long)blockIdx.x * 128 + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int k = 64; k >= 32; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        __syncthreads();
    }
    if (t < 32) {
        float acc = s[t];
        for (int d = 16; d > 0; d >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, d);
        if (t == 0) out[blockIdx.x] = acc;
    }
}
"""


def test_correct_kernel_with_barriers_and_shuffles_passes(order: str) -> None:
    f = _function(BLOCK_SUM, "block_sum", [np.uintp, np.uintp, np.int64])
    host = np.arange(1000, dtype=np.float32)
    x, out = gpuarray.to_gpu(host), gpuarray.empty(8, np.float32)
    f.prepared_call((8, 1, 1), (128, 1, 1), _ptr(x), _ptr(out), np.int64(1000))
    expected = np.pad(host, (0, 24)).reshape(8, 128).sum(axis=1)
    np.testing.assert_array_equal(out.get(), expected)


def test_two_dimensional_blocks_and_xor_shuffle(order: str) -> None:
    source = r"""
extern "C" __global__ void grid2d(int* out)
{
    const int lin = threadIdx.y * blockDim.x + threadIdx.x;
    const int v = __shfl_xor_sync(0xffffffffu, lin, 1);
    out[(blockIdx.y * gridDim.x + blockIdx.x) * 64 + lin] = v;
}
"""
    f = _function(source, "grid2d", [np.uintp])
    out = gpuarray.empty((2, 3, 64), np.int32)
    f.prepared_call((3, 2, 1), (8, 8, 1), _ptr(out))
    lanes = np.arange(64) ^ 1
    np.testing.assert_array_equal(out.get(), np.broadcast_to(lanes, (2, 3, 64)))


def test_barrier_inside_a_divergent_branch_is_reported(order: str) -> None:
    source = r"""
extern "C" __global__ void diverge(float* y)
{
    if (threadIdx.x < 32) __syncthreads();
    y[threadIdx.x] = 1.0f;
}
"""
    f = _function(source, "diverge", [np.uintp])
    y = gpuarray.empty(64, np.float32)
    with pytest.raises(drv.LaunchError, match=r"kernel diverge.*barrier divergence.*finished"):
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(y))


def test_barriers_at_different_lines_are_reported(order: str) -> None:
    source = r"""
extern "C" __global__ void two_barriers(float* y)
{
    if (threadIdx.x % 2) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    y[threadIdx.x] = 1.0f;
}
"""
    f = _function(source, "two_barriers", [np.uintp])
    y = gpuarray.empty(64, np.float32)
    with pytest.raises(drv.LaunchError, match=r"two_barriers.*different __syncthreads"):
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(y))


def test_shuffle_in_a_divergent_branch_is_reported(order: str) -> None:
    source = r"""
extern "C" __global__ void half_warp(float* y)
{
    float v = threadIdx.x;
    if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
    y[threadIdx.x] = v;
}
"""
    f = _function(source, "half_warp", [np.uintp])
    y = gpuarray.empty(32, np.float32)
    with pytest.raises(drv.LaunchError, match=r"half_warp.*warp shuffle divergence"):
        f.prepared_call((1, 1, 1), (32, 1, 1), _ptr(y))


def test_write_one_element_past_the_end_is_reported(order: str) -> None:
    source = r"""
extern "C" __global__ void past_end(float* y, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = 2.0f;
}
"""
    f = _function(source, "past_end", [np.uintp, np.int64])
    y = gpuarray.empty(100, np.float32)
    pattern = (
        r"kernel past_end, block \(0, 0, 0\): global write past the end of allocation \d+ "
        r"\(400 bytes\) through parameter y by thread \(100, 0, 0\): 4 byte\(s\) at byte "
        r"offset 400$"
    )
    with pytest.raises(drv.LaunchError, match=pattern):
        f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(y), np.int64(100))
    # the faulty write was not done: a correct launch on the same array passes afterwards
    f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(y), np.int64(99))
    np.testing.assert_array_equal(y.get(), np.full(100, 2.0, np.float32))


def test_raw_pointer_write_past_the_end_is_caught_by_the_guard_zone(order: str) -> None:
    # a raw pointer taken from the parameter escapes the pointer check; the guard zone remains
    source = r"""
extern "C" __global__ void raw_past_end(float* y, long long n)
{
    float* raw = y;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) raw[i] = 2.0f;
}
"""
    f = _function(source, "raw_past_end", [np.uintp, np.int64])
    y = gpuarray.empty(100, np.float32)
    with pytest.raises(drv.LaunchError, match=r"raw_past_end.*out-of-bounds write past allocation"):
        f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(y), np.int64(100))
    # the guard zone is restored: a correct launch on the same array passes afterwards
    f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(y), np.int64(99))
    np.testing.assert_array_equal(y.get(), np.full(100, 2.0, np.float32))


def test_write_before_the_start_is_reported() -> None:
    source = r"""
extern "C" __global__ void before_start(float* y) { y[(int)threadIdx.x - 1] = 0.0f; }
"""
    f = _function(source, "before_start", [np.uintp])
    y = gpuarray.empty(8, np.float32)
    with pytest.raises(
        drv.LaunchError,
        match=r"global write before the start of allocation \d+ \(32 bytes\) through "
        r"parameter y by thread \(0, 0, 0\): 4 byte\(s\) at byte offset -4",
    ):
        f.prepared_call((1, 1, 1), (8, 1, 1), _ptr(y))


def test_resume_order_is_applied(order: str) -> None:
    source = r"""
extern "C" __global__ void last_arrival(int* y, int* counter)
{
    if (atomicAdd(counter, 1) == 63) y[0] = threadIdx.x;
}
"""
    f = _function(source, "last_arrival", [np.uintp, np.uintp])
    y, counter = gpuarray.empty(1, np.int32), gpuarray.zeros(1, np.int32)
    f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(y), _ptr(counter))
    last = int(y.get()[0])
    if order == "forward":
        assert last == 63
    elif order == "reverse":
        assert last == 0
    else:
        assert 0 <= last < 64


def test_random_order_differs_from_forward(monkeypatch: pytest.MonkeyPatch) -> None:
    source = r"""
extern "C" __global__ void arrival(int* y, int* counter)
{
    y[threadIdx.x] = atomicAdd(counter, 1);
}
"""
    f = _function(source, "arrival", [np.uintp, np.uintp])
    results = {}
    for order in ("forward", "reverse", "random:5"):
        monkeypatch.setenv(_emulator.ORDER_VARIABLE, order)
        y, counter = gpuarray.empty(64, np.int32), gpuarray.zeros(1, np.int32)
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(y), _ptr(counter))
        results[order] = y.get()
        assert sorted(results[order]) == list(range(64))
    np.testing.assert_array_equal(results["forward"], np.arange(64))
    np.testing.assert_array_equal(results["reverse"], np.arange(64)[::-1])
    assert not np.array_equal(results["random:5"], np.arange(64))


def test_bad_order_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_emulator.ORDER_VARIABLE, "sideways")
    with pytest.raises(ValueError, match="OPWEAVE_CUDA_EMULATOR_ORDER='sideways'"):
        _emulator.launch_order()


def test_new_allocations_are_poisoned() -> None:
    assert np.isnan(gpuarray.empty(5, np.float32).get()).all()
    np.testing.assert_array_equal(gpuarray.empty(3, np.int32).get(), [-1, -1, -1])


def test_copies_are_bounds_checked() -> None:
    x = gpuarray.empty(4, np.float32)
    with pytest.raises(drv.Error, match=r"cuMemcpyDtoH.*not inside one allocation"):
        drv.memcpy_dtoh(np.empty(5, np.float32), x.gpudata)
    with pytest.raises(drv.Error, match=r"cuMemcpyHtoD.*not inside one allocation"):
        drv.memcpy_htod(int(x.gpudata) + 4, np.zeros(4, np.float32))
    with pytest.raises(drv.Error, match=r"cuMemcpyDtoD"):
        drv.memcpy_dtod(x.gpudata, gpuarray.empty(2, np.float32).gpudata, 16)


def test_argument_buffer_must_match_the_parameters() -> None:
    source = 'extern "C" __global__ void takes_two(float* y, long long n) { }\n'
    function = SourceModule(HEAD + source, no_extern_c=True).get_function("takes_two")
    with pytest.raises(drv.LogicError, match=r"takes_two takes 16 bytes"):
        function.prepare([np.uintp, np.int32])


def test_compile_errors_are_reported() -> None:
    with pytest.raises(drv.CompileError, match="compiling the module failed"):
        SourceModule(HEAD + 'extern "C" __global__ void broken(float* y) { y[0] = ; }\n')


def test_float16_conversions_match_numpy() -> None:
    source = r"""
extern "C" __global__ void to_float(const __half* h, float* f, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        f[i] = __half2float(h[i]);
}
extern "C" __global__ void to_half(const float* f, __half* h, long long n)
{
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)blockDim.x * gridDim.x)
        h[i] = __float2half_rn(f[i]);
}
"""
    module = SourceModule(HEAD + source, no_extern_c=True)
    to_float, to_half = module.get_function("to_float"), module.get_function("to_half")
    to_float.prepare([np.uintp, np.uintp, np.int64])
    to_half.prepare([np.uintp, np.uintp, np.int64])
    every = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h, f = gpuarray.to_gpu(every), gpuarray.empty(65536, np.float32)
    to_float.prepared_call((64, 1, 1), (256, 1, 1), _ptr(h), _ptr(f), np.int64(65536))
    np.testing.assert_array_equal(f.get().view(np.uint32), every.astype(np.float32).view(np.uint32))

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=40000, dtype=np.uint64).astype(np.uint32)
    # plus every tie and neighbour around the binary16 grid, subnormals and the overflow edge
    grid = every[np.isfinite(every)].astype(np.float32).view(np.uint32)
    edges = np.concatenate([grid, grid + 1, grid - 1, grid + 0x1000, grid + 0xFFF])
    special = np.array([0x477FF000, 0x477FEFFF, 0x33000000, 0x33000001, 0x7FC00000], np.uint32)
    values = np.concatenate([bits, edges.astype(np.uint32), special]).view(np.float32)
    n = values.size
    src, out = gpuarray.to_gpu(values), gpuarray.empty(n, np.float16)
    to_half.prepared_call((64, 1, 1), (256, 1, 1), _ptr(src), _ptr(out), np.int64(n))
    with np.errstate(over="ignore", invalid="ignore"):
        expected = values.astype(np.float16)
    got = out.get()
    nan = np.isnan(expected)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint16), expected[~nan].view(np.uint16))


def test_barrier_in_an_endless_loop_stops_at_the_time_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = r"""
extern "C" __global__ void forever(int* y, int stop)
{
    while (y[0] != stop) __syncthreads();
}
"""
    f = _function(source, "forever", [np.uintp, np.int32])
    y = gpuarray.zeros(1, np.int32)
    monkeypatch.setenv("OPWEAVE_CUDA_EMULATOR_TIMEOUT", "0.3")
    with pytest.raises(drv.LaunchError, match=r"forever.*time limit \(0.3 s"):
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(y), np.int32(1))
