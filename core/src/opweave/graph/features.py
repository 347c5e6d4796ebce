"""Features: objects attached to a :class:`~opweave.graph.fg.FunctionGraph` that watch its edits.

A feature is notified of every change through callbacks (all optional; :class:`Feature`
defines no-op versions):

``on_attach(fgraph)`` / ``on_detach(fgraph)``
    when :meth:`FunctionGraph.attach_feature` / ``remove_feature`` is called. ``on_attach``
    may raise :class:`~opweave.graph.fg.AlreadyThere` to say an equivalent feature is
    attached already (the new one is then silently dropped).
``on_import(fgraph, node, reason)`` / ``on_prune(fgraph, node, reason)``
    when an :class:`~opweave.graph.basic.Apply` node enters or leaves the graph.
``on_change_input(fgraph, node, i, old_var, new_var, reason)``
    when input ``i`` of ``node`` (or output ``i`` when ``node == "output"``) is changed.
``orderings(fgraph)``
    extra scheduling constraints, ``{node: [nodes that must run before it]}``.
``validate(fgraph)``
    raise :class:`~opweave.graph.utils.InconsistencyError` if the graph is not acceptable;
    called by ``fgraph.validate()`` (installed by :class:`Validator`).

The features here:

* :class:`History` installs ``fgraph.checkpoint()`` and ``fgraph.revert(checkpoint)``.
* :class:`Validator` installs ``fgraph.validate()`` and ``fgraph.consistent()``.
* :class:`ReplaceValidate` installs ``fgraph.replace_validate``,
  ``fgraph.replace_all_validate`` and ``fgraph.replace_all_validate_remove``: replace,
  validate, and undo everything if validation fails.
* :class:`DestroyHandler` enforces the ``destroy_map`` / ``view_map`` rules
  (see its docstring).
* :class:`ChangeTracker` counts edits (used by rewriters to tell whether anything changed).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import AlreadyThere
from opweave.graph.traversal import io_toposort
from opweave.graph.utils import InconsistencyError

if TYPE_CHECKING:
    from opweave.graph.fg import ClientNode, FunctionGraph

__all__ = [
    "BadOptimization",
    "Bookkeeper",
    "ChangeTracker",
    "DestroyHandler",
    "Feature",
    "History",
    "NoOutputFromInplace",
    "ReplaceValidate",
    "ReplacementDidNotRemoveError",
    "Validator",
]


#: ``(droot, impact, root_destroyer)``, see :meth:`DestroyHandler.refresh_droot_impact`.
_AliasInfo = tuple[dict[Variable, Variable], dict[Variable, set[Variable]], dict[Variable, Apply]]


class BadOptimization(Exception):
    """A variable and the replacement a rewrite gave it take different values.

    DebugMode raises its subclass
    (:class:`opweave.compile.debug.debugmode.BadOptimization`) when it finds one; catching
    this class catches it.

    Parameters
    ----------
    old_r
        The replaced variable, or the whole message when it is the only argument and a
        string (to re-raise an extended message).
    new_r
        The replacement.
    old_r_val, new_r_val
        Their values where they were found to differ.
    reason
        What made the replacement (by convention, the rewrite's name).
    """

    def __init__(
        self,
        old_r: Any,
        new_r: Any = None,
        old_r_val: Any = None,
        new_r_val: Any = None,
        reason: Any = None,
    ) -> None:
        self.old_r = old_r
        self.new_r = new_r
        self.old_r_val = old_r_val
        self.new_r_val = new_r_val
        self.reason = reason
        only_message = isinstance(old_r, str) and new_r is None and reason is None
        super().__init__(old_r if only_message else self.description())

    def description(self) -> str:
        """The message: the rewrite, the two variables and their values."""
        return (
            f"BadOptimization: rewrite {self.reason!r} replaced {self.old_r} with {self.new_r}, "
            f"but they take different values: {self.old_r_val!r} and {self.new_r_val!r}"
        )


class _GraphMethod:
    """``func`` with ``fgraph`` bound as first argument, installed as a graph attribute.

    Features install helpers such as ``fgraph.checkpoint()`` on the graph; a lambda there
    would make the graph unpicklable, while this object pickles whenever ``func`` (a
    bound method of a feature, or a plain function) does.

    Parameters
    ----------
    func
        Called as ``func(fgraph, *args, **kwargs)``.
    fgraph
        The graph the helper is installed on.
    """

    __slots__ = ("fgraph", "func")

    def __init__(self, func: Callable[..., Any], fgraph: FunctionGraph) -> None:
        self.func = func
        self.fgraph = fgraph

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Return ``func(fgraph, *args, **kwargs)``."""
        return self.func(self.fgraph, *args, **kwargs)

    def __repr__(self) -> str:
        name = getattr(self.func, "__qualname__", repr(self.func))
        return f"<{name} of {self.fgraph}>"


class ReplacementDidNotRemoveError(InconsistencyError):
    """``replace_all_validate_remove`` left in the graph a node it had to remove."""


class Feature:
    """Base class of features: every callback is a no-op.

    Subclasses override the callbacks they need (see the module docstring). A feature
    that keeps per-graph state should raise :class:`~opweave.graph.fg.AlreadyThere`
    from :meth:`on_attach` when the graph already has an equivalent feature.
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Called when the feature is attached to ``fgraph``."""

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Called when the feature is removed from ``fgraph``."""

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Called when ``node`` enters ``fgraph``."""

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Called when ``node`` leaves ``fgraph``."""

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: ClientNode,
        i: int,
        old_var: Variable,
        new_var: Variable,
        reason: str | None = None,
    ) -> None:
        """Called when input ``i`` of ``node`` (or output ``i`` of the graph) changed."""

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """Return ``{node: [nodes that must run before node]}`` (default: none)."""
        return {}


class Bookkeeper(Feature):
    """A feature that sees the nodes already in the graph as imports when attached.

    On attach, :meth:`on_import` is called for each node in topological order; on
    detach, :meth:`on_prune` for each node in reverse order.
    """

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Import every node of ``fgraph``."""
        for node in io_toposort(fgraph.inputs, fgraph.outputs):
            self.on_import(fgraph, node, "on_attach")

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Prune every node of ``fgraph``."""
        for node in reversed(io_toposort(fgraph.inputs, fgraph.outputs)):
            self.on_prune(fgraph, node, "on_detach")


class ChangeTracker(Feature):
    """Counts the edits made to the graphs it is attached to.

    Attributes
    ----------
    changes
        Number of ``on_change_input`` and ``on_import`` callbacks seen so far.
    """

    def __init__(self) -> None:
        self.changes = 0

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Count an import."""
        self.changes += 1

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: ClientNode,
        i: int,
        old_var: Variable,
        new_var: Variable,
        reason: str | None = None,
    ) -> None:
        """Count an input change."""
        self.changes += 1


