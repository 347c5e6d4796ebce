"""Graph rewriters: rewrites applied to a whole :class:`~opweave.graph.fg.FunctionGraph`.

* :class:`GraphRewriter` is the base: ``rewrite(fgraph)`` attaches the features it
  needs (:meth:`~GraphRewriter.add_requirements`) then runs :meth:`~GraphRewriter.apply`.
* :class:`SequentialGraphRewriter` runs graph rewriters one after the other.
* :class:`WalkingGraphRewriter` (built by :func:`in2out`, :func:`out2in` or
  :func:`dfs_rewriter`) shows every node to node rewriters once, inputs first, outputs
  first, or depth first from the outputs.
* :class:`FromFunctionGraphRewriter` (the :func:`graph_rewriter` decorator) makes a
  graph rewriter of a function; :class:`OpKeyGraphRewriter` shows a node rewriter only
  the nodes of its one Op.
* :class:`EquilibriumGraphRewriter` repeats node and graph rewriters until none
  changes the graph, within a bound.

Every replacement goes through :func:`apply_node_rewrite`, which checks types, copies
names, and replaces through ``fgraph.replace_all_validate`` (a
:class:`~opweave.graph.features.ReplaceValidate` the rewriters attach), so a replacement
that makes the graph invalid is undone and skipped.
"""

from __future__ import annotations

import warnings
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.features import ChangeTracker, DestroyHandler, Feature, ReplaceValidate
from opweave.graph.rewriting.node import (
    NodeRewriter,
    Rewriter,
    SequentialNodeRewriter,
    attach_requirements,
)
from opweave.graph.traversal import apply_ancestors, io_toposort
from opweave.graph.utils import InconsistencyError

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = [
    "EquilibriumGraphRewriter",
    "EquilibriumLimitError",
    "EquilibriumLimitWarning",
    "FailureCallbackType",
    "FromFunctionGraphRewriter",
    "GraphRewriter",
    "NodeProcessingGraphRewriter",
    "OpKeyGraphRewriter",
    "RewriteFailureWarning",
    "SequentialGraphRewriter",
    "WalkingGraphRewriter",
    "apply_node_rewrite",
    "dfs_rewriter",
    "graph_rewriter",
    "in2out",
    "inplace_graph_rewriter",
    "out2in",
    "walking_rewriter",
]

#: The orders a :class:`WalkingGraphRewriter` visits nodes in.
WalkOrder = Literal["in_to_out", "out_to_in", "dfs"]


class EquilibriumLimitError(RuntimeError):
    """An :class:`EquilibriumGraphRewriter` hit its bound before reaching a fixed point."""


class EquilibriumLimitWarning(UserWarning):
    """Warning form of :class:`EquilibriumLimitError`."""


class RewriteFailureWarning(UserWarning):
    """A rewriter run by a :class:`SequentialGraphRewriter` with
    ``failure_callback=SequentialGraphRewriter.warn`` raised; the others still ran."""


# ---------------------------------------------------------------------- applying one rewrite


def _replacement_pairs(
    node: Apply, result: Any, rewriter: NodeRewriter
) -> tuple[list[tuple[Variable, Variable]], list[Apply]]:
    remove: list[Apply] = []
    if isinstance(result, dict):
        result = dict(result)
        remove = list(result.pop("remove", ()))
        pairs = list(result.items())
    elif isinstance(result, (list, tuple)):
        if len(result) != len(node.outputs):
            raise ValueError(
                f"node rewriter {rewriter} returned {len(result)} replacements for {node}, "
                f"which has {len(node.outputs)} outputs"
            )
        pairs = list(zip(node.outputs, result, strict=True))
    else:
        raise TypeError(
            f"node rewriter {rewriter} returned {result!r}; expected False, None, a list of "
            "variables or a dict"
        )
    checked: list[tuple[Variable, Variable]] = []
    for old, new in pairs:
        if new is None or new is old:
            continue
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError(
                f"node rewriter {rewriter} returned a replacement that is not a Variable: "
                f"{old!r} -> {new!r}"
            )
        if new.type != old.type:
            try:
                new = old.type.filter_variable(new)
            except TypeError as exc:
                raise TypeError(
                    f"node rewriter {rewriter} tried to replace {old} (type {old.type}) with "
                    f"{new} of incompatible type {new.type}"
                ) from exc
        checked.append((old, new))
    return checked, remove


