"""PyTensor's ``pytensor.link.c.op``: Ops with C code.

Every :class:`~opweave.graph.op.Op` has the C contract
(:class:`~opweave.graph.c_interface.CLinkerOp`), and the C backend (opweave-c) compiles the
``c_code`` an Op's class defines, so PyTensor's ``COp`` is opweave's ``Op``: a PyTensor
``COp`` subclass (``make_node``, ``perform``, ``c_code``, ``c_support_code``...) runs as it
is. Its ``c_code`` gets ``sub["fail"]`` and ``sub["id"]``; there is no ``sub["params"]``
(see :mod:`opweave.link.c.params_type`).
"""

from __future__ import annotations

from opweave.graph.op import Op as COp
from opweave.link._absent import absent_name

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.op"

__all__ = ["COp"]

_C_IN_METHODS = (
    "opweave does not read an Op's C from section-marked files: give it from the Op's own "
    "methods (c_code, c_support_code, c_support_code_apply, c_init_code; a method may read "
    "a file), or, for an Op class you do not own, from a plugin's "
    'opweave_implementation(op, node, backend) hook answering for backend="c" (see '
    "'Giving an Op or a Type C code' in docs/backend-c.md)."
)

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = {
    "ExternalCOp": _C_IN_METHODS,
    "_NoPythonExternalCOp": _C_IN_METHODS,
    "OpenMPOp": (
        "opweave-c builds its own loops with OpenMP when config.openmp is set; an Op's C "
        "asks for it with c_compile_args (['-fopenmp']) and c_headers (['<omp.h>']) on COp "
        "(opweave.graph.op.Op)."
    ),
    "_NoPythonCOp": (
        "Subclass COp (opweave.graph.op.Op) and define no perform: the Op then runs only "
        "where its C is compiled (linkers 'c' and 'cvm')."
    ),
}


def __getattr__(name: str) -> object:
    raise absent_name(PATH, name, _ABSENT)
