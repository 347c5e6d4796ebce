"""``opweave.xtensor.random``: random variables over named dimensions (:class:`XRV`), their
lowering to the core random variables, compared with NumPy's ``Generator`` draws and with
the core random variables on transposed parameters."""

from __future__ import annotations

import inspect
import pickle
import re

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
import opweave.xtensor.random as xr
from opweave.compile.mode import Mode
from opweave.tensor.random import RandomVariable, random_generator_type, randomgen_constructor
from opweave.tensor.random import basic as rb
from opweave.tensor.type_other import NoneTypeT
from opweave.xtensor import as_xtensor, xtensor
from opweave.xtensor.basic import XOp, XTensorFromTensor
from opweave.xtensor.random_variable import XRV
from opweave.xtensor.rewriting.random_variable import lower_rv

MODES = [None, "FAST_COMPILE", Mode(linker="py")]
MODE_IDS = ["default", "fast_compile", "py"]


def _rng(n: int = 0):
    return randomgen_constructor(np.random.default_rng(n), name="rng")


def _fn(inputs, outputs, mode=None, **kwargs):
    f = opweave.function(inputs, outputs, mode=mode, **kwargs)
    nodes = f.maker.fgraph.toposort()
    assert not [node for node in nodes if isinstance(node.op, XOp)]
    return f


def _core_nodes(f, op_type=RandomVariable):
    return [node for node in f.maker.fgraph.toposort() if isinstance(node.op, op_type)]


# ------------------------------------------------------------------ the functions


def test_every_core_random_variable_has_a_function() -> None:
    names = {name for name, _ in inspect.getmembers(xr)}
    for name, op in inspect.getmembers(rb):
        if isinstance(op, RandomVariable):
            assert ("gamma" if name == "_gamma" else name) in names
    assert xr.nbinom is xr.negative_binomial
    assert xr.normal.__name__ == "normal"
    assert "core_dims" in inspect.signature(xr.normal).parameters


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_normal_draws_equal_numpy(mode) -> None:
    mu = xtensor("mu", dims=("a",), shape=(3,))
    sigma = xtensor("sigma", dims=("b",), shape=(2,))
    out = xr.normal(mu, sigma, rng=_rng(3))
    assert out.type.dims == ("a", "b")
    assert out.type.shape == (3, 2)
    mu_val = np.array([-10.0, 0.0, 10.0])
    sigma_val = np.array([1.0, 10.0])
    f = _fn([mu, sigma], out, mode=mode)
    value = f(mu_val, sigma_val)
    ref = np.random.default_rng(3).normal(mu_val[:, None], sigma_val[None, :])
    np.testing.assert_array_equal(value, ref)
    assert [node.op.name for node in _core_nodes(f)] == ["normal"]


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_extra_dims_come_first_and_set_the_size(mode) -> None:
    mu = xtensor("mu", dims=("a",), shape=(3,))
    sigma = xtensor("sigma", dims=("b",), shape=(2,))
    n = ot.scalar("n", dtype="int64")
    out = xr.normal(mu, sigma, extra_dims={"c": n, "d": 4}, rng=_rng(4))
    assert out.type.dims == ("c", "d", "a", "b")
    assert out.type.shape == (None, 4, 3, 2)
    mu_val = np.array([-10.0, 0.0, 10.0])
    sigma_val = np.array([1.0, 10.0])
    value = _fn([mu, sigma, n], out, mode=mode)(mu_val, sigma_val, 5)
    ref = np.random.default_rng(4).normal(mu_val[:, None], sigma_val, size=(5, 4, 3, 2))
    np.testing.assert_array_equal(value, ref)


