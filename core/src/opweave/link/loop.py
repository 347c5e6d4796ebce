"""Linking a graph as one thunk per node, run in order by a loop: the shared machinery.

:class:`LoopLinker` wires storage (:func:`~opweave.link.basic.map_storage`), builds each
node's thunk (:func:`~opweave.link.thunks.make_node_thunk`, through the resolver) from
the implementations the linker names, in order
(:attr:`LoopLinker.impls`: ``("py",)`` for ``vm``, ``("c", "py")`` for a C linker that
falls back to Python per node), and runs the thunks in a loop that frees each
intermediate after its last client ran (:func:`gc_plan`), or keeps everything
(``allow_gc=False``). When a thunk raises, the exception gets a note naming the node and
its inputs (:func:`describe_failure`). A graph with a lazy node (``ifelse``) is run by
the demand-driven loop of :mod:`opweave.link.lazy` instead, chosen at link time: graphs
without one keep the eager loop. A backend's linker is a declaration::

    class NumbaLinker(LoopLinker):
        name = "numba"
        priority = 25
        impls = ("numba", "py")
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, ClassVar

from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.trace import creation_note
from opweave.link.basic import Linker, compute_map_for
from opweave.link.lazy import is_lazy, lazy_schedule, run_lazy_loop, timed_thunks
from opweave.link.thunks import make_node_thunk

__all__ = [
    "LinkedGraph",
    "LoopLinker",
    "describe_failure",
    "gc_plan",
    "input_views",
    "make_node_thunk",
    "node_tree",
    "release_plan",
    "run_loop",
    "run_timed_loop",
    "thunk_origin",
    "with_callbacks",
]

#: A variable to free: its storage cell and its compute-map cell.
GcEntry = tuple[list[Any], list[int]]


@dataclass
class LinkedGraph:
    """A graph with storage assigned and one thunk per node, in execution order."""

    order: list[Apply]
    thunks: list[Any]
    input_storage: list[list[Any]]
    output_storage: list[list[Any]]
    storage_map: dict[Variable, list[Any]]
    compute_map: dict[Variable, list[int]]


def describe_failure(
    exc: BaseException, node: Apply, storage_map: dict[Variable, list[Any]]
) -> None:
    """Attach a note to ``exc`` naming the node that failed and what its inputs were."""
    parts = []
    for i, var in enumerate(node.inputs):
        value = storage_map[var][0]
        shape = getattr(value, "shape", None)
        dtype = getattr(value, "dtype", None)
        desc = type(value).__name__
        if shape is not None:
            desc += f" shape={tuple(shape)}"
        if dtype is not None:
            desc += f" dtype={dtype}"
        parts.append(f"  input {i} ({var}, type {var.type}): {desc}")
    exc.add_note(f"Apply node that caused the error: {node}\n" + "\n".join(parts))
    created = creation_note(node)
    if created is not None:
        exc.add_note(created)
    if config.exception_verbosity == "high":
        exc.add_note("The graph of the node that failed:\n" + "\n".join(node_tree(node)))


def node_tree(node: Apply, depth: int = 4) -> list[str]:
    """The lines of ``node``'s graph, ``depth`` levels of owners deep, one variable per
    line with its Type (what ``config.exception_verbosity = "high"`` adds to an error)."""
    lines = [f"{node.op} -> {', '.join(f'{o} {o.type}' for o in node.outputs)}"]

    def walk(var: Variable, level: int) -> None:
        lines.append(f"{' |' * level} {var} {var.type}")
        if var.owner is not None and level < depth:
            lines[-1] += f" <- {var.owner.op}"
            for inp in var.owner.inputs:
                walk(inp, level + 1)

    for inp in node.inputs:
        walk(inp, 1)
    return lines


def gc_plan(fgraph: FunctionGraph, linked: LinkedGraph) -> list[tuple[GcEntry, ...]]:
    """For each step, the intermediates whose last client is that step.

    Graph inputs, outputs and constants are never freed, and neither are outputs no node
    reads: those are an Op's hidden outputs, state it keeps between calls.
    """
    keep = set(fgraph.inputs) | set(fgraph.outputs)
    last_use: dict[Variable, int] = {}
    for i, node in enumerate(linked.order):
        for var in node.inputs:
            last_use[var] = i
    plan: list[list[GcEntry]] = [[] for _ in linked.order]
    for var, i in last_use.items():
        if var in keep or isinstance(var, Constant) or var.owner is None:
            continue
        plan[i].append((linked.storage_map[var], linked.compute_map[var]))
    return [tuple(entries) for entries in plan]


def input_views(fgraph: FunctionGraph, order: Sequence[Apply]) -> list[Variable]:
    """The computed variables that may share memory with one of ``fgraph``'s inputs.

    Those are the outputs of nodes that declare them views (``view_map``) or overwritten
    versions (``destroy_map``) of an input or of another such variable, following the
    chain from the graph's inputs in execution order. The graph's outputs are left out:
    their cells hold what a call returns.

    A linker that keeps intermediates between calls empties these cells at the end of
    each call, so that a compiled function never keeps its caller's array alive
    through a view of it (``x.T``).
    """
    aliasing: set[Variable] = set(fgraph.inputs)
    outputs = set(fgraph.outputs)
    found: list[Variable] = []
    for node in order:
        op = node.op
        maps = chain(
            (getattr(op, "view_map", None) or {}).items(),
            (getattr(op, "destroy_map", None) or {}).items(),
        )
        for out_pos, in_positions in maps:
            var = node.outputs[out_pos]
            if var in aliasing or not any(node.inputs[i] in aliasing for i in in_positions):
                continue
            aliasing.add(var)
            if var not in outputs:
                found.append(var)
    return found


def release_plan(
    fgraph: FunctionGraph, linked: LinkedGraph, plan: list[tuple[GcEntry, ...]] | None
) -> tuple[GcEntry, ...]:
    """The cells to empty at the end of every call: views of the inputs that ``plan``
    (:func:`gc_plan`, or ``None`` when every value is kept) does not free already."""
    planned = {id(cell) for entries in plan or () for cell, _ in entries}
    return tuple(
        (linked.storage_map[var], linked.compute_map[var])
        for var in input_views(fgraph, linked.order)
        if id(linked.storage_map[var]) not in planned
    )


def _release(entries: tuple[GcEntry, ...]) -> None:
    for cell, computed in entries:
        cell[0] = None
        computed[0] = 2


def _free(steps: Sequence[tuple[Any, tuple[GcEntry, ...]]]) -> None:
    for _, entries in steps:
        for cell, computed in entries:
            cell[0] = None
            computed[0] = 2


def run_loop(
    linked: LinkedGraph,
    plan: list[tuple[GcEntry, ...]] | None,
    on_failure: Callable[[BaseException, int], None],
    release: tuple[GcEntry, ...] = (),
) -> Callable[[], None]:
    """The function running ``linked``'s thunks in order.

    Parameters
    ----------
    linked
        The linked graph.
    plan
        What to free after each step (:func:`gc_plan`), or ``None`` to keep every value.
    on_failure
        Called as ``on_failure(exc, i)`` when step ``i`` raised ``exc``, before it
        propagates (to attach notes); intermediates are freed after it.
    release
        Cells emptied at the end of every call, whether it succeeded or not
        (:func:`release_plan`: the views of the inputs ``plan`` does not free).
    """
    thunks = linked.thunks
    if plan is None:

        def keep_all() -> None:
            i = 0
            try:
                for thunk in thunks:
                    thunk()
                    i += 1
            except Exception as exc:
                on_failure(exc, i)
                raise

        if not release:
            return keep_all

        def keep_all_but_views() -> None:
            try:
                keep_all()
            finally:
                for cell, computed in release:
                    cell[0] = None
                    computed[0] = 2

        return keep_all_but_views

    steps = list(zip(thunks, plan, strict=True))
    if release:
        steps.append((_no_step, release))

    def collect() -> None:
        i = 0
        try:
            for thunk, entries in steps:
                thunk()
                for cell, computed in entries:
                    cell[0] = None
                    computed[0] = 2
                i += 1
        except Exception as exc:
            on_failure(exc, i)
            _free(steps)
            raise

    return collect


def _no_step() -> None:
    """The step after the last node, which only empties the cells it is given."""


def thunk_origin(thunk: Any, default: str | None) -> str:
    """The implementation ``thunk`` came from (``py``, ``c``, ``cuda``...).

    :func:`make_node_thunk` marks its thunks with the implementation that made them
    (their ``impl`` attribute); a thunk without the mark is ``default``'s (the linker's
    preferred implementation, which builds its own thunks), or ``"py"``.
    """
    impl = getattr(thunk, "impl", None)
    if isinstance(impl, str):
        return impl
    return default if default is not None else "py"


def run_timed_loop(
    linked: LinkedGraph,
    plan: list[tuple[GcEntry, ...]] | None,
    on_failure: Callable[[BaseException, int], None],
    profile: Any,
    keys: Sequence[Any],
    release: tuple[GcEntry, ...] = (),
) -> Callable[[], None]:
    """Like :func:`run_loop`, timing each thunk into ``profile``.

    ``profile`` is a :class:`~opweave.compile.profiling.ProfileStats` (its
    ``apply_time``, ``apply_callcount`` and ``vm_call_time`` grow), ``keys`` the keys of
    ``linked.order``'s nodes in it. A linker links this loop instead of :func:`run_loop`
    only when the function is profiled, so unprofiled calls pay nothing for it. A node
    that raises is counted with the time it took; one that ran has its values' shapes and
    sizes recorded (:meth:`~opweave.compile.profiling.ProfileStats.record_node`).
    ``release`` is emptied at the end of every call, as in :func:`run_loop`.
    """
    apply_time = profile.apply_time
    apply_callcount = profile.apply_callcount
    record = profile.record_node
    smap = linked.storage_map
    cells = [
        ([smap[v] for v in node.inputs], [smap[v] for v in node.outputs]) for node in linked.order
    ]
    steps = list(zip(linked.thunks, plan or [()] * len(linked.thunks), keys, cells, strict=True))
    clock = time.perf_counter

    def timed() -> None:
        i = 0
        start = clock()
        try:
            for thunk, entries, key, (in_cells, out_cells) in steps:
                t0 = clock()
                try:
                    thunk()
                finally:
                    apply_time[key] += clock() - t0
                    apply_callcount[key] += 1
                record(key, in_cells, out_cells)  # before the inputs may be freed below
                for cell, computed in entries:
                    cell[0] = None
                    computed[0] = 2
                i += 1
        except Exception as exc:
            on_failure(exc, i)
            if plan is not None:
                _free([(thunk, entries) for thunk, entries, _, _ in steps])
            raise
        finally:
            _release(release)
            profile.vm_call_time += clock() - start

    timed.profile = profile  # type: ignore[attr-defined]
    return timed


def with_callbacks(
    thunk: Any,
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    before: Callable[..., Any] | None,
    after: Callable[..., Any] | None,
) -> Callable[[], Any]:
    """``thunk`` calling ``before`` and ``after`` (either may be ``None``) around each of
    its calls, as ``f(node=, thunk=, storage_map=, compute_map=)``; it keeps ``thunk``'s
    attributes (a lazy thunk stays lazy) and returns what ``thunk`` returns."""

    def run() -> Any:
        if before is not None:
            before(node=node, thunk=thunk, storage_map=storage_map, compute_map=compute_map)
        result = thunk()
        if after is not None:
            after(node=node, thunk=thunk, storage_map=storage_map, compute_map=compute_map)
        return result

    run.__dict__.update(getattr(thunk, "__dict__", {}))
    for name in ("lazy", "inputs", "outputs"):
        if name not in run.__dict__ and hasattr(thunk, name):
            setattr(run, name, getattr(thunk, name))
    return run


class LoopLinker(Linker):
    """A linker running one thunk per node in a loop; subclasses declare what to ask for.

    Class attributes
    ----------------
    impls
        The implementations asked for each node, in order (``Op.make_thunk``'s ``impl``
        argument): the first one that has the node wins.
    keep_values
        Never free intermediates, whatever ``allow_gc`` says (the ``py`` linker keeps
        every value until the end of the call).

    With ``allow_gc`` (default ``config.allow_gc``) each intermediate is freed after its
    last client ran (its storage cell set to ``None``, its compute-map cell to 2); without
    it, intermediates stay in their cells so that implementations can reuse their memory
    on the next call. Either way, the intermediates that are views of the graph's inputs
    (:func:`input_views`) are emptied at the end of every call: a compiled function keeps
    no reference to its caller's arrays.

    When one of the thunks is lazy (:func:`opweave.link.lazy.is_lazy`), the graph runs in
    the lazy loop (:func:`opweave.link.lazy.run_lazy_loop`), which computes only what the
    outputs need; the linked function's ``loop`` attribute says which loop was chosen
    (``"eager"`` or ``"lazy"``).
    """

    name: ClassVar[str] = "loop"
    impls: ClassVar[tuple[str | None, ...]] = ("py",)
    keep_values: ClassVar[bool] = False
    #: Which loop runs the graph: ``None`` follows ``config.vm__lazy`` (whose ``None``
    #: takes the lazy loop for graphs with a lazy thunk only), ``True`` the lazy loop
    #: always, ``False`` the eager loop (a lazy node then runs its backend's thunk after
    #: all its inputs, both branches of an ``ifelse`` included).
    lazy: bool | None = None
    #: Called as ``callback(node=, thunk=, storage_map=, compute_map=)`` after each call
    #: of a node's thunk (PyTensor's VM callback); ``callback_input`` the same way before.
    callback: Callable[..., Any] | None = None
    callback_input: Callable[..., Any] | None = None
    #: Set by the function maker before :meth:`make_all` to link the timed loop
    #: (:func:`run_timed_loop`) recording into this
    #: :class:`~opweave.compile.profiling.ProfileStats`; ``None``: the untimed loop.
    profile: Any = None

    def make_thunks(
        self,
        order: list[Apply],
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
    ) -> list[Any]:
        """One thunk per node of ``order``; override to build them together."""
        return [
            make_node_thunk(node, storage_map, compute_map, self.no_recycling, self.impls)
            for node in order
        ]

    def on_failure(self, exc: BaseException, i: int, linked: LinkedGraph) -> None:
        """Attach notes to ``exc``, raised by step ``i``; default: :func:`describe_failure`."""
        describe_failure(exc, linked.order[i], linked.storage_map)

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`."""
        fgraph, order, ins, outs, smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        cmap = compute_map_for(smap)
        lazy = config.vm__lazy if self.lazy is None else self.lazy
        thunks = self.make_thunks(order, smap, cmap)
        if lazy is False:
            thunks = [getattr(t, "eager", t) if is_lazy(t) else t for t in thunks]
        if self.callback is not None or self.callback_input is not None:
            thunks = [
                with_callbacks(t, node, smap, cmap, self.callback_input, self.callback)
                for t, node in zip(thunks, order, strict=True)
            ]
        linked = LinkedGraph(order, thunks, ins, outs, smap, cmap)
        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        allow_gc = allow_gc and not self.keep_values
        plan = gc_plan(fgraph, linked) if allow_gc else None
        release = release_plan(fgraph, linked, plan)

        def on_failure(exc: BaseException, i: int) -> None:
            self.on_failure(exc, i, linked)

        if lazy is True or any(is_lazy(t) for t in linked.thunks):
            fn = self._lazy_loop(fgraph, linked, allow_gc, on_failure)
        elif self.profile is None:
            fn = run_loop(linked, plan, on_failure, release)
        else:
            origins = [thunk_origin(t, self.impls[0]) for t in linked.thunks]
            keys = self.profile.register_nodes(fgraph, order, origins)
            fn = run_timed_loop(linked, plan, on_failure, self.profile, keys, release)
        fn.storage_map = smap  # type: ignore[attr-defined]
        fn.compute_map = cmap  # type: ignore[attr-defined]
        fn.allow_gc = allow_gc  # type: ignore[attr-defined]
        if not hasattr(fn, "loop"):
            fn.loop = "eager"  # type: ignore[attr-defined]
        return fn, ins, outs, linked.thunks, order

    def _lazy_loop(
        self,
        fgraph: FunctionGraph,
        linked: LinkedGraph,
        allow_gc: bool,
        on_failure: Callable[[BaseException, int], None],
    ) -> Callable[[], None]:
        """The lazy loop of ``linked`` (timed into :attr:`profile` when it is set); the
        views of the inputs are emptied at the end of every call."""
        schedule = lazy_schedule(
            fgraph, linked.order, linked.thunks, linked.storage_map, linked.compute_map, allow_gc
        )
        release = release_plan(fgraph, linked, None)
        if self.profile is None:
            run_lazy = run_lazy_loop(linked.order, linked.thunks, schedule, on_failure)
            if not release:
                run_lazy.loop = "lazy"  # type: ignore[attr-defined]
                return run_lazy

            def lazy_then_release() -> None:
                try:
                    run_lazy()
                finally:
                    _release(release)

            lazy_then_release.loop = "lazy"  # type: ignore[attr-defined]
            return lazy_then_release
        profile = self.profile
        origins = [thunk_origin(t, self.impls[0]) for t in linked.thunks]
        keys = profile.register_nodes(fgraph, linked.order, origins)
        run = run_lazy_loop(
            linked.order,
            timed_thunks(linked.thunks, profile, keys, linked.storage_map),
            schedule,
            on_failure,
        )
        clock = time.perf_counter

        def timed() -> None:
            start = clock()
            try:
                run()
            finally:
                _release(release)
                profile.vm_call_time += clock() - start

        timed.profile = profile  # type: ignore[attr-defined]
        timed.loop = "lazy"  # type: ignore[attr-defined]
        return timed
