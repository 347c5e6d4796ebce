"""``opweave.tensor.random``: the generator Type and shared generators, the
:class:`RandomVariable` Op, the distributions and :class:`RandomStream`, compared with
NumPy's ``Generator`` draws."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError
from opweave.tensor.random import (
    RandomGeneratorSharedVariable,
    RandomStream,
    RandomVariable,
    random_generator_type,
    randomgen_constructor,
)
from opweave.tensor.random import basic as rb

LINKERS = ["py", "vm", "cvm"]


def _fn(inputs, outputs, linker="vm", **kwargs):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker), **kwargs)


def _rng(seed=0):
    return randomgen_constructor(np.random.default_rng(seed), name="rng")


def _child(seed, k=0):
    """The generator a ``RandomStream(seed)`` gives its ``k``-th variable."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(k + 1)[k])


# ------------------------------------------------------------------------- the Type


def test_type_filters_generators_only() -> None:
    g = np.random.default_rng(1)
    assert random_generator_type.filter(g) is g
    assert random_generator_type.filter(g, strict=True) is g
    for bad in (np.random.RandomState(1), 3, np.zeros(2)):
        with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
            random_generator_type.filter(bad)
        with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
            random_generator_type.filter(bad, strict=True, allow_downcast=True)
    assert random_generator_type.is_valid_value(g)
    assert not random_generator_type.is_valid_value(np.random.RandomState(1))


def test_type_values_eq_compares_states() -> None:
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert random_generator_type.values_eq(a, b)
    b.normal()
    assert not random_generator_type.values_eq(a, b)
    a.normal()
    assert random_generator_type.values_eq(a, b)
    other = np.random.Generator(np.random.MT19937(5))
    assert not random_generator_type.values_eq(a, other)
    assert not random_generator_type.values_eq(a, 5)
    assert random_generator_type.may_share_memory(a, a)
    assert not random_generator_type.may_share_memory(a, copy.deepcopy(a))


def test_type_and_values_pickle() -> None:
    t = pickle.loads(pickle.dumps(random_generator_type))
    assert t == random_generator_type and hash(t) == hash(random_generator_type)
    g = np.random.default_rng(9)
    g2 = pickle.loads(pickle.dumps(g))
    assert random_generator_type.values_eq(g, g2)
    assert g2.normal() == g.normal()


# ------------------------------------------------------------------ shared generators


def test_shared_generator_copies_unless_borrowed() -> None:
    g = np.random.default_rng(2)
    s = randomgen_constructor(g)
    assert isinstance(s, RandomGeneratorSharedVariable) and s.type == random_generator_type
    assert s.get_value(borrow=True) is not g
    assert random_generator_type.values_eq(s.get_value(), g)
    assert randomgen_constructor(g, borrow=True).get_value(borrow=True) is g
    assert s.get_value() is not s.get_value(borrow=True)


def test_shared_generator_rejects_other_values() -> None:
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        randomgen_constructor(np.random.RandomState(0))
    s = _rng()
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        s.set_value(np.zeros(3))
    s.set_value(np.random.default_rng(4))
    assert random_generator_type.values_eq(s.get_value(), np.random.default_rng(4))


# ---------------------------------------------------------------- the RandomVariable Op


def test_node_inputs_and_outputs() -> None:
    rng = _rng()
    next_rng, x = rb.normal(1.0, 2.0, size=(2, 3), rng=rng, return_next_rng=True)
    node = x.owner
    assert isinstance(node.op, RandomVariable) and node.op.name == "normal"
    assert node.inputs[0] is rng and node.outputs == [next_rng, x]
    assert next_rng.type == random_generator_type
    assert x.type == ot.TensorType("float64", shape=(2, 3))
    assert node.op.dist_params(node) == node.inputs[2:]
    assert rb.normal(rng=rng).owner.outputs[0].type == random_generator_type