def apply_node_rewrite(fgraph: FunctionGraph, node: Apply, rewriter: NodeRewriter) -> bool:
    """Run ``rewriter`` on ``node`` and apply what it returns.

    Replacements are type-checked (converted with ``filter_variable`` when the types
    differ but are compatible), an unnamed new variable takes the name of the variable
    it replaces, and the replacement goes through ``fgraph.replace_all_validate`` when
    the graph has a :class:`~opweave.graph.features.ReplaceValidate`.

    Returns
    -------
    True if the graph was changed; False if the rewriter declined, or its replacement
    was rejected by validation (and undone).

    Raises
    ------
    TypeError
        If the rewriter returned something malformed or of an incompatible type.
    """
    result = rewriter.transform(fgraph, node)
    if result is False or result is None:
        return False
    pairs, remove = _replacement_pairs(node, result, rewriter)
    pairs = [(old, new) for old, new in pairs if old in fgraph.variables]
    if not pairs:
        return False
    for old, new in pairs:
        if (
            new.name is None
            and old.name is not None
            and not isinstance(new, Constant)
            and new not in fgraph.variables
        ):
            new.name = old.name
    reason = str(rewriter)
    if hasattr(fgraph, "replace_all_validate"):
        try:
            if remove:
                fgraph.replace_all_validate_remove(pairs, remove, reason=reason)
            else:
                fgraph.replace_all_validate(pairs, reason=reason)
        except InconsistencyError:
            return False
    else:
        fgraph.replace_all(pairs, reason=reason)
    return True


# ---------------------------------------------------------------------- graph rewriters


class GraphRewriter(Rewriter):
    """Base class of rewriters that work on a whole graph.

    Subclasses define :meth:`apply` and, when they need features, :meth:`add_requirements`.
    """

    def apply(self, fgraph: FunctionGraph) -> Any:
        """Rewrite ``fgraph`` in place."""
        raise NotImplementedError(f"{type(self).__name__}.apply is not defined")

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the features :meth:`apply` needs (default: none)."""

    def rewrite(self, fgraph: FunctionGraph) -> Any:
        """Attach the requirements, then :meth:`apply`; return what ``apply`` returns."""
        self.add_requirements(fgraph)
        return self.apply(fgraph)

    def __call__(self, fgraph: FunctionGraph) -> Any:
        """Same as :meth:`rewrite`."""
        return self.rewrite(fgraph)

    def __str__(self) -> str:
        return getattr(self, "name", None) or type(self).__name__

    def __repr__(self) -> str:
        return str(self)


def _as_graph_rewriter(rewriter: GraphRewriter | NodeRewriter) -> GraphRewriter:
    if isinstance(rewriter, GraphRewriter):
        return rewriter
    if isinstance(rewriter, NodeRewriter):
        return in2out(rewriter)
    raise TypeError(f"expected a GraphRewriter or NodeRewriter, got {rewriter!r}")


#: ``failure_callback(exc, sequence, failed_rewriter, fgraph)`` of a
#: :class:`SequentialGraphRewriter`.
FailureCallback = Callable[
    [Exception, "SequentialGraphRewriter", GraphRewriter, "FunctionGraph"], Any
]


class SequentialGraphRewriter(GraphRewriter):
    """Runs graph rewriters one after the other (node rewriters are wrapped in :func:`in2out`).

    Parameters
    ----------
    rewriters
        The rewriters, in order.
    name
        A display name.
    failure_callback
        ``None`` (the default): an exception raised by a rewriter propagates. Otherwise
        ``failure_callback(exc, self, rewriter, fgraph)`` is called and the next rewriter
        runs (PyTensor's contract); :meth:`warn` is one such callback. The graph stays
        valid: a failing rewriter leaves it as its last completed replacement did.
    """

    def __init__(
        self,
        *rewriters: GraphRewriter | NodeRewriter,
        name: str | None = None,
        failure_callback: FailureCallback | None = None,
    ) -> None:
        self.rewriters = [_as_graph_rewriter(rw) for rw in rewriters]
        self.name = name
        self.failure_callback = failure_callback

    @staticmethod
    def warn(
        exc: Exception,
        sequence: SequentialGraphRewriter,
        rewriter: GraphRewriter,
        fgraph: FunctionGraph,
    ) -> None:
        """A ``failure_callback`` that warns with a :class:`RewriteFailureWarning` naming
        the rewriter and the exception."""
        warnings.warn(
            f"{sequence}: rewriter {rewriter} raised {type(exc).__name__}: {exc}; the "
            "rewriters after it still run",
            RewriteFailureWarning,
            stacklevel=3,
        )

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach every child's requirements."""
        for rw in self.rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph) -> None:
        """Run each child with :meth:`GraphRewriter.rewrite` (see ``failure_callback``)."""
        for rw in self.rewriters:
            if self.failure_callback is None:
                rw.rewrite(fgraph)
                continue
            try:
                rw.rewrite(fgraph)
            except Exception as exc:  # reported through the callback, which may re-raise
                self.failure_callback(exc, self, rw, fgraph)

    def __str__(self) -> str:
        return self.name or "SequentialGraphRewriter(" + ", ".join(map(str, self.rewriters)) + ")"


