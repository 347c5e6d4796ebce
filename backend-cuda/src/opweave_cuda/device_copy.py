"""Moving and copying GPU values: uploads, downloads, device copies and casts, strided views.

The functions that touch the device run at call time and need pycuda (imported lazily
through :func:`~opweave_cuda.availability.import_gpuarray`); :func:`host_for_upload` and
:func:`view_pointer` are plain arithmetic. New device arrays come from the process's
:func:`~opweave_cuda.availability.memory_pool`, so that freeing one (an intermediate of a
call) neither synchronises the device nor costs a driver call.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.availability import import_gpuarray, memory_pool
from opweave_cuda.kernels.launch import is_c_contiguous
from opweave_cuda.kernels.runtime import device_pointer

__all__ = [
    "cast",
    "contiguous",
    "copy_into",
    "copy_kernel",
    "empty",
    "host_for_upload",
    "is_contiguous",
    "strided_view",
    "to_host",
    "upload",
    "upload_into",
    "view_pointer",
]


def empty(shape: Sequence[int], dtype: Any) -> Any:
    """A new uninitialised C-contiguous ``GPUArray`` (memory from the pool)."""
    gpuarray = import_gpuarray()
    return gpuarray.GPUArray(
        tuple(int(n) for n in shape), np.dtype(dtype), allocator=memory_pool().allocate
    )


def host_for_upload(value: Any) -> np.ndarray:
    """``value`` as a C-contiguous, native-byte-order ndarray of the same shape: the bytes an
    upload copies as they are (0-d arrays stay 0-d, which ``np.ascontiguousarray`` would
    turn into 1-element 1-d ones)."""
    host = np.asarray(value, order="C")
    if not host.dtype.isnative:
        host = host.astype(host.dtype.newbyteorder("="), order="C")
    return host


def upload(value: Any) -> Any:
    """A new ``GPUArray`` holding the host array ``value`` (same shape and dtype)."""
    host = host_for_upload(value)
    out = empty(host.shape, host.dtype)
    if host.size:
        import pycuda.driver as drv

        drv.memcpy_htod(device_pointer(out), host)
    return out


def upload_into(dst: Any, value: Any) -> None:
    """Copy the host array ``value`` into the C-contiguous ``GPUArray`` ``dst`` (same shape
    and dtype)."""
    host = host_for_upload(value)
    if tuple(host.shape) != tuple(dst.shape) or host.dtype != dst.dtype or not is_contiguous(dst):
        raise ValueError(
            f"upload_into: cannot copy a host array of shape {host.shape} and dtype "
            f"{host.dtype} into a GPUArray of shape {tuple(dst.shape)} and dtype {dst.dtype}"
        )
    if host.size:
        import pycuda.driver as drv

        drv.memcpy_htod(device_pointer(dst), host)


def is_contiguous(x: Any) -> bool:
    """Whether the array ``x`` is C-contiguous (length-1 axes may have any stride)."""
    return is_c_contiguous(x.shape, x.strides, np.dtype(x.dtype).itemsize)


def view_pointer(x: Any, offset: int) -> int:
    """The device address ``offset`` bytes from ``x``'s first element."""
    return device_pointer(x) + int(offset)


def strided_view(x: Any, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Any:
    """A ``GPUArray`` viewing ``x``'s memory with its own shape, byte strides and offset.

    The view keeps ``x`` alive (``base=x``); no data moves. A view without elements gets
    no memory (pycuda's convention for empty arrays: ``gpudata`` is ``None``).
    """
    gpuarray = import_gpuarray()
    shape = tuple(int(n) for n in shape)
    strides = tuple(int(s) for s in strides)
    if math.prod(shape) == 0:
        return gpuarray.GPUArray(shape, x.dtype, strides=strides)
    if x.gpudata is None:
        raise ValueError(f"strided_view: a view of shape {shape} of an empty GPUArray")
    return gpuarray.GPUArray(
        shape, x.dtype, gpudata=view_pointer(x, offset), strides=strides, base=x
    )


def copy_kernel(src_dtype: Any, dst_dtype: Any, ndim: int) -> Any:
    """The generated elementwise kernel copying ``ndim``-d ``src_dtype`` values into
    ``dst_dtype`` ones (NumPy's C casts; no pycuda needed to generate it)."""
    import opweave.scalar as ps
    from opweave_cuda.kernels import elemwise_kernel
    from opweave_cuda.type import GpuArrayType

    shape = (None,) * ndim
    src, dst = GpuArrayType(src_dtype, shape=shape), GpuArrayType(dst_dtype, shape=shape)
    return elemwise_kernel(ps.identity, [src], [dst])


def copy_into(dst: Any, src: Any) -> None:
    """Copy the values of the GPUArray ``src`` into ``dst`` (same shape and dtype).

    Contiguous arrays are copied with one ``memcpy_dtod``; strided ones through the
    generated elementwise copy kernel.
    """
    if tuple(dst.shape) != tuple(src.shape) or dst.dtype != src.dtype:
        raise ValueError(
            f"copy_into: cannot copy a GPUArray of shape {src.shape} and dtype {src.dtype} into "
            f"one of shape {dst.shape} and dtype {dst.dtype}"
        )
    if math.prod(int(n) for n in src.shape) == 0:
        return
    if is_contiguous(src) and is_contiguous(dst):
        import pycuda.driver as drv

        drv.memcpy_dtod(device_pointer(dst), device_pointer(src), src.nbytes)
        return
    copy_kernel(src.dtype, src.dtype, len(src.shape))([src], [dst])


def cast(x: Any, dtype: Any) -> Any:
    """A new C-contiguous ``GPUArray`` of ``x``'s values converted to ``dtype`` on the device
    (C conversions, as NumPy's ``astype``; any layout, ``float16`` and ``bool`` included)."""
    out = empty(x.shape, dtype)
    if out.size:
        copy_kernel(x.dtype, dtype, len(x.shape))([x], [out])
    return out


def contiguous(x: Any) -> Any:
    """``x`` itself when C-contiguous, else a C-contiguous copy made on the device."""
    if is_contiguous(x):
        return x
    out = empty(x.shape, x.dtype)
    copy_into(out, x)
    return out


def to_host(x: Any) -> np.ndarray:
    """Download the GPUArray ``x`` into a new C-contiguous ndarray.

    The download is a synchronous copy on the default stream: it waits for the kernels
    launched before it.
    """
    x = contiguous(x)
    out = np.empty(tuple(int(n) for n in x.shape), dtype=x.dtype)
    if out.size:
        import pycuda.driver as drv

        try:
            drv.memcpy_dtoh(out, device_pointer(x))
        except drv.Error as exc:
            raise RuntimeError(
                f"copying a {x.dtype} array of shape {tuple(x.shape)} to the host failed: {exc}. "
                "A kernel launched before the copy may have failed; set "
                "opweave.config.cuda__check_launches = True to check each launch."
            ) from exc
    return out
