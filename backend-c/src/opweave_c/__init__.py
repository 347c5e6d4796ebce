"""opweave's C backend: generated C built with cffi, the ``c`` and ``cvm`` linkers.

Public API for other backends: :func:`c_code_for` and :func:`c_type_for` return the C
implementation of a core Op's node and the C interface of a core Type (the tables the
``opweave_implementation(..., backend="c")`` and ``opweave_c_type`` hooks answer
from).
"""

from opweave_c.errors import CompilationError
from opweave_c.impls import c_code_for, c_type_for

__all__ = ["CompilationError", "c_code_for", "c_type_for"]
