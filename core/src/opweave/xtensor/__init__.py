"""Named-dimension tensors (PyTensor's ``pytensor.xtensor``).

An xtensor is an array whose dimensions have names, as an ``xarray.DataArray`` without
coordinates: ``x + y`` aligns and broadcasts by name, ``x.sum("time")`` reduces a named
dimension, ``x.isel(time=0)`` selects by position along one. Graphs of xtensors are
lowered to tensor graphs when compiled (:mod:`opweave.xtensor.rewriting`), so every
backend runs them.

The modules: :mod:`~opweave.xtensor.type` (the Type, variables, constants, shared
variables, ``as_xtensor``), :mod:`~opweave.xtensor.basic` (the casts to and from tensors,
``rename``), :mod:`~opweave.xtensor.math` (elementwise functions, ``dot``),
:mod:`~opweave.xtensor.reduction`, :mod:`~opweave.xtensor.shape`,
:mod:`~opweave.xtensor.indexing`, :mod:`~opweave.xtensor.random` (random variables),
:mod:`~opweave.xtensor.linalg`, :mod:`~opweave.xtensor.signal` and
:mod:`~opweave.xtensor.vectorization` (the Ops that apply tensor Ops over named
dimensions).
"""

from __future__ import annotations

from opweave._layers import give_names
from opweave.xtensor import basic, type

# The Type's variables convert through the casts, which build on the Type.
give_names(type, basic, "tensor_from_xtensor xtensor_from_tensor")

from opweave.xtensor import (  # noqa: E402
    indexing,
    linalg,
    math,
    random,
    reduction,
    rewriting,
    shape,
    signal,
    vectorization,
)
from opweave.xtensor import operators as _operators  # noqa: E402, F401 (gives the methods)
from opweave.xtensor.math import dot  # noqa: E402
from opweave.xtensor.rewriting import plugin as _rewriting_plugin  # noqa: E402, F401
from opweave.xtensor.shape import broadcast, concat, full_like, ones_like, zeros_like  # noqa: E402
from opweave.xtensor.type import as_xtensor, xtensor, xtensor_constant  # noqa: E402

__all__ = [
    "as_xtensor",
    "basic",
    "broadcast",
    "concat",
    "dot",
    "full_like",
    "indexing",
    "linalg",
    "math",
    "ones_like",
    "random",
    "reduction",
    "rewriting",
    "shape",
    "signal",
    "type",
    "vectorization",
    "xtensor",
    "xtensor_constant",
    "zeros_like",
]
