"""``pycuda.gpuarray`` on the emulated device: :class:`GPUArray` (shape, dtype, byte strides,
``gpudata``, ``base``) with uploads and downloads through the bounds-checked copies."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pycuda import driver


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _f_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


class GPUArray:
    """An array in emulated device memory."""

    def __init__(
        self,
        shape: Any,
        dtype: Any,
        allocator: Callable[[int], Any] | None = None,
        base: Any = None,
        gpudata: Any = None,
        strides: Sequence[int] | None = None,
        order: str = "C",
    ) -> None:
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.size = math.prod(shape)
        self.mem_size = self.size
        self.nbytes = self.size * self.dtype.itemsize
        if strides is None:
            make = _f_strides if order == "F" else _c_strides
            strides = make(shape, self.dtype.itemsize)
        self.strides = tuple(int(s) for s in strides)
        self.allocator = allocator or driver.mem_alloc
        if gpudata is None and self.size:
            gpudata = self.allocator(self.nbytes)
        self.gpudata = gpudata
        self.base = base

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def ptr(self) -> int:
        return 0 if self.gpudata is None else int(self.gpudata)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _span(self) -> tuple[int, int]:
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=True) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides, strict=True) if s > 0)
        return lo, hi + self.itemsize

    def get(self, ary: np.ndarray | None = None, pagelocked: bool = False, **kw: Any) -> np.ndarray:
        """Download into a new C-contiguous ndarray (or into ``ary``)."""
        out = np.empty(self.shape, self.dtype) if ary is None else ary
        if out.shape != self.shape or out.dtype != self.dtype:
            raise TypeError("GPUArray.get: 'ary' has the wrong shape or dtype")
        if self.size == 0:
            return out
        lo, hi = self._span()
        raw = np.empty(hi - lo, np.uint8)
        driver.memcpy_dtoh(raw, int(self.gpudata) + lo)
        out[...] = np.ndarray(self.shape, self.dtype, raw.data, -lo, self.strides)
        return out

    def set(self, ary: Any, async_: bool = False, stream: Any = None) -> None:
        """Upload the host array ``ary`` (same shape and dtype) into this contiguous array."""
        ary = np.asarray(ary)
        if ary.shape != self.shape or ary.dtype != self.dtype:
            raise ValueError("GPUArray.set: ary and self must have the same shape and dtype")
        if self.strides != _c_strides(self.shape, self.itemsize) and self.size > 1:
            raise ValueError("GPUArray.set: the emulated array is not C-contiguous")
        if self.size:
            driver.memcpy_htod(self.gpudata, np.ascontiguousarray(ary))

    def copy(self) -> GPUArray:
        out = GPUArray(self.shape, self.dtype, self.allocator)
        if self.size:
            out.set(self.get())
        return out

    def transpose(self, axes: Sequence[int] | None = None) -> GPUArray:
        """A view with permuted axes (reversed by default)."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return GPUArray(
            tuple(self.shape[a] for a in axes),
            self.dtype,
            self.allocator,
            base=self,
            gpudata=None if self.gpudata is None else int(self.gpudata),
            strides=tuple(self.strides[a] for a in axes),
        )

    def __getitem__(self, index: Any) -> GPUArray:
        """A view by basic indexing (integers, slices, ``...``), as pycuda's."""
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            at = index.index(Ellipsis)
            fill = (slice(None),) * (self.ndim - len(index) + 1)
            index = index[:at] + fill + index[at + 1 :]
        if len(index) > self.ndim:
            raise IndexError("too many indices for the GPUArray")
        index = index + (slice(None),) * (self.ndim - len(index))
        offset, shape, strides = 0, [], []
        for i, n, s in zip(index, self.shape, self.strides, strict=True):
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                shape.append(len(range(start, stop, step)))
                strides.append(s * step)
                offset += start * s
            else:
                k = int(i)
                k = k + n if k < 0 else k
                if not 0 <= k < n:
                    raise IndexError(f"index {i} is out of bounds for an axis of size {n}")
                offset += k * s
        size = math.prod(shape)
        return GPUArray(
            tuple(shape),
            self.dtype,
            self.allocator,
            base=self,
            gpudata=int(self.gpudata) + offset if size and self.gpudata is not None else None,
            strides=tuple(strides),
        )

    @property
    def T(self) -> GPUArray:
        return self.transpose()

    def fill(self, value: Any) -> GPUArray:
        self.set(np.full(self.shape, value, self.dtype))
        return self

    def __repr__(self) -> str:
        return f"<emulated GPUArray shape={self.shape} dtype={self.dtype}>"


def to_gpu(ary: Any, allocator: Callable[[int], Any] | None = None) -> GPUArray:
    """Upload ``ary`` (kept C-contiguous, or Fortran-ordered when it is)."""
    ary = np.asarray(ary)
    order = "F" if ary.flags.f_contiguous and not ary.flags.c_contiguous else "C"
    out = GPUArray(ary.shape, ary.dtype, allocator, order=order)
    if out.size:
        host = np.asfortranarray(ary) if order == "F" else np.ascontiguousarray(ary)
        driver.memcpy_htod(out.gpudata, host.reshape(-1, order="A").view(np.uint8))
    return out


def empty(shape: Any, dtype: Any, allocator: Any = None, order: str = "C") -> GPUArray:
    return GPUArray(shape, dtype, allocator, order=order)


def zeros(shape: Any, dtype: Any, allocator: Any = None, order: str = "C") -> GPUArray:
    out = GPUArray(shape, dtype, allocator, order=order)
    if out.size:
        driver.memset_d8(out.gpudata, 0, out.nbytes)
    return out


def empty_like(other: GPUArray) -> GPUArray:
    return GPUArray(other.shape, other.dtype, other.allocator)


def zeros_like(other: GPUArray) -> GPUArray:
    return zeros(other.shape, other.dtype, other.allocator)
