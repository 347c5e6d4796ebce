"""Random variables (``pytensor.tensor.random``).

``RandomStream(seed).normal(0, 1, size=3)`` gives draws that change on every call of a
compiled function and repeat for one seed; the distributions of
:mod:`~opweave.tensor.random.basic` (``normal``, ``uniform``, ``integers``, ...) take an
explicit generator variable as ``rng`` instead. Shared generators are made by
:func:`~opweave.tensor.random.var.randomgen_constructor`.
"""

from opweave.tensor.random import rewriting  # noqa: F401  (``tensor.random.rewriting``)
from opweave.tensor.random.basic import *  # noqa: F403
from opweave.tensor.random.basic import __all__ as _basic_all
from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave.tensor.random.type import RandomGeneratorType, random_generator_type
from opweave.tensor.random.utils import RandomStream
from opweave.tensor.random.var import RandomGeneratorSharedVariable, randomgen_constructor

__all__ = [
    "RandomGeneratorSharedVariable",
    "RandomGeneratorType",
    "RandomStream",
    "RNGConsumerOp",
    "RandomVariable",
    "randomgen_constructor",
    "random_generator_type",
    *_basic_all,
]
