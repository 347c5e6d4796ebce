"""Tensor variables: :class:`TensorVariable`, :class:`TensorConstant` and their operators.

The Python operators (``+``, ``*``, ``[]``, ``.sum()``, ...) build graphs with
functions of the other ``opweave.tensor`` modules (``math``, ``basic``,
``shape``, ``subtensor``, ``elemwise``, ...). Those modules build on this one (their
Ops return :class:`TensorVariable`), so this module is the lowest of the tensor
library and reaches them through the module accessors below (``_math()``, ...), each
one commented in-function import.
"""

from __future__ import annotations

import hashlib
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.compile.ops import DeepCopyOp, ViewOp
from opweave.graph.basic import Constant, OptionalApplyType, Variable
from opweave.graph.utils import MetaType
from opweave.tensor.exceptions import NotScalarConstantError  # re-exported here
from opweave.transfer import transfer as transfer_to

if TYPE_CHECKING:
    # late: opweave.tensor.type builds on this module (TensorType makes TensorVariables)
    from opweave.tensor.type import TensorType

__all__ = [
    "DenseConstantMeta",
    "DenseTensorConstant",
    "DenseTensorVariable",
    "DenseVariableMeta",
    "NotScalarConstantError",
    "OperatorUnavailableError",
    "TensorConstant",
    "TensorConstantSignature",
    "TensorPyOperators",
    "TensorVariable",
    "get_underlying_scalar_constant",
    "get_unique_constant_value",
]


class OperatorUnavailableError(NotImplementedError):
    """A tensor operator's implementing function is not provided by this installation."""


# The modules the operators call. Each builds on this module (its Ops return tensor
# variables), so each is imported when an operator first runs, not when this one loads.
# ``_shape()`` gives the few ``shape`` names used here, and ``subtensor``
# is looked up in ``sys.modules`` (``opweave.tensor`` re-exports functions named like
# those modules).


def _math() -> ModuleType:
    # late: opweave.tensor.math builds on this module (same floor, above it)
    from opweave.tensor import math

    return math


def _basic() -> ModuleType:
    # late: opweave.tensor.basic builds on this module (same floor, above it)
    from opweave.tensor import basic

    return basic


def _tensor() -> SimpleNamespace:
    # late: extra_ops, _linalg_support (trace) and sort build on this module (same floor)
    from opweave.tensor import _linalg_support, extra_ops
    from opweave.tensor.sort import argsort, sort

    # the modules and functions used here, not the whole opweave.tensor package, whose
    # modules (scan's too, through jacobian) would then be part of this one's imports
    return SimpleNamespace(
        extra_ops=extra_ops, trace=_linalg_support.trace, argsort=argsort, sort=sort
    )


def _subtensor() -> ModuleType:
    # late: opweave.tensor.subtensor builds on this module (same floor, above it)
    import opweave.tensor.subtensor  # noqa: F401 (taken from sys.modules below)

    # by name: the package's attribute ``subtensor`` is the function it re-exports
    return sys.modules["opweave.tensor.subtensor"]


def _shape() -> SimpleNamespace:
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import Shape_i, reshape, shape

    # the names used here (the package's attribute ``shape`` is the function)
    return SimpleNamespace(Shape_i=Shape_i, reshape=reshape, shape=shape)


def _elemwise() -> ModuleType:
    # late: opweave.tensor.elemwise builds on this module (same floor, above it)
    from opweave.tensor import elemwise

    return elemwise


def _defers(other: Any) -> bool:
    """True if ``other`` is a non-tensor variable that should handle the operator itself."""
    if not isinstance(other, Variable) or hasattr(other, "_as_TensorVariable"):
        return False
    # late: opweave.tensor.type builds on this module (TensorType makes TensorVariables)
    from opweave.tensor.type import TensorType

    return not isinstance(other.type, TensorType)