def test_draws_equal_the_core_variable_on_aligned_parameters() -> None:
    # Parameters that share dimensions in different orders are transposed to the draws'.
    loc = xtensor("loc", dims=("a", "b"), shape=(2, 3))
    scale = xtensor("scale", dims=("b", "a"), shape=(3, 2))
    out = xr.lognormal(loc, scale, extra_dims={"c": 2}, rng=_rng(5))
    assert out.type.dims == ("c", "a", "b")
    loc_val = np.arange(6.0).reshape(2, 3) / 10
    scale_val = np.arange(1.0, 7.0).reshape(3, 2) / 10
    value = _fn([loc, scale], out)(loc_val, scale_val)
    t_loc, t_scale = ot.matrix("t_loc"), ot.matrix("t_scale")
    core = rb.lognormal(t_loc, t_scale.T, size=(2, 2, 3), rng=_rng(5))
    ref = opweave.function([t_loc, t_scale], core)(loc_val, scale_val)
    np.testing.assert_array_equal(value, ref)
    numpy_ref = np.random.default_rng(5).lognormal(loc_val, scale_val.T, size=(2, 2, 3))
    np.testing.assert_array_equal(value, numpy_ref)


@pytest.mark.parametrize(
    ("func", "params", "method"),
    [
        (xr.uniform, (-1.0, np.array([1.0, 2.0, 3.0])), "uniform"),
        (xr.exponential, (np.array([1.0, 2.0, 3.0]),), "exponential"),
        (xr.poisson, (np.array([1.0, 4.0, 9.0]),), "poisson"),
        (xr.binomial, (10, np.array([0.2, 0.5, 0.9])), "binomial"),
        (xr.integers, (0, np.array([5, 50, 500])), "integers"),
        (xr.beta, (np.array([1.0, 2.0, 3.0]), 2.0), "beta"),
        (xr.gamma, (np.array([1.0, 2.0, 3.0]), 0.5), "gamma"),
        (xr.laplace, (np.array([1.0, 2.0, 3.0]), 2.0), "laplace"),
        (xr.logistic, (np.array([1.0, 2.0, 3.0]), 2.0), "logistic"),
        (xr.weibull, (np.array([1.0, 2.0, 3.0]),), "weibull"),
        (xr.wald, (np.array([1.0, 2.0, 3.0]), 2.0), "wald"),
        (xr.vonmises, (np.array([0.0, 1.0, 2.0]), 2.0), "vonmises"),
        (xr.triangular, (0.0, 1.0, np.array([2.0, 3.0, 4.0])), "triangular"),
        (xr.geometric, (np.array([0.2, 0.5, 0.9]),), "geometric"),
    ],
)
def test_scalar_distributions_equal_numpy(func, params, method) -> None:
    xparams = [
        as_xtensor(p, dims=("a",)) if isinstance(p, np.ndarray) else as_xtensor(p) for p in params
    ]
    out = func(*xparams, extra_dims={"b": 2}, rng=_rng(6))
    assert out.type.dims == ("b", "a")
    value = _fn([], out)()
    ref = getattr(np.random.default_rng(6), method)(*params, size=(2, 3))
    np.testing.assert_array_equal(value, ref)
    assert value.dtype == ref.dtype


def test_standard_normal_and_chisquare_and_rayleigh() -> None:
    out = xr.standard_normal(extra_dims={"a": 3}, rng=_rng(7))
    assert out.type.dims == ("a",)
    np.testing.assert_array_equal(_fn([], out)(), np.random.default_rng(7).normal(0, 1, 3))

    df = np.array([1.0, 4.0, 9.0])
    out = xr.chisquare(as_xtensor(df, dims=("a",)), extra_dims={"b": 2}, rng=_rng(8))
    assert out.type.dims == ("b", "a")
    ref = np.random.default_rng(8).gamma(df / 2, 2.0, size=(2, 3))
    np.testing.assert_allclose(_fn([], out)(), ref)

    scale = np.array([1.0, 2.0, 3.0])
    out = xr.rayleigh(as_xtensor(scale, dims=("a",)), extra_dims={"b": 2}, rng=_rng(9))
    assert out.type.dims == ("b", "a")
    ref = np.sqrt(np.random.default_rng(9).gamma(1.0, 2.0, size=(2, 3))) * scale
    np.testing.assert_allclose(_fn([], out)(), ref)


# ------------------------------------------------------------ the rng and updates


