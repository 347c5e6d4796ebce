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

Constructors
------------
As in PyTensor, this module also holds the constructors of tensor variables: ``scalar``,
``vector``, ``matrix``, ``row``, ``col``, ``tensor3`` ... ``tensor7`` and ``tensor``, the
typed Types ``dscalar``, ``fvector``, ``imatrix``, ... (``dmatrix("x")`` makes a variable)
and the plural forms ``scalars``, ``dvectors``, ``matrices``, ... :
``x, y = dscalars("xy")``, ``a, b = dvectors("a", "b")``, ``three = scalars(3)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Variable
from opweave.graph.type import Type
from opweave.graph.utils import is_masked_array
from opweave.scalar.basic import apply_across_args
from opweave.scalar.type import ScalarType, get_scalar_type, numpy_dtype_name
from opweave.tensor.variable import TensorConstant, TensorVariable

__all__ = [
    "ShapedType",
    "TensorType",
    "all_dtypes",
    "bcol",
    "bmatrix",
    "brow",
    "bscalar",
    "btensor3",
    "btensor4",
    "btensor5",
    "btensor6",
    "btensor7",
    "bvector",
    "ccol",
    "cmatrix",
    "col",
    "cols",
    "complex_dtypes",
    "complex_matrix_types",
    "complex_scalar_types",
    "complex_types",
    "complex_vector_types",
    "continuous_dtypes",
    "crow",
    "cscalar",
    "ctensor3",
    "ctensor4",
    "ctensor5",
    "ctensor6",
    "ctensor7",
    "cvector",
    "dcol",
    "dcols",
    "discrete_dtypes",
    "dmatrices",
    "dmatrix",
    "drow",
    "drows",
    "dscalar",
    "dscalars",
    "dtensor3",
    "dtensor3s",
    "dtensor4",
    "dtensor4s",
    "dtensor5",
    "dtensor5s",
    "dtensor6",
    "dtensor6s",
    "dtensor7",
    "dtensor7s",
    "dtype_specs_map",
    "dvector",
    "dvectors",
    "fcol",
    "fcols",
    "float_dtypes",
    "float_matrix_types",
    "float_scalar_types",
    "float_types",
    "float_vector_types",
    "fmatrices",
    "fmatrix",
    "frow",
    "frows",
    "fscalar",
    "fscalars",
    "ftensor3",
    "ftensor3s",
    "ftensor4",
    "ftensor4s",
    "ftensor5",
    "ftensor5s",
    "ftensor6",
    "ftensor6s",
    "ftensor7",
    "ftensor7s",
    "fvector",
    "fvectors",
    "icol",
    "icols",
    "imatrices",
    "imatrix",
    "int_dtypes",
    "int_matrix_types",
    "int_scalar_types",
    "int_types",
    "int_vector_types",
    "integer_dtypes",
    "irow",
    "irows",
    "iscalar",
    "iscalars",
    "itensor3",
    "itensor3s",
    "itensor4",
    "itensor4s",
    "itensor5",
    "itensor5s",
    "itensor6",
    "itensor6s",
    "itensor7",
    "itensor7s",
    "ivector",
    "ivectors",
    "lcol",
    "lcols",
    "lmatrices",
    "lmatrix",
    "lrow",
    "lrows",
    "lscalar",
    "lscalars",
    "ltensor3",
    "ltensor3s",
    "ltensor4",
    "ltensor4s",
    "ltensor5",
    "ltensor5s",
    "ltensor6",
    "ltensor6s",
    "ltensor7",
    "ltensor7s",
    "lvector",
    "lvectors",
    "matrices",
    "matrix",
    "row",
    "rows",
    "scalar",
    "scalars",
    "tensor",
    "tensor3",
    "tensor3s",
    "tensor4",
    "tensor4s",
    "tensor5",
    "tensor5s",
    "tensor6",
    "tensor6s",
    "tensor7",
    "tensor7s",
    "ubscalar",
    "uint_dtypes",
    "uiscalar",
    "ulscalar",
    "uwscalar",
    "values_eq_approx",
    "values_eq_approx_always_true",
    "values_eq_approx_remove_nan",
    "vector",
    "vectors",
    "wcol",
    "wmatrix",
    "wrow",
    "wscalar",
    "wtensor3",
    "wtensor4",
    "wtensor5",
    "wtensor6",
    "wtensor7",
    "wvector",
    "zcol",
    "zmatrix",
    "zrow",
    "zscalar",
    "ztensor3",
    "ztensor4",
    "ztensor5",
    "ztensor6",
    "ztensor7",
    "zvector",
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
    if isinstance(dtype, str):
        if dtype in dtype_specs_map:  # already a supported dtype's name: the common case
            return dtype
        if dtype == "floatX":
            return _config_floatX()
    try:
        name = numpy_dtype_name(dtype)
    except TypeError as exc:
        raise TypeError(f"TensorType: invalid dtype {dtype!r}: {exc}") from None
    if name not in dtype_specs_map:
        raise TypeError(
            f"TensorType: unsupported dtype {name!r}; supported: {', '.join(all_dtypes)}"
        )
    return name


class StaticShapeEntryError(TypeError, ValueError):
    """A static shape entry that is neither ``None``, an int nor a bool.

    It is both a ``TypeError`` (the entry has the wrong type) and a ``ValueError``
    (PyTensor's contract for ``TensorType(dtype, shape=("1",))``).
    """


def _parse_shape_entry(entry: Any) -> ShapeEntry:
    if entry is None:
        return None
    if isinstance(entry, bool | np.bool_):
        return 1 if entry else None
    if isinstance(entry, int | np.integer):
        if entry < 0:
            raise ValueError(f"TensorType: static shape entries must be >= 0, got {entry}")
        return int(entry)
    raise StaticShapeEntryError(
        "TensorType broadcastable/shape must be a boolean, integer or None: static shape "
        f"entries must be None or a non-negative int (or a broadcastable bool), got "
        f"{type(entry).__name__} {entry!r}"
    )


def _warn_broadcastable_keyword() -> None:
    warnings.warn(
        "The `broadcastable` keyword is deprecated; use `shape` (True -> 1, False -> None).",
        DeprecationWarning,
        stacklevel=5,
    )


def _parse_shape(shape: Any, broadcastable: Any) -> tuple[ShapeEntry, ...]:
    if shape is not None and broadcastable is not None:
        raise TypeError("TensorType: pass either shape or broadcastable, not both")
    if broadcastable is not None:
        _warn_broadcastable_keyword()
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


def values_eq_approx_remove_nan(a: Any, b: Any) -> bool:
    """:func:`values_eq_approx` where NaN in either value counts as equal to anything."""
    return values_eq_approx(a, b, False, True)


def values_eq_approx_always_true(a: Any, b: Any) -> bool:
    """Always ``True`` (PyTensor's function of this name).

    Set as a variable's ``tag.values_eq_approx`` when its values are arbitrary (an
    uninitialised buffer), so that checks comparing two computations of it accept anything.
    """
    return True


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
        return self.dtype == other.dtype and self.shape == other.shape

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

    variable_type: ClassVar[type[TensorVariable]] = TensorVariable
    constant_type: ClassVar[type[TensorConstant]] = TensorConstant
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

    def __reduce_ex__(self, protocol: Any) -> Any:
        # A TensorType pickles as its arguments (a graph pickles one per variable);
        # subclasses, which may take other arguments, pickle their attributes.
        if type(self) is TensorType:
            return (TensorType, (self.dtype, self.shape, None, self.name))
        return super().__reduce_ex__(protocol)

    if TYPE_CHECKING:
        # Builds a ``variable_type``: a TensorVariable (a root, owned by no node).
        def make_variable(self, name: str | None = None) -> TensorVariable[None]: ...

    def __call__(
        self, name: str | None = None, *, shape: Iterable[Any] | None = None
    ) -> TensorVariable[None]:
        """Return a new variable of this Type, or of a more specific static shape.

        Parameters
        ----------
        name
            The variable's name.
        shape
            A static shape at least as specific as this Type's (``None`` entries may become
            ints; known lengths and the rank must stay): the variable gets this Type with
            that shape (``fmatrix(shape=(1, None))`` is a ``frow`` variable).

        Raises
        ------
        ValueError
            When ``shape`` is not a specialisation of this Type's static shape.
        """
        if shape is not None:
            new_type = self.clone(shape=shape)
            if not self.is_super(new_type):
                raise ValueError(
                    f"shape={tuple(shape)!r} is incompatible with the static shape "
                    f"{self.shape!r} of {self!r}: only None entries may be given a length"
                )
            return new_type(name)
        return super().__call__(name)

    # ------------------------------------------------------------------ attributes

    def dtype_specs(self) -> tuple[type, str, str]:
        """Return ``(Python type, C element type, NumPy type number macro)`` for the dtype."""
        return dtype_specs_map[self.dtype]

    def c_element_type(self) -> str:
        """The C type of one element, e.g. ``"npy_float64"``."""
        return dtype_specs_map[self.dtype][1]

    def to_scalar_type(self) -> ScalarType:
        """The ``opweave.scalar`` Type of one element."""
        return get_scalar_type(self.dtype)

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
        if is_masked_array(data):
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
                    f"{self.shape} (wrong shape: the type's shape ({self.shape}) is not "
                    f"compatible with the data's ({data.shape}))"
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
    def values_eq_approx(
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


# ====================================================================== constructors
#
# As in PyTensor, ``opweave.tensor.type`` is where the constructors of tensor variables
# live: the functions ``scalar``, ``vector``, ... ``tensor7`` and ``tensor`` (default dtype
# ``config.floatX``), the typed Types ``dscalar``, ``fmatrix``, ... and their plural forms
# (``dscalars("a", "b")``, ``scalars("xy")``, ``matrices(3)``: see
# :func:`~opweave.scalar.basic.apply_across_args`). ``opweave.tensor.constructors`` and
# ``opweave.tensor`` re-export them.


_DTYPE_NAME_MESSAGE = (
    "This name looks like a dtype, which you should pass as a keyword argument only"
)


def _looks_like_dtype(name: Any) -> bool:
    """True for ``"floatX"`` and for names of more than two characters NumPy reads as a dtype."""
    text = str(name)
    if text == "floatX":
        return True
    if isinstance(name, str) and len(text) <= 2:
        return False  # one- and two-letter names ("a", "x1") are names
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deprecated dtype codes still count
            np.dtype(name)
    except (TypeError, ValueError):
        return False
    return True


def _check_name(name: Any) -> None:
    if name is None:
        return
    if _looks_like_dtype(name):
        raise ValueError(
            f"{_DTYPE_NAME_MESSAGE}: the first positional argument is the variable's name, "
            f"got {name!r}; pass the dtype by keyword (dtype={name!r})"
        )
    if not isinstance(name, str):
        raise TypeError(f"a variable's name must be a str or None, got {name!r}")


def _validate_static_shape(shape: Any, ndim: int, what: str) -> tuple[Any, ...]:
    """``shape`` as a tuple of ``ndim`` entries, each None or an int, or raise."""
    if not isinstance(shape, tuple):
        raise TypeError(
            f"Shape must be a tuple, got {type(shape).__name__} {shape!r} ({what}: the static "
            f"shape must be a tuple of {ndim} entries)"
        )
    if len(shape) != ndim:
        raise ValueError(f"Shape must be a tuple of length {ndim}, got {shape!r} ({what})")
    if not all(s is None or isinstance(s, int | np.integer) for s in shape):
        raise TypeError(f"Shape entries must be None or integer, got {shape!r} ({what})")
    return shape


def _make(name: str | None, dtype: Any, shape: tuple[Any, ...]) -> TensorVariable:
    _check_name(name)
    ttype = TensorType(_config_floatX() if dtype is None else dtype, shape=shape)
    return ttype(name)


def tensor(
    name: str | None = None,
    *,
    dtype: Any = None,
    shape: Sequence[ShapeEntry] | None = None,
    broadcastable: Sequence[bool] | None = None,
) -> TensorVariable:
    """Return a symbolic tensor of any rank.

    Parameters
    ----------
    name
        The variable's name.
    dtype
        Its dtype (default ``config.floatX``).
    shape
        The static shape (``None`` entries for unknown lengths); its length is the rank.
    broadcastable
        Compatibility alternative to ``shape``: a tuple of bools.

    Raises
    ------
    TypeError
        Without ``shape`` (or ``broadcastable``), or for a name that is not a str.
    ValueError
        For a name that looks like a dtype (``tensor("float32")``: pass ``dtype=``).

    Examples
    --------
    >>> x = tensor("x", dtype="float32", shape=(None, 3, None))
    """
    _check_name(name)
    ttype = TensorType(
        _config_floatX() if dtype is None else dtype, shape=shape, broadcastable=broadcastable
    )
    return ttype(name)


def scalar(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[Any] = ()
) -> TensorVariable:
    """Return a symbolic 0-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 0, "scalar"))


def vector(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,)
) -> TensorVariable:
    """Return a symbolic 1-d tensor (default dtype ``config.floatX``).

    Parameters
    ----------
    name
        The variable's name.
    dtype
        Its dtype (default ``config.floatX``).
    shape
        The static shape: a tuple of one entry, ``None`` (any length) or an int.
    """
    return _make(name, dtype, _validate_static_shape(shape, 1, "vector"))


def matrix(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None, None)
) -> TensorVariable:
    """Return a symbolic 2-d tensor (parameters as for :func:`vector`, two shape entries)."""
    return _make(name, dtype, _validate_static_shape(shape, 2, "matrix"))


def row(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (1, None)
) -> TensorVariable:
    """Return a symbolic row: a 2-d tensor whose first dimension has length 1."""
    shape = _validate_static_shape(shape, 2, "row")
    if shape[0] != 1:
        raise ValueError(f"The first dimension of a `row` must have shape 1, got {shape[0]}")
    return _make(name, dtype, shape)


def col(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None, 1)
) -> TensorVariable:
    """Return a symbolic column: a 2-d tensor whose second dimension has length 1."""
    shape = _validate_static_shape(shape, 2, "col")
    if shape[1] != 1:
        raise ValueError(f"The second dimension of a `col` must have shape 1, got {shape[1]}")
    return _make(name, dtype, shape)


def tensor3(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 3
) -> TensorVariable:
    """Return a symbolic 3-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 3, "tensor3"))


