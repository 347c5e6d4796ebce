"""The :class:`Type` contract and the core's generic Types."""

from __future__ import annotations

import copy as _copy
import sys
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Constant, Variable
from opweave.graph.c_interface import CLinkerType
from opweave.graph.trace import add_tag_trace
from opweave.graph.utils import MethodNotDefined


class PureType:
    """The Python side of the Type contract.

    A Type is a static constraint on the values a :class:`Variable` can hold.
    Subclasses must define :meth:`filter`; every other method has a default.
    """

    #: Class used by :meth:`make_variable`.
    variable_type: ClassVar[type[Variable[Any, Any]]] = Variable
    #: Class used by :meth:`make_constant`.
    constant_type: ClassVar[type[Constant[Any]]] = Constant

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` cast to this Type, or raise ``TypeError``/``ValueError``.

        Parameters
        ----------
        data
            The value to check.
        strict
            If true, return ``data`` itself or raise: no casting.
        allow_downcast
            If true, lossy casts are allowed; if ``None``, the Type decides.
        """
        raise MethodNotDefined(f"{type(self).__name__}.filter is not defined")

    def filter_inplace(
        self,
        value: Any,
        storage: Any,
        strict: bool = False,
        allow_downcast: bool | None = None,
    ) -> Any:
        """Like :meth:`filter`, but may reuse ``storage`` (the old value) for the result.

        Shared variables call it, when a Type defines it, to keep device buffers.
        """
        raise MethodNotDefined(f"{type(self).__name__}.filter_inplace is not defined")

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Return ``other`` as a Variable of this Type, or raise ``TypeError``.

        A non-Variable is wrapped in a Constant after :meth:`filter`; a Variable of an
        equal Type is returned as is; otherwise :meth:`convert_variable` is tried.
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
            f"cannot convert variable {other} of type {other.type} to the expected type {self}"
        )

    def convert_variable(self, var: Variable) -> Variable | None:
        """Return a variable compatible with both this Type and ``var``'s, else ``None``.

        ``var`` itself when this Type is a supertype of ``var.type`` (see
        :meth:`is_super`). Subclasses that can narrow a variable of a wider Type to this
        one override the method; this one raises ``NotImplementedError`` for that case.
        """
        if self.is_super(var.type):
            return var
        if var.type.is_super(self):
            raise NotImplementedError(
                f"{type(self).__name__} cannot convert {var} of the wider Type {var.type} to {self}"
            )
        return None

    def is_valid_value(self, a: Any) -> bool:
        """True iff ``filter(a, strict=True)`` does not raise."""
        try:
            self.filter(a, strict=True)
        except Exception:
            return False
        return True

    def value_validity_msg(self, a: Any) -> str:
        """Return a message explaining :meth:`is_valid_value`'s answer for ``a``."""
        try:
            self.filter(a, strict=True)
        except Exception as exc:
            return f"{a!r} is not a valid value of {self}: {exc}"
        return "valid"

    def values_eq(self, a: Any, b: Any) -> bool:
        """True iff ``a`` and ``b`` are equal values of this Type."""
        return bool(a == b)

    def values_eq_approx(self, a: Any, b: Any) -> bool:
        """True iff ``a`` and ``b`` are approximately equal (default: :meth:`values_eq`)."""
        return self.values_eq(a, b)

    def make_variable(self, name: str | None = None) -> Variable:
        """Return a new Variable of this Type."""
        return self.variable_type(self, None, None, name)

    def make_constant(self, value: Any, name: str | None = None) -> Constant:
        """Return a new Constant of this Type holding ``value``."""
        return self.constant_type(self, value, name)

    def __call__(self, name: str | None = None) -> Variable:
        """Shortcut for :meth:`make_variable` (recording where the variable was created)."""
        var = self.make_variable(name)
        add_tag_trace((var,))
        return var

    def get_shape_info(self, obj: Any) -> Any:
        """Return what :meth:`get_size` needs to size ``obj`` (default: ``obj``)."""
        return obj

    def get_size(self, shape_info: Any) -> int:
        """Return the number of bytes of the data described by ``shape_info``."""
        nbytes = getattr(shape_info, "nbytes", None)
        if isinstance(nbytes, int):
            return nbytes
        return sys.getsizeof(shape_info)

    def clone(self, *args: Any, **kwargs: Any) -> PureType:
        """Return a copy; with arguments, a new instance of this class built from them
        (``type(self)(*args, **kwargs)``)."""
        if not args and all(value is None for value in kwargs.values()):
            return _copy.copy(self)
        return type(self)(*args, **kwargs)

    @staticmethod
    def may_share_memory(a: Any, b: Any) -> bool:
        """True if the values ``a`` and ``b`` could share memory."""
        if a is b:
            return True
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def in_same_class(self, other: PureType) -> bool:
        """True if ``other`` belongs to the same class of Types as this one.

        A class of Types is, say, "float64 tensors of rank 4", of which "shape (1, 2, 3,
        4)" and "shape (1, ?, ?, ?)" are members. By default every class has one member:
        equal Types.
        """
        return self == other

    def is_super(self, other: PureType) -> bool | None:
        """True if this Type is a supertype of ``other`` (a variable of ``other`` can
        stand where this Type is expected); ``None`` when that cannot be decided."""
        return True if self.in_same_class(other) else None


class Type(PureType, CLinkerType):
    """A Type: the Python contract of :class:`PureType` plus the C contract.

    Example::

        double = Type()
        double.filter = my_filter

    ``Type[D]`` (``D`` the Python type of the values, as PyTensor writes its generic Type)
    is ``Type`` itself, so ``class StringType(Type[str])`` defines a Type.
    """

    def __class_getitem__(cls, item: object) -> type:
        return cls

    def __str__(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return str(self)


class SingletonType(Type):
    """Base class for a Type with no attributes: all instances of a subclass are equal."""

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return type(self).__name__


class Generic(SingletonType):
    """The Type of arbitrary Python objects; every value is valid."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Return ``data`` unchanged."""
        return data

    def is_valid_value(self, a: Any) -> bool:
        """Every object is valid."""
        return True

    def __str__(self) -> str:
        return "generic"


#: The singleton :class:`Generic` instance.
generic = Generic()


class NullType(Type):
    """The Type of a gradient that is undefined or not implemented.

    Parameters
    ----------
    why_null
        The reason, reported when such a gradient reaches a requested result.
    """

    def __init__(self, why_null: str = "(no explanation given)") -> None:
        self.why_null = why_null

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Always raise: no value belongs to a NullType."""
        raise ValueError("no values may be assigned to a NullType")

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Always raise: nothing converts to a NullType."""
        raise ValueError("no values may be assigned to a NullType")

    def may_share_memory(self, a: Any, b: Any) -> bool:  # type: ignore[override]
        """Always false."""
        return False

    def values_eq(self, a: Any, b: Any, force_same_dtype: bool = True) -> bool:
        """Always raise."""
        raise ValueError("NullType has no values to compare")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "NullType"


#: A NullType with the default reason (PyTensor's ``null_type``; NullTypes compare equal
#: whatever their reason).
null_type = NullType()


class DisconnectedType(Type):
    """The Type of a gradient term for an input that does not affect the cost."""

    def filter(self, data: Any, strict: bool = False, allow_downcast: bool | None = None) -> Any:
        """Always raise: DisconnectedType has no values."""
        raise AssertionError(
            "if you are reading this, opweave tried to compute a gradient value through a "
            "DisconnectedType variable; please report this as a bug"
        )

    def filter_variable(self, other: Any, allow_convert: bool = True) -> Variable:
        """Always raise."""
        raise AssertionError("a DisconnectedType variable cannot be converted")

    def may_share_memory(self, a: Any, b: Any) -> bool:  # type: ignore[override]
        """Always false."""
        return False

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "DisconnectedType"


#: The :class:`DisconnectedType` instance; call it to get a disconnected variable.
disconnected_type = DisconnectedType()
