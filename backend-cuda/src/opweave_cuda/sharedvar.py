"""Shared variables whose value lives on the GPU: ``shared(value, target='cuda')``."""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.utils import is_masked_array
from opweave_cuda.availability import require_cuda
from opweave_cuda.transfer_ops import CUDA_TARGETS
from opweave_cuda.type import GpuArrayType, is_gpuarray
from opweave_cuda.variable import GpuArrayVariable

__all__ = ["GpuArraySharedVariable", "gpu_shared"]


class GpuArraySharedVariable(SharedVariable, GpuArrayVariable):
    """A shared variable holding a ``pycuda.gpuarray.GPUArray``.

    Function updates of it stay on the device: the update's result (a GPU array computed
    by the GPU graph) becomes the new value without passing through the host.
    """

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """Return the value: a NumPy copy, or the GPUArray with ``return_internal_type``.

        Parameters
        ----------
        borrow
            With ``return_internal_type``: return the internal GPUArray itself instead
            of a device copy. Without it, ignored (a download is always a new array).
        return_internal_type
            Return a ``GPUArray`` instead of a ``numpy.ndarray``.
        """
        from opweave_cuda import device_copy

        value = self.container.storage[0]
        if not return_internal_type:
            return device_copy.to_host(value)
        if borrow:
            return value
        out = device_copy.empty(value.shape, value.dtype)
        device_copy.copy_into(out, value)
        return out

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value, reusing the device buffer when shape and dtype match.

        Parameters
        ----------
        value
            A ``GPUArray`` or a host value the Type accepts.
        borrow
            Keep a ``GPUArray`` ``value`` itself as the internal value (no device copy).

        Raises
        ------
        TypeError, ValueError
            If the Type rejects ``value``; the old value is then kept.
        """
        cell = self.container.storage
        strict, downcast = self.container.strict, self.container.allow_downcast
        if borrow and is_gpuarray(value):
            cell[0] = self.type.filter(value, strict=strict, allow_downcast=downcast)
            return
        cell[0] = self.type.filter_inplace(value, cell[0], strict=strict, allow_downcast=downcast)


def gpu_shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    target: str | None = None,
) -> GpuArraySharedVariable | None:
    """The ``opweave_shared`` rule of this backend: a GPU shared variable for ``'cuda'``.

    Parameters
    ----------
    value
        A ``GPUArray`` (kept as is with ``borrow``, else copied on the device) or a host
        value (ndarray, NumPy scalar, Python number), uploaded.
    name, strict, allow_downcast, borrow, shape
        As for :func:`opweave.shared`.
    target
        ``'cuda'`` (or ``'gpu'``); other targets give ``None``.

    Raises
    ------
    CudaUnavailableError
        When pycuda or a CUDA device is missing (the message says which, and how to
        install pycuda).
    TypeError
        For values that are not numeric arrays or numbers.
    """
    if target not in CUDA_TARGETS:
        return None
    require_cuda(f"shared(..., target={target!r})")
    if is_gpuarray(value):
        dtype, ndim = value.dtype, len(value.shape)
        if not borrow:
            from opweave_cuda import device_copy

            copy = device_copy.empty(value.shape, value.dtype)
            device_copy.copy_into(copy, value)
            value = copy
    else:
        if is_masked_array(value):
            raise TypeError("shared: masked arrays are not supported (the mask would be lost)")
        if not isinstance(value, np.ndarray | np.generic | bool | int | float):
            raise TypeError(
                "shared: expected a numpy.ndarray, a NumPy scalar, a Python number or a "
                f"pycuda GPUArray, got {type(value).__name__} (use np.asarray for lists)"
            )
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"shared(target='cuda'): dtype {arr.dtype} is not supported")
        dtype, ndim, value = arr.dtype, arr.ndim, arr
    gtype = GpuArrayType(dtype, shape=(None,) * ndim if shape is None else shape)
    return GpuArraySharedVariable(
        gtype, value, strict=strict, allow_downcast=allow_downcast, name=name
    )
