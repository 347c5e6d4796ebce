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
    FromFunctionGraphRewriter,
    GraphRewriter,
    OpKeyGraphRewriter,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    apply_node_rewrite,
    dfs_rewriter,
    graph_rewriter,
    in2out,
    inplace_graph_rewriter,
    out2in,
    walking_rewriter,
)
from opweave.graph.rewriting.merge import MergeOptimizer
from opweave.graph.rewriting.node import (
    FromFunctionNodeRewriter,
    NodeRewriter,
    SequentialNodeRewriter,
    copy_stack_trace,
    node_rewriter,
    op_matches,
)
from opweave.graph.rewriting.pattern import PatternNodeRewriter

__all__ = [
    "EquilibriumGraphRewriter",
    "EquilibriumLimitError",
    "EquilibriumLimitWarning",
    "FromFunctionGraphRewriter",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "MergeOptimizer",
    "NodeRewriter",
    "OpKeyGraphRewriter",
    "PatternNodeRewriter",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "copy_stack_trace",
    "dfs_rewriter",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "node_rewriter",
    "op_matches",
    "out2in",
    "walking_rewriter",
]
