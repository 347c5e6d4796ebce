"""`TensorType`: the Type of NumPy ``ndarray`` values with a fixed dtype and rank.

A ``TensorType`` is parametrised by a dtype and a *static shape*: one entry per
dimension, either an ``int`` (the length is known when the graph is built) or
``None`` (any length). A dimension of static length 1 is *broadcastable*.

Filtering rules (what :meth:`TensorType.filter` accepts)
--------------------------------------------------------
``strict=True``
    Only an ``np.ndarray`` of exactly this dtype, rank and static shape; it is
    returned as is.
``strict=False``
    Arrays are converted when their *dtype* can be cast without loss
    (``np.can_cast(..., "safe")``); Python numbers, NumPy scalars and nested
    sequences are converted when their *values* survive the cast unchanged.
    Python floats (and NumPy floating scalars) may always be stored in a
    Type whose dtype is ``config.floatX`` when ``allow_downcast`` is ``None``
    (PyTensor's rule). ``allow_downcast=True`` allows every numeric cast.

Errors are ``TypeError`` (wrong kind, dtype, rank or static shape, lossy cast)
or ``ValueError`` (ragged nested sequences); each message starts with the
expected Type, e.g. ``TensorType(float64, shape=(None, 3))``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Variable
from opweave.graph.type import Type
from opweave.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "ShapedType",
    "TensorType",
    "all_dtypes",
    "complex_dtypes",
    "continuous_dtypes",
    "discrete_dtypes",
    "dtype_specs_map",
    "float_dtypes",
    "int_dtypes",
    "integer_dtypes",
    "uint_dtypes",
    "values_eq_approx",
]

#: ``dtype name -> (Python type, C element type, NumPy type number macro)``.
dtype_specs_map: MappingProxyType[str, tuple[type, str, str]] = MappingProxyType(
    {
        "bool": (bool, "npy_bool", "NPY_BOOL"),
        "int8": (int, "npy_int8", "NPY_INT8"),
        "int16": (int, "npy_int16", "NPY_INT16"),
        "int32": (int, "npy_int32", "NPY_INT32"),
        "int64": (int, "npy_int64", "NPY_INT64"),
        "uint8": (int, "npy_uint8", "NPY_UINT8"),
        "uint16": (int, "npy_uint16", "NPY_UINT16"),
        "uint32": (int, "npy_uint32", "NPY_UINT32"),
        "uint64": (int, "npy_uint64", "NPY_UINT64"),
        "float16": (float, "npy_float16", "NPY_FLOAT16"),
        "float32": (float, "npy_float32", "NPY_FLOAT32"),
        "float64": (float, "npy_float64", "NPY_FLOAT64"),
        "complex64": (complex, "npy_complex64", "NPY_COMPLEX64"),
        "complex128": (complex, "npy_complex128", "NPY_COMPLEX128"),
    }
)

all_dtypes: tuple[str, ...] = tuple(dtype_specs_map)
int_dtypes: tuple[str, ...] = ("int8", "int16", "int32", "int64")
uint_dtypes: tuple[str, ...] = ("uint8", "uint16", "uint32", "uint64")
integer_dtypes: tuple[str, ...] = int_dtypes + uint_dtypes
discrete_dtypes: tuple[str, ...] = ("bool", *integer_dtypes)
float_dtypes: tuple[str, ...] = ("float16", "float32", "float64")
complex_dtypes: tuple[str, ...] = ("complex64", "complex128")
continuous_dtypes: tuple[str, ...] = float_dtypes + complex_dtypes

#: Default tolerances of :func:`values_eq_approx`, by the narrowest dtype compared.
_TOLERANCES = MappingProxyType(
    {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
)
_DEFAULT_TOLERANCE = (1e-8, 1.0000000000000001e-05)  # (atol, rtol), NumPy's allclose

ShapeEntry = int | None


def _config_floatX() -> str:
    return str(config.floatX)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "(...)"


def _parse_dtype(dtype: Any) -> str:
    if dtype is None:
        raise TypeError("TensorType: dtype is required (e.g. 'float64', or 'floatX')")
    if isinstance(dtype, str) and dtype == "floatX":
        return _config_floatX()
    try:
        name = np.dtype(dtype).name
    except TypeError as exc:
        raise TypeError(f"TensorType: invalid dtype {dtype!r}: {exc}") from None
    if name not in dtype_specs_map:
        raise TypeError(
            f"TensorType: unsupported dtype {name!r}; supported: {', '.join(all_dtypes)}"
        )
    return name


def _parse_shape_entry(entry: Any) -> ShapeEntry:
    if entry is None:
        return None
    if isinstance(entry, bool | np.bool_):
        return 1 if entry else None
    if isinstance(entry, int | np.integer):
        if entry < 0:
            raise ValueError(f"TensorType: static shape entries must be >= 0, got {entry}")
        return int(entry)
    raise TypeError(
        f"TensorType: static shape entries must be None or a non-negative int (or a "
        f"broadcastable bool), got {type(entry).__name__} {entry!r}"
    )


def _parse_shape(shape: Any, broadcastable: Any) -> tuple[ShapeEntry, ...]:
    if shape is not None and broadcastable is not None:
        raise TypeError("TensorType: pass either shape or broadcastable, not both")
    spec = shape if shape is not None else broadcastable
    if spec is None:
        raise TypeError(
            "TensorType needs a static shape, e.g. shape=(None, 3) (use shape=() for scalars)"
        )
    if not isinstance(spec, Iterable) or isinstance(spec, str):
        raise TypeError(f"TensorType: shape must be a sequence, got {spec!r}")
    return tuple(_parse_shape_entry(s) for s in spec)


def _values_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Elementwise equality of two same-shape arrays, NaNs equal at the same positions."""
    with np.errstate(all="ignore"):
        eq = np.asarray(a == b)
    if eq.all():
        return True
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool((eq | (np.isnan(a) & np.isnan(b))).all())
    return False


