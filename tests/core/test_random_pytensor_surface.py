"""PyTensor's surface of ``tensor.random``: the distributions' classes and signatures, the
``RandomVariable`` constructor and attributes, ``RNGConsumerOp``, ``tensor.random.utils``
and the lift rewrites of ``tensor.random.rewriting``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.fg import FunctionGraph
from opweave.graph.replace import vectorize_graph
from opweave.graph.rewriting.graph import in2out
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.random import basic as rb
from opweave.tensor.random import utils
from opweave.tensor.random.basic import ScipyRandomVariable
from opweave.tensor.random.op import RandomVariable, RNGConsumerOp
from opweave.tensor.random.rewriting import (
    local_dimshuffle_rv_lift,
    local_rv_size_lift,
    local_subtensor_rv_lift,
    random_make_inplace,
)
from opweave.tensor.random.var import randomgen_constructor
from opweave.tensor.subtensor import AdvancedSubtensor, Subtensor
from opweave.tensor.type_other import NoneConst, NoneTypeT

LINKERS = ["py", "vm", "cvm"]


def _rng(seed=3):
    return randomgen_constructor(np.random.default_rng(seed))


def _eval(out, linker="py"):
    return opweave.function([], out, mode=Mode(linker=linker))()


# (instance, class, name, signature, dtype, SciPy-drawn), as PyTensor 2.38.3 defines them.
TABLE = [
    ("triangular", "TriangularRV", "triangular", "(),(),()->()", "floatX", False),
    ("halfnormal", "HalfNormalRV", "halfnormal", "(),()->()", "floatX", True),
    ("lognormal", "LogNormalRV", "lognormal", "(),()->()", "floatX", False),
    ("pareto", "ParetoRV", "pareto", "(),()->()", "floatX", True),
    ("gumbel", "GumbelRV", "gumbel", "(),()->()", "floatX", True),
    ("weibull", "WeibullRV", "weibull", "()->()", "floatX", False),
    ("logistic", "LogisticRV", "logistic", "(),()->()", "floatX", False),
    ("vonmises", "VonMisesRV", "vonmises", "(),()->()", "floatX", False),
    ("geometric", "GeometricRV", "geometric", "()->()", "int64", False),
    ("hypergeometric", "HyperGeometricRV", "hypergeometric", "(),(),()->()", "int64", False),
    ("cauchy", "CauchyRV", "cauchy", "(),()->()", "floatX", True),
    ("halfcauchy", "HalfCauchyRV", "halfcauchy", "(),()->()", "floatX", True),
    ("invgamma", "InvGammaRV", "invgamma", "(),()->()", "floatX", False),
    ("wald", "WaldRV", "wald", "(),()->()", "floatX", False),
    ("truncexpon", "TruncExponentialRV", "truncexpon", "(),(),()->()", "floatX", True),
    ("t", "StudentTRV", "t", "(),(),()->()", "floatX", True),
    ("bernoulli", "BernoulliRV", "bernoulli", "()->()", "int64", True),
    ("laplace", "LaplaceRV", "laplace", "(),()->()", "floatX", False),
    ("nbinom", "NegBinomialRV", "negative_binomial", "(),()->()", "int64", True),
    ("betabinom", "BetaBinomialRV", "beta_binomial", "(),(),()->()", "int64", True),
    ("gengamma", "GenGammaRV", "gengamma", "(),(),()->()", "floatX", True),
    ("multinomial", "MultinomialRV", "multinomial", "(),(p)->(p)", "int64", False),
    ("multivariate_normal", "MvNormalRV", "multivariate_normal", "(n),(n,n)->(n)", "floatX", False),
]


@pytest.mark.parametrize(("inst", "cls", "name", "signature", "dtype", "scipy"), TABLE)
def test_distributions_have_pytensors_classes_and_signatures(
    inst, cls, name, signature, dtype, scipy
) -> None:
    op = getattr(rb, inst)
    assert type(op) is getattr(rb, cls)
    assert (op.name, op.signature, op.dtype) == (name, signature, dtype)
    assert isinstance(op, ScipyRandomVariable) == scipy
    assert inst in rb.__all__ and cls in rb.__all__


def test_aliases_and_functions() -> None:
    assert rb.nbinom is rb.negative_binomial
    for fn in (rb.chisquare, rb.standard_normal, rb.rayleigh):
        assert callable(fn)
    assert rb.chisquare(3.0).owner.op == rb.GammaRV()
    assert opweave.tensor.random.chisquare is rb.chisquare


def test_parameter_names_and_positional_size() -> None:
    x = rb.t(df=3.0, loc=1.0, scale=2.0, size=(4,), rng=_rng())
    assert x.type.shape == (4,)
    assert rb.normal(0.0, 1.0, (2, 3), rng=_rng()).type.shape == (2, 3)
    assert rb.gamma(shape=2.0, scale=3.0, size=2).type.shape == (2,)
    assert rb.hypergeometric(ngood=5, nbad=3, nsample=2).dtype == "int64"
    assert rb.gengamma().type.shape == ()  # every parameter has a default
    with pytest.raises(TypeError):
        rb.halfnormal(0.0, 1.0, (2,), 5)  # too many positional arguments


def test_rayleigh_draws_scale_times_root_of_chisquare() -> None:
    value = _eval(rb.rayleigh(np.array([1.0, 3.0]), rng=_rng()))
    gamma = np.random.default_rng(3).gamma(1.0, 2.0, size=(2,))
    np.testing.assert_allclose(value, np.sqrt(gamma) * [1.0, 3.0])


def test_dtype_changes_keep_the_kind() -> None:
    assert rb.poisson(3.0, dtype="int32").dtype == "int32"
    assert rb.normal(dtype="float32").dtype == "float32"
    with pytest.raises(ValueError, match="Cannot change the dtype of a normal RV"):
        rb.normal(dtype="int64")
    with pytest.raises(ValueError, match="Cannot change the dtype of a poisson RV"):
        rb.poisson(dtype="float64")


def test_multivariate_normal_method() -> None:
    x = rb.multivariate_normal(np.zeros(2), np.eye(2), method="svd")
    assert x.owner.op.method == "svd" and rb.multivariate_normal.method == "cholesky"
    assert x.owner.op != rb.multivariate_normal
    with pytest.raises(ValueError, match="unknown method 'qr'"):
        rb.MvNormalRV(method="qr")


# ------------------------------------------------------------ the RandomVariable Op


def test_random_variable_attributes() -> None:
    mean = ot.dmatrix("mean")
    x = rb.multivariate_normal(mean, np.eye(3), size=(4, 2), rng=_rng())
    node, op = x.owner, x.owner.op
    assert (op.ndim_supp, op.ndims_params) == (1, (1, 2))
    assert (op.inputs_sig, op.output_sig) == ([("n",), ("n", "n")], ("n",))
    assert op.batch_ndim(node) == 2
    assert op.rng_param(node) is node.inputs[0] and op.size_param(node) is node.inputs[1]
    assert list(op.dist_params(node)) == node.inputs[2:]
    assert op.update(node) == {node.inputs[0]: node.outputs[0]}
    assert isinstance(op, RNGConsumerOp)
    assert x.type.shape == (4, 2, 3)


def test_parameters_get_explicit_batch_dimensions() -> None:
    mu = ot.dvector("mu")
    x = rb.normal(mu, 1.0, size=(2, 3), rng=_rng())
    _, _, loc, scale = x.owner.inputs
    assert loc.type.broadcastable == (True, False) and scale.type.ndim == 2
    assert isinstance(loc.owner.op, DimShuffle) and loc.owner.inputs[0] is mu
    y = rb.multivariate_normal(np.zeros((5, 2)), np.eye(2), rng=_rng())
    assert [p.type.ndim for p in y.owner.inputs[2:]] == [2, 3]
    f = opweave.function([mu], x)
    assert f(np.zeros(3)).shape == (2, 3)


def test_infer_shape_of_size_and_parameters() -> None:
    mu, sd = ot.dmatrix("mu"), ot.dvector("sd")
    x = rb.normal(mu, sd, rng=_rng())
    f = opweave.function([mu, sd], x.shape)
    np.testing.assert_array_equal(f(np.zeros((4, 3)), np.ones(3)), [4, 3])
    shape = rb.normal._infer_shape(ot.as_tensor_variable([5, 2]), [mu, sd])
    assert len(shape) == 2
    with pytest.raises(ValueError, match="shorter than the 2 batch dimensions"):
        rb.normal._infer_shape(ot.as_tensor_variable([5]), [mu, sd])


def test_constructor_with_deprecated_ranks() -> None:
    with pytest.warns(FutureWarning, match="ndim_supp and ndims_params are deprecated"):
        op = RandomVariable("normal", 0, [0, 0], "floatX")
    assert (op.ndim_supp, op.ndims_params, op.dtype) == (0, (0, 0), "floatX")
    assert _eval(op(1.0, 2.0, size=(3,), rng=_rng())).shape == (3,)
    with pytest.raises(ValueError, match="signature must be provided"):
        RandomVariable("normal")
    with pytest.raises(TypeError, match="ndims_params must be a sequence"):
        RandomVariable("normal", 0, 3)


def test_class_attributes_define_the_op_as_a_dynamic_subclass_does() -> None:
    # A class built with type() from class attributes, with a random function and no
    # signature, only ranks.
    cls = type(
        "MyDist",
        (RandomVariable,),
        {
            "name": "MyDist",
            "ndim_supp": 0,
            "ndims_params": [0],
            "signature": None,
            "dtype": "floatX",
            "inplace": False,
            "rng_fn": classmethod(lambda cls, rng, mu, size: rng.normal(mu, 1.0, size=size)),
        },
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        op = cls()
    assert op.signature == "()->()"  # one scalar parameter
    value = _eval(op(np.array([0.0, 10.0]), rng=_rng()))
    np.testing.assert_array_equal(value, np.random.default_rng(3).normal([0.0, 10.0], 1.0))


def test_numeric_core_dimension_in_signature() -> None:
    class PairRV(RandomVariable):
        name = "pair"
        signature = "()->(2)"
        dtype = "floatX"

        def rng_fn(self, rng, mu, size):
            batch = np.shape(mu) if size is None else size
            return mu[..., None] + rng.normal(size=(*batch, 2))

    x = PairRV()(np.zeros(3), rng=_rng())
    assert x.type.shape == (3, 2)
    assert PairRV()._supp_shape_from_params([ot.dscalar()]) == [2]
    assert _eval(x).shape == (3, 2)


def test_unknown_core_dimension_needs_supp_shape_from_params() -> None:
    class VecRV(RandomVariable):
        name = "vec"
        signature = "()->(k)"

    with pytest.raises(NotImplementedError, match="must define _supp_shape_from_params"):
        VecRV()._infer_shape(utils.normalize_size_param(None), [ot.dscalar()])


def test_rng_consumer_op_contract() -> None:
    class Consumer(RNGConsumerOp):
        pass

    with pytest.raises(NotImplementedError, match="Consumer must define update"):
        Consumer().update(None)
    assert issubclass(RandomVariable, RNGConsumerOp)


def test_rng_fn_default_is_the_generator_method_named_like_the_op() -> None:
    value = rb.laplace.rng_fn(np.random.default_rng(0), 1.0, 2.0, (3,))
    np.testing.assert_array_equal(value, np.random.default_rng(0).laplace(1.0, 2.0, (3,)))


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="expected 3 parameters, got 2"):
        rb.t.make_node(_rng(), None, 1.0, 2.0)
    with pytest.raises(TypeError, match="rng must be a variable of RandomGeneratorType"):
        rb.cauchy(rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="parameter 1 must have at least 1 dimensions"):
        rb.multinomial(5, 0.5)
    with pytest.raises(ValueError, match="do not broadcast"):
        rb.lognormal(np.zeros(2), np.ones(3))

    class NoDtypeRV(RandomVariable):
        name = "normal"
        signature = "(),()->()"
        dtype = None

    with pytest.raises(TypeError, match="needs a dtype argument"):
        NoDtypeRV()(0.0, 1.0)
    assert NoDtypeRV()(0.0, 1.0, dtype="float32").dtype == "float32"


# ------------------------------------------------------------------------ utils


def test_normalize_size_param() -> None:
    none = utils.normalize_size_param(None)
    assert none is NoneConst and isinstance(none.type, NoneTypeT)
    size = utils.normalize_size_param(3)
    assert size.type.ndim == 1 and list(size.data) == [3]
    assert utils.normalize_size_param(none) is none
    assert rb.normal(0.0, 1.0).owner.inputs[1] is NoneConst
    with pytest.raises(TypeError, match="size must hold integers"):
        utils.normalize_size_param((1.5,))


def test_broadcast_params_numpy_and_symbolic() -> None:
    mean, cov = np.array([1.0, 2.0, 3.0]), np.stack([np.eye(3), 2 * np.eye(3)])
    m, c = utils.broadcast_params([mean, cov], [1, 2])
    assert m.shape == (2, 3) and c.shape == (2, 3, 3)
    np.testing.assert_array_equal(m, [mean, mean])
    mv, cv = ot.dvector("m"), ot.tensor3("c")
    sm, sc = utils.broadcast_params([mv, cv], [1, 2])
    f = opweave.function([mv, cv], [sm, sc])
    out_m, out_c = f(mean, cov)
    np.testing.assert_array_equal(out_m, m)
    np.testing.assert_array_equal(out_c, c)
    n, p = utils.broadcast_params([np.array([5, 10]), np.array([[0.5, 0.5]])], [0, 1])
    assert n.shape == (2,) and p.shape == (2, 2)


def test_params_broadcast_shapes() -> None:
    shapes = utils.params_broadcast_shapes([(3,), (2, 3, 3)], [1, 2], use_pytensor=False)
    assert shapes == [(2, 3), (2, 3, 3)]
    assert utils.params_broadcast_shapes([(4, 1), (5,)], [0, 0], use_pytensor=False) == [
        (4, 5),
        (4, 5),
    ]


def test_explicit_expand_dims_and_compute_batch_shape() -> None:
    a, b = ot.dvector("a"), ot.tensor(dtype="float64", shape=(1, None), name="b")
    ea, eb = utils.explicit_expand_dims([a, b], [0, 1])
    assert ea.type.ndim == 1 and eb is b
    ea, eb = utils.explicit_expand_dims([a, b], [0, 0], size_length=3)
    assert ea.type.broadcastable == (True, True, False) and eb.type.ndim == 3
    shape = utils.compute_batch_shape([a, b], [0, 1])
    f = opweave.function([a, b], shape)
    np.testing.assert_array_equal(f(np.zeros(4), np.zeros((1, 7))), [4])


def test_supp_shape_from_ref_param_shape() -> None:
    cov = ot.tensor3("cov")
    shape = utils.supp_shape_from_ref_param_shape(
        ndim_supp=1, dist_params=[ot.dvector(), cov], ref_param_idx=1
    )
    assert len(shape) == 1
    with pytest.raises(ValueError, match="ndim_supp must be greater than 0"):
        utils.supp_shape_from_ref_param_shape(ndim_supp=0, dist_params=[cov], ref_param_idx=0)


# --------------------------------------------------------------------- rewrites


def _rewrite(out, rewriter):
    fgraph = FunctionGraph(outputs=[out], clone=False)
    in2out(rewriter).rewrite(fgraph)
    return fgraph.outputs[0]


MU = np.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_subtensor_lift_indexes_the_parameters(linker) -> None:
    indexed = rb.normal(MU, np.array([1.0, 2.0, 3.0]), rng=_rng())[1, 1:]
    assert isinstance(indexed.owner.op, Subtensor)
    lifted = _rewrite(indexed, local_subtensor_rv_lift)
    assert lifted.owner.op == rb.normal and lifted.type.shape == (2,)
    expected = np.random.default_rng(3).normal(MU[1, 1:], [2.0, 3.0])
    np.testing.assert_array_equal(_eval(lifted, linker), expected)


def test_subtensor_lift_with_size_keeps_a_size() -> None:
    indexed = rb.normal(0.0, 1.0, size=(2, 3), rng=_rng())[:, 1]
    lifted = _rewrite(indexed, local_subtensor_rv_lift)
    size = lifted.owner.inputs[1]
    assert lifted.owner.op == rb.normal
    np.testing.assert_array_equal(opweave.function([], size)(), [2])
    np.testing.assert_array_equal(_eval(lifted), np.random.default_rng(3).normal(size=2))


def test_subtensor_lift_of_a_boolean_mask() -> None:
    mask = np.array([[True, False, True], [False, True, True]])
    indexed = rb.normal(MU, 1.0, rng=_rng())[mask]
    assert isinstance(indexed.owner.op, AdvancedSubtensor)
    lifted = _rewrite(indexed, local_subtensor_rv_lift)
    assert lifted.owner.op == rb.normal
    np.testing.assert_array_equal(_eval(lifted), np.random.default_rng(3).normal(MU[mask], 1.0))


def test_subtensor_lift_of_multivariate_draws_keeps_the_core_dimension() -> None:
    x = rb.multivariate_normal(np.zeros((4, 2)), np.eye(2), rng=_rng())
    lifted = _rewrite(x[1:3, :], local_subtensor_rv_lift)
    assert lifted.owner.op == rb.multivariate_normal and lifted.type.shape == (2, 2)
    kept = _rewrite(x[:, 0], local_subtensor_rv_lift)  # indexes a core dimension
    assert isinstance(kept.owner.op, Subtensor)


def test_subtensor_lift_leaves_shared_draws_and_integer_arrays() -> None:
    x = rb.normal(MU, 1.0, rng=_rng())
    both = ot.stack([x[0, 0], x[1, 1]])
    fgraph = FunctionGraph(outputs=[both], clone=False)
    in2out(local_subtensor_rv_lift).rewrite(fgraph)
    assert all(isinstance(n.op, Subtensor) for n in fgraph.apply_nodes if n.inputs[0] is x)
    kept = _rewrite(x[np.array([1, 0])], local_subtensor_rv_lift)
    assert not isinstance(kept.owner.op, RandomVariable)


@pytest.mark.parametrize("linker", LINKERS)
def test_dimshuffle_lift_transposes_the_parameters(linker) -> None:
    x = rb.normal(MU, 1.0, rng=_rng(), name="x")
    lifted = _rewrite(x.T, local_dimshuffle_rv_lift)
    assert lifted.owner.op == rb.normal and lifted.name == "x_lifted"
    assert lifted.type.shape == (3, 2)
    expected = np.random.default_rng(3).normal(MU.T, 1.0)
    np.testing.assert_array_equal(_eval(lifted, linker), expected)


def test_dimshuffle_lift_with_size_and_new_axes() -> None:
    x = rb.normal(0.0, 1.0, size=(2, 3), rng=_rng())
    lifted = _rewrite(x.dimshuffle(1, "x", 0), local_dimshuffle_rv_lift)
    assert lifted.owner.op == rb.normal and lifted.type.shape == (3, 1, 2)
    np.testing.assert_array_equal(opweave.function([], lifted.owner.inputs[1])(), [3, 1, 2])
    mv = rb.multivariate_normal(np.zeros((4, 2)), np.eye(2), rng=_rng())
    kept = _rewrite(mv.T, local_dimshuffle_rv_lift)  # moves the core dimension
    assert isinstance(kept.owner.op, DimShuffle)


def test_size_lift_broadcasts_the_parameters() -> None:
    x = rb.normal(MU, 1.0, size=(4, 2, 3), rng=_rng())
    lifted = _rewrite(x, local_rv_size_lift)
    assert lifted.owner.op == rb.normal
    assert lifted.owner.inputs[1] is NoneConst
    expected = np.random.default_rng(3).normal(MU, 1.0, size=(4, 2, 3))
    np.testing.assert_array_equal(_eval(lifted), expected)
    mv = rb.multivariate_normal(np.zeros(2), np.eye(2), size=(3,), rng=_rng())
    lifted = _rewrite(mv, local_rv_size_lift)
    assert [p.type.ndim for p in lifted.owner.inputs[2:]] == [2, 3]
    assert _eval(lifted).shape == (3, 2)


def test_random_make_inplace() -> None:
    x = rb.normal(0.0, 1.0, size=(2,), rng=_rng())
    node = x.owner
    outs = random_make_inplace.transform(None, node)
    assert outs[1].owner.op.inplace and outs[1].owner.op.destroy_map == {0: [0]}
    assert random_make_inplace.transform(None, outs[1].owner) is False


# ------------------------------------------------------------ streams, vectorization


def test_stream_offers_every_distribution_and_a_namespace() -> None:
    srng = utils.RandomStream(7)
    x = srng.halfnormal(size=(3,))
    child = np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0])
    expected = np.abs(child.normal(size=(3,)))  # halfnorm draws |N(0, 1)|
    np.testing.assert_allclose(opweave.function([], x)(), expected)
    assert "t" in dir(srng) and "chisquare" in dir(srng)
    custom = utils.RandomStream(7, namespace=rb)
    assert custom.NormalRV.args == (rb.NormalRV,)  # every name of the namespace's __all__
    with pytest.raises(TypeError, match="namespace must be a module with __all__"):
        utils.RandomStream(0, namespace=object())


def test_vectorize_graph_extends_a_given_size() -> None:
    mu, batched = ot.dscalar("mu"), ot.dvector("mu_batch")
    x = rb.normal(mu, 1.0, size=(3,), rng=_rng())
    xb = vectorize_graph(x, {mu: batched})
    assert xb.owner.op == rb.normal and xb.type.shape == (None, 3)
    value = opweave.function([batched], xb)(np.array([0.0, 100.0]))
    expected = np.random.default_rng(3).normal([[0.0], [100.0]], 1.0, size=(2, 3))
    np.testing.assert_array_equal(value, expected)
    y = vectorize_graph(rb.normal(mu, 1.0, rng=_rng()), {mu: batched})
    assert y.type.ndim == 1 and y.owner.inputs[1] is NoneConst


class SticksRV(RandomVariable):
    """A core shape given by a parameter's value, as user-defined variables have."""

    name = "sticks"
    signature = "(),()->(k)"
    dtype = "floatX"

    def _supp_shape_from_params(self, dist_params, param_shapes):
        return (dist_params[1].squeeze() + 1,)

    @classmethod
    def rng_fn(cls, rng, alpha, k, size):
        batch = np.shape(alpha) if size is None else size
        return rng.beta(1.0, np.asarray(alpha)[..., None], size=(*batch, int(k.squeeze()) + 1))


