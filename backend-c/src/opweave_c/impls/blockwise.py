"""C code for ``Blockwise`` (:mod:`opweave.tensor.blockwise`): a batch loop around the core
Op's C code (:mod:`opweave_c.impls.blockwise_loop`).

A node has C when its core Op has C for the core node (Cholesky, Solve, SolveTriangular,
CholeskySolve, Dot ...); for the others the factory answers ``None``, so ``cvm`` runs the
node through the Python backend's implementation (which calls the core Op's Python
implementation once per batch index), and the whole-graph ``c`` linker raises
``MissingCCodeError`` (use ``cvm``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.link.capabilities import CAPABILITY_ATTRIBUTE, PARTIAL
from opweave.tensor.blockwise import Blockwise
from opweave_c.impls.blockwise_loop import blockwise_c

__all__ = ["C_OPS"]

# C for the nodes whose core Op has C; the others run in Python (``cvm``).
setattr(blockwise_c, CAPABILITY_ATTRIBUTE, PARTIAL)

#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Blockwise: blockwise_c})