def _flatten_node_rewriters(
    rewriters: Iterable[NodeRewriter],
) -> list[NodeRewriter]:
    flat: list[NodeRewriter] = []
    for rw in rewriters:
        if isinstance(rw, SequentialNodeRewriter):
            flat.extend(_flatten_node_rewriters(rw.rewriters))
        elif isinstance(rw, NodeRewriter):
            flat.append(rw)
        else:
            raise TypeError(f"expected a NodeRewriter, got {rw!r}")
    return flat


class _NodeQueue(Feature):
    """Feeds nodes imported during a walk to a callback."""

    def __init__(self, on_new: Any) -> None:
        self.on_new = on_new

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        self.on_new(node)


class _RewritersByOp:
    """The node rewriters that may apply to an Op, in their order, found once per Op class
    (and class of the scalar Op it wraps, for rewriters with
    :meth:`~opweave.graph.rewriting.node.NodeRewriter.scalar_tracks`).

    A rewriter tracking every Op, or an Op class the node's Op is an instance of, applies
    to every Op of that class; one tracking Op instances is kept with them, and checked
    against each node's Op (instances match Ops equal to them).
    """

    def __init__(self, rewriters: Sequence[NodeRewriter]) -> None:
        self.rewriters = list(rewriters)
        self._tracks = [rw.tracks() for rw in self.rewriters]
        self._scalar_tracks = [rw.scalar_tracks() for rw in self.rewriters]
        self._by_class: dict[tuple[type, type], list[tuple[NodeRewriter, list[Any] | None]]] = {}

    def candidates(self, op: Any) -> list[tuple[NodeRewriter, list[Any] | None]]:
        """``(rewriter, instances to compare the Op with, or None)`` pairs for ``op``."""
        cls, scalar_cls = type(op), type(getattr(op, "scalar_op", None))
        found = self._by_class.get((cls, scalar_cls))
        if found is None:
            found = []
            for rw, tracks, scalar_tracks in zip(
                self.rewriters, self._tracks, self._scalar_tracks, strict=True
            ):
                if scalar_tracks is not None and not issubclass(scalar_cls, scalar_tracks):
                    continue
                if tracks is None or any(
                    isinstance(t, type) and issubclass(cls, t) for t in tracks
                ):
                    found.append((rw, None))
                    continue
                instances = [t for t in tracks if not isinstance(t, type)]
                if instances:
                    found.append((rw, instances))
            self._by_class[cls, scalar_cls] = found
        return found