def tensor4(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 4
) -> TensorVariable:
    """Return a symbolic 4-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 4, "tensor4"))


def tensor5(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 5
) -> TensorVariable:
    """Return a symbolic 5-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 5, "tensor5"))


def tensor6(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 6
) -> TensorVariable:
    """Return a symbolic 6-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 6, "tensor6"))


def tensor7(
    name: str | None = None, *, dtype: Any = None, shape: Sequence[ShapeEntry] = (None,) * 7
) -> TensorVariable:
    """Return a symbolic 7-d tensor (default dtype ``config.floatX``)."""
    return _make(name, dtype, _validate_static_shape(shape, 7, "tensor7"))


# ---------------------------------------------------------------------- typed shortcuts

# ``dmatrix`` is a Type; ``dmatrix("x")`` a variable of it. Prefixes: ``b`` int8, ``w``
# int16, ``i`` int32, ``l`` int64, ``f`` float32, ``d`` float64, ``c`` complex64, ``z``
# complex128 (and ``ub``/``uw``/``ui``/``ul`` for unsigned scalars).

# Scalars.
bscalar = TensorType("int8", shape=())
wscalar = TensorType("int16", shape=())
iscalar = TensorType("int32", shape=())
lscalar = TensorType("int64", shape=())
ubscalar = TensorType("uint8", shape=())
uwscalar = TensorType("uint16", shape=())
uiscalar = TensorType("uint32", shape=())
ulscalar = TensorType("uint64", shape=())
fscalar = TensorType("float32", shape=())
dscalar = TensorType("float64", shape=())
cscalar = TensorType("complex64", shape=())
zscalar = TensorType("complex128", shape=())

# Vectors.
bvector = TensorType("int8", shape=(None,))
wvector = TensorType("int16", shape=(None,))
ivector = TensorType("int32", shape=(None,))
lvector = TensorType("int64", shape=(None,))
fvector = TensorType("float32", shape=(None,))
dvector = TensorType("float64", shape=(None,))
cvector = TensorType("complex64", shape=(None,))
zvector = TensorType("complex128", shape=(None,))

# Matrices.
bmatrix = TensorType("int8", shape=(None, None))
wmatrix = TensorType("int16", shape=(None, None))
imatrix = TensorType("int32", shape=(None, None))
lmatrix = TensorType("int64", shape=(None, None))
fmatrix = TensorType("float32", shape=(None, None))
dmatrix = TensorType("float64", shape=(None, None))
cmatrix = TensorType("complex64", shape=(None, None))
zmatrix = TensorType("complex128", shape=(None, None))

# Rows (first dimension of length 1).
brow = TensorType("int8", shape=(1, None))
wrow = TensorType("int16", shape=(1, None))
irow = TensorType("int32", shape=(1, None))
lrow = TensorType("int64", shape=(1, None))
frow = TensorType("float32", shape=(1, None))
drow = TensorType("float64", shape=(1, None))
crow = TensorType("complex64", shape=(1, None))
zrow = TensorType("complex128", shape=(1, None))

# Columns (second dimension of length 1).
bcol = TensorType("int8", shape=(None, 1))
wcol = TensorType("int16", shape=(None, 1))
icol = TensorType("int32", shape=(None, 1))
lcol = TensorType("int64", shape=(None, 1))
fcol = TensorType("float32", shape=(None, 1))
dcol = TensorType("float64", shape=(None, 1))
ccol = TensorType("complex64", shape=(None, 1))
zcol = TensorType("complex128", shape=(None, 1))

# 3-d to 7-d tensors.
btensor3 = TensorType("int8", shape=(None,) * 3)
wtensor3 = TensorType("int16", shape=(None,) * 3)
itensor3 = TensorType("int32", shape=(None,) * 3)
ltensor3 = TensorType("int64", shape=(None,) * 3)
ftensor3 = TensorType("float32", shape=(None,) * 3)
dtensor3 = TensorType("float64", shape=(None,) * 3)
ctensor3 = TensorType("complex64", shape=(None,) * 3)
ztensor3 = TensorType("complex128", shape=(None,) * 3)

btensor4 = TensorType("int8", shape=(None,) * 4)
wtensor4 = TensorType("int16", shape=(None,) * 4)
itensor4 = TensorType("int32", shape=(None,) * 4)
ltensor4 = TensorType("int64", shape=(None,) * 4)
ftensor4 = TensorType("float32", shape=(None,) * 4)
dtensor4 = TensorType("float64", shape=(None,) * 4)
ctensor4 = TensorType("complex64", shape=(None,) * 4)
ztensor4 = TensorType("complex128", shape=(None,) * 4)

btensor5 = TensorType("int8", shape=(None,) * 5)
wtensor5 = TensorType("int16", shape=(None,) * 5)
itensor5 = TensorType("int32", shape=(None,) * 5)
ltensor5 = TensorType("int64", shape=(None,) * 5)
ftensor5 = TensorType("float32", shape=(None,) * 5)
dtensor5 = TensorType("float64", shape=(None,) * 5)
ctensor5 = TensorType("complex64", shape=(None,) * 5)
ztensor5 = TensorType("complex128", shape=(None,) * 5)

btensor6 = TensorType("int8", shape=(None,) * 6)
wtensor6 = TensorType("int16", shape=(None,) * 6)
itensor6 = TensorType("int32", shape=(None,) * 6)
ltensor6 = TensorType("int64", shape=(None,) * 6)
ftensor6 = TensorType("float32", shape=(None,) * 6)
dtensor6 = TensorType("float64", shape=(None,) * 6)
ctensor6 = TensorType("complex64", shape=(None,) * 6)
ztensor6 = TensorType("complex128", shape=(None,) * 6)

btensor7 = TensorType("int8", shape=(None,) * 7)
wtensor7 = TensorType("int16", shape=(None,) * 7)
itensor7 = TensorType("int32", shape=(None,) * 7)
ltensor7 = TensorType("int64", shape=(None,) * 7)
ftensor7 = TensorType("float32", shape=(None,) * 7)
dtensor7 = TensorType("float64", shape=(None,) * 7)
ctensor7 = TensorType("complex64", shape=(None,) * 7)
ztensor7 = TensorType("complex128", shape=(None,) * 7)

int_types = int_scalar_types = (bscalar, wscalar, iscalar, lscalar)
float_types = float_scalar_types = (fscalar, dscalar)
complex_types = complex_scalar_types = (cscalar, zscalar)
int_vector_types = (bvector, wvector, ivector, lvector)
float_vector_types = (fvector, dvector)
complex_vector_types = (cvector, zvector)
int_matrix_types = (bmatrix, wmatrix, imatrix, lmatrix)
float_matrix_types = (fmatrix, dmatrix)
complex_matrix_types = (cmatrix, zmatrix)

# ---------------------------------------------------------------------- plural forms

scalars, fscalars, dscalars, iscalars, lscalars = apply_across_args(
    scalar, fscalar, dscalar, iscalar, lscalar
)
vectors, fvectors, dvectors, ivectors, lvectors = apply_across_args(
    vector, fvector, dvector, ivector, lvector
)
matrices, fmatrices, dmatrices, imatrices, lmatrices = apply_across_args(
    matrix, fmatrix, dmatrix, imatrix, lmatrix
)
rows, frows, drows, irows, lrows = apply_across_args(row, frow, drow, irow, lrow)
cols, fcols, dcols, icols, lcols = apply_across_args(col, fcol, dcol, icol, lcol)
tensor3s, ftensor3s, dtensor3s, itensor3s, ltensor3s = apply_across_args(
    tensor3, ftensor3, dtensor3, itensor3, ltensor3
)
tensor4s, ftensor4s, dtensor4s, itensor4s, ltensor4s = apply_across_args(
    tensor4, ftensor4, dtensor4, itensor4, ltensor4
)
tensor5s, ftensor5s, dtensor5s, itensor5s, ltensor5s = apply_across_args(
    tensor5, ftensor5, dtensor5, itensor5, ltensor5
)
tensor6s, ftensor6s, dtensor6s, itensor6s, ltensor6s = apply_across_args(
    tensor6, ftensor6, dtensor6, itensor6, ltensor6
)
tensor7s, ftensor7s, dtensor7s, itensor7s, ltensor7s = apply_across_args(
    tensor7, ftensor7, dtensor7, itensor7, ltensor7
)
