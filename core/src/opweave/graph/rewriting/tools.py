"""Smaller pieces of the rewrite framework, under PyTensor's names.

* :class:`SubstitutionNodeRewriter`: replaces one Op by another taking the same inputs;
* :class:`OpToRewriterTracker`: node rewriters indexed by the Ops they track;
* features: :class:`ChangeTracker`, :class:`MergeFeature`, :class:`DispatchingFeature`,
  :class:`CheckStackTraceFeature` (and :class:`CheckStackTraceRewriter`, which attaches it);
* functions: :func:`pre_constant_merge`, :func:`pre_greedy_node_rewriter`,
  :func:`merge_dict`, and :func:`get_active_mode`, which asks the compiler for a mode: it
  is defined in :mod:`opweave.compile.mode` (the compiler builds on graphs), and
  ``import opweave`` gives it here under PyTensor's name.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.features import AlreadyThere, Feature
from opweave.graph.features import ChangeTracker as _CountingChangeTracker
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.graph.rewriting.node import NodeRewriter, OpPattern, check_stack_trace
from opweave.graph.trace import traces_of

if TYPE_CHECKING:
    from opweave.compile.mode import get_active_mode
    from opweave.graph.fg import FunctionGraph

__all__ = [
    "ChangeTracker",
    "CheckStackTraceFeature",
    "CheckStackTraceRewriter",
    "DispatchingFeature",
    "MergeFeature",
    "OpToRewriterTracker",
    "RemoveKeyType",
    "SubstitutionNodeRewriter",
    "TransformOutputType",
    "get_active_mode",
    "merge_dict",
    "pre_constant_merge",
    "pre_greedy_node_rewriter",
]

#: The key of a transform's dict result listing the variables that must leave the graph.
RemoveKeyType = Literal["remove"]
#: What a node rewriter's ``transform`` returns.
TransformOutputType = (
    bool | Sequence[Variable] | dict[Variable | Literal["remove"], Variable | Sequence[Variable]]
)


class SubstitutionNodeRewriter(NodeRewriter):
    """Replaces the nodes of ``op1`` by nodes of ``op2`` on the same inputs.

    Parameters
    ----------
    op1, op2
        Ops taking the same inputs and giving as many outputs.
    transfer_tags
        Copy the node's and its outputs' tags onto the replacement.
    """

    reentrant = False

    def __init__(self, op1: Any, op2: Any, transfer_tags: bool = True) -> None:
        self.op1 = op1
        self.op2 = op2
        self.transfer_tags = transfer_tags

    def tracks(self) -> list[Any]:
        """``[op1]``."""
        return [self.op1]

    def transform(self, fgraph: FunctionGraph, node: Apply, enforce_tracks: bool = True) -> Any:
        """The outputs of ``op2`` applied to ``node``'s inputs (``False`` for another Op)."""
        if enforce_tracks and node.op != self.op1:
            return False
        repl = self.op2.make_node(*node.inputs)
        if self.transfer_tags:
            repl.tag = copy.copy(node.tag)
            for old, new in zip(node.outputs, repl.outputs, strict=True):
                new.tag = copy.copy(old.tag)
        return repl.outputs

    def __str__(self) -> str:
        return f"{self.op1} -> {self.op2}"


class OpToRewriterTracker:
    """Node rewriters indexed by what they track: Op instances, Op classes (their
    subclasses match too), :class:`~opweave.graph.rewriting.node.OpPattern` s, or
    nothing (every Op)."""

    def __init__(self) -> None:
        self.tracked_instances: dict[Any, list[NodeRewriter]] = {}
        self.tracked_types: dict[type, list[NodeRewriter]] = {}
        self.tracked_patterns: list[tuple[OpPattern, NodeRewriter]] = []
        self.untracked_rewrites: list[NodeRewriter] = []

    def add_tracker(self, rw: NodeRewriter) -> None:
        """Index ``rw`` by its ``tracks()``."""
        tracks = rw.tracks()
        if tracks is None:
            self.untracked_rewrites.append(rw)
            return
        for track in tracks:
            if isinstance(track, OpPattern):
                self.tracked_patterns.append((track, rw))
            elif isinstance(track, type):
                self.tracked_types.setdefault(track, []).append(rw)
            else:
                self.tracked_instances.setdefault(track, []).append(rw)

    def get_trackers(self, op: Any) -> list[NodeRewriter]:
        """The rewriters that apply to ``op``: by class (most derived first), by
        pattern, by instance, then the untracked ones."""
        found: list[NodeRewriter] = []
        for cls in type(op).__mro__:
            found.extend(self.tracked_types.get(cls, ()))
        found.extend(rw for pattern, rw in self.tracked_patterns if pattern.matches(op))
        try:
            found.extend(self.tracked_instances.get(op, ()))
        except TypeError:
            pass
        found.extend(self.untracked_rewrites)
        return found

    def get_rewriters(self) -> list[NodeRewriter]:
        """Every rewriter added (one entry per track)."""
        return [
            *(rw for rws in self.tracked_types.values() for rw in rws),
            *(rw for rws in self.tracked_instances.values() for rw in rws),
            *(rw for _, rw in self.tracked_patterns),
            *self.untracked_rewrites,
        ]


