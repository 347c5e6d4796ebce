"""opweave: an optimizing compiler for symbolic array expressions, built from plugins.

Build graphs from :class:`~opweave.graph.basic.Variable` and
:class:`~opweave.graph.op.Op` objects, compile them with :func:`function`, and
run them through a linker that an installed backend provides.

The package exports the names ``pytensor`` exports that opweave has: ``config``,
``function``, ``function_dump``, ``FunctionMaker``, ``shared``, ``In``, ``Out``, ``Mode``,
``get_mode``, ``predefined_modes``, ``predefined_optimizers``, ``grad``, ``pullback``,
``pushforward``, ``Lop``, ``Rop``, ``OpFromGraph``,
``dprint``, ``pprint``, ``Variable``, ``clone_replace``, ``graph_replace``, ``ifelse``,
``get_scalar_constant_value`` and the subpackages ``tensor``, ``scalar``, ``printing``,
``scan`` (callable: ``opweave.scan(fn, ...)`` as ``pytensor.scan``),
``gradient``, ``graph`` and ``compile``.
"""

from opweave import compile, gradient, graph, printing, scalar, scan, tensor
from opweave.compile import (
    FunctionMaker,
    In,
    Mode,
    OpFromGraph,
    Out,
    SharedVariable,
    function,
    function_dump,
    get_mode,
    predefined_modes,
    predefined_optimizers,
)
from opweave.configdefaults import config  # the process-wide flags (opweave.configdefaults)
from opweave.gradient import Lop, Rop, grad, pullback, pushforward
from opweave.graph.basic import Variable
from opweave.graph.replace import clone_replace, graph_replace
from opweave.ifelse import ifelse
from opweave.plugins import get_plugin_manager
from opweave.printing import debugprint, dprint, pprint
from opweave.tensor.basic import get_scalar_constant_value
from opweave.tensor.sharedvar import shared
from opweave.transfer import register_transfer, transfer

__version__ = "0.1.0"

__all__ = [
    "FunctionMaker",
    "In",
    "Lop",
    "Mode",
    "OpFromGraph",
    "Out",
    "Rop",
    "SharedVariable",
    "Variable",
    "clone_replace",
    "compile",
    "config",
    "debugprint",
    "dprint",
    "function",
    "function_dump",
    "get_mode",
    "get_plugin_manager",
    "get_scalar_constant_value",
    "grad",
    "gradient",
    "graph",
    "graph_replace",
    "ifelse",
    "pprint",
    "predefined_modes",
    "predefined_optimizers",
    "printing",
    "pullback",
    "pushforward",
    "register_transfer",
    "scalar",
    "scan",
    "shared",
    "tensor",
    "transfer",
]
