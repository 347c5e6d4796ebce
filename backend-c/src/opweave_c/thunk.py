"""One node's C thunk, for the ``c`` implementation of a node alone (DebugMode asks for
these through ``Op.make_thunk(..., impl="c")``)."""

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


def c_thunk(
    node: Apply,
    implementation: Any,
    storage_map: dict[Variable, list[Any]],
    compute_map: dict[Variable, list[int]],
    no_recycling: Sequence[Variable],
) -> Callable[[], None]:
    """The ``make_thunk`` this backend declares (``opweave_backend_info``): the node's C
    thunk (:func:`make_c_thunk`), whose code comes from the node's C implementation as
    the C linkers find it."""
    return make_c_thunk(node, storage_map, compute_map, no_recycling)


def c_implementation_of(entry: Any, op: Any, node: Apply) -> Any:
    """The ``implementation_of`` this backend declares: a table entry is a factory
    ``fn(op, node) -> C implementation or None``."""
    return entry(op, node)
