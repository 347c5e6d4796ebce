"""The ``cvm`` linker: one C thunk per node, the Python backend for nodes without C.

Every node with C code gets its own block; all blocks of a graph are built into one
module (one compiler run, one cache entry). The thunks run in the ``vm`` linker's
loop, which frees intermediates after their last use.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.link.basic import Linker, compute_map_for, map_storage
from opweave_c.codegen import Block, BlockBuilder
from opweave_c.contract import NoCCode
from opweave_c.linkers.failures import explain
from opweave_c.module import build_module
from opweave_python.linkers.common import LinkedGraph, describe_failure
from opweave_python.linkers.vm import gc_plan

log = logging.getLogger("opweave_c.cvm")


def node_block(node: Apply, k: int, no_recycling: list[Variable], check_input: bool) -> Block:
    """The block computing ``node`` alone: its inputs in, its outputs out.

    Raises
    ------
    NoCCode
        When the node's Op or one of its variables' Types has no C code.
    """
    inputs = list(dict.fromkeys(v for v in node.inputs))
    builder = BlockBuilder(
        f"opw_node_{k}", [node], inputs, list(node.outputs), no_recycling, check_input
    )
    return builder.build()


class CVMLinker(Linker):
    """Per-node C thunks with a Python fallback, run in the ``vm`` loop."""

    name = "cvm"
    priority = 30

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Link the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`."""
        from opweave import config

        fgraph = self.fgraph
        assert fgraph is not None, "call accept(fgraph) first"
        order = fgraph.toposort()
        ins, outs, smap = map_storage(fgraph, order, input_storage, output_storage, storage_map)
        cmap = compute_map_for(smap)
        blocks: dict[int, Block] = {}
        for k, node in enumerate(order):
            try:
                blocks[k] = node_block(node, k, self.no_recycling, config.check_input)
            except NoCCode as exc:
                log.debug("cvm: %s runs in Python (%s)", node, exc)
        module = build_module(list(blocks.values()), f"cvm graph {fgraph}") if blocks else None
        thunks: list[Any] = []
        self._c_nodes: dict[int, tuple[Block, list[Any]]] = {}
        for k, node in enumerate(order):
            block = blocks.get(k)
            if block is None:
                node.op.prepare_node(node, smap, cmap, "py")
                thunks.append(node.op.make_thunk(node, smap, cmap, self.no_recycling, impl="py"))
                continue
            failcell: list[Any] = [0]
            link = getattr(module, f"link_{block.fn_name}")
            run, _ = link(
                tuple(smap[v] for v in block.inputs),
                tuple(smap[v] for v in block.outputs),
                (None,) * len(block.inputs),
                failcell,
                0,
                (),
                (),
                (),
                False,
            )
            self._c_nodes[k] = (block, failcell)
            thunks.append(run)
        linked = LinkedGraph(order, thunks, ins, outs, smap, cmap)
        allow_gc = config.allow_gc if self.allow_gc is None else self.allow_gc
        plan = gc_plan(fgraph, linked) if allow_gc else [() for _ in order]
        fn = self._loop(linked, plan)
        fn.storage_map = smap  # type: ignore[attr-defined]
        fn.compute_map = cmap  # type: ignore[attr-defined]
        fn.allow_gc = allow_gc  # type: ignore[attr-defined]
        fn.c_nodes = sorted(self._c_nodes)  # type: ignore[attr-defined]
        return fn, ins, outs, thunks, order

    def _loop(self, linked: LinkedGraph, plan: list[tuple[Any, ...]]) -> Callable[[], None]:
        order, smap = linked.order, linked.storage_map
        steps = list(zip(linked.thunks, plan, strict=True))
        c_nodes = self._c_nodes

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
                if i in c_nodes:
                    block, failcell = c_nodes[i]
                    if explain(exc, block.labels, failcell, smap) is None:
                        describe_failure(exc, order[i], smap)
                else:
                    describe_failure(exc, order[i], smap)
                for _, entries in steps:
                    for cell, computed in entries:
                        cell[0] = None
                        computed[0] = 2
                raise

        return fn
