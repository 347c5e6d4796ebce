""":class:`Composite`: one scalar Op made of a graph of scalar Ops (the unit of loop fusion)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from opweave.graph.basic import Apply, Constant, Variable, clone_replace, io_toposort
from opweave.graph.fg import FunctionGraph
from opweave.graph.type import DisconnectedType, NullType
from opweave.scalar._typing import scalar_out, scalar_var
from opweave.scalar.basic import (
    ScalarInnerGraphOp,
    ScalarOp,
    add,
    as_scalar,
    disconnected_grad,
    identity,
    zero_grad,
)
from opweave.scalar.type import ScalarType

#: Graphs with more nodes than this print as ``Composite{...}``.
_MAX_PRINTED_NODES = 10


class _CopyState:
    """Shared tables of one graph copy: merged nodes and deduplicated constants."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[Any, ...], list[Variable]] = {}
        self.constants: dict[tuple[Any, ...], Constant] = {}

    def constant(self, c: Constant) -> Constant:
        key = _constant_key(c)
        return self.constants.setdefault(key, c)


def _constant_key(c: Constant) -> tuple[Any, ...]:
    data = c.data
    tobytes = getattr(data, "tobytes", None)
    return (c.type, tobytes() if tobytes else repr(data))


def _copy_graph(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    new_inputs: Sequence[Variable],
    state: _CopyState,
) -> list[Variable]:
    """Rebuild ``outputs`` on ``new_inputs``, merging equal nodes and inlining Composites."""
    memo: dict[Variable, Variable] = dict(zip(inputs, new_inputs, strict=True))

    def lookup(var: Variable) -> Variable:
        if var in memo:
            return memo[var]
        if isinstance(var, Constant):
            memo[var] = state.constant(var)
            return memo[var]
        raise ValueError(
            f"the graph given to Composite needs {var} (type {var.type}), which is neither one "
            f"of the Composite's inputs nor a constant"
        )

    for node in io_toposort(inputs, outputs):
        if not isinstance(node.op, ScalarOp):
            raise TypeError(f"a Composite may only contain scalar Ops, got {node.op} in {node}")
        args = [lookup(v) for v in node.inputs]
        outs: list[Variable] | None
        if isinstance(node.op, Composite):
            outs = _copy_graph(node.op.inputs, node.op.outputs, args, state)
        else:
            key = (node.op, tuple(id(a) for a in args))
            outs = state.nodes.get(key)
            if outs is None:
                # ``args`` have the Types of ``node.inputs`` (the copies of the inputs, shared
                # constants, copied outputs), so the node is rebuilt without checking them.
                fresh = [o.type.make_variable(o.name) for o in node.outputs]
                outs = Apply(node.op, args, fresh).outputs
                state.nodes[key] = outs
        for old, new in zip(node.outputs, outs, strict=True):
            memo[old] = new
    return [lookup(v) for v in outputs]


def _signature(
    inputs: Sequence[Variable], outputs: Sequence[Variable], nodes: Sequence[Apply]
) -> tuple[Any, ...]:
    """A hashable description of the graph's structure (independent of variable identity);
    ``nodes`` are the graph's nodes in execution order."""
    refs: dict[Variable, tuple[Any, ...]] = {v: ("i", k) for k, v in enumerate(inputs)}
    entries = []
    for n, node in enumerate(nodes):
        args = tuple(
            # an input that is not computed inside the graph is a constant
            refs[v] if v in refs else ("c", *_constant_key(cast(Constant, v)))
            for v in node.inputs
        )
        entries.append((node.op, args))
        for j, out in enumerate(node.outputs):
            refs[out] = ("n", n, j)
    return (
        tuple(v.type for v in inputs),
        tuple(entries),
        tuple(refs[v] for v in outputs),
    )


def _expression(var: Variable, names: dict[Variable, str]) -> str:
    """Render ``var``'s inner graph as an infix expression (``i0``, ``i1``... for inputs)."""
    if var in names:
        return names[var]
    if isinstance(var, Constant):
        return str(var.data)
    node = var.owner
    assert node is not None
    op = node.op
    args = [_expression(v, names) for v in node.inputs]
    infix = getattr(op, "infix_symbol", None)
    prefix = getattr(op, "prefix_symbol", None)
    if infix and len(args) >= 2:
        text = "(" + f" {infix} ".join(args) + ")"
    elif prefix and len(args) == 1:
        text = f"{prefix}{args[0]}"
    else:
        text = f"{op}({', '.join(args)})"
    if len(node.outputs) > 1:
        text += f"[{var.index}]"
    return text


