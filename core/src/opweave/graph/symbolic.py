"""Turning any object into a graph variable: :func:`as_symbolic` and its dispatcher.

``as_symbolic(x)`` returns ``x`` when it is already a
:class:`~opweave.graph.basic.Variable`, and otherwise asks :func:`_as_symbolic`, a
:func:`functools.singledispatch` function keyed on the type of ``x``. Libraries register
their own conversions on it (``_as_symbolic.register(MyClass)``): the tensor library
registers ``None`` and ``slice`` (:mod:`opweave.tensor.type_other`), and
:func:`opweave.tensor.as_tensor_variable` for every other object. Both names are
PyTensor's (``pytensor.as_symbolic``, ``pytensor._as_symbolic``) and are re-exported by
the ``opweave`` package.
"""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from opweave.graph.basic import Variable

__all__ = ["_as_symbolic", "as_symbolic"]


def as_symbolic(x: Any, name: str | None = None, **kwargs: Any) -> Variable:
    """``x`` as a graph variable.

    Parameters
    ----------
    x
        A variable (returned as it is) or an object some library registered a conversion
        for with :func:`_as_symbolic` (by default, anything
        :func:`~opweave.tensor.as_tensor_variable` accepts).
    name
        The name given to a newly made variable.
    **kwargs
        Passed on to the conversion (``ndim``, ``dtype`` for tensors).

    Returns
    -------
    Variable
        ``x`` itself, or the converted variable.

    Raises
    ------
    TypeError
        If ``x`` cannot be converted.
    """
    if isinstance(x, Variable):
        return x
    result = _as_symbolic(x, **kwargs)
    if name is not None:
        result.name = name
    return result


@singledispatch
def _as_symbolic(x: Any, **kwargs: Any) -> Variable:
    """Convert ``x``, of a type nothing is registered for.

    The tensor library registers :func:`~opweave.tensor.as_tensor_variable` for
    ``object`` when it is imported (``import opweave`` does), which replaces this default.

    Raises
    ------
    TypeError
        Always: no library that could convert ``x`` is loaded.
    """
    raise TypeError(
        f"cannot convert {type(x).__name__} {x!r:.60} to a graph variable: no conversion is "
        "registered for it (import opweave.tensor for tensors)"
    )
