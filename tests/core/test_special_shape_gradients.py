"""Derivatives of ``gammainc``/``gammaincc`` in ``k``, of ``betainc`` in ``a`` and ``b`` and
of ``hyp2f1`` in ``a``, ``b`` and ``c`` (``opweave.scalar.shape_gradients``, exported by
``opweave.scalar.math`` as ``gammainc_grad``, ``gammaincc_grad``, ``betainc_grad`` and
``hyp2f1_grad``), and the gradients of the tensor functions in every input.

References: values computed with PyTensor 2.38.3 (where they agree with an independent
reference), integral representations evaluated with ``scipy.integrate.quad``
(``d/dk P(k, x) = int_0^x t**(k-1) e**-t log(t) dt / Gamma(k) - digamma(k) P(k, x)`` and
its analogues), and central finite differences of ``scipy.special``.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, grad
from opweave.scalar.math import betainc_grad, gammainc_grad, gammaincc_grad, hyp2f1_grad

sps = pytest.importorskip("scipy.special")
integrate = pytest.importorskip("scipy.integrate")


def linkers() -> list[str]:
    """``py`` and ``vm``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py", "vm"]
    return ["py", "vm", "cvm"]


LINKERS = linkers()

# (k, x, d/dk gammainc, d/dk gammaincc), computed with PyTensor 2.38.3 (pt.grad of
# pt.gammainc / pt.gammaincc in k); points where PyTensor's value agrees with the integral.
PYTENSOR_GAMMA = [
    (0.001, 1e-08, -17.529499858968297, 17.529499858976465),
    (0.1, 1e-08, -2.9981796495820827, 2.9981796497197637),
    (0.001, 0.001, -6.293203824806453, 6.29320382468029),
    (0.001, 30.0, -3.0458488566839334e-15, 3.0458488566839334e-15),
    (2.5, 30.0, -3.3204679678797e-11, 3.3204679678797e-11),
    (0.5, 99.0, -3.7476498676264016e-44, 3.7476498676264016e-44),
    (10.0, 101.0, -1.0739110174605394e-31, 1.0739110174605394e-31),
    (2.5, 300.0, -1.0120104615399158e-126, 1.0120104615399158e-126),
    (10.0, 300.0, -9.946521416897341e-114, 9.946521416897341e-114),
]

# (a, b, x, d/da betainc, d/db betainc), computed with PyTensor 2.38.3 (pt.grad of
# pt.betainc).
PYTENSOR_BETA = [
    (0.001, 0.001, 1e-06, -253.3824552735798, 246.5710860621274),
    (0.5, 0.001, 0.3, -0.003742955916752046, 1.2265439457574727),
    (2.0, 0.001, 0.9, -0.0005466113147534928, 1.4014267971618217),
    (0.001, 0.7, 1e-06, -14.24961753147582, 0.0027902019752205592),
    (0.5, 0.7, 0.5, -0.5612003654401745, 0.4316870188500317),
    (2.0, 0.7, 0.999999, -4.011608219442523e-05, 0.0014187933537128505),
    (1000.0, 0.7, 0.999999, -6.11353284058029e-06, 0.062179590475160154),
    (30.0, 3.0, 0.3, -5.871348106328285e-14, 1.1398564297464665e-13),
    (0.001, 100.0, 0.5, -1.576484740250893e-32, 1.103378167670656e-35),
    (2.0, 100.0, 0.01, -0.2758985020708418, 0.003697172513346095),
    (30.0, 100.0, 0.9, -4.0328247526734933e-73, 6.010699510273785e-73),
    (2.0, 1000.0, 1e-06, -3.915881691624144e-06, 9.995004994177007e-10),
]

