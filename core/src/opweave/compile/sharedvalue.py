"""Shared variables: symbolic roots whose value lives between calls of compiled functions."""

from __future__ import annotations

import copy
from typing import Any, Self

from opweave.graph.basic import Variable, _TypeType
from opweave.graph.utils import MethodNotDefined
from opweave.link.basic import Container


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
        strict: bool = False,
        allow_downcast: bool | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(type, None, None, name)
        storage = [type.filter(value, strict=strict, allow_downcast=allow_downcast)]
        self.container = Container(
            self, storage, strict=strict, allow_downcast=allow_downcast, name=name
        )
        self.default_update = None

    def get_value(self, borrow: bool = False, return_internal_type: bool = False) -> Any:
        """Return the current value (a copy unless ``borrow``)."""
        value = self.container.storage[0]
        return value if borrow else copy.deepcopy(value)

    def set_value(self, value: Any, borrow: bool = False) -> None:
        """Replace the value, through ``filter_inplace`` when the Type defines it."""
        if not borrow:
            value = copy.deepcopy(value)
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
