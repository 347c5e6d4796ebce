"""Compiling graphs into callables: ``function``, modes, ``In``/``Out``, shared variables."""

from opweave.compile.function import function
from opweave.compile.function_maker import Function, FunctionMaker, UnusedInputError
from opweave.compile.io import In, Out
from opweave.compile.mode import Mode, get_mode
from opweave.compile.ops import (
    DeepCopyOp,
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
    # ``shared`` (the tensor library's), ``Shape`` and ``Shape_i`` (defined in
    # ``opweave.tensor.shape``) are re-exported here for PyTensor/seed 002 code. The tensor
    # library sits on the floor above this package (see ``opweave._layers``), so they are
    # resolved on first use.
    if name == "shared":
        # late: tensor is above compile; opweave.compile.shared is a re-export only
        from opweave.tensor.sharedvar import shared

        return shared
    if name in ("Shape", "Shape_i"):
        # late: tensor is above compile; these are re-exports only
        from opweave.tensor.shape import Shape, Shape_i

        return Shape if name == "Shape" else Shape_i
    raise AttributeError(f"module 'opweave.compile' has no attribute {name!r}")
