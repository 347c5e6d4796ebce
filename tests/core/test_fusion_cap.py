"""Elementwise fusion bounds the size of what it fuses: a long chain becomes a chain of
fused nodes of at most ``max_nodes`` scalar nodes each (so that the code generated for one
fused node, and the time to compile it, stay bounded), computing the same values."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.fg import FunctionGraph
from opweave.scalar import Composite
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.fusion import (
    DEFAULT_MAX_NODES,
    FusionOptimizer,
    scalar_node_count,
)

LONG = os.environ.get("OPWEAVE_RELIABILITY_LONG", "0") not in ("", "0")


def chain(x, n: int, unary: bool = False):
    """``x`` under ``n`` elementwise steps (each a single scalar node), and the same steps
    as a NumPy function; with ``unary``, steps without constants (a rewriter applied
    alone, without the canonical rewrites, keeps a constant as an input of its own)."""
    steps = [
        (ot.sin, np.sin),
        (lambda t: t * 1.0001, lambda t: t * 1.0001),
        (lambda t: t + 0.5, lambda t: t + 0.5),
        (ot.tanh, np.tanh),
    ]
    if unary:
        steps = [(ot.sin, np.sin), (ot.tanh, np.tanh), (ot.cos, np.cos), (ot.neg, np.negative)]
    out = x
    for k in range(n):
        out = steps[k % len(steps)][0](out)

    def reference(value: np.ndarray) -> np.ndarray:
        for k in range(n):
            value = steps[k % len(steps)][1](value)
        return value

    return out, reference


def fused_sizes(nodes) -> list[int]:
    return [
        scalar_node_count(node)
        for node in nodes
        if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    ]


@pytest.mark.parametrize("linker", ["py", "vm"])
def test_a_long_chain_becomes_fused_nodes_within_the_bound(linker: str) -> None:
    n = 2 * DEFAULT_MAX_NODES + 50
    x = ot.dvector("x")
    out, reference = chain(x, n)
    f = opweave.function([x], out, mode=Mode(linker=linker))
    nodes = f.maker.fgraph.toposort()
    sizes = fused_sizes(nodes)
    assert all(size <= DEFAULT_MAX_NODES for size in sizes)
    assert len(nodes) >= math.ceil(n / DEFAULT_MAX_NODES)
    assert sum(sizes) + len(nodes) - len(sizes) >= n  # every step still computed
    value = np.linspace(-2.0, 2.0, 9)
    np.testing.assert_allclose(f(value), reference(value), rtol=1e-12)


@pytest.mark.parametrize("max_nodes", [2, 7, 50])
def test_the_bound_is_kept_over_every_pass(max_nodes: int) -> None:
    x = ot.dvector("x")
    out, reference = chain(x, 120, unary=True)
    fgraph = FunctionGraph([x], [out], clone=True)
    rewriter = FusionOptimizer(max_nodes=max_nodes)
    assert rewriter.rewrite(fgraph) > 0
    nodes = fgraph.toposort()
    sizes = fused_sizes(nodes)
    assert sizes and all(size <= max_nodes for size in sizes)
    # a chain of 120 single-node steps needs at least this many nodes
    assert len(nodes) >= math.ceil(120 / max_nodes)
    # neighbours together would pass the bound: no later pass fuses them
    assert rewriter.rewrite(fgraph) == 0
    mode = Mode(linker="py").excluding("fusion")
    f = opweave.function(fgraph.inputs, fgraph.outputs[0], mode=mode)
    value = np.linspace(-2.0, 2.0, 9)
    np.testing.assert_allclose(f(value), reference(value), rtol=1e-12)


def test_fused_node_above_the_bound_is_left_as_it_is() -> None:
    x = ot.dvector("x")
    inner, _ = chain(x, 40, unary=True)
    big = FunctionGraph([x], [inner], clone=True)
    FusionOptimizer(max_nodes=100).rewrite(big)
    (node,) = big.toposort()
    assert scalar_node_count(node) == 40
    # its result, then two more steps: with a bound of 10 they fuse together, not into it
    out = ot.exp(node.op(x) + 1.0)
    fgraph = FunctionGraph([x], [out], clone=True)
    FusionOptimizer(max_nodes=10).rewrite(fgraph)
    assert sorted(fused_sizes(fgraph.toposort())) == [2, 40]


def test_the_bound_is_checked() -> None:
    with pytest.raises(ValueError, match="max_nodes must be at least 2"):
        FusionOptimizer(max_nodes=1)


#: The C test's chain: just past one bound by default, four bounds long in the long run
#: (``make test-long``), which also builds it with ``c``.
C_CHAIN_BOUNDS = 4 if LONG else 1


@pytest.mark.parametrize("linker", ["c", "cvm"] if LONG else ["cvm"])
def test_a_long_chain_compiles_in_bounded_pieces_in_c(linker: str) -> None:
    n = C_CHAIN_BOUNDS * DEFAULT_MAX_NODES + 8
    x = ot.dvector("x")
    out, reference = chain(x, n)
    f = opweave.function([x], out, mode=Mode(linker=linker))
    sizes = fused_sizes(f.maker.fgraph.toposort())
    assert len(sizes) >= C_CHAIN_BOUNDS + 1
    assert all(size <= DEFAULT_MAX_NODES for size in sizes)
    value = np.linspace(-2.0, 2.0, 9)
    np.testing.assert_allclose(f(value), reference(value), rtol=1e-12)
