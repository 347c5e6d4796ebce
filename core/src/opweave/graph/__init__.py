"""Graph structures: the seeds' ``gof`` package (``from opweave import graph as gof``)."""

from opweave.graph.basic import (
    Apply,
    Constant,
    Node,
    Variable,
    ancestors,
    applys_between,
    clone,
    clone_get_equiv,
    clone_replace,
    equal_computations,
    graph_inputs,
    io_toposort,
    vars_between,
)
from opweave.graph.c_interface import CLinkerObject, CLinkerOp, CLinkerType
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.type import (
    DisconnectedType,
    Generic,
    NullType,
    PureType,
    SingletonType,
    Type,
    generic,
)
from opweave.graph.utils import InconsistencyError, MethodNotDefined, MissingInputError

__all__ = [
    "Apply",
    "CLinkerObject",
    "CLinkerOp",
    "CLinkerType",
    "Constant",
    "DisconnectedType",
    "FunctionGraph",
    "Generic",
    "InconsistencyError",
    "MethodNotDefined",
    "MissingInputError",
    "Node",
    "NullType",
    "Op",
    "PureType",
    "SingletonType",
    "Type",
    "Variable",
    "ancestors",
    "applys_between",
    "clone",
    "clone_get_equiv",
    "clone_replace",
    "equal_computations",
    "generic",
    "graph_inputs",
    "io_toposort",
    "vars_between",
]
