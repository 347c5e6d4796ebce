"""The emulated device's memory checks, each with a negative control that must be reported.

Shared memory: a race between two barriers (a reduction tree without its barrier, two threads
writing one element), a read of an element no thread of the block wrote. Global memory: two
threads of a launch writing one element, reads before the start or past the end of an
allocation, a pointer into no allocation, and the 32-bit index of a launch over more than
2**31 elements (run on two selected blocks of a lazily allocated array). Correct kernels
(barriers, shuffles, atomics, a thread rewriting its own element) pass under every thread
resume order. These tests run only where the ``cuda`` tests use the emulated device.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

ORDERS = ("forward", "reverse", "random:3")
HEAD = "#include <cuda_fp16.h>\n"


@pytest.fixture
def emu() -> SimpleNamespace:
    """The stand-in's modules (imported once the conftest has put the emulated device in
    place); skips where the ``cuda`` tests use a real GPU."""
    pycuda = pytest.importorskip("pycuda")
    if not getattr(pycuda, "EMULATED", False):
        pytest.skip("the cuda tests use a real GPU here, not the emulated device")
    import pycuda.autoprimaryctx
    import pycuda.compiler
    import pycuda.driver
    import pycuda.gpuarray
    from pycuda import _emulator

    return SimpleNamespace(
        drv=pycuda.driver,
        gpuarray=pycuda.gpuarray,
        emulator=_emulator,
        SourceModule=pycuda.compiler.SourceModule,
    )


@pytest.fixture(params=ORDERS)
def order(
    request: pytest.FixtureRequest, emu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """Run the test with the block's threads resumed in each order."""
    monkeypatch.setenv(emu.emulator.ORDER_VARIABLE, request.param)
    yield request.param


def _function(emu: SimpleNamespace, source: str, name: str, types: list[Any]) -> Any:
    function = emu.SourceModule(HEAD + source, no_extern_c=True).get_function(name)
    function.prepare(types)
    return function


def _ptr(x: Any) -> np.uintp:
    return np.uintp(int(x.gpudata))


TREE = r"""
extern "C" __global__ void NAME(const float* x, float* out)
{
    __shared__ float s[64];
    const unsigned int t = threadIdx.x;
    s[t] = x[blockIdx.x * 64 + t];
    __syncthreads();
    for (unsigned int k = 32; k > 0; k >>= 1) {
        if (t < k) s[t] += s[t + k];
        BARRIER
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
"""


def _tree(emu: SimpleNamespace, name: str, barrier: bool) -> Any:
    source = TREE.replace("NAME", name).replace("BARRIER", "__syncthreads();" if barrier else "")
    return _function(emu, source, name, [np.uintp, np.uintp])


# ------------------------------------------------------------------ shared memory: races


def test_reduction_tree_with_its_barrier_passes(emu: SimpleNamespace, order: str) -> None:
    f = _tree(emu, "tree_ok", barrier=True)
    host = np.arange(192, dtype=np.float32)
    x, out = emu.gpuarray.to_gpu(host), emu.gpuarray.empty(3, np.float32)
    f.prepared_call((3, 1, 1), (64, 1, 1), _ptr(x), _ptr(out))
    np.testing.assert_array_equal(out.get(), host.reshape(3, 64).sum(axis=1))


def test_reduction_tree_without_its_barrier_is_a_shared_race(
    emu: SimpleNamespace, order: str
) -> None:
    f = _tree(emu, "tree_racy", barrier=False)
    x, out = emu.gpuarray.to_gpu(np.ones(64, np.float32)), emu.gpuarray.empty(1, np.float32)
    pattern = (
        r"kernel tree_racy, block \(0, 0, 0\): shared-memory race on shared array s, element "
        r"offset \d+: thread \(\d+, 0, 0\) (writes|reads) it and thread \(\d+, 0, 0\) "
        r"(writes|reads) it between the same two barriers \(barrier interval 1 of the block\)"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern) as info:
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(x), _ptr(out))
    if order == "forward":  # thread 0 runs all rounds ahead, reading s[1]; thread 1 writes it
        assert "offset 1: thread (0, 0, 0) reads it and thread (1, 0, 0) writes it" in str(
            info.value
        )
    elif order == "reverse":  # thread 31 writes s[31], then thread 15 reads it
        assert "offset 31: thread (31, 0, 0) writes it and thread (15, 0, 0) reads it" in str(
            info.value
        )


