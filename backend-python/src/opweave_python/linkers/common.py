"""What the Python-backend linkers share: storage, thunk creation, error reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.link.basic import compute_map_for, map_storage


@dataclass
class LinkedGraph:
    """A graph with storage assigned and one thunk per node, in execution order."""

    order: list[Apply]
    thunks: list[Any]
    input_storage: list[list[Any]]
    output_storage: list[list[Any]]
    storage_map: dict[Variable, list[Any]]
    compute_map: dict[Variable, list[int]]


def link_graph(
    fgraph: FunctionGraph,
    no_recycling: list[Variable],
    input_storage: list[list[Any]] | None,
    output_storage: list[list[Any]] | None,
    storage_map: dict[Variable, list[Any]] | None,
    impl: str | None,
) -> LinkedGraph:
    """Assign storage to ``fgraph`` and ask each node's Op for a thunk."""
    order = fgraph.toposort()
    ins, outs, smap = map_storage(fgraph, order, input_storage, output_storage, storage_map)
    cmap = compute_map_for(smap)
    thunks = []
    for node in order:
        node.op.prepare_node(node, smap, cmap, impl)
        thunks.append(node.op.make_thunk(node, smap, cmap, no_recycling, impl=impl))
    return LinkedGraph(order, thunks, ins, outs, smap, cmap)


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
