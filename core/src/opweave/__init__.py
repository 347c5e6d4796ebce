"""opweave: an optimizing compiler for symbolic array expressions, built from plugins.

Build graphs from :class:`~opweave.graph.basic.Variable` and
:class:`~opweave.graph.op.Op` objects, compile them with :func:`function`, and
run them through a linker that an installed backend provides.

The package exports the names ``pytensor`` exports that opweave has: ``config``,
``function``, ``function_dump``, ``FunctionMaker``, ``shared``, ``In``, ``Out``, ``Mode``,
``get_mode``, ``predefined_modes``, ``predefined_optimizers``, ``grad``, ``pullback``,
``pushforward``, ``Lop``, ``Rop``, ``OpFromGraph``,
``dprint``, ``pprint``, ``Variable``, ``clone_replace``, ``graph_replace``, ``ifelse``,
``get_scalar_constant_value``, ``as_symbolic`` and ``_as_symbolic`` (its dispatcher),
``map`` (:func:`opweave.scan.map`), ``wrap_py`` and ``as_op``, ``OrderedUpdates`` and
the modules ``raise_op``, ``sparse`` and ``updates``, and the subpackages ``tensor``,
``scalar``, ``printing``, ``scan`` (callable: ``opweave.scan(fn, ...)`` as
``pytensor.scan``),
``gradient``, ``graph`` and ``compile``.
"""

# ``_wiring`` gives the floors below the names PyTensor finds there that higher floors define
# (``opweave.compile.Shape``, ``opweave.gradient.jacobian`` ...), ``_variable_eval`` gives
# every Variable its ``eval`` method: see those modules.
from opweave import (  # noqa: F401 - _variable_eval and _wiring are imported for what they bind
    _variable_eval,
    _wiring,
    compile,
    gradient,
    graph,
    printing,
    raise_op,
    scalar,
    scan,
    sparse,
    tensor,
    updates,
)
from opweave.compile import (
    FunctionMaker,
    In,
    Mode,
    OpFromGraph,
    Out,
    SharedVariable,
    as_op,
    function,
    function_dump,
    get_mode,
    gradient_ops,  # noqa: F401 - their Op classes are core Ops
    predefined_modes,
    predefined_optimizers,
    wrap_py,
)

# PyTensor's top-level ``shared``: type-dispatched (tensor shared variables for arrays and
# numbers, a generic SharedVariable for any other value).
from opweave.compile.shared_dispatch import shared
from opweave.configdefaults import config  # the process-wide flags (opweave.configdefaults)
from opweave.gradient import Lop, Rop, grad, pullback, pushforward
from opweave.graph.basic import Variable
from opweave.graph.replace import clone_replace, graph_replace
from opweave.graph.symbolic import _as_symbolic, as_symbolic
from opweave.ifelse import ifelse
from opweave.plugins import get_plugin_manager
from opweave.printing import debugprint, dprint, pprint
from opweave.scan.views import map
from opweave.tensor.basic import get_scalar_constant_value
from opweave.transfer import register_transfer, transfer
from opweave.updates import OrderedUpdates

__version__ = "0.1.0"

__all__ = [
    "FunctionMaker",
    "In",
    "Lop",
    "Mode",
    "OpFromGraph",
    "OrderedUpdates",
    "Out",
    "Rop",
    "SharedVariable",
    "Variable",
    "_as_symbolic",
    "as_op",
    "as_symbolic",
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
    "map",
    "pprint",
    "predefined_modes",
    "predefined_optimizers",
    "printing",
    "pullback",
    "pushforward",
    "raise_op",
    "register_transfer",
    "scalar",
    "scan",
    "shared",
    "sparse",
    "tensor",
    "transfer",
    "updates",
    "wrap_py",
]
