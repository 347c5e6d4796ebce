"""opweave's C backend: generated C built with cffi, the ``c`` and ``cvm`` linkers."""

from opweave_c.errors import CompilationError

__all__ = ["CompilationError"]
