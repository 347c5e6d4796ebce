"""The ``vm`` linker: a streamlined thunk loop that frees intermediates early."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import Linker
from opweave_python.linkers.common import describe_failure, link_graph


def gc_plan(
    fgraph: FunctionGraph, order: list[Apply], storage_map: dict[Variable, list[Any]]
) -> list[list[list[Any]]]:
    """For each step, the cells of intermediates whose last client is that step.

    Graph inputs, outputs and constants are never freed, and neither are outputs no node
    reads: those are an Op's hidden outputs (seed 003), state it keeps between calls.
    """
    keep = set(fgraph.inputs) | set(fgraph.outputs)
    last_use: dict[Variable, int] = {}
    for i, node in enumerate(order):
        for var in node.inputs:
            last_use[var] = i
    plan: list[list[list[Any]]] = [[] for _ in order]
    for var, i in last_use.items():
        if var in keep or isinstance(var, Constant) or var.owner is None:
            continue
        plan[i].append(storage_map[var])
    return plan


class VMLinker(Linker):
    """Run the nodes' thunks in a tight loop.

    With ``allow_gc`` (default ``config.allow_gc``) each intermediate is freed
    after its last client ran; without it, intermediates stay in their cells so
    that ``perform`` can reuse their memory on the next call.
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
        order, thunks, smap = linked.order, linked.thunks, linked.storage_map
        if allow_gc:
            plan = gc_plan(self.fgraph, order, smap)
            fn = _gc_loop(thunks, plan, order, smap)
        else:
            fn = _plain_loop(thunks, order, smap)
        fn.storage_map = smap  # type: ignore[attr-defined]
        fn.allow_gc = allow_gc  # type: ignore[attr-defined]
        return fn, linked.input_storage, linked.output_storage, thunks, order


def _plain_loop(
    thunks: list[Any], order: list[Apply], smap: dict[Variable, list[Any]]
) -> Callable[[], None]:
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


def _gc_loop(
    thunks: list[Any],
    plan: list[list[list[Any]]],
    order: list[Apply],
    smap: dict[Variable, list[Any]],
) -> Callable[[], None]:
    steps = [(thunk, tuple(cells)) for thunk, cells in zip(thunks, plan, strict=True)]

    def fn() -> None:
        i = 0
        try:
            for thunk, cells in steps:
                thunk()
                for cell in cells:
                    cell[0] = None
                i += 1
        except Exception as exc:
            describe_failure(exc, order[i], smap)
            for _, cells in steps:
                for cell in cells:
                    cell[0] = None
            raise

    return fn
