"""C code for DeepCopyOp, ViewOp, Shape and Shape_i on the core's Types (the C contract).

These are the entries the C backend feeds to the ``opweave_register_*_c_code``
hooks; a plugin registers its own Types' code the same way (or with
``opweave.compile.ops.register_*_c_code``). ``FromFunctionOp`` (``as_op``) runs a
user's Python function: it has no C code, and its table entry says so.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.compile.ops import FromFunctionOp
from opweave.graph.type import Generic
from opweave.scalar.type import ScalarType
from opweave.tensor.type import TensorType
from opweave_c.impls.common import python_only
from opweave_c.impls.csource import snippet

VERSION = (1,)

TENSOR_DEEP_COPY = snippet("compile_ops.c", "tensor_deep_copy")

TENSOR_VIEW = snippet("compile_ops.c", "tensor_view")

TENSOR_SHAPE = snippet("compile_ops.c", "tensor_shape")

TENSOR_SHAPE_I = snippet("compile_ops.c", "tensor_shape_i")

TENSOR_SHAPE_I_CHECK = snippet("compile_ops.c", "tensor_shape_i_check")

SCALAR_COPY = "%(oname)s = %(iname)s;"

GENERIC_VIEW = snippet("compile_ops.c", "generic_view")


def deep_copy_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """DeepCopyOp for arrays and scalars."""
    return [(TensorType, TENSOR_DEEP_COPY, VERSION), (ScalarType, SCALAR_COPY, VERSION)]


def view_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """ViewOp for arrays, scalars and generic objects."""
    return [
        (TensorType, TENSOR_VIEW, VERSION),
        (ScalarType, SCALAR_COPY, VERSION),
        (Generic, GENERIC_VIEW, VERSION),
    ]


def shape_entries() -> list[tuple[type, str, tuple[Any, ...]]]:
    """Shape of arrays."""
    return [(TensorType, TENSOR_SHAPE, VERSION)]


def shape_i_entries() -> list[tuple[type, str, str, tuple[Any, ...]]]:
    """Shape_i of arrays, with the rank check."""
    return [(TensorType, TENSOR_SHAPE_I, TENSOR_SHAPE_I_CHECK, VERSION)]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType({FromFunctionOp: python_only})
