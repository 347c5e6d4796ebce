"""C table entries of :mod:`opweave.tensor.signal.conv`: no C code, ``cvm`` runs them in
Python."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.signal.conv import Convolve1d, Convolve2d
from opweave_c.impls.common import python_only

#: Op class -> ``fn(op, node) -> C implementation or None`` (read-only).
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Convolve1d: python_only, Convolve2d: python_only}
)
