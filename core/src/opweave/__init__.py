"""opweave: an optimizing compiler for symbolic array expressions, built from plugins.

Build graphs from :class:`~opweave.graph.basic.Variable` and
:class:`~opweave.graph.op.Op` objects, compile them with :func:`function`, and
run them through a linker that an installed backend provides.
"""

#: The process-wide configuration (see :mod:`opweave.configdefaults` for the flags).
from opweave.configdefaults import config

from opweave.compile import In, Mode, Out, SharedVariable, function, get_mode  # noqa: E402
from opweave.gradient import grad  # noqa: E402
from opweave.plugins import get_plugin_manager  # noqa: E402
from opweave.printing import debugprint, dprint, pprint  # noqa: E402
from opweave.tensor.sharedvar import shared  # noqa: E402
from opweave.transfer import register_transfer, transfer  # noqa: E402

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