def test_two_threads_writing_one_shared_element_is_a_race(emu: SimpleNamespace, order: str) -> None:
    source = r"""
extern "C" __global__ void shared_ww(float* out)
{
    __shared__ float s[4];
    if (threadIdx.x == 1 || threadIdx.x == 2) s[3] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[3];
}
"""
    f = _function(emu, source, "shared_ww", [np.uintp])
    out = emu.gpuarray.empty(8, np.float32)
    pattern = (
        r"shared_ww.*shared array s, element offset 3: thread \((1|2), 0, 0\) writes it and "
        r"thread \((1|2), 0, 0\) writes it .*barrier interval 0"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern):
        f.prepared_call((1, 1, 1), (8, 1, 1), _ptr(out))


def test_two_dimensional_shared_arrays_are_checked(emu: SimpleNamespace) -> None:
    # a transposing tile read before the barrier: the element offset is the flat one
    source = r"""
extern "C" __global__ void tile_racy(float* out)
{
    __shared__ float tile[4][5];
    tile[threadIdx.y][threadIdx.x] = threadIdx.x;
    out[threadIdx.y * 4 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"""
    f = _function(emu, source, "tile_racy", [np.uintp])
    out = emu.gpuarray.empty(16, np.float32)
    with pytest.raises(emu.drv.LaunchError, match=r"tile_racy.*shared array tile, element offset"):
        f.prepared_call((1, 1, 1), (4, 4, 1), _ptr(out))


def test_warp_shuffles_and_a_thread_rewriting_its_own_element_pass(
    emu: SimpleNamespace, order: str
) -> None:
    source = r"""
extern "C" __global__ void own_then_shuffle(const float* x, float* out)
{
    __shared__ float s[64];
    const unsigned int t = threadIdx.x;
    s[t] = x[t];
    s[t] = s[t] * 2.0f;
    s[t] += 1.0f;
    __syncthreads();
    float v = s[63 - t];
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    out[t] = v;
}
"""
    f = _function(emu, source, "own_then_shuffle", [np.uintp, np.uintp])
    host = np.arange(64, dtype=np.float32)
    x, out = emu.gpuarray.to_gpu(host), emu.gpuarray.empty(64, np.float32)
    f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(x), _ptr(out))
    values = (host * 2 + 1)[::-1]
    expected = np.repeat(values.reshape(2, 32).sum(axis=1), 32)
    np.testing.assert_array_equal(out.get(), expected)


# ------------------------------------------------------------------ shared memory: unwritten


def test_read_of_never_written_shared_memory_is_reported(emu: SimpleNamespace, order: str) -> None:
    source = r"""
extern "C" __global__ void read_next(const float* x, float* out)
{
    __shared__ float sdata[65];
    const unsigned int tid = threadIdx.x;
    sdata[tid] = x[tid];
    __syncthreads();
    out[tid] = sdata[tid + 1];
}
"""
    f = _function(emu, source, "read_next", [np.uintp, np.uintp])
    x, out = emu.gpuarray.to_gpu(np.ones(64, np.float32)), emu.gpuarray.empty(64, np.float32)
    pattern = (
        r"kernel read_next, block \(0, 0, 0\): read of never-written shared memory: thread "
        r"\(63, 0, 0\) reads shared array sdata, element offset 64, which no thread of the "
        r"block has written"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern):
        f.prepared_call((1, 1, 1), (64, 1, 1), _ptr(x), _ptr(out))


