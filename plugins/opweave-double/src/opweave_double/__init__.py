"""The ``Double`` type of Theano's tutorial and its Ops, published as an opweave plugin."""

from opweave_double.ops import (
    BinaryDoubleOp,
    DoubleVector,
    HiddenBufferAdd,
    add,
    div,
    double_vector,
    hidden_buffer_add,
    mul,
    sub,
)
from opweave_double.type import Double, double

__version__ = "0.1.0"

__all__ = [
    "BinaryDoubleOp",
    "Double",
    "DoubleVector",
    "HiddenBufferAdd",
    "add",
    "div",
    "double",
    "double_vector",
    "hidden_buffer_add",
    "mul",
    "sub",
]
