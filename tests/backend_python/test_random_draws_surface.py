"""The draws of every distribution of ``opweave.tensor.random.basic`` on every linker.

For one generator state each must equal the NumPy ``Generator`` method or the SciPy
``rvs`` call that draws it (the calls PyTensor makes, in the same order). Also: the
``rng_fn`` protocol of random variables defined outside opweave.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.builders import OpFromGraph
from opweave.tensor.random import basic as rb
from opweave.tensor.random.basic import ScipyRandomVariable
from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave.tensor.random.type import random_generator_type
from opweave.tensor.random.var import randomgen_constructor

LINKERS = ["py", "vm", "cvm"]
SEED = 11


def _draw(rv_fn, args, kwargs, linker="py"):
    # Python floats as float64 arrays: the references compute in float64.
    args = [np.asarray(a, dtype="float64") if isinstance(a, float) else a for a in args]
    rng = randomgen_constructor(np.random.default_rng(SEED))
    out = rv_fn(*args, rng=rng, **kwargs)
    return opweave.function([], out, mode=Mode(linker=linker))()


def _gen():
    return np.random.default_rng(SEED)


COV = np.array([[1.0, 0.5], [0.5, 2.0]])
P3 = np.array([0.2, 0.3, 0.5])

#: (distribution, args, kwargs, reference draw from a fresh generator)
CASES = [
    ("halfnormal", (0.5, np.array([1.0, 2.0])), {},
     lambda g: stats.halfnorm.rvs(0.5, np.array([1.0, 2.0]), random_state=g)),
    ("lognormal", (0.0, 0.5), {"size": (2, 2)}, lambda g: g.lognormal(0.0, 0.5, size=(2, 2))),
    ("cauchy", (0.0, 2.0), {"size": (3,)},
     lambda g: stats.cauchy.rvs(loc=0.0, scale=2.0, size=(3,), random_state=g)),
    ("halfcauchy", (1.0, 2.0), {"size": (3,)},
     lambda g: stats.halfcauchy.rvs(loc=1.0, scale=2.0, size=(3,), random_state=g)),
    ("laplace", (1.0, 2.0), {"size": (3,)}, lambda g: g.laplace(1.0, 2.0, size=(3,))),
    ("logistic", (1.0, 2.0), {"size": (3,)}, lambda g: g.logistic(1.0, 2.0, size=(3,))),
    ("t", (3.0, 1.0, 2.0), {"size": (4,)},
     lambda g: stats.t.rvs(3.0, loc=1.0, scale=2.0, size=(4,), random_state=g)),
    ("gumbel", (1.0, 2.0), {"size": (3,)},
     lambda g: stats.gumbel_r.rvs(loc=1.0, scale=2.0, size=(3,), random_state=g)),
    ("invgamma", (2.0, 3.0), {"size": (3,)}, lambda g: 1 / g.gamma(2.0, 1 / 3.0, (3,))),
    ("pareto", (3.0, 2.0), {"size": (3,)},
     lambda g: stats.pareto.rvs(3.0, scale=2.0, size=(3,), random_state=g)),
    ("vonmises", (0.5, 2.0), {"size": (3,)}, lambda g: g.vonmises(0.5, 2.0, size=(3,))),
    ("triangular", (0.0, 1.0, 3.0), {"size": (3,)},
     lambda g: g.triangular(0.0, 1.0, 3.0, size=(3,))),
    ("geometric", (0.3,), {"size": (5,)}, lambda g: g.geometric(0.3, size=(5,))),
    ("hypergeometric", (10, 5, 7), {"size": (4,)}, lambda g: g.hypergeometric(10, 5, 7, size=(4,))),
    ("nbinom", (5, 0.4), {"size": (4,)},
     lambda g: stats.nbinom.rvs(5, 0.4, size=(4,), random_state=g)),
    ("negative_binomial", (np.array([3, 6]), 0.4), {},
     lambda g: stats.nbinom.rvs(np.array([3, 6]), 0.4, random_state=g)),
    ("betabinom", (10, 2.0, 3.0), {"size": (4,)},
     lambda g: stats.betabinom.rvs(10, 2.0, 3.0, size=(4,), random_state=g)),
    ("multinomial", (10, P3), {"size": (2,)}, lambda g: g.multinomial(10, P3, size=(2,))),
    ("multinomial", (np.array([5, 10]), P3), {},
     lambda g: np.stack([g.multinomial(5, P3), g.multinomial(10, P3)])),
    ("chisquare", (3.0,), {"size": (3,)}, lambda g: g.gamma(1.5, 2.0, size=(3,))),
    ("weibull", (1.5,), {"size": (3,)}, lambda g: g.weibull(1.5, size=(3,))),
    ("wald", (1.0, 2.0), {"size": (3,)}, lambda g: g.wald(1.0, 2.0, size=(3,))),
    ("truncexpon", (2.0, 0.5, 1.5), {"size": (3,)},
     lambda g: stats.truncexpon.rvs(2.0, loc=0.5, scale=1.5, size=(3,), random_state=g)),
    ("gengamma", (2.0, 1.5, 3.0), {"size": (3,)},
     lambda g: stats.gengamma.rvs(2.0 / 1.5, 1.5, scale=3.0, size=(3,), random_state=g)),
    ("standard_normal", (), {"size": (3,)}, lambda g: g.normal(0.0, 1.0, size=(3,))),
    ("bernoulli", (0.3,), {"size": (6,)},
     lambda g: stats.bernoulli.rvs(0.3, size=(6,), random_state=g)),
    ("dirichlet", (np.array([1.0, 2.0, 3.0]),), {"size": (3,)},
     lambda g: g.dirichlet([1.0, 2.0, 3.0], size=(3,))),
    ("permutation", (np.arange(6).reshape(3, 2),), {},
     lambda g: g.permutation(np.arange(6).reshape(3, 2))),
]  # fmt: skip


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("name", "args", "kwargs", "ref"), CASES, ids=[c[0] for c in CASES])
def test_draws_equal_numpy_and_scipy(name, args, kwargs, ref, linker) -> None:
    value = _draw(getattr(rb, name), args, kwargs, linker)
    expected = np.asarray(ref(_gen()))
    assert value.shape == expected.shape
    np.testing.assert_allclose(value, expected, rtol=1e-13)


def test_batched_categorical_draws_as_searchsorted_of_uniforms() -> None:
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])
    value = _draw(rb.categorical, (p,), {"size": (4, 2)})
    u = _gen().uniform(size=(4, 2))
    expected = [[np.searchsorted(np.cumsum(p[j]), u[i, j]) for j in range(2)] for i in range(4)]
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal_factors_the_covariance_by_method(method) -> None:
    mean = np.array([[0.0, 10.0], [5.0, -5.0]])
    value = _draw(rb.multivariate_normal, (mean, COV), {"size": (3, 2), "method": method})
    z = _gen().normal(size=(3, 2, 2))
    if method == "cholesky":
        factor = np.linalg.cholesky(COV)
    elif method == "svd":
        u, s, _ = np.linalg.svd(COV)
        factor = u * np.sqrt(s)
    else:
        w, v = np.linalg.eigh(COV)
        factor = v * np.sqrt(w)
    np.testing.assert_allclose(value, z @ factor.T + mean, rtol=1e-12)


def test_svd_multivariate_normal_equals_numpy() -> None:
    value = _draw(rb.multivariate_normal, (np.zeros(2), COV), {"size": (4,), "method": "svd"})
    np.testing.assert_allclose(value, _gen().multivariate_normal(np.zeros(2), COV, size=(4,)))


def test_scipy_draws_keep_the_broadcast_shape() -> None:
    loc = np.zeros((2, 1))
    value = _draw(rb.cauchy, (loc, 1.0), {})
    assert value.shape == (2, 1)
    expected = stats.cauchy.rvs(loc=loc, scale=1.0, random_state=_gen())
    np.testing.assert_allclose(value, np.broadcast_to(expected, (2, 1)))


def test_bad_parameters_name_the_distribution() -> None:
    with pytest.raises(ValueError, match="halfnormal: invalid parameters or size"):
        _draw(rb.halfnormal, (0.0, -1.0), {})
    with pytest.raises(ValueError, match="geometric: invalid parameters"):
        _draw(rb.geometric, (1.5,), {})


# ------------------------------------------------------------- the rng_fn protocol


class ShiftedPoissonRV(RandomVariable):
    """Defined as a user would: a classmethod ``rng_fn``."""

    name = "shifted_poisson"
    signature = "(),()->()"
    dtype = "int64"

    @classmethod
    def rng_fn(cls, rng, lam, shift, size):
        return rng.poisson(lam, size=size) + shift


class ClippedNormalRV(rb.NormalRV):
    """A subclass of a distribution of opweave with its own (method) ``rng_fn``."""

    def rng_fn(self, rng, loc, scale, size):
        return np.clip(rng.normal(loc, scale, size=size), -0.5, 0.5)


class DiscreteUniformRV(ScipyRandomVariable):
    """A SciPy-drawn variable: only ``rng_fn_scipy``."""

    name = "discrete_uniform"
    signature = "(),()->()"
    dtype = "int64"

    @classmethod
    def rng_fn_scipy(cls, rng, lower, upper, size=None):
        return stats.randint.rvs(lower, upper + 1, size=size, random_state=rng)


class StandardGammaRV(RandomVariable):
    """No ``rng_fn``: the ``Generator`` method named like the Op."""

    name = "standard_gamma"
    signature = "()->()"
    dtype = "floatX"


@pytest.mark.parametrize("linker", LINKERS)
def test_user_random_variables_draw_with_their_rng_fn(linker) -> None:
    value = _draw(ShiftedPoissonRV(), (3.0, 10), {"size": (5,)}, linker)
    np.testing.assert_array_equal(value, _gen().poisson(3.0, size=(5,)) + 10)
    value = _draw(ClippedNormalRV(), (0.0, 2.0), {"size": (6,)}, linker)
    np.testing.assert_array_equal(value, np.clip(_gen().normal(0.0, 2.0, size=(6,)), -0.5, 0.5))
    value = _draw(StandardGammaRV(), (np.array([1.0, 4.0]),), {}, linker)
    np.testing.assert_array_equal(value, _gen().standard_gamma(np.array([1.0, 4.0])))


@pytest.mark.parametrize("linker", LINKERS)
def test_scipy_random_variable_protocol(linker) -> None:
    value = _draw(DiscreteUniformRV(), (np.zeros((3, 1), dtype="int64"), 5), {}, linker)
    assert value.shape == (3, 1) and value.dtype == np.int64
    expected = stats.randint.rvs(np.zeros((3, 1), dtype="int64"), 6, random_state=_gen())
    np.testing.assert_array_equal(value, expected)


def test_rng_fn_is_callable_directly() -> None:
    g = _gen()
    draws = DiscreteUniformRV.rng_fn(g, np.array(0), np.array(5), None)
    assert isinstance(draws, np.ndarray) and draws.shape == ()
    np.testing.assert_array_equal(
        StandardGammaRV().rng_fn(_gen(), 2.0, (3,)), _gen().standard_gamma(2.0, (3,))
    )


def test_a_name_that_is_no_generator_method_fails_clearly() -> None:
    class NoSuchRV(RandomVariable):
        name = "no_such_distribution"
        signature = "()->()"

    with pytest.raises(AttributeError, match="no_such_distribution"):
        _draw(NoSuchRV(), (1.0,), {})


def test_scipy_variable_without_rng_fn_scipy_fails_clearly() -> None:
    class Incomplete(ScipyRandomVariable):
        name = "incomplete"
        signature = "()->()"

    with pytest.raises(NotImplementedError, match="Incomplete must define"):
        _draw(Incomplete(), (1.0,), {})


# Values computed with PyTensor 2.38.3 in its own environment:
# ``pytensor.function([], rb.<name>(*args, size=(3,), rng=shared(default_rng(11))))()``.
# Python float parameters become float32 constants there and here alike.
PYTENSOR_DRAWS = [
    ("pareto", (3.0, 2.0), [2.0938835626365293, 2.518630168750359, 2.717815437102553]),
    ("invgamma", (2.0, 3.0), [1.7531554216799812, 0.789378746216879, 2.288633234286376]),
    ("t", (3.0, 1.0, 2.0), [1.045843209190186, -0.33743610262365853, 2.3262895331157383]),
    ("gengamma", (2.0, 1.5, 3.0), [3.068775331610756, 5.949422941087124, 2.4336563142632976]),
    ("halfnormal", (0.5, 1.0), [0.5341927672531842, 1.8597475403099617, 1.7247210785859324]),
]


@pytest.mark.parametrize(("name", "args", "expected"), PYTENSOR_DRAWS)
def test_draws_equal_pytensor(name, args, expected) -> None:
    rng = randomgen_constructor(np.random.default_rng(SEED))
    value = opweave.function([], getattr(rb, name)(*args, size=(3,), rng=rng))()
    np.testing.assert_allclose(value, expected, rtol=1e-15)


def test_multivariate_normal_equals_pytensor() -> None:
    # PyTensor 2.38.3: multivariate_normal(zeros(2), COV, size=(2,)) with default_rng(11).
    expected = [
        [0.03419276725318417, 1.8158733023725588],
        [1.2247210785859324, -0.06271226943528885],
    ]
    rng = randomgen_constructor(np.random.default_rng(SEED))
    value = opweave.function([], rb.multivariate_normal(np.zeros(2), COV, size=(2,), rng=rng))()
    np.testing.assert_allclose(value, expected, rtol=1e-14)


class SymbolicRV(RNGConsumerOp, OpFromGraph):
    """An Op that consumes a generator and is a graph of Ops (its implementation is the
    graph's)."""

    def update(self, node):
        return {node.inputs[0]: node.outputs[0]}


@pytest.mark.parametrize("linker", LINKERS)
def test_generator_consumer_that_is_a_graph_runs_its_graph(linker) -> None:
    rng_in, mu = random_generator_type(), ot.dscalar("mu")
    next_rng, x = rb.normal(mu, 1.0, size=(3,), rng=rng_in, return_next_rng=True)
    op = SymbolicRV([rng_in, mu], [next_rng, ot.exp(x)])
    rng = randomgen_constructor(np.random.default_rng(SEED))
    node = op(rng, ot.constant(np.float64(0.5)))[1].owner
    assert op.update(node) == {rng: node.outputs[0]}
    value = opweave.function([], node.outputs[1], mode=Mode(linker=linker))()
    np.testing.assert_array_equal(value, np.exp(_gen().normal(0.5, 1.0, size=3)))


def test_the_whole_graph_c_linker_refuses_random_variables_by_name() -> None:
    c_linker = pytest.importorskip("opweave_c.linkers.c_linker")
    out = ShiftedPoissonRV()(3.0, 1, size=(2,), rng=randomgen_constructor(_gen()))
    message = r"linker 'c' .*ShiftedPoissonRV.* has no C implementation"
    with pytest.raises(c_linker.MissingCCodeError, match=message):
        opweave.function([], out, mode=Mode(linker="c"))
