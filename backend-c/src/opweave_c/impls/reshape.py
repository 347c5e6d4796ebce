"""C table entries of :mod:`opweave.tensor.reshape`: no C code, ``cvm`` runs them in Python."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.reshape import JoinDims, SplitDims
from opweave_c.impls.common import python_only

#: Op class -> ``fn(op, node) -> C implementation or None`` (read-only).
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {JoinDims: python_only, SplitDims: python_only}
)