# (a, b, c, z, d/da, d/db, d/dc hyp2f1), computed with PyTensor 2.38.3 (pt.grad of
# pt.hyp2f1).
PYTENSOR_HYP2F1 = [
    (0.5, 1.5, 2.5, -0.99, -0.34997154151612964, -0.10516929690908904, 0.06048264085714518),
    (0.5, 1.5, 2.5, 0.7, 0.8848403044659849, 0.344226888086818, -0.2216378481033843),
    (1.0, 1.0, 2.0, -0.3, -0.11472501211594513, -0.11472501211594513, 0.05569144780897253),
    (1.0, 1.0, 2.0, 0.95, 4.7233746604277, 4.7233746604277, -3.0864288956025154),
    (3.0, 4.0, 5.5, 0.2, 0.2632714948767469, 0.20078082971419708, -0.1483291993102333),
    (10.0, 2.0, 3.0, -0.3, -0.02792552244083988, -0.18390673155943435, 0.11083247816274053),
    (10.0, 2.0, 3.0, 0.95, 343305372900.48987, 554815823206.7454, -496108706964.909),
    (2.3, -1.2, 0.7, 0.2, -0.31727610925298694, 0.46506798429715795, 1.0575125876221876),
]


def evaluate(outputs: Any, inputs: list[Any], values: list[Any], linker: str = "py") -> Any:
    fn = opweave.function(inputs, outputs, mode=Mode(linker=linker))
    return fn(*values)


def scalar_values(build: Any, rows: list[tuple[float, ...]], nin: int) -> np.ndarray:
    """``build`` of ``nin`` float64 scalars, compiled once and evaluated on each row;
    an array with one column per row (one row per output)."""
    xs = [ps.float64(f"x{i}") for i in range(nin)]
    outputs = build(*xs)
    fn = opweave.function(xs, outputs, mode=Mode(linker="py"))
    return np.array([fn(*row) for row in rows], dtype="float64").T


def gamma_shape_derivative(k: float, x: float) -> float:
    """``d/dk gammainc(k, x)`` by quadrature of ``t**(k-1) e**-t log(t)``."""

    def density_log(t: float) -> float:
        return math.exp((k - 1) * math.log(t) - t - math.lgamma(k)) * math.log(t)

    opts = {"epsabs": 0.0, "epsrel": 1e-12, "limit": 400}
    if x < k:
        part = integrate.quad(density_log, 0.0, x, **opts)[0]
        return part - sps.psi(k) * sps.gammainc(k, x)
    part = integrate.quad(density_log, x, np.inf, **opts)[0]
    return -(part - sps.psi(k) * sps.gammaincc(k, x))


def beta_shape_derivatives(a: float, b: float, x: float) -> tuple[float, float]:
    """``d/da`` and ``d/db betainc(a, b, x)`` by quadrature (over ``[x, 1]`` beyond the
    mode, where ``betainc`` is close to 1)."""
    lbeta = sps.betaln(a, b)

    def density(t: float) -> float:
        return math.exp((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) - lbeta)

    upper = x > a / (a + b)
    lo, hi, sign = (x, 1.0, -1.0) if upper else (0.0, x, 1.0)
    value = sps.betainc(b, a, 1 - x) if upper else sps.betainc(a, b, x)
    opts = {"epsabs": 0.0, "epsrel": 1e-12, "limit": 400}
    da = integrate.quad(lambda t: density(t) * math.log(t), lo, hi, **opts)[0]
    db = integrate.quad(lambda t: density(t) * math.log1p(-t), lo, hi, **opts)[0]
    return (
        sign * (da - (sps.psi(a) - sps.psi(a + b)) * value),
        sign * (db - (sps.psi(b) - sps.psi(a + b)) * value),
    )


def richardson(f: Any, p: float) -> float:
    """The derivative of ``f`` at ``p`` by central differences, Richardson-extrapolated."""
    h = 1e-3 * abs(p)
    d = [(f(p + h / 2**i) - f(p - h / 2**i)) / (2 * h / 2**i) for i in range(3)]
    e = [(4 * d[i + 1] - d[i]) / 3 for i in range(2)]
    return (16 * e[1] - e[0]) / 15


