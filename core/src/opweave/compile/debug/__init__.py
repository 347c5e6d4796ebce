"""Debugging compiled functions: :mod:`DebugMode <opweave.compile.debug.debugmode>`,
:func:`~opweave.compile.debug.dump.function_dump` and
:class:`~opweave.compile.debug.monitormode.MonitorMode` (PyTensor's ``pytensor.compile.debug``).
"""

from opweave.compile.debug import debugmode, dump, monitormode
from opweave.compile.debug.debugmode import *  # noqa: F403 - DebugMode and its errors
from opweave.compile.debug.dump import StripPickler, function_dump
from opweave.compile.debug.monitormode import MonitorMode, detect_nan

__all__ = [
    *debugmode.__all__,
    "MonitorMode",
    "StripPickler",
    "debugmode",
    "detect_nan",
    "dump",
    "function_dump",
    "monitormode",
]