def test_drawing_leaves_the_input_generator_alone() -> None:
    rng = _rng(3)
    next_rng, x = rb.normal(size=3, rng=rng, return_next_rng=True)
    f = _fn([], [next_rng, x])
    advanced, a = f()
    _, b = f()
    ref = np.random.default_rng(3)
    np.testing.assert_array_equal(a, ref.normal(size=3))
    np.testing.assert_array_equal(b, a)  # no update: the shared generator is unchanged
    assert random_generator_type.values_eq(advanced, ref)
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(3))


def test_explicit_update_advances_the_generator() -> None:
    rng = _rng(4)
    next_rng, x = rb.uniform(size=2, rng=rng, return_next_rng=True)
    f = _fn([], x, updates={rng: next_rng})
    ref = np.random.default_rng(4)
    for _ in range(3):
        np.testing.assert_array_equal(f(), ref.uniform(size=2))


def test_inplace_op_destroys_its_generator() -> None:
    op = rb.NormalRV(inplace=True)
    assert op.destroy_map == {0: [0]} and op != rb.normal
    assert not hasattr(rb.normal, "destroy_map") or not rb.normal.destroy_map
    rng = _rng(8)
    next_rng, x = op(0.0, 1.0, size=2, rng=rng, return_next_rng=True)
    f = _fn([], x, updates={rng: next_rng}, accept_inplace=True)
    ref = np.random.default_rng(8)
    np.testing.assert_array_equal(f(), ref.normal(size=2))
    np.testing.assert_array_equal(f(), ref.normal(size=2))


@pytest.mark.parametrize(
    ("size", "params", "shape"),
    [
        (None, (0.0, 1.0), ()),
        (None, (np.zeros(3), 1.0), (3,)),
        (None, (np.zeros((2, 1)), np.ones(4)), (2, 4)),
        ((5,), (0.0, 1.0), (5,)),
        (7, (0.0, 1.0), (7,)),
        ((2, 3), (np.zeros(3), np.ones((1, 3))), (2, 3)),
        ((0,), (0.0, 1.0), (0,)),
    ],
)
def test_static_and_run_time_shapes(size, params, shape) -> None:
    x = rb.normal(*params, size=size, rng=_rng())
    assert x.type.shape == shape
    value = _fn([], x)()
    assert value.shape == shape and value.dtype == np.float64
    ref = np.random.default_rng(0).normal(*params, size=size)
    np.testing.assert_array_equal(value, ref)


def test_symbolic_size_and_parameter_shapes() -> None:
    n = ot.iscalar("n")
    x = rb.normal(0.0, 1.0, size=(n, 2), rng=_rng())
    assert x.type.shape == (None, 2)
    f = _fn([n], [x, x.shape])
    value, shape = f(4)
    assert value.shape == (4, 2) and tuple(shape) == (4, 2)
    mu, sigma = ot.dvector("mu"), ot.dmatrix("sigma")
    y = rb.normal(mu, sigma, rng=_rng())
    assert y.type.shape == (None, None)
    g = _fn([mu, sigma], y.shape)
    assert tuple(g(np.zeros(3), np.ones((2, 1)))) == (2, 3)
    assert tuple(g(np.zeros(1), np.ones((2, 5)))) == (2, 5)


def test_core_shapes_of_multivariate_draws() -> None:
    mean = ot.dmatrix("mean")
    x = rb.multivariate_normal(mean, np.eye(3), size=(4, 2), rng=_rng())
    assert x.type.shape == (4, 2, 3)
    f = _fn([mean], [x, x.shape])
    value, shape = f(np.zeros((2, 3)))
    assert value.shape == (4, 2, 3) and tuple(shape) == (4, 2, 3)
    p = rb.permutation(ot.iscalar("k"), rng=_rng())
    assert p.type.shape == (None,) and p.dtype == "int32"  # x's dtype, as in PyTensor


