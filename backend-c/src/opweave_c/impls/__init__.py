"""C implementations of the core's Types and standard Ops, found by class.

Each module is named after the core module that defines its Ops or Types
(:mod:`opweave_c.impls.subtensor` for :mod:`opweave.tensor.subtensor`,
:mod:`opweave_c.impls.scalar_basic` for :mod:`opweave.scalar.basic`,
:mod:`opweave_c.impls.graph_type` for :mod:`opweave.graph.type`;
:mod:`opweave_c.impls.tensor_type` for :mod:`opweave.tensor.type`, as a module named
``type`` would hide the builtin in this package) and contributes
read-only tables: ``C_TYPES`` maps a Type class to a factory ``fn(type_) -> C interface
or None`` and ``C_OPS`` maps an Op class to ``fn(op, node) -> C implementation or None``.
Shared code lives in modules of its own (:mod:`~opweave_c.impls.common`,
:mod:`~opweave_c.impls.csource`, :mod:`~opweave_c.impls.reduce_loops`,
:mod:`~opweave_c.impls.blocked`); the C itself is in ``impls/c/*.c``.
Subclasses are matched through their MRO.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.link.implementations import ImplementationTable
from opweave_c.impls import (
    basic,
    blas,
    blockwise,
    builders,
    compile_ops,
    conv,
    dimshuffle,
    elemwise,
    extra_ops,
    fft,
    fourier,
    graph_type,
    ifelse,
    map_reduce,
    nlinalg,
    printing,
    raise_op,
    random,
    reductions,
    reshape,
    scalar_basic,
    scalar_type,
    scan,
    shape,
    slinalg,
    sort,
    sparse,
    special,
    subtensor,
    tensor_type,
    type_other,
)

#: Type class -> ``fn(type_) -> C interface or None`` (read-only).
C_TYPES: MappingProxyType[type, Any] = MappingProxyType(
    {**tensor_type.C_TYPES, **scalar_type.C_TYPES, **graph_type.C_TYPES}
)
#: Op class -> ``fn(op, node) -> C implementation or None``. Ops whose class defines
#: ``c_code`` (DeepCopyOp, ViewOp, Shape, Shape_i: C per Type, from their registries)
#: count as implemented.
C_OPS = ImplementationTable(
    "c",
    {
        **scalar_basic.C_OPS,
        **elemwise.C_OPS,
        **dimshuffle.C_OPS,
        **map_reduce.C_OPS,
        **reductions.C_OPS,
        **blas.C_OPS,
        **shape.C_OPS,
        **subtensor.C_OPS,
        **basic.C_OPS,
        **special.C_OPS,
        **sort.C_OPS,
        **extra_ops.C_OPS,
        **nlinalg.C_OPS,
        **slinalg.C_OPS,
        **random.C_OPS,
        **ifelse.C_OPS,
        **scan.C_OPS,
        **builders.C_OPS,
        **sparse.C_OPS,
        **blockwise.C_OPS,
        **compile_ops.C_OPS,
        **printing.C_OPS,
        **raise_op.C_OPS,
        **type_other.C_OPS,
        **fft.C_OPS,
        **fourier.C_OPS,
        **reshape.C_OPS,
        **conv.C_OPS,
    },
    own_method="c_code",
)


def c_type_for(type_: Any) -> Any:
    """The C interface of a core Type, or ``None``."""
    for cls in type(type_).__mro__:
        factory = C_TYPES.get(cls)
        if factory is not None:
            return factory(type_)
    return None


def c_code_for(op: Any, node: Any) -> Any:
    """The C implementation of a core Op's node, or ``None``."""
    factory = C_OPS.lookup(op)
    return factory(op, node) if factory is not None else None
