"""Symbolic tensors: the `TensorType`, tensor variables and constants, shared tensors.

Users write ``import opweave.tensor as ot`` and build graphs from ``ot.dmatrix("x")``,
``ot.constant(...)``, ``ot.shared(...)`` and the operators of tensor variables. The
constructors (``scalar``, ``vector``, ..., the typed shortcuts ``dmatrix``, ``fvector``,
..., their plural forms, from :mod:`opweave.tensor.type`; ``constant`` and
``as_tensor_variable``) are listed in :data:`opweave.tensor.constructors.__all__`. As in
PyTensor, the exceptions are in :mod:`opweave.tensor.exceptions` and sorting in
:mod:`opweave.tensor.sort` (``sort`` and ``argsort`` are re-exported here), and ``grad``,
``jacobian`` and ``hessian`` of :mod:`opweave.gradient` are re-exported here. Linear
algebra is in :mod:`opweave.tensor.linalg` (``ot.linalg.solve``, ``ot.linalg.cholesky``
...), which re-exports :mod:`opweave.tensor.nlinalg` and :mod:`opweave.tensor.slinalg`.
As in PyTensor, the names of :mod:`opweave.tensor.type_other` (``NoneConst``,
``NoneSliceConst``, ``make_slice``, ``none_type_t``, ``slicetype``), ``Variable`` and
NumPy's constants ``e``, ``euler_gamma``, ``inf``, ``nan``, ``newaxis`` and ``pi`` are
here too, with ``Constant``, ``Op`` and the annotation alias ``TensorLike``; one-dimensional
interpolation (``interp``, ``interpolate1d``) is in :mod:`opweave.tensor.interpolate` and
``numpy.pad``'s counterpart ``pad`` in :mod:`opweave.tensor.pad`. As in PyTensor,
``join_dims``, ``split_dims``, ``pack`` and ``unpack`` of :mod:`opweave.tensor.reshape` are
here (imported before :mod:`opweave.tensor.shape`, whose ``reshape`` function then takes
the name ``reshape`` back from that module), and convolutions are in ``ot.signal``.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Union

from numpy import e, euler_gamma, inf, nan, newaxis, pi  # PyTensor's re-exports
from numpy.typing import ArrayLike

from opweave.gradient import grad  # PyTensor's re-export
from opweave.graph.basic import Constant, Variable  # PyTensor's re-exports
from opweave.graph.op import Op

# Imported first: _given_names gives opweave.tensor.constructors and opweave.tensor.basic
# the names they use whose home builds on them; _pytensor_paths gives opweave.tensor.basic
# and opweave.tensor.math PyTensor's names whose home builds on them (before the * below).
# ``operators`` gives tensor variables the operators and methods that build graphs
# (``x + y``, ``x.sum()``, ...; see opweave.tensor.variable). ``ot.linalg``, ``ot.random``
from opweave.tensor import (  # noqa: F401
    _given_names,
    _pytensor_paths,
    fft,
    fourier,
    linalg,
    nlinalg,
    operators,
    random,
    signal,
    slinalg,
)
from opweave.tensor.basic import *  # noqa: F403
from opweave.tensor.basic import __all__ as _basic_all
from opweave.tensor.basic_extra import *  # noqa: F403
from opweave.tensor.basic_extra import __all__ as _basic_extra_all
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.constructors import *  # noqa: F403 - the constructors' __all__
from opweave.tensor.constructors import __all__ as _constructors_all
from opweave.tensor.einsum import einsum
from opweave.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from opweave.tensor.extra_ops import *  # noqa: F403
from opweave.tensor.extra_ops import __all__ as _extra_ops_all
from opweave.tensor.functional import vectorize
from opweave.tensor.interpolate import interp, interpolate1d
from opweave.tensor.math import *  # noqa: F403 (elementwise math, reductions, blas)
from opweave.tensor.math import __all__ as _math_all
from opweave.tensor.math_extra import *  # noqa: F403
from opweave.tensor.math_extra import __all__ as _math_extra_all
from opweave.tensor.pad import pad
from opweave.tensor.reshape import *  # noqa: F403 - join_dims, split_dims, pack, unpack
from opweave.tensor.reshape import __all__ as _reshape_all
from opweave.tensor.scalar_constant import get_underlying_scalar_constant
from opweave.tensor.shape import *  # noqa: F403
from opweave.tensor.shape import __all__ as _shape_all
from opweave.tensor.sharedvar import TensorSharedVariable, shared
from opweave.tensor.sort import argsort, sort
from opweave.tensor.special import *  # noqa: F403
from opweave.tensor.special import __all__ as _special_all
from opweave.tensor.special_extra import *  # noqa: F403
from opweave.tensor.special_extra import __all__ as _special_extra_all
from opweave.tensor.special_functions import *  # noqa: F403
from opweave.tensor.special_functions import __all__ as _special_functions_all
from opweave.tensor.subtensor import *  # noqa: F403
from opweave.tensor.subtensor import __all__ as _subtensor_all
from opweave.tensor.type import TensorType, values_eq_approx
from opweave.tensor.type_other import (
    NoneConst,
    NoneSliceConst,
    make_slice,
    none_type_t,
    slicetype,
)
from opweave.tensor.variable import (
    NotScalarConstantError,
    OperatorUnavailableError,
    TensorConstant,
    TensorVariable,
)
from opweave.transfer import transfer

if TYPE_CHECKING:
    from opweave.gradient.matrices import hessian, jacobian

#: What the tensor functions accept where they take a tensor: a variable, a sequence of
#: variables (stacked), or anything NumPy turns into an array.
TensorLike = Union[Variable, Sequence[Variable], ArrayLike]  # noqa: UP007 - a runtime alias

__all__ = [
    "Blockwise",
    "Constant",
    "Op",
    "TensorLike",
    "CAReduce",
    "DimShuffle",
    "Elemwise",
    "NoneConst",
    "NoneSliceConst",
    "Variable",
    "e",
    "einsum",
    "euler_gamma",
    "inf",
    "nan",
    "newaxis",
    "pad",
    "pi",
    "make_slice",
    "none_type_t",
    "slicetype",
    "NotScalarConstantError",
    "OperatorUnavailableError",
    "TensorConstant",
    "TensorSharedVariable",
    "TensorType",
    "TensorVariable",
    "argsort",
    "get_underlying_scalar_constant",
    "grad",
    "hessian",
    "interp",
    "interpolate1d",
    "jacobian",
    "linalg",
    "shared",
    "signal",
    "sort",
    "values_eq_approx",
    "transfer",
    "vectorize",
    *_basic_all,
    *_basic_extra_all,
    *_constructors_all,
    *_extra_ops_all,
    *_math_all,
    *_math_extra_all,
    *_reshape_all,
    *_shape_all,
    *_special_all,
    *_special_extra_all,
    *_special_functions_all,
    *_subtensor_all,
]
__all__ = list(dict.fromkeys(__all__))  # modules re-export a few shared names
