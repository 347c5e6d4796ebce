"""``opweave.compile.function``: re-exports of :mod:`opweave.compile.maker` (where
``function`` lives, as in PyTensor) and :func:`~opweave.compile.debug.dump.function_dump`."""

from opweave.compile.debug.dump import function_dump
from opweave.compile.maker import UnusedInputError, function

__all__ = ["UnusedInputError", "function", "function_dump"]
