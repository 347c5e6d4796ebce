"""The ``vm`` linker: a streamlined thunk loop that frees intermediates early."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import Linker
from opweave_python.linkers.common import LinkedGraph, describe_failure, link_graph

#: A variable to free: its storage cell and its compute-map cell.
GcEntry = tuple[list[Any], list[int]]


def gc_plan(fgraph: FunctionGraph, linked: LinkedGraph) -> list[tuple[GcEntry, ...]]:
    """For each step, the intermediates whose last client is that step.

    Graph inputs, outputs and constants are never freed, and neither are outputs no node
    reads: those are an Op's hidden outputs (seed 003), state it keeps between calls.
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


class VMLinker(Linker):
    """Run the nodes' thunks in a tight loop.

    With ``allow_gc`` (default ``config.allow_gc``) each intermediate is freed after its
    last client ran (its storage cell set to ``None``, its compute-map cell to 2); without
    it, intermediates stay in their cells so that ``perform`` can reuse their memory on
    the next call.
    """

    name = "vm"
    priority = 20

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`."""
        from opweave import config

        assert self.fgraph is not None, "call accept(fgraph) first"
        linked = link_graph(
            self.fgraph, self.no_recycling, input_storage, output_storage, storage_map, "py"
        )
        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        if allow_gc:
            fn = _gc_loop(linked, gc_plan(self.fgraph, linked))
        else:
            fn = _plain_loop(linked)
        fn.storage_map = linked.storage_map  # type: ignore[attr-defined]
        fn.compute_map = linked.compute_map  # type: ignore[attr-defined]
        fn.allow_gc = allow_gc  # type: ignore[attr-defined]
        return fn, linked.input_storage, linked.output_storage, linked.thunks, linked.order


def _plain_loop(linked: LinkedGraph) -> Callable[[], None]:
    thunks, order, smap = linked.thunks, linked.order, linked.storage_map

    def fn() -> None:
        i = 0
        try:
            for thunk in thunks:
                thunk()
                i += 1
        except Exception as exc:
            describe_failure(exc, order[i], smap)
            raise

    return fn


def _gc_loop(linked: LinkedGraph, plan: list[tuple[GcEntry, ...]]) -> Callable[[], None]:
    order, smap = linked.order, linked.storage_map
    steps = list(zip(linked.thunks, plan, strict=True))

    def free(entries: tuple[GcEntry, ...]) -> None:
        for cell, computed in entries:
            cell[0] = None
            computed[0] = 2

    def fn() -> None:
        i = 0
        try:
            for thunk, entries in steps:
                thunk()
                for cell, computed in entries:
                    cell[0] = None
                    computed[0] = 2
                i += 1
        except Exception as exc:
            describe_failure(exc, order[i], smap)
            for _, entries in steps:
                free(entries)
            raise

    return fn
