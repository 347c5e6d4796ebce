"""Graph walks that need no graph class: ancestors, roots, topological orders.

They follow ``owner`` and ``inputs`` only, so this module imports nothing from
:mod:`opweave.graph.basic` at run time, and :mod:`~opweave.graph.basic` builds on it
(``clone_get_equiv`` copies in topological order). :mod:`opweave.graph.traversal`, the
module PyTensor users import them from, gives them together with the walks that tell
variables, constants and nodes apart (``explicit_graph_inputs``, ``apply_depends_on``,
``variable_depends_on``, defined in :mod:`~opweave.graph.basic`).

Walks that return many values are generators, except the topological orders
:func:`io_toposort` and :func:`general_toposort` and :func:`truncated_graph_inputs`, which
return lists. Depth-first walks visit the inputs of a node from left to right, so
``graph_inputs([(x + y) * z])`` yields ``x, y, z``. Walking stops at *blockers*: a
blocker is yielded but what computes it is not visited.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Generator, Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from opweave.graph.basic import Apply, Variable

__all__ = [
    "ancestors",
    "apply_ancestors",
    "applys_between",
    "general_toposort",
    "get_var_by_name",
    "graph_inputs",
    "io_toposort",
    "orphans_between",
    "toposort",
    "toposort_with_orderings",
    "truncated_graph_inputs",
    "variable_ancestors",
    "vars_between",
    "walk",
    "walk_toposort",
]

T = TypeVar("T", bound=Hashable)


def walk(
    nodes: Iterable[T],
    expand: Callable[[T], Iterable[T] | None],
    bfs: bool = True,
    return_children: bool = False,
) -> Generator[Any, None, None]:
    """Yield each node reachable from ``nodes`` through ``expand``, once.

    Parameters
    ----------
    nodes
        Where to start.
    expand
        ``expand(node)`` returns the nodes to visit next from ``node`` (or ``None``).
    bfs
        Breadth-first (the default) or depth-first.
    return_children
        Yield ``(node, expand(node))`` pairs instead of nodes.
    """
    queue: deque[T] = deque(nodes)
    pop = queue.popleft if bfs else queue.pop
    seen: set[T] = set()
    while queue:
        node = pop()
        if node in seen:
            continue
        seen.add(node)
        children = expand(node)
        yield (node, children) if return_children else node
        if children:
            queue.extend(children)


def ancestors(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> Generator[Variable, None, None]:
    """Yield every variable ``graphs`` depend on, themselves included.

    The order is PyTensor's (code that seeds one random generator per root in this order
    draws the same numbers on both): a depth-first walk that starts from the last of
    ``graphs`` and, at each node, goes into its last input first.

    Parameters
    ----------
    graphs
        The variables to start from.
    blockers
        Variables at which the walk stops: they are yielded, what computes them is not.
    """
    blocked = frozenset(blockers or ())
    seen: set[Variable] = set()
    stack = list(graphs)
    while stack:
        var = stack.pop()
        if var in seen:
            continue
        seen.add(var)
        yield var
        owner = var.owner
        if owner is not None and var not in blocked:
            stack.extend(owner.inputs)


#: The name PyTensor gives :func:`ancestors` next to :func:`apply_ancestors`.
variable_ancestors = ancestors


def apply_ancestors(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> Generator[Apply, None, None]:
    """Yield the Apply nodes ``graphs`` depend on, each once.

    The owners of ``blockers`` are not yielded: a blocker counts as given.
    """
    blocked = frozenset(blockers or ())
    seen: set[Apply] = set()
    for var in ancestors(graphs, blocked):
        owner = var.owner
        if owner is not None and var not in blocked and owner not in seen:
            seen.add(owner)
            yield owner


def graph_inputs(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> Generator[Variable, None, None]:
    """Yield the roots (variables without an owner) that ``graphs`` depend on.

    Constants and shared variables are roots too; see
    :func:`~opweave.graph.traversal.explicit_graph_inputs` for the ones a function must be
    given.
    """
    return (var for var in ancestors(graphs, blockers) if var.owner is None)


def vars_between(
    ins: Iterable[Variable], outs: Iterable[Variable]
) -> Generator[Variable, None, None]:
    """Yield the variables of the part of the graph between ``ins`` and ``outs``.

    That is ``ins``, ``outs``, the orphans (see :func:`orphans_between`) and everything
    computed on the way, including the other outputs of the nodes crossed.
    """
    stop = frozenset(ins)

    def expand(var: Variable) -> list[Variable] | None:
        if var.owner is None or var in stop:
            return None
        return [*reversed(var.owner.inputs), *var.owner.outputs]

    yield from walk(outs, expand, bfs=False)


def orphans_between(
    ins: Iterable[Variable], outs: Iterable[Variable]
) -> Generator[Variable, None, None]:
    """Yield the roots ``outs`` depend on that are not among ``ins``.

    ``orphans_between([x], [x + y])`` yields ``y``.
    """
    given = frozenset(ins)
    return (var for var in vars_between(given, outs) if var.owner is None and var not in given)


def applys_between(
    ins: Iterable[Variable], outs: Iterable[Variable]
) -> Generator[Apply, None, None]:
    """Yield the Apply nodes between ``ins`` and ``outs`` (not the owners of ``ins``)."""
    return apply_ancestors(outs, blockers=ins)


def _depends_on_any(variable: Variable, targets: Collection[Variable]) -> bool:
    """True if ``variable`` is one of ``targets`` or computes from one of them."""
    return any(var in targets for var in ancestors([variable]))


def truncated_graph_inputs(
    outputs: Sequence[Variable],
    ancestors_to_include: Iterable[Variable] | None = None,
) -> list[Variable]:
    """The variables closest to ``outputs`` that do not depend on ``ancestors_to_include``.

    Given these variables (and the ones of ``ancestors_to_include`` that the outputs
    use), nothing else is needed to compute ``outputs``, and none of them depends on
    another. Without ``ancestors_to_include`` this is ``outputs`` without repeats.

    Parameters
    ----------
    outputs
        The variables to compute.
    ancestors_to_include
        Variables that must stay inputs (the ones to replace, for :func:`graph_replace
        <opweave.graph.replace.graph_replace>` and :func:`vectorize_graph
        <opweave.graph.replace.vectorize_graph>`).
    """
    result: list[Variable] = []
    seen: set[Variable] = set()
    include = set(ancestors_to_include or ())
    if not include:
        for var in outputs:
            if var not in seen:
                seen.add(var)
                result.append(var)
        return result
    # Variables known to be given: the included ones, and every other variable met so
    # far (one that depends on a given variable is computed from what is found above it).
    given = set(include)
    candidates = list(outputs)
    while candidates:
        var = candidates.pop()
        if var in seen:
            continue
        seen.add(var)
        if var in include:
            result.append(var)
            # An included variable computed from other included ones: look above it too.
            if var.owner is not None and _depends_on_any(var, include - {var}):
                candidates.extend(i for i in var.owner.inputs if i not in seen)
            continue
        if var.owner is not None and _depends_on_any(var, given):
            candidates.extend(var.owner.inputs)
        else:
            result.append(var)
        given.add(var)
    return result


# ---------------------------------------------------------------------- topological orders


def walk_toposort(
    graphs: Iterable[T], deps: Callable[[T], Iterable[T] | None]
) -> Generator[T, None, None]:
    """Yield every node reachable from ``graphs`` through ``deps``, dependencies first.

    Parameters
    ----------
    graphs
        The nodes to start from.
    deps
        ``deps(node)`` returns what ``node`` depends on (or ``None``). It must be a pure
        function returning the very objects the walk meets.

    Raises
    ------
    ValueError
        If the dependencies form a cycle.
    """
    cache: dict[T, list[T]] = {}

    def cached(node: T) -> list[T]:
        if node not in cache:
            cache[node] = list(deps(node) or ())
        return cache[node]

    dependents: dict[T, list[T]] = {}
    waiting: dict[T, int] = {}
    ready: deque[T] = deque()
    for node in walk(graphs, cached, bfs=False):
        needs = cache[node]
        waiting[node] = len(set(needs))
        for dep in set(needs):
            dependents.setdefault(dep, []).append(node)
        if not needs:
            ready.append(node)
    done = 0
    while ready:
        node = ready.popleft()
        done += 1
        yield node
        for client in dependents.get(node, ()):
            waiting[client] -= 1
            if waiting[client] == 0:
                ready.append(client)
    if done != len(waiting):
        raise ValueError("the graph contains a cycle")


def general_toposort(outputs: Iterable[T], deps: Callable[[T], Iterable[T] | None]) -> list[T]:
    """:func:`walk_toposort` as a list."""
    return list(walk_toposort(outputs, deps))


def toposort_with_orderings(
    graphs: Iterable[Variable],
    *,
    blockers: Iterable[Variable] | None = None,
    orderings: Mapping[Apply, Iterable[Apply]] | None = None,
) -> Generator[Apply, None, None]:
    """Yield the Apply nodes computing ``graphs`` from ``blockers``, each after its inputs.

    Parameters
    ----------
    graphs
        The outputs.
    blockers
        Variables taken as given: what computes them is not yielded.
    orderings
        Extra constraints: ``orderings[node]`` lists nodes that must come before ``node``.

    Raises
    ------
    ValueError
        If the graph and the orderings form a cycle.
    """
    # A set is used as it is: a graph importing a node passes all its variables, and
    # copying them for every import would make building a graph quadratic.
    given = blockers if isinstance(blockers, set | frozenset) else frozenset(blockers or ())
    orderings = orderings or {}
    done: set[Apply] = set()
    visiting: set[Apply] = set()
    # Iterative post-order depth-first walk; the stack pops the last output first.
    stack: list[tuple[Apply, bool]] = [
        (out.owner, False) for out in graphs if out.owner is not None and out not in given
    ]
    while stack:
        node, expanded = stack.pop()
        if node in done:
            continue
        if expanded:
            visiting.discard(node)
            done.add(node)
            yield node
            continue
        if node in visiting:
            raise ValueError(f"the graph contains a cycle through {node}")
        visiting.add(node)
        stack.append((node, True))
        deps = [i.owner for i in node.inputs if i.owner is not None and i not in given]
        deps.extend(orderings.get(node, ()))
        for dep in reversed(deps):
            if dep not in done:
                if dep in visiting:
                    raise ValueError(f"the graph contains a cycle through {dep}")
                stack.append((dep, False))


def toposort(
    graphs: Iterable[Variable], blockers: Iterable[Variable] | None = None
) -> Generator[Apply, None, None]:
    """:func:`toposort_with_orderings` without extra orderings."""
    return toposort_with_orderings(graphs, blockers=blockers)


def io_toposort(
    inputs: Iterable[Variable],
    outputs: Iterable[Variable],
    orderings: Mapping[Apply, Iterable[Apply]] | None = None,
) -> list[Apply]:
    """The Apply nodes between ``inputs`` and ``outputs``, in an order that can run them.

    Parameters
    ----------
    inputs
        Where the graph starts: what computes them is left out.
    outputs
        Where it ends.
    orderings
        Extra constraints: ``orderings[node]`` lists nodes that must run before ``node``.

    Raises
    ------
    ValueError
        If the graph and the orderings form a cycle.
    """
    given = inputs if isinstance(inputs, set | frozenset) else frozenset(inputs)
    return _toposort_list(outputs, given, orderings or {})


def _toposort_list(
    outputs: Iterable[Variable],
    given: set[Variable] | frozenset[Variable],
    orderings: Mapping[Apply, Iterable[Apply]],
) -> list[Apply]:
    """What :func:`toposort_with_orderings` yields, in the same order, as a list.

    The same depth-first walk without a generator's resumptions and without a tuple per
    stack entry: a node is marked when first on top of the stack (its dependencies are
    pushed above it) and listed when on top again (they are then all listed). Compiles
    sort whole graphs many times, so this is on their critical path.
    """
    order: list[Apply] = []
    done: set[Apply] = set()
    visiting: set[Apply] = set()
    stack = [out.owner for out in outputs if out.owner is not None and out not in given]
    while stack:
        node = stack[-1]
        if node in done:
            stack.pop()
            continue
        if node in visiting:
            stack.pop()
            visiting.discard(node)
            done.add(node)
            order.append(node)
            continue
        visiting.add(node)
        extra = orderings.get(node) if orderings else None
        if extra:
            for dep in reversed(list(extra)):
                if dep not in done:
                    if dep in visiting:
                        raise ValueError(f"the graph contains a cycle through {dep}")
                    stack.append(dep)
        for inp in reversed(node.inputs):
            owner = inp.owner
            if owner is not None and owner not in done and inp not in given:
                if owner in visiting:
                    raise ValueError(f"the graph contains a cycle through {owner}")
                stack.append(owner)
    return order


def get_var_by_name(graphs: Iterable[Variable], target_var_id: str) -> tuple[Variable, ...]:
    """The variables of ``graphs`` whose ``name`` or ``auto_name`` is ``target_var_id``.

    Inner graphs (an Op with ``inner_outputs``, such as a Composite) are searched too.
    """

    def expand(var: Variable) -> list[Variable] | None:
        if var.owner is None:
            return None
        inner = getattr(var.owner.op, "inner_outputs", None)
        return [*var.owner.inputs, *(inner or ())]

    return tuple(
        var
        for var in walk(graphs, expand)
        if target_var_id in (var.name, getattr(var, "auto_name", None))
    )
