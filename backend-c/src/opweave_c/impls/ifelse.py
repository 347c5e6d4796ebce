"""``IfElse`` (:mod:`opweave.ifelse`) has no C code: it is control flow, not a kernel.

It is registered so that the table covers it: the factory answers ``None`` for every node,
so ``cvm`` runs the node through the Python backend's implementation, made lazy by the
core's loop (only the selected branch is computed), and the whole-graph ``c`` linker
raises ``MissingCCodeError`` (it has no lazy evaluation).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.ifelse import IfElse
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({IfElse: python_only})
