"""DebugMode: compile functions that check every Op implementation and every rewrite.

Usage::

    from opweave.compile.debug.debugmode import DebugMode, BadThunkOutput

    f = opweave.function([x, y], out, mode=DebugMode())   # or mode="DebugMode"
    f(1.0, 2.0)   # raises a DebugModeError subclass if something is wrong

See :class:`DebugMode` for what is checked.
"""

from opweave.compile.debug.debugmode.checks import ALL_PREALLOC_MODES, DEFAULT_PREALLOC_MODES
from opweave.compile.debug.debugmode.errors import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugModeError,
    DebugModeWarning,
    InvalidValueError,
    StochasticOrder,
    str_diagnostic,
)
from opweave.compile.debug.debugmode.linker import DebugLinker, DebugSettings, NodeChecker
from opweave.compile.debug.debugmode.mode import DEFAULT_STABILITY_PATIENCE, DebugMode
from opweave.compile.debug.debugmode.tracker import Replacement, ReplacementTracker

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
    "str_diagnostic",
]
