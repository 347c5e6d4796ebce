"""Graph structures: Types, Variables, Apply nodes, Ops and FunctionGraphs.

The layout follows PyTensor's: :mod:`~opweave.graph.basic` (graph objects, cloning),
:mod:`~opweave.graph.traversal` (walking graphs), :mod:`~opweave.graph.replace`
(replacing and vectorizing), :mod:`~opweave.graph.fg` (``FunctionGraph`` and
``FrozenFunctionGraph``), :mod:`~opweave.graph.rewriting` (rewrites;
:func:`rewrite_graph` and :func:`node_rewriter` are re-exported here). The package is
also the old ``gof`` (``from opweave import graph as gof``).
"""

from opweave.graph.basic import (
    AbstractApply,
    Apply,
    Constant,
    FrozenApply,
    Node,
    NominalVariable,
    Variable,
    clone,
    clone_get_equiv,
    equal_computations,
)
from opweave.graph.c_interface import CLinkerObject, CLinkerOp, CLinkerType
from opweave.graph.fg import FrozenFunctionGraph, FunctionGraph
from opweave.graph.op import Op
from opweave.graph.replace import clone_replace, graph_replace, vectorize_graph
from opweave.graph.rewriting.db import RewriteDatabaseQuery
from opweave.graph.rewriting.graph import graph_rewriter
from opweave.graph.rewriting.node import node_rewriter
from opweave.graph.rewriting.utils import rewrite_graph
from opweave.graph.traversal import (
    ancestors,
    applys_between,
    explicit_graph_inputs,
    graph_inputs,
    io_toposort,
    toposort,
    vars_between,
)
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
    "AbstractApply",
    "Apply",
    "CLinkerObject",
    "CLinkerOp",
    "CLinkerType",
    "Constant",
    "DisconnectedType",
    "FrozenApply",
    "FrozenFunctionGraph",
    "FunctionGraph",
    "Generic",
    "InconsistencyError",
    "MethodNotDefined",
    "MissingInputError",
    "Node",
    "NominalVariable",
    "NullType",
    "Op",
    "PureType",
    "RewriteDatabaseQuery",
    "SingletonType",
    "Type",
    "Variable",
    "ancestors",
    "applys_between",
    "clone",
    "clone_get_equiv",
    "clone_replace",
    "equal_computations",
    "explicit_graph_inputs",
    "generic",
    "graph_inputs",
    "graph_replace",
    "graph_rewriter",
    "io_toposort",
    "node_rewriter",
    "rewrite_graph",
    "toposort",
    "vars_between",
    "vectorize_graph",
]
