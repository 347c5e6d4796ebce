"""NumPy implementation of :class:`~opweave.tensor.map_reduce.MapReduce`: the Elemwise, then
the CAReduce, with the implementations of :mod:`opweave_python.impls.elemwise`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.map_reduce import MapReduce
from opweave_python.impls.elemwise import careduce_perform, elemwise_perform

__all__ = ["PERFORMS", "map_reduce_perform"]


def map_reduce_perform(
    op: MapReduce, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """The Elemwise, then the CAReduce (NumPy has no one-pass map-reduce)."""
    mapped_node, reduce_node = op.unfused(node.inputs[0])
    mapped: list[list[Any]] = [[None]]
    elemwise_perform(op.elemwise, mapped_node, inputs, mapped)
    careduce_perform(op.careduce, reduce_node, [mapped[0][0]], output_storage)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {MapReduce: map_reduce_perform}
)
