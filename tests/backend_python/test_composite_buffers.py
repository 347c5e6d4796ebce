"""Fused Composite loops write into dead intermediates, never into live values or inputs."""

from __future__ import annotations

import numpy as np

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave_python.impls.scalar import composite_impl


def test_dead_float_intermediates_are_reused() -> None:
    a, b, c = ps.float64("a"), ps.float64("b"), ps.float64("c")
    comp = ps.Composite([a, b, c], [ps.add(ps.mul(ps.exp(a), b), c)])
    source = composite_impl(comp).__doc__
    assert source.count("_into(") == 2  # mul and add reuse exp's, then mul's, buffer
    x, y, z = (np.random.default_rng(k).normal(size=1000) for k in range(3))
    copies = [v.copy() for v in (x, y, z)]
    np.testing.assert_allclose(composite_impl(comp)(x, y, z), np.exp(x) * y + z)
    for v, before in zip((x, y, z), copies, strict=True):
        np.testing.assert_array_equal(v, before)


def test_live_intermediates_and_inputs_are_not_overwritten() -> None:
    a, b = ps.float64("a"), ps.float64("b")
    e = ps.exp(a)
    comp = ps.Composite([a, b], [ps.add(ps.mul(e, b), e), ps.neg(a)])
    x, y = np.linspace(-1, 1, 7), np.linspace(2, 3, 7)
    xc, yc = x.copy(), y.copy()
    s, n = composite_impl(comp)(x, y)
    np.testing.assert_allclose(s, np.exp(x) * y + np.exp(x))
    np.testing.assert_allclose(n, -x)
    np.testing.assert_array_equal(x, xc)
    np.testing.assert_array_equal(y, yc)


def test_broadcasting_and_integer_steps_fall_back() -> None:
    m, v = ot.dmatrix("m"), ot.dvector("v")
    i = ot.lvector("i")
    expr = ot.exp(v) * m + ot.cast(i // 2, "float64")
    f = opweave.function([m, v, i], expr, mode="FAST_RUN")
    mv, vv, iv = np.ones((2, 3)), np.arange(3.0), np.array([1, 2, 5])
    np.testing.assert_allclose(f(mv, vv, iv), np.exp(vv) * mv + iv // 2)
    g = opweave.function([m, v, i], expr, mode=Mode(linker="vm", optimizer=None))
    np.testing.assert_allclose(f(mv, vv, iv), g(mv, vv, iv))