def test_shared_memory_counts_as_unwritten_again_in_every_block(emu: SimpleNamespace) -> None:
    # block 0 writes s[], block 1 only reads what block 0 left: CUDA gives it no such content
    source = r"""
extern "C" __global__ void leftover(float* out)
{
    __shared__ float s[32];
    if (blockIdx.x == 0) s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * 32 + threadIdx.x] = s[threadIdx.x];
}
"""
    f = _function(emu, source, "leftover", [np.uintp])
    out = emu.gpuarray.empty(64, np.float32)
    with pytest.raises(
        emu.drv.LaunchError, match=r"leftover, block \(1, 0, 0\): read of never-written"
    ):
        f.prepared_call((2, 1, 1), (32, 1, 1), _ptr(out))


# ------------------------------------------------------------------ global memory: writes


def test_every_thread_writing_out0_is_reported(emu: SimpleNamespace, order: str) -> None:
    source = r"""
extern "C" __global__ void all_to_zero(float* out) { out[0] = threadIdx.x; }
"""
    f = _function(emu, source, "all_to_zero", [np.uintp])
    out = emu.gpuarray.empty(4, np.float32)
    pattern = (
        r"kernel all_to_zero, block \(0, 0, 0\): two threads of the launch write the same "
        r"global element: thread \(\d+, 0, 0\) of block \(0, 0, 0\) and thread \(\d+, 0, 0\) "
        r"of this block write byte offset 0 of allocation \d+ through parameter out"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern):
        f.prepared_call((1, 1, 1), (32, 1, 1), _ptr(out))


def test_threads_of_two_blocks_writing_one_element_are_reported(emu: SimpleNamespace) -> None:
    source = r"""
extern "C" __global__ void per_block(float* out, float* alias)
{
    if (threadIdx.x == 0) out[1] = blockIdx.x;
    if (threadIdx.x == 1) alias[blockIdx.x + 2] = 1.0f;
}
"""
    f = _function(emu, source, "per_block", [np.uintp, np.uintp])
    out = emu.gpuarray.empty(8, np.float32)
    with pytest.raises(
        emu.drv.LaunchError,
        match=r"per_block, block \(1, 0, 0\): .*thread \(0, 0, 0\) of block \(0, 0, 0\) and "
        r"thread \(0, 0, 0\) of this block write byte offset 4 of allocation",
    ):
        f.prepared_call((2, 1, 1), (2, 1, 1), _ptr(out), _ptr(out))
    # two parameters aliasing one allocation share its shadow: alias[1 + 2] == out[3]
    source2 = r"""
extern "C" __global__ void via_alias(float* out, float* alias)
{
    if (threadIdx.x == 0) out[3] = 1.0f;
    if (threadIdx.x == 1) alias[3] = 2.0f;
}
"""
    g = _function(emu, source2, "via_alias", [np.uintp, np.uintp])
    with pytest.raises(
        emu.drv.LaunchError, match=r"via_alias.*byte offset 12 .*parameter (alias|out)"
    ):
        g.prepared_call((1, 1, 1), (2, 1, 1), _ptr(out), _ptr(out))


def test_atomics_and_one_thread_rewriting_an_element_pass(emu: SimpleNamespace, order: str) -> None:
    source = r"""
extern "C" __global__ void count_and_own(int* counter, int* own)
{
    atomicAdd(counter, 1);
    atomicAdd(&counter[1], 2);
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    own[i] = 1;
    own[i] += i;
}
"""
    f = _function(emu, source, "count_and_own", [np.uintp, np.uintp])
    counter, own = emu.gpuarray.zeros(2, np.int32), emu.gpuarray.empty(128, np.int32)
    f.prepared_call((2, 1, 1), (64, 1, 1), _ptr(counter), _ptr(own))
    np.testing.assert_array_equal(counter.get(), [128, 256])
    np.testing.assert_array_equal(own.get(), np.arange(128) + 1)