class ChangeTracker(_CountingChangeTracker):
    """Records whether the graph changed since the last :meth:`reset`.

    Attributes
    ----------
    changed
        True after a node import or an input change.
    nb_imported
        Number of nodes imported.
    """

    def __init__(self) -> None:
        super().__init__()
        self.changed = False
        self.nb_imported = 0

    def clone(self) -> ChangeTracker:
        """A fresh tracker."""
        return type(self)()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Become ``fgraph.change_tracker`` (one per graph)."""
        if hasattr(fgraph, "change_tracker"):
            raise AlreadyThere("the graph already has a change_tracker")
        fgraph.change_tracker = self  # type: ignore[attr-defined]

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove ``fgraph.change_tracker``."""
        if getattr(fgraph, "change_tracker", None) is self:
            del fgraph.change_tracker  # type: ignore[attr-defined]

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Record an import."""
        super().on_import(fgraph, node, reason)
        self.nb_imported += 1
        self.changed = True

    def on_change_input(self, fgraph: FunctionGraph, *args: Any, **kwargs: Any) -> None:
        """Record an input change."""
        super().on_change_input(fgraph, *args, **kwargs)
        self.changed = True

    def reset(self) -> None:
        """Set :attr:`changed` back to False."""
        self.changed = False


def _merge_key(node: Apply) -> tuple[Any, ...] | None:
    try:
        key = (node.op, *(id(i) for i in node.inputs))
        hash(key)
    except TypeError:
        return None
    return key


class MergeFeature(Feature):
    """Keeps, for a graph, its distinct nodes and the duplicates imported since.

    Attached, it sets ``fgraph.merge_feature``. A node imported with the same Op and the
    very same inputs as a node already seen is scheduled as a merge candidate: the pair
    ``(node, earlier node)`` is appended to :attr:`scheduled`.

    Attributes
    ----------
    nodes_seen
        The distinct nodes of the graph.
    noinput_nodes
        The nodes without inputs, in import order.
    seen_atomics
        The constants seen as inputs.
    scheduled
        ``(duplicate node, node to merge it into)`` pairs.
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Become ``fgraph.merge_feature`` and index the graph's nodes."""
        if hasattr(fgraph, "merge_feature"):
            raise AlreadyThere("the graph already has a merge_feature")
        fgraph.merge_feature = self  # type: ignore[attr-defined]
        self.nodes_seen: set[Apply] = set()
        self.noinput_nodes: list[Apply] = []
        self.seen_atomics: set[Variable] = set()
        self.scheduled: list[tuple[Apply, Apply]] = []
        self._by_key: dict[tuple[Any, ...], Apply] = {}
        for node in fgraph.toposort():
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove ``fgraph.merge_feature``."""
        if getattr(fgraph, "merge_feature", None) is self:
            del fgraph.merge_feature  # type: ignore[attr-defined]

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Index ``node``, scheduling it when it duplicates a node seen."""
        if node in self.nodes_seen:
            return
        self.seen_atomics.update(i for i in node.inputs if isinstance(i, Constant))
        key = _merge_key(node)
        other = self._by_key.get(key) if key is not None else None
        if other is not None and other in self.nodes_seen:
            self.scheduled.append((node, other))
        elif key is not None:
            self._by_key[key] = node
        self.nodes_seen.add(node)
        if not node.inputs:
            self.noinput_nodes.append(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Forget ``node``."""
        self.nodes_seen.discard(node)
        if node in self.noinput_nodes:
            self.noinput_nodes.remove(node)
        key = _merge_key(node)
        if key is not None and self._by_key.get(key) is node:
            del self._by_key[key]
        self.scheduled = [(a, b) for a, b in self.scheduled if node is not a and node is not b]


class DispatchingFeature(Feature):
    """A feature made of functions: ``importer(node)``, ``pruner(node)`` and
    ``chin(node, i, old, new, reason)`` (each may be ``None``)."""

    def __init__(
        self,
        importer: Callable[[Apply], Any] | None,
        pruner: Callable[[Apply], Any] | None,
        chin: Callable[..., Any] | None,
        name: str | None = None,
    ) -> None:
        self.importer = importer
        self.pruner = pruner
        self.chin = chin
        self.name = name

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.name}}}"

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Call ``importer``."""
        if self.importer:
            self.importer(node)

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Call ``pruner``."""
        if self.pruner:
            self.pruner(node)

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: Any,
        i: int,
        r: Variable,
        new_r: Variable,
        reason: Any = None,
    ) -> None:
        """Call ``chin``."""
        if self.chin:
            self.chin(node, i, r, new_r, reason)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Drop the functions."""
        self.importer = self.pruner = self.chin = None


class CheckStackTraceFeature(Feature):
    """Checks, on every import, that each output in the graph has a creation trace;
    what a missing trace does follows ``config.check_stack_trace`` (``"off"``,
    ``"log"``/``"warn"``: a placeholder trace naming the rewrite, and for ``"warn"`` a
    warning; ``"raise"``: an ``AssertionError``)."""

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Check the traces."""
        mode = getattr(config, "check_stack_trace", "off")
        if mode == "off" or check_stack_trace(fgraph, "all", bug_print="ignore"):
            return
        msg = f"Empty stack trace. The rewrite that inserted this variable is {reason}."
        if mode == "raise":
            raise AssertionError(msg)
        for other in fgraph.apply_nodes:
            for out in other.outputs:
                if not traces_of(out):
                    out.tag.trace = [[("", 0, msg, "")]]
        if mode == "warn":
            warnings.warn(msg, stacklevel=2)


class CheckStackTraceRewriter(GraphRewriter):
    """A graph rewriter whose only effect is to attach a :class:`CheckStackTraceFeature`."""

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the feature (once)."""
        if not any(isinstance(f, CheckStackTraceFeature) for f in fgraph._features):
            fgraph.attach_feature(CheckStackTraceFeature())

    def apply(self, fgraph: FunctionGraph) -> None:
        """Nothing."""


def merge_dict(d1: dict[Any, Any], d2: dict[Any, Any]) -> dict[Any, Any]:
    """A new dict with the keys of both; values of keys in both are added."""
    merged = dict(d1)
    for key, value in d2.items():
        merged[key] = merged[key] + value if key in merged else value
    return merged


def pre_constant_merge(
    fgraph: FunctionGraph, variables: Variable | Sequence[Variable]
) -> list[Any]:
    """Merge equal constants in the graphs of ``variables``, in place, outside ``fgraph``.

    Nodes of ``fgraph`` are not touched (nor looked through); elsewhere, each input that
    is a constant equal (same signature) to one met before is replaced by that one.

    Returns
    -------
    list
        ``variables``, with equal constants among them merged.
    """
    if isinstance(variables, Variable):
        variables = [variables]
    seen: set[int] = set()
    by_signature: dict[Any, Constant] = {}

    def merged(var: Any) -> Any:
        if not isinstance(var, Variable) or id(var) in seen:
            return var
        if var.owner is not None and var.owner in fgraph.apply_nodes:
            return var
        seen.add(id(var))
        if isinstance(var, Constant):
            try:
                return by_signature.setdefault(var.signature(), var)
            except TypeError:
                return var
        if var.owner is not None:
            inputs = var.owner.inputs
            for i, inp in enumerate(inputs):
                inputs[i] = merged(inp)
        return var

    return [merged(v) for v in variables]


def pre_greedy_node_rewriter(
    fgraph: FunctionGraph, rewrites: Sequence[NodeRewriter], out: Variable
) -> Variable:
    """Apply ``rewrites`` greedily to the graph of ``out`` outside ``fgraph``, inputs
    first; return the rewritten ``out``.

    Each node not in ``fgraph`` gets its (rewritten) inputs, then each rewriter in turn;
    a replacement is kept and the next rewriters see the node computing it. Nodes are
    changed in place, as in PyTensor; one pass, no equilibrium.
    """
    done: dict[Variable, Variable] = {}

    def visit(var: Variable) -> list[Variable]:
        node = var.owner
        if node is None:
            return [var]
        if node in fgraph.apply_nodes:
            return list(node.outputs)
        for i, inp in enumerate(node.inputs):
            if inp not in done:
                if inp.owner is not None:
                    results = visit(inp)
                    for old, new in zip(inp.owner.outputs, results, strict=True):
                        done[old] = new
                else:
                    done[inp] = inp
            node.inputs[i] = done[inp]
        results = list(node.outputs)
        for rewrite in rewrites:
            current = results[0].owner if results and results[0].owner is not None else None
            if current is None or len(current.outputs) != len(node.outputs):
                break
            ret = rewrite.transform(fgraph, current)
            if ret is False or ret is None:
                continue
            if isinstance(ret, dict | bool) or len(ret) != len(node.outputs):
                raise ValueError(
                    f"pre_greedy_node_rewriter: {rewrite} must return one replacement per "
                    f"output of {current}"
                )
            # ``None`` keeps that output (the transform contract).
            results = [
                old if new is None else new for old, new in zip(node.outputs, ret, strict=True)
            ]
            for old, new in zip(node.outputs, results, strict=True):
                done[old] = new
        return results

    index = out.owner.outputs.index(out) if out.owner is not None else 0
    return visit(out)[index]
