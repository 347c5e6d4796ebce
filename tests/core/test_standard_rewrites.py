"""The standard tensor rewrites (issue 4), registered through the core's own plugin.

Each rewrite is checked on the compiled graph (``f.maker.fgraph.toposort()``) before and
after, and by value against the same graph compiled without rewriting
(``Mode(linker="vm", optimizer=None)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave.tensor as ot
from opweave.compile import In, Mode, Shape, Shape_i, function
from opweave.compile.ops import DeepCopyOp
from opweave.graph.basic import Apply, Constant
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.rewriting import build_rewrite_database, in2out, node_rewriter
from opweave.plugins import hookimpl
from opweave.scalar import Composite
from opweave.tensor import math as tm
from opweave.tensor.basic import Alloc, MakeVector
from opweave.tensor.blas import Dot
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.reductions import Sum
from opweave.tensor.rewriting.constant_folding import constant_folding
from opweave.tensor.rewriting.fusion import FusionOptimizer
from opweave.tensor.rewriting.plugin import register_standard_rewrites
from opweave.tensor.special import LogSoftmax, Softmax, softmax

NO_REWRITE = Mode(linker="vm", optimizer=None)
FAST_RUN = Mode(linker="vm", optimizer="fast_run")
FAST_COMPILE = Mode(linker="vm", optimizer="fast_compile")
#: FAST_RUN without fusion and in-place Ops: the algebraic rewrites' results stay visible.
ALGEBRA = FAST_RUN.excluding("fusion", "inplace")

RNG = np.random.default_rng(1234)


def ops_of(f: Any) -> list[Any]:
    return [node.op for node in f.maker.fgraph.toposort()]


def names_of(f: Any) -> list[str]:
    return [str(op) for op in ops_of(f)]


def scalar_ops(f: Any) -> list[type]:
    return [type(op.scalar_op) for op in ops_of(f) if isinstance(op, Elemwise)]


def mat(*shape: int, positive: bool = False) -> np.ndarray:
    value = RNG.standard_normal(shape)
    return np.abs(value) + 0.5 if positive else value


def check_values(inputs: list[Any], outputs: Any, args: list[Any], mode: Mode = FAST_RUN) -> Any:
    """Compile with ``mode`` and without rewrites; the results must agree."""
    f = function(inputs, outputs, mode=mode)
    ref = function(inputs, outputs, mode=NO_REWRITE)
    got, want = f(*[np.copy(a) for a in args]), ref(*[np.copy(a) for a in args])
    if not isinstance(outputs, list):
        got, want = [got], [want]
    for g, w in zip(got, want, strict=True):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    return f


# ====================================================================== registration


def test_registered_through_the_builtin_plugin_with_tags_and_positions() -> None:
    db = build_rewrite_database()
    assert db.position("constant_folding") == 0.5
    assert {"fast_run", "fast_compile", "constant_folding"} <= db.tags("constant_folding")
    assert db.position("elemwise_fusion") == 3
    assert {"fast_run", "fusion"} <= db.tags("elemwise_fusion")
    expected = {
        "canonicalize": {
            "canonicalize_constant_folding": "constant_folding",
            "local_mul_by_one": "canonicalize",
            "local_add_zero": "canonicalize",
            "local_sub_zero": "canonicalize",
            "local_double_neg": "canonicalize",
            "local_sub_self": "canonicalize",
            "local_reduce_of_dimshuffle": "canonicalize",
            "local_shape_i_from_infer_shape": "shape",
            "local_shape_from_infer_shape": "shape",
        },
        "stabilize": {
            "local_log1p": "stabilize",
            "local_expm1": "stabilize",
            "local_log_softmax": "stabilize",
        },
        "specialize": {
            "specialize_constant_folding": "constant_folding",
            "local_dot_transposes": "specialize",
            "local_pow_specialize": "specialize",
        },
        "inplace": {"inplace_elemwise": "inplace"},
    }
    for phase, entries in expected.items():
        for name, family in entries.items():
            assert name in db[phase], (phase, name)
            assert {"fast_run", family} <= db[phase].tags(name), (phase, name)


def test_registration_is_fresh_per_database_and_coexists_with_a_third_party() -> None:
    from opweave.graph.rewriting.db import RewriteDatabase
    from opweave.plugins import create_plugin_manager

    class ThirdParty:
        @hookimpl
        def opweave_rewrites(self, db: RewriteDatabase) -> None:
            db["canonicalize"].register("local_neg_neg", local_neg_neg_anything, "fast_run")

    @node_rewriter([Elemwise])
    def local_neg_neg_anything(fgraph: Any, node: Any) -> Any:
        return False

    pm = create_plugin_manager(autoload=False)
    pm.register(ThirdParty(), name="third")
    first, second = build_rewrite_database(pm), build_rewrite_database(pm)
    assert "local_neg_neg" in first["canonicalize"]
    assert "local_double_neg" in first["canonicalize"]
    assert first["elemwise_fusion"] is not second["elemwise_fusion"]
    assert first["inplace"]["inplace_elemwise"] is not second["inplace"]["inplace_elemwise"]


def test_register_standard_rewrites_needs_the_standard_phases() -> None:
    from opweave.graph.rewriting import RewriteDatabase

    with pytest.raises(KeyError, match="canonicalize"):
        register_standard_rewrites(RewriteDatabase())


# ====================================================================== constant folding


def test_constant_folding_in_fast_compile() -> None:
    c = ot.constant(np.arange(3.0))
    out = tm.exp(c) * 2 + 1
    before = function([], out, mode=NO_REWRITE)
    assert len(ops_of(before)) >= 3
    f = function([], out, mode=FAST_COMPILE)
    # The output is a constant now; the function hands out a copy of it.
    assert [type(op) for op in ops_of(f)] == [DeepCopyOp]
    assert isinstance(f.maker.fgraph.outputs[0].owner.inputs[0], Constant)
    np.testing.assert_allclose(f(), before())
    value = f()
    value[:] = -1
    np.testing.assert_allclose(f(), before())  # the constant itself is never handed out


def test_constant_folding_leaves_the_rest_of_the_graph() -> None:
    x = ot.dvector("x")
    c = ot.constant(np.arange(3.0))
    out = x * tm.exp(c)
    f = check_values([x], out, [mat(3)], mode=FAST_COMPILE)
    assert scalar_ops(f) == [type(tm.mul.scalar_op)]
    assert not any(isinstance(op, Elemwise) and "exp" in str(op).lower() for op in ops_of(f))


def test_constant_folding_is_off_when_excluded_and_in_no_optimizer_mode() -> None:
    c = ot.constant(np.arange(3.0))
    f = function([], tm.exp(c), mode=FAST_COMPILE.excluding("constant_folding"))
    assert [str(op) for op in ops_of(f)] == ["Exp"]


class CountingTwoOutputs(Op):
    """Two outputs (``x + 1``, ``x * 2``); counts its calls; foldability is a parameter."""

    __props__ = ("fold",)

    def __init__(self, fold: bool = True) -> None:
        self.fold = fold

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        type(self).calls_total = getattr(type(self), "calls_total", 0) + 1
        (x,) = inputs
        outputs[0][0] = x + 1
        outputs[1][0] = x * 2

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        return self.fold


def test_constant_folding_replaces_all_outputs_of_a_multi_output_node() -> None:
    c = ot.constant(np.arange(3.0))
    a, b = CountingTwoOutputs()(c)
    f = function([], [a, b], mode=FAST_COMPILE)
    assert all(isinstance(op, DeepCopyOp) for op in ops_of(f))
    CountingTwoOutputs.calls_total = 0
    va, vb = f()
    assert CountingTwoOutputs.calls_total == 0  # computed at compile time only
    np.testing.assert_allclose(va, np.arange(3.0) + 1)
    np.testing.assert_allclose(vb, np.arange(3.0) * 2)


def test_do_constant_folding_false_is_respected() -> None:
    c = ot.constant(np.arange(3.0))
    a, b = CountingTwoOutputs(fold=False)(c)
    f = function([], [a, b], mode=FAST_RUN)
    assert any(isinstance(op, CountingTwoOutputs) for op in ops_of(f))
    CountingTwoOutputs.calls_total = 0
    va, _ = f()
    assert CountingTwoOutputs.calls_total == 1
    np.testing.assert_allclose(va, np.arange(3.0) + 1)


class Unimplemented(Op):
    """No backend implements it."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])


