"""Lowering of :class:`~opweave.xtensor.vectorization.XElemwise` and
:class:`~opweave.xtensor.vectorization.XBlockwise` to tensor ``Elemwise`` and ``Blockwise``.

Each input is turned into a tensor whose axes follow the output's dimensions (a missing
dimension becomes a broadcastable axis), so positional broadcasting gives the named one.
"""

from __future__ import annotations

from typing import Any, cast

from opweave.graph.basic import Apply
from opweave.graph.rewriting import node_rewriter
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.elemwise import Elemwise
from opweave.xtensor.basic import xtensor_from_tensor
from opweave.xtensor.rewriting.utils import lower_aligned
from opweave.xtensor.vectorization import XBlockwise, XElemwise

__all__ = ["LOWERINGS", "lower_blockwise", "lower_elemwise"]


@node_rewriter([XElemwise])
def lower_elemwise(fgraph: Any, node: Apply) -> list[Any]:
    """``XElemwise(op)(*xs)`` -> ``Elemwise(op)`` of the inputs aligned on the output's
    dimensions."""
    op = cast(XElemwise, node.op)
    outputs: list[Any] = list(node.outputs)
    out_dims = outputs[0].type.dims
    tensor_inputs = [lower_aligned(inp, out_dims) for inp in node.inputs]
    tensor_outs = Elemwise(scalar_op=op.scalar_op).make_node(*tensor_inputs).outputs
    return [xtensor_from_tensor(out, dims=out_dims) for out in tensor_outs]


def _signature(core_dims: tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]) -> str:
    """A gufunc signature for ``core_dims``, each dimension name spelled ``d<k>``."""
    ins, outs = core_dims
    names: dict[str, str] = {}
    for dim in (d for operand in (*ins, *outs) for d in operand):
        names.setdefault(dim, f"d{len(names)}")

    def spell(operands: tuple[tuple[str, ...], ...]) -> str:
        return ",".join("(" + ",".join(names[d] for d in op) + ")" for op in operands)

    return f"{spell(ins)}->{spell(outs)}"


@node_rewriter([XBlockwise])
def lower_blockwise(fgraph: Any, node: Apply) -> list[Any]:
    """``XBlockwise(op)(*xs)`` -> ``Blockwise(op)`` of the inputs with the output's batch
    dimensions first and each input's core dimensions last."""
    op = cast(XBlockwise, node.op)
    outputs: list[Any] = list(node.outputs)
    inputs_core_dims, outputs_core_dims = op.core_dims
    batch_ndim = outputs[0].type.ndim - len(outputs_core_dims[0])
    batch_dims = outputs[0].type.dims[:batch_ndim]
    tensor_inputs = [
        lower_aligned(inp, (*batch_dims, *core))
        for inp, core in zip(node.inputs, inputs_core_dims, strict=True)
    ]
    signature = (
        op.signature or getattr(op.core_op, "gufunc_signature", None) or _signature(op.core_dims)
    )
    tensor_outs = (
        Blockwise(core_op=op.core_op, signature=signature).make_node(*tensor_inputs).outputs
    )
    return [
        xtensor_from_tensor(out, dims=old.type.dims)
        for out, old in zip(tensor_outs, outputs, strict=True)
    ]


LOWERINGS = (lower_elemwise, lower_blockwise)