# ------------------------------------------------------------------ global memory: reads


def test_read_past_the_end_is_reported(emu: SimpleNamespace, order: str) -> None:
    source = r"""
extern "C" __global__ void shifted(const float* x, float* y, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i + 1];
}
"""
    f = _function(emu, source, "shifted", [np.uintp, np.uintp, np.int64])
    x, y = emu.gpuarray.to_gpu(np.ones(100, np.float32)), emu.gpuarray.empty(100, np.float32)
    pattern = (
        r"kernel shifted, block \(0, 0, 0\): global read past the end of allocation \d+ "
        r"\(400 bytes\) through parameter x by thread \(99, 0, 0\): 4 byte\(s\) at byte "
        r"offset 400$"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern):
        f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(x), _ptr(y), np.int64(100))
    f.prepared_call((1, 1, 1), (128, 1, 1), _ptr(x), _ptr(y), np.int64(99))


def test_read_before_the_start_and_through_no_allocation_are_reported(
    emu: SimpleNamespace,
) -> None:
    source = r"""
extern "C" __global__ void back(const double* x, double* y)
{
    y[threadIdx.x] = x[(int)threadIdx.x - 2];
}
"""
    f = _function(emu, source, "back", [np.uintp, np.uintp])
    x, y = emu.gpuarray.to_gpu(np.ones(8)), emu.gpuarray.empty(8, np.float64)
    pattern = (
        r"global read before the start of allocation \d+ \(64 bytes\) through parameter x by "
        r"thread \(([01]), 0, 0\): 8 byte\(s\) at byte offset (-\d+)$"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern) as info:
        f.prepared_call((1, 1, 1), (8, 1, 1), _ptr(x), _ptr(y))
    thread, offset = re.search(pattern, str(info.value)).groups()  # type: ignore[union-attr]
    assert int(offset) == (int(thread) - 2) * 8
    with pytest.raises(
        emu.drv.LaunchError, match=r"global read through parameter x .*inside no allocation"
    ):
        f.prepared_call((1, 1, 1), (8, 1, 1), np.uintp(64), _ptr(y))


# ------------------------------------------------------------------ 32-bit index overflow

FILL = r"""
extern "C" __global__ void NAME(signed char* y, long long n)
{
    INDEX i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 1;
}
"""