class FailsAtRunTime(Op):
    """Raises when computed."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        raise ValueError("FailsAtRunTime failed")


def test_constant_folding_skips_ops_no_backend_implements() -> None:
    c = ot.constant(np.arange(3.0))
    out = tm.exp(Unimplemented()(c))
    fg = FunctionGraph([], [out])
    in2out(constant_folding).rewrite(fg)
    assert [type(n.op) for n in fg.toposort()] == [Unimplemented, Elemwise]


def test_constant_folding_leaves_failures_to_call_time() -> None:
    c = ot.constant(np.arange(3.0))
    f = function([], FailsAtRunTime()(c), mode=FAST_RUN)
    assert [type(op) for op in ops_of(f)] == [FailsAtRunTime]
    with pytest.raises(ValueError, match="FailsAtRunTime failed"):
        f()


# ====================================================================== canonicalize


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda x: x * 1, id="x*1"),
        pytest.param(lambda x: 1 * x * 1.0, id="1*x*1.0"),
        pytest.param(lambda x: x + 0, id="x+0"),
        pytest.param(lambda x: 0.0 + x, id="0+x"),
        pytest.param(lambda x: x - 0, id="x-0"),
        pytest.param(lambda x: tm.neg(tm.neg(x)), id="neg-neg"),
    ],
)
def test_neutral_elements_and_double_negation_disappear(build: Any) -> None:
    x = ot.dmatrix("x")
    out = build(x)
    assert names_of(function([x], out, mode=NO_REWRITE)) != ["DeepCopyOp"]
    f = check_values([x], out, [mat(2, 3)], mode=ALGEBRA)
    assert [type(op) for op in ops_of(f)] == [DeepCopyOp]  # the output is x: copied


def test_neutral_elements_inside_a_larger_product() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    out = tm.mul(x, 1.0, y)
    f = check_values([x, y], out, [mat(2, 3), mat(2, 3)], mode=ALGEBRA)
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op.scalar_op, type(tm.mul.scalar_op))
    assert len(node.inputs) == 2


def test_neutral_elements_kept_when_they_change_the_type() -> None:
    # int8 + 0.0 is float64; x * ones((3, 4)) broadcasts x: neither is just x.
    i = ot.bvector("i")
    f = check_values([i], i + 0.0, [np.arange(4, dtype="int8")], mode=ALGEBRA)
    assert any(isinstance(op, Elemwise) for op in ops_of(f))
    x = ot.dvector("x")
    f = check_values([x], x * ot.constant(np.ones((3, 4))), [mat(4)], mode=ALGEBRA)
    assert any(isinstance(op, Elemwise) for op in ops_of(f))
    assert f(np.ones(4)).shape == (3, 4)


def test_neutral_elements_with_a_more_specific_shape_specify_it() -> None:
    from opweave.tensor.shape import SpecifyShape

    x = ot.dmatrix("x")
    f = check_values([x], ot.zeros((2, 3)) + x, [mat(2, 3)], mode=ALGEBRA)
    assert [type(op) for op in ops_of(f)] == [SpecifyShape, DeepCopyOp]
    assert f.maker.fgraph.outputs[0].type.shape == (2, 3)
    with pytest.raises(Exception, match="shape"):
        f(mat(3, 3))


def test_sub_self_becomes_zeros() -> None:
    x = ot.dmatrix("x")
    out = x - x
    assert Elemwise in [type(op) for op in ops_of(function([x], out, mode=NO_REWRITE))]
    f = check_values([x], out, [mat(2, 3)], mode=ALGEBRA)
    types = [type(op) for op in ops_of(f)]
    assert Alloc in types and Elemwise not in types
    assert f(mat(4, 1)).shape == (4, 1)


def test_sum_of_transpose_sums_the_mapped_axes() -> None:
    x = ot.dmatrix("x")
    out = tm.sum(x.T, axis=0)
    before = function([x], out, mode=NO_REWRITE)
    assert [type(op) for op in ops_of(before)] == [DimShuffle, Sum]
    f = check_values([x], out, [mat(3, 4)], mode=ALGEBRA)
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op, Sum) and node.op.axis == (1,)
    assert node.inputs[0] is f.maker.fgraph.inputs[0]


def test_sum_of_dimshuffle_with_new_axes_and_a_final_shuffle() -> None:
    x = ot.tensor3("x")
    shuffled = x.dimshuffle(2, "x", 0, 1)
    out = tm.sum(shuffled, axis=(1, 2))  # a new axis and input axis 0: left (2, 1)
    f = check_values([x], out, [mat(2, 3, 4)], mode=ALGEBRA)
    sums = [op for op in ops_of(f) if isinstance(op, Sum)]
    assert [s.axis for s in sums] == [(0,)]
    assert [type(op) for op in ops_of(f)] == [Sum, DimShuffle]
    total = check_values([x], tm.sum(shuffled), [mat(2, 3, 4)], mode=ALGEBRA)
    assert [type(op) for op in ops_of(total)] == [Sum]


# ====================================================================== stabilize


def test_log_one_plus_x_becomes_log1p() -> None:
    x = ot.dvector("x")
    out = tm.log(1 + x)
    assert len(ops_of(function([x], out, mode=NO_REWRITE))) >= 2
    tiny = np.array([1e-20, 1e-10, 0.5])
    f = check_values([x], out, [tiny], mode=ALGEBRA)
    assert names_of(f) == ["Log1p"]
    np.testing.assert_allclose(f(tiny), np.log1p(tiny), rtol=1e-15)  # unrewritten: 0.0


def test_exp_minus_one_becomes_expm1() -> None:
    x = ot.dvector("x")
    tiny = np.array([1e-20, 1e-10, 0.5])
    for out in (tm.exp(x) - 1, tm.exp(x) + (-1.0)):
        f = check_values([x], out, [tiny], mode=ALGEBRA)
        assert names_of(f) == ["Expm1"]
        np.testing.assert_allclose(f(tiny), np.expm1(tiny), rtol=1e-15)


def test_log_of_softmax_becomes_log_softmax() -> None:
    x = ot.dmatrix("x")
    out = tm.log(softmax(x))
    before = function([x], out, mode=NO_REWRITE)
    assert [type(op) for op in ops_of(before)] == [Softmax, Elemwise]
    f = check_values([x], out, [mat(3, 4)], mode=ALGEBRA)
    assert [type(op) for op in ops_of(f)] == [LogSoftmax]
    big = np.array([[0.0, 1000.0]])
    assert np.isfinite(f(big)).all()  # log(softmax) would give -inf


# ====================================================================== specialize


def test_dot_of_transposes() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    out = tm.dot(x.T, y.T)
    before = function([x, y], out, mode=NO_REWRITE)
    assert [type(op) for op in ops_of(before)].count(DimShuffle) == 2
    f = check_values([x, y], out, [mat(3, 2), mat(4, 3)], mode=ALGEBRA)
    assert [type(op) for op in ops_of(f)] == [Dot, DimShuffle]
    dot_node = f.maker.fgraph.toposort()[0]
    assert list(dot_node.inputs) == list(reversed(f.maker.fgraph.inputs))


def test_pow_by_two_becomes_sqr_and_by_one_disappears() -> None:
    x = ot.dvector("x")
    f = check_values([x], [x**2, x**1 + 1.0], [np.array([-1.5, 0.0, 3.0, np.inf])], ALGEBRA)
    names = [str(op) for op in ops_of(f)]
    assert not any("Pow" in n for n in names) and any("Sqr" in n for n in names)
    i = ot.bvector("i")
    g = function([i], i**2.0, mode=ALGEBRA)  # int8 ** float64 is float64: left alone
    assert any("Pow" in str(op) for op in ops_of(g))


# ====================================================================== shapes


class ShapeOnly(Op):
    """``perform`` must never run; ``infer_shape`` answers the shape (rows doubled)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [ot.TensorType(x.dtype, shape=(None,) * x.ndim)()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        raise AssertionError("ShapeOnly.perform was called")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        (s,) = shapes
        return [(s[0] * 2, *s[1:])]


def test_shape_is_inferred_without_computing_the_op() -> None:
    x = ot.dmatrix("x")
    f = function([x], ShapeOnly()(tm.exp(x)).shape, mode=FAST_RUN)
    assert not any(isinstance(op, ShapeOnly | Shape) for op in ops_of(f))
    np.testing.assert_array_equal(f(np.ones((3, 5))), [6, 5])
    g = function([x], Shape_i(1)(ShapeOnly()(x)), mode=FAST_RUN)
    assert not any(isinstance(op, ShapeOnly) for op in ops_of(g))
    assert int(g(np.ones((3, 5)))) == 5
    unrewritten = function([x], ShapeOnly()(x).shape, mode=NO_REWRITE)
    with pytest.raises(AssertionError, match="perform was called"):
        unrewritten(np.ones((3, 5)))


def test_shape_of_a_chain_reaches_the_inputs() -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    out = (tm.exp(x) + y).T.shape
    f = check_values([x, y], out, [mat(3, 4), mat(4)], mode=ALGEBRA)
    types = [type(op) for op in ops_of(f)]
    assert Elemwise not in types and DimShuffle not in types and Shape not in types
    assert MakeVector in types
    assert {
        node.inputs[0] for node in f.maker.fgraph.toposort() if isinstance(node.op, Shape_i)
    } <= set(f.maker.fgraph.inputs)


def test_indexing_a_shape_gives_the_inferred_length() -> None:
    x = ot.dmatrix("x")
    for k in (1, -1):
        f = function([x], ShapeOnly()(x).shape[k] + 0, mode=ALGEBRA)
        assert [type(op) for op in ops_of(f)] == [Shape_i]
        assert int(f(np.ones((3, 5)))) == 5
    f = function([x], ShapeOnly()(x).shape[0], mode=ALGEBRA)
    assert not any(isinstance(op, ShapeOnly) for op in ops_of(f))
    assert int(f(np.ones((3, 5)))) == 6
    only_subtensor = ALGEBRA.excluding("local_shape_from_infer_shape")
    f = function([x], ShapeOnly()(x).shape[-2], mode=only_subtensor)
    assert not any(isinstance(op, ShapeOnly) for op in ops_of(f))
    assert int(f(np.ones((3, 5)))) == 6
    f = check_values([x], x.shape[1], [mat(3, 5)], mode=only_subtensor)
    assert [type(op) for op in ops_of(f)] == [Shape_i]
    f = check_values([x], tm.exp(x).shape[0] * x.shape[-1], [mat(3, 5)], mode=ALGEBRA)
    assert all(isinstance(op, Shape_i | Elemwise) for op in ops_of(f))


def test_static_shapes_become_constants() -> None:
    x = ot.TensorType("float64", shape=(2, 3))("x")
    f = function([x], tm.exp(x).shape, mode=FAST_RUN)
    assert [type(op) for op in ops_of(f)] == [DeepCopyOp]
    np.testing.assert_array_equal(f(np.ones((2, 3))), [2, 3])


class NoInferShape(Op):
    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = inputs[0].copy()


def test_shape_of_an_op_without_infer_shape_is_computed() -> None:
    x = ot.dmatrix("x")
    f = check_values([x], NoInferShape()(x).shape, [mat(2, 3)])
    assert Shape in [type(op) for op in ops_of(f)]


# ====================================================================== fusion


def test_exp_x_times_y_plus_z_is_one_node() -> None:
    x, y, z = ot.dmatrix("x"), ot.dmatrix("y"), ot.dmatrix("z")
    out = tm.exp(x) * y + z
    assert len(ops_of(function([x, y, z], out, mode=NO_REWRITE))) == 3
    f = check_values([x, y, z], out, [mat(3, 4), mat(3, 4), mat(3, 4)])
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Composite)
    assert node.inputs == f.maker.fgraph.inputs


