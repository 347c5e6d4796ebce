"""The rewrite framework's building blocks, gathered in one module (PyTensor's layout).

The definitions live in small modules: :mod:`~opweave.graph.rewriting.node` (node
rewriters), :mod:`~opweave.graph.rewriting.pattern` (pattern rewrites),
:mod:`~opweave.graph.rewriting.graph` (graph rewriters) and
:mod:`~opweave.graph.rewriting.merge` (merging duplicates).
"""

from opweave.graph.rewriting.graph import (
    EquilibriumGraphRewriter,
    EquilibriumLimitError,
    EquilibriumLimitWarning,
    GraphRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    apply_node_rewrite,
    in2out,
    out2in,
)
from opweave.graph.rewriting.merge import MergeOptimizer
from opweave.graph.rewriting.node import (
    FromFunctionNodeRewriter,
    NodeRewriter,
    SequentialNodeRewriter,
    node_rewriter,
    op_matches,
)
from opweave.graph.rewriting.pattern import PatternNodeRewriter

__all__ = [
    "EquilibriumGraphRewriter",
    "EquilibriumLimitError",
    "EquilibriumLimitWarning",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "MergeOptimizer",
    "NodeRewriter",
    "PatternNodeRewriter",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "in2out",
    "node_rewriter",
    "op_matches",
    "out2in",
]
