"""Sparse variables and constants (PyTensor's ``pytensor.sparse.variable`` names).

A :class:`SparseVariable` has the sparse operators: ``+``, ``-`` and ``*`` with sparse or
dense operands (:func:`opweave.sparse.math.add`, ``subtract``, ``multiply``), unary ``-``,
``.T`` (:class:`~opweave.sparse.basic.Transpose`), ``.toarray()``/``.todense()``
(:class:`~opweave.sparse.basic.DenseFromSparse`), ``.sum(axis)``
(:func:`~opweave.sparse.math.sp_sum`), ``.dot`` (:func:`~opweave.sparse.math.structured_dot`),
``.astype``, ``.shape``, ``.ndim``, ``.dtype`` and ``.format``. The other tensor methods
(``exp``, ``dimshuffle``, ``/``, ``max`` ...) compute on the dense form, with a warning, as
in PyTensor. ``<``, ``<=``, ``>`` and ``>=`` are the comparisons of
:mod:`opweave.sparse.comparison` (``uint8`` results, sparse for two sparse operands).
``opweave.tensor.as_tensor_variable`` of a sparse variable is its dense form.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Constant, Variable
from opweave.sparse.basic import (
    _is_index_scalar,
    cast,
    csm_data,
    dense_from_sparse,
    get_item_2d,
    get_item_2lists,
    get_item_list,
    get_item_scalar,
    sp_ones_like,
    sp_zeros_like,
    transpose,
)
from opweave.sparse.comparison import ge, gt, le, lt
from opweave.sparse.math import (
    add,
    conjugate,
    multiply,
    neg,
    sp_sum,
    structured_dot,
    subtract,
)
from opweave.sparse.type import SparseTensorType, _is_sparse_value
from opweave.tensor.shape import shape as tensor_shape
from opweave.tensor.variable import TensorPyOperators

__all__ = ["SparseConstant", "SparseVariable", "constant"]

#: Tensor methods that a sparse variable computes on its dense form.
DENSE_METHODS: tuple[str, ...] = (
    "__abs__", "__ceil__", "__floor__", "__trunc__", "__truediv__", "__rtruediv__",
    "__floordiv__", "__pow__", "__mod__", "__and__", "__or__", "__xor__", "transpose", "any",
    "all", "nonzero", "nonzero_values", "flatten",
    "ravel", "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh", "ceil", "cos",
    "cosh", "deg2rad", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2",
    "rad2deg", "sin", "sinh", "sqrt", "tan", "tanh", "copy", "prod", "mean", "var", "std",
    "min", "max", "argmin", "argmax", "argsort", "round", "trace", "cumsum", "cumprod", "ptp",
    "squeeze", "diagonal", "reshape", "dimshuffle",
)  # fmt: skip


def _dense_method(name: str) -> Callable[..., Any]:
    dense_fn = getattr(TensorPyOperators, name)

    def on_dense(self: SparseVariable, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"{name} is not defined for sparse variables: {self} is converted to dense",
            UserWarning,
            stacklevel=2,
        )
        args = tuple(a.toarray() if isinstance(a, SparseVariable) else a for a in args)
        return dense_fn(self.toarray(), *args, **kwargs)

    on_dense.__name__ = name
    on_dense.__doc__ = f"``{name}`` of the dense form (with a warning)."
    return on_dense


def _is_index_list(v: Any) -> bool:
    """Whether ``v`` is a list of positions, or an integer vector variable."""
    if isinstance(v, Variable):
        return getattr(v.type, "ndim", None) == 1 and str(v.type.dtype).startswith(("int", "uint"))
    return isinstance(v, list)


class _SparseOperators:
    """The operators and methods of sparse variables."""

    type: SparseTensorType
    __array_priority__ = 1000

    @property
    def T(self) -> Variable:
        """The transpose (CSR becomes CSC and vice versa)."""
        return transpose(self)

    @property
    def format(self) -> str:
        """``"csr"`` or ``"csc"``."""
        return self.type.format

    @property
    def ndim(self) -> int:
        """2."""
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
        """The symbolic shape (an int64 vector), read from the dense form's shape (which
        the shape rewrites compute without building it)."""
        return tensor_shape(dense_from_sparse(self))

    @property
    def size(self) -> Any:
        """The number of stored values (explicit zeros included), as in SciPy's ``nnz``."""
        return csm_data(self).size

    def astype(self, dtype: Any) -> Variable:
        """The values cast to ``dtype``."""
        return cast(self, dtype)

    def toarray(self) -> Variable:
        """The dense matrix."""
        return dense_from_sparse(self)

    todense = toarray

    def _as_TensorVariable(self) -> Variable:
        return dense_from_sparse(self)

    def sum(self, axis: int | None = None, sparse_grad: bool = False) -> Variable:
        """See :func:`~opweave.sparse.math.sp_sum`."""
        return sp_sum(self, axis=axis, sparse_grad=sparse_grad)

    def dot(self, other: Any) -> Variable:
        """See :func:`~opweave.sparse.math.structured_dot`."""
        return structured_dot(self, other)

    def conj(self) -> Variable:
        """The complex conjugate of the stored values (the variable itself when real)."""
        if self.type.dtype.startswith("complex"):
            return conjugate(self)  # type: ignore[no-any-return]
        return self  # type: ignore[return-value]

    conjugate = conj

    def zeros_like(self) -> Variable:
        """A sparse matrix of zeros of this shape, format and dtype."""
        return sp_zeros_like(self)

    def ones_like(self) -> Variable:
        """This structure with every stored value 1."""
        return sp_ones_like(self)

    def __getitem__(self, args: Any) -> Variable:
        """``x[i, j]`` (two integers: a 0-d tensor, :class:`~opweave.sparse.basic
        .GetItemScalar`), ``x[rows, cols]`` (two lists: a dense vector,
        :class:`~opweave.sparse.basic.GetItem2Lists`), ``x[rows]`` (a list or an integer
        vector: those rows, :class:`~opweave.sparse.basic.GetItemList`), or slices
        (``x[a:b]``, ``x[a:b, c:d]``: a sparse matrix, :class:`~opweave.sparse.basic
        .GetItem2d`), as in PyTensor."""
        picked: Any
        if not isinstance(args, tuple):
            args = (args,)
        if len(args) == 2 and _is_index_scalar(args[0]) and _is_index_scalar(args[1]):
            picked = get_item_scalar(self, args)
        elif len(args) == 2 and _is_index_list(args[0]):
            picked = get_item_2lists(self, args[0], args[1])
        elif len(args) == 1 and _is_index_list(args[0]):
            picked = get_item_list(self, args[0])
        else:
            picked = get_item_2d(self, args)
        return picked  # type: ignore[no-any-return]

    def __neg__(self) -> Variable:
        return neg(self)

    def __add__(self, other: Any) -> Variable:
        return add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return subtract(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return subtract(other, self)

    def __mul__(self, other: Any) -> Variable:
        return multiply(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return multiply(other, self)

    def __lt__(self, other: Any) -> Variable:
        return lt(self, other)

    def __le__(self, other: Any) -> Variable:
        return le(self, other)

    def __gt__(self, other: Any) -> Variable:
        return gt(self, other)

    def __ge__(self, other: Any) -> Variable:
        return ge(self, other)

    def __bool__(self) -> bool:
        raise TypeError("a symbolic sparse variable has no truth value")


for _name in DENSE_METHODS:
    setattr(_SparseOperators, _name, _dense_method(_name))
del _name


class SparseVariable(_SparseOperators, Variable):
    """A :class:`~opweave.graph.basic.Variable` of a
    :class:`~opweave.sparse.type.SparseTensorType`."""

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        return f"{type(self).__name__}{{{self.format},{self.dtype}}}"

    def __repr__(self) -> str:
        return str(self)


class SparseConstant(SparseVariable, Constant):
    """A sparse matrix with a fixed value (a private copy of the one given)."""

    def __init__(self, type: SparseTensorType, data: Any, name: str | None = None) -> None:
        Constant.__init__(self, type, data, name)
        if self._data is data:
            self._data = data.copy()

    def signature(self) -> tuple[Any, ...]:
        """Type, shape and a digest of the structure and values (merges equal constants)."""
        data = self._data
        digest = hashlib.blake2b(digest_size=16)
        for part in (data.data, data.indices, data.indptr):
            digest.update(part.tobytes())
        return (self.type, data.shape, digest.hexdigest())

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        data = self._data
        return (
            f"{type(self).__name__}{{{self.format},{self.dtype},shape={data.shape},nnz={data.nnz}}}"
        )


SparseTensorType.variable_type = SparseVariable
SparseTensorType.constant_type = SparseConstant


def constant(x: Any, name: str | None = None) -> SparseConstant:
    """A :class:`SparseConstant` of the SciPy sparse matrix ``x`` (its format and dtype).

    Raises
    ------
    TypeError
        If ``x`` is not a SciPy sparse matrix in CSR or CSC format.
    """
    if not _is_sparse_value(x) or x.format not in ("csr", "csc"):
        raise TypeError(
            f"sparse constant: expected a scipy.sparse csr or csc matrix, got "
            f"{type(x).__name__} {repr(x)[:60]}"
        )
    return SparseTensorType(x.format, x.dtype).make_constant(x.copy(), name=name)