def test_a_chain_of_200_elementwise_ops_becomes_few_nodes() -> None:
    x = ot.dvector("x")
    out = x
    for k in range(200):
        out = tm.sin(out) if k % 2 else out + 0.5
    assert len(ops_of(function([x], out, mode=NO_REWRITE))) >= 200
    f = check_values([x], out, [mat(5)])
    assert len(ops_of(f)) <= 3


def test_fused_nodes_have_a_bounded_number_of_inputs() -> None:
    xs = [ot.dvector(f"x{k}") for k in range(70)]
    out = xs[0]
    for v in xs[1:]:
        out = tm.exp(out) + v
    f = check_values(xs, out, [mat(4) for _ in xs])
    nodes = f.maker.fgraph.toposort()
    assert 3 <= len(nodes) <= 6
    assert all(len(n.inputs) <= 32 for n in nodes)
    assert all(isinstance(n.op.scalar_op, Composite) for n in nodes)


def test_fusion_never_computes_a_shared_intermediate_twice() -> None:
    x, y, z = ot.dmatrix("x"), ot.dmatrix("y"), ot.dmatrix("z")
    e = tm.exp(x)
    outs = [e * y + 1, e + z, e]
    f = check_values([x, y, z], outs, [mat(2, 3), mat(2, 3), mat(2, 3)])
    exps = 0
    for op in ops_of(f):
        if isinstance(op, Elemwise):
            inner = op.scalar_op.inner_nodes() if isinstance(op.scalar_op, Composite) else []
            exps += "exp" in str(op.scalar_op) and not inner
            exps += sum("exp" in str(n.op) for n in inner)
    assert exps == 1


