"""The :class:`ScalarType` of zero-dimensional values, its instances and dtype promotion.

A ScalarType stands for one NumPy scalar dtype. Its values are NumPy scalars
(``np.float64(1.5)``, ``np.int8(3)``, ``np.bool_(True)``, ...). The module also
defines one instance per supported dtype (``float64``, ``int8``, ``bool_``, ...),
groups of them (``float_types``, ``discrete_types``, ...) and :func:`upcast`, the
promotion rule every scalar (and later tensor) Op uses for its output dtype.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Hashable
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.type import Type

#: ``dtype -> (C element type, class-style name)`` for every supported dtype.
DTYPE_SPECS: MappingProxyType[str, tuple[str, str]] = MappingProxyType(
    {
        "bool": ("npy_bool", "Bool"),
        "int8": ("npy_int8", "Int8"),
        "int16": ("npy_int16", "Int16"),
        "int32": ("npy_int32", "Int32"),
        "int64": ("npy_int64", "Int64"),
        "uint8": ("npy_uint8", "UInt8"),
        "uint16": ("npy_uint16", "UInt16"),
        "uint32": ("npy_uint32", "UInt32"),
        "uint64": ("npy_uint64", "UInt64"),
        "float16": ("npy_float16", "Float16"),
        "float32": ("npy_float32", "Float32"),
        "float64": ("npy_float64", "Float64"),
        "complex64": ("npy_complex64", "Complex64"),
        "complex128": ("npy_complex128", "Complex128"),
    }
)

#: ``(rtol, atol)`` used by :meth:`ScalarType.values_eq_approx`, per floating dtype.
_TOLERANCES: MappingProxyType[str, tuple[float, float]] = MappingProxyType(
    {
        "float16": (1e-2, 1e-3),
        "float32": (1e-5, 1e-5),
        "float64": (1e-5, 1e-8),
        "complex64": (1e-5, 1e-5),
        "complex128": (1e-5, 1e-8),
    }
)


def _config() -> Any:
    return config


def floatX() -> str:
    """Return ``config.floatX``, the default floating-point dtype."""
    return str(_config().floatX)


@functools.lru_cache(maxsize=256)
def _cached_dtype_name(dtype: Any) -> str:
    return str(np.dtype(dtype).name)


def numpy_dtype_name(dtype: Any) -> str:
    """NumPy's name of ``dtype`` (a ``np.dtype``, a scalar type, a string). NumPy computes
    ``dtype.name`` in Python, slowly enough to show in compiles that make many constants,
    so names of hashable dtypes are remembered.

    Raises
    ------
    TypeError
        If NumPy does not understand ``dtype``.
    """
    try:
        return _cached_dtype_name(dtype)
    except TypeError:
        if isinstance(dtype, Hashable):
            raise
        return str(np.dtype(dtype).name)  # e.g. a list describing a structured dtype


def normalize_dtype(dtype: Any) -> str:
    """Return the canonical name of ``dtype`` (``"floatX"`` means ``config.floatX``).

    Raises
    ------
    TypeError
        If ``dtype`` is not one of the dtypes a :class:`ScalarType` supports.
    """
    if isinstance(dtype, str):
        if dtype in DTYPE_SPECS:  # already canonical: the common case, without NumPy
            return dtype
        if dtype == "floatX":
            return floatX()
    try:
        name = numpy_dtype_name(dtype)
    except TypeError as exc:
        raise TypeError(f"{dtype!r} is not a NumPy dtype") from exc
    if name not in DTYPE_SPECS:
        raise TypeError(
            f"unsupported scalar dtype {name!r}; expected one of {', '.join(DTYPE_SPECS)}"
        )
    return name


@functools.lru_cache(maxsize=1024)
def _promoted(names: tuple[str, ...]) -> str:
    """NumPy's promotion of the dtypes ``names``, by name (remembered: NumPy builds a
    dtype's name in Python, slowly enough to show when graphs are built)."""
    return str(np.result_type(*[np.dtype(n) for n in names]).name)


def upcast(*dtypes: Any) -> str:
    """Return the dtype of an operation combining values of ``dtypes``.

    NumPy's promotion of dtypes (:func:`numpy.result_type`), except that, as in
    PyTensor, with ``config.cast_policy == "numpy+floatX"`` and ``config.floatX``
    set to ``float32`` (``float16``) a ``float64`` result is brought back to
    ``float32`` (``float16``) unless one of ``dtypes`` explicitly is a wider float.

    Parameters
    ----------
    *dtypes
        At least one dtype (names, NumPy dtypes or ScalarTypes).

    Returns
    -------
    The dtype name, e.g. ``"float64"``.
    """
    if not dtypes:
        raise TypeError("upcast needs at least one dtype")
    names = [normalize_dtype(getattr(d, "dtype", d)) for d in dtypes]
    result = _promoted(tuple(names))
    config = _config()
    if config.cast_policy != "numpy+floatX":
        return result
    fx = str(config.floatX)
    if fx == "float32" and result == "float64" and "float64" not in names:
        return "float32"
    if fx == "float16" and result in ("float32", "float64"):
        if not any(n in ("float32", "float64") for n in names):
            return "float16"
    return result


