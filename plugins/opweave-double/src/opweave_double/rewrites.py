"""Algebraic identities on ``double`` graphs, contributed through ``opweave_rewrites``."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Constant
from opweave.graph.rewriting import node_rewriter
from opweave_double.ops import add, mul


def _neutral_operand(node: Any, neutral: float) -> Any:
    """Return the operand of a binary node whose other operand is the constant ``neutral``."""
    x, y = node.inputs
    if isinstance(y, Constant) and y.data == neutral:
        return x
    if isinstance(x, Constant) and x.data == neutral:
        return y
    return None


@node_rewriter([add])
def remove_add_zero(fgraph: Any, node: Any) -> list[Any] | None:
    """``x + 0.0 -> x`` and ``0.0 + x -> x``."""
    kept = _neutral_operand(node, 0.0)
    return [kept] if kept is not None else None


@node_rewriter([mul])
def remove_mul_one(fgraph: Any, node: Any) -> list[Any] | None:
    """``x * 1.0 -> x`` and ``1.0 * x -> x``."""
    kept = _neutral_operand(node, 1.0)
    return [kept] if kept is not None else None