def _cast(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``arr.astype(dtype)`` without NumPy's warnings about lossy casts."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return arr.astype(dtype)


def values_eq_approx(
    a: Any,
    b: Any,
    allow_remove_inf: bool = False,
    allow_remove_nan: bool = False,
    rtol: float | None = None,
    atol: float | None = None,
) -> bool:
    """True if the arrays ``a`` and ``b`` are approximately equal.

    Parameters
    ----------
    a, b
        NumPy arrays (or scalars) of the same shape and dtype; anything else compares unequal.
    allow_remove_inf
        Where ``a`` is infinite, accept any value of ``b``.
    allow_remove_nan
        Where ``a`` is NaN, accept any value of ``b``.
    rtol, atol
        Tolerances (default: by dtype, ``1e-5``/``1e-8`` for float64, ``1e-5`` for float32).

    Returns
    -------
    bool
        Discrete dtypes compare exactly. Floats compare like ``np.isclose``; NaNs are equal
        only to NaNs at the same position and infinities only to infinities of the same sign.
    """
    if isinstance(a, np.generic):
        a = np.asarray(a)
    if isinstance(b, np.generic):
        b = np.asarray(b)
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        return False
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    default_atol, default_rtol = _TOLERANCES.get(a.dtype.name, _DEFAULT_TOLERANCE)
    atol = default_atol if atol is None else atol
    rtol = default_rtol if rtol is None else rtol
    with np.errstate(all="ignore"):
        ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if allow_remove_nan:
            ok |= np.isnan(a)
        if allow_remove_inf:
            ok |= np.isinf(a)
    return bool(ok.all())


class ShapedType(Type):
    """What array Types of one dtype and static shape share, wherever their values live:
    the parsed ``dtype``, ``shape`` and ``name``, ``ndim``, ``broadcastable``, ``clone``,
    ``is_super``, equality, hashing and printing. :class:`TensorType` (NumPy arrays) and
    device array Types of backends (opweave-cuda's ``GpuArrayType``) derive from it.

    Parameters
    ----------
    dtype
        A NumPy dtype (``"float64"``, ``np.int32``, ...) or ``"floatX"`` for ``config.floatX``.
    shape
        The static shape: one entry per dimension, ``None`` (unknown) or an ``int``.
        Booleans are read as broadcastable flags (``True`` -> 1, ``False`` -> ``None``).
    broadcastable
        Compatibility alternative to ``shape``: a tuple of bools.
    name
        Optional name, used by ``str``.
    """

    def __init__(
        self,
        dtype: Any,
        shape: Iterable[Any] | None = None,
        broadcastable: Iterable[bool] | None = None,
        name: str | None = None,
    ) -> None:
        self.dtype: str = _parse_dtype(dtype)
        self.shape: tuple[ShapeEntry, ...] = _parse_shape(shape, broadcastable)
        self.name = name
        self.numpy_dtype: np.dtype = np.dtype(self.dtype)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Which dimensions have static length 1."""
        return tuple(s == 1 for s in self.shape)

    def clone(
        self,
        dtype: Any = None,
        shape: Iterable[Any] | None = None,
        broadcastable: Iterable[bool] | None = None,
    ) -> Any:
        """Return a Type of the same class with ``dtype`` and/or the static shape replaced.

        Parameters
        ----------
        dtype
            The new dtype (default: this one's).
        shape, broadcastable
            The new static shape, or broadcastable flags (default: this one's shape).
        """
        if shape is None and broadcastable is None:
            shape = self.shape
        return type(self)(
            self.dtype if dtype is None else dtype,
            shape=shape,
            broadcastable=broadcastable,
            name=self.name,
        )

    def is_super(self, otype: Any) -> bool:
        """True if every value of ``otype`` is a valid value of this Type.

        That is: same class, dtype and rank, and ``otype``'s static shape is at least as
        specific.
        """
        return (
            isinstance(otype, type(self))
            and otype.dtype == self.dtype
            and otype.ndim == self.ndim
            and all(s is None or s == o for s, o in zip(self.shape, otype.shape))
        )

    def get_size(self, shape_info: tuple[int, ...]) -> int:
        """The number of bytes of a value of shape ``shape_info``."""
        return int(np.prod(shape_info, dtype=np.int64)) * self.numpy_dtype.itemsize

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        return self.dtype == other.dtype and self.shape == other.shape  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.dtype, self.shape))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.dtype}, shape={self.shape})"

    def __str__(self) -> str:
        return self.name if self.name else repr(self)


class TensorType(ShapedType):
    """The Type of ``np.ndarray`` values of one dtype and rank.

    Parameters
    ----------
    dtype
        A NumPy dtype (``"float64"``, ``np.int32``, ...) or ``"floatX"`` for ``config.floatX``.
    shape
        The static shape: one entry per dimension, ``None`` (unknown) or an ``int``.
        Booleans are read as broadcastable flags (``True`` -> 1, ``False`` -> ``None``).
    broadcastable
        Compatibility alternative to ``shape``: a tuple of bools.
    name
        Optional name, used by ``str``.

    Attributes
    ----------
    dtype : str
        The dtype's name.
    shape : tuple
        The static shape.
    broadcastable : tuple of bool
        ``shape[i] == 1`` for each dimension.
    ndim : int
        The rank.
    numpy_dtype : numpy.dtype
        The dtype as a NumPy object.

    Examples
    --------
    >>> t = TensorType("float64", shape=(None, 3))
    >>> t
    TensorType(float64, shape=(None, 3))
    >>> x = t("x")  # a TensorVariable of this Type
    """

    variable_type: ClassVar[type[Variable]] = TensorVariable
    constant_type: ClassVar[type[TensorConstant]] = TensorConstant  # type: ignore[assignment]
    #: Where values of this Type live (``transfer`` targets).
    context_name: ClassVar[str] = "cpu"
    #: When true, :meth:`filter` rejects values containing NaN or infinities (DebugMode).
    filter_checks_isfinite: ClassVar[bool] = False

    def __init__(
        self,
        dtype: Any,
        shape: Iterable[Any] | None = None,
        broadcastable: Iterable[bool] | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(dtype, shape=shape, broadcastable=broadcastable, name=name)
        self._static_dims = tuple((i, s) for i, s in enumerate(self.shape) if s is not None)

    # ------------------------------------------------------------------ attributes

    def dtype_specs(self) -> tuple[type, str, str]:
        """Return ``(Python type, C element type, NumPy type number macro)`` for the dtype."""
        return dtype_specs_map[self.dtype]

    def c_element_type(self) -> str:
        """The C type of one element, e.g. ``"npy_float64"``."""
        return dtype_specs_map[self.dtype][1]

    def to_scalar_type(self) -> Any:
        """The ``opweave.scalar`` Type of one element (needs :mod:`opweave.scalar`)."""
        import opweave.scalar as ps  # type: ignore[import-not-found]

        get = getattr(ps, "get_scalar_type", None)
        return get(self.dtype) if get is not None else ps.ScalarType(self.dtype)

    # ------------------------------------------------------------------ filtering

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as an ndarray of this Type, or raise.

        Parameters
        ----------
        data
            An ndarray, NumPy scalar, Python number or nested sequence of numbers. An
            instance of an ndarray subclass (``numpy.matrix``, ``numpy.memmap``) becomes a
            plain-ndarray view of its data; a masked array is refused.
        strict
            Accept only a plain ndarray (not a subclass) of exactly this dtype, rank and
            static shape, and return it unchanged.
        allow_downcast
            ``True`` allows lossy casts; ``None`` allows only Python floats to be stored in a
            ``config.floatX`` Type; ``False`` allows no loss.

        Returns
        -------
        numpy.ndarray
            ``data`` itself when it already is a suitable ndarray, else a new array.

        Raises
        ------
        TypeError
            For ``None``, Variables, strings, non-numeric objects, masked arrays, a lossy
            cast, or a wrong rank or static shape.
        ValueError
            For ragged nested sequences.
        """
        if type(data) is np.ndarray and data.dtype == self.numpy_dtype:
            return self._check_shape(data, strict)
        if type(data) is float and not strict and self.dtype == "float64" and not self.ndim:
            return np.asarray(data)  # fast path: a Python float is exactly a float64
        if isinstance(data, np.ndarray) and type(data) is not np.ndarray:
            data = self._as_base_ndarray(data, strict)
        if type(data) is np.ndarray and data.dtype == self.numpy_dtype:
            pass
        elif strict:
            self._reject_strict(data)
        else:
            data = self._convert(data, allow_downcast)
        return self._check_shape(data, strict)

    def _as_base_ndarray(self, data: np.ndarray, strict: bool) -> np.ndarray:
        """A plain-ndarray view of an instance of an ndarray subclass, or raise.

        Values are plain ndarrays on every linker: a subclass changes what operators mean
        (``numpy.matrix`` makes ``*`` a matrix product and keeps reductions 2-d), so its
        data is viewed as a plain ndarray (no copy). A masked array is refused: its mask
        would be lost. Strict inputs take plain ndarrays only.
        """
        if strict:  # the words of the C extraction of a strict input (csrc/tensor.h)
            raise TypeError(
                f"{self!r} (strict) expected a numpy.ndarray, got an instance of the ndarray "
                f"subclass {type(data).__name__}; pass numpy.asarray(value)"
            )
        if isinstance(data, np.ma.MaskedArray):
            raise TypeError(
                f"{self!r} does not accept masked arrays (numpy.ma.MaskedArray): the mask "
                "would be lost; pass arr.filled(fill_value) or arr.data explicitly"
            )
        return data.view(np.ndarray)

    def _reject_strict(self, data: Any) -> None:
        if data is None:
            raise TypeError(f"{self!r} cannot hold None: expected a numpy.ndarray")
        if not isinstance(data, np.ndarray):
            raise TypeError(
                f"{self!r} (strict) expected a numpy.ndarray of dtype {self.dtype}, got "
                f"{type(data).__name__} {_short(data)}"
            )
        raise TypeError(
            f"{self!r} (strict) expected an ndarray of dtype {self.dtype}, got dtype {data.dtype}"
        )

    def _convert(self, data: Any, allow_downcast: bool | None) -> np.ndarray:
        arr = self._as_numeric_array(data)
        if arr.dtype == self.numpy_dtype:
            return arr
        if allow_downcast:
            return _cast(arr, self.numpy_dtype)
        if isinstance(data, np.ndarray):
            # An array's dtype decides, never its current values.
            if np.can_cast(arr.dtype, self.numpy_dtype, "safe"):
                return arr.astype(self.numpy_dtype)
            raise TypeError(
                f"{self!r} cannot store an array of dtype {arr.dtype} without risking loss of "
                f"precision (dtype mismatch): cast it to {self.dtype} first, or pass "
                "allow_downcast=True (allow_input_downcast=True when calling function)"
            )
        if (
            allow_downcast is None
            and isinstance(data, float | np.floating)
            and self.dtype == _config_floatX()
        ):
            return _cast(arr, self.numpy_dtype)
        converted = _cast(arr, self.numpy_dtype)
        if _values_equal(arr, converted):
            return converted
        raise TypeError(
            f"{self!r} cannot store the value {_short(data)} exactly (dtype {self.dtype} "
            f"would make it {_short(converted)}): convert it to {self.dtype} first, or pass "
            "allow_downcast=True (allow_input_downcast=True when calling function)"
        )

    def _as_numeric_array(self, data: Any) -> np.ndarray:
        if data is None:
            raise TypeError(f"{self!r} cannot hold None: expected an array-like numeric value")
        if isinstance(data, Variable):
            raise TypeError(
                f"{self!r} expected a numeric value but got the symbolic variable {data}: "
                "did you pass a (possibly shared) variable where a value was expected?"
            )
        if isinstance(data, str | bytes):
            raise TypeError(f"{self!r} expected a numeric value, got the string {_short(data)}")
        if isinstance(data, np.ndarray):
            arr = data
        else:
            try:
                arr = np.asarray(data)
            except ValueError as exc:
                raise ValueError(
                    f"{self!r} cannot convert {type(data).__name__} {_short(data)} to an array "
                    f"(ragged nested sequence?): {exc}"
                ) from None
            except (TypeError, OverflowError) as exc:
                raise TypeError(
                    f"{self!r} cannot convert {type(data).__name__} {_short(data)} to an array: "
                    f"{exc}"
                ) from None
        if arr.dtype.kind not in "biufc":
            raise TypeError(
                f"{self!r} expected a numeric value, got {type(data).__name__} {_short(data)} "
                f"(converts to dtype {arr.dtype}, which is not numeric)"
            )
        return arr

    def _check_shape(self, data: np.ndarray, strict: bool) -> np.ndarray:
        if data.ndim != self.ndim:
            raise TypeError(
                f"{self!r} expected {self.ndim} dimension(s), got a value with {data.ndim} "
                f"(wrong rank: shape {data.shape})"
            )
        for i, want in self._static_dims:
            if data.shape[i] != want:
                raise TypeError(
                    f"{self!r}: the value's shape {data.shape} does not match the static shape "
                    f"{self.shape} (wrong shape)"
                )
        if not data.flags.aligned:
            if strict:
                raise TypeError(f"{self!r} (strict) expected an aligned ndarray")
            data = data.copy()
        if self.filter_checks_isfinite and data.dtype.kind in "fc" and not np.isfinite(data).all():
            raise ValueError(f"{self!r}: non-finite elements are not allowed")
        return data

    def filter_inplace(
        self,
        value: Any,
        storage: Any,
        strict: bool = False,
        allow_downcast: bool | None = None,
    ) -> Any:
        """Filter ``value`` and copy it into ``storage`` when that array can hold it.

        Parameters
        ----------
        value
            The new value (anything :meth:`filter` accepts).
        storage
            The old value: reused when it is a writeable ndarray of this dtype and the
            filtered value's shape.
        strict, allow_downcast
            As for :meth:`filter`.

        Returns
        -------
        numpy.ndarray
            ``storage`` holding the new values, or the filtered value when ``storage``
            cannot be reused.
        """
        data = self.filter(value, strict=strict, allow_downcast=allow_downcast)
        if (
            type(storage) is np.ndarray
            and storage is not data
            and storage.dtype == data.dtype
            and storage.shape == data.shape
            and storage.flags.writeable
        ):
            np.copyto(storage, data)
            return storage
        return data

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Return ``other`` as a variable of this Type, or raise ``TypeError``.

        Non-variables become constants (through :meth:`filter`). A variable of an equal
        Type is returned as is; otherwise :meth:`convert_variable` is tried.
        """
        if not isinstance(other, Variable):
            return self.make_constant(self.filter(other))
        if other.type == self:
            return other
        if allow_convert:
            converted = self.convert_variable(other)
            if converted is not None:
                return converted
        raise TypeError(
            f"cannot convert variable {other} of type {other.type!r} to the expected type "
            f"{self!r}; convert it explicitly (e.g. with astype or specify_shape)"
        )

    def in_same_class(self, otype: Any) -> bool:
        """True if ``otype`` is a TensorType with the same dtype and broadcastable pattern."""
        return (
            isinstance(otype, TensorType)
            and otype.dtype == self.dtype
            and otype.broadcastable == self.broadcastable
        )

    def convert_variable(self, var: Variable) -> Variable | None:
        """Return ``var`` usable where this Type is expected, or ``None``.

        A variable whose Type is as or more specific (:meth:`is_super`) is returned as is.
        One that is less specific (same dtype and rank) goes through
        ``opweave.tensor.shape.specify_shape`` when that module is available.
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
            try:
                from opweave.tensor.shape import specify_shape  # type: ignore[import-not-found]
            except ImportError:
                return None
            return specify_shape(var, self.shape)
        return None

    # ------------------------------------------------------------------ values

    @staticmethod
    def values_eq(a: Any, b: Any, force_same_dtype: bool = True) -> bool:
        """True if ``a`` and ``b`` hold exactly the same values (NaNs at the same places)."""
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if force_same_dtype and a.dtype != b.dtype:
            return False
        return _values_equal(a, b)

    @staticmethod
    def values_eq_approx(  # type: ignore[override]
        a: Any,
        b: Any,
        allow_remove_inf: bool = False,
        allow_remove_nan: bool = False,
        rtol: float | None = None,
        atol: float | None = None,
    ) -> bool:
        """See :func:`values_eq_approx`."""
        return values_eq_approx(a, b, allow_remove_inf, allow_remove_nan, rtol, atol)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """True if the arrays ``a`` and ``b`` may share memory (False for non-arrays)."""
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def get_shape_info(self, obj: Any) -> tuple[int, ...]:
        """The value's shape (what :meth:`get_size` needs)."""
        return tuple(obj.shape)

    def value_zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        """An array of zeros of this dtype and the given shape."""
        return np.zeros(shape, dtype=self.numpy_dtype)