def test_fusion_does_not_recompute_a_broadcast_value() -> None:
    v, m = ot.dvector("v"), ot.dmatrix("m")
    out = tm.exp(v) + m  # exp(v) has pattern (True, False) inside the sum: not fused
    f = check_values([v, m], out, [mat(3), mat(2, 3)], mode=FAST_RUN.excluding("inplace"))
    exp_nodes = [n for n in f.maker.fgraph.toposort() if str(n.op) == "Exp" or "exp(" in str(n.op)]
    assert len(exp_nodes) == 1 and not isinstance(exp_nodes[0].op.scalar_op, Composite)


def test_fusion_inlines_single_element_constants() -> None:
    x = ot.dvector("x")
    f = check_values([x], tm.exp(x * 2.0) + 1.0, [mat(4)])
    (node,) = f.maker.fgraph.toposort()
    assert node.inputs == f.maker.fgraph.inputs


def test_fusion_optimizer_bound_is_checked() -> None:
    with pytest.raises(ValueError, match="max_inputs"):
        FusionOptimizer(max_inputs=0)


# ====================================================================== inplace


def test_elemwise_on_an_intermediate_becomes_inplace() -> None:
    x, y, z = ot.dmatrix("x"), ot.dmatrix("y"), ot.dmatrix("z")
    out = tm.exp(tm.dot(x, y)) + z
    args = [mat(3, 4), mat(4, 3), mat(3, 3)]
    copies = [a.copy() for a in args]
    f = check_values([x, y, z], out, args)
    (elem,) = [op for op in ops_of(f) if isinstance(op, Elemwise)]
    assert dict(elem.inplace_pattern) == {0: 0}
    assert elem.destroy_map == {0: [0]}
    result = f(*args)
    for a, c in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, c)  # the caller's arrays are untouched
        assert not np.shares_memory(result, a)
    kept = result.copy()
    f(*[a * 2 for a in args])
    np.testing.assert_array_equal(result, kept)  # a later call never reuses what was returned
    for linker in ("py", "vm"):
        g = function([x, y, z], out, mode=Mode(linker=linker, optimizer="fast_run"))
        first = g(*args)
        kept = first.copy()
        g(*[a * 3 for a in args])
        np.testing.assert_array_equal(first, kept)
    without = function([x, y, z], out, mode=FAST_RUN.excluding("inplace"))
    assert not any(getattr(op, "destroy_map", None) for op in ops_of(without))


