"""PyTensor's paths for the names it defines in ``tensor.basic`` and ``tensor.math`` whose
home in opweave is a module that builds on those two.

``pytensor.tensor.basic.atleast_2d`` is :func:`opweave.tensor.basic_extra.atleast_2d` and
``pytensor.tensor.math.allclose`` is :func:`opweave.tensor.math_extra.allclose`: the home
modules import :mod:`opweave.tensor.basic` and :mod:`opweave.tensor.math`, so these cannot
import them back. This module, which the package :mod:`opweave.tensor` imports before any of
its own names (it sits above them all), sets the home's objects on the lower module.
"""

from __future__ import annotations

from types import ModuleType

from opweave._layers import give_names
from opweave.tensor import (
    basic,
    basic_extra,
    extra_ops,
    math,
    math_extra,
    special,
    special_extra,
    special_functions,
)

__all__: list[str] = []

#: (lower module, home module, names): the names of the home given to the lower module.
PATHS: tuple[tuple[ModuleType, ModuleType, str], ...] = (
    (
        basic,
        basic_extra,
        "atleast_1d atleast_2d atleast_3d atleast_Nd empty empty_like expand_dims "
        "extract_diag horizontal_stack identity identity_like inverse_permutation is_flat "
        "mgrid moveaxis ogrid permute_row_elements stacklists take_along_axis trace "
        "tril_indices tril_indices_from triu_indices triu_indices_from vertical_stack",
    ),
    (basic, extra_ops, "roll"),
    (
        math,
        math_extra,
        "allclose isclose isfinite isposinf isneginf nan_to_num sgn iround ceil_intdiv "
        "largest smallest cov vecdot matvec vecmat median",
    ),
    (
        math,
        special_extra,
        "betainc chi2sf erfcinv gammainccinv gammaincinv i0 i1 iv ive j0 j1 ndtri_exp",
    ),
    (math, special_functions, "betaincinv hyp2f1 jv kn kv kve owens_t"),
    (math, special, "logaddexp"),
)


for _lower, _home, _names in PATHS:
    give_names(_lower, _home, _names)