def _rewrite_node(fgraph: FunctionGraph, node: Apply, rewriters: _RewritersByOp) -> Any:
    """Try ``rewriters`` on ``node`` in order; return the one that changed it, or None.

    An exception a rewriter raises propagates with a note naming the rewriter and the node
    (``config.on_opt_error`` is ``"raise"``)."""
    op = node.op
    for rw, instances in rewriters.candidates(op):
        if node not in fgraph.apply_nodes:
            return None
        if instances is not None and not any(op == t for t in instances):
            continue
        try:
            changed = apply_node_rewrite(fgraph, node, rw)
        except Exception as exc:  # config.on_opt_error is "raise": say where it came from
            exc.add_note(f"raised by the rewrite {rw} on the node {node}")
            raise
        if changed:
            return rw
    return None


#: PyTensor's node-rewrite failure callback:
#: ``callback(exc, graph_rewriter, replacement_pairs, node_rewriter, node)``.
FailureCallbackType = Callable[
    [Exception, "NodeProcessingGraphRewriter", list[tuple[Variable, Any]], NodeRewriter, Apply],
    None,
]


class NodeProcessingGraphRewriter(GraphRewriter):
    """The base of the graph rewriters that apply node rewriters' results
    (:class:`WalkingGraphRewriter`, :class:`EquilibriumGraphRewriter`).

    Its class methods are failure callbacks of PyTensor's signature
    (:data:`FailureCallbackType`).
    """

    @classmethod
    def warn(cls, exc: Exception, nav: Any, repl_pairs: Any, node_rewriter: Any, node: Any) -> None:
        """Warn with a :class:`RewriteFailureWarning` naming the rewriter, the node and
        the exception; an ``AssertionError`` is raised again."""
        if isinstance(exc, AssertionError):
            raise exc
        warnings.warn(
            f"rewrite {node_rewriter} failed on {node}: {type(exc).__name__}: {exc}",
            RewriteFailureWarning,
            stacklevel=2,
        )

    @classmethod
    def warn_inplace(
        cls, exc: Exception, nav: Any, repl_pairs: Any, node_rewriter: Any, node: Any
    ) -> None:
        """As :meth:`warn`, but silent for an :class:`InconsistencyError` (an in-place
        rewrite the destroy handler refused)."""
        if isinstance(exc, InconsistencyError):
            return
        cls.warn(exc, nav, repl_pairs, node_rewriter, node)

    @classmethod
    def warn_ignore(
        cls, exc: Exception, nav: Any, repl_pairs: Any, node_rewriter: Any, node: Any
    ) -> None:
        """Ignore the failure."""


class WalkingGraphRewriter(NodeProcessingGraphRewriter):
    """Shows each node of the graph to node rewriters, once, in topological order.

    Parameters
    ----------
    node_rewriter
        A node rewriter or a sequence of them; on each node they are tried in order
        until one changes it.
    order
        ``"in_to_out"`` (inputs first, in topological order), ``"out_to_in"`` (the
        reverse) or ``"dfs"`` (from the outputs, depth first: each node before the nodes
        computing its inputs, as PyTensor's ``dfs_rewriter`` walks).
    ignore_newtrees
        If false (the default), nodes created by a rewrite are visited too (after the
        nodes already queued for ``"in_to_out"`` and ``"dfs"``, right away for
        ``"out_to_in"``).
    name
        A display name.
    """

    def __init__(
        self,
        node_rewriter: NodeRewriter | Sequence[NodeRewriter],
        order: WalkOrder = "in_to_out",
        ignore_newtrees: bool = False,
        name: str | None = None,
    ) -> None:
        if order not in ("in_to_out", "out_to_in", "dfs"):
            raise ValueError(f"order must be 'in_to_out', 'out_to_in' or 'dfs', got {order!r}")
        if isinstance(node_rewriter, NodeRewriter):
            node_rewriter = [node_rewriter]
        self.node_rewriters = _flatten_node_rewriters(node_rewriter)
        self.order = order
        self.ignore_newtrees = ignore_newtrees
        self.name = name

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate and the node rewriters' requirements."""
        fgraph.attach_feature(ReplaceValidate())
        for rw in self.node_rewriters:
            rw.add_requirements(fgraph)

    def apply(self, fgraph: FunctionGraph) -> int:
        """Walk the graph once; return the number of rewrites applied."""
        rewriters = _RewritersByOp(self.node_rewriters)
        if not any(rewriters.candidates(node.op) for node in fgraph.apply_nodes):
            return 0  # no node is of a kind the rewriters look at (e.g. no Scan at all)
        if self.order == "dfs":
            queue: deque[Apply] = deque(apply_ancestors(fgraph.outputs))
        else:
            queue = deque(io_toposort(fgraph.inputs, fgraph.outputs))
        accepts = self._accepts
        queue = deque(node for node in queue if accepts(node))
        pop = queue.pop if self.order == "out_to_in" else queue.popleft
        push = queue.append
        current: list[Apply | None] = [None]

        def on_new(node: Apply) -> None:
            if node is not current[0] and accepts(node):
                push(node)

        watcher = _NodeQueue(on_new) if not self.ignore_newtrees else None
        if watcher is not None:
            fgraph.attach_feature(watcher)
        count = 0
        try:
            while queue:
                node = pop()
                if node not in fgraph.apply_nodes:
                    continue
                current[0] = node
                if _rewrite_node(fgraph, node, rewriters) is not None:
                    count += 1
        finally:
            if watcher is not None:
                fgraph.remove_feature(watcher)
        return count

    def _accepts(self, node: Apply) -> bool:
        """Whether the walk visits ``node`` (every node, here)."""
        return True

    def __str__(self) -> str:
        if self.name:
            return self.name
        rws = ", ".join(map(str, self.node_rewriters))
        kind = {"in_to_out": "in2out", "out_to_in": "out2in", "dfs": "dfs_rewriter"}
        return f"{kind[self.order]}({rws})"