def test_next_rng_is_the_first_output_and_the_update() -> None:
    rng = _rng(40)
    out = xr.normal(0, 1, rng=rng)
    node = out.owner
    assert isinstance(node.op, XRV)
    next_rng, draws = node.outputs
    assert draws is out
    assert node.op.update(node) == {rng: next_rng}
    assert node.op.rng_param(node) is rng
    assert next_rng.type == rng.type
    f = _fn([], draws, updates=[(rng, next_rng)])
    ref = np.random.default_rng(40)
    np.testing.assert_array_equal(f(), ref.normal(0, 1))
    np.testing.assert_array_equal(f(), ref.normal(0, 1))


def test_next_rng_can_be_an_output() -> None:
    rng = random_generator_type("rng")
    out = xr.normal(as_xtensor(np.zeros(2), dims=("a",)), 1, rng=rng)
    f = _fn([rng], [out.owner.outputs[0], out])
    given = np.random.default_rng(12)
    next_value, value = f(given)
    ref = np.random.default_rng(12)
    np.testing.assert_array_equal(value, ref.normal(np.zeros(2), 1))
    assert next_value.bit_generator.state == ref.bit_generator.state


def test_default_rng_is_a_new_shared_generator() -> None:
    out = xr.normal(0, 1, extra_dims={"a": 3})
    rng = out.owner.inputs[0]
    assert isinstance(rng.type, type(random_generator_type))
    assert isinstance(rng.get_value(), np.random.Generator)
    assert _fn([], out)().shape == (3,)


def test_node_parts() -> None:
    n = ot.scalar("n", dtype="int64")
    mu = xtensor("mu", dims=("a",))
    out = xr.normal(mu, 2.0, extra_dims={"b": n}, rng=_rng())
    node = out.owner
    assert node.op.extra_dims == ("b",)
    assert node.op.core_dims == (((), ()), ())
    assert node.op.core_op is rb.normal
    assert node.op.size_params(node) == [n]
    params = node.op.dist_params(node)
    assert params[0] is mu
    assert params[1].type.dims == ()
    assert str(node.op) == "normal(core_dims=(((), ()), ()), extra_dims=('b',))"


def test_props_rebuild_the_op_with_more_extra_dims() -> None:
    mu = xtensor("mu", dims=("a",), shape=(2,))
    out = xr.normal(mu, 1.0, extra_dims={"b": 3}, rng=_rng(2))
    props = out.owner.op._props_dict()
    props["extra_dims"] = ("c", *props["extra_dims"])
    new_op = type(out.owner.op)(**props)
    _, *lengths_and_params = out.owner.inputs
    new_out = new_op(_rng(2), 4, *lengths_and_params)
    assert new_out.type.dims == ("c", "b", "a")
    assert new_out.type.shape == (4, 3, 2)
    value = _fn([mu], new_out)(np.array([0.0, 100.0]))
    ref = np.random.default_rng(2).normal(np.array([0.0, 100.0]), 1.0, size=(4, 3, 2))
    np.testing.assert_array_equal(value, ref)


def test_ops_compare_by_props_and_pickle() -> None:
    p = xtensor("p", dims=("p", "a"))
    out = xr.multinomial(3, p, core_dims="p", extra_dims={"b": 2})
    op = out.owner.op
    same = XRV(rb.multinomial, core_dims=(((), ("p",)), ("p",)), extra_dims=("b",))
    assert op == same
    assert hash(op) == hash(same)
    assert op != XRV(rb.multinomial, core_dims=(((), ("p",)), ("p",)), extra_dims=("c",))
    restored = pickle.loads(pickle.dumps(op))
    assert restored == op
    assert str(restored) == "multinomial(core_dims=(((), ('p',)), ('p',)), extra_dims=('b',))"


# ---------------------------------------------------------------------- dtypes


def test_dtype_follows_floatx_and_the_core_variable() -> None:
    with opweave.config.change_flags(floatX="float32"):
        assert xr.normal(0, 1).type.dtype == "float32"
    with opweave.config.change_flags(floatX="float64"):
        assert xr.normal(0, 1).type.dtype == "float64"
    assert xr.poisson(1.0).type.dtype == "int64"


