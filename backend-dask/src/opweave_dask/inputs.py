"""Checking the arguments of a function compiled with the dask linker.

A tensor input takes a :class:`dask.array.Array` (kept lazy, its chunks as they are) or a
NumPy array or scalar (the input Type's ``filter`` converts it, as on other linkers; the
linker chunks it). Anything else, nested lists included, is refused with a ``TypeError``:
converting a list would hide the cost of building the array from Python objects, which is
the caller's to pay (``numpy.asarray`` or ``dask.array.asarray``). A Dask array gets the
checks ``filter`` does (rank, static lengths, dtype and whether it may be cast) without
being computed; a cast is applied lazily.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import dask.array as da
import numpy as np

from opweave.graph.basic import Variable
from opweave.tensor.type import TensorType

__all__ = ["check_argument"]

_SCALARS = (np.ndarray, np.generic, bool, int, float, complex)


def _label(var: Variable) -> str:
    return f"input {var.name!r}" if var.name else f"input {var}"


def check_argument(value: Any, var: Variable, filt: Callable[[Any], Any]) -> Any:
    """``value`` ready to be stored for ``var`` (a Dask array or what ``filt`` returns).

    Parameters
    ----------
    value
        The argument.
    var
        The graph input it is for.
    filt
        The input Type's ``filter`` with the input's ``strict``/``allow_downcast`` bound.

    Raises
    ------
    TypeError
        For a value that is neither a Dask nor a NumPy array or scalar, a Dask array of the
        wrong rank or of a dtype that cannot be cast without loss.
    ValueError
        For a Dask array whose known lengths differ from the input's static shape.
    """
    type_ = var.type
    if not isinstance(type_, TensorType):
        return filt(value)
    if isinstance(value, da.Array):
        return _check_dask(value, var, type_, filt)
    if isinstance(value, _SCALARS):
        try:
            return filt(value)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"dask linker: {_label(var)} (type {type_}): {exc}") from None
    raise TypeError(
        f"dask linker: {_label(var)} (type {type_}) takes a dask.array.Array or a "
        f"numpy.ndarray, got {type(value).__name__}; convert it with dask.array.asarray or "
        "numpy.asarray"
    )


def _check_dask(value: da.Array, var: Variable, type_: TensorType, filt: Any) -> da.Array:
    if value.ndim != type_.ndim:
        raise TypeError(
            f"dask linker: {_label(var)} (type {type_}) takes a {type_.ndim}-d array, got a "
            f"{value.ndim}-d dask array of shape {value.shape}"
        )
    for axis, (want, got) in enumerate(zip(type_.shape, value.shape, strict=True)):
        if want is not None and not math.isnan(got) and want != got:
            raise ValueError(
                f"dask linker: {_label(var)} (type {type_}) has static length {want} on axis "
                f"{axis}, got a dask array of shape {value.shape}"
            )
    if value.dtype == np.dtype(type_.dtype):
        return value
    # The Type decides whether the dtype may be cast: ask it about an empty sample.
    sample = np.zeros(tuple(0 if s is None else s for s in type_.shape), dtype=value.dtype)
    try:
        converted = filt(sample)
    except TypeError as exc:
        raise TypeError(
            f"dask linker: {_label(var)} (type {type_}) cannot take a dask array of dtype "
            f"{value.dtype}: {exc}"
        ) from None
    return value.astype(converted.dtype)
