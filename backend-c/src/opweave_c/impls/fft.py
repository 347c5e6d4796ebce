"""C table entries of :mod:`opweave.tensor.fft`: no C code, ``cvm`` runs them in Python."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.fft import IRFFTOp, RFFTOp
from opweave_c.impls.common import python_only

#: Op class -> ``fn(op, node) -> C implementation or None`` (read-only).
C_OPS: MappingProxyType[type, Any] = MappingProxyType({RFFTOp: python_only, IRFFTOp: python_only})
