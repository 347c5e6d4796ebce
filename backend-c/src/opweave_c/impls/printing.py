"""``Print`` (:mod:`opweave.printing`) has no C code: printing a value is Python's work.

It is registered so that the table covers it: ``cvm`` runs the node through the Python
backend's implementation and the whole-graph ``c`` linker raises ``MissingCCodeError``
(use ``cvm``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.printing import Print
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Print: python_only})
