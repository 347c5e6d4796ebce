"""GpuArrayType: the symbolic side everywhere, value handling on a GPU."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import numpy as np
import pytest

import opweave.tensor as ot
from opweave_cuda import CudaUnavailableError, GpuArrayType, GpuArrayVariable
from opweave_cuda.availability import import_gpuarray
from opweave_cuda.transfer_ops import GpuFromHost
from opweave_cuda.type import _byte_range

HAS_PYCUDA = importlib.util.find_spec("pycuda") is not None


def test_eq_hash_and_str() -> None:
    a = GpuArrayType("float32", shape=(None, 3))
    assert a == GpuArrayType("float32", shape=(None, 3))
    assert hash(a) == hash(GpuArrayType("float32", shape=(None, 3)))
    assert a != GpuArrayType("float64", shape=(None, 3))
    assert a != GpuArrayType("float32", shape=(None, None))
    assert a != ot.TensorType("float32", shape=(None, 3))
    assert repr(a) == "GpuArrayType(float32, shape=(None, 3))"
    assert str(GpuArrayType("int64", shape=(), name="n")) == "n"
    assert len({a, GpuArrayType("float32", shape=(None, 3))}) == 1


def test_attributes_and_broadcastable_constructor() -> None:
    t = GpuArrayType("float64", broadcastable=(True, False))
    assert t.shape == (1, None) and t.ndim == 2 and t.broadcastable == (True, False)
    assert t.numpy_dtype == np.dtype("float64")
    assert t.host_type() == ot.TensorType("float64", shape=(1, None))
    assert GpuArrayType.from_host_type(ot.TensorType("int8", shape=(2,))) == GpuArrayType(
        "int8", shape=(2,)
    )


def test_make_variable_and_call() -> None:
    t = GpuArrayType("float32", shape=(None,))
    g = t("g")
    assert isinstance(g, GpuArrayVariable) and g.type is t and g.name == "g" and g.owner is None
    assert g.ndim == 1 and g.dtype == "float32" and g.broadcastable == (False,)
    assert isinstance(t.make_variable(), GpuArrayVariable)


def test_clone() -> None:
    t = GpuArrayType("float32", shape=(None, 3))
    assert t.clone() == t and t.clone() is not t
    assert t.clone(dtype="float64") == GpuArrayType("float64", shape=(None, 3))
    assert t.clone(shape=(2, 3)) == GpuArrayType("float32", shape=(2, 3))
    assert t.clone(broadcastable=(True, False)).shape == (1, None)


def test_strict_filter_rejects_host_values_naming_the_type() -> None:
    t = GpuArrayType("float32", shape=(None,))
    with pytest.raises(TypeError, match=r"GpuArrayType\(float32.*strict.*GPUArray.*ndarray"):
        t.filter(np.zeros(3, dtype="float32"), strict=True)
    with pytest.raises(TypeError, match="cannot hold None"):
        t.filter(None, strict=True)
    assert not t.is_valid_value(np.zeros(3, dtype="float32"))


def test_host_checks_happen_before_any_upload() -> None:
    t = GpuArrayType("int32", shape=(None,))
    with pytest.raises(TypeError, match="expected 1 dimension"):
        t.filter(np.zeros((2, 2), dtype="int32"))
    with pytest.raises(TypeError, match="dtype float64 without risking loss"):
        t.filter(np.zeros(2))
    with pytest.raises(TypeError, match="cannot hold None"):
        t.filter(None)


@pytest.mark.skipif(HAS_PYCUDA, reason="checks the message given when pycuda is missing")
def test_upload_without_pycuda_names_pycuda_and_the_extra(machine_without_pycuda: None) -> None:
    t = GpuArrayType("float32", shape=(None,))
    with pytest.raises(
        CudaUnavailableError, match=r"pycuda is not installed.*opweave-cuda\[pycuda\]"
    ):
        t.filter(np.zeros(3, dtype="float32"))


def test_size_and_shape_info() -> None:
    t = GpuArrayType("float32", shape=(None, None))
    assert t.get_shape_info(np.zeros((3, 5))) == (3, 5)
    assert t.get_size((3, 5)) == 60
    assert t.get_size((0, 5)) == 0


def test_may_share_memory_is_false_for_host_values() -> None:
    a = np.zeros(4)
    assert GpuArrayType.may_share_memory(a, a) is False


def _fake(ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int = 4):
    return SimpleNamespace(
        gpudata=ptr, shape=shape, strides=strides, dtype=np.dtype(f"f{itemsize}")
    )


def test_device_byte_ranges() -> None:
    assert _byte_range(_fake(1000, (10,), (4,))) == (1000, 1040)
    assert _byte_range(_fake(1000, (2, 3), (12, 4))) == (1000, 1024)
    assert _byte_range(_fake(1000, (3,), (-4,))) == (992, 1004)
    lo, hi = _byte_range(_fake(1000, (0, 3), (12, 4)))
    assert lo == hi  # no element: an empty range
    # pycuda gives an array without elements no memory (gpudata None): no range, no error
    lo, hi = _byte_range(_fake(None, (0,), (4,)))  # type: ignore[arg-type]
    assert lo == hi


def test_convert_variable_uploads_compatible_host_tensors() -> None:
    t = GpuArrayType("float32", shape=(None,))
    x = ot.fvector("x")
    converted = t.filter_variable(x)
    assert isinstance(converted.owner.op, GpuFromHost) and converted.type == t
    more_specific = GpuArrayType("float32", shape=(3,))("g")
    assert t.filter_variable(more_specific) is more_specific
    with pytest.raises(TypeError, match="cannot convert"):
        t.filter_variable(ot.dvector("d"))
    with pytest.raises(TypeError, match="cannot convert"):
        t.filter_variable(GpuArrayType("float32", shape=(None, None))("m"))


# ---------------------------------------------------------------------- on a GPU


@pytest.mark.cuda
def test_filter_gpuarray_strict_and_upload() -> None:
    gpuarray = import_gpuarray()  # the backend's context (a bare pycuda import has none)

    t = GpuArrayType("float32", shape=(None,))
    g = gpuarray.to_gpu(np.arange(3, dtype="float32"))
    assert t.filter(g, strict=True) is g
    up = t.filter(np.arange(3, dtype="float32"))
    assert isinstance(up, gpuarray.GPUArray)
    np.testing.assert_array_equal(up.get(), [0, 1, 2])
    with pytest.raises(TypeError, match="strict"):
        t.filter(gpuarray.to_gpu(np.arange(3, dtype="float64")), strict=True)
    with pytest.raises(TypeError, match="loss of precision"):
        t.filter(gpuarray.to_gpu(np.arange(3, dtype="float64")))
    down = t.filter(gpuarray.to_gpu(np.arange(3, dtype="float64")), allow_downcast=True)
    assert down.dtype == np.float32
    with pytest.raises(TypeError, match="dimension"):
        t.filter(gpuarray.to_gpu(np.zeros((2, 2), dtype="float32")))
    assert t.is_valid_value(g)


@pytest.mark.cuda
def test_filter_inplace_reuses_the_device_buffer() -> None:
    gpuarray = import_gpuarray()  # the backend's context (a bare pycuda import has none)

    t = GpuArrayType("float32", shape=(None,))
    storage = gpuarray.to_gpu(np.zeros(4, dtype="float32"))
    ptr = int(storage.gpudata)
    out = t.filter_inplace(np.arange(4, dtype="float32"), storage)
    assert out is storage and int(out.gpudata) == ptr
    np.testing.assert_array_equal(storage.get(), [0, 1, 2, 3])
    other = gpuarray.to_gpu(np.full(4, 7, dtype="float32"))
    assert t.filter_inplace(other, storage) is storage
    np.testing.assert_array_equal(storage.get(), [7, 7, 7, 7])
    bigger = t.filter_inplace(np.zeros(5, dtype="float32"), storage)
    assert bigger is not storage and bigger.shape == (5,)


@pytest.mark.cuda
def test_values_eq_and_may_share_memory_on_device() -> None:
    gpuarray = import_gpuarray()  # the backend's context (a bare pycuda import has none)

    t = GpuArrayType("float32", shape=(None,))
    a = gpuarray.to_gpu(np.arange(6, dtype="float32"))
    assert t.values_eq(a, a.copy())
    assert t.values_eq_approx(a, gpuarray.to_gpu(np.arange(6, dtype="float32") + 1e-7))
    assert not t.values_eq(a, gpuarray.to_gpu(np.zeros(6, dtype="float32")))
    assert t.may_share_memory(a, a[2:])
    assert not t.may_share_memory(a[:3], a[3:])
    assert not t.may_share_memory(a, a.copy())


@pytest.mark.cuda
def test_filter_casts_on_the_device_and_keeps_zero_d_values() -> None:
    from opweave_cuda.device_copy import strided_view, to_host

    gpuarray = import_gpuarray()
    host = np.arange(6.0).reshape(2, 3)
    g = gpuarray.to_gpu(host)
    half = GpuArrayType("float16", shape=(None, None)).filter(g, allow_downcast=True)
    assert half.dtype == np.float16  # pycuda's astype has no float16
    np.testing.assert_array_equal(to_host(half), host.astype("float16"))
    flipped = strided_view(g, (2, 3), (-24, 8), offset=24)  # g[::-1], not contiguous
    f32 = GpuArrayType("float32", shape=(None, None)).filter(flipped, allow_downcast=True)
    np.testing.assert_array_equal(to_host(f32), host[::-1].astype("float32"))
    scalar = GpuArrayType("float32", shape=()).filter(np.float32(2.5))
    assert tuple(scalar.shape) == () and float(to_host(scalar)) == 2.5


@pytest.mark.cuda
def test_filter_inplace_from_an_overlapping_view() -> None:
    from opweave_cuda.device_copy import strided_view, to_host

    gpuarray = import_gpuarray()
    t = GpuArrayType("float32", shape=(None,))
    storage = gpuarray.to_gpu(np.arange(6, dtype="float32"))
    reversed_view = strided_view(storage, (6,), (-4,), offset=20)
    assert t.filter_inplace(reversed_view, storage) is storage
    np.testing.assert_array_equal(to_host(storage), np.arange(6, dtype="float32")[::-1])
