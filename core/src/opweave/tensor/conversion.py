"""``_as_tensor_variable``: conversions to tensors that other libraries register by type.

A :func:`functools.singledispatch` function (PyTensor's name and contract,
``pytensor.tensor.basic._as_tensor_variable``): a library registers how objects of its own
classes become tensor variables, ``_as_tensor_variable.register(MyClass)(fn)`` with
``fn(x, name, ndim, **kwargs)``, and :func:`~opweave.tensor.as_tensor_variable` uses that
conversion for such objects (:func:`registered_conversion` finds it). Objects of other types
are converted as before.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch
from typing import Any

__all__ = ["_as_tensor_variable", "registered_conversion"]


@singledispatch
def _as_tensor_variable(x: Any, name: str | None, ndim: int | None, **kwargs: Any) -> Any:
    """Convert ``x`` with the conversion registered for its type.

    Raises
    ------
    NotImplementedError
        When no conversion is registered for the type of ``x``.
    """
    raise NotImplementedError(f"Cannot convert {x!r:.60} to a tensor variable.")


_UNREGISTERED = _as_tensor_variable.dispatch(object)


def registered_conversion(x: Any) -> Callable[..., Any] | None:
    """The conversion registered for the type of ``x`` (or a base class), or ``None``.

    Parameters
    ----------
    x
        Any object.

    Returns
    -------
    callable or None
        ``fn(x, name, ndim, **kwargs)`` returning a tensor variable.
    """
    found = _as_tensor_variable.dispatch(type(x))
    return None if found is _UNREGISTERED else found
