"""The operators and methods of tensor variables that build graphs: ``x + y``, ``x.sum()``,
``x[1:]``, ``x.T``, ``x.reshape(...)``, ``x.sort()``, ...

Each calls the ``opweave.tensor`` function of the same name in PyTensor (``x + y`` is
``opweave.tensor.math.add(x, y)``). Those functions live in modules that build on
:mod:`opweave.tensor.variable` (their Ops return tensor variables), so the methods are
written here, above them all, in :class:`TensorGraphMethods`, and :func:`give_methods`
sets each one on :class:`~opweave.tensor.variable.TensorPyOperators` (the base of every
tensor variable class) when this module is imported. In the same way
:class:`TensorTypeGraphMethods` gives :class:`~opweave.tensor.type.TensorType` its
``convert_variable``, which narrows a variable with
:func:`~opweave.tensor.shape.specify_shape`.

The package :mod:`opweave.tensor` imports this module before its own names, and importing
any ``opweave`` module runs that package first, so the methods are in place (the same
function objects, with their signatures and docstrings) before other code asks for them.
The holder classes only hold the methods: no object is an instance of them. Type checkers
see :class:`TensorGraphMethods` as a base of ``TensorPyOperators``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Number
from typing import TYPE_CHECKING, Any

import numpy as np

# The modules whose functions the methods call, looked up when a method runs (so that a
# function replaced on its module is the one called). The package opweave.tensor imports
# this module before its star imports make some of its attributes functions (``shape``,
# ``sort``, ``subtensor``), so these are the modules.
import opweave.tensor.shape as shape_module
import opweave.tensor.sort as sort_module
import opweave.tensor.subtensor as subtensor_module
from opweave.graph.basic import Variable
from opweave.tensor import _linalg_support, elemwise, extra_ops
from opweave.tensor import basic as tb
from opweave.tensor import math as tm
from opweave.tensor.scalar_constant import get_underlying_scalar_constant
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorPyOperators

__all__ = ["TensorGraphMethods", "TensorTypeGraphMethods", "give_methods"]

#: Entries that Python puts in a class's ``__dict__`` itself: not methods to give.
_CLASS_BOOKKEEPING = frozenset(
    {
        "__module__",
        "__qualname__",
        "__doc__",
        "__dict__",
        "__weakref__",
        "__annotations__",
        "__firstlineno__",
        "__static_attributes__",
        "__type_params__",
    }
)


def give_methods(lower: type, home: type) -> None:
    """Set on the class ``lower`` the methods and properties that the class ``home`` defines.

    The counterpart of :func:`opweave._layers.give_names` for methods: ``home`` is a
    holder class in a module above the one defining ``lower``, whose methods call modules
    that build on ``lower``'s. Each function keeps its signature and docstring; its
    ``__qualname__`` becomes ``lower``'s (``TensorPyOperators.sum``), as if defined there.

    Parameters
    ----------
    lower
        The class that gets the methods (subclasses inherit them as usual).
    home
        The holder class that defines them.

    Raises
    ------
    TypeError
        If ``lower`` already defines one of the names itself: a method has one home.
    """
    for name, value in vars(home).items():
        if name in _CLASS_BOOKKEEPING:
            continue
        if name in vars(lower):
            raise TypeError(f"{lower.__qualname__} already defines {name!r}")
        function = value.fget if isinstance(value, property) else value
        if callable(function) and getattr(function, "__name__", None) == name:
            function.__qualname__ = f"{lower.__qualname__}.{name}"
        setattr(lower, name, value)


#: Operands an operator always takes (variables, and values it converts to tensors).
_OPERANDS = (Variable, Number, np.ndarray, np.generic, list, tuple)


def _defers(other: Any) -> bool:
    """True if ``other`` is a non-tensor variable that should handle the operator itself:
    one that does not convert to a tensor, or one that converts only when asked (an
    xtensor: ``tensor * xtensor`` is the xtensor's ``__rmul__``, as in PyTensor)."""
    if not isinstance(other, Variable):
        return False
    if getattr(other, "requires_explicit_conversion", False):
        return True
    if hasattr(other, "_as_TensorVariable"):
        return False
    return not isinstance(other.type, TensorType)


def _foreign(other: Any) -> bool:
    """True if ``other`` is neither a variable nor a value operators always convert (it
    may still convert through ``as_tensor_variable``'s dispatcher)."""
    return not (
        isinstance(other, _OPERANDS)
        or hasattr(other, "_as_TensorVariable")
        or hasattr(other, "__array__")
    )


class TensorGraphMethods:
    """The Python operators and NumPy-like methods of tensor variables that build graphs.

    Their home is :class:`~opweave.tensor.variable.TensorPyOperators`, which gets them from
    :func:`give_methods` when this module is imported.
    """

    type: TensorType

    @property
    def shape(self) -> Any:
        """The symbolic shape (an int64 vector)."""
        return shape_module.shape(self)

    @property
    def size(self) -> Any:
        """The symbolic number of elements."""
        if self.type.ndim == 1:
            return self.shape[0]
        return tm.prod(self.shape)

    # ------------------------------------------------------------------ indexing

    def __getitem__(self, index: Any) -> Any:
        return subtensor_module.getitem(self, index)

    # ------------------------------------------------------------------ arithmetic

    def _binary(self, fn: Callable[..., Any], other: Any, reflected: bool = False) -> Any:
        if _defers(other):
            return NotImplemented
        if _foreign(other):
            # An object no tensor can be made of (a PyMC covariance function) answers the
            # operator itself, through its reflected method; without one Python raises
            # TypeError naming both types (as in PyTensor).
            try:
                other = tb.as_tensor_variable(other)
            except TypeError:
                return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    def __abs__(self) -> Any:
        return tm.abs(self)

    def __neg__(self) -> Any:
        return tm.neg(self)

    def __invert__(self) -> Any:
        return tm.invert(self)

    def __add__(self, other: Any) -> Any:
        return self._binary(tm.add, other)

    def __radd__(self, other: Any) -> Any:
        return self._binary(tm.add, other, reflected=True)

    def __sub__(self, other: Any) -> Any:
        return self._binary(tm.sub, other)

    def __rsub__(self, other: Any) -> Any:
        return self._binary(tm.sub, other, reflected=True)

    def __mul__(self, other: Any) -> Any:
        return self._binary(tm.mul, other)

    def __rmul__(self, other: Any) -> Any:
        return self._binary(tm.mul, other, reflected=True)

    def __truediv__(self, other: Any) -> Any:
        return self._binary(tm.true_div, other)

    def __rtruediv__(self, other: Any) -> Any:
        return self._binary(tm.true_div, other, reflected=True)

    def __floordiv__(self, other: Any) -> Any:
        return self._binary(tm.floor_div, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return self._binary(tm.floor_div, other, reflected=True)

    def __mod__(self, other: Any) -> Any:
        return self._binary(tm.mod, other)

    def __rmod__(self, other: Any) -> Any:
        return self._binary(tm.mod, other, reflected=True)

    def __divmod__(self, other: Any) -> Any:
        return self._binary(tm.divmod, other)

    def __rdivmod__(self, other: Any) -> Any:
        return self._binary(tm.divmod, other, reflected=True)

    def __pow__(self, other: Any) -> Any:
        return self._binary(tm.pow, other)

    def __rpow__(self, other: Any) -> Any:
        return self._binary(tm.pow, other, reflected=True)

    def __matmul__(self, other: Any) -> Any:
        return self._binary(tm.matmul, other)

    def __rmatmul__(self, other: Any) -> Any:
        return self._binary(tm.matmul, other, reflected=True)

    def __and__(self, other: Any) -> Any:
        return self._binary(tm.and_, other)

    def __rand__(self, other: Any) -> Any:
        return self._binary(tm.and_, other, reflected=True)

    def __or__(self, other: Any) -> Any:
        return self._binary(tm.or_, other)

    def __ror__(self, other: Any) -> Any:
        return self._binary(tm.or_, other, reflected=True)

    def __xor__(self, other: Any) -> Any:
        return self._binary(tm.xor, other)

    def __rxor__(self, other: Any) -> Any:
        return self._binary(tm.xor, other, reflected=True)

    def __lt__(self, other: Any) -> Any:
        return self._binary(tm.lt, other)

    def __le__(self, other: Any) -> Any:
        return self._binary(tm.le, other)

    def __gt__(self, other: Any) -> Any:
        return self._binary(tm.gt, other)

    def __ge__(self, other: Any) -> Any:
        return self._binary(tm.ge, other)

    def __ceil__(self) -> Any:
        return tm.ceil(self)

    def __floor__(self) -> Any:
        return tm.floor(self)

    def __trunc__(self) -> Any:
        return tm.trunc(self)

    # ------------------------------------------------------------------ shape and layout

    @property
    def T(self) -> Any:
        """The transpose (all axes reversed)."""
        return tb.transpose(self)

    @property
    def mT(self) -> Any:
        """The transpose of the last two axes."""
        return tb.matrix_transpose(self)

    def transpose(self, *axes: Any) -> Any:
        """Permute the axes (``x.transpose(1, 0)`` or ``x.transpose((1, 0))``)."""
        if not axes:
            return tb.transpose(self)
        if len(axes) == 1 and isinstance(axes[0], Sequence):
            axes = tuple(axes[0])
        return tb.transpose(self, axes)

    def reshape(self, shape: Any, *, ndim: int | None = None) -> Any:
        """Reshape to ``shape`` (a tuple or a symbolic int vector of length ``ndim``)."""
        if ndim is not None and not isinstance(ndim, int):
            raise TypeError(f"reshape: ndim must be an int, got {ndim!r}")
        return shape_module.reshape(self, shape, ndim=ndim)

    def dimshuffle(self, *pattern: Any) -> Any:
        """Reorder the axes, ``'x'`` inserting a broadcastable one: ``x.dimshuffle(1, 'x', 0)``."""
        if len(pattern) == 1 and isinstance(pattern[0], list | tuple):
            pattern = tuple(pattern[0])
        dimshuffle_op = elemwise.DimShuffle
        return dimshuffle_op(input_ndim=self.type.ndim, new_order=pattern)(self)

    def flatten(self, ndim: int = 1) -> Any:
        """Collapse the trailing dimensions so that ``ndim`` remain."""
        return tb.flatten(self, ndim)

    def ravel(self) -> Any:
        """Flatten to a vector."""
        return tb.flatten(self)

    def squeeze(self, axis: Any = None) -> Any:
        """Drop the dimensions known to have length 1 (``axis``: only those; see
        :func:`opweave.tensor.extra_ops.squeeze`)."""
        return extra_ops.squeeze(self, axis=axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        """Exchange two axes."""
        return tb.swapaxes(self, axis1, axis2)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        """The diagonal of two axes."""
        return tb.diagonal(self, offset, axis1, axis2)

    def astype(self, dtype: Any) -> Any:
        """Cast to ``dtype``."""
        return tb.cast(self, dtype)

    def _as_ScalarVariable(self) -> Any:
        """This 0-d tensor as a scalar variable of its dtype (``scalar_from_tensor``).

        :func:`opweave.scalar.basic.as_scalar` converts a zero-dimensional variable
        through this method, so the scalar library never imports the tensor library.

        Raises
        ------
        TypeError
            If this tensor is not zero-dimensional.
        """
        return tb.scalar_from_tensor(self)

    def copy(self, name: str | None = None) -> Any:
        """A symbolic copy, optionally named."""
        out = tb.tensor_copy(self)
        out.name = name
        return out

    # ------------------------------------------------------------------ indexing

    def take(self, indices: Any, axis: int | None = None, mode: str = "raise") -> Any:
        """Elements at ``indices`` along ``axis``."""
        return subtensor_module.take(self, indices, axis, mode)

    def set(self, y: Any, **kwargs: Any) -> Any:
        """For ``x[idx].set(y)``: ``x`` with the indexed part replaced by ``y``."""
        return subtensor_module.set_subtensor(self, y, **kwargs)

    def inc(self, y: Any, **kwargs: Any) -> Any:
        """For ``x[idx].inc(y)``: ``x`` with ``y`` added to the indexed part."""
        return subtensor_module.inc_subtensor(self, y, **kwargs)

    def nonzero(self, return_matrix: bool = False) -> Any:
        """Indices of the non-zero elements."""
        return tb.nonzero(self, return_matrix=return_matrix)

    def nonzero_values(self) -> Any:
        """The non-zero elements, flattened."""
        return tb.nonzero_values(self)

    # ------------------------------------------------------------------ reductions

    def sum(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Sum over ``axis`` (all axes by default)."""
        return tm.sum(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def prod(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Product over ``axis``."""
        return tm.prod(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def mean(
        self, axis: Any = None, dtype: Any = None, keepdims: bool = False, acc_dtype: Any = None
    ) -> Any:
        """Mean over ``axis``."""
        return tm.mean(self, axis=axis, dtype=dtype, keepdims=keepdims, acc_dtype=acc_dtype)

    def var(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Any:
        """Variance over ``axis``."""
        return tm.var(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def std(
        self, axis: Any = None, ddof: int = 0, keepdims: bool = False, corrected: bool = False
    ) -> Any:
        """Standard deviation over ``axis``."""
        return tm.std(self, axis=axis, ddof=ddof, keepdims=keepdims, corrected=corrected)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Maximum over ``axis``."""
        return tm.max(self, axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Minimum over ``axis``."""
        return tm.min(self, axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Index of the maximum over ``axis``."""
        return tm.argmax(self, axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Index of the minimum over ``axis``."""
        return tm.argmin(self, axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Logical or over ``axis``."""
        return tm.any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Logical and over ``axis``."""
        return tm.all(self, axis=axis, keepdims=keepdims)

    def ptp(self, axis: Any = None) -> Any:
        """Maximum minus minimum over ``axis``."""
        return tm.ptp(self, axis)

    def norm(self, L: float, axis: Any = None, keepdims: bool = False) -> Any:
        """The ``L``-norm over ``axis`` (``L`` finite and non-zero)."""
        if L == 0 or np.isinf(L):
            raise NotImplementedError("norm: only finite, non-zero L is supported")
        y = ((abs(self)) ** L).sum(axis=axis, keepdims=keepdims)
        return y ** (1.0 / L)

    def cumsum(self, axis: int | None = None) -> Any:
        """Cumulative sum along ``axis`` (``None``: of the flattened tensor)."""
        return extra_ops.cumsum(self, axis)

    def cumprod(self, axis: int | None = None) -> Any:
        """Cumulative product along ``axis`` (``None``: of the flattened tensor)."""
        return extra_ops.cumprod(self, axis)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        """Where the elements of ``v`` would be inserted into this sorted vector."""
        return extra_ops.searchsorted(self, v, side, sorter)

    def compress(self, a: Any, axis: int | None = None) -> Any:
        """The slices of ``a`` along ``axis`` where this vector is true (PyTensor's
        argument order: this variable is the condition)."""
        return extra_ops.compress(self, a, axis=axis)

    # ------------------------------------------------------------------ linear algebra

    def dot(self, other: Any) -> Any:
        """Matrix/vector product ``dot(self, other)``."""
        return tm.dot(self, other)

    def trace(self) -> Any:
        """Sum of the diagonal (of the last two axes)."""
        return _linalg_support.trace(self)

    # ------------------------------------------------------------------ elementwise

    def clip(self, a_min: Any, a_max: Any) -> Any:
        """Values limited to ``[a_min, a_max]``."""
        return tm.clip(self, a_min, a_max)

    def round(self, mode: str | None = None) -> Any:
        """Round to the nearest integer (``mode``: ``"half_to_even"``/``"half_away_from_zero"``)."""
        return tm.round(self, mode)

    def conj(self) -> Any:
        """The complex conjugate."""
        return tm.conj(self)

    conjugate = conj

    @property
    def real(self) -> Any:
        """The real part (this variable itself when it is real)."""
        return tm.real(self)

    @property
    def imag(self) -> Any:
        """The imaginary part (zeros when this variable is real)."""
        return tm.imag(self)

    def fill(self, value: Any) -> Any:
        """A tensor shaped like this one, filled with ``value``."""
        return tb.fill(self, value)

    def zeros_like(self, dtype: Any = None) -> Any:
        """Zeros shaped like this variable."""
        return tb.zeros_like(self, dtype=dtype)

    def ones_like(self, dtype: Any = None) -> Any:
        """Ones shaped like this variable."""
        return tb.ones_like(self, dtype=dtype)

    def sort(
        self, axis: int = -1, kind: sort_module.KIND | None = "quicksort", order: Any = None
    ) -> Any:
        """Sorted along ``axis``."""
        return sort_module.sort(self, axis, kind, order)

    def argsort(
        self, axis: int = -1, kind: sort_module.KIND | None = "quicksort", order: Any = None
    ) -> Any:
        """Indices that sort along ``axis``."""
        return sort_module.argsort(self, axis, kind, order)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        """Repeat elements ``repeats`` times (a count, or one per element along ``axis``)."""
        return extra_ops.repeat(self, repeats, axis)

    # Elementwise functions: ``x.exp()`` is ``opweave.tensor.math.exp(x)``.
    def exp(self) -> Any:
        """Elementwise exponential."""
        return tm.exp(self)

    def exp2(self) -> Any:
        """Elementwise ``2 ** x``."""
        return tm.exp2(self)

    def expm1(self) -> Any:
        """Elementwise ``exp(x) - 1``."""
        return tm.expm1(self)

    def log(self) -> Any:
        """Elementwise natural logarithm."""
        return tm.log(self)

    def log2(self) -> Any:
        """Elementwise base-2 logarithm."""
        return tm.log2(self)

    def log10(self) -> Any:
        """Elementwise base-10 logarithm."""
        return tm.log10(self)

    def log1p(self) -> Any:
        """Elementwise ``log(1 + x)``."""
        return tm.log1p(self)

    def sqrt(self) -> Any:
        """Elementwise square root."""
        return tm.sqrt(self)

    def sin(self) -> Any:
        """Elementwise sine."""
        return tm.sin(self)

    def cos(self) -> Any:
        """Elementwise cosine."""
        return tm.cos(self)

    def tan(self) -> Any:
        """Elementwise tangent."""
        return tm.tan(self)

    def arcsin(self) -> Any:
        """Elementwise inverse sine."""
        return tm.arcsin(self)

    def arccos(self) -> Any:
        """Elementwise inverse cosine."""
        return tm.arccos(self)

    def arctan(self) -> Any:
        """Elementwise inverse tangent."""
        return tm.arctan(self)

    def sinh(self) -> Any:
        """Elementwise hyperbolic sine."""
        return tm.sinh(self)

    def cosh(self) -> Any:
        """Elementwise hyperbolic cosine."""
        return tm.cosh(self)

    def tanh(self) -> Any:
        """Elementwise hyperbolic tangent."""
        return tm.tanh(self)

    def arcsinh(self) -> Any:
        """Elementwise inverse hyperbolic sine."""
        return tm.arcsinh(self)

    def arccosh(self) -> Any:
        """Elementwise inverse hyperbolic cosine."""
        return tm.arccosh(self)

    def arctanh(self) -> Any:
        """Elementwise inverse hyperbolic tangent."""
        return tm.arctanh(self)

    def ceil(self) -> Any:
        """Elementwise ceiling."""
        return tm.ceil(self)

    def floor(self) -> Any:
        """Elementwise floor."""
        return tm.floor(self)

    def trunc(self) -> Any:
        """Elementwise truncation toward zero."""
        return tm.trunc(self)

    def deg2rad(self) -> Any:
        """Degrees to radians."""
        return tm.deg2rad(self)

    def rad2deg(self) -> Any:
        """Radians to degrees."""
        return tm.rad2deg(self)

    # ------------------------------------------------------------------ constants

    def get_underlying_scalar_constant(self) -> np.ndarray:
        """See :func:`opweave.tensor.scalar_constant.get_underlying_scalar_constant`."""
        return get_underlying_scalar_constant(self)


class TensorTypeGraphMethods:
    """The methods of :class:`~opweave.tensor.type.TensorType` that build graphs.

    Their home is ``TensorType``, which gets them from :func:`give_methods` when this
    module is imported.
    """

    shape: tuple[int | None, ...]
    dtype: str
    ndim: int

    if TYPE_CHECKING:

        def is_super(self, otype: Any) -> bool:
            """TensorType's (for type checkers)."""

    def convert_variable(self, var: Variable) -> Variable | None:
        """Return ``var`` usable where this Type is expected, or ``None``.

        A variable whose Type is as or more specific (:meth:`is_super`) is returned as is.
        One that is less specific (same dtype and rank) goes through
        :func:`opweave.tensor.shape.specify_shape`.
        """
        vtype = var.type
        if self.is_super(vtype):
            return var
        if (
            isinstance(vtype, TensorType)
            and vtype.dtype == self.dtype
            and vtype.ndim == self.ndim
            and all(s is None or o is None or s == o for s, o in zip(self.shape, vtype.shape))
        ):
            return shape_module.specify_shape(var, self.shape)
        return None


give_methods(TensorPyOperators, TensorGraphMethods)
give_methods(TensorType, TensorTypeGraphMethods)
