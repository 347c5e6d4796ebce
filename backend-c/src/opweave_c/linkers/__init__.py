"""The ``c`` and ``cvm`` linkers."""

from opweave_c.linkers.c_linker import CLinker
from opweave_c.linkers.cvm import CVMLinker

__all__ = ["CLinker", "CVMLinker"]
