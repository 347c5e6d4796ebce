"""The ``jax`` lowerings of ``jv``, ``iv``, ``ive``, ``kve`` (real orders),
``gammainccinv``, ``betaincinv``, ``hyp2f1`` and the derivatives of ``betainc`` and
``hyp2f1`` in their parameters against the ``py`` linker and SciPy, edges included.

XLA on the CPU flushes subnormal numbers to zero, so no argument or value here is
subnormal.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.scalar import shape_gradients as sgrad
from opweave.scalar.rules import upgrade_to_float_no_complex
from opweave.tensor.elemwise import Elemwise

from .conftest import compile_both

#: Relative tolerance against the ``py`` kernels in float64.
RTOL = 1e-12
#: ``betaincinv(a, b, y)`` for a small ``a`` is about ``(a B(a, b) y) ** (1 / a)``: both
#: kernels round ``log B(a, b)`` to an ulp of ``gammaln(b)`` (2e-13 at ``b = 300``), which
#: the power ``1 / a`` scales: 5e-12 at ``a = 0.05``.
RTOL_BETA = 1e-11

ORDERS = [0.0, 0.5, 1.0, 1.5, 2.0, 2.3, 3.0, 7.7, 10.5, 30.2, 50.0, 100.5, 500.0]
ORDERS += [-0.5, -1.0, -1.5, -2.0, -2.7, -3.0, -10.3, -50.0, np.inf, -np.inf, np.nan]
ARGUMENTS = [0.0, -0.0, 1e-300, 1e-10, 0.1, 1.0, 1.9, 2.0, 2.1, 3.3, 7.9, 24.9, 25.0, 26.0]
ARGUMENTS += [39.9, 41.0, 100.0, 400.0, 710.0, 1e5, 1e300, -1.0, -5.0, -50.0, -710.0]
ARGUMENTS += [np.inf, -np.inf, np.nan]

SHAPES = [1e-300, 1e-20, 1e-3, 0.1, 0.5, 1.0, 2.5, 30.0, 300.0, 3e3, 9999.0, 1e4, 1e5]
SHAPES += [1e6, 1e8, 1e41, 0.0, np.inf, -1.0, np.nan]
PROBABILITIES = [2.3e-308, 1e-300, 1e-100, 1e-10, 0.01, 0.3, 0.5, 0.9, 0.999999, 1 - 1e-16]
PROBABILITIES += [0.0, 1.0, -0.1, 1.5, np.nan]

BETA_SHAPES = [0.05, 0.1, 0.5, 1.0, 1.5, 3.0, 20.0, 300.0, 0.0, -1.0, np.inf, np.nan]
BETA_PROBABILITIES = [1e-20, 1e-5, 0.1, 0.5, 0.7, 0.99, 1 - 1e-12, 0.0, 1.0, -0.1, 1.5, np.nan]


def _grid(*axes: list[float]) -> list[np.ndarray]:
    return [a.ravel() for a in np.meshgrid(*[np.array(t) for t in axes], indexing="ij")]


@pytest.mark.parametrize("name", ["jv", "iv", "ive", "kve"])
def test_bessel_functions_of_real_order(same_as_py: Any, name: str) -> None:
    v, x = pt.dvector("v"), pt.dvector("x")
    orders, args = _grid(ORDERS, ARGUMENTS)
    got = same_as_py([v, x], [getattr(pt, name)(v, x)], [orders, args], rtol=RTOL)[0]
    assert np.isnan(got[np.isnan(orders) & (args != 0)]).all()
    if name == "kve":
        assert (got[args == 0] == np.inf).all()
        assert np.isnan(got[(args < 0) | (np.isinf(orders) & (args != 0))]).all()
    else:
        assert np.isnan(got[np.isinf(args)]).all()
        fractional = np.isfinite(orders) & (orders != np.floor(orders))
        assert np.isnan(got[fractional & (args < 0)]).all()


@pytest.mark.parametrize("name", ["jv", "iv", "ive", "kve"])
def test_bessel_functions_agree_with_scipy(name: str) -> None:
    special = pytest.importorskip("scipy.special")
    v, x = pt.dvector("v"), pt.dvector("x")
    f, _ = compile_both([v, x], [getattr(pt, name)(v, x)])
    rng = np.random.default_rng(7)
    orders = np.concatenate([rng.uniform(-20.0, 40.0, 300), np.arange(-5.0, 30.0)])
    args = np.concatenate([rng.uniform(0.05, 60.0, 300), np.linspace(0.5, 80.0, 35)])
    got = f(orders, args)[0]
    want = getattr(special, name)(orders, args)
    # SciPy's own error grows near the zeros of jv and in the cancelling series of iv at
    # negative orders: compare where the value is not far below the largest term.
    scale = np.abs(want) if name != "jv" else np.maximum(np.abs(want), 1e-3)
    np.testing.assert_array_less(np.abs(got - want), 1e-10 * scale + 1e-300)


def test_gammainccinv_on_a_grid_with_edges(same_as_py: Any) -> None:
    a, y = pt.dvector("a"), pt.dvector("y")
    shapes, probabilities = _grid(SHAPES, PROBABILITIES)
    got = same_as_py([a, y], [pt.gammainccinv(a, y)], [shapes, probabilities], rtol=5e-12)[0]
    assert np.isnan(got[(probabilities < 0) | (probabilities > 1)]).all()
    inside = (shapes >= 0) & ((probabilities == 0) | (probabilities == 1))
    assert (got[inside] == np.where(probabilities[inside] == 0, np.inf, 0.0)).all()
    assert (got[(shapes == 1e41) & (probabilities > 0) & (probabilities < 1)] == 1e41).all()


def test_gammainccinv_in_the_far_upper_tail_inverts_gammaincc() -> None:
    special = pytest.importorskip("scipy.special")
    a, y = pt.dvector("a"), pt.dvector("y")
    f, _ = compile_both([a, y], [pt.gammainccinv(a, y)])
    shapes = np.array([1e-20, 0.5, 3.0, 40.0, 700.0, 5e3])
    # Q(a, x) = 1e-300 lies where XLA's igammac underflows to 0.
    targets = np.full(shapes.shape, 1e-300)
    x = f(shapes, targets)[0]
    np.testing.assert_allclose(special.gammaincc(shapes, x), targets, rtol=1e-11)


def test_betaincinv_on_a_grid_with_edges(same_as_py: Any) -> None:
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("y")
    shapes_a, shapes_b, probabilities = _grid(BETA_SHAPES, BETA_SHAPES, BETA_PROBABILITIES)
    args = [shapes_a, shapes_b, probabilities]
    got = same_as_py([a, b, y], [pt.betaincinv(a, b, y)], args, rtol=RTOL_BETA)[0]
    positive = (shapes_a > 0) & (shapes_b > 0)
    ends = positive & ((probabilities == 0) | (probabilities == 1))
    assert (got[ends] == probabilities[ends]).all()
    assert np.isnan(got[(shapes_a <= 0) | (probabilities < 0) | (probabilities > 1)]).all()
    only_a = np.isinf(shapes_a) & np.isfinite(shapes_b) & (shapes_b > 0)
    assert (got[only_a & (probabilities > 0) & (probabilities <= 1)] == 1).all()


def test_betaincinv_inverts_betainc() -> None:
    special = pytest.importorskip("scipy.special")
    a, b, y = pt.dvector("a"), pt.dvector("b"), pt.dvector("y")
    f, _ = compile_both([a, b, y], [pt.betaincinv(a, b, y)])
    rng = np.random.default_rng(3)
    shapes_a, shapes_b = rng.uniform(0.5, 30.0, 200), rng.uniform(0.5, 30.0, 200)
    probabilities = rng.uniform(0.01, 0.99, 200)
    x = f(shapes_a, shapes_b, probabilities)[0]
    np.testing.assert_allclose(special.betainc(shapes_a, shapes_b, x), probabilities, rtol=1e-12)


@pytest.mark.parametrize("name", ["jv", "iv", "ive", "kve"])
def test_float32_bessel_functions_round_the_float64_value(name: str) -> None:
    v, x = pt.fvector("v"), pt.fvector("x")
    f, g = compile_both([v, x], [getattr(pt, name)(v, x)])
    orders = np.array([0.0, 0.5, -1.5, 3.0, 12.25, -7.0], dtype="float32")
    args = np.array([0.5, 2.0, 3.5, 30.0, 8.0, 100.0], dtype="float32")
    got, want = f(orders, args)[0], g(orders, args)[0]
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_float32_inverses_round_the_float64_value() -> None:
    a, b, y = pt.fvector("a"), pt.fvector("b"), pt.fvector("y")
    shapes = np.array([0.5, 2.0, 50.0, 1e5], dtype="float32")
    others = np.array([3.0, 0.25, 7.0, 2.0], dtype="float32")
    probabilities = np.array([1e-30, 0.25, 0.5, 0.99], dtype="float32")
    f, g = compile_both([a, y], [pt.gammainccinv(a, y)])
    got, want = f(shapes, probabilities)[0], g(shapes, probabilities)[0]
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    f, g = compile_both([a, b, y], [pt.betaincinv(a, b, y)])
    got, want = f(shapes, others, probabilities)[0], g(shapes, others, probabilities)[0]
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


HYP_PARAMETERS = [-3.0, -1.5, 0.0, 0.3, 1.0, 2.5, 7.0, np.nan]
HYP_C = [-2.0, -0.5, 0.5, 1.0, 2.8, 3.5, 10.0, np.inf]
HYP_Z = [-20.0, -1.0, -0.3, 0.0, 0.2, 0.5, 0.9, 0.95, 0.999, 1.0, 1.5, np.nan]


def _cancelling(*args: np.ndarray) -> np.ndarray:
    """Where a terminating series (also after Pfaff's transformation, which ends where
    ``c - b`` is a non-positive integer) sums to about 0: the kernels' roundings differ
    there by an ulp of the largest term."""
    a, b, c, z = args
    ending = [(t <= 0) & (t == np.floor(t)) for t in (a, b, c - b)]
    pfaff = (z < 0) & (ending[2] | (b == 0))
    return np.asarray(ending[0] | ending[1] | pfaff | ((np.abs(z) > 1) & (a + b > 10)), bool)


def test_hyp2f1_on_a_grid_with_edges(same_as_py: Any) -> None:
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    args = _grid(HYP_PARAMETERS, HYP_PARAMETERS, HYP_C, HYP_Z)
    keep = ~_cancelling(*args)
    args = [t[keep] for t in args]
    got = same_as_py([a, b, c, z], [pt.hyp2f1(a, b, c, z)], args, rtol=RTOL)[0]
    finite = np.isfinite(args[0] + args[1] + args[2])
    assert (got[(args[3] > 1) & finite] == np.inf).all()
    pole = (args[2] <= 0) & (args[2] == np.floor(args[2]))
    assert (got[(args[3] == 0) & finite & ~pole] == 1).all()
    assert (got[(args[3] == 0) & finite & pole] == np.inf).all()
    assert np.isnan(got[~finite]).all()


def test_hyp2f1_polynomials_and_cancellations_agree_in_absolute_terms() -> None:
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    args = _grid(HYP_PARAMETERS, HYP_PARAMETERS, HYP_C, HYP_Z)
    args = [t[_cancelling(*args)] for t in args]
    f, g = compile_both([a, b, c, z], [pt.hyp2f1(a, b, c, z)])
    got, want = f(*args)[0], g(*args)[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)


def test_hyp2f1_agrees_with_scipy() -> None:
    special = pytest.importorskip("scipy.special")
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    f, _ = compile_both([a, b, c, z], [pt.hyp2f1(a, b, c, z)])
    rng = np.random.default_rng(5)
    args = [rng.uniform(0.1, 3.0, 200), rng.uniform(0.1, 3.0, 200), rng.uniform(3.5, 8.0, 200)]
    args.append(rng.uniform(-5.0, 0.99, 200))
    np.testing.assert_allclose(f(*args)[0], special.hyp2f1(*args), rtol=1e-11)


@pytest.mark.parametrize("index", [0, 1], ids=["a", "b"])
def test_betainc_derivatives_in_the_shapes(same_as_py: Any, index: int) -> None:
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    shapes = [0.05, 0.5, 1.0, 2.5, 20.0, 0.0, -1.0, np.inf, np.nan]
    points = [1e-10, 0.01, 0.3, 0.5, 0.8, 0.999, 0.0, 1.0, -0.1, 1.1, np.nan]
    args = _grid(shapes, shapes, points)
    der = (sgrad.betainc_der_a, sgrad.betainc_der_b)[index]
    got = same_as_py([a, b, x], [Elemwise(der)(a, b, x)], args, rtol=RTOL)[0]
    ends = (args[0] > 0) & (args[1] > 0) & np.isfinite(args[0] + args[1])
    assert (got[ends & ((args[2] == 0) | (args[2] == 1))] == 0).all()
    assert np.isnan(got[(args[2] < 0) | (args[2] > 1) | (args[0] <= 0)]).all()


def test_hyp2f1_derivatives_in_the_parameters(same_as_py: Any) -> None:
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    args = _grid([-1.5, 0.3, 1.0, 2.5, np.nan], [-1.5, 0.3, 1.0, 2.5], [0.5, 3.5, 10.0], HYP_Z)
    classes = (sgrad.Hyp2F1GradA, sgrad.Hyp2F1GradB, sgrad.Hyp2F1GradC)
    outputs = [Elemwise(cls(upgrade_to_float_no_complex))(a, b, c, z) for cls in classes]
    got = same_as_py([a, b, c, z], outputs, args, rtol=RTOL)
    # At z = 1 the series converges when c - a - b > 0: Gauss's closed form, else NaN.
    converges = (args[3] == 1) & (args[2] - args[0] - args[1] > 0)
    for value in got:
        assert (value[(args[3] == 0) & ~np.isnan(args[0])] == 0).all()
        assert np.isnan(value[(args[3] >= 1) & ~converges]).all()
        assert np.isfinite(value[converges & ~np.isnan(args[0])]).all()


def test_gradient_of_hyp2f1_and_betainc_in_their_parameters(same_as_py: Any) -> None:
    a, b, c, z = pt.dvector("a"), pt.dvector("b"), pt.dvector("c"), pt.dvector("z")
    first: Any = pt.hyp2f1(a, b, c, z)
    cost = (first + pt.betainc(a, b, z)).sum()
    args = [np.array([0.5, 2.0, 3.0]), np.array([1.5, 0.7, 4.0]), np.array([3.5, 4.0, 9.0])]
    args.append(np.array([0.2, 0.6, 0.9]))
    same_as_py([a, b, c, z], opweave.grad(cost, [a, b, c]), args, rtol=RTOL)