def test_32_bit_index_of_a_launch_over_2_31_elements_is_reported(
    emu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 2**31 + 256
    blocks = n // 256
    y = emu.gpuarray.empty(n, np.int8)  # lazily allocated: its pages are mapped when touched
    monkeypatch.setenv(emu.emulator.BLOCKS_VARIABLE, "0,-1")  # the first and the last block
    narrow = FILL.replace("NAME", "fill_int").replace("INDEX", "int")
    f = _function(emu, narrow, "fill_int", [np.uintp, np.int64])
    pattern = (
        rf"kernel fill_int, block \({blocks - 1}, 0, 0\): global write before the start of "
        rf"allocation \d+ \({n} bytes\) through parameter y by thread \((\d+), 0, 0\): "
        rf"1 byte\(s\) at byte offset (-\d+)$"
    )
    with pytest.raises(emu.drv.LaunchError, match=pattern) as info:
        f.prepared_call((blocks, 1, 1), (256, 1, 1), _ptr(y), np.int64(n))
    # the index wrapped: element 2**31 + t became -2**31 + t
    thread, offset = re.search(pattern, str(info.value)).groups()  # type: ignore[union-attr]
    assert int(offset) == -(2**31) + int(thread)
    # the same kernel with a 64-bit index writes the last block's elements
    wide = FILL.replace("NAME", "fill_wide").replace("INDEX i = ", "long long i = (long long)")
    g = _function(emu, wide, "fill_wide", [np.uintp, np.int64])
    g.prepared_call((blocks, 1, 1), (256, 1, 1), _ptr(y), np.int64(n))
    tail = np.zeros(256, np.int8)
    emu.drv.memcpy_dtoh(tail, int(y.gpudata) + n - 256)
    np.testing.assert_array_equal(tail, np.ones(256, np.int8))
    y.gpudata.free()


def test_block_selection_is_validated(
    emu: SimpleNamespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(emu.emulator.BLOCKS_VARIABLE, "0,-1,7,-9")
    assert emu.emulator.launch_blocks(4) == [0, 3]
    monkeypatch.setenv(emu.emulator.BLOCKS_VARIABLE, "first")
    with pytest.raises(ValueError, match="OPWEAVE_CUDA_EMULATOR_BLOCKS='first'"):
        emu.emulator.launch_blocks(4)
    monkeypatch.delenv(emu.emulator.BLOCKS_VARIABLE)
    assert emu.emulator.launch_blocks(4) is None


# ------------------------------------------------------------------ the generated kernels


def _run_generated(emu: SimpleNamespace, kernel: Any, source: str, plan: Any) -> None:
    from opweave_cuda.kernels.runtime import arg_types, pack_args

    _, grid, block, values = plan
    function = emu.SourceModule(source, no_extern_c=True).get_function(kernel.name)
    function.prepare(list(arg_types(kernel)))
    function.prepared_call(grid, block, *pack_args(kernel, values))


def test_generated_reduction_without_its_tree_barrier_is_a_shared_race(
    emu: SimpleNamespace, order: str
) -> None:
    import opweave.scalar as ps
    from opweave.tensor.type import TensorType
    from opweave_cuda.kernels import reduction_kernel

    rk = reduction_kernel(
        ps.add, (1,), TensorType("float32", (None, None)), TensorType("float32", (None,))
    )
    host = np.arange(3 * 700, dtype=np.float32).reshape(3, 700)
    x, out = emu.gpuarray.to_gpu(host), emu.gpuarray.empty(3, np.float32)
    source = rk.kernel.source
    _run_generated(emu, rk.kernel, source, rk.plan(x, out))
    np.testing.assert_allclose(out.get(), host.sum(axis=1), rtol=1e-6)

    tree = re.compile(r"(if \(tid < s\) sdata\[tid\] = [^\n]*\n\s*)__syncthreads\(\);")
    assert len(tree.findall(source)) == 1
    racy = tree.sub(r"\1", source)
    with pytest.raises(
        emu.drv.LaunchError,
        match=rf"kernel {rk.kernel.name}, block \(0, 0, 0\): shared-memory race on shared "
        r"array sdata, element offset \d+",
    ):
        _run_generated(emu, rk.kernel, racy, rk.plan(x, out))


def test_generated_gemm_without_its_second_barrier_is_a_shared_race(
    emu: SimpleNamespace,
) -> None:
    from opweave_cuda.kernels.gemm import gemm_kernel, gemm_plan

    a = emu.gpuarray.to_gpu(np.arange(40 * 48, dtype=np.float64).reshape(40, 48) / 100)
    b = emu.gpuarray.to_gpu(np.ones((48, 20)))
    out = emu.gpuarray.empty((40, 20), np.float64)
    kind, plan = gemm_plan(a, b, out, use_cublas=False)
    assert kind == "kernel"
    kernel = gemm_kernel("float64")
    _run_generated(emu, kernel, kernel.source, plan)
    np.testing.assert_allclose(out.get(), a.get() @ b.get())

    second = "acc += As[ty][k] * Bs[k][tx];\n            __syncthreads();"
    assert kernel.source.count(second) == 1
    racy = kernel.source.replace(second, "acc += As[ty][k] * Bs[k][tx];")
    with pytest.raises(emu.drv.LaunchError, match=r"shared-memory race on shared array (As|Bs)"):
        _run_generated(emu, kernel, racy, plan)
