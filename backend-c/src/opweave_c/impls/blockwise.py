"""``Blockwise`` (:mod:`opweave.tensor.blockwise`) has no C code: it loops its core Op.

It is registered so that the table covers it: the factory answers ``None`` for every node,
so ``cvm`` runs the node through the Python backend's implementation (which calls the
core Op's Python implementation once per batch index), and the whole-graph ``c`` linker
raises ``MissingCCodeError`` (use ``cvm``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.blockwise import Blockwise
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Blockwise: python_only})