# ---------------------------------------------------------------------- history


class History(Feature):
    """Records input changes so they can be undone.

    On attach it installs two methods on the graph:

    ``fgraph.checkpoint() -> int``
        a marker of the current state;
    ``fgraph.revert(checkpoint) -> None``
        undo, newest first, every change made since ``checkpoint``.

    Both are removed on detach. Attaching a second History to the same graph is a
    no-op (:class:`~opweave.graph.fg.AlreadyThere`).
    """

    def __init__(self) -> None:
        # None while reverting: changes made by the revert itself are not recorded.
        self.history: dict[FunctionGraph, list[tuple[Any, ...]] | None] = {}

    def clone(self) -> History:
        """Return a fresh History (for ``FunctionGraph.clone``)."""
        return History()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Install ``fgraph.checkpoint`` and ``fgraph.revert``."""
        if hasattr(fgraph, "checkpoint") or hasattr(fgraph, "revert"):
            raise AlreadyThere("the graph already has a History feature")
        self.history[fgraph] = []
        fgraph.checkpoint = _GraphMethod(self.checkpoint, fgraph)
        fgraph.revert = _GraphMethod(self.revert, fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove ``fgraph.checkpoint`` and ``fgraph.revert``."""
        for attr in ("checkpoint", "revert"):
            if attr in fgraph.__dict__:
                delattr(fgraph, attr)
        self.history.pop(fgraph, None)

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: ClientNode,
        i: int,
        old_var: Variable,
        new_var: Variable,
        reason: str | None = None,
    ) -> None:
        """Record the change."""
        record = self.history.get(fgraph)
        if record is not None:
            record.append((node, i, old_var, new_var, reason))

    def checkpoint(self, fgraph: FunctionGraph) -> int:
        """Return a marker of ``fgraph``'s current state."""
        record = self.history.get(fgraph)
        if record is None:
            raise RuntimeError("History.checkpoint called while reverting or while detached")
        return len(record)

    def revert(self, fgraph: FunctionGraph, checkpoint: int) -> None:
        """Undo every change made to ``fgraph`` since ``checkpoint``, newest first."""
        record = self.history.get(fgraph)
        if record is None:
            raise RuntimeError("History.revert called while reverting or while detached")
        self.history[fgraph] = None
        try:
            while len(record) > checkpoint:
                node, i, old_var, _new_var, reason = record.pop()
                fgraph.change_node_input(node, i, old_var, reason=f"revert({reason})", check=False)
        finally:
            self.history[fgraph] = record


