"""The von Mises, hypergeometric and truncated exponential samplers of the ``jax`` linker
against SciPy's distributions: moments, Kolmogorov-Smirnov tests on many draws from a
fixed generator state, batched parameters and ``size``, dtypes (those of the ``py``
linker), and NumPy's special cases of the von Mises concentration."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import special, stats

import opweave
from opweave.graph.utils import NoImplementationError
from opweave.tensor.random import basic as rb
from opweave.tensor.random.op import RandomVariable

N = 20000
#: The smallest p-value a Kolmogorov-Smirnov test may give (one false alarm in 10**4).
P_MIN = 1e-4


def _draw(build: Callable[[Any], Any], start: int = 5, mode: Any = "JAX") -> np.ndarray:
    """One call of ``build(rng)`` compiled with ``mode``, from ``default_rng(start)``."""
    rng = opweave.shared(np.random.default_rng(start))
    return np.asarray(opweave.function([], build(rng), mode=mode)())


def _close(got: float, want: float, sd: float, n: int, what: str) -> None:
    """``got`` (a mean over ``n`` draws) is within 5 standard errors of ``want``."""
    assert abs(got - want) <= 5 * sd / math.sqrt(n) + 1e-12, f"{what}: {got} vs {want}"


def _same_type_as_py(build: Callable[[Any], Any]) -> np.ndarray:
    """The jax draws, after checking their dtype and shape are the ``py`` linker's."""
    got = _draw(build)
    want = _draw(build, mode=opweave.Mode(linker="py"))
    assert got.dtype == want.dtype and got.shape == want.shape
    return got


def _wrapped(angles: np.ndarray) -> np.ndarray:
    """``angles`` in ``[-pi, pi)``."""
    return np.mod(angles + np.pi, 2 * np.pi) - np.pi


# ------------------------------------------------------------------ von Mises


@pytest.mark.parametrize(("mu", "kappa"), [(0.0, 2.0), (1.0, 0.5), (-3.0, 50.0), (2.5, 1e-4)])
def test_vonmises_follows_scipy(mu: float, kappa: float) -> None:
    got = _same_type_as_py(lambda r: rb.vonmises(mu, kappa, size=N, rng=r))
    assert got.min() >= -np.pi and got.max() <= np.pi
    centred = _wrapped(got - mu)
    assert stats.kstest(centred, stats.vonmises(kappa).cdf).pvalue > P_MIN
    # E[cos(X - mu)] = I1(kappa) / I0(kappa)
    resultant = special.i1e(kappa) / special.i0e(kappa)
    _close(float(np.cos(centred).mean()), resultant, 1.0, N, "mean resultant length")
    _close(float(np.sin(centred).mean()), 0.0, 1.0, N, "mean sine")


def test_vonmises_of_a_tiny_concentration_is_uniform() -> None:
    for kappa in (1e-9, 1e-6):

        def build(r: Any, k: float = kappa) -> Any:
            return rb.vonmises(1.0, k, size=N, rng=r)

        got = _draw(build)
        assert stats.kstest(got, stats.uniform(-np.pi, 2 * np.pi).cdf).pvalue > P_MIN


def test_vonmises_of_a_huge_concentration_is_normal() -> None:
    got = _draw(lambda r: rb.vonmises(2.0, 1e8, size=N, rng=r))
    assert stats.kstest(got, stats.norm(2.0, 1e-4).cdf).pvalue > P_MIN
    near_pi = _draw(lambda r: rb.vonmises(np.pi, 1e7, size=N, rng=r))
    assert near_pi.min() >= -np.pi and near_pi.max() <= np.pi
    assert stats.kstest(_wrapped(near_pi - np.pi), stats.norm(0.0, 1e7**-0.5).cdf).pvalue > P_MIN


def test_vonmises_batched_parameters_and_float32() -> None:
    mu, kappa = np.array([-1.0, 0.0, 2.0]), np.array([[0.5], [8.0]])
    got = _same_type_as_py(lambda r: rb.vonmises(mu, kappa, size=(N, 2, 3), rng=r))
    assert got.shape == (N, 2, 3)
    for i in range(2):
        for j in range(3):
            centred = _wrapped(got[:, i, j] - mu[j])
            assert stats.kstest(centred, stats.vonmises(kappa[i, 0]).cdf).pvalue > P_MIN
    assert _same_type_as_py(lambda r: rb.vonmises(mu, 1.0, rng=r)).shape == (3,)
    single = _same_type_as_py(lambda r: rb.vonmises(0.0, 3.0, size=100, rng=r, dtype="float32"))
    assert single.dtype == np.float32


def test_vonmises_of_an_invalid_concentration_is_nan() -> None:
    got = _draw(lambda r: rb.vonmises(0.0, np.array([1.0, -1.0, np.nan]), rng=r))
    assert np.isfinite(got[0]) and np.isnan(got[1:]).all()


# ------------------------------------------------------------------ hypergeometric


def _hypergeometric_moments(ngood: int, nbad: int, nsample: int) -> tuple[float, float]:
    """The mean and variance of the good items among ``nsample`` of ``ngood + nbad``."""
    total = ngood + nbad
    mean = nsample * ngood / total
    spread = (total - nsample) / (total - 1) if total > 1 else 0.0
    return mean, mean * nbad / total * spread