# ---------------------------------------------------------- core dimensions


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_categorical_core_dim(mode) -> None:
    p = xtensor("p", dims=("p", "batch"), shape=(2, 3))
    out = xr.categorical(p, core_dims="p", extra_dims={"c": 4}, rng=_rng(10))
    assert out.type.dims == ("c", "batch")
    assert out.type.shape == (4, 3)
    p_val = np.array([[0.2, 0.9, 0.5], [0.8, 0.1, 0.5]])
    value = _fn([p], out, mode=mode)(p_val)
    t_p = ot.matrix("t_p")
    core = rb.categorical(t_p, size=(4, 3), rng=_rng(10))
    ref = opweave.function([t_p], core, mode=mode)(p_val.T)
    np.testing.assert_array_equal(value, ref)
    certain = _fn([p], out)(np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]))
    np.testing.assert_array_equal(certain, np.broadcast_to([0, 1, 0], (4, 3)))


def test_multinomial_core_dim_is_last_in_the_draws() -> None:
    n = xtensor("n", dims=("a",), shape=(2,), dtype="int64")
    p = xtensor("p", dims=("p", "a"), shape=(3, 2))
    out = xr.multinomial(n, p, core_dims=("p",), extra_dims={"c": 5}, rng=_rng(11))
    assert out.type.dims == ("c", "a", "p")
    assert out.type.shape == (5, 2, 3)
    n_val = np.array([5, 10])
    p_val = np.array([[0.2, 0.5], [0.3, 0.25], [0.5, 0.25]])
    value = _fn([n, p], out)(n_val, p_val)
    ref = np.random.default_rng(11).multinomial(n_val, p_val.T, size=(5, 2))
    np.testing.assert_array_equal(value, ref)


def test_dirichlet_core_dim() -> None:
    alpha = xtensor("alpha", dims=("k", "a"), shape=(3, 2))
    out = xr.dirichlet(alpha, core_dims="k", rng=_rng(12))
    assert out.type.dims == ("a", "k")
    alpha_val = np.array([[1.0, 0.5], [2.0, 0.5], [3.0, 0.5]])
    value = _fn([alpha], out)(alpha_val)
    t_alpha = ot.matrix("t_alpha")
    ref = opweave.function([t_alpha], rb.dirichlet(t_alpha, rng=_rng(12)))(alpha_val.T)
    np.testing.assert_array_equal(value, ref)
    np.testing.assert_allclose(value.sum(-1), np.ones(2))


@pytest.mark.parametrize("core_dims", [("rows", "cols"), ("cols", "rows")])
def test_multivariate_normal_core_dims_in_either_order(core_dims) -> None:
    mu = xtensor("mu", dims=("b1", "rows"), shape=(4, 2))
    cov = xtensor("cov", dims=("cols", "b2", "rows", "b1"), shape=(2, 3, 2, 4))
    out = xr.multivariate_normal(mu, cov, core_dims=core_dims, rng=_rng(13))
    assert out.type.dims == ("b1", "b2", "rows")
    assert out.type.shape == (4, 3, 2)
    mu_val = np.arange(8.0).reshape(4, 2)
    base = np.array([[2.0, 0.5], [0.5, 1.0]])
    cov_val = np.broadcast_to(base[:, None, :, None], (2, 3, 2, 4)) * np.arange(1, 4)[:, None, None]
    value = _fn([mu, cov], out)(mu_val, cov_val)
    t_mu, t_cov = ot.matrix("t_mu"), ot.tensor4("t_cov")
    core = rb.multivariate_normal(t_mu[:, None], t_cov.transpose(3, 1, 2, 0), rng=_rng(13))
    ref = opweave.function([t_mu, t_cov], core)(mu_val, cov_val)
    np.testing.assert_array_equal(value, ref)


def test_multivariate_normal_method() -> None:
    cov_val = np.array([[2.0, 0.5], [0.5, 1.0]])
    mu = as_xtensor(np.zeros(2), dims=("r",))
    cov = as_xtensor(cov_val, dims=("r", "c"))
    out = xr.multivariate_normal(mu, cov, core_dims=("r", "c"), method="svd", rng=_rng(14))
    assert out.owner.op.core_op.method == "svd"
    ref = np.random.default_rng(14).multivariate_normal(np.zeros(2), cov_val, method="svd")
    np.testing.assert_allclose(_fn([], out)(), ref)


