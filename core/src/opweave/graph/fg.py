"""The :class:`FunctionGraph`: a graph with fixed inputs and outputs that rewrites edit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from opweave.graph.basic import (
    Apply,
    Constant,
    Variable,
    clone_get_equiv,
    graph_inputs,
    io_toposort,
)
from opweave.graph.utils import InconsistencyError, MissingInputError

#: A client is ``(node, input index)``; an output's client is ``("output", output index)``.
ClientNode = Apply | str
Client = tuple[ClientNode, int]


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
    """

    def __init__(
        self,
        inputs: Sequence[Variable] | None = None,
        outputs: Sequence[Variable] | None = None,
        features: Iterable[Any] | None = None,
        clone: bool = True,
        update_mapping: dict[int, int] | None = None,
        copy_inputs: bool = True,
        copy_orphans: bool = True,
    ) -> None:
        if outputs is None:
            raise ValueError("FunctionGraph needs its outputs")
        outputs = list(outputs)
        if inputs is None:
            inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
        inputs = list(inputs)
        for var in list(inputs) + outputs:
            if not isinstance(var, Variable):
                raise TypeError(f"FunctionGraph inputs and outputs must be Variables, got {var!r}")
        if len(set(inputs)) != len(inputs):
            raise ValueError("the same variable appears twice among the inputs")
        if clone:
            equiv = clone_get_equiv(
                inputs, outputs, copy_inputs=copy_inputs, copy_orphans=copy_orphans
            )
            inputs = [equiv[i] for i in inputs]  # type: ignore[misc]
            outputs = [equiv[o] for o in outputs]  # type: ignore[misc]
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
            raise ValueError(f"input {var} is computed by {var.owner}; inputs must be roots")
        self.inputs.append(var)
        self.setup_var(var)
        self.variables.add(var)

    def add_output(self, var: Variable, reason: str | None = None) -> None:
        """Add ``var`` as an output, importing what it needs."""
        self.outputs.append(var)
        self.import_var(var, reason=reason)
        self.clients[var].append(("output", len(self.outputs) - 1))

    def setup_var(self, var: Variable) -> None:
        """Start tracking the clients of ``var``."""
        self.clients.setdefault(var, [])

    def get_clients(self, var: Variable) -> list[Client]:
        """Return the ``(node, index)`` pairs using ``var``."""
        return self.clients.get(var, [])

    def import_var(self, var: Variable, reason: str | None = None) -> None:
        """Bring ``var`` (and what computes it) into the graph."""
        if var.owner is not None and var.owner not in self.apply_nodes:
            self.import_node(var.owner, reason=reason)
        elif var.owner is None and var not in self.variables:
            if not isinstance(var, Constant) and var not in self.inputs:
                raise MissingInputError(
                    f"input {var} (type {var.type}) is needed to compute the outputs but was "
                    "not provided",
                    variable=var,
                )
            self.setup_var(var)
            self.variables.add(var)

    def import_node(self, apply_node: Apply, check: bool = True, reason: str | None = None) -> None:
        """Import ``apply_node`` and every node it depends on that is not yet here."""
        new_nodes = io_toposort(self.variables, apply_node.outputs)
        if check:
            for node in new_nodes:
                for var in node.inputs:
                    if (
                        var.owner is None
                        and not isinstance(var, Constant)
                        and var not in self.variables
                    ):
                        raise MissingInputError(
                            f"input {var} (type {var.type}) of {node} is needed to compute the "
                            "outputs but was not provided",
                            variable=var,
                        )
        for node in new_nodes:
            if node in self.apply_nodes:
                continue
            self.apply_nodes.add(node)
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
            clients = self.clients[var]
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
            if check and old.type != new_var.type:
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
            if check and old.type != new_var.type:
                raise TypeError(
                    f"cannot replace input {i} of {node} ({old}, type {old.type}) with "
                    f"{new_var} of type {new_var.type}"
                )
            node.inputs[i] = new_var
        self._import_replacement(new_var, reason, import_missing)
        self.clients[new_var].append((node, i))
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
        """Make every client of ``var`` use ``new_var`` instead."""
        if var not in self.variables:
            return
        if var.type != new_var.type:
            new_var = var.type.filter_variable(new_var)
        for node, i in list(self.clients[var]):
            self.change_node_input(node, i, new_var, reason=reason, import_missing=import_missing)

    def replace_all(
        self, pairs: Iterable[tuple[Variable, Variable]], reason: str | None = None, **kw: Any
    ) -> None:
        """Apply :meth:`replace` to each ``(var, new_var)`` pair."""
        for var, new_var in pairs:
            self.replace(var, new_var, reason=reason, **kw)

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
            raise InconsistencyError("the node set does not match the graph")
        for node in nodes:
            for i, var in enumerate(node.inputs):
                if (node, i) not in self.clients.get(var, []):
                    raise InconsistencyError(f"{var} does not list ({node}, {i}) as a client")
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

    def __str__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        outs = ", ".join(str(o) for o in self.outputs)
        return f"FunctionGraph([{ins}] -> [{outs}])"

    def __repr__(self) -> str:
        return str(self)


class AlreadyThere(Exception):
    """Raised by ``Feature.on_attach`` when an equivalent feature is already attached."""


def _missing_roots(fgraph: FunctionGraph, var: Variable) -> list[Variable]:
    return [
        v
        for v in graph_inputs([var], blockers=list(fgraph.variables))
        if v.owner is None and not isinstance(v, Constant) and v not in fgraph.variables
    ]