# ====================================================================== incomplete gamma


def test_gammainc_shape_derivative_matches_pytensor() -> None:
    got = scalar_values(
        lambda k, x: [gammainc_grad(k, x), gammaincc_grad(k, x)], [r[:2] for r in PYTENSOR_GAMMA], 2
    )
    np.testing.assert_allclose(got[0], [r[2] for r in PYTENSOR_GAMMA], rtol=1e-8, atol=0)
    np.testing.assert_allclose(got[1], [r[3] for r in PYTENSOR_GAMMA], rtol=1e-8, atol=0)


# Small and large shapes, x near 0, near k and far beyond it, including points where
# PyTensor's series lose their accuracy (k = 100, x = 30; k = 1000, x = 999).
GAMMA_GRID = [
    (0.001, 0.5),
    (0.001, 9.5),
    (0.1, 3.0),
    (0.5, 0.5),
    (2.5, 0.001),
    (2.5, 1.0),
    (10.0, 0.5),
    (10.0, 9.5),
    (100.0, 9.5),
    (100.0, 30.0),
    (100.0, 99.0),
    (100.0, 101.0),
    (1000.0, 300.0),
    (1000.0, 999.0),
    (1000.0, 1001.0),
    (1000.0, 1500.0),
]


def test_gammainc_shape_derivative_matches_the_integral() -> None:
    got = scalar_values(lambda k, x: gammainc_grad(k, x), GAMMA_GRID, 2)
    expected = [gamma_shape_derivative(k, x) for k, x in GAMMA_GRID]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=0)


def test_gammainc_shape_derivative_matches_finite_differences() -> None:
    rows = [(0.7, 0.4), (1.5, 2.0), (3.0, 2.5), (6.0, 8.0), (20.0, 18.0)]
    got = scalar_values(lambda k, x: [gammainc_grad(k, x), gammaincc_grad(k, x)], rows, 2)
    fd = [richardson(lambda t, x=x: sps.gammainc(t, x), k) for k, x in rows]
    np.testing.assert_allclose(got[0], fd, rtol=1e-7)
    np.testing.assert_allclose(got[1], -np.array(fd), rtol=1e-7)


def test_gammainc_shape_derivative_edges() -> None:
    rows = [(2.0, 0.0), (2.0, np.inf), (0.0, 1.0), (-1.0, 1.0), (2.0, -1.0), (np.nan, 1.0)]
    got = scalar_values(lambda k, x: [gammainc_grad(k, x), gammaincc_grad(k, x)], rows, 2)
    # at k = 0 the one-sided derivative -E1(x) (gammainc(0, x) = 1, as SciPy)
    expected = np.array([0.0, 0.0, -sps.exp1(1.0), np.nan, np.nan, np.nan])
    np.testing.assert_allclose(got[0], expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(got[1], -expected, rtol=1e-14, atol=0)


# ====================================================================== incomplete beta


def test_betainc_shape_derivatives_match_pytensor() -> None:
    got = scalar_values(
        lambda a, b, x: [betainc_grad(a, b, x, True), betainc_grad(a, b, x, False)],
        [r[:3] for r in PYTENSOR_BETA],
        3,
    )
    np.testing.assert_allclose(got[0], [r[3] for r in PYTENSOR_BETA], rtol=1e-8, atol=0)
    np.testing.assert_allclose(got[1], [r[4] for r in PYTENSOR_BETA], rtol=1e-8, atol=0)


def test_betainc_shape_derivatives_match_the_integral() -> None:
    rows = [(0.5, 0.7, 0.2), (2.0, 3.0, 0.4), (2.0, 3.0, 0.9), (30.0, 100.0, 0.5), (5.0, 1.5, 0.95)]
    got = scalar_values(
        lambda a, b, x: [betainc_grad(a, b, x, True), betainc_grad(a, b, x, False)], rows, 3
    )
    expected = np.array([beta_shape_derivatives(*r) for r in rows]).T
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=0)