def test_inputs_constants_and_outputs_are_never_destroyed() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    t = tm.dot(x, y)
    outs = [t, tm.exp(t), x + 1.0, tm.exp(ot.constant(np.ones((2, 2))) + x)]
    args = [mat(2, 2), mat(2, 2)]
    copies = [a.copy() for a in args]
    f = check_values([x, y], outs, args)
    for node in f.maker.fgraph.toposort():
        for i in (i for ins in getattr(node.op, "destroy_map", {}).values() for i in ins):
            destroyed = node.inputs[i]
            assert destroyed not in f.maker.fgraph.inputs
            assert destroyed not in f.maker.fgraph.outputs
            assert not isinstance(destroyed, Constant)
    for a, c in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, c)


def test_an_intermediate_read_twice_is_destroyed_only_after_its_readers() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    t = tm.dot(x, y)
    outs = [tm.exp(t), t * 2.0, tm.sum(t)]
    f = check_values([x, y], outs, [mat(3, 3), mat(3, 3)])
    destroyers = [n for n in f.maker.fgraph.toposort() if getattr(n.op, "destroy_map", None)]
    assert len(destroyers) == 1  # t can be overwritten once, by its last reader
    order = f.maker.fgraph.toposort()
    readers = [n for n in order if any(i is destroyers[0].inputs[0] for i in n.inputs)]
    assert readers[-1] is destroyers[0]


