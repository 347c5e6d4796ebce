"""The Bessel functions of real order (``jv``, ``kve``, ``kv``, ``kn``), ``hyp2f1``,
``betaincinv`` and ``owens_t`` of ``opweave.tensor``, against SciPy (the reference values
only), on the ``vm`` and ``cvm`` linkers, with their gradients and edges."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import scipy.special as sps

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, grad, verify_grad

LINKERS = ["vm", "cvm"]


def run(fn: Any, *arrays: Any, linker: str = "vm") -> Any:
    arrays = [np.asarray(a, dtype="float64") for a in arrays]
    xs = [ot.dvector(f"x{k}") for k in range(len(arrays))]
    return opweave.function(xs, fn(*xs), mode=Mode(linker=linker))(*arrays)


def grid(*axes: Any) -> list[np.ndarray]:
    return [g.ravel() for g in np.meshgrid(*[np.asarray(a, dtype=float) for a in axes])]


def verify(fun: Any, *pt: Any) -> None:
    pts = [np.asarray(p, dtype="float64") for p in pt]
    verify_grad(fun, pts, rng=np.random.default_rng(3), mode=Mode(linker="py"))


ORDERS = [-7.5, -3.0, -2.5, -1.0, -0.3, 0.0, 0.5, 1.0, 2.0, 3.7, 10.0, 25.5, 60.0]
ARGS = [1e-6, 0.01, 0.7, 1.9, 2.0, 2.1, 5.0, 12.3, 24.9, 25.1, 40.0, 80.0, 250.0]


# ====================================================================== jv


@pytest.mark.parametrize("linker", LINKERS)
def test_jv_matches_scipy_over_orders_and_arguments(linker: str) -> None:
    v, x = grid(ORDERS, ARGS)
    got = run(ot.jv, v, x, linker=linker)
    np.testing.assert_allclose(got, sps.jv(v, x), rtol=1e-10, atol=1e-14)


def test_jv_negative_x_integer_orders_and_nan_otherwise() -> None:
    v, x = grid([-3.0, -2.0, 0.0, 1.0, 4.0], [-0.5, -3.0, -30.0])
    np.testing.assert_allclose(run(ot.jv, v, x), sps.jv(v, x), rtol=1e-11, atol=1e-15)
    assert np.isnan(run(ot.jv, [0.5, -1.5], [-1.0, -2.0])).all()


def test_jv_edges_match_scipy() -> None:
    v = np.array([0.0, 1.0, -2.0, 2.5, -0.5, -1.5, 3.0, np.nan, 200.0])
    x = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, np.nan, 1.0, 1.0])
    got = run(ot.jv, v, x)
    np.testing.assert_array_equal(got, sps.jv(v, x))  # 1, 0, 0, 0, inf, -inf, nan, nan, 0


def test_jv_large_argument_and_order() -> None:
    v, x = grid([0.0, 1.5, 7.0], [1e3, 1e5])
    np.testing.assert_allclose(run(ot.jv, v, x), sps.jv(v, x), rtol=1e-8, atol=1e-13)
    got = run(ot.jv, [150.0, 400.0, -100.5], [100.0, 30.0, 3.0])
    np.testing.assert_allclose(got, sps.jv([150.0, 400.0, -100.5], [100.0, 30.0, 3.0]), rtol=1e-9)


def test_jv_gradient_in_x_and_not_in_v() -> None:
    verify(lambda x: ot.jv(np.array([0.0, 1.5, -2.5]), x), [0.7, 3.3, 12.0])
    v, x = ot.dscalar("v"), ot.dscalar("x")
    g = opweave.function([v, x], grad(ot.jv(v, x), x))
    want = 0.5 * (sps.jv(1.3, 4.2) - sps.jv(3.3, 4.2))
    np.testing.assert_allclose(g(2.3, 4.2), want, rtol=1e-10)
    with pytest.raises(NullTypeGradError, match="order"):
        grad(ot.jv(v, x), v)


# ====================================================================== kve, kv, kn


@pytest.mark.parametrize("linker", LINKERS)
def test_kve_and_kv_match_scipy(linker: str) -> None:
    v, x = grid(ORDERS, ARGS)
    got_kve, got_kv = run(lambda a, b: [ot.kve(a, b), ot.kv(a, b)], v, x, linker=linker)
    np.testing.assert_allclose(got_kve, sps.kve(v, x), rtol=1e-11)
    np.testing.assert_allclose(got_kv, sps.kv(v, x), rtol=1e-11, atol=1e-300)


def test_kn_is_kv_of_integer_orders() -> None:
    n, x = grid([0.0, 1.0, 2.0, 5.0, -3.0], [0.1, 1.0, 7.5, 30.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = sps.kn(n.astype(int), x)
    np.testing.assert_allclose(run(ot.kn, n, x), want, rtol=1e-11)


def test_kve_kv_edges() -> None:
    v = np.array([0.0, 1.0, 0.5, 2.0, np.nan, 1000.0, 2.0])
    x = np.array([0.0, 0.0, -1.0, np.nan, 1.0, 1.0, 1e300])
    got_kve, got_kv = run(lambda a, b: [ot.kve(a, b), ot.kv(a, b)], v, x)
    np.testing.assert_array_equal(got_kv[:6], sps.kv(v[:6], x[:6]))  # inf inf nan nan nan inf
    np.testing.assert_array_equal(got_kve[:6], sps.kve(v[:6], x[:6]))
    # far out: kve(v, x) -> sqrt(pi / (2 x)) (SciPy gives NaN there)
    np.testing.assert_allclose(got_kve[6], np.sqrt(np.pi / 2e300), rtol=1e-12)
    assert run(ot.kv, [1.0], [np.inf])[0] == sps.kv(1.0, np.inf) == 0.0
    np.testing.assert_allclose(run(ot.kve, [3.0], [1e8]), sps.kve(3.0, 1e8), rtol=1e-12)


def test_kve_and_kv_gradients() -> None:
    verify(lambda x: ot.kve(np.array([0.0, 1.5, -2.5]), x), [0.7, 3.3, 12.0])
    verify(lambda x: ot.kv(np.array([0.4, 1.0, 4.0]), x), [0.5, 2.5, 6.0])
    v, x = ot.dscalar("v"), ot.dscalar("x")
    g = opweave.function([v, x], grad(ot.kv(v, x), x))
    want = -0.5 * (sps.kv(0.3, 1.7) + sps.kv(2.3, 1.7))
    np.testing.assert_allclose(g(1.3, 1.7), want, rtol=1e-10)
    with pytest.raises(NullTypeGradError, match="order"):
        grad(ot.kve(v, x), v)


def test_integer_inputs_give_float64_and_shapes_infer() -> None:
    n, x = ot.lvector("n"), ot.dmatrix("x")
    out = ot.kve(n, x)
    assert out.dtype == "float64" and out.ndim == 2
    f = opweave.function([n, x], out.shape)
    assert tuple(f(np.array([1, 2, 3]), np.ones((4, 3)))) == (4, 3)
    topo = f.maker.fgraph.toposort()
    assert not any(getattr(node.op, "scalar_op", None) is not None for node in topo)


# ====================================================================== hyp2f1


@pytest.mark.parametrize("linker", LINKERS)
def test_hyp2f1_matches_scipy(linker: str) -> None:
    rng = np.random.default_rng(1)
    size = 400
    a, b = rng.uniform(-4, 4, size), rng.uniform(-4, 4, size)
    c = rng.uniform(0.2, 6, size)
    z = rng.choice([-30, -5, -1.5, -0.99, -0.5, -0.1, 0.1, 0.5, 0.9, 0.93, 0.97, 0.999], size)
    got = run(ot.hyp2f1, a, b, c, z, linker=linker)
    np.testing.assert_allclose(got, sps.hyp2f1(a, b, c, z), rtol=1e-10)


def test_hyp2f1_integer_c_minus_a_minus_b_and_polynomials() -> None:
    a, b, m, z = grid([0.3, 1.7, 2.5], [0.6, 1.2, 3.1], [-2, -1, 0, 1, 3], [0.95, 0.99, -20])
    np.testing.assert_allclose(
        run(ot.hyp2f1, a, b, a + b + m, z), sps.hyp2f1(a, b, a + b + m, z), rtol=1e-10
    )
    # terminating series: any z, including z > 1
    a, b, c, z = grid([-3.0], [1.5, 2.0], [2.5, -5.0], [-3.0, 0.5, 1.0, 2.5])
    np.testing.assert_allclose(run(ot.hyp2f1, a, b, c, z), sps.hyp2f1(a, b, c, z), rtol=1e-13)


def test_hyp2f1_edges_match_scipy() -> None:
    a = np.array([1.0, 1.0, 1.0, 1.0, -2.0, 1.0, 1.0, np.nan])
    b = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0])
    c = np.array([2.0, 3.0, 2.0, 0.0, -1.0, 3.0, 2.0, 1.0])
    z = np.array([1.0, 1.0, 1.5, 0.5, 0.5, -np.inf, 0.0, 0.5])
    got = run(ot.hyp2f1, a, b, c, z)
    np.testing.assert_allclose(
        got, sps.hyp2f1(a, b, c, z), rtol=1e-15
    )  # inf 2 inf inf inf nan 1 nan


def test_hyp2f1_gradients() -> None:
    verify(lambda z: ot.hyp2f1(1.5, -0.7, 2.2, z), [-3.0, 0.2, 0.8, 0.95])
    verify(lambda a: ot.hyp2f1(a, 1.0, 2.0, 0.4), [0.5, 1.5])
    verify(lambda c: ot.hyp2f1(1.5, -0.7, c, -0.3), [2.2, 3.0])


# ====================================================================== betaincinv


@pytest.mark.parametrize("linker", LINKERS)
def test_betaincinv_matches_scipy(linker: str) -> None:
    a, b, y = grid(
        [0.1, 0.5, 1.0, 2.5, 10.0, 50.0], [0.2, 1.0, 3.0, 30.0], [1e-30, 1e-8, 0.01, 0.3, 0.5,
                                                                 0.7, 0.99, 1 - 1e-10]
    )  # fmt: skip
    got = run(ot.betaincinv, a, b, y, linker=linker)
    np.testing.assert_allclose(got, sps.betaincinv(a, b, y), rtol=1e-10)


def test_betaincinv_round_trip_and_edges() -> None:
    a, b, y = grid([0.3, 2.0, 40.0], [0.7, 5.0], [1e-60, 1e-5, 0.4, 0.9999])
    x = run(ot.betaincinv, a, b, y)
    np.testing.assert_allclose(run(ot.betainc, a, b, x), y, rtol=1e-10)
    a = np.array([1.0, 1.0, 0.0, -1.0, 1.0, 1.0, np.nan])
    b = np.array([2.0, 2.0, 1.0, 2.0, 1.0, 1.0, 1.0])
    y = np.array([0.0, 1.0, 0.5, 0.5, 1.5, -0.1, 0.5])
    np.testing.assert_array_equal(run(ot.betaincinv, a, b, y), sps.betaincinv(a, b, y))


def test_betaincinv_gradient() -> None:
    verify(lambda y: ot.betaincinv(np.array([0.5, 2.0, 7.0]), 3.0, y), [0.2, 0.5, 0.9])
    a, y = ot.dscalar("a"), ot.dscalar("y")
    with pytest.raises(NullTypeGradError, match="betaincinv"):
        grad(ot.betaincinv(a, 2.0, y), a)


# ====================================================================== owens_t


@pytest.mark.parametrize("linker", LINKERS)
def test_owens_t_matches_scipy(linker: str) -> None:
    h, a = grid(
        [-3.0, -1e-3, 0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 37.0],
        [-5.0, -1.0, -0.3, 1e-5, 0.2, 0.5, 0.999, 1.0, 1.001, 2.0, 10.0, 1e3],
    )
    got = run(ot.owens_t, h, a, linker=linker)
    np.testing.assert_allclose(got, sps.owens_t(h, a), rtol=1e-11, atol=1e-300)


def test_owens_t_edges() -> None:
    h = np.array([0.0, 0.0, np.inf, 1.0, -1.0, 1.0, np.nan, 40.0])
    a = np.array([0.0, np.inf, 1.0, np.inf, np.inf, -np.inf, 1.0, 2.0])
    np.testing.assert_allclose(run(ot.owens_t, h, a), sps.owens_t(h, a), rtol=1e-13)


def test_owens_t_gradients() -> None:
    verify(ot.owens_t, [-1.5, 0.3, 2.0, 0.8], [0.4, -2.0, 1.5, 7.0])


def test_names_are_exported_as_in_pytensor() -> None:
    for name in ("jv", "kv", "kve", "kn", "hyp2f1", "betaincinv", "owens_t"):
        assert name in ot.__all__ and callable(getattr(ot, name))
    assert ot.jv(ot.dscalar(), ot.dscalar()).owner.op == ot.jv