def test_as_xrv_with_core_dims_maps() -> None:
    # The user's core dims name the draws' dimension second.
    constructor = xr.as_xrv(rb.multivariate_normal, [(1,), (1, 0)], (1,))
    mu_val = np.array([1.0, -1.0])
    cov_val = np.array([[2.0, 0.5], [0.5, 1.0]])
    mu = as_xtensor(mu_val, dims=("r",))
    cov = as_xtensor(cov_val, dims=("r", "c"))
    out = constructor(mu, cov, core_dims=("c", "r"), rng=_rng(15))
    assert out.type.dims == ("r",)
    assert out.owner.op.core_dims == ((("r",), ("r", "c")), ("r",))
    ref = np.random.default_rng(15).multivariate_normal(mu_val, cov_val, method="cholesky")
    np.testing.assert_allclose(_fn([], out)(), ref)


def test_zero_parameter_variable() -> None:
    class UnitRV(RandomVariable):
        name = "random"
        signature = "->()"
        dtype = "floatX"

    op = XRV(UnitRV(), core_dims=((), ()), extra_dims=["a"])
    rng = random_generator_type("rng")
    length = xtensor("length", dims=(), dtype="int64")
    out = op(rng, length)
    assert out.type.dims == ("a",)
    assert out.type.shape == (None,)
    value = _fn([rng, length], out)(np.random.default_rng(16), 5)
    np.testing.assert_array_equal(value, np.random.default_rng(16).random(size=5))


def test_static_shape_from_parameters_and_extra_lengths() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(1, None))
    y = xtensor("y", dims=("c", "d"), shape=(2, None))
    out = xr.normal(x, 1, extra_dims=y.sizes)
    assert out.type.dims == ("c", "d", "a", "b")
    assert out.type.shape == (2, None, 1, None)


# ------------------------------------------------------------------ errors


def test_wrong_number_of_core_dims() -> None:
    mu = xtensor("mu", dims=("a",))
    with pytest.raises(ValueError, match=re.escape("normal needs 0 core_dims, but got 1")):
        xr.normal(mu, 1.0, core_dims=("a",))
    p = xtensor("p", dims=("p",))
    with pytest.raises(ValueError, match="categorical needs 1 core_dims to be specified"):
        xr.categorical(p)
    with pytest.raises(ValueError, match="multinomial needs 1 core_dims, but got 2"):
        xr.multinomial(3, p, core_dims=("p", "q"))
    with pytest.raises(ValueError, match="multivariate_normal requires 2 core_dims, got 3"):
        xr.multivariate_normal(p, p, core_dims=("a", "b", "c"))
    with pytest.raises(TypeError, match="core_dims"):
        xr.multivariate_normal(p, p)  # type: ignore[call-arg]


def test_bad_core_dims() -> None:
    n = xtensor("n", dims=("a",), shape=(2,), dtype="int64")
    p = xtensor("p", dims=("p", "a"), shape=(3, 2))
    p.name = "p_x"
    n.name = "n_x"
    with pytest.raises(
        ValueError, match=re.escape("Parameter n_x has invalid core dimensions ['a']")
    ):
        xr.multinomial(n, p, core_dims=("a",))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "At least one core dim=('px',) missing from input p_x with dims=('p', 'a')"
        ),
    ):
        xr.multinomial(n, p, core_dims=("px",))
    with pytest.raises(ValueError, match=re.escape("Operand has repeated dims ('p', 'p')")):
        xr.multivariate_normal(p, p, core_dims=("p", "p"))


def test_extra_dims_that_a_parameter_has() -> None:
    mu = xtensor("mu", dims=("a",))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Size dimensions ['a'] conflict with parameter dimensions. They should be unique."
        ),
    ):
        xr.normal(mu, 1.0, extra_dims={"a": 3})


