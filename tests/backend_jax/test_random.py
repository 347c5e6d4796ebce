"""Random variables on the ``jax`` linker: draws through ``jax.random`` with the generator
threaded as a JAX key. JAX's streams are not NumPy's, so the draws are checked by their
statistics over many draws, their shapes and dtypes (those of the ``py`` linker), and the
way the stream advances."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.utils import NoImplementationError
from opweave.tensor.random import basic as rb
from opweave.tensor.random.type import random_generator_type

N = 20000


def _draw(build: Callable[[Any], Any], start: int = 3, mode: Any = "JAX") -> np.ndarray:
    """One call of ``build(rng)`` compiled with ``mode``, from ``default_rng(start)``."""
    rng = opweave.shared(np.random.default_rng(start))
    return np.asarray(opweave.function([], build(rng), mode=mode)())


def _close(got: float, want: float, sd: float, n: int, what: str) -> None:
    """``got`` (a mean over ``n`` draws) is within 5 standard errors of ``want``."""
    assert abs(got - want) <= 5 * sd / math.sqrt(n) + 1e-12, f"{what}: {got} vs {want}"


#: name -> (draws of size N, mean, variance)
MOMENTS: dict[str, tuple[Callable[[Any], Any], float, float]] = {
    "normal": (lambda r: rb.normal(1.5, 2.0, size=N, rng=r), 1.5, 4.0),
    "uniform": (lambda r: rb.uniform(-1.0, 3.0, size=N, rng=r), 1.0, 16 / 12),
    "bernoulli": (lambda r: rb.bernoulli(0.3, size=N, rng=r), 0.3, 0.21),
    "binomial": (lambda r: rb.binomial(10, 0.4, size=N, rng=r), 4.0, 2.4),
    "poisson": (lambda r: rb.poisson(3.5, size=N, rng=r), 3.5, 3.5),
    "gamma": (lambda r: rb.gamma(2.0, scale=1.5, size=N, rng=r), 3.0, 4.5),
    "gamma_rate": (lambda r: rb.gamma(2.0, rate=4.0, size=N, rng=r), 0.5, 0.125),
    "beta": (lambda r: rb.beta(2.0, 5.0, size=N, rng=r), 2 / 7, 10 / (49 * 8)),
    "exponential": (lambda r: rb.exponential(2.0, size=N, rng=r), 2.0, 4.0),
    "halfnormal": (
        lambda r: rb.halfnormal(0.0, 2.0, size=N, rng=r),
        2 * math.sqrt(2 / math.pi),
        4 * (1 - 2 / math.pi),
    ),
    "lognormal": (
        lambda r: rb.lognormal(0.0, 0.5, size=N, rng=r),
        math.exp(0.125),
        (math.exp(0.25) - 1) * math.exp(0.25),
    ),
    "integers": (lambda r: rb.integers(0, 10, size=N, rng=r), 4.5, 99 / 12),
    "geometric": (lambda r: rb.geometric(0.25, size=N, rng=r), 4.0, 0.75 / 0.0625),
    "laplace": (lambda r: rb.laplace(1.0, 0.5, size=N, rng=r), 1.0, 0.5),
    "logistic": (lambda r: rb.logistic(1.0, 0.5, size=N, rng=r), 1.0, 0.25 * math.pi**2 / 3),
    "gumbel": (
        lambda r: rb.gumbel(1.0, 0.5, size=N, rng=r),
        1.0 + 0.5 * 0.5772156649,
        0.25 * math.pi**2 / 6,
    ),
    "invgamma": (lambda r: rb.invgamma(5.0, 2.0, size=N, rng=r), 0.5, 4 / (16 * 3)),
    "pareto": (lambda r: rb.pareto(5.0, 2.0, size=N, rng=r), 2.5, 4 * 5 / (16 * 3)),
    "t": (lambda r: rb.t(5.0, 1.0, 2.0, size=N, rng=r), 1.0, 4 * 5 / 3),
    "weibull": (lambda r: rb.weibull(2.0, size=N, rng=r), math.gamma(1.5), 1 - math.pi / 4),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_draws_have_the_distribution_moments_and_the_graph_dtype(name: str) -> None:
    build, mean, var = MOMENTS[name]
    got = _draw(build)
    want_dtype = build(opweave.shared(np.random.default_rng(0))).dtype
    assert got.shape == (N,) and got.dtype == want_dtype
    _close(float(got.mean()), mean, math.sqrt(var), N, f"{name} mean")
    # The variance's standard error, for draws with a finite fourth moment (bounded here by
    # a generous multiple of the variance squared).
    _close(float(got.var()), var, 3 * var, N, f"{name} variance")


def test_discrete_draws_take_values_in_their_support() -> None:
    assert set(np.unique(_draw(MOMENTS["bernoulli"][0]))) == {0, 1}
    binom = _draw(MOMENTS["binomial"][0])
    assert binom.min() >= 0 and binom.max() <= 10
    ints = _draw(MOMENTS["integers"][0])
    assert set(np.unique(ints)) == set(range(10))
    assert _draw(MOMENTS["geometric"][0]).min() >= 1


def test_batched_parameters_and_size() -> None:
    loc, scale = np.array([0.0, 10.0, -5.0]), np.array([1.0, 2.0, 0.5])
    got = _draw(lambda r: rb.normal(loc, scale, size=(N, 3), rng=r))
    assert got.shape == (N, 3)
    for j in range(3):
        _close(float(got[:, j].mean()), loc[j], scale[j], N, f"column {j} mean")
        assert abs(got[:, j].std() / scale[j] - 1) < 0.05
    one = _draw(lambda r: rb.normal(loc[:, None], scale[:, None], rng=r))
    assert one.shape == (3, 1)
    lam = np.array([[1.0], [50.0]])
    counts = _draw(lambda r: rb.poisson(lam, size=(2, N), rng=r))
    assert counts.shape == (2, N)
    _close(float(counts[0].mean()), 1.0, 1.0, N, "poisson row 0")
    _close(float(counts[1].mean()), 50.0, math.sqrt(50.0), N, "poisson row 1")


def test_draws_of_one_call_are_independent_across_the_batch() -> None:
    got = _draw(lambda r: rb.normal(0.0, 1.0, size=(N, 2), rng=r))
    assert abs(np.corrcoef(got[:, 0], got[:, 1])[0, 1]) < 5 / math.sqrt(N)


def test_categorical_frequencies_and_batched_probabilities() -> None:
    p = np.array([0.2, 0.5, 0.3])
    got = _draw(lambda r: rb.categorical(p, size=N, rng=r))
    assert got.dtype == np.int64
    freq = np.bincount(got, minlength=3) / N
    for k in range(3):
        _close(float(freq[k]), p[k], math.sqrt(p[k] * (1 - p[k])), N, f"category {k}")
    rows = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    batched = _draw(lambda r: rb.categorical(rows, size=(50, 2), rng=r))
    assert batched.shape == (50, 2)
    assert (batched[:, 0] == 0).all() and (batched[:, 1] == 2).all()


@pytest.mark.parametrize("method", ["cholesky", "eigh", "svd"])
def test_multivariate_normal_mean_and_covariance(method: str) -> None:
    mean = np.array([1.0, -1.0])
    cov = np.array([[2.0, 0.5], [0.5, 1.0]])
    got = _draw(lambda r: rb.multivariate_normal(mean, cov, size=N, method=method, rng=r))
    assert got.shape == (N, 2) and got.dtype == np.float64
    np.testing.assert_allclose(got.mean(axis=0), mean, atol=5 * math.sqrt(2.0 / N))
    np.testing.assert_allclose(np.cov(got.T), cov, atol=0.1)
    means = np.array([[0.0, 0.0], [100.0, -100.0]])
    batched = _draw(lambda r: rb.multivariate_normal(means, cov, rng=r))
    assert batched.shape == (2, 2)
    assert abs(batched[1, 0] - 100) < 10 and abs(batched[1, 1] + 100) < 10


def test_dirichlet_draws_lie_on_the_simplex_with_the_mean() -> None:
    alphas = np.array([1.0, 2.0, 3.0])
    got = _draw(lambda r: rb.dirichlet(alphas, size=N, rng=r))
    assert got.shape == (N, 3)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-12)
    assert (got >= 0).all()
    np.testing.assert_allclose(got.mean(axis=0), alphas / alphas.sum(), atol=0.01)
    batched = _draw(lambda r: rb.dirichlet(np.ones((4, 2)), rng=r))
    assert batched.shape == (4, 2)


def test_multinomial_counts_sum_to_n() -> None:
    p = np.array([0.1, 0.6, 0.3])
    got = _draw(lambda r: rb.multinomial(20, p, size=N, rng=r))
    assert got.shape == (N, 3) and got.dtype == np.int64
    assert (got.sum(axis=1) == 20).all()
    np.testing.assert_allclose(got.mean(axis=0), 20 * p, atol=0.1)


def test_permutations_and_choice() -> None:
    perm = _draw(lambda r: rb.permutation(10, rng=r))
    assert sorted(perm.tolist()) == list(range(10))
    perms = _draw(lambda r: rb.permutation(6, size=(500,), rng=r))
    assert perms.shape == (500, 6)
    assert all(sorted(row) == list(range(6)) for row in perms.tolist())
    assert len({tuple(row) for row in perms.tolist()}) > 100  # not one permutation repeated
    x = np.arange(8.0).reshape(4, 2)
    rows = _draw(lambda r: rb.permutation(x, rng=r))
    assert rows.shape == (4, 2)
    assert sorted(map(tuple, rows.tolist())) == sorted(map(tuple, x.tolist()))
    picked = _draw(lambda r: rb.choice(10, size=(5,), replace=False, rng=r))
    assert len(set(picked.tolist())) == 5 and picked.max() < 10
    a = np.array([3.0, 7.0, 9.0])
    weighted = _draw(lambda r: rb.choice(a, size=(N,), p=np.array([0.0, 0.25, 0.75]), rng=r))
    assert set(np.unique(weighted)) == {7.0, 9.0}
    _close(float((weighted == 9.0).mean()), 0.75, math.sqrt(0.1875), N, "choice p")
    no_zero = _draw(
        lambda r: rb.choice(a, size=(2,), replace=False, p=np.array([0.5, 0.0, 0.5]), rng=r)
    )
    assert sorted(no_zero.tolist()) == [3.0, 9.0]


def test_float32_draws() -> None:
    got = _draw(lambda r: rb.normal(0.0, 1.0, size=100, rng=r, dtype="float32"))
    assert got.dtype == np.float32


def _stream() -> tuple[Any, Any, Any]:
    rng = opweave.shared(np.random.default_rng(11), name="rng")
    next_rng, draws = rb.normal(0.0, 1.0, size=5, rng=rng, return_next_rng=True)
    return rng, next_rng, draws


def test_the_same_generator_state_gives_the_same_draws() -> None:
    rng, next_rng, draws = _stream()
    f = opweave.function([], draws, updates={rng: next_rng}, mode="JAX")
    first = f()
    rng.set_value(np.random.default_rng(11))
    np.testing.assert_array_equal(f(), first)
    rng.set_value(np.random.default_rng(12))
    assert not np.array_equal(f(), first)
    other_rng, other_next, other_draws = _stream()
    g = opweave.function([], other_draws, updates={other_rng: other_next}, mode="JAX")
    np.testing.assert_array_equal(g(), first)


def test_updates_advance_the_stream_and_the_shared_generator() -> None:
    rng, next_rng, draws = _stream()
    before = rng.get_value()
    f = opweave.function([], draws, updates={rng: next_rng}, mode="JAX")
    a, b = f(), f()
    assert not np.array_equal(a, b)
    after = rng.get_value()
    assert isinstance(after, np.random.Generator)
    assert not random_generator_type.values_eq(before, after)


def test_without_the_update_every_call_repeats_the_draws() -> None:
    rng, _next_rng, draws = _stream()
    before = rng.get_value()
    f = opweave.function([], draws, mode="JAX")
    np.testing.assert_array_equal(f(), f())
    assert random_generator_type.values_eq(before, rng.get_value())


def test_two_variables_of_one_generator_draw_differently() -> None:
    rng = opweave.shared(np.random.default_rng(5))
    r1, x = rb.normal(0.0, 1.0, size=4, rng=rng, return_next_rng=True)
    r2, y = rb.normal(0.0, 1.0, size=4, rng=r1, return_next_rng=True)
    a, b = opweave.function([], [x, y], updates={rng: r2}, mode="JAX")()
    assert not np.array_equal(a, b)


def test_a_generator_input_and_output_are_numpy_generators() -> None:
    r = random_generator_type("r")
    next_r, draws = rb.uniform(0.0, 1.0, size=3, rng=r, return_next_rng=True)
    f = opweave.function([r], [next_r, draws], mode="JAX")
    out_r, first = f(np.random.default_rng(2))
    _, again = f(np.random.default_rng(2))
    np.testing.assert_array_equal(first, again)
    assert isinstance(out_r, np.random.Generator)
    _, then = f(out_r)
    assert not np.array_equal(then, first)
    with pytest.raises(TypeError, match="'r'"):
        f(np.zeros(2))


def test_the_py_linker_draws_from_a_generator_the_jax_linker_advanced() -> None:
    rng, next_rng, draws = _stream()
    opweave.function([], draws, updates={rng: next_rng}, mode="JAX")()
    py = opweave.function([], draws, updates={rng: next_rng}, mode=opweave.Mode(linker="py"))
    a, b = py(), py()
    assert a.shape == (5,) and not np.array_equal(a, b)


def test_a_subclass_with_its_own_rng_fn_is_refused() -> None:
    class Shifted(rb.NormalRV):
        def rng_fn(self, rng: np.random.Generator, *args: Any, **kwargs: Any) -> Any:
            return rng.normal(*args, **kwargs) + 1.0

    draws = Shifted()(0.0, 1.0, rng=opweave.shared(np.random.default_rng(0)))
    with pytest.raises(NoImplementationError, match=r"no jax\.random sampler"):
        opweave.function([], draws, mode="JAX")


def test_random_draws_inside_a_larger_graph_match_in_shape_py() -> None:
    x = pt.dvector("x")
    rng = opweave.shared(np.random.default_rng(0))
    noisy = x + rb.normal(0.0, 1e-3, size=x.shape, rng=rng)
    f = opweave.function([x], noisy.sum(), mode="JAX")
    value = np.arange(100.0)
    assert abs(float(f(value)) - value.sum()) < 1.0