def test_dtype_argument_and_defaults() -> None:
    assert rb.normal(dtype="float32", rng=_rng()).dtype == "float32"
    assert _fn([], rb.normal(size=2, dtype="float32", rng=_rng()))().dtype == np.float32
    for fn, args in [(rb.integers, (5,)), (rb.poisson, ()), (rb.bernoulli, (0.5,))]:
        assert fn(*args, rng=_rng()).dtype == "int64"
    with opweave.config.change_flags(floatX="float32"):
        assert rb.uniform(rng=_rng()).dtype == "float32"


def test_name_argument() -> None:
    assert rb.normal(rng=_rng(), name="z").name == "z"


def test_random_variables_are_not_constant_folded() -> None:
    x = rb.normal(size=2, rng=_rng())
    f = _fn([], x, no_default_updates=True)
    assert any(isinstance(n.op, rb.NormalRV) for n in f.maker.fgraph.toposort())


def test_no_gradient() -> None:
    mu = ot.dscalar("mu")
    x = rb.normal(mu, 1.0, rng=_rng())
    with pytest.raises(NullTypeGradError, match="random variables"):
        ot.grad(x, mu)


# ------------------------------------------------------------------------- bad input


def test_bad_graph_inputs_are_rejected() -> None:
    with pytest.raises(TypeError, match="rng must be a variable of RandomGeneratorType"):
        rb.normal(rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a variable of RandomGeneratorType"):
        rb.normal(rng=ot.dscalar())
    with pytest.raises(TypeError, match="expected 2 parameters, got 1"):
        rb.normal.make_node(_rng(), None, 0.0)
    with pytest.raises(TypeError, match="size must hold integers"):
        rb.normal(size=(2.5,), rng=_rng())
    with pytest.raises(TypeError, match="size must be an integer vector"):
        rb.normal(size=ot.dvector(), rng=_rng())
    with pytest.raises(ValueError, match="must be known statically"):
        rb.normal(size=ot.lvector(), rng=_rng())
    with pytest.raises(ValueError, match="non-negative"):
        rb.normal(size=(-1,), rng=_rng())
    with pytest.raises(ValueError, match="do not fit size"):
        rb.normal(np.zeros(3), size=(4,), rng=_rng())
    with pytest.raises(ValueError, match="shorter than the batch dimensions"):
        rb.normal(np.zeros((2, 3)), size=(3,), rng=_rng())
    with pytest.raises(ValueError, match="do not broadcast"):
        rb.normal(np.zeros(3), np.ones(4), rng=_rng())
    with pytest.raises(TypeError, match="parameter 1 must have at least 2 dimensions"):
        rb.multivariate_normal(np.zeros(2), np.ones(2), rng=_rng())
    with pytest.raises(ValueError, match="either rate or scale"):
        rb.gamma(1.0, rate=1.0, scale=1.0)
    with pytest.raises(TypeError, match="must be an integer"):
        rb.permutation(2.5)
    with pytest.raises(ValueError, match="invalid signature"):
        RandomVariable("normal", "(),()")


@pytest.mark.parametrize(
    ("fn", "args", "match"),
    [
        (rb.normal, (0.0, -1.0), "normal: invalid parameters"),
        (rb.integers, (5, 2), "integers: invalid parameters"),
        (rb.binomial, (10, 1.5), "binomial: invalid parameters"),
        (rb.bernoulli, (-0.1,), "bernoulli: invalid parameters"),
        (rb.poisson, (-1.0,), "poisson: invalid parameters"),
        (rb.beta, (0.0, 1.0), "beta: invalid parameters"),
    ],
)
def test_bad_parameters_fail_at_run_time(fn, args, match) -> None:
    f = _fn([], fn(*args, rng=_rng()))
    with pytest.raises(ValueError, match=match):
        f()


def test_runtime_parameters_that_do_not_fit_the_size() -> None:
    mu = ot.dvector("mu")
    f = _fn([mu], rb.normal(mu, size=(3,), rng=_rng()))
    with pytest.raises(ValueError, match="normal: invalid parameters or size"):
        f(np.zeros(4))


def test_choice_without_replacement_needs_enough_entries() -> None:
    with pytest.raises(ValueError, match="cannot draw 4 distinct entries from 3"):
        rb.choice(3, size=(2, 2), replace=False, rng=_rng())
    n = ot.lscalar("n")
    f = _fn([n], rb.choice(n, size=(4,), replace=False, rng=_rng()))
    assert sorted(f(4)) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="larger sample than population"):
        f(3)


