"""Graph objects (:class:`Variable`, :class:`Constant`, :class:`Apply`) and graph walking.

A graph is a bipartite DAG: :class:`Apply` nodes take :class:`Variable` inputs and own
:class:`Variable` outputs. A variable whose ``owner`` is ``None`` is a graph root: a free
input, a :class:`Constant`, or a shared variable.
"""

from __future__ import annotations

import copy as _copy
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opweave.graph.op import Op
    from opweave.graph.type import Type


class Scratchpad:
    """A free-form attribute bag (``var.tag``) for annotations on graph objects."""

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"scratchpad{{{items}}}"

    def __copy__(self) -> Scratchpad:
        new = Scratchpad()
        new.__dict__.update(self.__dict__)
        return new


class Node:
    """Common base of :class:`Apply` and :class:`Variable`."""

    def get_parents(self) -> list[Node]:
        """Return the nodes this node depends on directly."""
        raise NotImplementedError


class Apply(Node):
    """The application of an :class:`~opweave.graph.op.Op` to input variables.

    Parameters
    ----------
    op
        The operation applied.
    inputs
        The input variables, in the order the Op expects.
    outputs
        Fresh output variables (they must not have an owner yet); each gets
        ``owner = self`` and its position as ``index``.
    """

    def __init__(self, op: Op, inputs: Sequence[Variable], outputs: Sequence[Variable]) -> None:
        self.op = op
        self.inputs: list[Variable] = []
        self.tag = Scratchpad()
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                raise TypeError(
                    f"Apply input {i} of {op} must be a Variable, got {type(inp).__name__}: {inp!r}"
                )
            self.inputs.append(inp)
        self.outputs: list[Variable] = []
        for i, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(
                    f"Apply output {i} of {op} must be a Variable, got {type(out).__name__}"
                )
            if out.owner is None:
                out.owner = self
                out.index = i
            elif out.owner is not self or out.index != i:
                raise ValueError(f"output {i} of {op} already belongs to another Apply node")
            self.outputs.append(out)

    @property
    def out(self) -> Variable:
        """The default output (``op.default_output``, or the only output)."""
        do = getattr(self.op, "default_output", None)
        if do is not None:
            return self.outputs[do]
        if len(self.outputs) == 1:
            return self.outputs[0]
        raise ValueError(f"{self.op} has {len(self.outputs)} outputs and no default_output")

    @property
    def nin(self) -> int:
        """Number of inputs."""
        return len(self.inputs)

    @property
    def nout(self) -> int:
        """Number of outputs."""
        return len(self.outputs)

    def get_parents(self) -> list[Node]:
        """Return the input variables."""
        return list(self.inputs)

    def clone(self, clone_inner_graph: bool = False) -> Apply:
        """Return a copy with the same inputs and fresh (cloned) outputs."""
        new_node = _copy.copy(self)
        new_node.inputs = list(self.inputs)
        new_node.outputs = []
        new_node.tag = _copy.copy(self.tag)
        for i, out in enumerate(self.outputs):
            new_out = out.clone()
            new_out.owner = new_node
            new_out.index = i
            new_node.outputs.append(new_out)
        return new_node

    def clone_with_new_inputs(self, inputs: Sequence[Variable], strict: bool = True) -> Apply:
        """Return a node computing the same Op on ``inputs``.

        With ``strict`` the new inputs must have the same types as the old ones and the
        outputs keep their types; otherwise ``op.make_node`` builds the node anew.
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op} expects {len(self.inputs)} inputs, got {len(inputs)}")
        if strict and all(
            new.type == old.type for new, old in zip(inputs, self.inputs, strict=True)
        ):
            new_node = self.clone()
            new_node.inputs = list(inputs)
            return new_node
        if strict:
            for i, (new, old) in enumerate(zip(inputs, self.inputs, strict=True)):
                if new.type != old.type:
                    filtered = old.type.filter_variable(new)
                    inputs = list(inputs)
                    inputs[i] = filtered
            new_node = self.clone()
            new_node.inputs = list(inputs)
            return new_node
        return self.op.make_node(*inputs)

    def default_output(self) -> Variable:
        """Return the default output variable (see :attr:`out`)."""
        return self.out

    def __str__(self) -> str:
        ins = ", ".join(str(i) for i in self.inputs)
        return f"{self.op}({ins})"

    def __repr__(self) -> str:
        return str(self)


class Variable(Node):
    """A typed value slot in a graph.

    Parameters
    ----------
    type
        The :class:`~opweave.graph.type.Type` constraining the values.
    owner
        The :class:`Apply` node computing this variable, or ``None`` for a root.
    index
        The position of this variable in ``owner.outputs``.
    name
        A name used when printing.
    """

    __count__ = 0

    def __init__(
        self,
        type: Type,
        owner: Apply | None = None,
        index: int | None = None,
        name: str | None = None,
    ) -> None:
        if owner is not None and not isinstance(owner, Apply):
            raise TypeError(f"owner must be an Apply or None, got {owner!r}")
        if index is not None and not isinstance(index, int):
            raise TypeError(f"index must be an int or None, got {index!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {name!r}")
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = Scratchpad()
        self.auto_name = f"auto_{Variable.__count__}"
        Variable.__count__ += 1

    def get_parents(self) -> list[Node]:
        """Return ``[owner]`` or ``[]`` for a root."""
        return [self.owner] if self.owner is not None else []

    def clone(self, **kwargs: Any) -> Variable:
        """Return a new, ownerless Variable of the same type, name and tag.

        Keyword arguments override constructor arguments (``name=...``).
        """
        name = kwargs.pop("name", self.name)
        cp = self.__class__(self.type, None, None, name)
        cp.tag = _copy.copy(self.tag)
        return cp

    def eval(self, inputs_to_values: dict[Variable, Any] | None = None) -> Any:
        """Compile and evaluate this variable.

        Parameters
        ----------
        inputs_to_values
            Maps the free input variables of the graph to values. The compiled
            function is cached on the variable per set of inputs.

        Returns
        -------
        The computed value.
        """
        # late: compile (floor 6) builds on graph; eval() is a convenience that calls up
        from opweave.compile.function import function

        inputs_to_values = dict(inputs_to_values or {})
        inputs = tuple(sorted(inputs_to_values, key=id))
        cache = self.__dict__.setdefault("_fn_cache", {})
        fn = cache.get(inputs)
        if fn is None:
            fn = function(list(inputs), self)
            cache[inputs] = fn
        return fn(*(inputs_to_values[v] for v in inputs))

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if self.index == getattr(op, "default_output", None) or len(self.owner.outputs) == 1:
                return f"{op}.out"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self) -> str:
        return str(self)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.pop("_fn_cache", None)
        return state


class Constant(Variable):
    """A root variable with a fixed value.

    Parameters
    ----------
    type
        The constant's type; ``data`` is passed through ``type.filter``.
    data
        The value.
    name
        Optional name.
    """

    def __init__(self, type: Type, data: Any, name: str | None = None) -> None:
        super().__init__(type, None, None, name)
        self._data = type.filter(data)

    @property
    def data(self) -> Any:
        """The constant's value (read-only)."""
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        raise AttributeError("a Constant's data is read-only; make a new Constant instead")

    @property
    def value(self) -> Any:
        """Read-only access to the data."""
        return self._data

    @property
    def owner(self) -> None:  # type: ignore[override]
        """Always ``None``: constants are roots."""
        return None

    @owner.setter
    def owner(self, value: Apply | None) -> None:
        if value is not None:
            raise ValueError("a Constant cannot have an owner")

    def signature(self) -> tuple[Any, ...]:
        """A hashable key used to merge equal constants."""
        data = self._data
        try:
            hash(data)
            key: Any = data
        except TypeError:
            tobytes = getattr(data, "tobytes", None)
            key = (
                (getattr(data, "dtype", None), getattr(data, "shape", None), tobytes())
                if tobytes
                else id(data)
            )
        return (self.type, type(data).__name__, key)

    def equals(self, other: object) -> bool:
        """True if ``other`` is a Constant of the same type with an equal value."""
        if not isinstance(other, Constant) or other.type != self.type:
            return False
        return bool(self.type.values_eq(self._data, other._data))

    def clone(self, **kwargs: Any) -> Constant:
        """Return a new Constant sharing (not copying) the data."""
        cp = self.__class__.__new__(self.__class__)
        Variable.__init__(cp, self.type, None, None, kwargs.get("name", self.name))
        cp._data = self._data
        cp.tag = _copy.copy(self.tag)
        return cp

    def __str__(self) -> str:
        if self.name is not None:
            return self.name
        text = str(self._data)
        return text if len(text) <= 20 else text[:10] + "..." + text[-5:]


