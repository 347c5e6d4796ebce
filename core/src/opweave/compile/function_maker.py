"""``opweave.compile.function_maker``: re-exports of the modules PyTensor names
(:mod:`opweave.compile.maker`, :mod:`opweave.compile.executor`,
:mod:`opweave.compile.aliasing`)."""

from opweave.compile.aliasing import view_chain
from opweave.compile.executor import Function
from opweave.compile.maker import FunctionMaker, UnusedInputError

__all__ = ["Function", "FunctionMaker", "UnusedInputError", "view_chain"]