# --------------------------------------------------------- draws equal NumPy's draws

CASES = [
    (rb.normal, (1.0, 2.0), {"size": (3,)}, "normal", (1.0, 2.0)),
    (rb.uniform, (-1.0, np.array([1.0, 3.0])), {}, "uniform", (-1.0, np.array([1.0, 3.0]))),
    (rb.integers, (3, 9), {"size": (4,)}, "integers", (3, 9)),
    (rb.integers, (6,), {"size": (4,)}, "integers", (0, 6)),
    (rb.binomial, (10, np.array([0.2, 0.9])), {}, "binomial", (10, np.array([0.2, 0.9]))),
    (
        rb.poisson,
        (np.array([[1.0], [4.0]]),),
        {"size": (2, 3)},
        "poisson",
        (np.array([[1.0], [4.0]]),),
    ),
    (rb.beta, (2.0, 5.0), {"size": (3,)}, "beta", (2.0, 5.0)),
    (rb.exponential, (2.0,), {"size": (3,)}, "exponential", (2.0,)),
]


@pytest.mark.parametrize(("fn", "args", "kw", "method", "np_args"), CASES)
def test_draws_equal_numpy(fn, args, kw, method, np_args) -> None:
    value = _fn([], fn(*args, rng=_rng(11), **kw))()
    ref = getattr(np.random.default_rng(11), method)(*np_args, **kw)
    np.testing.assert_array_equal(value, ref)
    assert value.dtype == (np.int64 if fn.dtype == "int64" else np.float64)


def test_gamma_scale_and_rate() -> None:
    by_scale = _fn([], rb.gamma(2.0, scale=3.0, size=4, rng=_rng(2)))()
    by_rate = _fn([], rb.gamma(2.0, rate=0.5, size=4, rng=_rng(2)))()
    np.testing.assert_array_equal(by_scale, np.random.default_rng(2).gamma(2.0, 3.0, size=4))
    np.testing.assert_allclose(by_rate, np.random.default_rng(2).gamma(2.0, 2.0, size=4))


def test_bernoulli_draws_as_binomial_with_one_trial() -> None:
    value = _fn([], rb.bernoulli(0.3, size=6, rng=_rng(5)))()
    np.testing.assert_array_equal(value, np.random.default_rng(5).binomial(1, 0.3, size=6))


def test_batched_multivariate_draws_equal_numpy_per_batch_entry() -> None:
    means = np.array([[0.0, 10.0], [5.0, -5.0]])
    cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    value = _fn([], rb.multivariate_normal(means, cov, method="svd", rng=_rng(6)))()
    ref = np.random.default_rng(6)
    np.testing.assert_allclose(value, [ref.multivariate_normal(m, cov) for m in means])
    alphas = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]])
    value = _fn([], rb.dirichlet(alphas, size=(3, 2), rng=_rng(7)))()
    assert value.shape == (3, 2, 3)
    ref = np.random.default_rng(7)
    np.testing.assert_allclose(value, [[ref.dirichlet(a) for a in alphas] for _ in range(3)])


def test_permutations() -> None:
    value = _fn([], rb.permutation(6, rng=_rng(1)))()
    np.testing.assert_array_equal(value, np.random.default_rng(1).permutation(6))
    x = np.arange(8.0).reshape(4, 2)
    value = _fn([], rb.permutation(x, rng=_rng(1)))()
    np.testing.assert_array_equal(value, np.random.default_rng(1).permutation(x))
    batched = _fn([], rb.permutation(5, size=(3,), rng=_rng(1)))()
    assert batched.shape == (3, 5)
    assert all(sorted(row) == list(range(5)) for row in batched)


