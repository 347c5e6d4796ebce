"""Compiling graphs into callables: ``function``, modes, ``In``/``Out``, shared variables."""

from opweave.compile.function import function
from opweave.compile.function_maker import Function, FunctionMaker, UnusedInputError
from opweave.compile.io import In, Out
from opweave.compile.mode import Mode, get_mode
from opweave.compile.ops import (
    DeepCopyOp,
    Shape,
    Shape_i,
    ViewOp,
    deep_copy_op,
    register_deep_copy_op_c_code,
    register_shape_c_code,
    register_shape_i_c_code,
    register_view_op_c_code,
    view_op,
)
from opweave.compile.sharedvalue import SharedVariable

__all__ = [
    "DeepCopyOp",
    "Function",
    "FunctionMaker",
    "In",
    "Mode",
    "Out",
    "Shape",
    "Shape_i",
    "SharedVariable",
    "UnusedInputError",
    "ViewOp",
    "deep_copy_op",
    "function",
    "get_mode",
    "register_deep_copy_op_c_code",
    "register_shape_c_code",
    "register_shape_i_c_code",
    "register_view_op_c_code",
    "view_op",
]


def __getattr__(name: str) -> object:
    # ``opweave.compile.shared`` is the tensor library's ``shared``; imported on first use
    # because the tensor library itself builds on this package.
    if name == "shared":
        from opweave.tensor.sharedvar import shared

        return shared
    raise AttributeError(f"module 'opweave.compile' has no attribute {name!r}")