# --------------------------------------------------------------------- graph walking


def walk(
    nodes: Iterable[Node], expand: Callable[[Node], Iterable[Node] | None], bfs: bool = True
) -> Iterator[Node]:
    """Yield each node reachable from ``nodes`` through ``expand`` once."""
    queue: deque[Node] = deque(nodes)
    seen: set[int] = set()
    pop = queue.popleft if bfs else queue.pop
    while queue:
        node = pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        more = expand(node)
        if more:
            queue.extend(more)


def ancestors(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> Iterator[Variable]:
    """Yield every variable that ``graphs`` depend on, themselves included.

    Walking stops at variables in ``blockers``.
    """
    blocked = set(blockers or ())

    def expand(var: Node) -> list[Variable] | None:
        assert isinstance(var, Variable)
        if var in blocked or var.owner is None:
            return None
        return list(reversed(var.owner.inputs))

    yield from walk(graphs, expand, bfs=False)  # type: ignore[misc]


def graph_inputs(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> list[Variable]:
    """Return the root variables (no owner, or a blocker) that ``graphs`` depend on."""
    blocked = set(blockers or ())
    return [v for v in ancestors(graphs, blocked) if v.owner is None or v in blocked]


def vars_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> list[Variable]:
    """Return the variables on paths from ``ins`` to ``outs`` (both ends included)."""
    return list(ancestors(outs, ins))


def applys_between(ins: Iterable[Variable], outs: Iterable[Variable]) -> list[Apply]:
    """Return the Apply nodes between ``ins`` and ``outs``."""
    seen: dict[int, Apply] = {}
    for v in vars_between(ins, outs):
        if v.owner is not None and v not in ins:
            seen.setdefault(id(v.owner), v.owner)
    return list(seen.values())


def io_toposort(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    orderings: dict[Apply, list[Apply]] | None = None,
) -> list[Apply]:
    """Return the Apply nodes between ``inputs`` and ``outputs`` in a valid execution order.

    Parameters
    ----------
    inputs, outputs
        The graph's boundary.
    orderings
        Extra constraints: ``orderings[node]`` lists nodes that must run before ``node``.
    """
    inputs = list(inputs)
    input_set = set(inputs)
    orderings = orderings or {}
    order: list[Apply] = []
    done: set[int] = set()
    # Iterative post-order DFS over Apply nodes.
    stack: list[tuple[Apply, bool]] = []
    for out in outputs:
        if out.owner is not None and out not in input_set:
            stack.append((out.owner, False))
    visiting: set[int] = set()
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if key in done:
            continue
        if expanded:
            visiting.discard(key)
            done.add(key)
            order.append(node)
            continue
        if key in visiting:
            raise ValueError(f"the graph contains a cycle through {node}")
        visiting.add(key)
        stack.append((node, True))
        deps = [inp.owner for inp in node.inputs if inp.owner is not None and inp not in input_set]
        deps.extend(orderings.get(node, ()))
        for dep in reversed(deps):
            if id(dep) not in done:
                if id(dep) in visiting:
                    raise ValueError(f"the graph contains a cycle through {dep}")
                stack.append((dep, False))
    return order


def clone_get_equiv(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool = True,
    memo: dict[Node, Node] | None = None,
) -> dict[Node, Node]:
    """Clone the graph between ``inputs`` and ``outputs``; return the old-to-new map.

    Parameters
    ----------
    copy_inputs
        Clone the input variables too (otherwise they map to themselves).
    copy_orphans
        Clone constants and other roots that are not in ``inputs``.
    memo
        A pre-filled map whose entries are respected.
    """
    equiv: dict[Node, Node] = memo if memo is not None else {}
    for inp in inputs:
        if inp not in equiv:
            equiv[inp] = inp.clone() if copy_inputs else inp
    for node in io_toposort(inputs, outputs):
        for inp in node.inputs:
            if inp not in equiv:
                equiv[inp] = inp.clone() if copy_orphans else inp
        if node in equiv:
            continue
        new_node = node.clone_with_new_inputs([equiv[i] for i in node.inputs], strict=True)  # type: ignore[misc]
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs, strict=True):
            equiv.setdefault(old, new)
    for out in outputs:
        if out not in equiv:
            equiv[out] = out.clone() if copy_orphans else out
    return equiv


def clone(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    copy_inputs: bool = True,
    copy_orphans: bool | None = None,
) -> tuple[list[Variable], list[Variable]]:
    """Copy the graph between ``inputs`` and ``outputs``.

    Returns
    -------
    The new inputs and the new outputs.
    """
    if copy_orphans is None:
        copy_orphans = copy_inputs
    equiv = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [equiv[i] for i in inputs], [equiv[o] for o in outputs]  # type: ignore[misc]


def clone_replace(
    output: Variable | Sequence[Variable],
    replace: dict[Variable, Variable] | Sequence[tuple[Variable, Variable]] | None = None,
) -> Any:
    """Clone ``output``'s graph with the variables in ``replace`` substituted.

    Parameters
    ----------
    output
        One variable or a list of variables.
    replace
        ``{old: new}`` (or pairs). Each ``new`` must have a type compatible with ``old``.

    Returns
    -------
    The cloned variable, or list of variables, matching ``output``'s form.
    """
    items = list(replace.items()) if isinstance(replace, dict) else list(replace or [])
    outputs = [output] if isinstance(output, Variable) else list(output)
    memo: dict[Node, Node] = {}
    for old, new in items:
        if not isinstance(old, Variable) or not isinstance(new, Variable):
            raise TypeError("clone_replace: replacements must map Variables to Variables")
        memo[old] = old.type.filter_variable(new)
    roots = [v for v in graph_inputs(outputs) if v not in memo] + [old for old, _ in items]
    equiv = clone_get_equiv(roots, outputs, copy_inputs=False, copy_orphans=False, memo=memo)
    result = [equiv[o] for o in outputs]
    return result[0] if isinstance(output, Variable) else result


def is_in_ancestors(node: Apply, candidate: Apply) -> bool:
    """True if ``candidate`` is ``node`` or one of its ancestors."""
    for var in ancestors(node.outputs[:1] if node.outputs else node.inputs):
        if var.owner is candidate:
            return True
    return False


def equal_computations(xs: Sequence[Variable], ys: Sequence[Variable]) -> bool:
    """True if ``xs`` and ``ys`` compute the same thing structurally."""
    memo: dict[Variable, Variable] = {}

    def same(x: Variable, y: Variable) -> bool:
        if x is y:
            return True
        if memo.get(x) is y:
            return True
        if x.type != y.type:
            return False
        if isinstance(x, Constant) or isinstance(y, Constant):
            return isinstance(x, Constant) and x.equals(y)
        if x.owner is None or y.owner is None:
            return False
        if x.index != y.index or x.owner.op != y.owner.op:
            return False
        if len(x.owner.inputs) != len(y.owner.inputs):
            return False
        ok = all(same(a, b) for a, b in zip(x.owner.inputs, y.owner.inputs, strict=True))
        if ok:
            memo[x] = y
        return ok

    return len(xs) == len(ys) and all(same(x, y) for x, y in zip(xs, ys, strict=True))
