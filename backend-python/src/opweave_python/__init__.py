"""opweave's Python backend: NumPy implementations and the ``py`` and ``vm`` linkers."""

from opweave_python.linkers.perform_linker import PerformLinker
from opweave_python.linkers.vm import VMLinker

__version__ = "0.1.0"

__all__ = ["PerformLinker", "VMLinker"]
