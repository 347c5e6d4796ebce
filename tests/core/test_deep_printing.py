"""Printing and walking graphs far deeper than Python's recursion limit: ``pp``,
``pprint``, ``debugprint``/``dprint`` and the traversal helpers they use walk with a
stack of their own."""

from __future__ import annotations

import io
import sys

import pytest

import opweave
import opweave.tensor as ot
from opweave.graph.traversal import ancestors, io_toposort
from opweave.graph_picture import graph_dot
from opweave.printing import debugprint, dprint, pp, pprint

DEPTH = 5000


@pytest.fixture(scope="module")
def chain():
    """``x`` under DEPTH alternating ``exp(.)`` and ``. + c``, with the text ``pp``
    should give for it, built alongside."""
    assert DEPTH > sys.getrecursionlimit()
    x, c = ot.vector("x"), ot.vector("c")
    y, text = x, "x"
    for i in range(DEPTH):
        if i % 2:
            y, text = y + c, f"({text} + c)"
        else:
            y, text = ot.exp(y), f"exp({text})"
    return x, y, text


@pytest.mark.parametrize("render", [pp, pprint])
def test_pp_renders_a_deep_chain(chain, render) -> None:
    _, y, text = chain
    assert render(y) == text


@pytest.mark.parametrize("printer", [debugprint, dprint, opweave.dprint])
def test_debugprint_prints_a_deep_chain(chain, printer) -> None:
    _, y, _ = chain
    lines = printer(y, file="str").splitlines()
    # one line per node, per use of c (DEPTH // 2 of them) and for x
    assert len(lines) == DEPTH + DEPTH // 2 + 1
    assert lines[0].startswith("Add [id A]")
    assert lines[1].startswith(" |Exp [id B]")
    (x_line,) = [line for line in lines if line.lstrip(" |").startswith("x [id ")]
    assert x_line.startswith(" |" * DEPTH + "x [id ")
    assert lines[-1].startswith(" |c [id ")


def test_debugprint_writes_a_deep_chain_to_a_stream(chain) -> None:
    _, y, _ = chain
    stream = io.StringIO()
    assert debugprint(y, file=stream, depth=10, print_type=True) is stream
    lines = stream.getvalue().splitlines()
    # the nodes of levels 0 to 10, and c under each Add above level 10
    assert len(lines) == 11 + 5
    assert all(line.endswith("<TensorType(float64, shape=(None,))>") for line in lines)


def test_traversals_of_a_deep_chain(chain) -> None:
    x, y, _ = chain
    assert len(io_toposort([x], [y])) == DEPTH
    assert x in set(ancestors([y]))
    assert graph_dot([y]).count("->") >= DEPTH


def test_pp_renders_a_shared_subgraph_in_each_place() -> None:
    x = ot.vector("x")
    a = ot.exp(x)
    b = a * a
    c = b + a
    assert pp(c) == "((exp(x) * exp(x)) + exp(x))"
    assert pp(c - c) == "(((exp(x) * exp(x)) + exp(x)) - ((exp(x) * exp(x)) + exp(x)))"
