"""C table entries of :mod:`opweave.tensor.fourier`: no C code, ``cvm`` runs it in Python."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.fourier import Fourier
from opweave_c.impls.common import python_only

#: Op class -> ``fn(op, node) -> C implementation or None`` (read-only).
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Fourier: python_only})
