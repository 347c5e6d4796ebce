"""What flows between the nodes of a graph run by the dask linker, and conversions.

A variable's value is a :class:`dask.array.Array` (anything computed from the data), a
:class:`dask.delayed.Delayed` (a non-tensor value computed from the data), or a concrete
value (a NumPy array or scalar: constants, shapes, shape arithmetic).
"""

from __future__ import annotations

from typing import Any

import dask
import dask.array as da
import numpy as np
from dask.base import is_dask_collection

__all__ = [
    "as_dask",
    "concrete",
    "is_lazy_value",
    "meta_for",
]


def is_lazy_value(value: Any) -> bool:
    """Whether ``value`` is a Dask collection (not yet computed)."""
    return is_dask_collection(value)


def meta_for(ndim: int, dtype: Any) -> np.ndarray:
    """An empty NumPy array of rank ``ndim`` and ``dtype``: Dask's ``meta``."""
    return np.empty((0,) * ndim, dtype=dtype)


def as_dask(value: Any) -> da.Array:
    """``value`` as a Dask array: itself, or a concrete array in one chunk."""
    if isinstance(value, da.Array):
        return value
    if is_dask_collection(value):  # a Delayed tensor value (from a node run on one worker)
        raise TypeError(f"expected a Dask array or a NumPy array, got {type(value).__name__}")
    arr = np.asarray(value)
    return da.from_array(arr, chunks=arr.shape or (), name=False)


def concrete(value: Any) -> Any:
    """``value`` computed when it is a Dask collection (a small value such as an index or
    a shape that Dask needs to build the graph: a synchronisation point), else itself."""
    if is_dask_collection(value):
        (value,) = dask.compute(value)
    return value