def walking_rewriter(
    order: WalkOrder, *node_rewriters: NodeRewriter, name: str | None = None, **kwargs: Any
) -> WalkingGraphRewriter:
    """A :class:`WalkingGraphRewriter` applying ``node_rewriters`` in ``order``.

    Keyword arguments go to :class:`WalkingGraphRewriter` (``ignore_newtrees``). With one
    rewriter and no ``name``, the walk is named after it.
    """
    if not node_rewriters:
        raise TypeError(f"{order} walking rewriter: give at least one node rewriter")
    if name is None and len(node_rewriters) == 1:
        name = getattr(node_rewriters[0], "name", None)
    return WalkingGraphRewriter(list(node_rewriters), order=order, name=name, **kwargs)


def in2out(*rewriters: NodeRewriter, **kwargs: Any) -> WalkingGraphRewriter:
    """Return a :class:`WalkingGraphRewriter` visiting nodes from the inputs to the outputs.

    Keyword arguments go to :class:`WalkingGraphRewriter` (``ignore_newtrees``, ``name``).
    """
    return WalkingGraphRewriter(list(rewriters), order="in_to_out", **kwargs)


def out2in(*rewriters: NodeRewriter, **kwargs: Any) -> WalkingGraphRewriter:
    """Return a :class:`WalkingGraphRewriter` visiting nodes from the outputs to the inputs.

    Keyword arguments go to :class:`WalkingGraphRewriter` (``ignore_newtrees``, ``name``).
    """
    return WalkingGraphRewriter(list(rewriters), order="out_to_in", **kwargs)


def dfs_rewriter(*rewriters: NodeRewriter, **kwargs: Any) -> WalkingGraphRewriter:
    """Return a :class:`WalkingGraphRewriter` visiting nodes depth first from the outputs.

    Keyword arguments go to :class:`WalkingGraphRewriter` (``ignore_newtrees``, ``name``).
    """
    return walking_rewriter("dfs", *rewriters, **kwargs)