class Composite(ScalarInnerGraphOp):
    """A scalar Op whose computation is a graph of scalar Ops.

    The graph between ``inputs`` and ``outputs`` is copied: equal nodes are merged,
    equal constants shared, nested Composites inlined, and an output that is an
    input, a constant or a repeated output is wrapped in :data:`identity` so that every
    output is computed by its own node. Two Composites are equal when their graphs
    have the same structure (names do not matter).

    Parameters
    ----------
    inputs
        The scalar variables the graph starts from (the Op's inputs, in order).
    outputs
        The scalar variables it computes (the Op's outputs, in order).
    name
        Printed name; by default the expression, e.g. ``Composite{((i0 + i1) * i2)}``.

    Attributes
    ----------
    inputs, outputs
        The Op's own copy of the inner graph.
    inputs_type, outputs_type
        The Types the Op takes and gives.

    Notes
    -----
    Attributes whose names start with ``_cache_`` are per-Op caches that backends may
    set (for instance a precompiled Python function); they are dropped when pickling.
    """

    def __init__(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        name: str | None = None,
    ) -> None:
        inputs, outputs = list(inputs), list(outputs)
        if not outputs:
            raise ValueError("a Composite needs at least one output")
        for var in inputs + outputs:
            if not isinstance(var, Variable) or not isinstance(var.type, ScalarType):
                raise TypeError(
                    "The fgraph of Composite must be exclusively composed of scalar operations: "
                    f"its inputs and outputs must be scalar variables, got {var}"
                )
        if len(set(inputs)) != len(inputs):
            raise ValueError("the same variable appears twice among the Composite's inputs")
        new_inputs = [v.type() for v in inputs]
        new_outputs = _copy_graph(inputs, outputs, new_inputs, _CopyState())
        seen: set[Variable] = set()
        for k, out in enumerate(new_outputs):
            if out.owner is None or out in seen:
                new_outputs[k] = scalar_out(identity(out))
            seen.add(new_outputs[k])
        super().__init__(None, name)
        self.inputs: list[Variable] = new_inputs
        self.outputs: list[Variable] = new_outputs
        self.nin = len(new_inputs)
        self.nout = len(new_outputs)
        self.inputs_type: tuple[ScalarType, ...] = tuple(scalar_var(v).type for v in new_inputs)
        self.outputs_type: tuple[ScalarType, ...] = tuple(scalar_var(v).type for v in new_outputs)
        nodes = io_toposort(new_inputs, new_outputs)
        self.__dict__["_cache_inner_nodes"] = nodes
        self._signature = _signature(new_inputs, new_outputs, nodes)
        self._hash = hash((Composite, self._signature))

    # ------------------------------------------------------------------ identity

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            type(self) is type(other)
            and self._hash == other._hash
            and self._signature == other._signature
        )

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        if self.name:
            return self.name
        text = self.__dict__.get("_cache_str")
        if text is None:
            nodes = len(self.inner_nodes())
            if len(self.outputs) > 1 or nodes > _MAX_PRINTED_NODES:  # as PyTensor names them
                text = "Composite{...}"
            else:
                names = {v: f"i{k}" for k, v in enumerate(self.inputs)}
                body = ", ".join(_expression(v, names) for v in self.outputs)
                text = f"Composite{{{body}}}"
            self.__dict__["_cache_str"] = text
        return text

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_cache_")}

    # ------------------------------------------------------------------ inner graph

    @property
    def inner_inputs(self) -> list[Variable]:
        """The inner graph's inputs."""
        return self.inputs

    @property
    def inner_outputs(self) -> list[Variable]:
        """The inner graph's outputs."""
        return self.outputs

    @property
    def fgraph(self) -> Any:
        """A :class:`~opweave.graph.fg.FunctionGraph` of (a copy of) the inner graph."""
        fgraph = self.__dict__.get("_cache_fgraph")
        if fgraph is None:
            fgraph = FunctionGraph(self.inputs, self.outputs, clone=True)
            self.__dict__["_cache_fgraph"] = fgraph
        return fgraph

    def inner_nodes(self) -> list[Apply]:
        """The inner Apply nodes in execution order (a new list each call)."""
        nodes = self.__dict__.get("_cache_inner_nodes")
        if nodes is None:
            nodes = io_toposort(self.inputs, self.outputs)
            self.__dict__["_cache_inner_nodes"] = nodes
        return list(nodes)

    def make_new_inplace(
        self,
        output_types_preference: Callable[..., Sequence[ScalarType]] | None = None,
        name: str | None = None,
    ) -> Composite:
        """An equal Composite (its output types are fixed by the graph)."""
        return Composite(self.inputs, self.outputs, name=name or self.name)

    # ------------------------------------------------------------------ nodes

    def output_types(self, types: Sequence[ScalarType]) -> tuple[ScalarType, ...]:
        """The inner outputs' Types, after checking ``types`` against the inner inputs'."""
        if tuple(types) != self.inputs_type:
            expected = ", ".join(map(str, self.inputs_type))
            got = ", ".join(map(str, types))
            raise TypeError(f"{self} expects inputs of types ({expected}), got ({got})")
        return self.outputs_type

    def make_node(self, *inputs: Any) -> Apply:
        """Apply the Composite; Python numbers become constants of the expected Types."""
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} input(s), got {len(inputs)}")
        args: list[Variable] = []
        for k, (x, t) in enumerate(zip(inputs, self.inputs_type, strict=True)):
            var: Variable
            if isinstance(x, Variable | Apply):
                var = as_scalar(x)
                if var.type != t:
                    raise TypeError(f"input {k} of {self} must have type {t}, got {var.type}")
            else:
                var = t.make_constant(t.filter(x))
            args.append(var)
        return Apply(
            self, args, [t() for t in self.output_types([scalar_var(a).type for a in args])]
        )

    # ------------------------------------------------------------------ gradients

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Back-propagate through the inner graph, then rebuild it on ``inputs``."""
        grads = _backprop(self.inputs, self.outputs, output_grads)
        result: list[Variable | None] = [None] * self.nin
        pending: list[tuple[int, Variable]] = []
        for k, inner in enumerate(self.inputs):
            g = grads.get(inner)
            if g is None:
                result[k] = disconnected_grad()
            elif isinstance(g.type, NullType):
                result[k] = g
            else:
                pending.append((k, g))
        if pending:
            rebuilt = clone_replace(
                [g for _, g in pending], replace=dict(zip(self.inputs, inputs, strict=True))
            )
            for (k, _), g in zip(pending, rebuilt, strict=True):
                result[k] = g
        return cast("list[Variable]", result)  # every input got its gradient above


def _accumulate(grads: dict[Variable, Variable], var: Variable, term: Variable) -> None:
    old = grads.get(var)
    if old is None or isinstance(term.type, NullType):
        grads[var] = term
    elif not isinstance(old.type, NullType):
        grads[var] = scalar_out(add(old, term))


def _backprop(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    output_grads: Sequence[Variable | None],
) -> dict[Variable, Variable]:
    """Reverse-mode gradients of a scalar graph: ``{variable: total gradient}``.

    Output gradients that are ``None`` or disconnected contribute nothing; a
    :class:`NullType` term makes the gradient of everything below it that term.
    """
    grads: dict[Variable, Variable] = {}
    for out, g in zip(outputs, output_grads, strict=True):
        if g is not None and not isinstance(g.type, DisconnectedType):
            _accumulate(grads, out, g)
    for node in reversed(io_toposort(inputs, outputs)):
        g_outs = [grads.get(o) for o in node.outputs]
        if all(g is None for g in g_outs):
            continue
        null = next((g for g in g_outs if g is not None and isinstance(g.type, NullType)), None)
        if null is not None:
            g_ins: Sequence[Variable | None] = [null] * len(node.inputs)
        else:
            filled = [g if g is not None else zero_grad(o) for g, o in zip(g_outs, node.outputs)]
            g_ins = node.op.L_op(node.inputs, node.outputs, filled)
        for var, g in zip(node.inputs, g_ins, strict=True):
            if g is None or isinstance(g.type, DisconnectedType) or isinstance(var, Constant):
                continue
            _accumulate(grads, var, g)
    return grads