def test_betainc_shape_derivatives_edges() -> None:
    rows = [(2.0, 3.0, 0.0), (2.0, 3.0, 1.0), (0.0, 3.0, 0.5), (2.0, -1.0, 0.5), (2.0, 3.0, 1.5)]
    got = scalar_values(
        lambda a, b, x: [betainc_grad(a, b, x, True), betainc_grad(a, b, x, False)], rows, 3
    )
    expected = [0.0, 0.0, np.nan, np.nan, np.nan]
    np.testing.assert_array_equal(np.abs(got[0]), expected)
    np.testing.assert_array_equal(np.abs(got[1]), expected)


def test_betainc_grad_takes_a_bool() -> None:
    a, b, x = ps.float64("a"), ps.float64("b"), ps.float64("x")
    with pytest.raises(TypeError, match="wrtp must be a bool"):
        betainc_grad(a, b, x, 1)


# ====================================================================== hyp2f1


def test_hyp2f1_parameter_derivatives_match_pytensor() -> None:
    got = scalar_values(
        lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=(0, 1, 2)),
        [r[:4] for r in PYTENSOR_HYP2F1],
        4,
    )
    expected = np.array([r[4:] for r in PYTENSOR_HYP2F1]).T
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=0)


def test_hyp2f1_parameter_derivatives_match_the_integral() -> None:
    """``d/da 2F1 = Gamma(c) / (Gamma(b) Gamma(c - b)) int t**(b-1) (1-t)**(c-b-1)
    (1 - z t)**-a (-log(1 - z t)) dt``, here where PyTensor's alternating series (z near
    -1) and its domain (z < -1) give no value to compare with."""
    rows = [(10.0, 2.0, 3.0, -0.99), (0.5, 1.5, 2.5, -5.0), (1.5, 0.5, 3.0, -20.0)]
    got = scalar_values(lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=[0])[0], rows, 4)
    expected = []
    for a, b, c, z in rows:
        scale = math.exp(math.lgamma(c) - math.lgamma(b) - math.lgamma(c - b))
        integrand = lambda t, a=a, b=b, c=c, z=z: (  # noqa: E731
            t ** (b - 1) * (1 - t) ** (c - b - 1) * (1 - z * t) ** (-a) * -math.log1p(-z * t)
        )
        expected.append(scale * integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-12)[0])
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_hyp2f1_parameter_derivatives_match_finite_differences() -> None:
    rows = [(0.3, 1.7, 2.2, 0.5), (-1.5, 2.0, 3.5, -0.4), (2.0, 0.6, 1.3, 0.9)]
    got = scalar_values(lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=(2, 0, 1)), rows, 4)
    for i, index in enumerate((2, 0, 1)):
        for j, row in enumerate(rows):

            def f(t: float, row: tuple[float, ...] = row, index: int = index) -> float:
                args = list(row)
                args[index] = t
                return float(sps.hyp2f1(*args))

            assert got[i][j] == pytest.approx(richardson(f, row[index]), rel=1e-7)


def test_hyp2f1_parameter_derivatives_of_terminating_series() -> None:
    # z >= 1: the derivatives of the polynomial (degree held), as computed with PyTensor
    # 2.38.3 (pt.grad of pt.hyp2f1)
    rows = [(-2.0, 1.5, 2.5, 2.0), (1.5, -2.0, 3.0, 1.0)]
    got = scalar_values(lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=(0, 1, 2)), rows, 4)
    expected = [
        [-1.3714285714285717, -0.3333333333333333],
        [0.22857142857142865, 0.03125],
        [-0.2155102040816328, 0.15104166666666666],
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # z < 1: the derivative of the analytic function, across the integer a = -3
    (got_a,) = scalar_values(
        lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=[0]), [(-3.0, 2.0, 4.0, -3.0)], 4
    )
    fd = richardson(lambda t: float(sps.hyp2f1(t, 2.0, 4.0, -3.0)), -3.0)
    assert got_a[0] == pytest.approx(fd, rel=1e-8)


