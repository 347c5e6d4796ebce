"""The gradient exceptions, and what Ops' ``grad`` methods use (NullType helpers, patterns)."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Variable
from opweave.graph.op import connection_pattern_of  # re-exported: defined with Op
from opweave.graph.type import NullType

__all__ = [
    "DisconnectedInputError",
    "NullTypeGradError",
    "connection_pattern_of",
    "grad_not_implemented",
    "grad_undefined",
]


class DisconnectedInputError(ValueError):
    """A gradient was requested with respect to a variable the cost does not depend on."""


class NullTypeGradError(TypeError):
    """A requested gradient is undefined or not implemented (a :class:`NullType` reached it)."""


def grad_undefined(op: Any, x_pos: int, x: Any, comment: str = "") -> Variable:
    """Return a :class:`NullType` variable: ``op``'s gradient for input ``x_pos`` is undefined.

    An Op's ``grad`` returns it for an input where the derivative does not exist
    mathematically (for example an argmax along a fractional axis).
    :func:`grad` raises :class:`NullTypeGradError` with this reason if the
    undefined gradient reaches a requested variable.

    Parameters
    ----------
    op
        The Op whose gradient is undefined.
    x_pos
        The position of the input.
    x
        The input variable (used in the message).
    comment
        An optional explanation appended to the reason.

    Returns
    -------
    Variable
        A fresh variable of ``NullType(reason)``.
    """
    return _null_gradient(op, x_pos, x, "is mathematically undefined", comment)


def grad_not_implemented(op: Any, x_pos: int, x: Any, comment: str = "") -> Variable:
    """Return a :class:`NullType` variable: ``op`` does not implement the gradient of ``x_pos``.

    Parameters
    ----------
    op
        The Op whose gradient is missing.
    x_pos
        The position of the input.
    x
        The input variable (used in the message).
    comment
        An optional explanation appended to the reason.

    Returns
    -------
    Variable
        A fresh variable of ``NullType(reason)``.
    """
    return _null_gradient(op, x_pos, x, "is not implemented", comment)


def _null_gradient(op: Any, x_pos: int, x: Any, what: str, comment: str) -> Variable:
    why = f"the gradient of {op} with respect to its input {x_pos} ({x}) {what}"
    return NullType(f"{why}: {comment}" if comment else why)()
