"""The random variables of :mod:`opweave.tensor.random` have no C code: NumPy draws them.

They are registered so that the table covers them (``RNGConsumerOp``, the base of every
Op that consumes generators, too): the factory answers ``None`` for every node, so
``cvm`` runs these nodes (and handles their generator values) in Python with the Python
backend's implementations, and the ``c`` linker raises ``MissingCCodeError``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``; one entry
#: covers every distribution (subclasses are matched through their MRO). Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {RandomVariable: python_only, RNGConsumerOp: python_only}
)