def test_bad_rng_and_lengths() -> None:
    with pytest.raises(TypeError, match="rng should be an instance of RandomGeneratorType"):
        xr.normal(0, 1, rng=ot.scalar("r"))
    with pytest.raises(TypeError, match="All dimension lengths should be scalar discrete dtype"):
        xr.normal(0, 1, extra_dims={"a": ot.scalar("f")})
    with pytest.raises(TypeError, match="All dimension lengths should be scalar discrete dtype"):
        xr.normal(0, 1, extra_dims={"a": ot.ivector("v")})
    with pytest.raises(ValueError, match="Expected 2 parameters"):
        XRV(rb.normal, core_dims=(((), ()), ()), extra_dims=())(None, 0.0)
    with pytest.raises(ValueError, match="size_dims must be unique"):
        XRV(rb.normal, core_dims=(((), ()), ()), extra_dims=("a", "a"))


# ------------------------------------------------------------------ vectorization


def test_vectorize_node_with_batched_parameters() -> None:
    mu = xtensor("mu", dims=("a",), shape=(3,))
    out = xr.normal(mu, 1.0, extra_dims={"e": 2}, rng=_rng(17))
    node = out.owner
    batched_mu = xtensor("batched_mu", dims=("k", "a"), shape=(4, 3))
    rng, length, _, sigma = node.inputs
    _, new_out = node.op.vectorize_node(node, rng, length, batched_mu, sigma, new_dim="k")
    assert new_out.type.dims == ("e", "k", "a")
    mu_val = np.arange(12.0).reshape(4, 3) * 10
    value = _fn([batched_mu], new_out)(mu_val)
    np.testing.assert_array_equal(
        value, np.random.default_rng(17).normal(mu_val, 1.0, size=(2, 4, 3))
    )

    batched_length = xtensor("batched_length", dims=("k",), shape=(2,), dtype="int64")
    with pytest.raises(NotImplementedError, match="batched extra_dim_lengths"):
        node.op.vectorize_node(node, rng, batched_length, mu, sigma, new_dim="k")


# ------------------------------------------------------------------ the lowering


def test_lowering_draws_from_the_core_variable_on_aligned_parameters() -> None:
    rng = random_generator_type("rng")
    c = ot.scalar("c", dtype="int64")
    mu = xtensor("mu", dims=("a",), shape=(3,))
    sigma = xtensor("sigma", dims=("b", "a"), shape=(2, 3))
    out = xr.normal(mu, sigma, extra_dims={"c": c}, rng=rng)
    assert out.type.dims == ("c", "a", "b")
    next_rng, lowered = lower_rv.transform(None, out.owner)
    assert isinstance(lowered.owner.op, XTensorFromTensor)
    assert lowered.type.dims == ("c", "a", "b")
    core_node = lowered.owner.inputs[0].owner
    assert core_node.op == rb.normal
    assert core_node.outputs[0] is next_rng
    assert rb.normal.rng_param(core_node) is rng
    mu_val = np.array([1.0, 2.0, 3.0])
    sigma_val = np.arange(6.0).reshape(2, 3)
    size = rb.normal.size_param(core_node)
    mu_t, sigma_t = rb.normal.dist_params(core_node)
    f = opweave.function([c, mu, sigma], [size, mu_t, sigma_t], on_unused_input="ignore")
    size_val, mu_t_val, sigma_t_val = f(5, mu_val, sigma_val)
    np.testing.assert_array_equal(size_val, [5, 3, 2])
    np.testing.assert_array_equal(mu_t_val, mu_val[None, :, None])
    np.testing.assert_array_equal(sigma_t_val, sigma_val.T[None])


def test_lowering_without_extra_dims_gives_no_size() -> None:
    p = xtensor("p", dims=("p", "a"), shape=(4, 2))
    out = xr.categorical(p, core_dims="p", rng=_rng())
    _, lowered = lower_rv.transform(None, out.owner)
    core_node = lowered.owner.inputs[0].owner
    assert isinstance(rb.categorical.size_param(core_node).type, NoneTypeT)
    (p_t,) = rb.categorical.dist_params(core_node)
    assert p_t.type.shape == (2, 4)
