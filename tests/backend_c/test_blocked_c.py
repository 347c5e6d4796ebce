"""Blocked evaluation of deep fused Composites in C (``opweave_c.impls.blocked``): the same
values as the Python backend and as the element-by-element strided loop, at every length
around the block size, with scalar inputs, constants, several outputs and in place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise
from opweave_c.impls.blocked import SEGMENT_NODES, segments

PY = Mode(linker="py", optimizer=None)
C = Mode(linker="c", optimizer=None)
LENGTHS = [0, 1, 7, 63, 64, 65, 200]


def deep_composite(dtype: str) -> tuple[Composite, list[ps.ScalarVariable]]:
    """Three inputs (the last used as a statically scalar one), several expensive calls, a
    value shared across segments, a constant, a uniform sub-expression and three outputs:
    one of them is an input itself."""
    a, b, c = (ps.get_scalar_type(dtype)() for _ in range(3))
    t = ps.tanh(a * 1.5 + c)
    u = ps.exp(-ps.sqr(t)) * b
    k = ps.sqr(c) + 2.0  # depends on the scalar input only: computed once
    v = ps.log1p(ps.abs_(u - t)) * k + t  # t crosses two segments
    w = ps.sin(v) - ps.cos(a)
    return Composite([a, b, c], [w, v * t, a]), [a, b, c]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_blocked_loop_matches_python_at_every_length(dtype: str, tmp_path: Path) -> None:
    comp, _ = deep_composite(dtype)
    assert len(segments(comp.inner_nodes())) >= 3
    x, y = ot.vector("x", dtype=dtype), ot.vector("y", dtype=dtype)
    s = ot.TensorType(dtype, shape=(1,))("s")
    outs = Elemwise(comp)(x, y, s, return_list=True)
    with opweave.config.change_flags(compiledir=str(tmp_path)):
        f = opweave.function([x, y, s], outs, mode=C)
    (source,) = [p.read_text() for p in tmp_path.rglob("*.c") if "prelude" not in p.parts]
    assert "opw_i0 += " in source, "the flat loop should be blocked"
    ref = opweave.function([x, y, s], outs, mode=PY)
    rng = np.random.default_rng(3)
    # float32 computes in single precision, then some results are float64: compare with
    # the float32 rounding (outputs near 0 are differences of float32 values).
    rtol, atol = (2e-6, 1e-6) if dtype == "float32" else (1e-13, 1e-15)
    for n in LENGTHS:
        xs = rng.normal(size=n).astype(dtype)
        ys = rng.normal(size=n).astype(dtype)
        args = (xs, ys, np.array([0.25], dtype=dtype))
        for out, got, exp in zip(outs, f(*args), ref(*args), strict=True):
            assert got.dtype == np.dtype(out.type.dtype) and got.shape == (n,)
            np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol)
        # Strided inputs take the element-by-element loop (which may call the scalar math
        # library where the blocked loop calls the vector one): the same values to rtol.
        wide = np.repeat(xs, 2)[::2]
        for got, exp in zip(f(wide, ys, args[2]), f(*args), strict=True):
            np.testing.assert_allclose(got, exp, rtol=rtol, atol=atol)


def test_special_values_and_integer_outputs() -> None:
    """NaN, infinities and signed zeros through a blocked loop; an integer output."""
    a, b = ps.float64(), ps.float64()
    chain = a
    for _ in range(3):
        chain = ps.exp(ps.tanh(chain) * b)
    comp = Composite([a, b], [chain, ps.cast(ps.floor(chain * 10.0), "int64")])
    x, y = ot.dvector("x"), ot.dvector("y")
    outs = Elemwise(comp)(x, y, return_list=True)
    f, ref = (opweave.function([x, y], outs, mode=m) for m in (C, PY))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, 700.0, -700.0, 0.5])
    xs, ys = (m.ravel() for m in np.meshgrid(special, special))
    with np.errstate(all="ignore"):
        expected = ref(xs, ys)
        got = f(xs, ys)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-13, equal_nan=True)
    numbers = ~np.isnan(expected[0])  # the sign of a NaN means nothing
    np.testing.assert_array_equal(np.signbit(got[0][numbers]), np.signbit(expected[0][numbers]))
    np.testing.assert_array_equal(got[1], expected[1])
    assert got[1].dtype == np.int64


def test_many_cheap_nodes_are_cut_into_segments() -> None:
    a = ps.float64()
    out = a
    for k in range(3 * SEGMENT_NODES):
        out = out * 1.0001 + 0.5 if k % 2 else out - 0.25
    comp = Composite([a], [out])
    assert len(segments(comp.inner_nodes())) >= 3
    x = ot.dvector("x")
    y = Elemwise(comp)(x)
    xs = np.linspace(-3, 3, 130)
    np.testing.assert_array_equal(
        opweave.function([x], y, mode=C)(xs), opweave.function([x], y, mode=PY)(xs)
    )


def test_in_place_blocked_output_reads_inputs_before_storing() -> None:
    """Output 0 overwrites input 0 in place; output 1 is input 0 itself: it must be the old
    value, as out of place."""
    comp, _ = deep_composite("float64")
    swapped = Composite(comp.inputs, [comp.outputs[0], comp.inputs[0]])
    x, y, s = ot.dvector("x"), ot.dvector("y"), ot.TensorType("float64", shape=(1,))("s")
    outs = Elemwise(swapped, {0: 0})(x, y, s, return_list=True)
    f = opweave.function(
        [In(x, mutable=True), y, s], outs, mode=Mode(linker="c"), accept_inplace=True
    )
    ref = opweave.function([x, y, s], Elemwise(swapped)(x, y, s, return_list=True), mode=PY)
    xs, ys, ss = np.linspace(-1, 1, 150), np.linspace(2, 3, 150), np.array([0.5])
    expected = ref(xs.copy(), ys, ss)
    a = xs.copy()
    got = f(a, ys, ss)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(got[1], xs)  # the old values of x
    np.testing.assert_array_equal(a, got[0])  # x holds output 0


def test_fast_run_chain_of_tanh_is_one_blocked_loop(tmp_path: Path) -> None:
    """The benchmark's chain of 200 elementwise Ops: one node, blocked, exact."""
    x = ot.dvector("x")
    out = x
    for _ in range(50):
        out = ((ot.tanh(out) * 1.5) + 0.1) - 0.05
    with opweave.config.change_flags(compiledir=str(tmp_path)):
        f = opweave.function([x], out, mode=Mode(linker="c"))
    assert len(f.maker.fgraph.toposort()) == 1
    assert any("opw_i0 += " in p.read_text() for p in tmp_path.rglob("*.c"))
    xs = np.linspace(-2, 2, 1000)
    expected = xs
    for _ in range(50):
        expected = np.tanh(expected) * 1.5 + 0.1 - 0.05
    np.testing.assert_allclose(f(xs), expected, rtol=1e-12)


