"""``OpFromGraph`` (:mod:`opweave.compile.builders`) has no C code: it runs a compiled graph.

It is registered so that the table covers it: the factory answers ``None`` for every node,
so ``cvm`` runs the node through the Python backend's implementation (which calls the
inner graph's compiled function), and the whole-graph ``c`` linker raises
``MissingCCodeError``. With ``inline=True`` the node is replaced by its inner graph before
linking, and the ``c`` linker compiles that graph like any other.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.compile.builders import OpFromGraph
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({OpFromGraph: python_only})
