"""Reductions of elementwise maps fused into one pass: ``local_careduce_fusion``.

``CAReduce(Elemwise(x))`` becomes :class:`~opweave.tensor.map_reduce.MapReduce` when the
Elemwise node

* has one output, no inplace pattern, tensor Types, and a scalar Op from the core's library
  (a fused ``Composite`` of them included: fusion runs first);
* reads one variable, as often as it likes, besides constants holding one element (those
  are inlined: ``sum(x * 2)`` and ``sum(x * x)`` map one input);
* computes a result that nothing but this reduction reads (not another node, not a graph
  output), so the intermediate array is never needed.

``sum(x ** 2)`` (``sqr`` after ``local_pow_specialize``) and ``sum(exp(x) * 2)`` become one
loop that maps and accumulates each element without materialising the map.

Registered as its own phase ``careduce_fusion`` at position 3.5 (after ``elemwise_fusion``,
before ``merge2`` and the inplace phase), tags ``fast_run``, ``fusion``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import in2out, node_rewriter
from opweave.scalar import Composite, get_scalar_type
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.rewriting.fusion import is_fusable, is_inlinable_constant

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_careduce_fusion", "register_reduce_fusion"]


def _unary_map(producer: Apply[Elemwise]) -> tuple[Elemwise, Variable] | None:
    """The producer as an Elemwise of one input (constants inlined), and that input."""
    variables = list(dict.fromkeys(v for v in producer.inputs if not is_inlinable_constant(v)))
    if len(producer.outputs) != 1 or len(variables) != 1:
        return None
    (x,) = variables
    if len(producer.inputs) == 1:
        return producer.op, x
    inner = get_scalar_type(tensor_type_of(x).dtype)()
    # Every input but ``x`` is an inlinable constant (``variables`` holds ``x`` only).
    args = [
        get_scalar_type(tensor_type_of(v).dtype).make_constant(np.asarray(v.data).reshape(()))
        if is_inlinable_constant(v)
        else inner
        for v in producer.inputs
    ]
    try:
        out = producer.op.scalar_op.make_node(*args).outputs[0]
        return Elemwise(Composite([inner], [out])), x
    except (TypeError, ValueError):
        return None


@node_rewriter([CAReduce])
def local_careduce_fusion(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``CAReduce(Elemwise(x)) -> MapReduce(Elemwise, CAReduce)(x)`` (see the module)."""
    careduce = node.op
    if not isinstance(careduce, CAReduce):  # the rewriter tracks CAReduce nodes only
        return False
    (mapped,) = node.inputs
    producer = mapped.owner
    if producer is None or not is_fusable(producer):
        return False
    if len(fgraph.clients.get(mapped, ())) != 1:  # another node or a graph output reads it
        return False
    unary = _unary_map(producer)
    if unary is None:
        return False
    elemwise, x = unary
    if tensor_type_of(x).ndim != tensor_type_of(mapped).ndim:
        return False
    try:
        new = tensor_out(MapReduce(elemwise, careduce)(x))
    except (TypeError, ValueError):
        return False
    if new.type != node.outputs[0].type:
        return False
    return [new]


def register_reduce_fusion(db: RewriteDatabase) -> None:
    """Register ``local_careduce_fusion`` as the phase ``careduce_fusion`` of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db.register(
        "careduce_fusion",
        in2out(local_careduce_fusion),
        "fast_run",
        "fusion",
        position=3.5,
    )
