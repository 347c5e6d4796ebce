"""Moving and copying GPU values: downloads, device-to-device copies, strided views.

Every function here runs at call time and needs pycuda (imported lazily through
:func:`~opweave_cuda.availability.import_gpuarray`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.availability import import_gpuarray

__all__ = ["contiguous", "copy_into", "empty", "strided_view", "to_host"]


def empty(shape: Sequence[int], dtype: Any) -> Any:
    """A new uninitialised C-contiguous ``GPUArray``."""
    return import_gpuarray().empty(tuple(int(n) for n in shape), np.dtype(dtype))


def strided_view(x: Any, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Any:
    """A ``GPUArray`` viewing ``x``'s memory with its own shape, byte strides and offset.

    The view keeps ``x`` alive (``base=x``); no data moves.
    """
    gpuarray = import_gpuarray()
    return gpuarray.GPUArray(
        tuple(int(n) for n in shape),
        x.dtype,
        gpudata=int(x.gpudata) + int(offset),
        strides=tuple(int(s) for s in strides),
        base=x,
    )


def _copy_kernel(x: Any) -> Any:
    """The generated elementwise identity kernel for values shaped like ``x``."""
    import opweave.scalar as ps
    from opweave_cuda.kernels import elemwise_kernel
    from opweave_cuda.type import GpuArrayType

    gtype = GpuArrayType(x.dtype, shape=(None,) * len(x.shape))
    return elemwise_kernel(ps.identity, [gtype], [gtype])


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
    if src.size == 0:
        return
    if src.flags.c_contiguous and dst.flags.c_contiguous:
        import pycuda.driver as drv

        drv.memcpy_dtod(dst.gpudata, src.gpudata, src.nbytes)
        return
    _copy_kernel(src)([src], [dst])


def contiguous(x: Any) -> Any:
    """``x`` itself when C-contiguous, else a C-contiguous copy made on the device."""
    if x.flags.c_contiguous:
        return x
    out = empty(x.shape, x.dtype)
    copy_into(out, x)
    return out


def to_host(x: Any) -> np.ndarray:
    """Download the GPUArray ``x`` into a new ndarray."""
    return contiguous(x).get()
