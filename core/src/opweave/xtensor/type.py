"""Named-dimension tensors: :class:`XTensorType` and its variables, constants and shared
variables (PyTensor's ``pytensor.xtensor.type``).

An xtensor is an array whose dimensions have names (``dims``), as an ``xarray.DataArray``
without coordinates: operations align their inputs by dimension name, not by position. At
run time its value is a NumPy array whose axes are in the order of ``dims``. Graphs of
xtensor Ops are lowered to tensor Ops before linking (:mod:`opweave.xtensor.rewriting`),
so backends only ever see tensors and the identity casts between the two kinds.

The operators and methods of :class:`XTensorVariable` (``x + y``, ``x.sum("a")``,
``x.isel(...)``) are given by :mod:`opweave.xtensor.operators`, which builds on the whole
xtensor library; this module imports none of it.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.symbolic import _as_symbolic
from opweave.graph.type import Type
from opweave.scalar import ScalarType
from opweave.tensor.basic import constant as tensor_constant
from opweave.tensor.basic import tensor_from_scalar
from opweave.tensor.math import variadic_mul
from opweave.tensor.shape import specify_shape
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    # The cast Ops build on this module: opweave.xtensor (the package, above both) sets
    # them here when it is imported.
    from opweave.xtensor.basic import tensor_from_xtensor as tensor_from_xtensor
    from opweave.xtensor.basic import xtensor_from_tensor as xtensor_from_tensor

__all__ = [
    "DataArrayLike",
    "XTensorConstant",
    "XTensorSharedVariable",
    "XTensorType",
    "XTensorVariable",
    "as_xtensor",
    "is_data_array",
    "xtensor",
    "xtensor_constant",
    "xtensor_shared",
]


def _is_data_array_class(cls: type) -> bool:
    return cls.__name__ == "DataArray" and cls.__module__.split(".")[0] == "xarray"


def is_data_array(value: Any) -> bool:
    """Whether ``value`` is an ``xarray.DataArray`` (recognised without importing xarray,
    which opweave does not depend on).

    Parameters
    ----------
    value
        Any object.
    """
    return _is_data_array_class(type(value))


class DataArrayLike(abc.ABC):  # noqa: B024 (members come from __subclasshook__)
    """The ``xarray.DataArray`` class as an abstract base, for dispatch on it without
    importing xarray (``issubclass(xarray.DataArray, DataArrayLike)`` is true)."""

    @classmethod
    def __subclasshook__(cls, candidate: type) -> bool:
        return True if _is_data_array_class(candidate) else NotImplemented


def _data_array_values(value: Any, dims: Sequence[str]) -> np.ndarray:
    """The values of a DataArray with its axes in the order of ``dims``."""
    if set(value.dims) != set(dims):
        raise ValueError(
            f"the DataArray has dims {tuple(value.dims)}, the XTensorType expects {tuple(dims)}"
        )
    return np.asarray(value.transpose(*dims).values)


class XTensorType(Type):
    """The Type of named-dimension arrays of one dtype (PyTensor's ``XTensorType``).

    Parameters
    ----------
    dtype
        A NumPy dtype, or ``"floatX"`` for ``config.floatX``.
    dims
        The names of the dimensions, unique (a single name may be given as a str).
    shape
        The static length of each dimension (``None``: unknown); default all unknown.
    name
        Optional name, used by ``str``.

    Raises
    ------
    ValueError
        If ``dims`` repeats a name, or ``shape`` and ``dims`` differ in length.
    """

    __props__ = ("dtype", "shape", "dims")

    def __init__(
        self,
        dtype: str | np.dtype,
        *,
        dims: Sequence[str],
        shape: Sequence[int | None] | None = None,
        name: str | None = None,
    ) -> None:
        self.dtype: str = config.floatX if dtype == "floatX" else np.dtype(dtype).name
        self.dims: tuple[str, ...] = (dims,) if isinstance(dims, str) else tuple(dims)
        if len(set(self.dims)) < len(self.dims):
            raise ValueError(f"Dimensions must be unique. Found duplicates in {self.dims}")
        if not all(isinstance(dim, str) for dim in self.dims):
            raise TypeError(f"XTensorType: every dimension name must be a str, got {self.dims}")
        if shape is None:
            self.shape: tuple[int | None, ...] = (None,) * len(self.dims)
        else:
            self.shape = tuple(None if s is None else int(s) for s in shape)
            if len(self.shape) != len(self.dims):
                raise ValueError(
                    f"Shape {self.shape} must have the same length as dims {self.dims}"
                )
        self.ndim = len(self.dims)
        self.name = name
        self.numpy_dtype = np.dtype(self.dtype)
        self.filter_checks_isfinite = False
        # Not meaningful for named dimensions; code written for tensors may ask for it.
        self.broadcastable = (False,) * self.ndim
        #: The Type of the same values as a tensor (built once: ``filter`` runs per call).
        self.tensor_type = TensorType(self.dtype, shape=self.shape)

    def clone(
        self,
        dtype: str | np.dtype | None = None,
        dims: Sequence[str] | None = None,
        shape: Sequence[int | None] | None = None,
        **kwargs: Any,
    ) -> XTensorType:
        """A Type of the same class with ``dtype``, ``dims`` and/or ``shape`` replaced."""
        return type(self)(
            dtype=self.dtype if dtype is None else dtype,
            dims=self.dims if dims is None else dims,
            shape=self.shape if shape is None else shape,
            **kwargs,
        )

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """The value as a NumPy array of this Type's dtype and rank (a DataArray's axes
        are put in the order of ``dims``), as :meth:`TensorType.filter` checks it."""
        if is_data_array(data):
            data = _data_array_values(data, self.dims)
        return self.tensor_type.filter(data, strict=strict, allow_downcast=allow_downcast)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """Whether two values may share memory (as for tensors)."""
        return TensorType.may_share_memory(a, b)

    @staticmethod
    def values_eq(a: Any, b: Any, **kwargs: Any) -> bool:
        """Whether two values are equal (as for tensors)."""
        return TensorType.values_eq(a, b, **kwargs)

    @staticmethod
    def values_eq_approx(a: Any, b: Any, **kwargs: Any) -> bool:
        """Whether two values are approximately equal (as for tensors)."""
        return bool(TensorType.values_eq_approx(a, b, **kwargs))

    def get_shape_info(self, obj: Any) -> tuple[int, ...]:
        """The shape of a value."""
        return tuple(obj.shape)

    def get_size(self, shape_info: tuple[int, ...]) -> int:
        """The number of bytes of a value of shape ``shape_info``."""
        return int(np.prod(shape_info, dtype=np.int64)) * self.numpy_dtype.itemsize

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """``other`` as a variable of this Type: a value becomes a constant; a variable
        of another order of the same dims is transposed; a tensor gets these dims.

        Raises
        ------
        TypeError
            If ``other`` cannot be converted.
        """
        if not isinstance(other, Variable):
            if is_data_array(other):
                other = _data_array_values(other, self.dims)
            other = XTensorConstant(self, self.filter(other))
        var: Variable = other
        if self.is_super(var.type):
            return var
        if allow_convert:
            converted = self.convert_variable(var)
            if converted is not None:
                return converted
        raise TypeError(
            f"Cannot convert Type {other.type} (of Variable {other}) into Type {self}. "
            f"You can try to manually convert {other} into a {self}."
        )

    def convert_variable(self, var: Variable) -> Variable | None:
        """``var`` as a variable of this Type, or ``None`` when it cannot be one."""
        var_type = var.type
        if self.is_super(var_type):
            return var
        if isinstance(var_type, XTensorType):
            if self.dtype != var_type.dtype or set(self.dims) != set(var_type.dims):
                return None
            if self.dims != var_type.dims:
                var = var.transpose(*self.dims)  # type: ignore[attr-defined]
                if self.is_super(var.type):
                    return var
            if not _shapes_compatible(self.shape, var.type.shape):  # type: ignore[attr-defined]
                return None
            values = var.values  # type: ignore[attr-defined]
            return as_xtensor(specify_shape(values, self.shape), dims=self.dims)
        if isinstance(var_type, TensorType):
            if (
                self.ndim != var_type.ndim
                or self.dtype != var_type.dtype
                or not _shapes_compatible(self.shape, var_type.shape)
            ):
                return None
            return as_xtensor(specify_shape(var, self.shape), dims=self.dims)
        return None

    def is_super(self, otype: Any) -> bool:
        """True if every value of ``otype`` is a valid value of this Type (same class,
        dtype and dims in the same order, ``otype``'s static shape at least as specific)."""
        return (
            type(self) is type(otype)
            and self.dtype == otype.dtype
            and self.dims == otype.dims
            and all(s is None or s == o for s, o in zip(self.shape, otype.shape, strict=True))
        )

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.dtype == other.dtype
            and self.dims == other.dims
            and self.shape == other.shape
        )

    def __hash__(self) -> int:
        return hash((type(self), self.dtype, self.shape, self.dims))

    def __repr__(self) -> str:
        return f"XTensorType({self.dtype}, shape={self.shape}, dims={self.dims})"

    def __str__(self) -> str:
        return self.name if self.name else repr(self)


