"""Tensor variables: :class:`TensorVariable`, :class:`TensorConstant` and their operators.

The Python operators (``+``, ``*``, ``[]``, ``.sum()``, ...) build graphs with
functions of the other ``opweave.tensor`` modules (``math``, ``basic``,
``shape``, ``subtensor``, ``elemwise``, ...). Those modules build on this one (their
Ops return :class:`TensorVariable`), so this module is the lowest of the tensor library:
:class:`TensorPyOperators` defines here what needs nothing above it, and
:mod:`opweave.tensor.operators`, above those modules, gives it the methods that call them.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.configdefaults import config
from opweave.graph.basic import Constant, OptionalApplyType, Variable
from opweave.graph.utils import MetaType
from opweave.tensor.exceptions import NotScalarConstantError  # re-exported here
from opweave.transfer import transfer as transfer_to

if TYPE_CHECKING:
    # opweave.tensor.type builds on this module (TensorType makes TensorVariables); the
    # methods of opweave.tensor.operators, set on TensorPyOperators when it is imported
    from opweave.tensor.operators import TensorGraphMethods as _GraphMethods
    from opweave.tensor.type import TensorType
else:
    _GraphMethods = object  # the methods are set on the class, not inherited

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
    "get_unique_constant_value",
]


class OperatorUnavailableError(NotImplementedError):
    """A tensor operator's implementing function is not provided by this installation."""


class TensorPyOperators(_GraphMethods):
    """Python operators and NumPy-like methods shared by every tensor variable class.

    Each builds a graph through the ``opweave.tensor`` function of the same name in
    PyTensor (``x + y`` is ``opweave.tensor.math.add(x, y)``). Variables have no
    truth value and compare by identity: use ``opweave.tensor.math.eq``/``neq``.

    The methods that build graphs (the arithmetic, comparison and indexing operators,
    ``shape``, ``sum``, ``reshape``, ``dot``, ``sort``, ...) call modules that build on
    this one; :mod:`opweave.tensor.operators` defines them and sets them on this class
    when the package :mod:`opweave.tensor` is imported, before any other code runs.
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

    def transfer(self, target: str) -> Any:
        """This variable moved to ``target`` (``'cpu'`` or a target a plugin adds)."""
        return transfer_to(self, target)  # type: ignore[arg-type]


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

    Warns
    -----
    UserWarning
        For a float64 variable when the ``warn_float64`` flag is ``warn`` (``raise``
        raises a ``TypeError`` instead, ``pdb`` starts the debugger).
    """

    def __init__(
        self,
        type: TensorType,
        owner: OptionalApplyType | None = None,
        index: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(type, owner, index, name)
        if type.dtype == "float64":
            _check_float64()


def _check_float64() -> None:
    """Act on the ``warn_float64`` flag for a float64 variable being created."""
    action = config.warn_float64
    if action == "ignore":
        return
    message = (
        "You are creating a TensorVariable with float64 dtype. You requested an action "
        f"via the warn_float64 flag ({action})."
    )
    if action == "warn":
        warnings.warn(message, UserWarning, stacklevel=4)
    elif action == "raise":
        raise TypeError(message)
    else:
        breakpoint()


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
        if None in type.shape:  # the value fixes every length, as in PyTensor
            self.type = type.clone(shape=value.shape)

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
