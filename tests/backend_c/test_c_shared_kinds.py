"""The ``c`` linker writes one function per kind of node, called from the graph function, so a
graph of many repeated blocks compiles only its distinct kinds."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.scalar import Composite
from opweave.tensor.elemwise import Elemwise


def repeated_blocks(n: int) -> tuple[object, object]:
    x = ot.dvector("x")
    e = x
    for i in range(n):
        e = ot.tanh(e * (1.0 + i / 1000.0) + 0.1) + ot.mean(e) * 0.01
    return x, e


def reference(n: int, value: np.ndarray) -> np.ndarray:
    e = value
    for i in range(n):
        e = np.tanh(e * (1.0 + i / 1000.0) + 0.1) + e.mean() * 0.01
    return e


def kind_functions(f: object) -> list[str]:
    block = f.maker.linker._block  # type: ignore[attr-defined]
    return [s for s in block.support_apply if s.startswith("static int opw_kind_")]


def test_repeated_blocks_share_their_kind_functions() -> None:
    x, e = repeated_blocks(12)
    f = opweave.function([x], e, mode=Mode(linker="c"))
    value = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_allclose(f(value), reference(12, value), rtol=1e-12)
    np.testing.assert_allclose(f(value * 2), reference(12, value * 2), rtol=1e-12)
    nodes = f.maker.fgraph.apply_nodes
    kinds = kind_functions(f)
    assert len(nodes) >= 45 and len(kinds) <= 7  # 12 blocks, 7 kinds of node at most
    calls = f.maker.linker._block.code.count("(opw_args)) {__failure")
    assert calls == len(nodes)  # every node calls its kind's function


def test_the_c_linker_lifts_fused_constants_and_other_linkers_do_not() -> None:
    x, e = repeated_blocks(3)
    for linker, lifted in (("c", True), ("cvm", False), ("vm", False)):
        f = opweave.function([x], e, mode=Mode(linker=linker))
        fused = [
            n
            for n in f.maker.fgraph.apply_nodes
            if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Composite)
        ]
        takes_constants = [any(isinstance(i, ot.TensorConstant) for i in n.inputs) for n in fused]
        assert any(takes_constants) is lifted, linker


def test_a_failing_node_is_named_from_its_kind_function() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = opweave.function([x, y], ot.exp(ot.dot(x, y)) + 1, mode=Mode(linker="c"))
    assert f(np.ones(3), np.ones(3)) == pytest.approx(np.exp(3.0) + 1)
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error" in notes and "Dot" in notes
    assert f(np.ones(2), np.ones(2)) == pytest.approx(np.exp(2.0) + 1)  # still usable


def test_in_place_nodes_and_repeated_inputs_in_kind_functions() -> None:
    x = ot.dvector("x")
    out = ot.exp(x * x) + x  # fused, maybe in place on an intermediate; x read twice
    f = opweave.function([x], [out, x * x], mode=Mode(linker="c"))
    value = np.arange(4.0)
    first, square = f(value)
    np.testing.assert_allclose(first, np.exp(value * value) + value)
    np.testing.assert_allclose(square, value * value)
    np.testing.assert_array_equal(value, np.arange(4.0))  # the input is untouched


def test_nodes_with_types_from_elsewhere_keep_their_code_inline() -> None:
    from opweave_double import add, double, mul

    a, b = double("a"), double("b")
    f = opweave.function([a, b], add(mul(a, b), a), mode=Mode(linker="c"))
    assert f(2.0, 3.0) == 8.0
    assert kind_functions(f) == []
    code = f.maker.linker._block.code
    assert "opweave node:" in code  # the nodes' code is in the graph function itself


def test_a_long_graph_function_is_built_without_optimisation_and_a_short_one_with() -> None:
    from opweave_c.codegen import GLUE_MIN_NODES

    x, e = repeated_blocks(12)
    long_f = opweave.function([x], e, mode=Mode(linker="c"))
    assert len(long_f.maker.fgraph.apply_nodes) >= GLUE_MIN_NODES
    assert long_f.maker.linker._block.code.startswith("static OPW_GLUE int opw_graph(")
    x, e = repeated_blocks(1)
    short_f = opweave.function([x], e, mode=Mode(linker="c"))
    assert short_f.maker.linker._block.code.startswith("static int opw_graph(")
    value = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(short_f(value), reference(1, value), rtol=1e-12)
