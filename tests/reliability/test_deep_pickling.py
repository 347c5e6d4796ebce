"""Deep graphs and the functions compiled from them pickle at the default recursion limit.

Pickling (and ``copy.deepcopy``) saves a graph's nodes leaves first, so the recursion
does not grow with the depth of the graph.
"""

from __future__ import annotations

import copy
import pickle
import sys

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.traversal import io_toposort

#: Deeper than the default recursion limit allows with one frame per graph level.
LAYERS = 64
CHAIN = 1200


def roundtrip(obj: object) -> object:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def mlp(layers: int, width: int = 3) -> tuple[Variable, Variable, list[np.ndarray]]:
    """A ``layers``-deep tanh network of shared weights; its input, output and weights."""
    rng = np.random.default_rng(20)
    x = ot.dmatrix("x")
    h = x
    weights = []
    for i in range(layers):
        w = rng.normal(scale=0.6, size=(width, width))
        b = rng.normal(scale=0.1, size=width)
        weights.append((w, b))
        h = ot.tanh(ot.dot(h, opweave.shared(w, name=f"w{i}")) + opweave.shared(b, name=f"b{i}"))
    return x, h, weights


def mlp_numpy(value: np.ndarray, weights: list) -> np.ndarray:
    for w, b in weights:
        value = np.tanh(value @ w + b)
    return value


def chain(length: int) -> tuple[Variable, Variable]:
    x = ot.dvector("x")
    h = x
    for i in range(length):
        h = h * 0.5 if i % 2 else h + 1.0
    return x, h


def nodes_inputs(nodes: list[Apply]) -> list[Variable]:
    return [inp for node in nodes for inp in node.inputs]


def test_the_recursion_limit_is_the_default() -> None:
    # The other tests mean something only where no one raised the limit.
    assert sys.getrecursionlimit() <= 1000


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_a_deep_mlp_function_pickles_and_computes(linker: str) -> None:
    x, h, weights = mlp(LAYERS)
    f = opweave.function([x], h, mode=Mode(linker=linker))
    value = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    g = roundtrip(f)
    np.testing.assert_allclose(g(value), mlp_numpy(value, weights), rtol=1e-12)
    np.testing.assert_allclose(g(value), f(value), rtol=0)


def test_a_deep_graph_pickles_with_its_structure_and_identity() -> None:
    x, h = chain(CHAIN)
    loaded_x, loaded_h = roundtrip([x, h])
    nodes = io_toposort([x], [h])
    loaded = io_toposort([loaded_x], [loaded_h])
    assert [str(n.op) for n in loaded] == [str(n.op) for n in nodes]
    # The input is the one loaded beside the output, not a copy of it.
    inputs = nodes_inputs(loaded)
    assert any(v is loaded_x for v in inputs) and not any(v is x for v in inputs)
    fn = opweave.function([loaded_x], loaded_h, mode=Mode(linker="py", optimizer=None))
    value = np.arange(3.0)
    expected = value
    for i in range(CHAIN):
        expected = expected * 0.5 if i % 2 else expected + 1.0
    np.testing.assert_allclose(fn(value), expected)


def test_a_deep_function_graph_pickles_and_deep_copies() -> None:
    x, h = chain(CHAIN)
    fg = FunctionGraph([x], [h], clone=False)
    for loaded in (roundtrip(fg), copy.deepcopy(fg)):
        assert isinstance(loaded, FunctionGraph)
        assert len(loaded.apply_nodes) == len(fg.apply_nodes)
        assert all(n.inputs[0] in loaded.variables for n in loaded.apply_nodes)


def test_copying_a_node_or_variable_stays_shallow() -> None:
    _, h = chain(4)
    node = copy.copy(h.owner)
    assert type(node) is Apply and node is not h.owner
    assert node.inputs == h.owner.inputs and node.outputs == h.owner.outputs
    var = copy.copy(h)
    assert var is not h and var.owner is h.owner and var.type == h.type


def test_the_rewrite_key_walks_no_ancestry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rewrite cache's payload lists the nodes leaves first: they are saved plainly,
    with no walk of each node's ancestry (one per node made a compile quadratic), and the
    key is still made at the default recursion limit."""
    from opweave.compile import rewrite_cache
    from opweave.graph import basic

    walks: list[int] = []
    original = basic._ancestors_first

    def counting(inputs: object) -> list[object]:
        walks.append(1)
        return original(inputs)  # type: ignore[arg-type]

    monkeypatch.setattr(basic, "_ancestors_first", counting)
    x, h = chain(CHAIN)
    fgraph = FunctionGraph([x], [h])
    key = rewrite_cache.rewrite_key(fgraph, [()], [()], ("fast_run",), "vm")
    assert key is not None
    assert walks == []
    # A graph pickled on its own still walks its ancestry: once for the variable, once
    # for its owner (saved after the ancestors), not once per node.
    roundtrip(h)
    assert len(walks) == 2
