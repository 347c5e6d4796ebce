"""Whether the Python kernels give the C kernels' bits on a graph: the tiered compile's test.

A tiered compile (:mod:`opweave.compile.tiered`) runs a function's first calls on the
Python kernels while its C builds, then switches. The two tiers must then compute the same
values bit for bit, or the same call could give two results depending on how fast the
compiler was. They do for the Ops below, and only for those:

* elementwise arithmetic whose IEEE result is exact and computed in the same order on both
  (``+ - * /``, negation, ``abs``, squares, reciprocals and ``sqrt`` are correctly rounded,
  and the C is built without FMA contraction), comparisons, logic, ``switch``, casts,
  rounding, ``clip``, ``maximum``/``minimum``, ``isnan``/``isinf``, through fused
  ``Composite`` nodes too;
* reductions that do not round (``max``, ``min``, logical ones, and integer sums and
  products);
* Ops that only move, view or check values (shapes, reshapes, transposes, indexing,
  ``set_subtensor``/``inc_subtensor`` of basic slices, joins, allocations, checks).

A transcendental function (``exp``, ``log``, ``tanh`` ...) is not: the C loops call the
vector math library (within 4 ulp) where NumPy calls its own loops, and sums of floats
add in another order. A graph with any other Op waits for its C, as without tiering.
"""

from __future__ import annotations

from opweave.compile.ops import DeepCopyOp, ViewOp
from opweave.graph.basic import Apply
from opweave.graph.fg import FunctionGraph
from opweave.raise_op import CheckAndRaise
from opweave.scalar import basic as sb
from opweave.scalar.composite import Composite
from opweave.scalar.math import Sqrt
from opweave.tensor.basic import (
    Alloc,
    Join,
    MakeVector,
    ScalarFromTensor,
    TensorFromScalar,
)
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.shape import Reshape, SpecifyShape
from opweave.tensor.shape_ops import Shape, Shape_i
from opweave.tensor.subtensor import AdvancedSubtensor1, IncSubtensor, Subtensor

__all__ = ["kernels_agree"]

#: Scalar Ops whose C and NumPy results are the same bits for every input.
EXACT_SCALAR_OPS: tuple[type, ...] = (
    sb.Add,
    sb.Sub,
    sb.Mul,
    sb.TrueDiv,
    sb.Neg,
    sb.Abs,
    sb.Sqr,
    sb.Reciprocal,
    Sqrt,
    sb.LogicalComparison,
    sb.FixedLogicalComparison,
    sb.BinaryBitOp,
    sb.UnaryBitOp,
    sb.Switch,
    sb.Second,
    sb.Identity,
    sb.Cast,
    sb.Sign,
    sb.Maximum,
    sb.Minimum,
    sb.Clip,
    sb.Floor,
    sb.Ceil,
    sb.Trunc,
    sb.RoundHalfToEven,
    sb.RoundHalfAwayFromZero,
)

#: Reductions whose result does not depend on the order elements are combined in.
_ORDERLESS_REDUCTIONS: tuple[type, ...] = (sb.Maximum, sb.Minimum, sb.BinaryBitOp)

#: Ops that move, view or check values without computing new ones.
_MOVING_OPS: tuple[type, ...] = (
    DimShuffle,
    Reshape,
    SpecifyShape,
    Shape,
    Shape_i,
    Subtensor,
    IncSubtensor,
    AdvancedSubtensor1,
    Alloc,
    MakeVector,
    Join,
    TensorFromScalar,
    ScalarFromTensor,
    DeepCopyOp,
    ViewOp,
    CheckAndRaise,
)


def _scalar_exact(op: object) -> bool:
    if isinstance(op, Composite):
        return all(_scalar_exact(node.op) for node in op.fgraph.apply_nodes)
    return isinstance(op, EXACT_SCALAR_OPS)


def _node_exact(node: Apply) -> bool:
    op = node.op
    if isinstance(op, Elemwise):
        return _scalar_exact(op.scalar_op)
    if isinstance(op, CAReduce):
        if isinstance(op.scalar_op, _ORDERLESS_REDUCTIONS):
            return True
        acc = str(op.acc_dtype or node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        return isinstance(op.scalar_op, sb.Add | sb.Mul) and acc[0] in "iub"
    return isinstance(op, _MOVING_OPS)


def kernels_agree(fgraph: FunctionGraph) -> bool:
    """Whether every node of ``fgraph`` computes the same bits in C and in Python (the
    Ops listed in this module's documentation)."""
    return all(_node_exact(node) for node in fgraph.apply_nodes)
