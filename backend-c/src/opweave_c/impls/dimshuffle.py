"""C implementations: (to be written)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

C_OPS: MappingProxyType[type, Any] = MappingProxyType({})
