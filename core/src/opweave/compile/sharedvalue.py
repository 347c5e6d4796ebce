"""Shared variables: symbolic roots whose value lives between calls of compiled functions.

PyTensor's ``shared`` (``opweave.compile.sharedvalue.shared``), which gives tensor values the
tensor library's shared variables, is defined in :mod:`opweave.compile.shared_dispatch`,
on the tensor floor, and ``import opweave`` gives it here.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Self

from opweave.graph.basic import Variable, _TypeType
from opweave.graph.type import generic
from opweave.graph.utils import MethodNotDefined
from opweave.link.basic import Container
from opweave.plugins.forksafe import StateLock

if TYPE_CHECKING:
    from opweave.compile.shared_dispatch import shared

__all__ = [
    "SharedContainer",
    "SharedVariable",
    "collect_new_shareds",
    "shared",
    "shared_constructor",
    "state_lock_of",
]

#: The list collecting the shared variables made inside :func:`collect_new_shareds`
#: (``None`` outside it), per thread and task.
_new_shareds: ContextVar[list[Variable] | None] = ContextVar("opweave_new_shareds", default=None)


@contextmanager
def collect_new_shareds() -> Iterator[list[Variable]]:
    """Collect the shared variables made inside the ``with`` block (PyTensor's name and
    contract).

    Yields
    ------
    list
        The shared variables made so far in the block, in creation order (blocks nest: an
        inner block collects only its own).
    """
    collected: list[Variable] = []
    token = _new_shareds.set(collected)
    try:
        yield collected
    finally:
        _new_shareds.reset(token)


def _record_new_shared(var: Variable) -> None:
    collected = _new_shareds.get()
    if collected is not None and not any(v is var for v in collected):
        collected.append(var)


class SharedContainer(Container):
    """The container of a shared variable's value (shared by its clones), with the
    :class:`~opweave.plugins.forksafe.StateLock` that compiled functions writing the value
    hold while they run (so that two functions updating it from two threads lose no
    update) and that :meth:`SharedVariable.get_value`/:meth:`~SharedVariable.set_value`
    hold while they copy or write it."""

    __slots__ = ("state_lock",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.state_lock = StateLock()


def state_lock_of(var: Any) -> StateLock | None:
    """The state lock of shared variable ``var``'s container, or ``None`` (not a shared
    variable, or a container made without one)."""
    return getattr(getattr(var, "container", None), "state_lock", None)


class SharedVariable(Variable[_TypeType, None]):
    """A variable with a persistent value that functions read and ``updates`` write.

    For type checkers it is generic in its Type, as :class:`~opweave.graph.basic.Constant`
    is (``SharedVariable[TensorType]``); a bare ``SharedVariable`` has ``Type``.

    Parameters
    ----------
    type
        The value's Type.
    value
        The initial value (filtered through ``type.filter``).
    strict
        Require values of the exact Type (no casting) in :meth:`set_value`.
    allow_downcast
        Allow lossy casts in :meth:`set_value`.
    container
        An existing container to hold the value in (PyTensor's contract, used to rebuild
        a shared variable around a deep copy of another's container); ``value`` and
        ``strict`` must then be ``None``.
    name
        Optional name.

    Attributes
    ----------
    default_update
        ``None``, or an expression (of this variable's Type) that every function reading
        this variable uses as its update, unless that function is given another update
        for it or ``no_default_updates`` says otherwise (as in PyTensor). A clone does not
        inherit it.
    """

    default_update: Variable | None

    def __init__(
        self,
        type: _TypeType,
        value: Any,
        strict: bool | None = False,
        allow_downcast: bool | None = None,
        container: Container | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(type, None, None, name)
        if container is not None:
            if value is not None or strict is not None:
                raise TypeError(
                    f"SharedVariable {name!r}: value and strict must be None when a container "
                    f"is given (got value={value!r:.40}, strict={strict!r})"
                )
            if not isinstance(container, Container):
                raise TypeError(
                    f"SharedVariable {name!r}: container must be a Container, got "
                    f"{container.__class__.__name__}"
                )
            self.container = container
        else:
            strict = bool(strict)
            storage = [type.filter(value, strict=strict, allow_downcast=allow_downcast)]
            self.container = SharedContainer(
                self, storage, strict=strict, allow_downcast=allow_downcast, name=name
            )
        self.default_update = None
        _record_new_shared(self)

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """Return the current value (a copy unless ``borrow``).

        The copy is taken while no compiled function updates the value."""
        value = self.container.storage[0]
        if borrow:
            return value
        lock = state_lock_of(self)
        if lock is None:
            return copy.deepcopy(value)
        with lock:
            return copy.deepcopy(self.container.storage[0])

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value, through ``filter_inplace`` when the Type defines it.

        The value is written while no compiled function updates it."""
        if not borrow:
            value = copy.deepcopy(value)
        lock = state_lock_of(self)
        if lock is None:
            self._write_value(value)
            return
        with lock:
            self._write_value(value)

    def _write_value(self, value: Any) -> None:
        cell = self.container.storage
        try:
            cell[0] = self.type.filter_inplace(
                value,
                cell[0],
                strict=self.container.strict,
                allow_downcast=self.container.allow_downcast,
            )
            return
        except MethodNotDefined:
            pass
        self.container.data = value

    def clone(self, **kwargs: Any) -> Self:
        """Return a SharedVariable sharing this one's container."""
        cp = self.__class__.__new__(self.__class__)
        Variable.__init__(cp, self.type, None, None, kwargs.get("name", self.name))
        cp.container = self.container
        cp.default_update = None
        cp.tag = copy.copy(self.tag)
        return cp


def shared_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    **kwargs: Any,
) -> SharedVariable:
    """Return a :class:`SharedVariable` of the :data:`~opweave.graph.type.generic` Type
    holding ``value`` (any Python object): PyTensor's fallback constructor, what
    :func:`shared` gives for values the tensor library does not take. Other keyword
    arguments are ignored."""
    return SharedVariable(generic, value, strict=strict, allow_downcast=allow_downcast, name=name)