def test_mutable_inputs_may_be_destroyed() -> None:
    x = ot.dvector("x")
    f = function([In(x, mutable=True)], tm.exp(x), mode=FAST_RUN)
    destroyers = [n for n in f.maker.fgraph.toposort() if n.op.destroy_map]
    assert [n.op.destroy_map for n in destroyers] == [{0: [0]}]
    value = np.zeros(3)
    result = f(value)
    np.testing.assert_allclose(result, np.ones(3))
    assert not np.shares_memory(result, value)  # the output is still the caller's own
    g = function([x], tm.exp(x), mode=FAST_RUN)  # not mutable: never destroyed
    assert not any(n.op.destroy_map for n in g.maker.fgraph.toposort())


# ====================================================================== memory contract


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda x: x, id="x"),
        pytest.param(lambda x: x.T, id="x.T"),
        pytest.param(lambda x: x[0], id="x[0]"),
        pytest.param(lambda x: x.reshape((6,)), id="reshape"),
        pytest.param(lambda x: x * 1, id="x*1"),
        pytest.param(lambda x: (x + 0).T, id="(x+0).T"),
        pytest.param(lambda x: tm.exp(x) + 1, id="exp+1"),
        pytest.param(lambda x: tm.neg(tm.neg(x).T), id="neg(neg(x).T)"),
    ],
)
@pytest.mark.parametrize("mode", [FAST_RUN, FAST_COMPILE], ids=["FAST_RUN", "FAST_COMPILE"])
def test_outputs_never_alias_inputs_and_inputs_are_never_modified(build: Any, mode: Mode) -> None:
    x = ot.dmatrix("x")
    f = function([x], [build(x), build(x)], mode=mode)
    value = mat(2, 3)
    keep = value.copy()
    first, second = f(value)
    np.testing.assert_array_equal(value, keep)
    assert not np.shares_memory(first, value) and not np.shares_memory(second, value)
    assert not np.shares_memory(first, second)
    first[...] = 0  # the caller owns what it receives
    again, _ = f(value)
    np.testing.assert_array_equal(again, function([x], build(x), mode=NO_REWRITE)(keep))


