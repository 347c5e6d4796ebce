"""``Scan`` (:mod:`opweave.scan`) has no C code: it is a loop calling a compiled function.

It is registered so that the table covers it: the factory answers ``None`` for every node,
so ``cvm`` runs the node through the Python backend's implementation (whose inner function
may itself use any linker, ``c`` included, through ``scan(..., mode=...)``), and the
whole-graph ``c`` linker raises ``MissingCCodeError`` (use ``cvm``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.scan.op import Scan
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Scan: python_only})