def test_choice() -> None:
    a = np.array([10.0, 20.0, 30.0, 40.0])
    with_replacement = _fn([], rb.choice(a, size=(50,), rng=_rng(3)))()
    assert with_replacement.shape == (50,) and set(with_replacement) <= set(a)
    idx = np.random.default_rng(3).integers(0, 4, size=50)
    np.testing.assert_array_equal(with_replacement, a[idx])
    distinct = _fn([], rb.choice(a, size=(2, 2), replace=False, rng=_rng(3)))()
    assert distinct.shape == (2, 2) and sorted(distinct.ravel()) == sorted(a)
    weighted = _fn([], rb.choice(5, size=(2,), replace=False, p=[0, 0.5, 0, 0.5, 0], rng=_rng(3)))()
    assert sorted(weighted) == [1, 3]
    too_many = rb.choice(5, size=(3,), replace=False, p=[0, 0.5, 0, 0.5, 0], rng=_rng(3))
    with pytest.raises(ValueError, match="Fewer non-zero entries in p than size"):
        _fn([], too_many)()  # as NumPy's choice
    only = _fn([], rb.choice(a, size=(20,), p=[0.0, 0.0, 1.0, 0.0], rng=_rng(3)))()
    assert (only == 30.0).all()


# ------------------------------------------------------------------------ statistics

N = 20000
STATS = [
    (lambda rng: rb.normal(2.0, 3.0, size=N, rng=rng), 2.0, 9.0),
    (lambda rng: rb.uniform(-1.0, 3.0, size=N, rng=rng), 1.0, 16 / 12),
    (lambda rng: rb.integers(0, 10, size=N, rng=rng), 4.5, 99 / 12),
    (lambda rng: rb.bernoulli(0.3, size=N, rng=rng), 0.3, 0.21),
    (lambda rng: rb.binomial(20, 0.25, size=N, rng=rng), 5.0, 3.75),
    (lambda rng: rb.poisson(4.0, size=N, rng=rng), 4.0, 4.0),
    (lambda rng: rb.gamma(3.0, scale=2.0, size=N, rng=rng), 6.0, 12.0),
    (lambda rng: rb.beta(2.0, 3.0, size=N, rng=rng), 0.4, 0.04),
    (lambda rng: rb.exponential(0.5, size=N, rng=rng), 0.5, 0.25),
    (lambda rng: rb.categorical([0.1, 0.2, 0.7], size=N, rng=rng), 1.6, 0.44),
]


@pytest.mark.parametrize(("make", "mean", "var"), STATS)
def test_moments_of_many_draws(make, mean, var) -> None:
    value = _fn([], make(_rng(123)))()
    assert value.shape == (N,)
    sd_of_mean = np.sqrt(var / N)
    assert abs(value.mean() - mean) < 5 * sd_of_mean
    assert abs(value.var() - var) < 0.06 * var


def test_moments_of_multivariate_draws() -> None:
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    value = _fn([], rb.multivariate_normal([1.0, -1.0], cov, size=N, rng=_rng(9)))()
    np.testing.assert_allclose(value.mean(axis=0), [1.0, -1.0], atol=0.06)
    np.testing.assert_allclose(np.cov(value.T), cov, atol=0.08)
    value = _fn([], rb.dirichlet([1.0, 2.0, 7.0], size=N, rng=_rng(9)))()
    np.testing.assert_allclose(value.sum(axis=1), 1.0)
    np.testing.assert_allclose(value.mean(axis=0), [0.1, 0.2, 0.7], atol=0.01)


# ----------------------------------------------------------------------- RandomStream


