"""Shared tensor variables: :class:`TensorSharedVariable` and :func:`shared`.

Memory rules (as in PyTensor, on the CPU):

* ``shared(a)`` copies ``a``; ``shared(a, borrow=True)`` may keep ``a`` itself as the
  value, so later changes to ``a`` are seen by the variable (and the reverse).
* ``get_value()`` returns a copy; ``get_value(borrow=True)`` returns the internal array.
* ``set_value(v)`` stores a copy of ``v`` (reusing the old buffer when it has the same
  shape and dtype and was never handed out); ``set_value(v, borrow=True)`` may keep ``v``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Variable
from opweave.graph.utils import is_masked_array
from opweave.plugins.hints import install_hint
from opweave.plugins.manager import get_plugin_manager
from opweave.tensor.random.var import RandomGeneratorSharedVariable, randomgen_constructor
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    from opweave.link.basic import Container

__all__ = [
    "TensorSharedVariable",
    "load_shared_variable",
    "scalar_constructor",
    "shared",
    "tensor_constructor",
]


class _BufferState:
    """Which internal array the user may hold a reference to (shared between clones)."""

    __slots__ = ("exposed_id",)

    def __init__(self) -> None:
        self.exposed_id: int | None = None

    def __getstate__(self) -> object:
        """The slots' values, so that pickle protocols 0 and 1 can copy it too."""
        return object.__getstate__(self)


class TensorSharedVariable(SharedVariable[TensorType], TensorVariable[None]):
    """A shared variable holding an ndarray; usable wherever a tensor variable is.

    Parameters
    ----------
    type
        Its :class:`~opweave.tensor.type.TensorType`.
    value
        The initial value (filtered by ``type``; not copied here, see :func:`shared`).
    strict, allow_downcast
        How :meth:`set_value` filters new values (see ``TensorType.filter``).
    container
        An existing container (see :class:`~opweave.compile.sharedvalue.SharedVariable`).
    name
        Optional name.
    """

    def __init__(
        self,
        type: TensorType,
        value: Any,
        strict: bool | None = False,
        allow_downcast: bool | None = None,
        container: Container | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(
            type,
            value,
            strict=strict,
            allow_downcast=allow_downcast,
            container=container,
            name=name,
        )
        self._buffers = _BufferState()
        stored = self.container.storage[0]
        if isinstance(value, np.ndarray) and np.may_share_memory(stored, value):
            self._buffers.exposed_id = id(stored)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> np.ndarray:
        """Return the current value.

        Parameters
        ----------
        borrow
            Return the internal array itself (later function calls and ``set_value`` may
            change it) instead of a copy.
        return_internal_type
            Accepted for compatibility; CPU values always are ndarrays.
        """
        value: np.ndarray = self.container.storage[0]
        if borrow:
            self._buffers.exposed_id = id(value)
            return value
        return value.copy()

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value after filtering it through the Type.

        Parameters
        ----------
        value
            The new value; it must have the variable's dtype (or cast to it without loss,
            unless the variable was made with ``allow_downcast=True``), rank and static shape.
        borrow
            Allow the variable to keep ``value`` itself as its internal array.

        Raises
        ------
        TypeError, ValueError
            If the Type rejects ``value``; the old value is then kept.
        """
        cell = self.container.storage
        strict, downcast = self.container.strict, self.container.allow_downcast
        if borrow:
            new = self.type.filter(value, strict=strict, allow_downcast=downcast)
            if isinstance(value, np.ndarray) and np.may_share_memory(new, value):
                self._buffers.exposed_id = id(new)
        else:
            old = cell[0]
            if isinstance(old, np.ndarray) and id(old) != self._buffers.exposed_id:
                new = self.type.filter_inplace(value, old, strict=strict, allow_downcast=downcast)
            else:
                new = self.type.filter(value, strict=strict, allow_downcast=downcast)
            if isinstance(value, np.ndarray) and new is not old and np.may_share_memory(new, value):
                new = new.copy()
        cell[0] = new

    def zero(self, borrow: bool = False) -> None:
        """Set every element to 0 (in place in the internal array when ``borrow``)."""
        value = self.container.storage[0]
        if borrow:
            value[...] = 0
        else:
            self.container.storage[0] = np.zeros_like(value)

    def clone(self, **kwargs: Any) -> TensorSharedVariable:
        """A variable sharing this one's value (and its container)."""
        cp = super().clone(**kwargs)
        cp._buffers = self._buffers
        return cp


def _initial_array(value: Any) -> np.ndarray:
    if is_masked_array(value):
        raise TypeError("shared: masked arrays are not supported (the mask would be lost)")
    if isinstance(value, np.ndarray | np.generic | bool | int | float | complex):
        arr = np.asarray(value)
        if arr.dtype.kind in "biufc":
            return arr
        raise TypeError(f"shared: the value's dtype {arr.dtype} is not numeric")
    raise TypeError(
        "shared: expected a numpy.ndarray, a NumPy scalar or a Python number, got "
        f"{type(value).__name__} {value!r:.60} (use np.asarray for lists)"
    )