def _shapes_compatible(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


def xtensor(
    name: str | None = None,
    *,
    dims: Sequence[str],
    shape: Sequence[int | None] | None = None,
    dtype: str | np.dtype = "floatX",
) -> XTensorVariable:
    """A new symbolic xtensor.

    Parameters
    ----------
    name
        The variable's name.
    dims
        The names of its dimensions.
    shape
        The static length of each dimension (``None``: unknown); default all unknown.
    dtype
        Its dtype; default ``config.floatX``.

    Returns
    -------
    XTensorVariable
    """
    out = XTensorType(dtype=dtype, dims=dims, shape=shape)(name=name)
    assert isinstance(out, XTensorVariable)
    return out


class XTensorVariable(Variable):
    """A variable of an :class:`XTensorType`.

    Python's truth value, ``int``, ``float`` and item assignment are refused: a symbolic
    value has none. Its operators and methods come from :mod:`opweave.xtensor.operators`.
    """

    #: ``as_tensor_variable`` converts it only when asked (``allow_xtensor_conversion``).
    requires_explicit_conversion = True

    type: XTensorType

    def __bool__(self) -> bool:
        raise TypeError(
            "XTensorVariable cannot be converted to Python boolean. "
            "Call `.astype(bool)` for the symbolic equivalent."
        )

    def __index__(self) -> int:
        raise TypeError("XTensorVariable cannot be converted to Python integer.")

    def __int__(self) -> int:
        raise TypeError("XTensorVariable cannot be converted to Python integer.")

    def __float__(self) -> float:
        raise TypeError("XTensorVariable cannot be converted to Python float.")

    def __complex__(self) -> complex:
        raise TypeError("XTensorVariable cannot be converted to Python complex number.")

    def __setitem__(self, idx: Any, value: Any) -> None:
        raise TypeError(
            "XTensorVariable does not support item assignment. Use the output of "
            "`x[idx].set` or `x[idx].inc` instead."
        )

    __hash__ = Variable.__hash__

    @property
    def values(self) -> TensorVariable:
        """The same data as a tensor, axes in the order of :attr:`dims`."""
        return _tensor_from_xtensor(self)

    def _as_TensorVariable(self) -> TensorVariable:
        return _tensor_from_xtensor(self)

    @property
    def coords(self) -> Any:
        """Not available: xtensors have no coordinates."""
        raise NotImplementedError("coords not implemented for XTensorVariable")

    @property
    def dims(self) -> tuple[str, ...]:
        """The names of the dimensions."""
        return self.type.dims

    @property
    def sizes(self) -> dict[str, TensorVariable]:
        """The length of each dimension, by name."""
        return dict(zip(self.dims, self.shape, strict=True))

    @property
    def as_numpy(self) -> XTensorVariable:
        """The variable itself (its values are always NumPy arrays)."""
        return self

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self.type.ndim

    @property
    def shape(self) -> tuple[TensorVariable, ...]:
        """The length of each dimension, in the order of :attr:`dims`."""
        values = self.values
        return tuple(values.shape[i] for i in range(self.ndim))

    @property
    def size(self) -> TensorVariable:
        """The number of elements."""
        out: TensorVariable = variadic_mul(*self.shape)
        return out

    @property
    def dtype(self) -> str:
        """The dtype."""
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """All ``False`` (asked by code written for tensors)."""
        return self.type.broadcastable

    def item(self) -> Any:
        """Not available on a symbolic value."""
        raise NotImplementedError("item not implemented for XTensorVariable")


def _tensor_from_xtensor(x: XTensorVariable) -> TensorVariable:
    out = tensor_from_xtensor(x)
    assert isinstance(out, TensorVariable)
    return out


class XTensorConstant(XTensorVariable, Constant):
    """A constant xtensor; its Type takes the data's static shape.

    Raises
    ------
    ValueError
        If the data's shape does not fit the Type's.
    """

    def __init__(self, type: XTensorType, data: Any, name: str | None = None) -> None:
        data_shape = np.shape(data)
        if len(data_shape) != type.ndim or any(
            ts is not None and ds != ts for ds, ts in zip(data_shape, type.shape, strict=True)
        ):
            raise ValueError(
                f"Shape of data ({data_shape}) does not match shape of type ({type.shape})"
            )
        if any(s is None for s in type.shape):
            type = type.clone(shape=data_shape)
        Constant.__init__(self, type, type.filter(data), name)
        self.data.flags.writeable = False

    def signature(self) -> tuple[Any, ...]:
        """A hashable key (Type and the bytes) used to merge equal constants."""
        data = np.ascontiguousarray(self.data)
        return (self.type, data.shape, data.tobytes())

    __hash__ = XTensorVariable.__hash__


XTensorType.variable_type = XTensorVariable
XTensorType.constant_type = XTensorConstant


def _extract_data_and_dims(
    x: Any, dims: Sequence[str] | None = None
) -> tuple[np.ndarray, tuple[str, ...]]:
    if is_data_array(x):
        x_dims = tuple(x.dims)
        if not all(isinstance(dim, str) for dim in x_dims):
            raise NotImplementedError(
                "DataArray can only be converted to xtensor if all dims are of string type"
            )
        if dims is not None and tuple(dims) != x_dims:
            raise ValueError(
                f"xr.DataArray dims {x_dims} don't match requested specified {tuple(dims)}. "
                "Use transpose or rename"
            )
        return np.asarray(x.values), x_dims
    data = tensor_constant(x).data
    if dims is not None:
        if isinstance(dims, str):
            dims = (dims,)
        return data, tuple(dims)
    if data.ndim == 0:
        return data, ()
    raise TypeError(
        "Cannot convert TensorLike constant to XTensorConstant without specifying dims."
    )


def xtensor_constant(
    x: Any, name: str | None = None, dims: Sequence[str] | None = None
) -> XTensorConstant:
    """A constant xtensor holding ``x`` (an array-like, or an ``xarray.DataArray``).

    Parameters
    ----------
    x
        The value.
    name
        The constant's name.
    dims
        The names of the dimensions; required unless ``x`` is a scalar or a DataArray.

    Raises
    ------
    TypeError
        If ``x`` cannot be converted, or ``dims`` is missing for an array.
    ValueError
        If ``dims`` does not fit the value.
    """
    data, x_dims = _extract_data_and_dims(x, dims)
    if len(x_dims) != data.ndim:
        raise ValueError(
            f"xtensor_constant: dims {x_dims} name {len(x_dims)} dimensions, the value has "
            f"{data.ndim} (shape {data.shape})"
        )
    return XTensorConstant(
        XTensorType(dtype=data.dtype, dims=x_dims, shape=data.shape), data, name=name
    )


@_as_symbolic.register(DataArrayLike)
def _data_array_as_symbolic(x: Any, **kwargs: Any) -> XTensorConstant:
    """A DataArray becomes an xtensor constant with its dims (``as_symbolic``)."""
    return xtensor_constant(x)


class XTensorSharedVariable(SharedVariable, XTensorVariable):
    """A shared variable of an :class:`XTensorType`."""

    __hash__ = SharedVariable.__hash__


def xtensor_shared(
    x: Any,
    *,
    name: str | None = None,
    shape: Sequence[int | None] | None = None,
    dims: Sequence[str] | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
) -> XTensorSharedVariable:
    """A shared xtensor holding ``x`` (PyTensor's ``xtensor_shared``).

    Parameters
    ----------
    x
        The initial value: an array-like (``dims`` required unless a scalar) or an
        ``xarray.DataArray``.
    name
        The variable's name (default: a DataArray's ``name``).
    shape
        The static shape of its Type; default all unknown (the value may be resized).
    dims
        The names of the dimensions.
    strict, allow_downcast
        As for :class:`~opweave.compile.sharedvalue.SharedVariable`.
    borrow
        Use ``x``'s memory instead of a copy.
    """
    data, x_dims = _extract_data_and_dims(x, dims)
    return XTensorSharedVariable(
        type=XTensorType(dtype=data.dtype, dims=x_dims, shape=shape),
        value=data if borrow else data.copy(),
        strict=strict,
        allow_downcast=allow_downcast,
        name=name if name is not None else getattr(x, "name", None),
    )


def as_xtensor(
    x: Any, dims: Sequence[str] | None = None, *, name: str | None = None
) -> XTensorVariable:
    """``x`` as an xtensor variable.

    Parameters
    ----------
    x
        An xtensor variable (returned as is when ``dims`` is ``None`` or its own), a tensor
        or scalar variable (``dims`` required unless it is 0-d), an Apply node with one
        output, or a value (see :func:`xtensor_constant`).
    dims
        The names of the dimensions.
    name
        The name of a new variable.

    Raises
    ------
    ValueError
        If an xtensor has other dims than ``dims``, or an Apply node has several outputs.
    TypeError
        If ``x`` cannot be converted, or ``dims`` is missing for a tensor of rank > 0.
    """
    if isinstance(dims, str):
        dims = (dims,)
    if isinstance(x, Apply):
        if len(x.outputs) != 1:
            raise ValueError(
                "It is ambiguous which output of a multi-output Op has to be fetched.", x
            )
        x = x.outputs[0]
    if isinstance(x, Variable):
        if isinstance(x.type, XTensorType):
            if dims is None or x.type.dims == tuple(dims):
                assert isinstance(x, XTensorVariable)
                return x
            raise ValueError(
                f"Variable {x} has dims {x.type.dims}, but requested dims are {tuple(dims)}."
            )
        if isinstance(x.type, TensorType):
            if dims is None:
                if x.type.ndim != 0:
                    raise TypeError(
                        "non-scalar TensorVariable cannot be converted to XTensorVariable "
                        "without dims."
                    )
                dims = ()
            return _xtensor_from_tensor(x, dims, name)
        if isinstance(x.type, ScalarType):
            as_tensor: Variable = tensor_from_scalar(x)  # type: ignore[assignment]
            return _xtensor_from_tensor(as_tensor, () if dims is None else dims, name)
        raise TypeError(f"Variable with type {x.type} cannot be converted to XTensorVariable.")
    try:
        return xtensor_constant(x, dims=dims, name=name)
    except TypeError as err:
        raise TypeError(f"Cannot convert {x!r:.60} to XTensorType: {err}") from err


def _xtensor_from_tensor(x: Variable, dims: Sequence[str], name: str | None) -> XTensorVariable:
    out = xtensor_from_tensor(x, dims=dims, name=name)
    assert isinstance(out, XTensorVariable)
    return out