def test_row_loops_over_broadcast_operands(tmp_path: Path) -> None:
    """Rows of the strided loop that are contiguous or broadcast along the last axis (a
    bias row, a column of scales) go through the row loop, blocked where deep: the values
    of the Python backend for every layout, including rows of runtime length 1, strided
    rows and an in-place output."""
    m, row, col = ot.dmatrix("m"), ot.row("r", dtype="float64"), ot.col("c", dtype="float64")
    t3 = ot.TensorType("float64", shape=(None, 1, None))("t3")
    deep = ot.tanh(m + row)
    for _ in range(3):
        deep = ot.exp(-ot.tanh(deep * col)) + row
    outs = [ot.tanh(m + row), m * col - row, deep, ot.sin(t3 * m.dimshuffle(0, "x", 1))]
    with opweave.config.change_flags(compiledir=str(tmp_path)):
        f = opweave.function([m, row, col, t3], outs, mode=Mode(linker="c"))
    source = "".join(p.read_text() for p in tmp_path.rglob("*.c"))
    assert "opw_ew_row_" in source
    ref = opweave.function([m, row, col, t3], outs, mode=PY)
    rng = np.random.default_rng(5)
    for rows, cols in [(5, 70), (3, 1), (1, 9), (0, 4), (66, 65)]:
        mv = rng.normal(size=(rows, cols))
        args = [mv, rng.normal(size=(1, cols)), rng.normal(size=(rows, 1))]
        args.append(rng.normal(size=(rows, 1, cols)))
        strided = [np.repeat(mv, 2, axis=1)[:, ::2], *args[1:]]
        for values in (args, strided):
            for got, exp in zip(f(*values), ref(*values), strict=True):
                np.testing.assert_allclose(got, exp, rtol=1e-13, atol=1e-15)
    x, b = ot.dmatrix("x"), ot.row("b", dtype="float64")
    inplace = Elemwise(ps.add, {0: 0})(x, b)
    g = opweave.function([In(x, mutable=True), b], inplace, mode=C, accept_inplace=True)
    xs, bs = np.arange(12.0).reshape(3, 4), np.array([[10.0, 20.0, 30.0, 40.0]])
    expected = xs + bs
    np.testing.assert_array_equal(g(xs, bs), expected)
    np.testing.assert_array_equal(xs, expected)