# ====================================================================== FAST_RUN vs FAST_COMPILE


def _logistic_regression() -> tuple[list[Any], list[Any], list[Any]]:
    from opweave.gradient import grad

    x, w, b = ot.dmatrix("x"), ot.dvector("w"), ot.dscalar("b")
    yv = ot.dvector("y")
    p = tm.sigmoid(tm.dot(x, w) + b)
    cost = -tm.mean(yv * tm.log(p) + (1 - yv) * tm.log(1 - p)) + 0.01 * tm.sum(w**2)
    gw, gb = grad(cost, [w, b])
    args = [mat(5, 3), mat(3), np.array(0.1), (RNG.random(5) > 0.5).astype("float64")]
    return [x, w, b, yv], [cost, gw, gb], args


def _mlp_softmax() -> tuple[list[Any], list[Any], list[Any]]:
    from opweave.gradient import grad

    x, w1, w2 = ot.dmatrix("x"), ot.dmatrix("w1"), ot.dmatrix("w2")
    h = tm.tanh(tm.dot(x, w1))
    out = tm.log(softmax(tm.dot(h, w2)))
    cost = -tm.sum(out[:, 0])
    return [x, w1, w2], [cost, *grad(cost, [w1, w2])], [mat(4, 3), mat(3, 5), mat(5, 2)]


def _elementwise_mix() -> tuple[list[Any], list[Any], list[Any]]:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    outs = [
        tm.log(1 + tm.exp(x)) * 1 - 0,
        tm.exp(x) - 1 + y,
        tm.sum((x - x) + x.T.T, axis=1),
        tm.dot(x.T, x.T).shape,
        tm.maximum(x, 0.0) / (tm.abs(y) + 1.0),
    ]
    return [x, y], outs, [mat(3, 3), mat(3)]


def _reductions() -> tuple[list[Any], list[Any], list[Any]]:
    x = ot.tensor3("x")
    outs = [
        tm.sum(x.dimshuffle(2, 0, 1), axis=0),
        tm.max(x.dimshuffle(1, "x", 0, 2), axis=(0, 1)),
        tm.prod(x.T),
        tm.mean(x**2, axis=-1),
        x.reshape((-1,)).shape,
    ]
    return [x], outs, [mat(2, 3, 4, positive=True)]


def _constants() -> tuple[list[Any], list[Any], list[Any]]:
    x = ot.dvector("x")
    c = ot.constant(np.linspace(0.1, 1.0, 4))
    outs = [x * (tm.exp(c) + 2 * c), tm.sum(c) + x, ot.zeros((2, 3)) + 1.0]
    return [x], outs, [mat(4)]


