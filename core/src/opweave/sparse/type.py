"""The Type of sparse matrices (PyTensor's name :class:`SparseTensorType`).

Values are SciPy sparse matrices (``scipy.sparse.csr_matrix`` or ``csc_matrix``) of one
dtype. SciPy is imported when a value is first checked, not when this module loads: graphs
over sparse variables can be built without it, and checking a value without it raises an
``ImportError`` that names the package to install.

Unlike PyTensor, :class:`SparseTensorType` is not a subclass of
:class:`~opweave.tensor.type.TensorType`: a sparse value is not an ndarray, so dense Ops
(and their C code) never receive one. ``opweave.tensor.as_tensor_variable`` of a sparse
variable is its dense form (:class:`~opweave.sparse.basic.DenseFromSparse`), which is what
a dense Op computes with.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from types import ModuleType
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Variable
from opweave.tensor.type import ShapedType, TensorType

__all__ = ["SPARSE_FORMATS", "SparseTensorType", "scipy_sparse"]

#: The storage formats a :class:`SparseTensorType` can have.
SPARSE_FORMATS: tuple[str, ...] = ("csr", "csc")


def scipy_sparse() -> ModuleType:
    """``scipy.sparse``, imported on first use.

    Raises
    ------
    ImportError
        When SciPy is not installed (the Python backend's ``scipy`` extra installs it).
    """
    try:
        return importlib.import_module("scipy.sparse")
    except ImportError as exc:
        raise ImportError(
            "sparse values are scipy.sparse matrices: install SciPy "
            "(pip install scipy) to compute with opweave.sparse"
        ) from exc


def _is_sparse_value(value: Any) -> bool:
    """Whether ``value`` is a SciPy sparse matrix or array (without importing SciPy)."""
    module = type(value).__module__
    return module.startswith("scipy.sparse") and hasattr(value, "nnz")


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "(...)"


class SparseTensorType(ShapedType):
    """The Type of SciPy sparse matrices of one format and dtype (always 2-d).

    Parameters
    ----------
    format
        ``"csr"`` (compressed rows) or ``"csc"`` (compressed columns).
    dtype
        A NumPy dtype, or ``"floatX"``.
    shape
        The static shape: two entries, each ``None`` or an ``int`` (default unknown).
    name
        Optional name, used by ``str``.
    broadcastable
        Compatibility alternative to ``shape``.

    Examples
    --------
    >>> t = SparseTensorType("csr", "float64")
    >>> t
    Sparse(float64, (None, None), csr)
    >>> x = t("x")  # a SparseVariable
    """

    ndim_fixed: ClassVar[int] = 2
    #: ``format`` -> the Op making a sparse matrix of that format from a dense one
    #: (:mod:`opweave.sparse.basic` fills it in: ``csr_from_dense``, ``csc_from_dense``).
    from_dense: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        format: str,
        dtype: Any,
        shape: Iterable[Any] | None = None,
        name: str | None = None,
        broadcastable: Iterable[bool] | None = None,
    ) -> None:
        if format not in SPARSE_FORMATS:
            raise ValueError(
                f"SparseTensorType: unsupported format {format!r}; expected one of {SPARSE_FORMATS}"
            )
        if shape is None and broadcastable is None:
            shape = (None, None)
        super().__init__(dtype, shape=shape, broadcastable=broadcastable, name=name)
        if self.ndim != self.ndim_fixed:
            raise ValueError(
                f"SparseTensorType: sparse values are matrices (2 dimensions), got the "
                f"static shape {self.shape}"
            )
        self.format = format

    # ------------------------------------------------------------------ identity

    def clone(
        self,
        dtype: Any = None,
        shape: Iterable[Any] | None = None,
        broadcastable: Iterable[bool] | None = None,
        format: str | None = None,
    ) -> SparseTensorType:
        """A Type like this one with the dtype, static shape and/or format replaced."""
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(
            self.format if format is None else format,
            self.dtype if dtype is None else dtype,
            shape=shape,
            name=self.name,
            broadcastable=broadcastable,
        )

    def is_super(self, otype: Any) -> bool:
        """True if every value of ``otype`` is a value of this Type (same format too)."""
        return super().is_super(otype) and otype.format == self.format

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` when this Type accepts it; a dense matrix variable of this dtype becomes a
        sparse matrix of this format (``csr_from_dense``/``csc_from_dense``), as in
        PyTensor; ``None`` for anything else (a sparse matrix of the other format too)."""
        var_type = var.type
        if isinstance(var_type, TensorType) and not isinstance(var_type, SparseTensorType):
            make = self.from_dense.get(self.format)
            if make is None or var_type.ndim != 2 or var_type.dtype != self.dtype:
                return None
            converted: Variable = make(var)
            return converted if self.is_super(converted.type) else None
        return super().convert_variable(var)

    def __eq__(self, other: object) -> bool:
        equal = super().__eq__(other)
        if equal is NotImplemented or not equal:
            return equal
        return self.format == other.format  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.dtype, self.shape, self.format))

    def __repr__(self) -> str:
        return f"Sparse({self.dtype}, {self.shape}, {self.format})"

    def __reduce__(self) -> Any:
        return (type(self), (self.format, self.dtype, self.shape, self.name))

    # ------------------------------------------------------------------ values

    def format_class(self) -> type:
        """The SciPy class of this Type's values (``csr_matrix`` or ``csc_matrix``)."""
        sp = scipy_sparse()
        return sp.csr_matrix if self.format == "csr" else sp.csc_matrix

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as a SciPy sparse matrix of this Type, or raise.

        Parameters
        ----------
        data
            A SciPy sparse matrix or array of any format. It is converted to this Type's
            format unless ``strict``.
        strict
            Accept only a matrix of exactly this format, dtype and static shape.
        allow_downcast
            ``True`` allows lossy dtype casts; otherwise only safe ones are made.

        Raises
        ------
        TypeError
            For ``None``, symbolic variables, dense arrays and other non-sparse values, a
            wrong format or dtype under ``strict``, a lossy cast, or a wrong static shape.
        """
        if isinstance(data, Variable):
            raise TypeError(
                f"{self!r} expected a scipy.sparse matrix but got the symbolic variable "
                f"{data}: did you pass a (possibly shared) variable where a value was expected?"
            )
        if not _is_sparse_value(data):
            raise TypeError(
                f"{self!r} expected a scipy.sparse {self.format}_matrix, got "
                f"{type(data).__name__} {_short(data)} (convert a dense array with "
                f"scipy.sparse.{self.format}_matrix(value))"
            )
        cls = self.format_class()
        if type(data) is cls and data.dtype == self.numpy_dtype:
            return self._check_shape(data)
        if strict:
            raise TypeError(
                f"{self!r} (strict) expected a scipy.sparse {self.format}_matrix of dtype "
                f"{self.dtype}, got {type(data).__name__} of dtype {data.dtype}"
            )
        if data.dtype != self.numpy_dtype and not allow_downcast:
            if not np.can_cast(data.dtype, self.numpy_dtype, "safe"):
                raise TypeError(
                    f"{self!r}: expected {self.dtype} dtype but got {data.dtype}, which "
                    "cannot be stored without risking loss of precision: cast the value to "
                    f"{self.dtype} first, or pass allow_downcast=True "
                    "(allow_input_downcast=True when calling function)"
                )
        converted = cls(data, dtype=self.numpy_dtype)
        return self._check_shape(converted)

    def _check_shape(self, data: Any) -> Any:
        for i, want in enumerate(self.shape):
            if want is not None and data.shape[i] != want:
                raise TypeError(
                    f"{self!r}: the value's shape {data.shape} does not match the static "
                    f"shape {self.shape} (wrong shape)"
                )
        return data

    def is_valid_value(self, a: Any) -> bool:
        """True for a SciPy sparse matrix of this format, dtype and static shape."""
        try:
            self.filter(a, strict=True)
        except (TypeError, ValueError):
            return False
        return True

    def values_eq(self, a: Any, b: Any) -> bool:
        """True if the sparse matrices ``a`` and ``b`` hold the same values."""
        if not (_is_sparse_value(a) and _is_sparse_value(b)) or a.shape != b.shape:
            return False
        return bool(abs(a - b).sum() == 0)

    def values_eq_approx(self, a: Any, b: Any, eps: float = 1e-6) -> bool:
        """True if every element of ``a - b`` is below ``eps`` in magnitude."""
        if not (_is_sparse_value(a) and _is_sparse_value(b)) or a.shape != b.shape:
            return False
        diff = abs(a - b)
        return bool(diff.nnz == 0 or diff.data.max() < eps)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """True if ``a`` and ``b`` (sparse matrices or ndarrays) may share a buffer."""
        if a is b:
            return True

        def buffers(value: Any) -> list[np.ndarray]:
            if _is_sparse_value(value):
                return [
                    buf
                    for buf in (getattr(value, n, None) for n in ("data", "indices", "indptr"))
                    if isinstance(buf, np.ndarray)
                ]
            return [value] if isinstance(value, np.ndarray) else []

        return any(np.may_share_memory(x, y) for x in buffers(a) for y in buffers(b))

    def get_shape_info(self, obj: Any) -> tuple[Any, ...]:
        """``(shape, data size, indices size, indptr size)`` of a value."""
        obj = self.filter(obj)
        return (obj.shape, obj.data.size, obj.indices.size, obj.indptr.size)

    def get_size(self, shape_info: tuple[Any, ...]) -> int:
        """The bytes of a value's data, indices and index pointers."""
        _, n_data, n_indices, n_indptr = shape_info
        return int(n_data * self.numpy_dtype.itemsize + (n_indices + n_indptr) * 4)

    def zeros_like(self, var: Variable) -> Variable:
        """A sparse matrix of zeros shaped like ``var`` (the gradient engine's hook)."""
        return var.zeros_like()  # type: ignore[attr-defined, no-any-return]

    def ones_like(self, var: Variable) -> Variable:
        """``var``'s structure with every stored value 1 (the gradient engine's hook)."""
        return var.ones_like()  # type: ignore[attr-defined, no-any-return]
