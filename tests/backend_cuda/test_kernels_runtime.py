"""The generated kernels run on a GPU and agree with NumPy (skipped without GPU and pycuda)."""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

import numpy as np
import pytest

import opweave.scalar as ps
from opweave.scalar.composite import Composite
from opweave.scalar.type import get_scalar_type
from opweave.tensor.type import TensorType
from opweave_cuda.kernels import compile_module, elemwise_kernel, reduction_kernel
from opweave_cuda.kernels.gemm import gemm

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def gpuarray() -> Any:
    """``pycuda.gpuarray`` in the backend's own context (the device's primary context):
    a second context (``pycuda.autoinit``) could not use the modules the backend loaded."""
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


def _device_like(gpuarray: Any, host: np.ndarray) -> Any:
    """A GPUArray with ``host``'s values *and strides* (the bytes it spans, uploaded as is;
    negative strides included)."""
    lo = sum((n - 1) * s for n, s in zip(host.shape, host.strides, strict=True) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(host.shape, host.strides, strict=True) if s > 0)
    start = host.__array_interface__["data"][0] + lo
    raw = (ctypes.c_char * (hi - lo + host.itemsize)).from_address(start)
    block = gpuarray.to_gpu(np.frombuffer(raw, dtype=np.uint8).copy())
    return gpuarray.GPUArray(
        host.shape, host.dtype, gpudata=int(block.gpudata) - lo, strides=host.strides, base=block
    )


def _tt(dtype: str, ndim: int) -> TensorType:
    return TensorType(dtype, (None,) * ndim)


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(1, 50, size=shape).astype(dtype)
    return rng.uniform(0.5, 2.0, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "uint8", "int64"])
@pytest.mark.parametrize("layout", ["contiguous", "broadcast", "transposed"])
def test_elemwise_matches_numpy(gpuarray: Any, dtype: str, layout: str) -> None:
    rng = np.random.default_rng(0)
    x, y = get_scalar_type(dtype)(), get_scalar_type(dtype)()
    comp = Composite([x, y], [ps.add(ps.mul(x, y), x), ps.maximum(x, y)])
    kernel = elemwise_kernel(comp, [_tt(dtype, 2)] * 2, [_tt(dtype, 2)] * 2)
    a = _random(rng, (37, 129), dtype)
    b = {
        "contiguous": _random(rng, (37, 129), dtype),
        "broadcast": _random(rng, (1, 129), dtype),
        "transposed": _random(rng, (129, 37), dtype).T,
    }[layout]
    ga = gpuarray.to_gpu(a)
    gb = gpuarray.to_gpu(np.ascontiguousarray(b))
    if layout == "transposed":
        gb = gpuarray.to_gpu(np.ascontiguousarray(b.T)).transpose()
    out0, out1 = gpuarray.empty((37, 129), dtype), gpuarray.empty((37, 129), dtype)
    kernel([ga, gb], [out0, out1])
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(out0.get(), a * b + a, rtol=tol)
    np.testing.assert_array_equal(out1.get(), np.maximum(a, b))


def test_elemwise_inplace_and_compile_once(gpuarray: Any) -> None:
    kernel = elemwise_kernel(ps.exp, [_tt("float64", 1)], [_tt("float64", 1)], {0: 0})
    host = np.linspace(-1, 1, 1000)
    g = gpuarray.to_gpu(host)
    kernel([g], [g])
    np.testing.assert_allclose(g.get(), np.exp(host), rtol=1e-14)
    assert compile_module(kernel.contiguous.source) is compile_module(kernel.contiguous.source)


@pytest.mark.parametrize(
    ("op", "ref", "dtype", "out", "acc"),
    [
        (ps.add, np.sum, "float32", "float32", "float64"),
        (ps.add, np.sum, "float64", "float64", None),
        (ps.add, np.sum, "int8", "int64", "int64"),
        (ps.mul, np.prod, "int32", "int64", "int64"),
        (ps.maximum, np.max, "float32", "float32", None),
        (ps.minimum, np.min, "int16", "int16", None),
        (ps.and_, np.all, "bool", "bool", None),
        (ps.or_, np.any, "bool", "bool", None),
    ],
)
def test_reduction_every_axis_set(
    gpuarray: Any, op: Any, ref: Any, dtype: str, out: str, acc: str | None
) -> None:
    rng = np.random.default_rng(1)
    x = _random(rng, (6, 33, 5), dtype)
    if op is ps.mul:
        x = (x % 3 + 1).astype(dtype)
    for r in range(4):
        for axes in itertools.combinations(range(3), r):
            kernel = reduction_kernel(op, axes, _tt(dtype, 3), _tt(out, 3 - r), acc)
            for source in (x, x.transpose(2, 0, 1).copy().transpose(1, 2, 0)):
                gx = _device_like(gpuarray, source)
                expected = ref(source, axis=axes).astype(out) if axes else source.astype(out)
                gout = gpuarray.empty(expected.shape, out)
                kernel(gx, gout)
                np.testing.assert_allclose(gout.get(), expected, rtol=1e-5)


