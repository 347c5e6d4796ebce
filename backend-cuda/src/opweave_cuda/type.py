"""The GPU array Type: values are ``pycuda.gpuarray.GPUArray``.

The symbolic side (equality, hashing, printing, variables, cloning) needs no pycuda.
Handling values does: pycuda is imported lazily, and a clear
:class:`~opweave_cuda.availability.CudaUnavailableError` names pycuda and the
``opweave-cuda[pycuda]`` extra when it is missing. Host values are checked and converted
by the equivalent :class:`~opweave.tensor.type.TensorType` (Theano's documented downcasting rules)
before they are uploaded.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Variable
from opweave.tensor.type import ShapedType, TensorType
from opweave_cuda.variable import GpuArrayConstant, GpuArrayVariable

__all__ = ["GpuArrayType", "is_gpuarray"]


def is_gpuarray(value: Any) -> bool:
    """True if ``value`` is a ``pycuda.gpuarray.GPUArray`` (never imports pycuda)."""
    module = sys.modules.get("pycuda.gpuarray")
    return module is not None and isinstance(value, module.GPUArray)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class GpuArrayType(ShapedType):
    """The Type of ``pycuda.gpuarray.GPUArray`` values of one dtype, rank and static shape.

    Parameters
    ----------
    dtype
        A NumPy dtype (or ``"floatX"``), as for :class:`~opweave.tensor.type.TensorType`.
    shape
        The static shape: one entry per dimension, ``None`` (unknown) or an ``int``.
    broadcastable
        Alternative to ``shape``: a tuple of bools.
    name
        Optional name, used by ``str``.

    Examples
    --------
    >>> g = GpuArrayType("float32", shape=(None, 3))("g")
    >>> g.type
    GpuArrayType(float32, shape=(None, 3))
    """

    variable_type: ClassVar[type[Variable]] = GpuArrayVariable
    constant_type: ClassVar[type[Any]] = GpuArrayConstant
    #: Where values of this Type live (``transfer`` targets).
    context_name: ClassVar[str] = "cuda"

    def host_type(self) -> TensorType:
        """The :class:`TensorType` of the same dtype and static shape (values on the host)."""
        return TensorType(self.dtype, shape=self.shape)

    @classmethod
    def from_host_type(cls, ttype: TensorType) -> GpuArrayType:
        """The GPU Type matching the host Type ``ttype``."""
        return cls(ttype.dtype, shape=ttype.shape)

    # ------------------------------------------------------------------ filtering

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as a ``GPUArray`` of this Type, or raise.

        Parameters
        ----------
        data
            A ``GPUArray``, or (unless ``strict``) anything ``TensorType.filter`` accepts,
            which is then converted on the host and uploaded.
        strict
            Accept only a ``GPUArray`` of exactly this dtype, rank and static shape, and
            return it unchanged.
        allow_downcast
            As for ``TensorType.filter``: ``True`` allows lossy casts, ``None`` the
            Type's default rule, ``False`` none.

        Raises
        ------
        TypeError
            For a wrong dtype (strict, or a lossy cast), rank or static shape, ``None``,
            or a non-numeric value; the message names this Type.
        ValueError
            For ragged nested sequences.
        CudaUnavailableError
            When a host value must be uploaded and pycuda or a CUDA device is missing.
        """
        if is_gpuarray(data):
            if data.dtype != self.numpy_dtype:
                if strict:
                    raise TypeError(
                        f"{self!r} (strict) expected a GPUArray of dtype {self.dtype}, got "
                        f"dtype {data.dtype}"
                    )
                if not allow_downcast and not np.can_cast(data.dtype, self.numpy_dtype, "safe"):
                    raise TypeError(
                        f"{self!r} cannot store a GPUArray of dtype {data.dtype} without "
                        f"risking loss of precision: cast it to {self.dtype} first, or pass "
                        "allow_downcast=True"
                    )
                self._check_shape(tuple(data.shape))
                from opweave_cuda.device_copy import cast

                return cast(data, self.numpy_dtype)
            self._check_shape(tuple(data.shape))
            return data
        if strict:
            if data is None:
                raise TypeError(f"{self!r} cannot hold None: expected a pycuda GPUArray")
            raise TypeError(
                f"{self!r} (strict) expected a pycuda.gpuarray.GPUArray of dtype {self.dtype}, "
                f"got {type(data).__name__} {_short(data)}"
            )
        host = self.host_type().filter(data, strict=False, allow_downcast=allow_downcast)
        from opweave_cuda.device_copy import upload

        return upload(host)

    def _check_shape(self, shape: tuple[int, ...]) -> None:
        if len(shape) != self.ndim:
            raise TypeError(
                f"{self!r} expected {self.ndim} dimension(s), got a GPUArray with {len(shape)} "
                f"(wrong rank: shape {shape})"
            )
        for i, want in enumerate(self.shape):
            if want is not None and shape[i] != want:
                raise TypeError(
                    f"{self!r}: the value's shape {shape} does not match the static shape "
                    f"{self.shape} (wrong shape)"
                )

    def filter_inplace(
        self,
        value: Any,
        storage: Any,
        strict: bool = False,
        allow_downcast: bool | None = None,
    ) -> Any:
        """Filter ``value`` and write it into ``storage`` when that device buffer fits.

        Parameters
        ----------
        value
            The new value: a ``GPUArray`` or (unless ``strict``) a host value.
        storage
            The old value: reused when it is a C-contiguous ``GPUArray`` of this dtype
            and the new value's shape (host values are copied straight into it; device
            values are copied device to device).
        strict, allow_downcast
            As for :meth:`filter`.

        Returns
        -------
        GPUArray
            ``storage`` holding the new values, or the filtered value when ``storage``
            cannot be reused.
        """
        from opweave_cuda import device_copy

        reusable = (
            is_gpuarray(storage)
            and storage.dtype == self.numpy_dtype
            and device_copy.is_contiguous(storage)
        )
        if is_gpuarray(value) or strict or not reusable:
            data = self.filter(value, strict=strict, allow_downcast=allow_downcast)
            if reusable and data is not storage and tuple(data.shape) == tuple(storage.shape):
                if self.may_share_memory(data, storage):
                    data = device_copy.cast(data, data.dtype)  # a copy: the ranges overlap
                device_copy.copy_into(storage, data)
                return storage
            return data
        host = self.host_type().filter(value, strict=False, allow_downcast=allow_downcast)
        if tuple(host.shape) == tuple(storage.shape):
            device_copy.upload_into(storage, host)
            return storage
        return device_copy.upload(host)

    def is_valid_value(self, a: Any) -> bool:
        """True iff ``a`` is a ``GPUArray`` of this dtype, rank and static shape."""
        try:
            self.filter(a, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    # ------------------------------------------------------------------ values

    @staticmethod
    def _to_host(a: Any) -> np.ndarray:
        if is_gpuarray(a):
            from opweave_cuda.device_copy import to_host

            return to_host(a)
        return np.asarray(a)

    def values_eq(self, a: Any, b: Any) -> bool:
        """True if ``a`` and ``b`` (GPU or host arrays) hold exactly the same values."""
        return TensorType.values_eq(self._to_host(a), self._to_host(b))

    def values_eq_approx(
        self,
        a: Any,
        b: Any,
        allow_remove_inf: bool = False,
        allow_remove_nan: bool = False,
        rtol: float | None = None,
        atol: float | None = None,
    ) -> bool:
        """``TensorType.values_eq_approx`` on the downloaded values."""
        return TensorType.values_eq_approx(
            self._to_host(a), self._to_host(b), allow_remove_inf, allow_remove_nan, rtol, atol
        )

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """True if the device byte ranges of the GPUArrays ``a`` and ``b`` overlap.

        A range runs from ``int(x.gpudata)`` over the bytes its shape and strides reach
        (``nbytes`` for contiguous arrays). Arrays without elements (pycuda gives them no
        memory: ``gpudata`` is ``None``) and non-GPU values never share device memory.
        """
        if not (is_gpuarray(a) and is_gpuarray(b)):
            return False
        (a_lo, a_hi), (b_lo, b_hi) = _byte_range(a), _byte_range(b)
        if a_lo == a_hi or b_lo == b_hi:
            return False
        return a_lo < b_hi and b_lo < a_hi

    def get_shape_info(self, obj: Any) -> tuple[int, ...]:
        """The value's shape (what :meth:`get_size` needs)."""
        return tuple(int(n) for n in obj.shape)

    # ------------------------------------------------------------------ identity

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` usable where this Type is expected, or ``None``.

        A GPU variable of a more specific Type is returned as is; a host tensor of this
        dtype and rank whose static shape fits is transferred (``GpuFromHost``), so that
        ``updates=[(gpu_shared, host_expression)]`` works.
        """
        vtype = var.type
        if self.is_super(vtype):
            return var
        if isinstance(vtype, TensorType) and self.host_type().is_super(vtype):
            from opweave_cuda.transfer_ops import gpu_from_host

            return gpu_from_host(var)
        return None


def _byte_range(x: Any) -> tuple[int, int]:
    """``[lo, hi)``: the device bytes the strided array ``x`` can touch."""
    if x.gpudata is None or any(int(n) == 0 for n in x.shape):
        return 0, 0
    start = int(x.gpudata)
    lo = hi = start
    for n, s in zip(x.shape, x.strides, strict=True):
        extent = (int(n) - 1) * int(s)
        if extent < 0:
            lo += extent
        else:
            hi += extent
    return lo, hi + x.dtype.itemsize
