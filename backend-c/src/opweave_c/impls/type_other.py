"""``MakeSlice`` (:mod:`opweave.tensor.type_other`) has no C code: its output is a
Python ``slice`` (a Type without C support), so ``cvm`` runs it in Python."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.type_other import MakeSlice
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]

#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({MakeSlice: python_only})
