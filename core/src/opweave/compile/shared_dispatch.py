"""PyTensor's ``shared``: a shared variable for any value, tensor values getting the tensor
library's.

The constructor dispatches on the value to :func:`opweave.tensor.sharedvar.shared`, so this
module sits on the tensor floor of :mod:`opweave._layers`, above the rest of
:mod:`opweave.compile`; ``import opweave`` gives :func:`shared` under PyTensor's names
``opweave.compile.shared`` and ``opweave.compile.sharedvalue.shared`` (and ``opweave.shared``).
"""

from __future__ import annotations

from typing import Any

from opweave.compile.sharedvalue import SharedVariable, _record_new_shared, shared_constructor
from opweave.graph.basic import Variable
from opweave.sparse.sharedvar import sparse_constructor
from opweave.sparse.type import _is_sparse_value
from opweave.tensor.sharedvar import shared as tensor_shared
from opweave.xtensor.type import is_data_array, xtensor_shared

__all__ = ["shared"]


def shared(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    **kwargs: Any,
) -> SharedVariable:
    """Return a shared variable holding ``value`` (PyTensor's generic constructor).

    Arrays, NumPy scalars, Python numbers and random generators get the tensor library's
    shared variables (:func:`opweave.tensor.sharedvar.shared`, which takes the keyword
    arguments ``borrow``, ``shape`` and ``target``); SciPy sparse matrices get sparse
    shared variables (:func:`opweave.sparse.sharedvar.sparse_constructor`, keywords
    ``borrow`` and ``format``); an ``xarray.DataArray`` gets a shared xtensor with its
    dims (:func:`opweave.xtensor.type.xtensor_shared`, keywords ``borrow``, ``shape`` and
    ``dims``); any other value gets a
    :class:`SharedVariable` of the :data:`~opweave.graph.type.generic` Type, which holds
    any Python object.

    Raises
    ------
    TypeError
        If ``value`` is a symbolic Variable, or a keyword argument is not one the
        constructor for ``value`` takes.
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared: the value cannot be a symbolic Variable, got {value}")
    var = _dispatch_shared(value, name, strict, allow_downcast, kwargs)
    _record_new_shared(var)
    return var


def _dispatch_shared(
    value: Any, name: str | None, strict: bool, allow_downcast: bool | None, kwargs: dict[str, Any]
) -> SharedVariable:
    """The tensor library's shared variable for ``value`` where it takes it, else a
    generic one (see :func:`shared`)."""
    if _is_sparse_value(value):
        return sparse_constructor(value, name, strict, allow_downcast, **kwargs)
    if is_data_array(value):  # an xarray.DataArray keeps its dims
        return xtensor_shared(
            value, name=name, strict=strict, allow_downcast=allow_downcast, **kwargs
        )
    try:
        made: SharedVariable = tensor_shared(value, name, strict, allow_downcast, **kwargs)
        return made
    except TypeError:
        if _is_tensor_value(tensor_shared, value):
            raise  # a bad keyword argument, or an error of the tensor constructor's own
        if kwargs:
            raise TypeError(
                f"shared: a value of Python type {type(value).__name__} gets a generic "
                f"shared variable, which takes no keyword arguments {sorted(kwargs)}"
            ) from None
    return shared_constructor(value, name=name, strict=strict, allow_downcast=allow_downcast)


def _is_tensor_value(tensor_shared: Any, value: Any) -> bool:
    """True if the tensor constructor accepts ``value`` (without keyword arguments)."""
    try:
        tensor_shared(value)
    except TypeError:
        return False
    return True
