"""The operators and methods of :class:`~opweave.xtensor.type.XTensorVariable`.

They build on the whole xtensor library (math, reductions, shapes, indexing), which
builds on :mod:`opweave.xtensor.type`; so the package :mod:`opweave.xtensor` imports this
module last, and it sets them on the class (as :mod:`opweave.tensor.operators` does for
tensors). Each looks its function up when called.

``==`` and ``!=`` keep Python's identity comparison (variables are dictionary keys); the
elementwise comparisons are ``opweave.xtensor.math.eq`` and ``neq``, as in PyTensor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from opweave.xtensor import basic, indexing, reduction, shape
from opweave.xtensor import math as xmath
from opweave.xtensor.type import XTensorVariable

__all__: list[str] = []


def _unary(name: str) -> Callable[[XTensorVariable], Any]:
    def method(self: XTensorVariable) -> Any:
        return getattr(xmath, name)(self)

    method.__name__ = name
    method.__doc__ = f"``opweave.xtensor.math.{name}(self)``."
    return method


def _binary(name: str, reflected: bool = False) -> Callable[[XTensorVariable, Any], Any]:
    def method(self: XTensorVariable, other: Any) -> Any:
        function = getattr(xmath, name)
        return function(other, self) if reflected else function(self, other)

    method.__doc__ = f"``opweave.xtensor.math.{name}`` of both operands."
    return method


_UNARY = {"__abs__": "abs", "__neg__": "neg", "__invert__": "invert", "__ceil__": "ceil"}
_UNARY |= {"__floor__": "floor", "__trunc__": "trunc"}
_BINARY = {
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "and": "and_",
    "or": "or_",
    "xor": "xor",
    "add": "add",
    "sub": "sub",
    "mul": "mul",
    "pow": "pow",
    "mod": "mod",
    "divmod": "divmod",
    "truediv": "true_div",
    "floordiv": "floor_div",
}
_REFLECTED: tuple[str, ...] = (
    "and",
    "or",
    "xor",
    "add",
    "sub",
    "mul",
    "pow",
    "mod",
    "divmod",
    "truediv",
)
_REFLECTED += ("floordiv",)


def _rename(
    self: XTensorVariable, /, new_name_or_name_dict: Any = None, **names: str
) -> XTensorVariable:
    """The variable renamed (a str), or with dimensions renamed (a dict or keywords)."""
    if isinstance(new_name_or_name_dict, str):
        out = basic.rename(self, None, **names)
        out.name = new_name_or_name_dict
        return out
    return basic.rename(self, new_name_or_name_dict, **names)


def _copy(self: XTensorVariable, name: str | None = None) -> Any:
    """The identity of the variable (variables are immutable), named ``name``."""
    out = xmath.identity(self)
    out.name = name
    return out


def _astype(self: XTensorVariable, dtype: Any) -> Any:
    """The variable cast to ``dtype``."""
    return xmath.cast(self, dtype)


def _not_available(what: str) -> Callable[..., Any]:
    def method(self: XTensorVariable, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{what} not implemented for XTensorVariable")

    method.__doc__ = f"Not available: xtensors have no coordinates ({what})."
    return method


def _loc(self: XTensorVariable) -> Any:
    raise NotImplementedError("loc not implemented for XTensorVariable")


def _getitem(self: XTensorVariable, idx: Any) -> Any:
    return indexing.getitem(self, idx)


def _isel(
    self: XTensorVariable,
    /,
    indexers: dict[str, Any] | None = None,
    drop: bool = False,
    missing_dims: Literal["raise", "warn", "ignore"] = "raise",
    **indexers_kwargs: Any,
) -> Any:
    """Select by position along named dimensions (``x.isel(a=0, b=slice(2))``)."""
    return indexing.isel(self, indexers, drop=drop, missing_dims=missing_dims, **indexers_kwargs)


def _set(self: XTensorVariable, value: Any) -> Any:
    """The indexed variable this selection came from, with the selection set to ``value``."""
    return indexing.set_value(self, value)


def _inc(self: XTensorVariable, value: Any) -> Any:
    """The indexed variable this selection came from, with ``value`` added to the selection."""
    return indexing.inc_value(self, value)


def _head(self: XTensorVariable, /, indexers: Any = None, **indexers_kwargs: Any) -> Any:
    """The first ``n`` entries along dimensions (default 5)."""
    return indexing.head(self, indexers, **indexers_kwargs)


def _tail(self: XTensorVariable, /, indexers: Any = None, **indexers_kwargs: Any) -> Any:
    """The last ``n`` entries along dimensions (default 5)."""
    return indexing.tail(self, indexers, **indexers_kwargs)


def _thin(self: XTensorVariable, /, indexers: Any = None, **indexers_kwargs: Any) -> Any:
    """Every ``n``-th entry along dimensions."""
    return indexing.thin(self, indexers, **indexers_kwargs)


def _diff(self: XTensorVariable, dim: str, n: int = 1) -> Any:
    """The ``n``-th discrete difference along ``dim``."""
    return indexing.diff(self, dim, n=n)


def _squeeze(
    self: XTensorVariable,
    dim: Sequence[str] | str | None = None,
    drop: Any = None,
    axis: int | Sequence[int] | None = None,
) -> Any:
    """Remove dimensions of length 1 (all those statically known, by default)."""
    return shape.squeeze(self, dim, drop=drop, axis=axis)


def _expand_dims(
    self: XTensorVariable,
    /,
    dim: Any = None,
    create_index_for_new_dim: bool | None = None,
    axis: int | Sequence[int] | None = None,
    **dim_kwargs: Any,
) -> Any:
    """Add new dimensions (length 1, or the lengths given) in front."""
    return shape.expand_dims(
        self, dim, create_index_for_new_dim=create_index_for_new_dim, axis=axis, **dim_kwargs
    )


def _clip(self: XTensorVariable, min: Any, max: Any) -> Any:
    """The values clipped to ``[min, max]``."""
    return xmath.clip(self, min, max)


def _conj(self: XTensorVariable) -> Any:
    """The complex conjugate."""
    return xmath.conj(self)


def _imag(self: XTensorVariable) -> Any:
    """The imaginary part."""
    return xmath.imag(self)


def _real(self: XTensorVariable) -> Any:
    """The real part."""
    return xmath.real(self)


def _T(self: XTensorVariable) -> Any:
    """The dimensions in reverse order."""
    return shape.transpose(self)


def _reduction(name: str) -> Callable[..., Any]:
    def method(self: XTensorVariable, dim: Any = None) -> Any:
        return getattr(reduction, name)(self, dim)

    method.__doc__ = f"``opweave.xtensor.reduction.{name}`` over ``dim`` (default: all)."
    return method


def _ddof_reduction(name: str) -> Callable[..., Any]:
    def method(self: XTensorVariable, dim: Any = None, ddof: int = 0) -> Any:
        return getattr(reduction, name)(self, dim, ddof=ddof)

    method.__doc__ = f"``opweave.xtensor.reduction.{name}`` over ``dim`` (default: all)."
    return method


def _transpose(
    self: XTensorVariable, *dim: Any, missing_dims: Literal["raise", "warn", "ignore"] = "raise"
) -> Any:
    """The dimensions in the order given (``...`` for the others; none: reversed)."""
    return shape.transpose(self, *dim, missing_dims=missing_dims)


def _stack(self: XTensorVariable, /, dim: Any = None, **dims: Any) -> Any:
    """Merge dimensions into new ones (``x.stack(ab=["a", "b"])``)."""
    return shape.stack(self, dim, **dims)


def _unstack(self: XTensorVariable, /, dim: Any = None, **dims: Any) -> Any:
    """Split a dimension into new ones of given lengths."""
    return shape.unstack(self, dim, **dims)


def _dot(self: XTensorVariable, other: Any, dim: Any = None) -> Any:
    """The product summed over the shared dimensions (or ``dim``)."""
    return xmath.dot(self, other, dim=dim)


def _broadcast_like(self: XTensorVariable, other: Any, exclude: Any = None) -> Any:
    """The variable broadcast against ``other``'s dimensions."""
    return shape.broadcast_like(self, other, exclude=exclude)