@pytest.mark.parametrize(
    "graph", [_logistic_regression, _mlp_softmax, _elementwise_mix, _reductions, _constants]
)
def test_fast_run_and_fast_compile_agree(graph: Any) -> None:
    inputs, outputs, args = graph()
    copies = [np.copy(a) for a in args]
    results = []
    for mode in (FAST_RUN, FAST_COMPILE, NO_REWRITE, Mode(linker="py", optimizer="fast_run")):
        f = function(inputs, outputs, mode=mode)
        results.append(f(*args))
        for a, c in zip(args, copies, strict=True):
            np.testing.assert_array_equal(a, c)
    reference = results[2]
    for got in results:
        for g, w in zip(got, reference, strict=True):
            assert np.asarray(g).shape == np.asarray(w).shape
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)


def test_lengths_along_a_long_chain_resolve_in_one_rewrite_each() -> None:
    """``mean(e_k)`` needs ``Shape_i(e_k)``; each resolves to ``Shape_i(x)`` in one step, so
    rewriting converges (it used to move one block back per rewrite and hit the
    equilibrium limit) and no length of an intermediate is left."""
    import warnings

    from opweave.graph.rewriting.graph import EquilibriumLimitWarning

    x = ot.dvector("x")
    e = x
    for i in range(60):
        e = ot.tanh(e * (1.0 + i / 1000) + 0.1) + ot.mean(e) * 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("error", EquilibriumLimitWarning)
        f = function([x], e, mode=Mode(linker="vm"))
    fgraph = f.maker.fgraph
    lengths = [n for n in fgraph.apply_nodes if isinstance(n.op, Shape_i)]
    assert lengths and all(n.inputs[0] is fgraph.inputs[0] for n in lengths)
    reference = function([x], e, mode=Mode(linker="py", optimizer="fast_compile"))
    data = np.linspace(0.0, 1.0, 7)
    np.testing.assert_allclose(f(data), reference(data))


@pytest.mark.parametrize(
    ("build", "want_dimshuffles"),
    [
        (lambda x: x.T.T, 0),
        (lambda x: x.dimshuffle("x", 0, 1).dimshuffle(1, 2), 0),
        (lambda x: x.dimshuffle(1, "x", 0).dimshuffle(2, 1, 0), 1),
        (lambda x: x.T.dimshuffle(0, "x", 1).dimshuffle(2, 0, 1), 1),
    ],
)
def test_consecutive_dimshuffles_merge(build: Any, want_dimshuffles: int) -> None:
    x = ot.dmatrix("x")
    out = build(x) * 2.0
    f = function([x], out, mode=Mode(linker="vm"))
    found = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, DimShuffle)]
    assert len(found) == want_dimshuffles
    value = np.arange(6.0).reshape(2, 3)
    plain = function([x], out, mode=Mode(linker="vm").excluding("local_dimshuffle_merge"))
    np.testing.assert_array_equal(f(value), plain(value))


def test_a_fill_takes_its_shape_from_the_elementwise_input() -> None:
    x = ot.dmatrix("x")
    loss = ot.sum(x**2)
    (g,) = ot.grad(loss, [x])
    f = function([x], [loss, g], mode=Mode(linker="vm").excluding("fusion"))
    # the gradient's fill of x ** 2 reads x's shape: x ** 2 is computed for the sum only
    squares = [n for n in f.maker.fgraph.toposort() if str(n.op) == "Sqr"]
    assert len(squares) == 1
    (square,) = squares
    assert [c for c, _ in f.maker.fgraph.clients[square.outputs[0]]] == [
        n for n in f.maker.fgraph.toposort() if isinstance(n.op, Sum)
    ]
    value = mat(3, 4)
    got_loss, got_g = f(value)
    np.testing.assert_allclose(got_loss, np.sum(value**2))
    np.testing.assert_allclose(got_g, 2 * value)


def test_a_fill_of_a_broadcasting_elementwise_keeps_the_broadcast_shape() -> None:
    row, x = ot.row("row", dtype="float64"), ot.dmatrix("x")
    out = ot.second(row + x, 3.0)
    f = function([row, x], out, mode=Mode(linker="vm").excluding("fusion"))
    # x has the output's shape; the row does not and is never used for it
    (fill,) = [n for n in f.maker.fgraph.toposort() if "second" in str(n.op).lower()]
    assert fill.inputs[0] is f.maker.fgraph.inputs[1]
    np.testing.assert_array_equal(f(mat(1, 4), mat(3, 4)), np.full((3, 4), 3.0))
