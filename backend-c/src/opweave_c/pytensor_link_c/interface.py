"""PyTensor's ``pytensor.link.c.interface``: the C contract of Ops and Types.

Re-exports :mod:`opweave.graph.c_interface`, where opweave defines it.
"""

from __future__ import annotations

from opweave.graph.c_interface import CLinkerObject, CLinkerOp, CLinkerType
from opweave.link._absent import absent_name

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.interface"

__all__ = ["CLinkerObject", "CLinkerOp", "CLinkerType"]

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = {
    "HideC": (
        "The C backend (opweave-c) compiles the c_code an Op's class defines or inherits "
        "(opweave.graph.c_interface.CLinkerOp), and runs an Op without one in Python (its "
        "perform); a class that must not use its parent's C derives from a base without "
        "C code instead (the two can share a mixin holding make_node and perform)."
    ),
}


def __getattr__(name: str) -> object:
    raise absent_name(PATH, name, _ABSENT)
