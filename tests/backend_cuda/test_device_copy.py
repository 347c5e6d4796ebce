"""Device copies, uploads and views: the host arithmetic everywhere, the copies on a GPU."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from opweave_cuda import device_copy
from opweave_cuda.device_copy import host_for_upload, view_pointer


def test_host_for_upload_keeps_the_rank_and_makes_c_order() -> None:
    # np.ascontiguousarray would give a 0-d value one dimension
    for value in (np.array(2.5), np.float32(1.5), 3, True):
        host = host_for_upload(value)
        assert host.shape == () and host.flags.c_contiguous
    x = np.arange(12.0).reshape(3, 4)
    assert host_for_upload(x) is x
    t = host_for_upload(x.T)
    assert t.shape == (4, 3) and t.flags.c_contiguous
    np.testing.assert_array_equal(t, x.T)
    r = host_for_upload(x[::-1, ::2])
    assert r.flags.c_contiguous and r.shape == (3, 2)
    np.testing.assert_array_equal(r, x[::-1, ::2])
    swapped = host_for_upload(x.astype(">f8" if np.little_endian else "<f8"))
    assert swapped.dtype.isnative and swapped.dtype == np.float64  # the device reads native
    np.testing.assert_array_equal(swapped, x)


def test_view_pointer_adds_the_byte_offset() -> None:
    assert view_pointer(SimpleNamespace(gpudata=1 << 40), 24) == (1 << 40) + 24
    assert view_pointer(SimpleNamespace(gpudata=4096), -8) == 4088
    assert view_pointer(SimpleNamespace(gpudata=None), 0) == 0


def test_is_contiguous_ignores_length_one_strides() -> None:
    def arr(shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
        return SimpleNamespace(shape=shape, strides=strides, dtype=np.dtype("float32"))

    assert device_copy.is_contiguous(arr((3, 4), (16, 4)))
    assert device_copy.is_contiguous(arr((1, 4), (0, 4)))  # a broadcast row of one
    assert device_copy.is_contiguous(arr((0, 4), (4, 4)))
    assert not device_copy.is_contiguous(arr((4, 3), (4, 16)))
    assert not device_copy.is_contiguous(arr((3,), (-4,)))


# ---------------------------------------------------------------------- on a GPU


@pytest.fixture(scope="module")
def gpuarray() -> Any:
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


@pytest.mark.cuda
def test_upload_and_download_keep_shape_and_rank(gpuarray: Any) -> None:
    for host in (np.array(2.5, "float32"), np.arange(6, dtype="int16").reshape(2, 3).T):
        g = device_copy.upload(host)
        assert tuple(g.shape) == host.shape and g.dtype == host.dtype
        back = device_copy.to_host(g)
        assert back.shape == host.shape and back.flags.c_contiguous
        np.testing.assert_array_equal(back, host)
    empty = device_copy.upload(np.zeros((0, 3)))
    assert tuple(empty.shape) == (0, 3) and device_copy.to_host(empty).shape == (0, 3)


@pytest.mark.cuda
def test_views_copies_and_casts(gpuarray: Any) -> None:
    host = np.arange(24, dtype="float64").reshape(4, 6)
    g = device_copy.upload(host)
    # x[::-1, 1::2]: negative row stride, an offset, a step
    view = device_copy.strided_view(g, (4, 3), (-48, 16), offset=3 * 48 + 8)
    np.testing.assert_array_equal(device_copy.to_host(view), host[::-1, 1::2])
    assert view.base is g
    dst = device_copy.empty((4, 3), "float64")
    device_copy.copy_into(dst, view)
    np.testing.assert_array_equal(device_copy.to_host(dst), host[::-1, 1::2])
    half = device_copy.cast(view, "float16")
    assert half.dtype == np.float16
    np.testing.assert_array_equal(device_copy.to_host(half), host[::-1, 1::2].astype("float16"))
    flags = device_copy.cast(g, "bool")
    np.testing.assert_array_equal(device_copy.to_host(flags), host.astype(bool))
    nothing = device_copy.strided_view(g, (0, 6), (48, 8))
    assert device_copy.to_host(nothing).shape == (0, 6)
