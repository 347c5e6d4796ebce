"""The ``cvm`` linker: one C thunk per node, the Python backend for nodes without C.

Every node with C code gets its own block; all blocks of a graph are built into one
module (one compiler run, one cache entry). The thunks run in the core's thunk loop
(:class:`opweave.link.loop.LoopLinker`), which frees intermediates after their last use.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from opweave.graph.basic import Apply, Variable
from opweave.link.loop import LinkedGraph, LoopLinker, describe_failure, make_node_thunk
from opweave_c.codegen import Block, BlockBuilder
from opweave_c.contract import NoCCode
from opweave_c.linkers.block_call import LinkedBlock, link_block
from opweave_c.module import build_module

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


class CVMLinker(LoopLinker):
    """Per-node C thunks with a Python fallback, run in the core's loop."""

    name: ClassVar[str] = "cvm"
    priority: ClassVar[int] = 30
    #: C first; nodes without C code fall back to Python.
    impls: ClassVar[tuple[str | None, ...]] = ("c", "py")

    def make_thunks(
        self,
        order: list[Apply],
        storage_map: dict[Variable, list[Any]],
        compute_map: dict[Variable, list[int]],
    ) -> list[Any]:
        """C thunks for the nodes with C, all built into one module; Python for the rest."""
        from opweave import config  # late: opweave's package init is above the link floor

        blocks: dict[int, Block] = {}
        for k, node in enumerate(order):
            try:
                blocks[k] = node_block(node, k, self.no_recycling, config.check_input)
            except NoCCode as exc:
                log.debug("cvm: %s runs in Python (%s)", node, exc)
        module = build_module(list(blocks.values()), f"cvm graph {self.fgraph}") if blocks else None
        self._c_nodes: dict[int, LinkedBlock] = {}
        thunks: list[Any] = []
        fallback = tuple(impl for impl in self.impls if impl != "c")
        for k, node in enumerate(order):
            block = blocks.get(k)
            if block is None:
                thunks.append(
                    make_node_thunk(node, storage_map, compute_map, self.no_recycling, fallback)
                )
                continue
            linked, _ = link_block(module, block, storage_map)
            self._c_nodes[k] = linked
            thunks.append(linked.run)
        return thunks

    def on_failure(self, exc: BaseException, i: int, linked: LinkedGraph) -> None:
        """Name what failed in a node's C, or the node and its inputs."""
        c_node = self._c_nodes.get(i)
        if c_node is None or c_node.explain(exc, linked.storage_map) is None:
            describe_failure(exc, linked.order[i], linked.storage_map)

    def make_all(self, *args: Any, **kwargs: Any) -> Any:
        """Link the accepted graph; the function also lists the steps run in C."""
        result = super().make_all(*args, **kwargs)
        result[0].c_nodes = sorted(self._c_nodes)
        return result
