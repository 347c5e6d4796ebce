"""Debugging compiled functions: :mod:`DebugMode <opweave.compile.debug.debugmode>` and
:func:`~opweave.compile.debug.dump.function_dump` (PyTensor's ``pytensor.compile.debug``)."""

from opweave.compile.debug import debugmode, dump
from opweave.compile.debug.debugmode import (
    ALL_PREALLOC_MODES,
    DEFAULT_PREALLOC_MODES,
    DEFAULT_STABILITY_PATIENCE,
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugLinker,
    DebugMode,
    DebugModeError,
    DebugModeWarning,
    DebugSettings,
    InvalidValueError,
    NodeChecker,
    Replacement,
    ReplacementTracker,
    StochasticOrder,
)
from opweave.compile.debug.dump import StripPickler, function_dump

__all__ = [
    "ALL_PREALLOC_MODES",
    "DEFAULT_PREALLOC_MODES",
    "DEFAULT_STABILITY_PATIENCE",
    "BadDestroyMap",
    "BadOptimization",
    "BadThunkOutput",
    "BadViewMap",
    "DebugLinker",
    "DebugMode",
    "DebugModeError",
    "DebugModeWarning",
    "DebugSettings",
    "InvalidValueError",
    "NodeChecker",
    "Replacement",
    "ReplacementTracker",
    "StochasticOrder",
    "StripPickler",
    "debugmode",
    "dump",
    "function_dump",
]
