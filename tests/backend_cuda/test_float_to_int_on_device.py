"""Float to integer conversions on the device give NumPy's (x86-64) results on every path:
graph casts, casts of GPU values by ``GpuArrayType.filter`` and reductions into an integer
output. A GPU's own conversion saturates (``cvt.rzi``); the emulated device converts the same
way, so these tests fail there wherever a GPU would differ from NumPy (``cuda``: needs a GPU
or the emulated device)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave_cuda import GpuArrayType

pytestmark = pytest.mark.cuda

#: Values whose conversion differs between a saturating and a wrapping conversion.
VALUES = [-1.0, 300.0, -129.5, 70000.0, 3e9, -3e9, 5e9, 1e19, 2.5, -2.5, 0.0]
INT_TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def _numpy_cast(values: np.ndarray, target: str) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return values.astype(target)


def _gpu_saturated(values: np.ndarray, target: str) -> np.ndarray:
    """What ``cvt.rzi`` gives: NaN is 0, the truncated value clamped to the range of the
    32-bit (for 8/16/32-bit targets) or 64-bit type of the target's signedness, then wrapped
    to the target."""
    wide = np.dtype(
        ("int" if target.startswith("int") else "uint") + ("64" if "64" in target else "32")
    )
    info = np.iinfo(wide)
    out = []
    for v in values.astype("float64"):
        if np.isnan(v):
            n = 0
        else:
            n = int(min(max(np.trunc(v), float(info.min)), float(info.max)))
            n = min(max(n, int(info.min)), int(info.max))
        out.append(n)
    return np.array(out, dtype=wide).astype(target)


@pytest.fixture(scope="module")
def gpuarray() -> Any:
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


def test_a_plain_c_cast_saturates_on_the_device(gpuarray: Any) -> None:
    """The device's own conversion (what a plain C cast compiles to) saturates: the emulated
    device models it, so a kernel that relies on x86-64's wrapping fails there too."""
    from pycuda.compiler import SourceModule

    from opweave_cuda.kernels.source import CUDA_TYPE, PRELUDE

    values = np.array([*VALUES, np.nan], dtype="float64")
    for target in INT_TARGETS:
        source = PRELUDE + (
            f'extern "C" __global__ void plain_cast(const double* x, {CUDA_TYPE[target]}* y)'
            f" {{ y[threadIdx.x] = ({CUDA_TYPE[target]})(x[threadIdx.x]); }}\n"
        )
        kernel = SourceModule(source, no_extern_c=True).get_function("plain_cast")
        x, y = gpuarray.to_gpu(values), gpuarray.empty(len(values), target)
        kernel(x.gpudata, y.gpudata, grid=(1, 1), block=(len(values), 1, 1))
        np.testing.assert_array_equal(y.get(), _gpu_saturated(values, target), err_msg=target)


@pytest.mark.parametrize("source", ["float64", "float32"])
def test_filter_casts_gpu_values_as_numpy(gpuarray: Any, source: str) -> None:
    values = np.array(VALUES, dtype=source)
    for target in INT_TARGETS:
        t = GpuArrayType(target, shape=(None,))
        got = t.filter(gpuarray.to_gpu(values), allow_downcast=True)
        assert got.dtype == np.dtype(target)
        np.testing.assert_array_equal(got.get(), _numpy_cast(values, target), err_msg=target)


def test_filter_casts_float16_and_strided_values(gpuarray: Any) -> None:
    values = np.array([[-1.0, 300.0, -129.5], [2.5, 60000.0, -3.0]], dtype="float16")
    from opweave_cuda.device_copy import strided_view

    g = gpuarray.to_gpu(values)
    flipped = strided_view(g, (2, 3), (g.strides[0], -g.strides[1]), 2 * g.itemsize)
    for target in ("uint8", "int8", "uint16", "int16"):
        t = GpuArrayType(target, shape=(None, None))
        got = t.filter(g, allow_downcast=True)
        np.testing.assert_array_equal(got.get(), _numpy_cast(values, target), err_msg=target)
        got = t.filter(flipped, allow_downcast=True)
        expected = _numpy_cast(values[:, ::-1], target)
        np.testing.assert_array_equal(got.get(), expected, err_msg=target)


@pytest.mark.parametrize("target", ["int32", "uint8", "uint32", "int64"])
def test_float_sum_into_an_integer_output_matches_the_host(target: str) -> None:
    """``sum(x, dtype=<int>)`` of floats accumulates in ``float64`` and converts the sums:
    on the device as on the host linkers and in NumPy (sums out of the target's range
    included)."""
    x = ot.matrix("x", dtype="float64")
    out = ot.sum(x, axis=1, dtype=target)
    values = np.array([VALUES[:5], VALUES[5:10], VALUES[-5:]], dtype="float64")
    gpu = opweave.function([x], out, mode=opweave.Mode(linker="cuda"))(values)
    cpu = opweave.function([x], out, mode=opweave.Mode(linker="py"))(values)
    expected = _numpy_cast(values.sum(axis=1), target)
    np.testing.assert_array_equal(np.asarray(gpu), expected)
    np.testing.assert_array_equal(np.asarray(gpu), cpu)
    assert np.asarray(gpu).dtype == np.dtype(target)


def test_the_emulated_device_rewrites_only_whole_casts() -> None:
    """The stand-in's rewrite of integer casts (into its GPU conversion) keeps the C meaning:
    a cast whose operand is followed by a postfix operator, or a parenthesised name that is a
    call, is left alone."""
    pycuda = pytest.importorskip("pycuda")
    if not getattr(pycuda, "EMULATED", False):
        pytest.skip("checks the emulated device's source rewrite")
    from pycuda._instrument import saturating_casts

    source = (
        "y = (npy_uint8)(x[i]); z = (int)(a)[3]; w = ((npy_int64)(q * 2)) + (unsigned int)(t);"
        " v = f(int)(x); p = (npy_uint32)g(x); c = (float)(k);"
    )
    assert saturating_casts(source) == (
        "y = opw_emu::cvt<npy_uint8>(x[i]); z = (int)(a)[3]; "
        "w = (opw_emu::cvt<npy_int64>(q * 2)) + opw_emu::cvt<unsigned int>(t);"
        " v = f(int)(x); p = (npy_uint32)g(x); c = (float)(k);"
    )