def test_core_shape_from_parameter_values() -> None:
    x = SticksRV()(np.ones(2), 3, rng=_rng())
    assert x.type.shape == (2, 4)  # known statically from the constant 3
    k = ot.lscalar("k")
    y = SticksRV()(np.ones(2), k, rng=_rng())
    assert y.type.shape == (2, None)
    f = opweave.function([k], [y, y.shape])
    value, shape = f(4)
    assert value.shape == (2, 5)
    np.testing.assert_array_equal(shape, [2, 5])


def test_lifts_replace_the_advanced_generator_too() -> None:
    next_rng, x = rb.normal(np.arange(4.0), 1.0, rng=_rng(), return_next_rng=True)
    fgraph = FunctionGraph(outputs=[x[2], next_rng], clone=False)
    in2out(local_subtensor_rv_lift).rewrite(fgraph)
    value, advanced = fgraph.outputs
    assert value.owner.op == rb.normal and advanced.owner is value.owner
    assert x.owner not in fgraph.apply_nodes


def test_custom_rng_deepcopy_is_an_independent_copy() -> None:
    rng = np.random.default_rng(9)
    rng.normal(size=2)
    copied = utils.custom_rng_deepcopy(rng)
    assert copied is not rng and copied.bit_generator is not rng.bit_generator
    np.testing.assert_array_equal(copied.normal(size=3), rng.normal(size=3))
    copied.spawn(2)
    assert rng.bit_generator.seed_seq.n_children_spawned == 0
