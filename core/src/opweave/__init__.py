"""opweave: an optimizing compiler for symbolic array expressions, built from plugins.

Build graphs from :class:`~opweave.graph.basic.Variable` and
:class:`~opweave.graph.op.Op` objects, compile them with :func:`function`, and
run them through a linker that an installed backend provides.
"""

from opweave.compile import In, Mode, Out, SharedVariable, function, get_mode
from opweave.configdefaults import config  # the process-wide flags (opweave.configdefaults)
from opweave.gradient import grad
from opweave.plugins import get_plugin_manager
from opweave.printing import debugprint, dprint, pprint
from opweave.tensor.sharedvar import shared
from opweave.transfer import register_transfer, transfer

__version__ = "0.1.0"

__all__ = [
    "In",
    "Mode",
    "Out",
    "SharedVariable",
    "config",
    "debugprint",
    "dprint",
    "function",
    "get_mode",
    "get_plugin_manager",
    "grad",
    "pprint",
    "register_transfer",
    "shared",
    "transfer",
]