class FromFunctionGraphRewriter(GraphRewriter):
    """A graph rewriter made from a function ``fn(fgraph)`` (see :func:`graph_rewriter`).

    Parameters
    ----------
    fn
        Rewrites the graph in place; what it returns is what :meth:`apply` returns.
    requirements
        Feature classes (attached fresh) or callables ``req(fgraph)`` run by
        :meth:`add_requirements`.
    name
        Defaults to ``fn.__name__``.
    """

    def __init__(
        self,
        fn: Callable[[FunctionGraph], Any],
        requirements: Sequence[Any] = (),
        name: str | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"FromFunctionGraphRewriter needs a callable fn(fgraph), got {fn!r}")
        self.fn = fn
        self.requirements = list(requirements)
        self.name = name or getattr(fn, "__name__", None)
        self.__doc__ = getattr(fn, "__doc__", None)

    def apply(self, fgraph: FunctionGraph) -> Any:
        """Call the function on ``fgraph``."""
        return self.fn(fgraph)

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach the requirements."""
        attach_requirements(fgraph, self.requirements)


def graph_rewriter(fn: Callable[[FunctionGraph], Any]) -> FromFunctionGraphRewriter:
    """Decorator turning ``fn(fgraph)`` into a :class:`FromFunctionGraphRewriter`."""
    return FromFunctionGraphRewriter(fn)


def inplace_graph_rewriter(fn: Callable[[FunctionGraph], Any]) -> FromFunctionGraphRewriter:
    """Like :func:`graph_rewriter`, for a rewrite that introduces destructive Ops: a
    :class:`~opweave.graph.features.DestroyHandler` is required."""
    return FromFunctionGraphRewriter(fn, requirements=[DestroyHandler])


class OpKeyGraphRewriter(WalkingGraphRewriter):
    """Shows a node rewriter only the nodes of the one Op it is about, inputs first.

    Parameters
    ----------
    node_rewriter
        A node rewriter with an ``op_key()`` method, or whose ``tracks()`` name exactly
        one Op (instance or class), such as a :class:`PatternNodeRewriter
        <opweave.graph.rewriting.pattern.PatternNodeRewriter>`.
    ignore_newtrees, name
        As for :class:`WalkingGraphRewriter`.

    Raises
    ------
    TypeError
        If the rewriter names no single Op.
    """

    def __init__(
        self, node_rewriter: NodeRewriter, ignore_newtrees: bool = False, name: str | None = None
    ) -> None:
        op_key = getattr(node_rewriter, "op_key", None)
        tracks = [op_key()] if callable(op_key) else (node_rewriter.tracks() or [])
        if len(tracks) != 1:
            raise TypeError(
                f"OpKeyGraphRewriter needs a node rewriter about exactly one Op (an op_key() "
                f"method or one tracked Op); {node_rewriter} tracks {tracks or 'every Op'}"
            )
        self.op_key = tracks[0]
        super().__init__(node_rewriter, "in_to_out", ignore_newtrees, name)

    def _accepts(self, node: Apply) -> bool:
        """Only the nodes of the rewriter's Op."""
        key = self.op_key
        return isinstance(node.op, key) if isinstance(key, type) else bool(node.op == key)

    def __str__(self) -> str:
        rws = ", ".join(map(str, self.node_rewriters))
        return self.name or f"OpKeyGraphRewriter({rws})"


