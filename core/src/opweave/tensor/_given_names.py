"""Names that modules of the tensor library use whose home builds on them.

:func:`~opweave.tensor.constructors.as_tensor_variable` stacks a list of variables, makes
a ``range`` and converts a scalar variable through the functions of
:mod:`opweave.tensor.basic`, which builds on it; :mod:`opweave.tensor.basic` looks through
indexing (``Subtensor``) for constant values and folds shape entries with shape inference
(:mod:`opweave.tensor.rewriting.shape`), both of which build on it. The lower modules
cannot import those back, so this module, which the package :mod:`opweave.tensor` imports
before its own names (it sits above them all), sets the home's objects on them; the lower
modules name them for type checkers only.
"""

from __future__ import annotations

from types import ModuleType

from opweave._layers import give_names
from opweave.tensor import basic, constructors, index_list, subtensor
from opweave.tensor.rewriting import shape as rewriting_shape

__all__: list[str] = []

#: (lower module, home module, names): the names of the home given to the lower module.
GIVEN: tuple[tuple[ModuleType, ModuleType, str], ...] = (
    (basic, index_list, "get_idx_list"),
    (basic, subtensor, "Subtensor advanced_subtensor1"),
    (
        basic,
        rewriting_shape,
        "ShapeFeature local_shape_from_infer_shape local_shape_i_from_infer_shape "
        "local_subtensor_of_shape",
    ),
)

for _lower, _home, _names in GIVEN:
    give_names(_lower, _home, _names)

# as_tensor_variable calls the functions of the module basic (stack, arange,
# tensor_from_scalar) when it runs, so a function replaced on that module is the one called
constructors.basic = basic
