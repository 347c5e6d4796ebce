"""Debugging compiled functions: :mod:`DebugMode <opweave.compile.debug.debugmode>` and
:func:`~opweave.compile.debug.dump.function_dump` (PyTensor's ``pytensor.compile.debug``)."""

from opweave.compile.debug import debugmode, dump
from opweave.compile.debug.debugmode import *  # noqa: F403 - DebugMode and its errors
from opweave.compile.debug.dump import StripPickler, function_dump

__all__ = [*debugmode.__all__, "StripPickler", "debugmode", "dump", "function_dump"]