def test_hyp2f1_grad_edges_and_arguments() -> None:
    rows = [(1.0, 2.0, 3.0, 0.0), (1.0, 2.0, 3.0, 1.0), (1.0, 2.0, 3.0, 1.5), (1.0, 2.0, -2.0, 0.5)]
    got = scalar_values(lambda a, b, c, z: hyp2f1_grad(a, b, c, z, wrt=(0, 1, 2)), rows, 4)
    np.testing.assert_array_equal(got[:, 0], [0.0, 0.0, 0.0])
    assert np.isnan(got[:, 1:]).all()
    a, b, c, z = (ps.float64(n) for n in "abcz")
    with pytest.raises(ValueError, match="indices 0, 1 or 2"):
        hyp2f1_grad(a, b, c, z, wrt=(3,))
    assert hyp2f1_grad(a, b, c, z, wrt=()) == []


# ====================================================================== tensor gradients


@pytest.mark.parametrize("linker", LINKERS)
def test_gradients_in_every_input_of_the_tensor_functions(linker: str) -> None:
    k, x, b = ot.dvector("k"), ot.dvector("x"), ot.dvector("b")
    kv, xv, bv = np.array([0.5, 3.0, 40.0]), np.array([0.3, 4.0, 35.0]), np.array([2.0, 0.5, 7.0])
    cost = (ot.gammainc(k, x) + 2 * ot.gammaincc(k, x) + ot.betainc(k, b, x / 50)).sum()
    cost = cost + ot.hyp2f1(k, b, x + 1, -x / 50).sum()
    got = evaluate(grad(cost, [k, x, b]), [k, x, b], [kv, xv, bv], linker)

    def reference(kv: Any, xv: Any, bv: Any) -> float:
        return float(
            (
                sps.gammainc(kv, xv)
                + 2 * sps.gammaincc(kv, xv)
                + sps.betainc(kv, bv, xv / 50)
                + sps.hyp2f1(kv, bv, xv + 1, -xv / 50)
            ).sum()
        )

    for i, point in enumerate((kv, xv, bv)):
        for j in range(3):

            def f(t: float, i: int = i, j: int = j) -> float:
                args = [kv.copy(), xv.copy(), bv.copy()]
                args[i][j] = t
                return reference(*args)

            assert got[i][j] == pytest.approx(richardson(f, point[j]), rel=1e-7), (i, j)


def test_float32_inputs_give_float32_derivatives() -> None:
    k, x = ot.fvector("k"), ot.fvector("x")
    kv, xv = np.float32([0.5, 7.0]), np.float32([1.5, 6.0])
    gk = evaluate(grad(ot.gammainc(k, x).sum(), k), [k, x], [kv, xv])
    assert gk.dtype == np.float32
    expected = [gamma_shape_derivative(float(a), float(t)) for a, t in zip(kv, xv)]
    np.testing.assert_allclose(gk, expected, rtol=1e-6)
    ga = evaluate(grad(ot.betainc(k, k + 1, x / 10).sum(), k), [k, x], [kv, xv])
    assert ga.dtype == np.float32


def test_derivatives_have_no_second_derivative() -> None:
    k, x = ot.dscalar("k"), ot.dscalar("x")
    first = grad(ot.gammainc(k, x), k)
    with pytest.raises(NullTypeGradError, match="second derivative of gammainc"):
        grad(first, k)


def test_scalar_names_are_pytensors() -> None:
    import opweave.scalar.math as sm

    k, x = ps.float32("k"), ps.float64("x")
    assert gammainc_grad(k, x).type == ps.float64
    assert gammaincc_grad(k, ps.float32("y"), skip_loops=True).type == ps.float32
    for name in ("gammainc_grad", "gammaincc_grad", "betainc_grad", "hyp2f1_grad"):
        assert callable(getattr(sm, name))