def test_reduction_empty_gives_identity(gpuarray: Any) -> None:
    kernel = reduction_kernel(ps.add, (0,), _tt("float32", 2), _tt("float32", 1))
    gout = gpuarray.to_gpu(np.full(4, 7, "float32"))
    kernel(gpuarray.empty((0, 4), "float32"), gout)
    np.testing.assert_array_equal(gout.get(), np.zeros(4))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((65, 33), (33, 17)), ((65, 33), (33,)), ((33,), (33, 17))]
)
def test_gemm_matches_numpy_dot(
    gpuarray: Any, dtype: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    expected = np.dot(a, b)
    out = gpuarray.empty(expected.shape, dtype)
    gemm(gpuarray.to_gpu(a), gpuarray.to_gpu(b), out)
    np.testing.assert_allclose(out.get(), expected, rtol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize(
    ("op", "ref", "dtype", "acc"),
    [
        (ps.add, np.sum, "float32", "float32"),
        (ps.maximum, np.max, "float32", "float32"),
        (ps.add, np.sum, "float16", "float32"),
        (ps.add, np.sum, "int32", "int64"),
    ],
)
def test_split_full_reduction_matches_numpy(
    gpuarray: Any, op: Any, ref: Any, dtype: str, acc: str
) -> None:
    """A full reduction of 3e6 elements runs split (partial + finish kernels)."""
    rng = np.random.default_rng(5)
    x = _random(rng, (3, 1000, 1000), dtype)
    if dtype == "float16":
        # Values whose sum (about 3750) a float16 result can hold; the float32 accumulator
        # keeps the 3e6 partial sums exact enough for the float16 rounding of the result.
        x = (x / np.float16(1000)).astype(dtype)
    out_dtype = "int64" if dtype == "int32" else dtype
    kernel = reduction_kernel(op, (0, 1, 2), _tt(dtype, 3), _tt(out_dtype, 0), acc)
    assert kernel.split(x)[0] > 1
    gout = gpuarray.empty((), out_dtype)
    kernel(gpuarray.to_gpu(x), gout)
    expected = ref(x.astype("float64" if dtype.startswith("float") else "int64"))
    rtol = 1e-2 if dtype == "float16" else 1e-5
    np.testing.assert_allclose(float(gout.get()), float(expected), rtol=rtol)


def test_float16_sum_beyond_float16_range_is_inf_as_in_numpy(gpuarray: Any) -> None:
    """The float32 accumulator does not widen the float16 result: a sum past 65504 is inf."""
    x = np.full((3, 1000, 1000), 1.25, dtype="float16")
    kernel = reduction_kernel(ps.add, (0, 1, 2), _tt("float16", 3), _tt("float16", 0), "float32")
    gout = gpuarray.empty((), "float16")
    kernel(gpuarray.to_gpu(x), gout)
    with np.errstate(over="ignore"):
        expected = np.float16(np.sum(x, dtype="float32"))
    assert np.isinf(expected)
    assert np.isinf(gout.get()) and gout.get() > 0


def test_reduction_of_negative_strides(gpuarray: Any) -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(40, 50, 3))[::-2, :, ::-1]
    kernel = reduction_kernel(ps.add, (0, 2), _tt("float64", 3), _tt("float64", 1), "float64")
    gout = gpuarray.empty((50,), "float64")
    kernel(_device_like(gpuarray, x), gout)
    np.testing.assert_allclose(gout.get(), x.sum(axis=(0, 2)), rtol=1e-12)


def test_elemwise_bool_and_negative_strides(gpuarray: Any) -> None:
    x, y = get_scalar_type("bool")(), get_scalar_type("float64")()
    comp = Composite([x, y], [ps.switch(x, y, ps.neg(y))])
    kernel = elemwise_kernel(comp, [_tt("bool", 2), _tt("float64", 2)], [_tt("float64", 2)])
    rng = np.random.default_rng(7)
    cond = rng.integers(0, 2, size=(9, 8)).astype(bool)
    values = rng.normal(size=(18, 8))[::-2, ::-1]
    out = gpuarray.empty((9, 8), "float64")
    kernel([gpuarray.to_gpu(cond), _device_like(gpuarray, values)], [out])
    np.testing.assert_array_equal(out.get(), np.where(cond, values, -values))


def test_gemm_with_empty_inner_dimension_writes_zeros(gpuarray: Any) -> None:
    out = gpuarray.to_gpu(np.full((3, 2), 7.0))
    gemm(gpuarray.empty((3, 0), "float64"), gpuarray.empty((0, 2), "float64"), out)
    np.testing.assert_array_equal(out.get(), np.zeros((3, 2)))
