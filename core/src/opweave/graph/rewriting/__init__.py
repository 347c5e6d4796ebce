"""Graph rewriting: node and graph rewriters, merging, and the rewrite database.

Write a local rewrite with :func:`node_rewriter` (or :class:`PatternNodeRewriter`),
run it over a graph with :func:`in2out`, :func:`out2in` or
:class:`EquilibriumGraphRewriter`, and publish it to compilations by registering it
into the database a plugin receives through the ``opweave_rewrites(db)`` hook (see
:mod:`opweave.graph.rewriting.db` for the standard phases).
"""

from opweave.graph.rewriting.basic import (
    EquilibriumGraphRewriter,
    EquilibriumLimitError,
    EquilibriumLimitWarning,
    FromFunctionGraphRewriter,
    FromFunctionNodeRewriter,
    GraphRewriter,
    MergeOptimizer,
    NodeRewriter,
    OpKeyGraphRewriter,
    PatternNodeRewriter,
    SequentialGraphRewriter,
    SequentialNodeRewriter,
    WalkingGraphRewriter,
    apply_node_rewrite,
    copy_stack_trace,
    dfs_rewriter,
    graph_rewriter,
    in2out,
    inplace_graph_rewriter,
    node_rewriter,
    out2in,
    walking_rewriter,
)
from opweave.graph.rewriting.db import (
    EquilibriumDB,
    RewriteDatabase,
    RewriteDatabaseQuery,
    build_rewrite_database,
)

__all__ = [
    "EquilibriumDB",
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
    "RewriteDatabase",
    "RewriteDatabaseQuery",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "build_rewrite_database",
    "copy_stack_trace",
    "dfs_rewriter",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "node_rewriter",
    "out2in",
    "walking_rewriter",
]
