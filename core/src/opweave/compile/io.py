"""``In`` and ``Out``: per-input and per-output options for :func:`opweave.function`."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Variable

_NO_VALUE = object()


class In:
    """An input of a compiled function, with options.

    Parameters
    ----------
    variable
        The symbolic input.
    name
        Keyword name of the argument (defaults to ``variable.name``).
    value
        Default value used when the argument is omitted. A
        :class:`~opweave.link.basic.Container` is used as the input's storage itself: its
        value is the state the function reads and, with ``update``, writes.
    update
        A symbolic expression whose value replaces the default after each call: the
        input then carries state between calls. Its Type must be in the same class as the
        variable's (``TypeError`` otherwise); :func:`~opweave.compile.function` raises
        ``TypeError`` for an input with an update but no ``value``.
    mutable
        The function may overwrite the argument's memory.
    strict
        Arguments must already be of the exact Type (no casting).
    allow_downcast
        Allow lossy casts of the argument (``None``: the Type decides).
    borrow
        Do not copy a default value given by the user.
    """

    def __init__(
        self,
        variable: Variable,
        name: str | None = None,
        value: Any = _NO_VALUE,
        update: Variable | None = None,
        mutable: bool = False,
        strict: bool = False,
        allow_downcast: bool | None = None,
        autoname: bool = True,
        implicit: bool | None = None,
        borrow: bool = False,
        shared: bool = False,
    ) -> None:
        if not isinstance(variable, Variable):
            raise TypeError(f"In() expects a Variable, got {type(variable).__name__}: {variable!r}")
        if update is not None and not variable.type.in_same_class(update.type):
            raise TypeError(
                f"In({variable}): the variable has type {variable.type} but its update "
                f"{update} has type {update.type}; the update must be of the variable's Type"
            )
        self.variable = variable
        self.name = name if name is not None else (variable.name if autoname else None)
        self.value = value
        self.update = update
        self.mutable = mutable
        self.strict = strict
        self.allow_downcast = allow_downcast
        self.implicit = bool(implicit)
        self.borrow = borrow
        self.shared = shared

    @property
    def has_value(self) -> bool:
        """Whether a default value was given."""
        return self.value is not _NO_VALUE

    def __repr__(self) -> str:
        return f"In({self.variable})"


class Out:
    """An output of a compiled function, with options.

    Parameters
    ----------
    variable
        The symbolic output.
    borrow
        Return opweave's own output buffer (it may be overwritten by the next call)
        instead of a value the caller owns.
    """

    def __init__(self, variable: Variable, borrow: bool = False) -> None:
        if not isinstance(variable, Variable):
            raise TypeError(
                f"Out() expects a Variable, got {type(variable).__name__}: {variable!r}"
            )
        self.variable = variable
        self.borrow = borrow

    def __repr__(self) -> str:
        return f"Out({self.variable}, borrow={self.borrow})"


#: PyTensor's names of :class:`In` and :class:`Out`.
SymbolicInput = In
SymbolicOutput = Out
