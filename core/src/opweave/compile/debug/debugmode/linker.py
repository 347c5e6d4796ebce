"""The DebugMode linker: every node through every implementation, with every check.

:class:`DebugLinker` runs each node of the graph (and each node that rewriting replaced)
once per implementation the installed backends offer, each time on copies of the input
values, checks what each run did (:mod:`opweave.compile.debug.debugmode.checks`), re-runs it
with pre-filled output storage, compares all the results with the reference, and
finally compares the value of every variable a rewrite replaced with the value of its
replacement.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from opweave.compile.aliasing import view_chain
from opweave.compile.debug.debugmode.checks import (
    DEFAULT_PREALLOC_MODES,
    check_destroy_map,
    check_valid_outputs,
    check_view_map,
    copy_value,
    preallocated_storage,
    values_match,
)
from opweave.compile.debug.debugmode.errors import (
    BadOptimization,
    BadThunkOutput,
    DebugModeError,
    DebugModeWarning,
    StochasticOrder,
    describe_inputs,
)
from opweave.compile.debug.debugmode.tracker import Replacement, ReplacementTracker
from opweave.compile.ops import deep_copy_op
from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable, io_toposort
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import build_rewrite_database
from opweave.graph.utils import MethodNotDefined, NoImplementationError
from opweave.link.basic import Linker, map_storage
from opweave.link.lookup import available_linkers, resolve_linker
from opweave.printing import debugprint

if TYPE_CHECKING:
    from opweave.compile.debug.debugmode.mode import DebugMode

__all__ = ["DebugLinker", "DebugSettings", "NodeChecker"]

#: The implementation name given to an Op's ``debug_perform``.
DEBUG_PERFORM = "debug_perform"


@dataclass(frozen=True)
class DebugSettings:
    """What a :class:`DebugLinker` checks (a :class:`DebugMode` supplies its own).

    Attributes
    ----------
    impls
        The implementation names asked of the backends for every node, in order; the
        first one offered (after ``debug_perform``) is the reference.
    check_isfinite
        NaN and inf in floating-point outputs are :class:`InvalidValueError`.
    prealloc_modes
        The pre-allocation modes to re-run each node with.
    require_matching_strides
        0: ignore differing output strides between implementations; 1: warn; 2: raise.
    stability_patience
        How many times the rewrites are run (on copies of the graph) to check that they
        always give the same graph; 1 turns the check off.
    """

    impls: tuple[str, ...] = ("py", "c")
    check_isfinite: bool = True
    prealloc_modes: tuple[str, ...] = DEFAULT_PREALLOC_MODES
    require_matching_strides: int = 0
    stability_patience: int = 1


@dataclass
class _Impl:
    """One implementation of one node: its thunk and the private cells it works on."""

    name: str
    thunk: Callable[[], Any]
    cells: dict[Variable, list[Any]] = field(repr=False)


def _debug_perform_thunk(
    node: Apply, debug_perform: Callable[..., Any], cells: dict[Variable, list[Any]]
) -> Callable[[], None]:
    input_cells = [cells[v] for v in node.inputs]
    output_cells = [cells[v] for v in node.outputs]

    def thunk() -> None:
        debug_perform(node, [c[0] for c in input_cells], output_cells)

    return thunk


def _build_impl(node: Apply, impl: str | None) -> _Impl | None:
    """Ask the Op (and through it the backends) for a thunk of ``impl``; None if not offered."""
    cells: dict[Variable, list[Any]] = {v: [None] for v in (*node.inputs, *node.outputs)}
    compute: dict[Variable, list[int]] = {v: [0 if v.owner is node else 1] for v in cells}
    try:
        node.op.prepare_node(node, cells, compute, impl)
        thunk = node.op.make_thunk(node, cells, compute, [], impl=impl)
    except (NotImplementedError, MethodNotDefined):
        return None
    if thunk is None:
        return None
    if getattr(thunk, "lazy", False):
        raise NotImplementedError(
            f"DebugMode does not support lazy thunks (node {node}, implementation {impl!r})"
        )
    return _Impl(impl or "default", thunk, cells)


def build_impls(node: Apply, impl_names: Sequence[str]) -> list[_Impl]:
    """Return the implementations of ``node`` to compare, the reference first.

    The reference is the Op's ``debug_perform`` when it defines one, else the first of
    ``impl_names`` that a backend offers.

    Raises
    ------
    NoImplementationError
        If neither ``debug_perform`` nor any implementation (not even ``impl=None``) exists.
    """
    impls: list[_Impl] = []
    debug_perform = getattr(node.op, "debug_perform", None)
    if callable(debug_perform):
        cells: dict[Variable, list[Any]] = {v: [None] for v in (*node.inputs, *node.outputs)}
        impls.append(_Impl(DEBUG_PERFORM, _debug_perform_thunk(node, debug_perform, cells), cells))
    for name in dict.fromkeys(impl_names):
        impl = _build_impl(node, name)
        if impl is not None:
            impls.append(impl)
    if not impls:
        impl = _build_impl(node, None)
        if impl is None:
            raise NoImplementationError(
                f"DebugMode: no installed backend implements {node.op} (node {node}); "
                f"implementations asked: {', '.join(impl_names) or 'none'} and the default"
            )
        impls.append(impl)
    return impls


class NodeChecker:
    """Runs one node with every implementation and every check.

    Parameters
    ----------
    node
        The node.
    settings
        What to check.
    hidden
        Indices of the node's hidden outputs (used by no node and not a graph
        output). They hold the Op's private state: they may alias other outputs, and
        their values are neither compared between runs nor checked for NaN/inf.
    unread
        Indices of the node's outputs that no node reads (hidden ones, and those that
        are only graph outputs): they may share memory with other outputs, since nothing
        in the graph can overwrite them.
    active
        False for a node that rewriting removed from the graph (still run, to check
        the rewrites).
    """

    def __init__(
        self,
        node: Apply,
        settings: DebugSettings,
        hidden: set[int],
        active: bool = True,
        unread: set[int] | None = None,
    ) -> None:
        self.node = node
        self.settings = settings
        self.hidden = hidden
        self.unread = hidden if unread is None else hidden | unread
        self.active = active
        self.impls = build_impls(node, settings.impls)
        self._previous: list[Any] | None = None
        self._destroyed = list(
            dict.fromkeys(
                node.inputs[i] for idxs in (node.op.destroy_map or {}).values() for i in idxs or ()
            )
        )
        self._last_given: dict[Variable, Any] = {}
        #: ``{input variable: its value after the reference run}`` for the inputs the Op
        #: destroys (``destroy_map``), from the last :meth:`run`.
        self.destroyed_values: dict[Variable, Any] = {}

    @property
    def impl_names(self) -> list[str]:
        """The names of the implementations compared, the reference first."""
        return [impl.name for impl in self.impls]

    def _context(self, prealloc: str | None) -> str | None:
        parts = []
        if prealloc is not None:
            parts.append(f"output storage pre-allocated ({prealloc})")
        if not self.active:
            parts.append(
                "this node was removed by rewriting; DebugMode still runs it to check the rewrites"
            )
        return "; ".join(parts) or None

    def run_impl(
        self, impl: _Impl, inputs: Sequence[Any], prefill: Sequence[Any] | None, mode: str | None
    ) -> list[Any]:
        """Run ``impl`` on copies of ``inputs`` with output storage ``prefill``.

        Checks ``destroy_map`` and ``view_map``; validity is checked by the caller.

        Returns
        -------
        The output values.
        """
        node = self.node
        cells = impl.cells
        pristine: dict[Variable, Any] = {}
        given: dict[Variable, Any] = {}
        for var, val in zip(node.inputs, inputs, strict=True):
            if var not in given:
                pristine[var] = val
                given[var] = copy_value(val)
        for var in node.inputs:
            cells[var][0] = given[var]
        for j, var in enumerate(node.outputs):
            cells[var][0] = None if prefill is None else prefill[j]
        context = self._context(mode)
        try:
            impl.thunk()
            outputs = [cells[v][0] for v in node.outputs]
        except DebugModeError:
            raise
        except Exception as exc:
            if mode is not None:
                raise BadThunkOutput(
                    node,
                    0,
                    impl.name,
                    None,
                    impl.name,
                    None,
                    inputs,
                    prealloc=mode,
                    reason=(
                        f"implementation {impl.name!r} raised {type(exc).__name__}: {exc} when "
                        f"its output storage was pre-allocated ({mode}); the output storage "
                        "contract says it may hold any value of the right type, of the wrong "
                        "shape or with any strides"
                    ),
                ) from exc
            exc.add_note(
                f"Apply node that caused the error: {node}\n"
                f"  DebugMode: implementation {impl.name!r} failed"
                + (f" ({context})" if context else "")
                + _made_by_rewrites(node)
                + "\n"
                + describe_inputs(node, inputs)
            )
            raise
        finally:
            for cell in cells.values():
                cell[0] = None
        check_destroy_map(node, pristine, given, impl.name, inputs, context)
        check_view_map(node, given, outputs, self.unread, impl.name, inputs, context)
        self._last_given = given
        return outputs

    def _check_valid(
        self, impl: _Impl, outputs: Sequence[Any], inputs: Sequence[Any], mode: str | None
    ) -> None:
        check_valid_outputs(
            self.node,
            outputs,
            self.settings.check_isfinite,
            self.hidden,
            impl.name,
            inputs,
            self._context(mode),
        )

    def _compare(
        self,
        ref_name: str,
        ref: Sequence[Any],
        name: str,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        mode: str | None,
    ) -> None:
        for j, var in enumerate(self.node.outputs):
            if j in self.hidden:
                continue
            if not values_match(var, ref[j], outputs[j]):
                raise BadThunkOutput(
                    self.node, j, ref_name, ref[j], name, outputs[j], inputs, prealloc=mode
                )

    def _compare_strides(
        self, ref_name: str, ref: Sequence[Any], name: str, outputs: Sequence[Any], inputs: Any
    ) -> None:
        level = self.settings.require_matching_strides
        if not level:
            return
        for j, (a, b) in enumerate(zip(ref, outputs, strict=True)):
            if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.strides != b.strides:
                reason = f"output strides differ: {a.strides} ({ref_name}) vs {b.strides} ({name})"
                if level >= 2:
                    raise BadThunkOutput(self.node, j, ref_name, a, name, b, inputs, reason=reason)
                warnings.warn(f"DebugMode: node {self.node}: {reason}", DebugModeWarning, 3)

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        """Run every check on ``inputs``; return the reference output values."""
        ref_impl = self.impls[0]
        ref = self.run_impl(ref_impl, inputs, None, None)
        self.destroyed_values = {
            var: self._last_given[var] for var in self._destroyed if var in self._last_given
        }
        self._check_valid(ref_impl, ref, inputs, None)
        for impl in self.impls[1:]:
            outputs = self.run_impl(impl, inputs, None, None)
            self._check_valid(impl, outputs, inputs, None)
            self._compare(ref_impl.name, ref, impl.name, outputs, inputs, None)
            self._compare_strides(ref_impl.name, ref, impl.name, outputs, inputs)
        for mode in self.settings.prealloc_modes:
            for impl in self.impls:
                # Fresh buffers for every run: a run may write into the previous one's.
                for prefill in preallocated_storage(mode, ref, self._previous):
                    outputs = self.run_impl(impl, inputs, prefill, mode)
                    # Compare first: garbage left in a pre-filled buffer is a wrong value.
                    self._compare(ref_impl.name, ref, impl.name, outputs, inputs, mode)
                    self._check_valid(impl, outputs, inputs, mode)
        self._previous = list(ref)
        return ref


def protect_outputs(fgraph: FunctionGraph) -> None:
    """Deep-copy outputs that alias an input, a constant or an earlier output.

    The same rule as :class:`~opweave.compile.maker.FunctionMaker` applies before
    linking; DebugMode applies it again after its own rewriting.
    """
    roots_seen: set[Variable] = set()
    inputs = set(fgraph.inputs)
    for i, out in enumerate(list(fgraph.outputs)):
        root = view_chain(out)[-1]
        aliased = root in inputs or isinstance(root, Constant) or root in roots_seen
        roots_seen.add(root)
        if aliased:
            fgraph.change_node_input("output", i, deep_copy_op(out), reason="protect_outputs")


def _same_op(a: Any, b: Any) -> bool:
    # Ops without __props__ compare by identity; a rewrite building a fresh instance of
    # such an Op each time is not a stochastic order, so same class and text also match.
    return bool(a == b) or (type(a) is type(b) and str(a) == str(b))


def same_graph(a: FunctionGraph, b: FunctionGraph) -> bool:
    """True if ``a`` and ``b`` compute their outputs with the same Ops on the same inputs.

    Inputs correspond by position; constants compare by value; Ops by equality (or, for
    Ops that compare by identity, by class and printed form).
    """
    if len(a.inputs) != len(b.inputs) or len(a.outputs) != len(b.outputs):
        return False
    memo: dict[Variable, Variable] = dict(zip(a.inputs, b.inputs, strict=True))
    stack = list(zip(a.outputs, b.outputs, strict=True))
    while stack:
        x, y = stack.pop()
        if x in memo:
            if memo[x] is not y:
                return False
            continue
        if isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and x.equals(y)):
                return False
        elif x.owner is None or y.owner is None:
            if x is not y:
                return False
        else:
            if x.type != y.type or x.index != y.index or not _same_op(x.owner.op, y.owner.op):
                return False
            if len(x.owner.inputs) != len(y.owner.inputs):
                return False
            stack.extend(zip(x.owner.inputs, y.owner.inputs, strict=True))
        memo[x] = y
    return True


class DebugLinker(Linker):
    """The linker of :class:`~opweave.compile.debug.debugmode.DebugMode`.

    When it accepts a graph and its mode asks for rewrites, it runs them itself with a
    :class:`~opweave.compile.debug.debugmode.tracker.ReplacementTracker` attached (the mode
    tells ``FunctionMaker`` not to rewrite), checks that rewriting is deterministic
    (``stability_patience``), and re-protects the outputs. The function it makes
    computes every node ever in the graph through :class:`NodeChecker` and compares
    each replaced variable with its replacement (:class:`BadOptimization`).

    Parameters
    ----------
    mode
        The :class:`DebugMode` whose settings and rewrite query to use; ``None`` for the
        default checks and no rewriting (e.g. ``Mode(linker=DebugLinker())``, where
        ``FunctionMaker`` rewrites unobserved).
    allow_gc
        Unused: DebugMode keeps every value until the end of the call.
    settings
        Explicit settings, overriding the mode's.
    """

    name = "debug"
    priority = -100

    def __init__(
        self,
        mode: DebugMode | None = None,
        allow_gc: bool | None = None,
        settings: DebugSettings | None = None,
    ) -> None:
        super().__init__(allow_gc=allow_gc)
        self.mode = mode
        self._settings = settings
        #: The replacements the rewrites made, in order (filled by :meth:`accept`).
        self.replacements: list[Replacement] = []
        #: Every node ever in the graph during rewriting.
        self.tracked_nodes: list[Apply] = []
        self._rewritten = False

    @property
    def settings(self) -> DebugSettings:
        """The settings in effect (explicit ones, else the mode's, else the defaults)."""
        if self._settings is not None:
            return self._settings
        if self.mode is not None:
            return self.mode.debug_settings()
        return DebugSettings()

    def accept(
        self,
        fgraph: FunctionGraph,
        no_recycling: Sequence[Variable] | None = None,
        profile: Any = None,
    ) -> DebugLinker:
        """Take ``fgraph``; rewrite it under observation if the mode asks for rewrites.

        ``no_recycling`` is recorded but not needed: every call computes fresh values.

        Raises
        ------
        StochasticOrder
            If rewriting copies of the graph gives different graphs.
        """
        if not available_linkers():
            resolve_linker("auto")  # raises, naming the distribution to install
        if self.fgraph is not None and self.fgraph is not fgraph:
            return DebugLinker(self.mode, self.allow_gc, self._settings).accept(
                fgraph, no_recycling, profile
            )
        self.fgraph = fgraph
        self.no_recycling = list(no_recycling or [])
        query = self.mode.debug_rewrite_query() if self.mode is not None else None
        if query is not None and not self._rewritten:
            self._rewritten = True
            self._rewrite(fgraph, query)
        return self

    # ------------------------------------------------------------------ rewriting

    @staticmethod
    def _make_rewriter(query: Any) -> Any:
        """The graph rewriter for ``query``: ``(include, exclude, require)`` tags of the
        rewrite database, or a graph rewriter (returned as is)."""
        if hasattr(query, "rewrite"):
            return query
        include, exclude, require = query
        include += tuple(t for t in config.optimizer_including.split(":") if t)
        exclude += tuple(t for t in config.optimizer_excluding.split(":") if t)
        return build_rewrite_database().query(include=include, exclude=exclude, require=require)

    def _rewrite(self, fgraph: FunctionGraph, query: Any) -> None:
        patience = max(1, self.settings.stability_patience)
        copies = [fgraph.clone(check_integrity=False) for _ in range(patience - 1)]
        tracker = ReplacementTracker()
        fgraph.attach_feature(tracker)
        try:
            self._make_rewriter(query).rewrite(fgraph)
        finally:
            fgraph.remove_feature(tracker)
        self.replacements = tracker.replacements()
        self.tracked_nodes = tracker.nodes
        for k, other in enumerate(copies, start=2):
            self._make_rewriter(query).rewrite(other)
            if not same_graph(fgraph, other):
                raise StochasticOrder(
                    f"StochasticOrder: rewriting the same graph twice gave different graphs "
                    f"(run 1 and run {k} of stability_patience={patience}); a rewrite probably "
                    "iterates in an id()- or hash-dependent order, or keeps state between runs."
                    f"\n  run 1:\n{debugprint(fgraph, file='str')}"
                    f"\n  run {k}:\n{debugprint(other, file='str')}"
                )
        protect_outputs(fgraph)

    # ------------------------------------------------------------------ linking

    def _schedule(self) -> tuple[list[Apply], set[Apply]]:
        """Return every node to run in a valid order, and the set of active ones."""
        assert self.fgraph is not None
        fgraph = self.fgraph
        active = fgraph.toposort()
        active_set = set(active)
        extra = [n for n in self.tracked_nodes if n not in active_set]
        if not extra:
            return active, active_set
        wanted = list(fgraph.outputs) + [o for n in extra for o in n.outputs]
        try:
            order = io_toposort(fgraph.inputs, wanted)
        except ValueError as exc:
            warnings.warn(
                f"DebugMode: cannot order the nodes removed by rewriting ({exc}); the "
                "rewrites are not checked",
                DebugModeWarning,
                3,
            )
            return active, active_set
        return order, active_set

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`.

        The returned "thunks" are the :class:`NodeChecker` objects, one per node of the
        returned order (which includes the nodes rewriting removed).
        """
        assert self.fgraph is not None, "call accept(fgraph) first"
        fgraph = self.fgraph
        settings = self.settings
        order, active = self._schedule()
        ins, outs, smap = map_storage(fgraph, order, input_storage, output_storage, storage_map)
        read: set[Variable] = set()
        for node in order:
            read.update(node.inputs)
        used = read | set(fgraph.outputs)
        checkers = [
            NodeChecker(
                node,
                settings,
                hidden={j for j, o in enumerate(node.outputs) if o not in used},
                active=node in active,
                unread={j for j, o in enumerate(node.outputs) if o not in read},
            )
            for node in order
        ]
        graph_inputs = set(fgraph.inputs)
        roots = {
            v for v in smap if v.owner is None and (v in graph_inputs or isinstance(v, Constant))
        }
        computed_cells = [cell for v, cell in smap.items() if v.owner is not None]
        replacements = [r for r in self.replacements if r.old is not r.new]

        def fn() -> None:
            for cell in computed_cells:
                cell[0] = None
            available = set(roots)
            destroyed_inputs: list[tuple[Any, Any]] = []
            for checker in checkers:
                node = checker.node
                if not all(v in available for v in node.inputs):
                    if checker.active:
                        missing = [str(v) for v in node.inputs if v not in available]
                        raise RuntimeError(
                            f"DebugMode: node {node} needs {', '.join(missing)}, which no "
                            "node computed"
                        )
                    continue
                values = [smap[v][0] for v in node.inputs]
                try:
                    results = checker.run(values)
                except DebugModeError:
                    raise
                except Exception:
                    if checker.active:
                        raise
                    continue
                for var, val in zip(node.outputs, results, strict=True):
                    smap[var][0] = val
                    available.add(var)
                if checker.active:
                    destroyed_inputs.extend(
                        (smap[var][0], val)
                        for var, val in checker.destroyed_values.items()
                        if var in graph_inputs
                    )
            check_replacements(replacements, smap, available)
            for original, destroyed in destroyed_inputs:
                _write_back(original, destroyed)

        fn.storage_map = smap  # type: ignore[attr-defined]
        return fn, ins, outs, checkers, order


def _write_back(original: Any, destroyed: Any) -> None:
    """Make a graph input that a node destroyed look as it would after a normal call."""
    if (
        isinstance(original, np.ndarray)
        and isinstance(destroyed, np.ndarray)
        and original is not destroyed
        and original.shape == destroyed.shape
        and original.dtype == destroyed.dtype
        and original.flags.writeable
    ):
        np.copyto(original, destroyed)


def check_replacements(
    replacements: Sequence[Replacement],
    storage_map: dict[Variable, list[Any]],
    available: set[Variable],
) -> None:
    """Raise :class:`BadOptimization` for the first replacement whose values differ.

    Replacements whose old or new variable could not be computed are skipped.
    """
    for rep in replacements:
        old, new = rep.old, rep.new
        if old not in available or new not in available:
            continue
        old_val = storage_map[old][0]
        new_val = storage_map[new][0]
        if values_match(new, old_val, new_val, other=old):
            continue
        old_inputs = (
            [storage_map[v][0] if v in available else None for v in old.owner.inputs]
            if old.owner is not None
            else None
        )
        new_inputs = (
            [storage_map[v][0] if v in available else None for v in new.owner.inputs]
            if new.owner is not None
            else None
        )
        raise BadOptimization(old, new, old_val, new_val, rep.reason, old_inputs, new_inputs)


def _made_by_rewrites(node: Apply) -> str:
    """``"; the node was made by the rewrite(s) ..."`` when rewrites put ``node`` in the
    graph (``node.tag.imported_by``, recorded by the FunctionGraph), else ``""``."""
    reasons = [r for r in getattr(node.tag, "imported_by", ()) if r not in ("None", "init")]
    if not reasons:
        return ""
    return f"; the node was made by the rewrite(s): {', '.join(dict.fromkeys(reasons))}"
