"""``opweave.compile.debugmode``: re-exports of :mod:`opweave.compile.debug.debugmode`,
where DebugMode lives (as in PyTensor's ``pytensor.compile.debug.debugmode``)."""

from opweave.compile.debug.debugmode import *  # noqa: F403 - the re-exports
from opweave.compile.debug.debugmode import __all__ as __all__
