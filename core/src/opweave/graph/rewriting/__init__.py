"""Graph rewriting: node and graph rewriters, merging, and the rewrite database.

Write a local rewrite with :func:`node_rewriter` (or :class:`PatternNodeRewriter`),
run it over a graph with :func:`in2out`, :func:`out2in` or
:class:`EquilibriumGraphRewriter` (or the standard rewrites with :func:`rewrite_graph`),
and publish it to compilations by registering it
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
    RewriteFailureWarning,
    SequentialGraphRewriter,
    SequentialNodeRewriter,
    WalkingGraphRewriter,
    apply_node_rewrite,
    check_stack_trace,
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
    LocalGroupDB,
    ProxyDB,
    RewriteDatabase,
    RewriteDatabaseQuery,
    SequenceDB,
    TopoDB,
    build_rewrite_database,
)
from opweave.graph.rewriting.utils import rewrite_graph

__all__ = [
    "EquilibriumDB",
    "EquilibriumGraphRewriter",
    "EquilibriumLimitError",
    "EquilibriumLimitWarning",
    "FromFunctionGraphRewriter",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "LocalGroupDB",
    "MergeOptimizer",
    "NodeRewriter",
    "OpKeyGraphRewriter",
    "PatternNodeRewriter",
    "ProxyDB",
    "RewriteDatabase",
    "RewriteDatabaseQuery",
    "RewriteFailureWarning",
    "SequenceDB",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "TopoDB",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "build_rewrite_database",
    "check_stack_trace",
    "copy_stack_trace",
    "dfs_rewriter",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "node_rewriter",
    "out2in",
    "rewrite_graph",
    "walking_rewriter",
]
