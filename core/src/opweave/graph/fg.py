"""The :class:`FunctionGraph`, a graph with fixed inputs and outputs that rewrites edit,
and its immutable, hashable form, the :class:`FrozenFunctionGraph`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any

from opweave.configdefaults import config
from opweave.graph.basic import (
    AbstractApply,
    Apply,
    Constant,
    FrozenApply,
    NominalVariable,
    Variable,
    _plain_copy,
    _reduce_after_ancestors,
    clone_get_equiv,
)
from opweave.graph.op import Op
from opweave.graph.trace import inherit_stack_trace
from opweave.graph.traversal import graph_inputs, io_toposort, vars_between
from opweave.graph.utils import InconsistencyError, MissingInputError

if TYPE_CHECKING:
    from opweave.graph.features import DestroyHandler


class Output(Op):
    """The Op of a graph output's client entry: ``Output(idx)`` stands for "output ``idx``
    of the graph" (PyTensor's name and role, ``pytensor.graph.fg.Output``).

    It is never computed: it only lets code that walks the clients of a variable read
    ``client.op`` on every entry, outputs included.

    Parameters
    ----------
    idx
        The output's position.
    """

    __props__ = ("idx",)

    def __init__(self, idx: int) -> None:
        self.idx = idx

    def make_node(self, var: Variable) -> Apply:
        """One input, the output variable; no outputs."""
        return Apply(self, [var], [])

    def __str__(self) -> str:
        return f"output[{self.idx}]"


class OutputClient(str):
    """The client entry of a graph output: the string ``"output"`` (what opweave's
    bookkeeping compares with), carrying PyTensor's view of it as a node: ``op`` is
    :class:`Output` ``(idx)``, ``inputs`` is ``[var]`` and ``outputs`` is empty.

    Parameters
    ----------
    var
        The output variable.
    idx
        Its position among the graph's outputs.
    """

    op: Output
    inputs: list[Variable]
    outputs: list[Variable]

    def __new__(cls, var: Variable, idx: int) -> OutputClient:
        entry = super().__new__(cls, "output")
        entry.op = Output(idx)
        entry.inputs = [var]
        entry.outputs = []
        return entry

    def __reduce__(self) -> tuple[Any, ...]:
        return (OutputClient, (self.inputs[0], self.op.idx))


#: A client is ``(node, input index)``; an output's client is ``(OutputClient, output
#: index)``, whose first item equals ``"output"``.
ClientNode = Apply | str
Client = tuple[ClientNode, int]
#: PyTensor's name for :data:`Client`.
ClientType = Client


class AbstractFunctionGraph(ABC):
    """The read-only interface of :class:`FunctionGraph` and :class:`FrozenFunctionGraph`
    (PyTensor's name and contract): ``inputs``, ``outputs``, ``apply_nodes``,
    ``variables``, ``clients`` and :meth:`toposort`.

    Both graph classes are registered as its virtual subclasses, so
    ``isinstance(fgraph, AbstractFunctionGraph)`` holds for either.
    """

    inputs: Sequence[Variable]
    outputs: Sequence[Variable]
    apply_nodes: AbstractSet[Any]
    variables: AbstractSet[Variable]
    clients: dict[Variable, list[Client]]

    @abstractmethod
    def toposort(self) -> Sequence[Any]:
        """The graph's nodes, each after the nodes computing its inputs."""


class FunctionGraph:
    """A graph between ``inputs`` and ``outputs``, with client tracking and features.

    Parameters
    ----------
    inputs
        The graph's inputs. Every root variable that is not a :class:`Constant` must
        be among them, or a :class:`MissingInputError` names it.
    outputs
        The graph's outputs.
    features
        :class:`~opweave.graph.features.Feature` objects to attach.
    clone
        Work on a copy of the graph (the default), so the user's graph is untouched.
    update_mapping
        ``{output index: input index}`` for outputs that update inputs (shared variables).
    copy_inputs, copy_orphans, memo, clone_inner_graphs
        With ``clone``: passed to :func:`~opweave.graph.basic.clone_get_equiv` (``memo``,
        a pre-filled old-to-new map it respects and completes; ``clone_inner_graphs``,
        copy the inner graphs of ``Scan`` and ``OpFromGraph`` nodes too).
    """

    if TYPE_CHECKING:
        # Installed by features while they are attached (test with ``hasattr``):
        # History
        checkpoint: Callable[[], int]
        revert: Callable[[int], None]
        # Validator
        validate: Callable[[], None]
        consistent: Callable[[], bool]
        # ReplaceValidate: (var, new_var), (pairs) and (pairs, remove), each with
        # ``reason=`` and ``import_missing=``
        replace_validate: Callable[..., None]
        replace_all_validate: Callable[..., None]
        replace_all_validate_remove: Callable[..., None]
        # DestroyHandler
        destroy_handler: DestroyHandler
        destroyers: Callable[[Variable], list[Apply]]
        has_destroyers: Callable[[Iterable[Variable]], bool]

    def __init__(
        self,
        inputs: Sequence[Variable] | None = None,
        outputs: Sequence[Variable] | None = None,
        features: Iterable[Any] | None = None,
        clone: bool = True,
        update_mapping: dict[int, int] | None = None,
        copy_inputs: bool = True,
        copy_orphans: bool = True,
        memo: dict[Any, Any] | None = None,
        clone_inner_graphs: bool = False,
    ) -> None:
        if outputs is None:
            raise ValueError("No outputs specified: FunctionGraph needs its outputs")
        outputs = list(outputs)
        if inputs is None:
            inputs = [
                v for v in graph_inputs(outputs) if not isinstance(v, Constant | NominalVariable)
            ]
        inputs = list(inputs)
        for var in list(inputs) + outputs:
            if not isinstance(var, Variable):
                raise TypeError(f"FunctionGraph inputs and outputs must be Variables, got {var!r}")
        if len(set(inputs)) != len(inputs):
            raise ValueError("the same variable appears twice among the inputs")
        if clone:
            equiv = clone_get_equiv(
                inputs,
                outputs,
                copy_inputs=copy_inputs,
                copy_orphans=copy_orphans,
                memo=memo,
                clone_inner_graphs=clone_inner_graphs,
            )
            inputs = [equiv[i] for i in inputs]
            outputs = [equiv[o] for o in outputs]
            self.equiv: dict[Any, Any] | None = equiv
        else:
            self.equiv = None
        self._features: list[Any] = []
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set()
        self.clients: dict[Variable, list[Client]] = {}
        self.inputs: list[Variable] = []
        self.outputs: list[Variable] = []
        self.update_mapping = dict(update_mapping or {})
        self.profile = None
        for inp in inputs:
            self.add_input(inp)
        for out in outputs:
            self.add_output(out, reason="init")
        for feature in features or ():
            self.attach_feature(feature)

    # ------------------------------------------------------------------ building

    def add_input(self, var: Variable, check: bool = True) -> None:
        """Add ``var`` as an input."""
        if check and var in self.inputs:
            return
        if var.owner is not None:
            raise ValueError(
                f"input {var} is computed by {var.owner}; inputs must be roots. One of the "
                "provided inputs is the output of an already existing node. If that is okay, "
                "either discard that input's owner or use graph.clone."
            )
        self.inputs.append(var)
        self.setup_var(var)
        self.variables.add(var)

    def add_output(
        self, var: Variable, reason: str | None = None, import_missing: bool = False
    ) -> None:
        """Add ``var`` as an output, importing what it needs.

        Parameters
        ----------
        var
            The new output.
        reason
            Passed to the features' callbacks.
        import_missing
            Add the root variables ``var`` needs that are not inputs yet as new inputs,
            instead of raising :class:`MissingInputError`.
        """
        self.outputs.append(var)
        try:
            self._import_replacement(var, reason, import_missing)
        except MissingInputError:
            self.outputs.pop()
            raise
        index = len(self.outputs) - 1
        self.clients[var].append((OutputClient(var, index), index))

    def setup_var(self, var: Variable) -> None:
        """Start tracking the clients of ``var``."""
        self.clients.setdefault(var, [])

    def get_clients(self, var: Variable) -> list[Client]:
        """Return the ``(node, index)`` pairs using ``var``."""
        return self.clients.get(var, [])

    def add_client(self, var: Variable, new_client: Client) -> None:
        """Record ``new_client`` (``(node, input index)``) as a client of ``var``."""
        self.clients.setdefault(var, []).append(new_client)

    def import_var(
        self, var: Variable, reason: str | None = None, import_missing: bool = False
    ) -> None:
        """Bring ``var`` (and what computes it) into the graph.

        A root variable that is neither a constant nor an input raises
        :class:`MissingInputError`, or, with ``import_missing``, becomes a new input.
        """
        if var.owner is not None and var.owner not in self.apply_nodes:
            self.import_node(var.owner, reason=reason, import_missing=import_missing)
        elif var.owner is None and var not in self.variables:
            if not isinstance(var, Constant | NominalVariable) and var not in self.inputs:
                why_null = getattr(var.type, "why_null", None)
                if why_null is not None:
                    raise TypeError(f"Computation graph contains a NaN. {why_null}")
                if import_missing:
                    self.add_input(var)
                    return
                raise MissingInputError(
                    f"input {var} (type {var.type}) is needed to compute the outputs but was "
                    "not provided",
                    variable=var,
                )
            self.setup_var(var)
            self.variables.add(var)

    def import_node(
        self,
        apply_node: Apply,
        check: bool = True,
        reason: str | None = None,
        import_missing: bool = False,
    ) -> None:
        """Import ``apply_node`` and every node it depends on that is not yet here.

        With ``check``, a root input of those nodes that is neither a constant nor in the
        graph raises :class:`MissingInputError`, or, with ``import_missing``, becomes a
        new input of the graph.
        """
        new_nodes = io_toposort(self.variables, apply_node.outputs)
        if check:
            for node in new_nodes:
                for var in node.inputs:
                    if (
                        var.owner is None
                        and not isinstance(var, Constant | NominalVariable)
                        and var not in self.variables
                    ):
                        if import_missing:
                            self.add_input(var)
                            continue
                        raise MissingInputError(
                            f"input {var} (type {var.type}) of {node} is needed to compute the "
                            "outputs but was not provided",
                            variable=var,
                        )
        for node in new_nodes:
            if node in self.apply_nodes:
                continue
            self.apply_nodes.add(node)
            node.tag.__dict__.setdefault("imported_by", []).append(str(reason))
            for out in node.outputs:
                self.setup_var(out)
                self.variables.add(out)
            for i, inp in enumerate(node.inputs):
                if inp not in self.variables:
                    self.setup_var(inp)
                    self.variables.add(inp)
                self.clients[inp].append((node, i))
            self.execute_callbacks("on_import", node, reason)

    def remove_client(self, var: Variable, client: Client, reason: str | None = None) -> None:
        """Drop ``client`` from ``var``'s clients, pruning what is no longer used."""
        removal_stack = [(var, client)]
        while removal_stack:
            var, client = removal_stack.pop()
            clients = self.clients.get(var, [])
            if client not in clients:
                continue  # already removed (by an earlier removal reaching it first)
            clients.remove(client)
            if clients or var in self.outputs or var in self.inputs:
                continue
            owner = var.owner
            if owner is None or owner not in self.apply_nodes:
                self.variables.discard(var)
                if owner is None:
                    del self.clients[var]
                continue
            if any(self.clients.get(out) for out in owner.outputs):
                continue
            if any(out in self.outputs for out in owner.outputs):
                continue
            self.apply_nodes.remove(owner)
            owner.tag.__dict__.setdefault("removed_by", []).append(str(reason))
            for out in owner.outputs:
                self.variables.discard(out)
                self.clients.pop(out, None)
            self.execute_callbacks("on_prune", owner, reason)
            for i, inp in enumerate(owner.inputs):
                removal_stack.append((inp, (owner, i)))

    # ------------------------------------------------------------------ editing

    def change_node_input(
        self,
        node: ClientNode,
        i: int,
        new_var: Variable,
        reason: str | None = None,
        import_missing: bool = False,
        check: bool = True,
    ) -> None:
        """Make input ``i`` of ``node`` (or output ``i`` if ``node == "output"``) ``new_var``."""
        if node == "output":
            old = self.outputs[i]
            # A more specific static shape is accepted, as for a node input (PyTensor's
            # outputs take it too: PyMC's initial point replaces its placeholders so).
            if check and old.type != new_var.type and not _is_super(old.type, new_var.type):
                raise TypeError(
                    f"cannot replace output {i} ({old}, type {old.type}) with {new_var} of type "
                    f"{new_var.type}"
                )
            self.outputs[i] = new_var
        else:
            assert isinstance(node, Apply)
            old = node.inputs[i]
            if old is new_var:
                return
            if check and old.type != new_var.type and not _is_super(old.type, new_var.type):
                raise TypeError(
                    f"cannot replace input {i} of {node} ({old}, type {old.type}) with "
                    f"{new_var} of type {new_var.type}"
                )
            node.inputs[i] = new_var
        self._import_replacement(new_var, reason, import_missing)
        self.clients[new_var].append((OutputClient(new_var, i) if node == "output" else node, i))
        self.remove_client(old, (node, i), reason=reason)
        self.execute_callbacks("on_change_input", node, i, old, new_var, reason)

    def _import_replacement(
        self, new_var: Variable, reason: str | None, import_missing: bool
    ) -> None:
        if new_var in self.variables:
            return
        if import_missing and new_var.owner is None and not isinstance(new_var, Constant):
            self.add_input(new_var)
            return
        try:
            self.import_var(new_var, reason=reason)
        except MissingInputError:
            if not import_missing:
                raise
            for var in _missing_roots(self, new_var):
                self.add_input(var)
            self.import_var(new_var, reason=reason)

    def replace(
        self,
        var: Variable,
        new_var: Variable,
        reason: str | None = None,
        verbose: bool | None = None,
        import_missing: bool = False,
    ) -> None:
        """Make every client of ``var`` use ``new_var`` instead.

        With ``verbose`` (default: the flag ``optimizer_verbose``), the replacement is
        printed on stdout, unless ``reason`` is among the comma-separated reasons of the
        flag ``optimizer_verbose_ignore``.
        """
        if verbose is None:
            verbose = config.optimizer_verbose
        if verbose:
            _print_replacement(var, new_var, reason)
        if var not in self.variables:
            return
        if var.type != new_var.type:
            new_var = var.type.filter_variable(new_var)
        if new_var.owner is not None and new_var not in self.variables:
            # A variable made by a rewrite computes what ``var`` did: it points at the line
            # that created ``var`` in an error report.
            inherit_stack_trace(var, new_var)
        for node, i in list(self.clients[var]):
            self.change_node_input(node, i, new_var, reason=reason, import_missing=import_missing)

    def replace_all(
        self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None, **kw: Any
    ) -> None:
        """Apply :meth:`replace` to each ``(var, new_var)`` pair."""
        for var, new_var in pairs:
            self.replace(var, new_var, reason=reason, **kw)

    # ------------------------------------------------------------------ removing

    def remove_node(self, node: Apply, reason: str | None = None) -> None:
        """Remove ``node``, everything computed from it, and what only it used.

        Nodes reading ``node``'s outputs are removed in turn, and so are the graph's
        outputs among them (:meth:`remove_output`); then each input of ``node`` loses
        ``node`` as a client, and a node computing it that no longer has any client is
        removed too. Each removed node is reported to the features' ``on_prune``. A node
        not in the graph is ignored.
        """
        if node not in self.apply_nodes:
            return
        self.apply_nodes.remove(node)
        removed_by = node.tag.__dict__.setdefault("removed_by", [])
        removed_by.append(str(reason))
        for out in node.outputs:
            self.variables.discard(out)
            clients = self.clients.pop(out, [])
            # Outputs first: removing the client nodes may renumber the outputs.
            for i in sorted((i for c, i in clients if c == "output"), reverse=True):
                self._drop_output(i)
            for client, _ in clients:
                if client != "output":
                    self.remove_node(client, reason=reason)  # type: ignore[arg-type]
        for i, inp in enumerate(node.inputs):
            if (node, i) in self.clients.get(inp, ()):
                self.remove_client(inp, (node, i), reason=reason)
        self.execute_callbacks("on_prune", node, reason)

    def remove_input(self, input_idx: int, reason: str | None = None) -> None:
        """Remove the input at ``input_idx`` and every node (and output) that uses it.

        ``update_mapping`` entries of the removed input are dropped and the others
        renumbered.
        """
        var = self.inputs.pop(input_idx)
        for client, _ in list(self.clients.get(var, ())):
            if client == "output":
                continue
            self.remove_node(client, reason=reason)  # type: ignore[arg-type]
        for i in sorted((i for c, i in self.clients.get(var, ()) if c == "output"), reverse=True):
            self.remove_output(i, reason=reason)
        self.variables.discard(var)
        self.clients.pop(var, None)
        self.update_mapping = {
            o: (i if i < input_idx else i - 1)
            for o, i in self.update_mapping.items()
            if i != input_idx
        }

    def remove_output(self, output_idx: int, reason: str | None = None) -> None:
        """Remove the output at ``output_idx``; what only it used leaves the graph.

        The later outputs move down one place (their ``("output", i)`` client entries and
        the ``update_mapping`` follow).
        """
        var = self.outputs[output_idx]
        self._drop_output(output_idx)
        self.remove_client(var, ("output", output_idx), reason=reason)

    def _drop_output(self, output_idx: int) -> None:
        """Take output ``output_idx`` out of ``outputs`` and renumber the later ones.

        The client entry ``("output", output_idx)`` is left to the caller.
        """
        later = self.outputs[output_idx + 1 :]
        for var in set(later):
            if var not in self.clients:
                continue
            self.clients[var] = [
                (OutputClient(var, i - 1), i - 1) if c == "output" and i > output_idx else (c, i)
                for c, i in self.clients[var]
            ]
        self.outputs.pop(output_idx)
        self.update_mapping = {
            (o if o < output_idx else o - 1): i
            for o, i in self.update_mapping.items()
            if o != output_idx
        }

    # ------------------------------------------------------------------ features

    def attach_feature(self, feature: Any) -> None:
        """Attach ``feature``; its ``on_attach(fgraph)`` runs now."""
        if feature in self._features:
            return
        attach = getattr(feature, "on_attach", None)
        if attach is not None:
            try:
                attach(self)
            except AlreadyThere:
                return
        self._features.append(feature)

    def remove_feature(self, feature: Any) -> None:
        """Detach ``feature``; its ``on_detach(fgraph)`` runs."""
        try:
            self._features.remove(feature)
        except ValueError:
            return
        detach = getattr(feature, "on_detach", None)
        if detach is not None:
            detach(self)

    @property
    def features(self) -> list[Any]:
        """The attached features, in attachment order."""
        return list(self._features)

    def execute_callbacks(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Call ``feature.<name>(self, *args)`` on every feature defining it."""
        for feature in self._features:
            fn = getattr(feature, name, None)
            if fn is not None:
                fn(self, *args, **kwargs)

    def collect_callbacks(self, name: str, *args: Any) -> dict[Any, Any]:
        """Return ``{feature: feature.<name>(self, *args)}`` for features defining it."""
        return {f: getattr(f, name)(self, *args) for f in self._features if hasattr(f, name)}

    # ------------------------------------------------------------------ queries

    def orderings(self) -> dict[Apply, list[Apply]]:
        """Extra ordering constraints from features: node -> nodes that must run first."""
        merged: dict[Apply, list[Apply]] = {}
        for feature in self._features:
            fn = getattr(feature, "orderings", None)
            if fn is None:
                continue
            for node, prereqs in fn(self).items():
                merged.setdefault(node, []).extend(prereqs)
        return merged

    def toposort(self) -> list[Apply]:
        """Return the nodes in an order that respects data flow and feature orderings."""
        if len(self.apply_nodes) < 2:
            return list(self.apply_nodes)
        return io_toposort(self.inputs, self.outputs, self.orderings())

    def check_integrity(self) -> None:
        """Raise :class:`InconsistencyError` if client bookkeeping is wrong."""
        nodes = set(io_toposort(self.inputs, self.outputs))
        if nodes != self.apply_nodes:
            raise InconsistencyError(
                "The following nodes are inappropriately cached: missing "
                f"{nodes - self.apply_nodes}, in excess {self.apply_nodes - nodes}"
            )
        for node in nodes:
            for i, var in enumerate(node.inputs):
                if (node, i) not in self.clients.get(var, []):
                    raise InconsistencyError(
                        f"Inconsistent clients list: {var} does not list ({node}, {i}) as a client"
                    )
        expected = set(vars_between(self.inputs, self.outputs))
        missing = expected - self.variables
        excess = self.variables - expected - set(self.inputs)
        if missing or excess:
            raise InconsistencyError(
                "The following variables are inappropriately cached: missing "
                f"{missing}, in excess {excess}"
            )
        for i, out in enumerate(self.outputs):
            if ("output", i) not in self.clients.get(out, []):
                raise InconsistencyError(f"output {i} is missing its client entry")

    def clone(self, check_integrity: bool = True) -> FunctionGraph:
        """Return a copy of this graph (features are not copied)."""
        return self.clone_get_equiv(check_integrity)[0]

    def clone_get_equiv(
        self, check_integrity: bool = True, attach_feature: bool = True
    ) -> tuple[FunctionGraph, dict[Any, Any]]:
        """Return a copy of this graph and the old-to-new map."""
        equiv = clone_get_equiv(self.inputs, self.outputs)
        new = FunctionGraph(
            [equiv[i] for i in self.inputs],
            [equiv[o] for o in self.outputs],
            clone=False,
            update_mapping=self.update_mapping,
        )
        if check_integrity:
            new.check_integrity()
        if attach_feature:
            for feature in self._features:
                clone_feature = getattr(feature, "clone", None)
                if clone_feature is not None:
                    new.attach_feature(clone_feature())
        return new, equiv

    def freeze(self) -> FrozenFunctionGraph:
        """An immutable, hashable copy of this graph (see :class:`FrozenFunctionGraph`).

        The order of :meth:`toposort` is baked in, so with a DestroyHandler attached the
        frozen graph keeps an order in which every destroyer runs after the readers of
        what it destroys.
        """
        return FrozenFunctionGraph.from_toposort(self.inputs, self.outputs, self.toposort())

    if TYPE_CHECKING:
        # Given by opweave.printing when it is imported (``import opweave`` does): the
        # printer builds on graphs.
        def dprint(self, **kwargs: Any) -> Any:
            """:func:`~opweave.printing.debugprint` of this graph; ``kwargs`` go to it."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle (and deep-copy) the graph's nodes first, in topological order, then the
        rest (features, clients ...), which then only refers to saved nodes: neither the
        depth of the recursion nor the work grows with the depth of the graph. The graph
        it was cloned from (``equiv``'s keys) is saved the same way."""
        originals = [v for v in (getattr(self, "equiv", None) or ()) if isinstance(v, Variable)]
        return _reduce_after_ancestors(self, [*self.outputs, *originals], protocol)

    def __copy__(self) -> FunctionGraph:
        """A shallow copy (``copy.copy``), as for any object; the graph is not walked."""
        return _plain_copy(self)

    def __contains__(self, item: object) -> bool:
        """True for a variable or an Apply node of the graph."""
        if isinstance(item, Variable):
            return item in self.variables
        if isinstance(item, AbstractApply):
            return item in self.apply_nodes
        raise TypeError(
            f"a FunctionGraph contains Variables and Apply nodes, not {type(item).__name__}"
        )

    def __str__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        outs = ", ".join(str(o) for o in self.outputs)
        return f"FunctionGraph([{ins}] -> [{outs}])"

    def __repr__(self) -> str:
        return str(self)


class FrozenFunctionGraph:
    """An immutable, hashable function graph (an Op's inner graph, a cache key).

    Its inputs are :class:`~opweave.graph.basic.NominalVariable` objects (input ``i`` of
    Type ``t`` is ``NominalVariable(i, t)``) and its nodes are interned
    :class:`~opweave.graph.basic.FrozenApply` nodes, so two frozen graphs computing the
    same thing in the same order from inputs of the same Types share their nodes: they
    are equal and hash alike, whatever variables they were built from.

    Build one with :meth:`FunctionGraph.freeze`, :meth:`from_io` or
    :meth:`from_toposort`; get an editable graph back with :meth:`unfreeze`, or the
    outputs rebuilt over given variables with :meth:`bind`.

    Parameters
    ----------
    inputs
        The nominal input variables.
    toposort
        The frozen nodes, in the order they run.
    outputs
        The output variables (outputs of those nodes, inputs, or constants).

    Examples
    --------
    >>> x, y = scalar.float64("x"), scalar.float64("y")
    >>> a = FunctionGraph([x, y], [scalar.add(x, y)]).freeze()
    >>> b = FunctionGraph([y, x], [scalar.add(y, x)]).freeze()
    >>> a == b and hash(a) == hash(b)
    True
    """

    def __init__(
        self,
        inputs: Sequence[Variable],
        toposort: Sequence[FrozenApply],
        outputs: Sequence[Variable],
    ) -> None:
        self._inputs = tuple(inputs)
        self._toposort = tuple(toposort)
        self._outputs = tuple(outputs)
        self._apply_nodes = frozenset(self._toposort)
        self._key = (self._inputs, tuple(_output_key(o) for o in self._outputs))
        self._variables: frozenset[Variable] | None = None
        self._clients: dict[Variable, list[Client]] | None = None

    # ------------------------------------------------------------------ building

    @classmethod
    def from_io(
        cls, inputs: Sequence[Variable], outputs: Sequence[Variable], dedup_nodes: bool = False
    ) -> FrozenFunctionGraph:
        """Freeze the graph between ``inputs`` and ``outputs`` in plain topological order.

        Parameters
        ----------
        dedup_nodes
            Fold equal nodes into one (no order is baked in). Only for graphs without
            in-place Ops: two equal nodes may be meant to write two different buffers.

        Raises
        ------
        ValueError
            If the outputs need a root that is neither an input nor a constant.
        """
        return cls._freeze(inputs, outputs, io_toposort(inputs, outputs), dedup_nodes)

    @classmethod
    def from_structural_inputs(
        cls, inputs: Sequence[Variable], outputs: Sequence[Variable]
    ) -> FrozenFunctionGraph:
        """Freeze ``outputs`` with ``inputs`` as the inputs, where an input may be an
        intermediate expression (PyTensor's name and contract).

        An input computed by a node stands for every sub-expression of ``outputs`` equal
        to it in structure (same Ops on the same roots), not only for itself; an input
        that ``outputs`` do not contain is a dead input. The inputs keep their order.

        Raises
        ------
        ValueError
            If ``outputs`` need a root that is neither among ``inputs`` nor a constant.
        """
        roots = [v for v in graph_inputs([*inputs, *outputs]) if not isinstance(v, Constant)]
        # Freezing inputs and outputs together with folded nodes makes each intermediate
        # input the same object as its occurrences in the outputs.
        interned = cls.from_io(roots, [*inputs, *outputs], dedup_nodes=True)
        n_inputs = len(inputs)
        return cls.from_io(
            interned.outputs[:n_inputs], interned.outputs[n_inputs:], dedup_nodes=True
        )

    @classmethod
    def from_toposort(
        cls,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        toposort: Sequence[AbstractApply],
    ) -> FrozenFunctionGraph:
        """Freeze the graph, baking in ``toposort`` as the order of its nodes.

        Raises
        ------
        ValueError
            If the outputs need a root that is neither an input nor a constant.
        """
        return cls._freeze(inputs, outputs, toposort, dedup_nodes=False)

    @classmethod
    def _freeze(
        cls,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        toposort: Sequence[AbstractApply],
        dedup_nodes: bool,
    ) -> FrozenFunctionGraph:
        nominal = tuple(NominalVariable(i, inp.type) for i, inp in enumerate(inputs))
        memo: dict[Variable, Variable] = dict(zip(inputs, nominal, strict=True))

        def resolve(var: Variable, output: bool = False) -> Variable:
            found = memo.get(var)
            if found is not None:
                return found
            if isinstance(var, Constant):
                return var
            if output:
                raise ValueError(
                    f"cannot freeze the graph: output {var} (Type {var.type}) could not be "
                    "mapped: it is neither an input, a constant, nor computed from the inputs"
                )
            raise ValueError(
                f"cannot freeze the graph: {var} (Type {var.type}) is needed but is neither "
                f"an input, a constant, nor computed from the inputs (Orphan variable: {var})"
            )

        nodes: list[FrozenApply] = []
        for position, node in enumerate(toposort):
            frozen = FrozenApply(
                node.op,
                [resolve(i) for i in node.inputs],
                [o.type for o in node.outputs],
                -1 if dedup_nodes else position,
            )
            nodes.append(frozen)
            memo.update(zip(node.outputs, frozen.outputs, strict=True))
        return cls(nominal, nodes, [resolve(o, output=True) for o in outputs])

    # ------------------------------------------------------------------ the graph

    @property
    def inputs(self) -> tuple[Variable, ...]:
        """The nominal inputs."""
        return self._inputs

    @property
    def outputs(self) -> tuple[Variable, ...]:
        """The outputs."""
        return self._outputs

    @property
    def apply_nodes(self) -> frozenset[FrozenApply]:
        """The nodes."""
        return self._apply_nodes

    def toposort(self) -> tuple[FrozenApply, ...]:
        """The nodes in the order baked in."""
        return self._toposort

    @property
    def variables(self) -> frozenset[Variable]:
        """Every variable of the graph."""
        if self._variables is None:
            self._variables = frozenset(vars_between(self._inputs, self._outputs)) | set(
                self._inputs
            )
        return self._variables

    @property
    def clients(self) -> dict[Variable, list[Client]]:
        """``{variable: [(node, input index) or ("output", output index), ...]}`` (a copy)."""
        if self._clients is None:
            clients: dict[Variable, list[Client]] = {v: [] for v in self.variables}
            for node in self._toposort:
                for i, inp in enumerate(node.inputs):
                    clients[inp].append((node, i))  # type: ignore[arg-type]
            for i, out in enumerate(self._outputs):
                clients[out].append((OutputClient(out, i), i))
            self._clients = clients
        return {v: list(c) for v, c in self._clients.items()}

    def __contains__(self, item: object) -> bool:
        """True for a variable or a node of the graph."""
        return item in self.variables or item in self._apply_nodes

    # ------------------------------------------------------------------ thawing

    def bind(
        self, replace: Sequence[Variable] | dict[Variable, Variable], *, return_memo: bool = False
    ) -> Any:
        """The outputs rebuilt, with fresh editable nodes, over the given input variables.

        Parameters
        ----------
        replace
            One variable per input, in order, or ``{nominal input: variable}``.
        return_memo
            Also return the map from each frozen node and variable to its rebuilt one.

        Returns
        -------
        list of Variable, or (list, dict) with ``return_memo``.

        Raises
        ------
        ValueError
            If a sequence of the wrong length is given.
        KeyError
            If an input the outputs need has no replacement.
        """
        if isinstance(replace, dict):
            memo: dict[Any, Any] = dict(replace)
        else:
            replace = list(replace)
            if len(replace) != len(self._inputs):
                raise ValueError(
                    f"bind: the graph has {len(self._inputs)} inputs, got {len(replace)} variables"
                )
            memo = dict(zip(self._inputs, replace, strict=True))
        for node in self._toposort:
            args = []
            for inp in node.inputs:
                if inp not in memo:
                    if not isinstance(inp, Constant):
                        raise KeyError(f"bind: no replacement for the input {inp}")
                    memo[inp] = inp
                args.append(memo[inp])
            new = Apply(node.op, args, [o.type() for o in node.outputs])
            memo[node] = new
            memo.update(zip(node.outputs, new.outputs, strict=True))
        for out in self._outputs:
            if out not in memo:
                if not isinstance(out, Constant):
                    raise KeyError(f"bind: no replacement for the input {out}")
                memo[out] = out
        outputs = [memo[o] for o in self._outputs]
        return (outputs, memo) if return_memo else outputs

    def unfreeze(self, *, return_memo: bool = False) -> Any:
        """An editable :class:`FunctionGraph` computing the same, over fresh inputs.

        With ``return_memo``, also the map from frozen nodes and variables to new ones.
        """
        fresh = [inp.type() for inp in self._inputs]
        outputs, memo = self.bind(dict(zip(self._inputs, fresh, strict=True)), return_memo=True)
        fgraph = FunctionGraph(fresh, outputs, clone=False)
        return (fgraph, memo) if return_memo else fgraph

    # ------------------------------------------------------------------ identity

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, FrozenFunctionGraph):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenFunctionGraph, (self._inputs, self._toposort, self._outputs))

    def __copy__(self) -> FrozenFunctionGraph:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenFunctionGraph:
        return self

    def __repr__(self) -> str:
        ins = ", ".join(str(i) for i in self._inputs)
        outs = ", ".join(str(o) for o in self._outputs)
        return f"FrozenFunctionGraph([{ins}] -> [{outs}])"


AbstractFunctionGraph.register(FunctionGraph)
AbstractFunctionGraph.register(FrozenFunctionGraph)


def _print_replacement(var: Variable, new_var: Variable, reason: str | None) -> None:
    """Print a replacement for ``optimizer_verbose``, unless its reason is ignored."""
    ignored = [r for r in config.optimizer_verbose_ignore.split(",") if r]
    if str(reason) in ignored:
        return
    print(
        f"rewriting: rewrite {reason} replaces {var} of {var.owner} with {new_var} of "
        f"{new_var.owner}"
    )


def _output_key(var: Variable) -> Any:
    """How an output takes part in a frozen graph's identity: constants by value."""
    return ("constant", var.signature()) if isinstance(var, Constant) else var


class AlreadyThere(Exception):
    """Raised by ``Feature.on_attach`` when an equivalent feature is already attached."""


def _missing_roots(fgraph: FunctionGraph, var: Variable) -> list[Variable]:
    return [
        v
        for v in graph_inputs([var], blockers=list(fgraph.variables))
        if v.owner is None and not isinstance(v, Constant) and v not in fgraph.variables
    ]


def _is_super(general: Any, specific: Any) -> bool:
    """Whether a variable of Type ``specific`` may stand where ``general`` is expected (a
    node input: a more specific static shape, as PyTensor allows)."""
    is_super = getattr(general, "is_super", None)
    return bool(is_super is not None and is_super(specific))
