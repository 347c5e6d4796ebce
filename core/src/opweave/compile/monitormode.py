"""``MonitorMode`` under the module path of earlier PyTensor versions
(``pytensor.compile.monitormode``); defined in :mod:`opweave.compile.debug.monitormode`."""

from opweave.compile.debug.monitormode import MonitorMode, detect_nan

__all__ = ["MonitorMode", "detect_nan"]
