"""Graphs of PyMC's continuous distributions that round away their value unless the
``erf``/``erfc`` stabilizations run, against SciPy, on every linker.

PyMC's skew-normal log-density is ``log(1 + erf(z / sqrt(2))) + ...``: ``1 + erf(z)``
is exactly 0 in float64 once ``z < -5.9``, so the density was ``-inf`` where SciPy's is
-194.19. As in PyTensor, ``1 + erf(x)`` is computed as ``erfc(-x)`` (and the other
``erf``/``erfc`` sums likewise), and ``log(erfc(x))`` switches to its asymptotic series
where ``erfc`` underflows. One function per linker (``py``, ``vm``, ``c``, ``cvm``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st
from differential.runner import usable_linkers

import opweave
import opweave.tensor as tensor

#: The tensor functions, typed loosely (their types also allow lists of variables).
pt: Any = tensor

XS = np.array([-30.0, -12.47, -6.0, -1.0, 0.0, 1e-10, 1.0, 6.0, 12.0, 27.0, 30.0, 100.0])
# (value, mu, sigma, alpha) of PyMC's test_skew_normal where the density was -inf
SKEW_POINTS = np.array([[2.1, -2.1, 0.5, -2.1], [0.0, 0.0, 1.0, 1.0], [-3.0, 1.0, 0.25, 4.0]])


def _log_erfc(x: np.ndarray) -> np.ndarray:
    """``log(erfc(x))``, through ``erfcx(x) = exp(x**2) erfc(x)`` where ``erfc`` underflows."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        scaled = np.log(sp.erfcx(x)) - x**2
        return np.asarray(np.where(x > 26.0, scaled, np.log(sp.erfc(x))))


def _skew_normal_logp(value: Any, mu: Any, sigma: Any, alpha: Any) -> Any:
    """PyMC 5's ``SkewNormal.logp``, written with ``sigma`` as PyMC writes it."""
    tau = sigma**-2.0
    return (
        pt.log(1 + pt.erf(((value - mu) * pt.sqrt(tau) * alpha) / pt.sqrt(2)))
        + (-tau * (value - mu) ** 2 + pt.log(tau / np.pi / 2.0)) / 2.0
    )


@pytest.fixture(scope="module", params=usable_linkers())
def computed(request: pytest.FixtureRequest) -> dict[str, Any]:
    x = pt.dvector("x")
    v, mu, sigma, alpha = (pt.dvector(n) for n in ("v", "mu", "sigma", "alpha"))
    outputs = {
        "grad_log_erfc": pt.grad(pt.log(pt.erfc(x)).sum(), x),
        "grad_log_one_plus_erf": pt.grad(pt.log(1 + pt.erf(x)).sum(), x),
        "log_one_plus_erf": pt.log(1 + pt.erf(x)),
        "one_minus_erf": 1 - pt.erf(x),
        "erf_minus_one": -1 + pt.erf(x),
        "erf_minus_one_sub": pt.erf(x) - 1,
        "one_minus_erfc": 1 - pt.erfc(x),
        "erfc_neg_minus_one": -1 + pt.erfc(-x),
        "log_erfc": pt.log(pt.erfc(x)),
        "skew_normal": _skew_normal_logp(v, mu, sigma, alpha),
    }
    fn = opweave.function(
        [x, v, mu, sigma, alpha],
        list(outputs.values()),
        mode=opweave.Mode(linker=request.param),
        on_unused_input="ignore",
    )
    values = fn(XS, *SKEW_POINTS.T)
    return dict(zip(outputs, values, strict=True))


def test_log_one_plus_erf_is_finite_where_the_sum_rounds_to_zero(
    computed: dict[str, Any],
) -> None:
    with np.errstate(divide="ignore"):
        naive = np.log(1 + sp.erf(XS))
    assert np.isneginf(naive[XS == -12.47]).all()  # the written form does round to 0
    np.testing.assert_allclose(computed["log_one_plus_erf"], _log_erfc(-XS), rtol=1e-13)


