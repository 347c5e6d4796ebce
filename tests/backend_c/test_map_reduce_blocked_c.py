"""MapReduce of a deep fused map in C: a contiguous row is mapped a block at a time (the
Elemwise's own vectorised loop) before it is reduced. For a vector, the mapped values and
their order into the accumulators are those of the unfused graph (an Elemwise loop, then
the reduction), so the results are bit for bit the same, for every length around the block
and accumulator sizes; other axes and strided inputs agree to rounding (the vectorised and
scalar math calls may differ in the last bit, and the rows are mapped in other pieces)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.map_reduce import MapReduce

FUSED = Mode(linker="cvm")
UNFUSED = Mode(linker="cvm").excluding("careduce_fusion")
LENGTHS = [0, 1, 7, 8, 9, 127, 128, 129, 136, 255, 256, 1000, 4099]


def deep_map(v: ot.TensorVariable) -> ot.TensorVariable:
    """Eight steps with several expensive calls, so the map is a blocked loop."""
    for i in range(8):
        v = ot.tanh(v * 0.9 + 0.05) if i % 2 else ot.exp(v * 0.1) - 0.5
    return v


def _functions(x: ot.TensorVariable, out: ot.TensorVariable) -> tuple:
    fused = opweave.function([x], out, mode=FUSED)
    unfused = opweave.function([x], out, mode=UNFUSED)
    kinds = [type(node.op) for node in fused.maker.fgraph.apply_nodes]
    assert MapReduce in kinds, "the reduction of the map was not fused"
    assert MapReduce not in [type(n.op) for n in unfused.maker.fgraph.apply_nodes]
    assert fused.fn.c_nodes == list(range(len(fused.maker.fgraph.apply_nodes)))
    return fused, unfused


@pytest.mark.parametrize("reduce", ["sum", "max", "min", "prod"])
def test_full_reductions_equal_the_unfused_graph_bit_for_bit(reduce: str) -> None:
    x = ot.dvector("x")
    fused, unfused = _functions(x, getattr(ot, reduce)(deep_map(x)))
    rng = np.random.default_rng(5)
    for n in LENGTHS:
        if n == 0 and reduce in ("max", "min"):
            continue
        value = rng.standard_normal(n)
        np.testing.assert_array_equal(fused(value), unfused(value), err_msg=f"n={n}")
        np.testing.assert_allclose(fused(value), getattr(np, reduce)(_numpy_map(value)), rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_row_and_column_reductions_equal_the_unfused_graph(axis: int) -> None:
    x = ot.dmatrix("x")
    fused, unfused = _functions(x, ot.sum(deep_map(x), axis=axis))
    rng = np.random.default_rng(6)
    for shape in [(3, 129), (129, 3), (17, 300), (1, 1)]:
        value = rng.standard_normal(shape)
        np.testing.assert_allclose(fused(value), unfused(value), rtol=1e-14, err_msg=str(shape))
        # a strided view is mapped element by element (scalar calls, which may differ from
        # the vectorised ones in the last bit)
        view = np.asfortranarray(value)[:, ::2]
        np.testing.assert_allclose(fused(view), unfused(view), rtol=1e-13, err_msg=str(shape))


def test_float32_sum_equals_the_unfused_graph() -> None:
    x = ot.fvector("x")
    fused, unfused = _functions(x, ot.sum(deep_map(x)))
    value = np.random.default_rng(7).standard_normal(1000).astype("float32")
    got = fused(value)
    assert got.dtype == unfused(value).dtype
    np.testing.assert_array_equal(got, unfused(value))


def _numpy_map(v: np.ndarray) -> np.ndarray:
    for i in range(8):
        v = np.tanh(v * 0.9 + 0.05) if i % 2 else np.exp(v * 0.1) - 0.5
    return v


def test_only_maps_with_an_expensive_call_go_through_blocks() -> None:
    from opweave_c.impls.map_reduce import C_OPS

    x = ot.dvector("x")
    for out, blocked in [(ot.sum(x**2), False), (ot.sum(ot.exp(x) * 2.0), True)]:
        f = opweave.function([x], out, mode=FUSED)
        (node,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, MapReduce)]
        impl = C_OPS[MapReduce](node.op, node)
        assert impl.blocks is blocked
        assert (f"{impl.fn}_block" in impl.map_code) is blocked
        value = np.linspace(-1.0, 1.0, 1001)
        expected = np.sum(value**2) if not blocked else np.sum(np.exp(value) * 2.0)
        np.testing.assert_allclose(f(value), expected, rtol=1e-12)