def _same_value(original: np.ndarray, converted: np.ndarray) -> bool:
    """True if the 0-d ``converted`` holds exactly ``original``'s value (NaN equals NaN)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if original.dtype.kind in "fc" and bool(np.isnan(original)):
            return converted.dtype.kind in "fc" and bool(np.isnan(converted))
        back = converted.astype(original.dtype)
        return bool(back == original) and bool(converted == original)


def _exact_int_range(dtype: np.dtype[Any]) -> tuple[int, int]:
    """The range of Python ints a dtype holds exactly (empty for bool)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    if dtype.kind in "fc":
        mantissa = np.finfo(dtype).nmant + 1
        return -(2**mantissa), 2**mantissa
    return 1, 0


def _both_nan(a: np.ndarray, b: np.ndarray) -> bool:
    """True if the 0-d ``a`` and ``b`` are both NaN."""
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        return bool(np.isnan(a)) and bool(np.isnan(b))
    return False


class ScalarType(Type):
    """The Type of a zero-dimensional value of one NumPy dtype.

    Parameters
    ----------
    dtype
        A NumPy dtype or its name; ``"floatX"`` means ``config.floatX``.

    Attributes
    ----------
    dtype : str
        The canonical dtype name.
    ndim : int
        Always 0.
    shape : tuple
        Always ``()``.

    Examples
    --------
    >>> from opweave.scalar import ScalarType
    >>> x = ScalarType("float64")("x")
    >>> ScalarType("float64").filter(3)
    np.float64(3.0)
    """

    ndim = 0
    shape: tuple[int, ...] = ()

    def __init__(self, dtype: Any) -> None:
        self.dtype = normalize_dtype(dtype)
        self._np_dtype = np.dtype(self.dtype)
        self._ctor = self._np_dtype.type
        self._int_range = _exact_int_range(self._np_dtype)
        self._holds_python_floats = self.dtype in ("float64", "complex128")

    # ------------------------------------------------------------------ identity

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash((type(self), self.dtype))

    def __str__(self) -> str:
        return self.dtype

    def __repr__(self) -> str:
        return f"ScalarType({self.dtype})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.dtype,))

    def clone(self, dtype: Any = None, broadcastable: Any = None) -> ScalarType:
        """Return a ScalarType of ``dtype`` (default: this one's)."""
        if broadcastable not in (None, ()):
            raise TypeError("a ScalarType has no broadcastable pattern to change")
        return type(self)(self.dtype if dtype is None else dtype)

    # ------------------------------------------------------------------ values

    @property
    def numpy_dtype(self) -> np.dtype[Any]:
        """The :class:`numpy.dtype` of the values."""
        return self._np_dtype

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` as a NumPy scalar of this dtype, or raise ``TypeError``.

        Parameters
        ----------
        data
            The value: a Python or NumPy number, or a zero-dimensional array.
        strict
            If true, ``data`` must already be a NumPy scalar of exactly this dtype and is
            returned as is.
        allow_downcast
            ``True`` allows lossy conversions (they wrap or round as NumPy's ``astype``
            does). ``None`` allows only one: a Python ``float`` stored into a type whose
            dtype is ``config.floatX``. ``False`` allows none.

        Raises
        ------
        TypeError
            If ``data`` is not a number, not zero-dimensional, or would lose precision.
        """
        if strict:
            if isinstance(data, np.generic) and data.dtype == self._np_dtype:
                return data
            raise TypeError(
                f"{self!r} expected a NumPy scalar of dtype {self.dtype}, got "
                f"{type(data).__name__} {data!r} (strict filtering casts nothing)"
            )
        if isinstance(data, np.generic) and data.dtype == self._np_dtype:
            return data
        if type(data) is np.ndarray and data.ndim == 0 and data.dtype == self._np_dtype:
            return data[()]  # what the conversion below gives, without its checks
        # Fast paths for Python numbers that convert exactly (the common call case).
        py_type = type(data)
        if py_type is float:
            if self._holds_python_floats:
                return self._ctor(data)
        elif py_type is int:
            low, high = self._int_range
            if low <= data <= high:
                return self._ctor(data)
        elif py_type is bool and self._np_dtype.kind == "b":
            return self._ctor(data)
        if data is None or isinstance(data, str | bytes):
            raise TypeError(f"{self!r} expected a number, got {type(data).__name__} {data!r}")
        try:
            original = np.asarray(data)
        except (TypeError, ValueError, OverflowError) as exc:
            raise TypeError(
                f"{self!r} cannot convert {type(data).__name__} {data!r} to {self.dtype}"
            ) from exc
        if original.ndim != 0:
            raise TypeError(
                f"{self!r} expected a scalar (0 dimensions), got a value of shape {original.shape}"
            )
        if original.dtype.kind not in "biufc":
            raise TypeError(
                f"{self!r} expected a number, got {type(data).__name__} {data!r} "
                f"(dtype {original.dtype})"
            )
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            converted = original.astype(self._np_dtype)
        if (
            allow_downcast
            or (
                allow_downcast is None
                and isinstance(data, float)
                and not isinstance(data, np.generic)
                and self.dtype == floatX()
            )
            or _same_value(original, converted)
        ):
            return converted[()]
        raise TypeError(
            f"{self!r} cannot store {type(data).__name__} {data!r} (dtype {original.dtype}) "
            f"without losing precision; pass allow_downcast=True (allow_input_downcast=True "
            f"for a function) to allow it"
        )

    def is_valid_value(self, a: Any) -> bool:
        """True iff ``a`` is a NumPy scalar of this dtype."""
        return isinstance(a, np.generic) and a.dtype == self._np_dtype

    def values_eq(self, a: Any, b: Any) -> bool:
        """True iff ``a`` and ``b`` are equal (two NaNs count as equal)."""
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.shape != () or b_arr.shape != ():
            return False
        return bool(a_arr == b_arr) or _both_nan(a_arr, b_arr)

    def values_eq_approx(
        self, a: Any, b: Any, rtol: float | None = None, atol: float | None = None
    ) -> bool:
        """True iff ``a`` and ``b`` are close for this dtype.

        Integers and booleans must be equal. Floats use a relative and an absolute
        tolerance that depend on the dtype (``rtol``/``atol`` override them); NaN
        equals NaN and infinities must have the same sign.
        """
        if self.dtype not in _TOLERANCES:
            return self.values_eq(a, b)
        a_arr, b_arr = np.asarray(a), np.asarray(b)
        if a_arr.shape != () or b_arr.shape != ():
            return False
        default_rtol, default_atol = _TOLERANCES[self.dtype]
        with np.errstate(all="ignore"):
            return bool(
                np.isclose(
                    a_arr,
                    b_arr,
                    rtol=default_rtol if rtol is None else rtol,
                    atol=default_atol if atol is None else atol,
                    equal_nan=True,
                )
            )

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Always false: NumPy scalars are immutable."""
        return False

    def get_shape_info(self, obj: Any) -> Any:
        """Scalars have no shape; return the itemsize."""
        return self._np_dtype.itemsize

    def get_size(self, shape_info: Any) -> int:
        """Return the number of bytes of one value."""
        return int(shape_info)

    # ------------------------------------------------------------------ dtype helpers

    def dtype_specs(self) -> tuple[type, str, str]:
        """Return ``(NumPy scalar class, C element type, class-style name)``."""
        c_type, cls_name = DTYPE_SPECS[self.dtype]
        return self._np_dtype.type, c_type, cls_name

    def upcast(self, *others: ScalarType | str) -> str:
        """Return :func:`upcast` of this dtype and ``others``."""
        return upcast(self.dtype, *others)

    @property
    def is_discrete(self) -> bool:
        """True for booleans and integers."""
        return self._np_dtype.kind in "biu"

    @property
    def is_continuous(self) -> bool:
        """True for floats and complex numbers."""
        return self._np_dtype.kind in "fc"


bool_ = ScalarType("bool")
#: Alias of :data:`bool_` that does not read like the builtin.
boolean = bool_
int8 = ScalarType("int8")
int16 = ScalarType("int16")
int32 = ScalarType("int32")
int64 = ScalarType("int64")
uint8 = ScalarType("uint8")
uint16 = ScalarType("uint16")
uint32 = ScalarType("uint32")
uint64 = ScalarType("uint64")
float16 = ScalarType("float16")
float32 = ScalarType("float32")
float64 = ScalarType("float64")
complex64 = ScalarType("complex64")
complex128 = ScalarType("complex128")

int_types: tuple[ScalarType, ...] = (int8, int16, int32, int64)
uint_types: tuple[ScalarType, ...] = (uint8, uint16, uint32, uint64)
integer_types: tuple[ScalarType, ...] = int_types + uint_types
float_types: tuple[ScalarType, ...] = (float16, float32, float64)
complex_types: tuple[ScalarType, ...] = (complex64, complex128)
discrete_types: tuple[ScalarType, ...] = (bool_, *integer_types)
continuous_types: tuple[ScalarType, ...] = float_types + complex_types
all_types: tuple[ScalarType, ...] = discrete_types + continuous_types

discrete_dtypes: tuple[str, ...] = tuple(t.dtype for t in discrete_types)
integer_dtypes: tuple[str, ...] = tuple(t.dtype for t in integer_types)
float_dtypes: tuple[str, ...] = tuple(t.dtype for t in float_types)
complex_dtypes: tuple[str, ...] = tuple(t.dtype for t in complex_types)
continuous_dtypes: tuple[str, ...] = tuple(t.dtype for t in continuous_types)
all_dtypes: tuple[str, ...] = tuple(t.dtype for t in all_types)

_BY_DTYPE: MappingProxyType[str, ScalarType] = MappingProxyType({t.dtype: t for t in all_types})


def get_scalar_type(dtype: Any) -> ScalarType:
    """Return the ScalarType of ``dtype`` (the shared instance; ``"floatX"`` is allowed)."""
    return _BY_DTYPE[normalize_dtype(dtype)]