class EquilibriumGraphRewriter(NodeProcessingGraphRewriter):
    """Applies node and graph rewriters until none of them changes the graph.

    Each pass runs the graph rewriters, then walks the graph from the inputs (new nodes
    included) trying the node rewriters on each node. Passes repeat until one makes no
    change.

    Parameters
    ----------
    rewriters
        Node rewriters and graph rewriters, in the order they are tried.
    max_use_ratio
        The bound: no single rewriter may change the graph more than
        ``max_use_ratio * (number of nodes when the rewrite started, at least 1)`` times.
        A rewrite that undoes another, or a rewriter that keeps "changing" the graph
        into an equivalent one, hits it.
    on_limit
        What happens when the bound is hit: ``"raise"`` an
        :class:`EquilibriumLimitError` or ``"warn"`` with an
        :class:`EquilibriumLimitWarning` (the graph is left as it is, valid, and
        rewriting stops). The message names the rewriter that hit it.
    name
        A display name.
    """

    def __init__(
        self,
        rewriters: Sequence[NodeRewriter | GraphRewriter],
        max_use_ratio: float = 8.0,
        on_limit: Literal["raise", "warn"] = "warn",
        name: str | None = None,
    ) -> None:
        if max_use_ratio <= 0:
            raise ValueError(f"max_use_ratio must be positive, got {max_use_ratio}")
        if on_limit not in ("raise", "warn"):
            raise ValueError(f"on_limit must be 'raise' or 'warn', got {on_limit!r}")
        node_rws: list[NodeRewriter] = []
        graph_rws: list[GraphRewriter] = []
        for rw in rewriters:
            if isinstance(rw, GraphRewriter):
                graph_rws.append(rw)
            elif isinstance(rw, NodeRewriter):
                node_rws.append(rw)
            else:
                raise TypeError(f"expected a NodeRewriter or GraphRewriter, got {rw!r}")
        self.node_rewriters = _flatten_node_rewriters(node_rws)
        self.graph_rewriters = graph_rws
        self.max_use_ratio = max_use_ratio
        self.on_limit = on_limit
        self.name = name
        #: ``{rewriter: times it changed the graph}`` from the last :meth:`apply`.
        self.counts: dict[Any, int] = {}

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate and every rewriter's requirements."""
        fgraph.attach_feature(ReplaceValidate())
        for rw in self.node_rewriters:
            rw.add_requirements(fgraph)
        for grw in self.graph_rewriters:
            grw.add_requirements(fgraph)

    def _limit_hit(self, rewriter: Any, max_use: int) -> None:
        msg = (
            f"{self}: rewriter {rewriter} changed the graph more than {max_use} times "
            f"(max_use_ratio={self.max_use_ratio}); the rewrites probably undo each other or "
            "never converge. Rewriting stopped before reaching a fixed point."
        )
        if self.on_limit == "raise":
            raise EquilibriumLimitError(msg)
        warnings.warn(msg, EquilibriumLimitWarning, stacklevel=4)

    def apply(self, fgraph: FunctionGraph) -> int:
        """Rewrite to a fixed point (or the bound); return the number of passes."""
        max_use = max(1, int(self.max_use_ratio * max(len(fgraph.apply_nodes), 1)))
        counts: dict[Any, int] = {}
        self.counts = counts
        tracker = ChangeTracker()
        rewriters = _RewritersByOp(self.node_rewriters)
        fgraph.attach_feature(tracker)
        passes = 0
        try:
            while True:
                passes += 1
                changed = False
                for grw in self.graph_rewriters:
                    before = tracker.changes
                    grw.apply(fgraph)
                    if tracker.changes != before:
                        changed = True
                        counts[grw] = counts.get(grw, 0) + 1
                        if counts[grw] > max_use:
                            self._limit_hit(grw, max_use)
                            return passes
                if self.node_rewriters:
                    applied, hit = self._node_pass(fgraph, rewriters, counts, max_use)
                    if hit is not None:
                        self._limit_hit(hit, max_use)
                        return passes
                    changed = changed or applied > 0
                if not changed:
                    return passes
        finally:
            fgraph.remove_feature(tracker)

    def _node_pass(
        self,
        fgraph: FunctionGraph,
        rewriters: _RewritersByOp,
        counts: dict[Any, int],
        max_use: int,
    ) -> tuple[int, NodeRewriter | None]:
        """Walk the graph once; return (rewrites applied, rewriter over the bound or None)."""
        queue: deque[Apply] = deque(io_toposort(fgraph.inputs, fgraph.outputs))
        current: list[Apply | None] = [None]

        def on_new(node: Apply) -> None:
            if node is not current[0]:
                queue.append(node)

        watcher = _NodeQueue(on_new)
        fgraph.attach_feature(watcher)
        applied = 0
        try:
            while queue:
                node = queue.popleft()
                if node not in fgraph.apply_nodes:
                    continue
                current[0] = node
                rw = _rewrite_node(fgraph, node, rewriters)
                if rw is not None:
                    applied += 1
                    counts[rw] = counts.get(rw, 0) + 1
                    if counts[rw] > max_use:
                        return applied, rw
        finally:
            fgraph.remove_feature(watcher)
        return applied, None

    def __str__(self) -> str:
        if self.name:
            return self.name
        rws = ", ".join(map(str, [*self.graph_rewriters, *self.node_rewriters]))
        return f"EquilibriumGraphRewriter({rws})"
