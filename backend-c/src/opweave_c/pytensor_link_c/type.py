"""PyTensor's ``pytensor.link.c.type``: Types with C code.

Every :class:`~opweave.graph.type.Type` has the C contract
(:class:`~opweave.graph.c_interface.CLinkerType`), so PyTensor's ``CType`` is opweave's
``Type``; ``Generic`` (any Python object) and ``generic`` are re-exported from
:mod:`opweave.graph.type`.
"""

from __future__ import annotations

from opweave.graph.type import Generic, generic
from opweave.graph.type import Type as CType
from opweave.link._absent import absent_name

#: The path this module is imported under (PyTensor's, with ``opweave``).
PATH = "opweave.link.c.type"

__all__ = ["CType", "Generic", "generic"]

_PROPS = (
    "Make the value a __props__ entry of the Op (part of its identity, so of the compiled "
    "module's key) and write it into the Op's c_code as a literal or a #define; values "
    "known only at run time are inputs of a TensorType or ScalarType."
)

#: PyTensor names opweave lacks here -> what to use instead.
_ABSENT = dict.fromkeys(
    ("EnumType", "EnumList", "CEnumType", "CDataType", "CDataTypeConstant"), _PROPS
)


def __getattr__(name: str) -> object:
    raise absent_name(PATH, name, _ABSENT)