# ---------------------------------------------------------------------- validation


class Validator(Feature):
    """Installs ``fgraph.validate()`` and ``fgraph.consistent()``.

    ``fgraph.validate()`` calls ``feature.validate(fgraph)`` (and
    ``feature.on_validate(fgraph)``, PyTensor's name for the hook) on every attached
    feature that defines it; any of them may raise
    :class:`~opweave.graph.utils.InconsistencyError`. ``fgraph.consistent()`` returns
    ``False`` instead of raising.
    """

    def clone(self) -> Validator:
        """Return a fresh Validator (for ``FunctionGraph.clone``)."""
        return Validator()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Install ``fgraph.validate`` and ``fgraph.consistent``."""
        if hasattr(fgraph, "validate") or hasattr(fgraph, "consistent"):
            raise AlreadyThere("the graph already has a Validator feature")
        fgraph.validate = _GraphMethod(self.validate_, fgraph)
        fgraph.consistent = _GraphMethod(self.consistent_, fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove ``fgraph.validate`` and ``fgraph.consistent``."""
        for attr in ("validate", "consistent"):
            if attr in fgraph.__dict__:
                delattr(fgraph, attr)

    @staticmethod
    def validate_(fgraph: FunctionGraph) -> None:
        """Run ``validate(fgraph)`` of every feature of ``fgraph``.

        Raises
        ------
        InconsistencyError
            From the first feature that rejects the graph.
        """
        for feature in fgraph.features:
            for hook in ("validate", "on_validate"):
                check = getattr(feature, hook, None)
                if check is not None:
                    check(fgraph)

    @classmethod
    def consistent_(cls, fgraph: FunctionGraph) -> bool:
        """Return ``True`` if :meth:`validate_` passes."""
        try:
            cls.validate_(fgraph)
        except InconsistencyError:
            return False
        return True