@pytest.mark.parametrize(
    ("ngood", "nbad", "nsample"),
    [(5, 10, 7), (30, 3, 20), (100, 50, 140), (7, 0, 4), (40, 60, 10), (3, 200, 150)],
)
def test_hypergeometric_follows_scipy(ngood: int, nbad: int, nsample: int) -> None:
    got = _same_type_as_py(lambda r: rb.hypergeometric(ngood, nbad, nsample, size=N, rng=r))
    dist = stats.hypergeom(ngood + nbad, ngood, nsample)
    mean, var = _hypergeometric_moments(ngood, nbad, nsample)
    np.testing.assert_allclose([mean, var], [dist.mean(), dist.var()], rtol=1e-12)
    low, high = max(0, nsample - nbad), min(ngood, nsample)
    assert got.min() >= low and got.max() <= high
    _close(float(got.mean()), mean, math.sqrt(var), N, "mean")
    _close(float(got.var()), var, 3 * var, N, "variance")
    support = np.arange(low, high + 1)
    empirical = np.searchsorted(np.sort(got), support, side="right") / N
    # The Kolmogorov-Smirnov bound (p = 1e-4) of the distribution function's deviation.
    assert np.abs(empirical - dist.cdf(support)).max() < 2.15 / math.sqrt(N)


def test_hypergeometric_batched_parameters() -> None:
    ngood, nbad = np.array([2, 40, 0]), np.array([[8], [1]])
    nsample = np.array([[5, 30, 1], [3, 41, 1]])
    got = _same_type_as_py(lambda r: rb.hypergeometric(ngood, nbad, nsample, size=(N, 2, 3), rng=r))
    for i in range(2):
        for j in range(3):
            mean, var = _hypergeometric_moments(ngood[j], nbad[i, 0], nsample[i, j])
            _close(float(got[:, i, j].mean()), mean, math.sqrt(var), N, f"mean {i}, {j}")
    assert (got[:, :, 2] == 0).all()  # no good items
    assert (got[:, 1, 1] == 40).all()  # every item sampled
    assert _same_type_as_py(lambda r: rb.hypergeometric(ngood, 3, 2, rng=r)).shape == (3,)


# ------------------------------------------------------------------ truncated exponential


@pytest.mark.parametrize(
    ("b", "loc", "scale"), [(2.0, 1.0, 3.0), (0.1, 0.0, 1.0), (30.0, -2.0, 0.5)]
)
def test_truncexpon_follows_scipy(b: float, loc: float, scale: float) -> None:
    got = _same_type_as_py(lambda r: rb.truncexpon(b, loc, scale, size=N, rng=r))
    dist = stats.truncexpon(b, loc, scale)
    assert got.min() >= loc and got.max() <= loc + b * scale
    assert stats.kstest(got, dist.cdf).pvalue > P_MIN
    _close(float(got.mean()), dist.mean(), dist.std(), N, "mean")
    _close(float(got.var()), dist.var(), 3 * dist.var(), N, "variance")


def test_truncexpon_batched_parameters_and_float32() -> None:
    b, loc, scale = np.array([0.5, 4.0]), np.array([[0.0], [10.0]]), 2.0
    got = _same_type_as_py(lambda r: rb.truncexpon(b, loc, scale, size=(N, 2, 2), rng=r))
    for i in range(2):
        for j in range(2):
            dist = stats.truncexpon(b[j], loc[i, 0], scale)
            assert stats.kstest(got[:, i, j], dist.cdf).pvalue > P_MIN
    single = _same_type_as_py(lambda r: rb.truncexpon(1.0, size=50, rng=r, dtype="float32"))
    assert single.dtype == np.float32


# ------------------------------------------------------------------ the stream


@pytest.mark.parametrize(
    "build",
    [
        lambda r: rb.vonmises(0.0, 1.0, size=20, rng=r, return_next_rng=True),
        lambda r: rb.hypergeometric(5, 5, 4, size=20, rng=r, return_next_rng=True),
        lambda r: rb.truncexpon(1.0, size=20, rng=r, return_next_rng=True),
    ],
    ids=["vonmises", "hypergeometric", "truncexpon"],
)
def test_updates_advance_the_stream(build: Callable[[Any], Any]) -> None:
    rng = opweave.shared(np.random.default_rng(0))
    next_rng, draws = build(rng)
    f = opweave.function([], draws, updates={rng: next_rng}, mode="JAX")
    a, b = f(), f()
    assert a.shape == (20,) and not np.array_equal(a, b)
    repeat = opweave.function([], draws, mode="JAX")
    np.testing.assert_array_equal(repeat(), repeat())


def test_a_distribution_without_a_sampler_is_refused() -> None:
    class Custom(RandomVariable):
        name = "custom"
        signature = "()->()"
        dtype = "floatX"

        def rng_fn(self, rng: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
            return rng.normal(*args, **kwargs)

    draws = Custom()(1.0, rng=opweave.shared(np.random.default_rng(0)))
    with pytest.raises(NoImplementationError, match=r"no jax\.random sampler.*custom"):
        opweave.function([], draws, mode="JAX")