@overload
def shared(
    value: np.random.Generator,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    target: Literal["cpu"] | None = None,
) -> RandomGeneratorSharedVariable: ...
@overload
def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    target: Literal["cpu"] | None = None,
) -> TensorSharedVariable: ...
@overload
def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    target: str | None = None,
) -> Variable: ...
def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    target: str | None = None,
) -> Variable:
    """Return a :class:`TensorSharedVariable` initialised with ``value``.

    Parameters
    ----------
    value
        A ``numpy.ndarray``, a NumPy scalar or a Python number (0-d tensor: ints are
        int64, floats float64, bools bool). Its dtype becomes the variable's dtype.
        A ``numpy.random.Generator`` gives a shared random generator instead
        (:func:`opweave.tensor.random.var.randomgen_constructor`), as in PyTensor.
    name
        Optional name.
    strict
        ``set_value`` then accepts only ndarrays of exactly the variable's Type.
    allow_downcast
        ``set_value`` then allows lossy casts (``None``: the Type's default rule).
    borrow
        Keep an ndarray ``value`` itself as the internal array instead of a copy.
    shape
        The static shape (default: ``None`` for every dimension, so that later values may
        have other lengths).
    target
        Where the value lives: ``None`` or ``"cpu"``. Other targets (``"cuda"``) are
        asked of the plugins' ``opweave_shared`` hook, whose shared variable is returned
        (e.g. a GPU shared variable from opweave-cuda).

    Returns
    -------
    TensorSharedVariable
        Or a :class:`~opweave.tensor.random.var.RandomGeneratorSharedVariable` for a
        generator, or the plugin's shared variable for another ``target``.

    Raises
    ------
    ValueError
        For a ``target`` no installed plugin provides.
    TypeError
        For values that are not numeric arrays or numbers, or a ``shape`` they do not fit.

    Examples
    --------
    >>> w = shared(np.zeros((3, 2)), name="w")
    >>> w.get_value().shape
    (3, 2)
    """
    if target not in (None, "cpu"):
        var: Variable | None = get_plugin_manager().hook.opweave_shared(
            value=value,
            name=name,
            strict=strict,
            allow_downcast=allow_downcast,
            borrow=borrow,
            shape=shape,
            target=target,
        )
        if var is not None:
            return var
        raise ValueError(
            f"shared: no installed plugin provides shared variables on target {target!r}; the "
            "core provides target='cpu' (a device target needs the backend that provides it: "
            f"{install_hint(target, target.rstrip('0123456789'))})"
        )
    if isinstance(value, np.random.Generator):  # a random generator's state, as PyTensor
        return randomgen_constructor(value, name, strict, allow_downcast, borrow)
    return _shared_array(value, _initial_array(value), name, strict, allow_downcast, borrow, shape)


def _shared_array(
    value: Any,
    arr: np.ndarray,
    name: str | None,
    strict: bool,
    allow_downcast: bool | None,
    borrow: bool,
    shape: tuple[int | None, ...] | None,
) -> TensorSharedVariable:
    """A shared variable holding ``arr`` (``value`` as an array), kept itself when
    ``borrow`` and ``value`` is an ndarray, else copied."""
    static_shape = (None,) * arr.ndim if shape is None else shape
    ttype = TensorType(arr.dtype, shape=static_shape)
    aliased = borrow and isinstance(value, np.ndarray)
    # np.asarray: ``value`` itself, or a base-class view of an ndarray subclass.
    initial = np.asarray(arr) if aliased else np.array(arr, copy=True)
    var = TensorSharedVariable(
        ttype, initial, strict=strict, allow_downcast=allow_downcast, name=name
    )
    if not aliased:
        var._buffers.exposed_id = None  # our own copy: set_value may reuse its memory
    return var


def tensor_constructor(
    value: np.ndarray,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    shape: tuple[int | None, ...] | None = None,
    broadcastable: tuple[bool, ...] | None = None,
) -> TensorSharedVariable:
    """A :class:`TensorSharedVariable` holding the ndarray ``value`` (PyTensor's shared
    constructor for arrays).

    Parameters
    ----------
    value
        A numeric ``numpy.ndarray`` (not a masked array).
    name, strict, allow_downcast, borrow
        As for :func:`shared`.
    shape
        The static shape; default ``None`` for every dimension, so that later values may
        have other lengths.
    broadcastable
        Deprecated: ``True`` entries become static length 1, ``False`` entries unknown.

    Raises
    ------
    TypeError
        When ``value`` is not a numeric ndarray, or does not fit ``shape``.
    """
    if not isinstance(value, np.ndarray):
        raise TypeError(f"tensor_constructor: expected a numpy.ndarray, got {type(value).__name__}")
    if broadcastable is not None:
        warnings.warn(
            "The `broadcastable` keyword is deprecated; use `shape`.",
            DeprecationWarning,
            stacklevel=2,
        )
        shape = tuple(1 if flag else None for flag in broadcastable)
    arr = _initial_array(value)
    return _shared_array(value, arr, name, strict, allow_downcast, borrow, shape)


def scalar_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
) -> TensorSharedVariable:
    """A 0-d :class:`TensorSharedVariable` holding a copy of the number ``value``
    (PyTensor's shared constructor for Python and NumPy scalars).

    Parameters
    ----------
    value
        A Python ``int``/``float``/``complex``/``bool`` (int64, float64, complex128, bool)
        or a NumPy scalar (its dtype).
    name, strict, allow_downcast
        As for :func:`shared`.
    borrow
        Ignored: the value is always copied into a new array.

    Raises
    ------
    TypeError
        When ``value`` is not a numeric scalar.
    """
    arr = _initial_array(value)
    if arr.ndim != 0:
        raise TypeError(
            f"scalar_constructor: expected a number or a 0-d array, got {arr.ndim} "
            f"dimensions with shape {arr.shape}"
        )
    return _shared_array(value, arr, name, strict, allow_downcast, False, ())


def load_shared_variable(val: np.ndarray) -> TensorSharedVariable:
    """A shared variable holding a copy of ``val`` (:func:`tensor_constructor` with its
    defaults), as old pickles call it."""
    return tensor_constructor(val)