class TensorPyOperators:
    """Python operators and NumPy-like methods shared by every tensor variable class.

    Each builds a graph through the ``opweave.tensor`` function of the same name in
    PyTensor (``x + y`` is ``opweave.tensor.math.add(x, y)``). Variables have no
    truth value and compare by identity: use ``opweave.tensor.math.eq``/``neq``.
    """

    type: TensorType
    #: Make NumPy defer to these operators in ``ndarray + variable``.
    __array_priority__ = 1000

    # ------------------------------------------------------------------ static facts

    @property
    def ndim(self) -> int:
        """The rank."""
        return self.type.ndim

    @property
    def dtype(self) -> str:
        """The dtype's name."""
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Which dimensions have static length 1."""
        return self.type.broadcastable

    @property
    def shape(self) -> Any:
        """The symbolic shape (an int64 vector)."""
        return _shape().shape(self)

    @property
    def size(self) -> Any:
        """The symbolic number of elements."""
        if self.ndim == 1:
            return self.shape[0]
        return _math().prod(self.shape)

    # ------------------------------------------------------------------ Python protocol

    def __bool__(self) -> bool:
        raise TypeError(
            "a symbolic variable has no truth value: its value is known only when a compiled "
            "function runs (use opweave.tensor.switch / eq / neq to build conditions, and "
            "'is None' to test for a missing variable)"
        )

    def __iter__(self) -> Iterator[Any]:
        length = self.type.shape[0] if self.ndim > 0 else None
        if length is None:
            raise TypeError(
                f"cannot iterate over {self} of type {self.type!r}: its length is not known "
                "statically (did you use builtins.sum instead of opweave.tensor.sum?)"
            )
        return (self[i] for i in range(length))

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "tensor variables do not support item assignment; use x[idx].set(y) or "
            "x[idx].inc(y) (set_subtensor / inc_subtensor) instead"
        )

    def __getitem__(self, index: Any) -> Any:
        return _subtensor().getitem(self, index)

    # ------------------------------------------------------------------ arithmetic

    def _binary(self, fn: Callable[..., Any], other: Any, reflected: bool = False) -> Any:
        if _defers(other):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    def __abs__(self) -> Any:
        return _math().abs(self)

    def __neg__(self) -> Any:
        return _math().neg(self)

    def __invert__(self) -> Any:
        return _math().invert(self)

    def __add__(self, other: Any) -> Any:
        return self._binary(_math().add, other)

    def __radd__(self, other: Any) -> Any:
        return self._binary(_math().add, other, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return self._binary(_math().sub, other)

    def __rsub__(self, other: Any) -> Any:
        return self._binary(_math().sub, other, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return self._binary(_math().mul, other)

    def __rmul__(self, other: Any) -> Any:
        return self._binary(_math().mul, other, reflected=True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(_math().true_div, other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(_math().true_div, other, reflected=True)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary(_math().floor_div, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary(_math().floor_div, other, reflected=True)

    def __mod__(self, other: Any) -> Any:
        return self._binary(_math().mod, other)

    def __rmod__(self, other: Any) -> Any:
        return self._binary(_math().mod, other, reflected=True)

    def __divmod__(self, other: Any) -> Any:
        return self._binary(_math().divmod, other)

    def __rdivmod__(self, other: Any) -> Any:
        return self._binary(_math().divmod, other, reflected=True)

    def __pow__(self, other: Any) -> Any:
        return self._binary(_math().pow, other)

    def __rpow__(self, other: Any) -> Any:
        return self._binary(_math().pow, other, reflected=True)

    def __matmul__(self, other: Any) -> Any:
        return self._binary(_math().matmul, other)

    def __rmatmul__(self, other: Any) -> Any:
        return self._binary(_math().matmul, other, reflected=True)

    def __and__(self, other: Any) -> Any:
        return self._binary(_math().and_, other)

    def __rand__(self, other: Any) -> Any:
        return self._binary(_math().and_, other, reflected=True)

    def __or__(self, other: Any) -> Any:
        return self._binary(_math().or_, other)

    def __ror__(self, other: Any) -> Any:
        return self._binary(_math().or_, other, reflected=True)

    def __xor__(self, other: Any) -> Any:
        return self._binary(_math().xor, other)

    def __rxor__(self, other: Any) -> Any:
        return self._binary(_math().xor, other, reflected=True)

    def __lt__(self, other: Any) -> Any:
        return self._binary(_math().lt, other)

    def __le__(self, other: Any) -> Any:
        return self._binary(_math().le, other)

    def __gt__(self, other: Any) -> Any:
        return self._binary(_math().gt, other)

    def __ge__(self, other: Any) -> Any:
        return self._binary(_math().ge, other)

    def __ceil__(self) -> Any:
        return _math().ceil(self)

    def __floor__(self) -> Any:
        return _math().floor(self)

    def __trunc__(self) -> Any:
        return _math().trunc(self)

    # ------------------------------------------------------------------ shape and layout

    @property
    def T(self) -> Any:
        """The transpose (all axes reversed)."""
        return _basic().transpose(self)

    @property
    def mT(self) -> Any:
        """The transpose of the last two axes."""
        return _basic().matrix_transpose(self)

    def transpose(self, *axes: Any) -> Any:
        """Permute the axes (``x.transpose(1, 0)`` or ``x.transpose((1, 0))``)."""
        if not axes:
            return _basic().transpose(self)
        if len(axes) == 1 and isinstance(axes[0], Sequence):
            axes = tuple(axes[0])
        return _basic().transpose(self, axes)

    def reshape(self, shape: Any, *, ndim: int | None = None) -> Any:
        """Reshape to ``shape`` (a tuple or a symbolic int vector of length ``ndim``)."""
        if ndim is not None and not isinstance(ndim, int):
            raise TypeError(f"reshape: ndim must be an int, got {ndim!r}")
        return _shape().reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern: Any) -> Any:
        """Reorder the axes, ``'x'`` inserting a broadcastable one: ``x.dimshuffle(1, 'x', 0)``."""
        if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
            pattern = tuple(pattern[0])
        dimshuffle_op = _elemwise().DimShuffle
        return dimshuffle_op(input_ndim=self.ndim, new_order=pattern)(self)

    def flatten(self, ndim: int = 1) -> Any:
        """Collapse the trailing dimensions so that ``ndim`` remain."""
        return _basic().flatten(self, ndim)

    def ravel(self) -> Any:
        """Flatten to a vector."""
        return _basic().flatten(self)

    def squeeze(self, axis: Any = None) -> Any:
        """Drop the dimensions known to have length 1 (``axis``: only those; see
        :func:`opweave.tensor.extra_ops.squeeze`)."""
        return _tensor().extra_ops.squeeze(self, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        """Exchange two axes."""
        return _basic().swapaxes(self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """The diagonal of two axes."""
        return _basic().diagonal(self, offset, axis1, axis2)

    def astype(self, dtype: Any) -> Any:
        """Cast to ``dtype``."""
        return _basic().cast(self, dtype)

    def _as_ScalarVariable(self) -> Any:
        """This 0-d tensor as a scalar variable of its dtype (``scalar_from_tensor``).

        :func:`opweave.scalar.basic.as_scalar` converts a zero-dimensional variable
        through this method, so the scalar library never imports the tensor library.

        Raises
        ------
        TypeError
            If this tensor is not zero-dimensional.
        """
        return _basic().scalar_from_tensor(self)

    def copy(self, name: str | None = None) -> Any:
        """A symbolic copy, optionally named."""
        out = _basic().tensor_copy(self)
        out.name = name
        return out

    def transfer(self, target: str) -> Any:
        """This variable moved to ``target`` (``'cpu'`` or a target a plugin adds)."""
        return transfer_to(self, target)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ indexing

    def take(self, indices: Any, axis: int | None = None, mode: str = "raise") -> Any:
        """Elements at ``indices`` along ``axis``."""
        return _subtensor().take(self, indices, axis, mode)

    def set(self, y: Any, **kwargs: Any) -> Any:
        """For ``x[idx].set(y)``: ``x`` with the indexed part replaced by ``y``."""
        return _subtensor().set_subtensor(self, y, **kwargs)

    def inc(self, y: Any, **kwargs: Any) -> Any:
        """For ``x[idx].inc(y)``: ``x`` with ``y`` added to the indexed part."""
        return _subtensor().inc_subtensor(self, y, **kwargs)

    def nonzero(self, return_matrix: bool = False) -> Any:
        """Indices of the non-zero elements."""
        return _basic().nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self) -> Any:
        """The non-zero elements, flattened."""
        return _basic().nonzero_values(self)

    # ------------------------------------------------------------------ reductions

    def sum(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Sum over ``axis`` (all axes by default)."""
        return _math().sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Product over ``axis``."""
        return _math().prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Mean over ``axis``."""
        return _math().mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Any:
        """Variance over ``axis``."""
        return _math().var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Any:
        """Standard deviation over ``axis``."""
        return _math().std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Maximum over ``axis``."""
        return _math().max(self, axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Minimum over ``axis``."""
        return _math().min(self, axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Index of the maximum over ``axis``."""
        return _math().argmax(self, axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Index of the minimum over ``axis``."""
        return _math().argmin(self, axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Logical or over ``axis``."""
        return _math().any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Logical and over ``axis``."""
        return _math().all(self, axis=axis, keepdims=keepdims)

    def ptp(self, axis: Any = None) -> Any:
        """Maximum minus minimum over ``axis``."""
        return _math().ptp(self, axis)

    def norm(self, L: float, axis: Any = None, keepdims: bool = False) -> Any:
        """The ``L``-norm over ``axis`` (``L`` finite and non-zero)."""
        if L == 0 or np.isinf(L):
            raise NotImplementedError("norm: only finite, non-zero L is supported")
        y = ((abs(self)) ** L).sum(axis=axis, keepdims=keepdims)
        return y ** (1.0 / L)

    def cumsum(self, axis: int | None = None) -> Any:
        """Cumulative sum along ``axis`` (``None``: of the flattened tensor)."""
        return _tensor().extra_ops.cumsum(self, axis)

    def cumprod(self, axis: int | None = None) -> Any:
        """Cumulative product along ``axis`` (``None``: of the flattened tensor)."""
        return _tensor().extra_ops.cumprod(self, axis)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """Where the elements of ``v`` would be inserted into this sorted vector."""
        return _tensor().extra_ops.searchsorted(self, v, side, sorter)

    def compress(self, a: Any, axis: int | None = None) -> Any:
        """The slices of ``a`` along ``axis`` where this vector is true (PyTensor's
        argument order: this variable is the condition)."""
        return _tensor().extra_ops.compress(self, a, axis=axis)

    # ------------------------------------------------------------------ linear algebra

    def dot(self, other: Any) -> Any:
        """Matrix/vector product ``dot(self, other)``."""
        return _math().dot(self, other)

    def trace(self) -> Any:
        """Sum of the diagonal (of the last two axes)."""
        return _tensor().trace(self)

    # ------------------------------------------------------------------ elementwise

    def clip(self, a_min: Any, a_max: Any) -> Any:
        """Values limited to ``[a_min, a_max]``."""
        return _math().clip(self, a_min, a_max)

    def round(self, mode: str | None = None) -> Any:
        """Round to the nearest integer (``mode``: ``"half_to_even"``/``"half_away_from_zero"``)."""
        return _math().round(self, mode)

    def conj(self) -> Any:
        """The complex conjugate."""
        return _math().conj(self)

    conjugate = conj

    @property
    def real(self) -> Any:
        """The real part (this variable itself when it is real)."""
        return _math().real(self)

    @property
    def imag(self) -> Any:
        """The imaginary part (zeros when this variable is real)."""
        return _math().imag(self)

    def fill(self, value: Any) -> Any:
        """A tensor shaped like this one, filled with ``value``."""
        return _basic().fill(self, value)

    def zeros_like(self, dtype: Any = None) -> Any:
        """Zeros shaped like this variable."""
        return _basic().zeros_like(self, dtype=dtype)

    def ones_like(self, dtype: Any = None) -> Any:
        """Ones shaped like this variable."""
        return _basic().ones_like(self, dtype=dtype)

    def sort(self, axis: int = -1, kind: str = "quicksort", order: Any = None) -> Any:
        """Sorted along ``axis``."""
        return _tensor().sort(self, axis, kind, order)

    def argsort(self, axis: int = -1, kind: str = "quicksort", order: Any = None) -> Any:
        """Indices that sort along ``axis``."""
        return _tensor().argsort(self, axis, kind, order)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        """Repeat elements ``repeats`` times (a count, or one per element along ``axis``)."""
        return _tensor().extra_ops.repeat(self, repeats, axis)

    # Elementwise functions: ``x.exp()`` is ``opweave.tensor.math.exp(x)``.
    def exp(self) -> Any:
        """Elementwise exponential."""
        return _math().exp(self)

    def exp2(self) -> Any:
        """Elementwise ``2 ** x``."""
        return _math().exp2(self)

    def expm1(self) -> Any:
        """Elementwise ``exp(x) - 1``."""
        return _math().expm1(self)

    def log(self) -> Any:
        """Elementwise natural logarithm."""
        return _math().log(self)

    def log2(self) -> Any:
        """Elementwise base-2 logarithm."""
        return _math().log2(self)

    def log10(self) -> Any:
        """Elementwise base-10 logarithm."""
        return _math().log10(self)

    def log1p(self) -> Any:
        """Elementwise ``log(1 + x)``."""
        return _math().log1p(self)

    def sqrt(self) -> Any:
        """Elementwise square root."""
        return _math().sqrt(self)

    def sin(self) -> Any:
        """Elementwise sine."""
        return _math().sin(self)

    def cos(self) -> Any:
        """Elementwise cosine."""
        return _math().cos(self)

    def tan(self) -> Any:
        """Elementwise tangent."""
        return _math().tan(self)

    def arcsin(self) -> Any:
        """Elementwise inverse sine."""
        return _math().arcsin(self)

    def arccos(self) -> Any:
        """Elementwise inverse cosine."""
        return _math().arccos(self)

    def arctan(self) -> Any:
        """Elementwise inverse tangent."""
        return _math().arctan(self)

    def sinh(self) -> Any:
        """Elementwise hyperbolic sine."""
        return _math().sinh(self)

    def cosh(self) -> Any:
        """Elementwise hyperbolic cosine."""
        return _math().cosh(self)

    def tanh(self) -> Any:
        """Elementwise hyperbolic tangent."""
        return _math().tanh(self)

    def arcsinh(self) -> Any:
        """Elementwise inverse hyperbolic sine."""
        return _math().arcsinh(self)

    def arccosh(self) -> Any:
        """Elementwise inverse hyperbolic cosine."""
        return _math().arccosh(self)

    def arctanh(self) -> Any:
        """Elementwise inverse hyperbolic tangent."""
        return _math().arctanh(self)

    def ceil(self) -> Any:
        """Elementwise ceiling."""
        return _math().ceil(self)

    def floor(self) -> Any:
        """Elementwise floor."""
        return _math().floor(self)

    def trunc(self) -> Any:
        """Elementwise truncation toward zero."""
        return _math().trunc(self)

    def deg2rad(self) -> Any:
        """Degrees to radians."""
        return _math().deg2rad(self)

    def rad2deg(self) -> Any:
        """Radians to degrees."""
        return _math().rad2deg(self)

    # ------------------------------------------------------------------ constants

    def get_underlying_scalar_constant(self) -> np.ndarray:
        """See :func:`get_underlying_scalar_constant`."""
        return get_underlying_scalar_constant(self)


class TensorVariable(TensorPyOperators, Variable["TensorType", OptionalApplyType]):
    """A :class:`~opweave.graph.basic.Variable` of a :class:`~opweave.tensor.type.TensorType`.

    For type checkers it is ``Variable[TensorType, ...]``, generic in its owner as
    :class:`~opweave.graph.basic.Variable` is (``TensorVariable[None]`` is a root).

    Parameters
    ----------
    type
        The TensorType.
    owner, index, name
        As for :class:`~opweave.graph.basic.Variable`.
    """


class TensorConstant(TensorVariable[None], Constant["TensorType"]):
    """A tensor with a fixed value.

    The value is filtered through the Type and kept as a private, read-only array:
    changing the array it was built from does not change the constant.

    Parameters
    ----------
    type
        The TensorType.
    data
        The value.
    name
        Optional name.
    """

    def __init__(self, type: TensorType, data: Any, name: str | None = None) -> None:
        Constant.__init__(self, type, data, name)
        value = self._data
        if value is data or not value.flags.owndata:
            value = value.copy()
        value.flags.writeable = False
        self._data = value

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_signature", None)  # caches, computed again when needed
        state.pop("_unique_value", None)
        return state

    @property
    def unique_value(self) -> Any:
        """The one value every element holds, or ``None`` (different values, or no element).

        A read-only 0-d array for a one-element constant, else a NumPy scalar, as in
        PyTensor.
        """
        if "_unique_value" not in self.__dict__:
            self.__dict__["_unique_value"] = _only_value(self._data)
        return self.__dict__["_unique_value"]

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._data.flags.writeable = False  # unpickled arrays come back writeable

    def signature(self) -> tuple[Any, ...]:
        """A hashable key (Type, shape and a digest of the bytes) used to merge constants."""
        sig = self.__dict__.get("_signature")
        if sig is None:
            data = self._data
            digest = hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16)
            sig = (self.type, data.shape, digest.hexdigest())
            self.__dict__["_signature"] = sig
        return sig

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = self._data
        if data.ndim == 0:
            return str(data.item())
        if data.size <= 8:
            return str(data.tolist())
        return f"TensorConstant{{{self.type.dtype}, shape={data.shape}}}"


def _only_value(data: np.ndarray) -> Any:
    """``TensorConstant.unique_value`` of a constant holding ``data``."""
    if data.size == 0:
        return None
    if data.size == 1:
        value = data.squeeze()
        value.flags.writeable = False
        return value
    flat = data.ravel()
    return flat[0] if (flat == flat[0]).all() else None


def get_unique_constant_value(x: Any) -> Any:
    """The value every element of the constant ``x`` holds, or ``None`` (deprecated).

    Parameters
    ----------
    x
        Any variable; only a :class:`TensorConstant` has a unique value.

    Returns
    -------
    numpy.ndarray, numpy.generic or None
        ``x.unique_value`` for a constant, else ``None``.

    Warns
    -----
    FutureWarning
        Always: use :attr:`TensorConstant.unique_value`.
    """
    warnings.warn("get_unique_constant_value is deprecated.", FutureWarning, stacklevel=2)
    return x.unique_value if isinstance(x, TensorConstant) else None


class TensorConstantSignature(tuple[Any, ...]):
    """A pair ``(Type, ndarray)`` comparing two tensor constants by Type and value.

    Two signatures are equal when their Types are equal, their arrays have the same
    shape and equal elements, NaNs counting as equal where both arrays have them. The
    hash combines the Type, the shape and :attr:`sum`, so equal signatures hash alike.
    """

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return False
        try:
            (t0, d0), (t1, d1) = self, other
        except (TypeError, ValueError):
            return False
        if t0 != t1 or np.shape(d0) != np.shape(d1):
            return False
        if self.has_nan or other.has_nan:
            return bool(np.array_equal(d0, d1, equal_nan=True))
        return bool(np.all(d0 == d1))

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        t, d = self
        return hash((type(self), t, np.shape(d), self.sum))

    @property
    def has_nan(self) -> bool:
        """Whether the array holds a NaN."""
        d = np.asarray(self[1])
        return bool(d.dtype.kind in "fc" and np.isnan(d).any())

    @property
    def no_nan(self) -> np.ma.MaskedArray:
        """The array with its NaNs masked."""
        d = np.asarray(self[1])
        return np.ma.masked_array(d, np.isnan(d) if d.dtype.kind in "fc" else False)

    @property
    def sum(self) -> Any:
        """The sum of the array's finite elements (0 when there are none)."""
        d = np.asarray(self[1])
        if d.dtype.kind in "fc":
            d = np.where(np.isfinite(d), d, 0)
        total = d.sum() if d.dtype.kind in "biufc" else 0
        return total.item() if isinstance(total, np.generic) else total


class DenseVariableMeta(MetaType):
    """The metaclass of :class:`DenseTensorVariable`: its instances are exactly the plain
    :class:`TensorVariable` objects (not constants, shared or other subclasses)."""

    def __instancecheck__(self, instance: Any) -> bool:
        return type(instance) is TensorVariable or isinstance(instance, DenseVariableMeta)


class DenseTensorVariable(metaclass=DenseVariableMeta):
    """A name for dense tensor variables: ``isinstance(v, DenseTensorVariable)`` holds
    for plain :class:`TensorVariable` objects."""


class DenseConstantMeta(MetaType):
    """The metaclass of :class:`DenseTensorConstant`: its instances are exactly the plain
    :class:`TensorConstant` objects."""

    def __instancecheck__(self, instance: Any) -> bool:
        return type(instance) is TensorConstant or isinstance(instance, DenseConstantMeta)


class DenseTensorConstant(metaclass=DenseConstantMeta):
    """A name for dense tensor constants: ``isinstance(c, DenseTensorConstant)`` holds
    for plain :class:`TensorConstant` objects."""


def _unique_value(data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.dtype.kind not in "biufc" or arr.size == 0:
        raise NotScalarConstantError(f"{_describe(data)} is not a numeric scalar")
    if arr.ndim == 0:
        return arr
    first = arr.flat[0]
    if not (arr == first).all():
        raise NotScalarConstantError(f"the constant {_describe(data)} holds different values")
    return np.asarray(first, dtype=arr.dtype)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:55] + "(...)"


def get_underlying_scalar_constant(
    v: Any, only_process_constants: bool = False, max_recur: int = 10
) -> np.ndarray:
    """Return the constant scalar value that ``v`` always holds, or raise.

    Parameters
    ----------
    v
        A Python number, NumPy scalar or array, a constant, or a variable computed from one
        through identity Ops (``DeepCopyOp``, ``ViewOp``), or ``Shape_i`` of a variable with a
        known static length.
    only_process_constants
        Look only at ``v`` itself, never through the Op computing it.
    max_recur
        How many Ops to look through.

    Returns
    -------
    numpy.ndarray
        A 0-d array. Constants whose elements are all equal count as that scalar.

    Raises
    ------
    NotScalarConstantError
        If no constant scalar value can be determined.
    """
    Shape_i = _shape().Shape_i
    for _ in range(max_recur + 1):
        if isinstance(v, Constant):
            return _unique_value(v.data)
        if not isinstance(v, Variable):
            if v is None or isinstance(v, str | bytes):
                raise NotScalarConstantError(f"{v!r} is not a numeric scalar")
            return _unique_value(v)
        if only_process_constants or v.owner is None:
            break
        op = v.owner.op
        if isinstance(op, DeepCopyOp | ViewOp):
            v = v.owner.inputs[0]
            continue
        if isinstance(op, Shape_i):
            static = getattr(v.owner.inputs[0].type, "shape", None)
            if static is not None and static[op.i] is not None:
                return np.asarray(static[op.i], dtype="int64")
        break
    raise NotScalarConstantError(f"{v} is not a constant scalar")