def test_one_minus_erf_and_erf_minus_one_keep_the_tail(computed: dict[str, Any]) -> None:
    assert 1 - sp.erf(6.0) == 0.0  # the written form loses the tail
    # SciPy's erfc(27.0) is 0 where the subnormal 5.2e-319 is the value (atol)
    erfc = sp.erfc(XS)
    np.testing.assert_allclose(computed["one_minus_erf"], erfc, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(computed["erf_minus_one"], -erfc, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(computed["erf_minus_one_sub"], -erfc, rtol=1e-14, atol=1e-300)


def test_one_minus_erfc_keeps_small_arguments(computed: dict[str, Any]) -> None:
    tiny = XS == 1e-10
    assert abs(1 - sp.erfc(1e-10) - sp.erf(1e-10)) > 1e-17  # cancellation in the written form
    np.testing.assert_allclose(computed["one_minus_erfc"], sp.erf(XS), rtol=1e-14)
    np.testing.assert_allclose(computed["erfc_neg_minus_one"], sp.erf(XS), rtol=1e-14)
    assert computed["one_minus_erfc"][tiny][0] == pytest.approx(sp.erf(1e-10), rel=1e-15)


def test_log_erfc_is_finite_where_erfc_underflows(computed: dict[str, Any]) -> None:
    with np.errstate(divide="ignore"):
        naive = np.log(sp.erfc(XS))
    assert np.isneginf(naive[XS >= 27.0]).all()  # erfc underflows there
    np.testing.assert_allclose(computed["log_erfc"], _log_erfc(XS), rtol=1e-12)


def test_gradients_of_log_erfc_are_finite_where_erfc_underflows(
    computed: dict[str, Any],
) -> None:
    # d/dx log(erfc(x)) = -2 / sqrt(pi) * exp(-x**2) / erfc(x) = -2 / sqrt(pi) / erfcx(x)
    # (atol: the subnormal 1.4e-317 at x = -27, which SciPy rounds to 0)
    slope = 2 / np.sqrt(np.pi)
    grad_log_erfc = computed["grad_log_erfc"]
    np.testing.assert_allclose(grad_log_erfc, -slope / sp.erfcx(XS), rtol=1e-10, atol=1e-300)
    grad_log_one_plus_erf = computed["grad_log_one_plus_erf"]
    expected = slope / sp.erfcx(-XS)
    np.testing.assert_allclose(grad_log_one_plus_erf, expected, rtol=1e-10, atol=1e-300)


def test_skew_normal_logp_matches_scipy(computed: dict[str, Any]) -> None:
    value, mu, sigma, alpha = SKEW_POINTS.T
    expected = st.skewnorm.logpdf(value, alpha, mu, sigma)
    # PyMC divides by sqrt(2) of an int8 constant, a float32 (as in PyTensor): the
    # argument of erf is off by 2e-8 relative, the density by 3e-8
    np.testing.assert_allclose(computed["skew_normal"], expected, rtol=1e-7)
    assert computed["skew_normal"][0] == pytest.approx(-194.18974, abs=1e-5)


def test_log_erfc_in_float32_uses_its_own_threshold() -> None:
    x = pt.fvector("x")
    xs = np.array([1.0, 9.0, 10.5, 12.0, 30.0], dtype="float32")
    out = opweave.function([x], pt.log(pt.erfc(x)))(xs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, _log_erfc(xs.astype("float64")), rtol=1e-5)


@pytest.mark.parametrize(
    ("excluded", "build"),
    [
        ("local_one_plus_erf", lambda x: pt.log(1 + pt.erf(x))),
        ("local_log_erfc", lambda x: pt.log(pt.erfc(x))),
        ("local_grad_log_erfc_neg", lambda x: pt.grad(pt.log(pt.erfc(x)), x)),
    ],
)
def test_the_rewrites_are_named(excluded: str, build: Any) -> None:
    x = pt.dscalar("x")
    mode = opweave.compile.mode.get_default_mode().excluding(excluded)
    arg = -30.0 if excluded == "local_one_plus_erf" else 30.0
    with np.errstate(divide="ignore"):
        assert not np.isfinite(opweave.function([x], build(x), mode=mode)(arg))
    assert np.isfinite(opweave.function([x], build(x))(arg))
