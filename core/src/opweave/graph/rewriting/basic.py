"""The rewrite framework's building blocks, gathered in one module (PyTensor's layout).

The definitions live in small modules: :mod:`~opweave.graph.rewriting.node` (node
rewriters), :mod:`~opweave.graph.rewriting.pattern` (pattern rewrites),
:mod:`~opweave.graph.rewriting.graph` (graph rewriters) and
:mod:`~opweave.graph.rewriting.merge` (merging duplicates) and
:mod:`~opweave.graph.rewriting.tools` (substitution, trackers, features, helpers).
``get_active_mode`` asks the compiler for a mode: it is defined in
:mod:`opweave.compile.mode`, above graphs, and ``import opweave`` gives it here.
"""

from typing import TYPE_CHECKING

from opweave.graph.rewriting.graph import (
    EquilibriumGraphRewriter,
    EquilibriumLimitError,
    EquilibriumLimitWarning,
    FailureCallbackType,
    FromFunctionGraphRewriter,
    GraphRewriter,
    NodeProcessingGraphRewriter,
    OpKeyGraphRewriter,
    RewriteFailureWarning,
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
    OpPattern,
    Rewriter,
    SequentialNodeRewriter,
    check_stack_trace,
    copy_stack_trace,
    node_rewriter,
    op_matches,
)
from opweave.graph.rewriting.pattern import PatternNodeRewriter
from opweave.graph.rewriting.tools import (
    ChangeTracker,
    CheckStackTraceFeature,
    CheckStackTraceRewriter,
    DispatchingFeature,
    MergeFeature,
    OpToRewriterTracker,
    RemoveKeyType,
    SubstitutionNodeRewriter,
    TransformOutputType,
    merge_dict,
    pre_constant_merge,
    pre_greedy_node_rewriter,
)

if TYPE_CHECKING:
    from opweave.compile.mode import get_active_mode

__all__ = [
    "ChangeTracker",
    "CheckStackTraceFeature",
    "CheckStackTraceRewriter",
    "DispatchingFeature",
    "EquilibriumGraphRewriter",
    "EquilibriumLimitError",
    "EquilibriumLimitWarning",
    "FailureCallbackType",
    "FromFunctionGraphRewriter",
    "FromFunctionNodeRewriter",
    "GraphRewriter",
    "MergeFeature",
    "MergeOptimizer",
    "NodeProcessingGraphRewriter",
    "NodeRewriter",
    "OpKeyGraphRewriter",
    "OpPattern",
    "OpToRewriterTracker",
    "PatternNodeRewriter",
    "RemoveKeyType",
    "RewriteFailureWarning",
    "Rewriter",
    "SequentialGraphRewriter",
    "SequentialNodeRewriter",
    "SubstitutionNodeRewriter",
    "TransformOutputType",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "check_stack_trace",
    "copy_stack_trace",
    "dfs_rewriter",
    "get_active_mode",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "merge_dict",
    "node_rewriter",
    "op_matches",
    "out2in",
    "pre_constant_merge",
    "pre_greedy_node_rewriter",
    "walking_rewriter",
]