class NoOutputFromInplace(Feature):
    """Keep some outputs of a graph from being computed in place.

    The graph's validation rejects (with :class:`~opweave.graph.utils.InconsistencyError`)
    any change after which one of the protected outputs is computed by an Op that
    destroys one of its inputs to produce it, so in-place rewrites leave those outputs
    alone.

    Parameters
    ----------
    protected_out_ids
        The indices, in ``fgraph.outputs``, of the protected outputs.
    """

    def __init__(self, protected_out_ids: Iterable[int]) -> None:
        self.protected_out_ids = tuple(protected_out_ids)

    # The graph attribute that marks it as protected (one instance per graph).
    _marker = "_no_output_from_inplace"

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Refuse a second instance on the same graph."""
        if hasattr(fgraph, self._marker):
            raise AlreadyThere(f"a NoOutputFromInplace feature is already attached to {fgraph}")
        setattr(fgraph, self._marker, self)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Forget the graph."""
        if getattr(fgraph, self._marker, None) is self:
            delattr(fgraph, self._marker)

    def clone(self) -> NoOutputFromInplace:
        """Return a copy protecting the same outputs."""
        return type(self)(self.protected_out_ids)

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise :class:`~opweave.graph.utils.InconsistencyError` if a protected output
        is produced by destroying an input."""
        if not hasattr(fgraph, "destroyers"):
            return
        for index in self.protected_out_ids:
            out = fgraph.outputs[index]
            node = out.owner
            if node is None:
                continue
            if node.outputs.index(out) in node.op.destroy_map:
                raise InconsistencyError(
                    f"output {index} of the graph ({out}) is protected from in-place "
                    f"computation, but {node} computes it by overwriting an input"
                )


class ReplaceValidate(Feature):
    """Installs replacement methods that undo themselves when the graph becomes invalid.

    Attaching it also attaches a :class:`History` and a :class:`Validator` (when the
    graph has none). It installs:

    ``fgraph.replace_validate(var, new_var, reason=None, import_missing=False)``
        replace ``var`` with ``new_var``, then validate;
    ``fgraph.replace_all_validate(pairs, reason=None, import_missing=False)``
        replace each ``(var, new_var)`` pair, then validate once;
    ``fgraph.replace_all_validate_remove(pairs, remove, reason=None, import_missing=False)``
        like ``replace_all_validate``, and also require every node of ``remove`` to
        have left the graph.

    If a replacement or the validation raises, every change made by the call is
    reverted through the History and the error is re-raised (an
    :class:`~opweave.graph.utils.InconsistencyError` when validation failed).
    """

    def clone(self) -> ReplaceValidate:
        """Return a fresh ReplaceValidate (for ``FunctionGraph.clone``)."""
        return ReplaceValidate()

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Attach History and Validator if needed, and install the methods."""
        if hasattr(fgraph, "replace_validate") or hasattr(fgraph, "replace_all_validate"):
            raise AlreadyThere("the graph already has a ReplaceValidate feature")
        fgraph.attach_feature(History())
        fgraph.attach_feature(Validator())
        fgraph.replace_validate = _GraphMethod(self.replace_validate, fgraph)
        fgraph.replace_all_validate = _GraphMethod(self.replace_all_validate, fgraph)
        fgraph.replace_all_validate_remove = _GraphMethod(self.replace_all_validate_remove, fgraph)

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove the installed methods (History and Validator stay)."""
        for attr in ("replace_validate", "replace_all_validate", "replace_all_validate_remove"):
            if attr in fgraph.__dict__:
                delattr(fgraph, attr)

    @classmethod
    def replace_validate(
        cls,
        fgraph: FunctionGraph,
        var: Variable,
        new_var: Variable,
        reason: str | None = None,
        import_missing: bool = False,
    ) -> None:
        """Replace ``var`` with ``new_var`` in ``fgraph``, then validate.

        Raises
        ------
        InconsistencyError
            If the graph does not validate; the change is reverted first.
        """
        cls.replace_all_validate(
            fgraph, [(var, new_var)], reason=reason, import_missing=import_missing
        )

    @staticmethod
    def replace_all_validate(
        fgraph: FunctionGraph,
        pairs: Iterable[tuple[Variable, Variable]],
        reason: str | None = None,
        import_missing: bool = False,
    ) -> None:
        """Replace each ``(var, new_var)`` pair in ``fgraph``, then validate.

        Raises
        ------
        InconsistencyError
            If the graph does not validate; the changes are reverted first.
        """
        chk = fgraph.checkpoint()
        try:
            for var, new_var in pairs:
                fgraph.replace(var, new_var, reason=reason, import_missing=import_missing)
        except Exception:
            fgraph.revert(chk)
            raise
        try:
            fgraph.validate()
        except Exception:
            fgraph.revert(chk)
            raise

    @classmethod
    def replace_all_validate_remove(
        cls,
        fgraph: FunctionGraph,
        pairs: Iterable[tuple[Variable, Variable]],
        remove: Iterable[Apply],
        reason: str | None = None,
        import_missing: bool = False,
    ) -> None:
        """Like :meth:`replace_all_validate`; also require the nodes of ``remove`` to be gone.

        Raises
        ------
        ReplacementDidNotRemoveError
            If a node of ``remove`` is still in the graph; the changes are reverted.
        """
        chk = fgraph.checkpoint()
        cls.replace_all_validate(fgraph, pairs, reason=reason, import_missing=import_missing)
        left = [node for node in remove if node in fgraph.apply_nodes]
        if left:
            fgraph.revert(chk)
            raise ReplacementDidNotRemoveError(
                f"replacement {reason or ''} did not remove {', '.join(map(str, left))}"
            )


# ---------------------------------------------------------------------- destroy handler


class DestroyHandler(Bookkeeper):
    """Enforces the rules for Ops that overwrite (``destroy_map``) or alias (``view_map``).

    ``op.destroy_map = {output: [inputs]}`` says those inputs are overwritten
    (output ``None`` for scratch use), ``op.view_map = {output: [input]}`` says the
    output may share memory with that input. An output can be the view of **one**
    input only; a ``view_map`` entry listing more is refused with
    :class:`NotImplementedError`.

    The handler tracks the views of the graph: ``view_i[view] = viewed`` and
    ``view_o[viewed] = {views}``. Following ``view_i`` from a variable leads to its
    *root*, the variable that owns the memory; the root and all its transitive views
    form an *alias set*. When a node destroys a variable, it destroys the whole alias
    set of that variable's root.

    :meth:`orderings` makes every destroyer run after every other client of the alias
    set it destroys. :meth:`validate` raises
    :class:`~opweave.graph.utils.InconsistencyError` when

    * two nodes (or two inputs of one node) destroy the same alias set;
    * the destroyed alias set contains a protected variable: a :class:`Constant`, a graph
      input (unless ``var.tag.mutable`` is true), or a graph output;
    * a destroyer also reads the variable it destroys (or an alias of it) through
      another input, unless its Op allows it with ``destroyhandler_tolerate_same``
      (pairs ``(destroyed index, other index)`` where the other input may be the very
      same variable) or ``destroyhandler_tolerate_aliased`` (pairs where it may be an
      alias);
    * the orderings create a cycle: some reader of the destroyed value needs, directly
      or not, the destroyer's result.

    On attach it installs ``fgraph.destroy_handler`` (itself),
    ``fgraph.destroyers(var) -> list[Apply]`` and
    ``fgraph.has_destroyers(protected_list) -> bool``, and attaches a
    :class:`Validator` if the graph has none.

    Parameters
    ----------
    do_imports_on_attach
        Register the nodes already in the graph when attached (default). ``False`` is
        for callers that import the nodes themselves.
    """

    def __init__(self, do_imports_on_attach: bool = True) -> None:
        self.do_imports_on_attach = do_imports_on_attach
        self.fgraph: FunctionGraph | None = None
        self.destroyers_set: set[Apply] = set()
        #: The destroyers in the order they were imported: alias analysis walks them in
        #: this order, so its results and messages are deterministic without sorting.
        self._destroyer_order: dict[Apply, None] = {}
        self.view_i: dict[Variable, Variable] = {}
        self.view_o: dict[Variable, set[Variable]] = {}
        self._cache: _AliasInfo | None = None
        #: A topological order of the graph that a caller vouches for (node -> position),
        #: or ``None``. See :meth:`validate`.
        self.order_hint: dict[Apply, int] | None = None
        #: Nodes imported or rewired since the last successful :meth:`validate`, and
        #: whether an output of the graph changed meanwhile.
        self._touched: dict[Apply, None] = {}
        self._outputs_changed = False

    def clone(self) -> DestroyHandler:
        """Return a fresh handler with the same settings."""
        return DestroyHandler(self.do_imports_on_attach)

    # ------------------------------------------------------------------ attach / detach

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Install the helpers on ``fgraph`` and register its nodes."""
        if self.fgraph is fgraph or hasattr(fgraph, "destroy_handler"):
            raise AlreadyThere("the graph already has a DestroyHandler")
        if self.fgraph is not None:
            raise ValueError("a DestroyHandler can only be attached to one FunctionGraph")
        self.fgraph = fgraph
        self._forget()
        if self.do_imports_on_attach:
            try:
                Bookkeeper.on_attach(self, fgraph)
            except Exception:
                self.fgraph = None
                raise
        fgraph.destroy_handler = self
        fgraph.destroyers = self.destroyers
        fgraph.has_destroyers = self.has_destroyers
        fgraph.attach_feature(Validator())

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Remove the helpers and forget the graph."""
        if fgraph is not self.fgraph:
            raise ValueError("this DestroyHandler is not attached to that graph")
        for attr in ("destroy_handler", "destroyers", "has_destroyers"):
            if attr in fgraph.__dict__:
                delattr(fgraph, attr)
        self.fgraph = None
        self._forget()

    def _forget(self) -> None:
        self.destroyers_set = set()
        self._destroyer_order = {}
        self.view_i = {}
        self.view_o = {}
        self._cache = None
        self._touched = {}
        self._outputs_changed = False

    # ------------------------------------------------------------------ tracking

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Register the destroy and view information of ``node``."""
        op = node.op
        destroy_map = getattr(op, "destroy_map", None) or {}
        view_map = getattr(op, "view_map", None) or {}
        for o, i_list in destroy_map.items():
            self._check_indices(node, "destroy_map", o, i_list, allow_none=True)
        for o, i_list in view_map.items():
            self._check_indices(node, "view_map", o, i_list, allow_none=False)
            if len(i_list) > 1:
                raise NotImplementedError(
                    f"{op}.view_map[{o}] = {list(i_list)}: an output can only be the view of "
                    "one input"
                )
        for o, i_list in view_map.items():
            if not i_list:
                continue
            view = node.outputs[o]
            viewed = node.inputs[i_list[0]]
            self.view_i[view] = viewed
            self.view_o.setdefault(viewed, set()).add(view)
            self._alias_set_changed(viewed)
        if destroy_map:
            self.destroyers_set.add(node)
            self._destroyer_order[node] = None
            self._cache_add_destroyer(node)
        self._touched[node] = None

    def on_prune(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Forget ``node``."""
        view_map = getattr(node.op, "view_map", None) or {}
        for o, i_list in view_map.items():
            if not i_list or o >= len(node.outputs):
                continue
            view = node.outputs[o]
            viewed = self.view_i.pop(view, None)
            if viewed is not None:
                self._discard_view(viewed, view)
                self._alias_set_changed(viewed)
        if node in self.destroyers_set:
            self.destroyers_set.discard(node)
            self._destroyer_order.pop(node, None)
            self._cache_remove_destroyer(node)
        self._touched.pop(node, None)

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: ClientNode,
        i: int,
        old_var: Variable,
        new_var: Variable,
        reason: str | None = None,
    ) -> None:
        """Follow a view whose viewed input changed."""
        if not isinstance(node, Apply):
            self._outputs_changed = True
            return
        self._touched[node] = None
        if node in self.destroyers_set:
            self._cache = None  # what it destroys changed
        view_map = getattr(node.op, "view_map", None) or {}
        for o, i_list in view_map.items():
            if i_list and i_list[0] == i:
                self._alias_set_changed(old_var)
                self._alias_set_changed(new_var)
                view = node.outputs[o]
                previous = self.view_i.get(view)
                if previous is not None:
                    self._discard_view(previous, view)
                self.view_i[view] = new_var
                self.view_o.setdefault(new_var, set()).add(view)

    def _alias_set_changed(self, viewed: Variable) -> None:
        """A view of ``viewed`` appeared or went: redo the alias analysis only when
        ``viewed`` belongs to a destroyed alias set (no other set is recorded)."""
        if self._cache is not None and viewed in self._cache[0]:
            self._cache = None

    def _cache_add_destroyer(self, node: Apply) -> None:
        """Add a new destroyer to the alias analysis without recomputing all of it."""
        if self._cache is None:
            return
        droot, impact, root_destroyer = self._cache
        for idx in self._destroyed_inputs(node):
            root = self.get_root(node.inputs[idx])
            if root in root_destroyer:  # destroyed twice: the full analysis reports it
                self._cache = None
                return
            root_destroyer[root] = node
            views = self.get_impact(root)
            impact[root] = views
            droot[root] = root
            for view in views:
                droot[view] = root

    def _cache_remove_destroyer(self, node: Apply) -> None:
        """Take a pruned destroyer out of the alias analysis."""
        if self._cache is None:
            return
        droot, impact, root_destroyer = self._cache
        for idx in self._destroyed_inputs(node):
            root = self.get_root(node.inputs[idx])
            if root_destroyer.get(root) is not node:
                self._cache = None
                return
            del root_destroyer[root]
            for view in impact.pop(root):
                droot.pop(view, None)
            droot.pop(root, None)

    def _discard_view(self, viewed: Variable, view: Variable) -> None:
        views = self.view_o.get(viewed)
        if views is not None:
            views.discard(view)
            if not views:
                del self.view_o[viewed]

    @staticmethod
    def _check_indices(
        node: Apply, attr: str, o: Any, i_list: Sequence[int], allow_none: bool
    ) -> None:
        if not (o is None and allow_none) and not (
            isinstance(o, int) and 0 <= o < len(node.outputs)
        ):
            raise ValueError(f"{node.op}.{attr} names output {o!r}, which {node} does not have")
        for i in i_list:
            if not isinstance(i, int) or not 0 <= i < len(node.inputs):
                raise ValueError(f"{node.op}.{attr} names input {i!r}, which {node} does not have")

    # ------------------------------------------------------------------ alias analysis

    def get_root(self, var: Variable) -> Variable:
        """Return the variable owning ``var``'s memory (follow ``view_i`` to its end)."""
        seen = {var}
        while var in self.view_i:
            var = self.view_i[var]
            if var in seen:  # pragma: no cover - impossible in a DAG
                break
            seen.add(var)
        return var

    def get_impact(self, root: Variable) -> set[Variable]:
        """Return every transitive view of ``root`` (``root`` excluded)."""
        impact: set[Variable] = set()
        queue = deque([root])
        while queue:
            var = queue.popleft()
            for view in self.view_o.get(var, ()):
                if view not in impact:
                    impact.add(view)
                    queue.append(view)
        return impact

    def _destroyed_inputs(self, node: Apply) -> list[int]:
        indices: list[int] = []
        for i_list in node.op.destroy_map.values():
            indices.extend(i for i in i_list if i not in indices)
        return indices

    def refresh_droot_impact(self) -> _AliasInfo:
        """Return ``(droot, impact, root_destroyer)`` for the current graph.

        ``droot`` maps every variable of a destroyed alias set to its root, ``impact``
        maps each destroyed root to its views, ``root_destroyer`` maps it to the node
        destroying it.

        Raises
        ------
        InconsistencyError
            If two nodes, or two inputs of one node, destroy the same alias set.
        """
        if self._cache is not None:
            return self._cache
        droot: dict[Variable, Variable] = {}
        impact: dict[Variable, set[Variable]] = {}
        root_destroyer: dict[Variable, Apply] = {}
        for node in self._destroyer_order:
            for idx in self._destroyed_inputs(node):
                root = self.get_root(node.inputs[idx])
                if root in root_destroyer:
                    other = root_destroyer[root]
                    who = "twice by" if other is node else f"by both {other} and"
                    raise InconsistencyError(
                        f"{root} (or a view of it) is destroyed {who} {node}; a variable can "
                        "only be destroyed once"
                    )
                root_destroyer[root] = node
                views = self.get_impact(root)
                impact[root] = views
                droot[root] = root
                for view in views:
                    droot[view] = root
        self._cache = (droot, impact, root_destroyer)
        return self._cache

    # ------------------------------------------------------------------ queries

    def destroyers(self, var: Variable) -> list[Apply]:
        """Return the nodes destroying ``var``'s memory (``[]`` or one node)."""
        try:
            droot, _, root_destroyer = self.refresh_droot_impact()
        except InconsistencyError:
            return sorted(
                (n for n in self.destroyers_set if self._destroys_alias_of(n, var)), key=str
            )
        root = droot.get(var)
        return [root_destroyer[root]] if root is not None else []

    def _destroys_alias_of(self, node: Apply, var: Variable) -> bool:
        root = self.get_root(var)
        return any(self.get_root(node.inputs[i]) is root for i in self._destroyed_inputs(node))

    def has_destroyers(self, protected_list: Iterable[Variable]) -> bool:
        """True if some variable of ``protected_list`` (or an alias of it) is destroyed."""
        if not self.destroyers_set:
            return False
        return any(self.destroyers(var) for var in protected_list)

    def _protected_reason(self, fgraph: FunctionGraph, var: Variable) -> str | None:
        if isinstance(var, Constant):
            return "is a constant"
        if var in fgraph.inputs and not getattr(var.tag, "mutable", False):
            return "is a graph input not marked mutable (set var.tag.mutable = True)"
        if var in fgraph.outputs:
            return "is an output of the graph"
        return None

    def orderings(self, fgraph: FunctionGraph) -> dict[Apply, list[Apply]]:
        """Make every destroyer run after the other clients of the alias set it destroys.

        Raises
        ------
        InconsistencyError
            On double destruction or forbidden input aliasing (see the class docstring).
        """
        if not self.destroyers_set:
            return {}
        _droot, impact, root_destroyer = self.refresh_droot_impact()
        before: dict[Apply, dict[Apply, None]] = {}
        for root, node in root_destroyer.items():
            aliases = {root} | impact[root]
            self._check_input_aliasing(node, aliases)
            prereqs = before.setdefault(node, {})
            for var in aliases:
                for client, _ in fgraph.clients.get(var, ()):
                    if isinstance(client, Apply) and client is not node:
                        prereqs[client] = None
        return {node: list(prereqs) for node, prereqs in before.items() if prereqs}

    def _check_input_aliasing(self, node: Apply, aliases: set[Variable]) -> None:
        destroyed = [i for i in self._destroyed_inputs(node) if node.inputs[i] in aliases]
        tolerate_same = getattr(node.op, "destroyhandler_tolerate_same", ())
        tolerate_aliased = getattr(node.op, "destroyhandler_tolerate_aliased", ())
        for d in destroyed:
            same_ok = {b for a, b in tolerate_same if a == d} | {d}
            alias_ok = {b for a, b in tolerate_aliased if a == d}
            for j, inp in enumerate(node.inputs):
                if j == d or j in alias_ok or inp not in aliases:
                    continue
                if j in same_ok and inp is node.inputs[d]:
                    continue
                raise InconsistencyError(
                    f"{node} destroys its input {d} ({node.inputs[d]}) while reading an alias of "
                    f"it as input {j} ({inp}); the Op must declare destroyhandler_tolerate_same "
                    "or destroyhandler_tolerate_aliased to allow it"
                )

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise :class:`~opweave.graph.utils.InconsistencyError` if the graph breaks a rule.

        See the class docstring for the rules. Checking that the destroyers can be
        scheduled after the readers of what they destroy takes a sort of the whole graph,
        unless :attr:`order_hint` is set: a caller that keeps a topological order of the
        graph's data dependencies (a pass that only swaps nodes for variants reading the
        same inputs, giving each the position of the node it replaces) sets it, and a graph
        whose ordering constraints all go forward in that order needs no sort.
        """
        if not self.destroyers_set:
            self._validated()
            return
        droot, impact, root_destroyer = self.refresh_droot_impact()
        hint = self.order_hint
        if (
            hint is not None
            and not self._outputs_changed
            and not self._other_orderings(fgraph)
            and self._touched_respect(fgraph, hint, droot, impact, root_destroyer)
        ):
            self._validated()
            return
        for root, node in root_destroyer.items():
            for var in (root, *impact[root]):
                why = self._protected_reason(fgraph, var)
                if why is not None:
                    what = f"{var}" if var is root else f"{var} (a view of {root})"
                    raise InconsistencyError(f"{node} destroys {what}, which {why}")
        orderings = fgraph.orderings()
        if hint is None or not _respects(hint, orderings):
            try:
                schedule = io_toposort(fgraph.inputs, fgraph.outputs, orderings)
            except ValueError as exc:
                raise InconsistencyError(
                    "the destroyers cannot be scheduled after the readers of what they "
                    f"destroy ({exc})"
                ) from None
            if hint is not None:
                # The graph is valid, but in another order than the hint: from now on the
                # hint is that order, so that every constraint accepted so far goes forward
                # in it (the premise of the check of touched nodes alone).
                hint.clear()
                hint.update((node, at) for at, node in enumerate(schedule))
        self._validated()

    def _validated(self) -> None:
        self._touched.clear()
        self._outputs_changed = False

    def _other_orderings(self, fgraph: FunctionGraph) -> bool:
        """Does another feature of ``fgraph`` add ordering constraints of its own?"""
        return any(
            f is not self and type(f).orderings is not Feature.orderings
            for f in fgraph._features
            if hasattr(type(f), "orderings")
        )

    def _touched_respect(
        self,
        fgraph: FunctionGraph,
        order: dict[Apply, int],
        droot: dict[Variable, Variable],
        impact: dict[Variable, set[Variable]],
        root_destroyer: dict[Variable, Apply],
    ) -> bool:
        """Check only the alias sets the nodes changed since the last validation touch.

        A touched node can break a rule of the class docstring only for a destroyed alias
        set it reads, writes or extends (a new view of a destroyed value makes the view's
        readers readers of that value, though they were not touched themselves). For each
        such set, every rule is checked as :meth:`validate` would: what is destroyed is
        not protected, its destroyer does not read it through another input, and all its
        other readers come before the destroyer in ``order``. ``False`` sends
        :meth:`validate` to the full check, which then names the broken rule.
        """
        roots: dict[Variable, None] = {}
        for node in self._touched:
            if node not in fgraph.apply_nodes:
                continue
            if order.get(node) is None:
                return False
            if node in self.destroyers_set:
                for idx in self._destroyed_inputs(node):
                    root = droot.get(node.inputs[idx])
                    if root is None or root_destroyer.get(root) is not node:
                        return False
            for var in (*node.inputs, *node.outputs):
                root = droot.get(var)
                if root is not None:
                    roots[root] = None
        for root in roots:
            destroyer = root_destroyer.get(root)
            if destroyer is None:
                return False
            at = order.get(destroyer)
            if at is None:
                return False
            aliases = {root} | impact[root]
            if any(self._protected_reason(fgraph, var) for var in aliases):
                return False
            try:
                self._check_input_aliasing(destroyer, aliases)
            except InconsistencyError:
                return False
            for var in aliases:
                for client, _ in fgraph.clients.get(var, ()):
                    if isinstance(client, Apply) and client is not destroyer:
                        before = order.get(client)
                        if before is None or before >= at:
                            return False
        return True


def _respects(order: dict[Apply, int], orderings: dict[Apply, list[Apply]]) -> bool:
    """True when every ordering constraint goes forward in ``order``.

    ``order`` must be a topological order of the graph's data dependencies; every node the
    constraints name must have a position, otherwise the answer is ``False``.
    """
    for node, prereqs in orderings.items():
        at = order.get(node)
        if at is None:
            return False
        for prereq in prereqs:
            before = order.get(prereq)
            if before is None or before >= at:
                return False
    return True