def _install() -> None:
    cls = XTensorVariable
    for attr, name in _UNARY.items():
        setattr(cls, attr, _unary(name))
    for op_name, name in _BINARY.items():
        setattr(cls, f"__{op_name}__", _binary(name))
        if op_name in _REFLECTED:
            setattr(cls, f"__r{op_name}__", _binary(name, reflected=True))
    methods: dict[str, Any] = {
        "rename": _rename,
        "copy": _copy,
        "astype": _astype,
        "sel": _not_available("sel"),
        "__getitem__": _getitem,
        "isel": _isel,
        "set": _set,
        "inc": _inc,
        "head": _head,
        "tail": _tail,
        "thin": _thin,
        "diff": _diff,
        "squeeze": _squeeze,
        "expand_dims": _expand_dims,
        "clip": _clip,
        "conj": _conj,
        "transpose": _transpose,
        "stack": _stack,
        "unstack": _unstack,
        "dot": _dot,
        "broadcast_like": _broadcast_like,
    }
    for name in ("all", "any", "max", "min", "mean", "prod", "sum", "cumsum", "cumprod"):
        methods[name] = _reduction(name)
    for name in ("std", "var"):
        methods[name] = _ddof_reduction(name)
    for name, method in methods.items():
        setattr(cls, name, method)
    for name, getter in (("loc", _loc), ("imag", _imag), ("real", _real), ("T", _T)):
        setattr(cls, name, property(getter))


_install()
