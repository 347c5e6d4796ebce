"""C implementations of the core's Types and standard Ops, found by class.

Each module contributes read-only tables: ``C_TYPES`` maps a Type class to a factory
``fn(type_) -> C interface or None`` and ``C_OPS`` maps an Op class to
``fn(op, node) -> C implementation or None``. Subclasses are matched through their MRO.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave_c.impls import (
    basic,
    blas,
    dimshuffle,
    elemwise,
    reductions,
    scalar_ops,
    selection,
    shape,
    special,
    subtensor,
    types,
)

C_TYPES: MappingProxyType[type, Any] = MappingProxyType({**types.C_TYPES})
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        **scalar_ops.C_OPS,
        **elemwise.C_OPS,
        **dimshuffle.C_OPS,
        **reductions.C_OPS,
        **blas.C_OPS,
        **shape.C_OPS,
        **subtensor.C_OPS,
        **basic.C_OPS,
        **special.C_OPS,
        **selection.C_OPS,
    }
)


def _lookup(table: MappingProxyType[type, Any], obj: Any) -> Any:
    for cls in type(obj).__mro__:
        factory = table.get(cls)
        if factory is not None:
            return factory
    return None


def c_type_for(type_: Any) -> Any:
    """The C interface of a core Type, or ``None``."""
    factory = _lookup(C_TYPES, type_)
    return factory(type_) if factory is not None else None


def c_code_for(op: Any, node: Any) -> Any:
    """The C implementation of a core Op's node, or ``None``."""
    factory = _lookup(C_OPS, op)
    return factory(op, node) if factory is not None else None
