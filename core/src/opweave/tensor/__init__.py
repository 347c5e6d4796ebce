"""Symbolic tensors: the `TensorType`, tensor variables and constants, shared tensors.

Users write ``import opweave.tensor as ot`` and build graphs from ``ot.dmatrix("x")``,
``ot.constant(...)``, ``ot.shared(...)`` and the operators of tensor variables. The
constructors (``scalar``, ``vector``, ..., the typed shortcuts ``dmatrix``, ``fvector``,
..., their plural forms, ``constant`` and ``as_tensor_variable``) are listed in
:data:`opweave.tensor.constructors.__all__`.
"""

from opweave.tensor.constructors import *  # noqa: F403 - the constructors' __all__
from opweave.tensor.constructors import __all__ as _constructors_all
from opweave.tensor.sharedvar import TensorSharedVariable, shared
from opweave.tensor.type import TensorType, values_eq_approx
from opweave.tensor.variable import (
    NotScalarConstantError,
    OperatorUnavailableError,
    TensorConstant,
    TensorVariable,
    get_underlying_scalar_constant,
)

__all__ = [
    "NotScalarConstantError",
    "OperatorUnavailableError",
    "TensorConstant",
    "TensorSharedVariable",
    "TensorType",
    "TensorVariable",
    "get_underlying_scalar_constant",
    "shared",
    "values_eq_approx",
    *_constructors_all,
]
