"""One node's C thunk, for ``Op.make_thunk(..., impl="c")`` (DebugMode asks for these)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave_c.linkers.block_call import link_block
from opweave_c.linkers.cvm import node_block
from opweave_c.module import build_module


def make_c_thunk(
    node: Apply,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
) -> Callable[[], None]:
    """Compile ``node`` alone and return a thunk running it on ``storage_map``'s cells.

    Raises
    ------
    opweave_c.contract.NoCCode
        When the node's Op or one of its Types has no C code.
    """
    from opweave import config

    block = node_block(node, list(no_recycling), config.check_input)
    linked, _ = link_block(build_module([block], f"node {node}"), block, storage_map)
    run = linked.run
    computed = [compute_map[v] for v in node.outputs]

    def thunk() -> None:
        try:
            run()
        except Exception as exc:
            linked.explain(exc, storage_map)
            raise
        for flag in computed:
            flag[0] = 1

    thunk.inputs = [storage_map[v] for v in node.inputs]  # type: ignore[attr-defined]
    thunk.outputs = [storage_map[v] for v in node.outputs]  # type: ignore[attr-defined]
    thunk.lazy = False  # type: ignore[attr-defined]
    return thunk