@pytest.mark.parametrize("linker", LINKERS)
def test_stream_draws_anew_and_reproduces_per_seed(linker) -> None:
    srng = RandomStream(42)
    x = srng.normal(0.0, 1.0, size=(3,))
    y = srng.integers(0, 100, size=(2,))
    f = _fn([], [x, y], linker)
    (x1, y1), (x2, y2) = f(), f()
    rx, ry = _child(42, 0), _child(42, 1)
    np.testing.assert_array_equal(x1, rx.normal(0.0, 1.0, size=3))
    np.testing.assert_array_equal(x2, rx.normal(0.0, 1.0, size=3))
    np.testing.assert_array_equal(y1, ry.integers(0, 100, size=2))
    np.testing.assert_array_equal(y2, ry.integers(0, 100, size=2))
    assert not np.array_equal(x1, x2)


def test_stream_is_the_same_on_every_linker() -> None:
    runs = []
    for linker in LINKERS:
        srng = RandomStream(7)
        f = _fn([], srng.uniform(size=(4,)) + srng.normal(size=(4,)), linker)
        runs.append([f(), f()])
    for other in runs[1:]:
        np.testing.assert_array_equal(np.array(other), np.array(runs[0]))


def test_no_default_updates_repeats_the_draws() -> None:
    srng = RandomStream(3)
    x = srng.normal(size=(2,))
    f = _fn([], x, no_default_updates=True)
    repeated = f()
    np.testing.assert_array_equal(f(), repeated)
    g = _fn([], x)
    np.testing.assert_array_equal(g(), repeated)  # g draws from the same state, then advances
    advanced = f()
    assert not np.array_equal(advanced, repeated)
    np.testing.assert_array_equal(f(), advanced)
    np.testing.assert_array_equal(g(), advanced)


def test_stream_variables_and_updates() -> None:
    srng = RandomStream(0)
    x = srng.poisson(2.0, size=3)
    ((rng, update),) = srng.updates()
    assert isinstance(rng, RandomGeneratorSharedVariable)
    assert rng.default_update is update is x.owner.outputs[0]
    c = srng.choice(np.arange(5.0), size=(2,))
    rng2, update2 = srng.updates()[1]
    assert rng2.default_update is update2 and update2.owner.inputs[0] is rng2
    assert c.type.shape == (2,)
    for name in ("normal", "uniform", "permutation", "choice", "gamma", "dirichlet"):
        assert name in dir(srng)


def test_stream_seed_resets_every_generator() -> None:
    srng = RandomStream(5)
    f = _fn([], srng.normal(size=(3,)))
    first = f()
    f()
    srng.seed()
    np.testing.assert_array_equal(f(), first)
    srng.seed(9)
    np.testing.assert_array_equal(f(), _child(9).normal(size=3))


def test_stream_bad_use() -> None:
    srng = RandomStream(0)
    with pytest.raises(ValueError, match="rng argument cannot be given"):
        srng.normal(rng=_rng())
    with pytest.raises(AttributeError, match="no attribute or distribution 'no_such'"):
        srng.no_such  # noqa: B018
    with pytest.raises(TypeError, match="rng_ctor must be callable"):
        RandomStream(0, rng_ctor=3)


def test_shared_of_a_generator_is_a_shared_random_generator() -> None:
    import opweave
    from opweave.tensor.random.basic import normal
    from opweave.tensor.random.type import RandomGeneratorType
    from opweave.tensor.random.var import RandomGeneratorSharedVariable

    rng = np.random.default_rng(3)
    g = opweave.shared(rng, name="rng")
    assert isinstance(g, RandomGeneratorSharedVariable) and isinstance(g.type, RandomGeneratorType)
    assert g.get_value() is not rng  # copied unless borrow=True
    draws = normal(0.0, 1.0, size=(3,), rng=g)
    f = opweave.function([], draws, updates=[(g, draws.owner.outputs[0])])
    expected = np.random.default_rng(3)
    np.testing.assert_array_equal(f(), expected.normal(0.0, 1.0, size=(3,)))
    np.testing.assert_array_equal(f(), expected.normal(0.0, 1.0, size=(3,)))
