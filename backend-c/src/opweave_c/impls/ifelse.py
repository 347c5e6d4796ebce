"""``IfElse`` (:mod:`opweave.ifelse`) has no C code: it is control flow, not a kernel.

It is registered so that the table covers it: the factory answers ``None`` for every node,
so ``cvm`` gives the node the Python backend's implementation, made lazy by the core
(only the selected branch is computed), and the whole-graph ``c`` linker raises
``MissingCCodeError`` (it has no lazy evaluation). ``cvm``'s loop in C then runs the node
itself, as that implementation would (:mod:`opweave_c.linkers.lazy_plan`): it reads the
condition, runs only the taken branch's steps and sets the outputs, without a Python call.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.ifelse import IfElse
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({IfElse: python_only})
