"""Lazy evaluation in the thunk loop: nodes that ask for the inputs they need.

The protocol is PyTensor's (its VM's ``Stack``). A *lazy thunk* carries ``lazy = True``;
when called it returns the list of the indices of the node's inputs it still needs (not
computed yet), or ``[]`` once it has computed its outputs. :func:`run_lazy_loop` starts
from the nodes computing the graph's outputs, computes what each node needs (and their
ancestors) before calling it again, and so never runs a node whose value nobody asked for:
the branch an ``ifelse`` does not select.

An Op becomes lazy in two ways:

* it declares ``needed_inputs(node, input_cells, input_computed) -> list[int]``, the
  inputs it needs given what is computed so far (:class:`opweave.ifelse.IfElse` does), and
  the backends implement it as any other Op (a ``perform``): :func:`make_lazy_thunk` wraps
  that thunk, which runs once every needed input is computed;
* or its own ``make_thunk`` returns a lazy thunk, as in PyTensor.

The wrapper lives here, in the link layer, because it is linker machinery and not a
kernel: it reads the compute map the loop keeps, and any backend's thunk for the node
(Python, C, GPU) can be wrapped the same way.

:class:`~opweave.link.loop.LoopLinker` takes this loop only for graphs with a lazy thunk,
chosen at link time, so the eager loop (:func:`opweave.link.loop.run_loop`) of other
graphs stays as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph

__all__ = [
    "LazySchedule",
    "declares_lazy",
    "is_lazy",
    "lazy_schedule",
    "make_lazy_thunk",
    "run_lazy_loop",
    "timed_thunks",
]

#: A freeable variable of a node's inputs: its storage cell, its compute-map cell and the
#: indices of the nodes reading it (it is freed once they have all run).
FreeEntry = tuple[list[Any], list[int], tuple[int, ...]]


def declares_lazy(op: Any) -> bool:
    """Whether ``op`` declares the lazy protocol (a callable ``needed_inputs``)."""
    return callable(getattr(op, "needed_inputs", None))


def is_lazy(thunk: Any) -> bool:
    """Whether ``thunk`` is a lazy thunk (its ``lazy`` attribute is true)."""
    return bool(getattr(thunk, "lazy", False))


def make_lazy_thunk(
    node: Apply,
    thunk: Callable[[], Any],
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
) -> Callable[[], list[int]]:
    """A lazy thunk running ``thunk`` (the backend's) once the inputs that
    ``node.op.needed_inputs`` names are computed.

    Parameters
    ----------
    node
        A node whose Op declares ``needed_inputs`` (:func:`declares_lazy`).
    thunk
        The backend's thunk of the node; it runs with every needed input computed (the
        cells of the others may hold ``None`` or an earlier call's value).
    storage_map, compute_map
        The linker's maps.

    Returns
    -------
    callable
        Returns the indices of the needed inputs not computed yet, or ``[]`` after running
        ``thunk``. It has the attributes ``lazy = True``, ``inputs``, ``outputs`` (storage
        cells) and ``eager`` (``thunk``).
    """
    needed_inputs = node.op.needed_inputs  # type: ignore[attr-defined]
    input_cells = [storage_map[v] for v in node.inputs]
    input_computed = [compute_map[v] for v in node.inputs]
    output_computed = [compute_map[v] for v in node.outputs]

    def lazy_thunk() -> list[int]:
        needed = needed_inputs(node, input_cells, input_computed)
        missing = [i for i in needed if not input_computed[i][0]]
        if missing:
            return missing
        thunk()
        for flag in output_computed:
            flag[0] = 1
        return []

    lazy_thunk.lazy = True  # type: ignore[attr-defined]
    lazy_thunk.inputs = input_cells  # type: ignore[attr-defined]
    lazy_thunk.outputs = [storage_map[v] for v in node.outputs]  # type: ignore[attr-defined]
    lazy_thunk.eager = thunk  # type: ignore[attr-defined]
    return lazy_thunk


@dataclass(frozen=True)
class LazySchedule:
    """What :func:`run_lazy_loop` needs to know about a graph, computed at link time.

    Everything is by position in the linker's node order.
    """

    #: The nodes computing the graph's outputs, in the order they are popped last-first.
    roots: tuple[int, ...]
    #: Whether each node's thunk is lazy.
    lazy: tuple[bool, ...]
    #: Per node: the nodes that must run before it (owners of its inputs, for a non-lazy
    #: node, and the graph's ordering constraints, such as readers before a destroyer).
    deps: tuple[tuple[int, ...], ...]
    #: Per node: the ordering constraints only (what a lazy node waits for first).
    prereqs: tuple[tuple[int, ...], ...]
    #: Per node, per input: the index of the input's owner, or ``None`` for a root.
    input_owner: tuple[tuple[int | None, ...], ...]
    #: Per node: the compute-map cells of its outputs.
    output_computed: tuple[tuple[list[int], ...], ...]
    #: Per node: its freeable inputs, or ``None`` when nothing is freed (no ``allow_gc``).
    frees: tuple[tuple[FreeEntry, ...], ...] | None
    #: Every freeable intermediate (freed at the end of a call and after a failure).
    freeable: tuple[tuple[list[Any], list[int]], ...]


def lazy_schedule(
    fgraph: FunctionGraph,
    order: Sequence[Apply],
    thunks: Sequence[Any],
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    allow_gc: bool,
) -> LazySchedule:
    """The :class:`LazySchedule` of ``fgraph`` linked as ``order`` and ``thunks``.

    Graph inputs, outputs and constants are never freed, and neither are outputs no node
    reads (an Op's hidden state), as in the eager loop.
    """
    index = {node: k for k, node in enumerate(order)}
    orderings = fgraph.orderings()
    prereqs = tuple(
        tuple(dict.fromkeys(index[p] for p in orderings.get(node, ()) if p in index))
        for node in order
    )
    input_owner = tuple(
        tuple(index.get(v.owner) if v.owner is not None else None for v in node.inputs)
        for node in order
    )
    deps = tuple(
        tuple(dict.fromkeys([*(o for o in owners if o is not None), *prereqs[k]]))
        for k, owners in enumerate(input_owner)
    )
    roots = tuple(
        dict.fromkeys(index[v.owner] for v in reversed(fgraph.outputs) if v.owner in index)
    )
    keep = set(fgraph.inputs) | set(fgraph.outputs)
    clients: dict[Variable, list[int]] = {}
    for k, node in enumerate(order):
        for v in node.inputs:
            if v in keep or isinstance(v, Constant) or v.owner is None:
                continue
            readers = clients.setdefault(v, [])
            if not readers or readers[-1] != k:
                readers.append(k)
    frees = None
    if allow_gc:
        frees = tuple(
            tuple(
                (storage_map[v], compute_map[v], tuple(clients[v]))
                for v in dict.fromkeys(node.inputs)
                if v in clients
            )
            for node in order
        )
    return LazySchedule(
        roots=roots,
        lazy=tuple(is_lazy(t) for t in thunks),
        deps=deps,
        prereqs=prereqs,
        input_owner=input_owner,
        output_computed=tuple(tuple(compute_map[v] for v in node.outputs) for node in order),
        frees=frees,
        freeable=tuple((storage_map[v], compute_map[v]) for v in clients) if allow_gc else (),
    )


def _stalled(node: Apply, requires: Sequence[int]) -> RuntimeError:
    return RuntimeError(
        f"the lazy thunk of {node} asked for inputs {list(requires)}, which are all "
        "computed already: its Op's lazy protocol is broken (it must return only the "
        "indices of inputs not computed yet, or [] once it has run)"
    )


def run_lazy_loop(
    order: Sequence[Apply],
    thunks: Sequence[Callable[[], Any]],
    schedule: LazySchedule,
    on_failure: Callable[[BaseException, int], None],
) -> Callable[[], None]:
    """The function running ``thunks`` on demand, from the graph's outputs back.

    A node runs once every node it depends on ran; a lazy node runs as often as it
    returns inputs it needs, each time after those inputs' nodes ran. Nodes that no
    output needs are not run. Each call resets the compute map of every node output.

    Parameters
    ----------
    order, thunks
        The linked nodes and their thunks.
    schedule
        :func:`lazy_schedule` of them.
    on_failure
        Called as ``on_failure(exc, k)`` when node ``k`` raised ``exc``, before it
        propagates; intermediates are freed after it (with ``allow_gc``).
    """
    n = len(order)
    roots = list(schedule.roots)
    lazy = schedule.lazy
    deps = schedule.deps
    prereqs = schedule.prereqs
    input_owner = schedule.input_owner
    output_computed = schedule.output_computed
    frees = schedule.frees
    freeable = schedule.freeable
    resets = [flag for flags in output_computed for flag in flags]

    def free_all() -> None:
        for cell, computed in freeable:
            cell[0] = None
            computed[0] = 2

    def lazy_loop() -> None:
        for flag in resets:
            flag[0] = 0
        done = [False] * n
        stack = list(roots)
        k = -1
        try:
            while stack:
                k = stack.pop()
                if done[k]:
                    continue
                if lazy[k]:
                    waiting = [p for p in prereqs[k] if not done[p]]
                    if waiting:
                        stack.append(k)
                        stack.extend(waiting)
                        continue
                    requires = thunks[k]()
                    if requires:
                        owners = [input_owner[k][r] for r in requires]
                        missing = [o for o in owners if o is not None and not done[o]]
                        if not missing:
                            raise _stalled(order[k], requires)
                        stack.append(k)
                        stack.extend(missing)
                        continue
                else:
                    missing = [d for d in deps[k] if not done[d]]
                    if missing:
                        stack.append(k)
                        stack.extend(missing)
                        continue
                    thunks[k]()
                for flag in output_computed[k]:
                    flag[0] = 1
                done[k] = True
                if frees is not None:
                    for cell, computed, readers in frees[k]:
                        if all(done[r] for r in readers):
                            cell[0] = None
                            computed[0] = 2
        except Exception as exc:
            on_failure(exc, k)
            if frees is not None:
                free_all()
            raise
        if frees is not None:
            free_all()

    lazy_loop.schedule = schedule  # type: ignore[attr-defined]
    return lazy_loop


def timed_thunks(
    thunks: Sequence[Callable[[], Any]],
    profile: Any,
    keys: Sequence[Any],
    storage_map: dict[Variable, list[Any]] | None = None,
) -> list[Callable[[], Any]]:
    """``thunks``, each timed into ``profile`` (a
    :class:`~opweave.compile.profiling.ProfileStats`: ``apply_time``,
    ``apply_callcount``), under ``keys``; a lazy thunk counts each of its calls. With
    ``storage_map``, a node that computed its outputs has their shapes and sizes recorded
    (``record_node``)."""
    apply_time = profile.apply_time
    apply_callcount = profile.apply_callcount
    clock = time.perf_counter

    def timed(thunk: Callable[[], Any], key: Any) -> Callable[[], Any]:
        node = key[1]
        cells = None
        if storage_map is not None:
            cells = ([storage_map[v] for v in node.inputs], [storage_map[v] for v in node.outputs])

        def run() -> Any:
            t0 = clock()
            try:
                needed = thunk()
            finally:
                apply_time[key] += clock() - t0
                apply_callcount[key] += 1
            if cells is not None and not needed:  # it ran (a lazy thunk may only ask)
                profile.record_node(key, *cells)
            return needed

        run.lazy = is_lazy(thunk)  # type: ignore[attr-defined]
        return run

    return [timed(t, key) for t, key in zip(thunks, keys, strict=True)]
