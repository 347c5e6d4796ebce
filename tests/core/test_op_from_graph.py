"""``OpFromGraph``: an Op made from a graph, with PyTensor's signature and behaviour.

Values are compared with NumPy on the ``py``, ``vm`` and ``cvm`` linkers (``c`` compiles
the whole graph to C, so it takes inline ``OpFromGraph`` only); gradients are checked
against finite differences and against the gradient of the same expression written out.
"""

from __future__ import annotations

import importlib
import pickle

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.builders import OpFromGraph
from opweave.gradient import DisconnectedType, NullType, NullTypeGradError, Rop, grad, verify_grad
from opweave.graph.utils import MissingInputError


def _has_c() -> bool:
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return False
    return True


HAS_C = _has_c()
LINKERS = ["py", "vm", "cvm"] if HAS_C else ["py", "vm"]
needs_c = pytest.mark.skipif(not HAS_C, reason="opweave-c is not installed")

RNG = np.random.default_rng(42)


def _values(*shape: int, n: int = 3) -> list[np.ndarray]:
    return [RNG.uniform(-1.0, 1.0, size=shape) for _ in range(n)]


def _ops_in(f: opweave.compile.Function) -> list[object]:
    return [node.op for node in f.maker.fgraph.toposort()]


def _has_ofg(f: opweave.compile.Function) -> bool:
    return any(isinstance(op, OpFromGraph) for op in _ops_in(f))


# ---------------------------------------------------------------------- values


@pytest.mark.parametrize("linker", LINKERS)
def test_values_match_numpy_with_two_nodes_of_one_op(linker: str) -> None:
    x, y, z = ot.dmatrices("x", "y", "z")
    op = OpFromGraph([x, y, z], [x + y * z])
    f = opweave.function([x, y, z], op(x, y, z) - op(z, y, x), mode=Mode(linker=linker))
    assert _has_ofg(f)
    xv, yv, zv = _values(2, 3)
    np.testing.assert_allclose(f(xv, yv, zv), (xv + yv * zv) - (zv + yv * xv))
    # Called again with other values: the outputs of the two nodes do not alias.
    xv2, yv2, zv2 = _values(2, 3)
    np.testing.assert_allclose(f(xv2, yv2, zv2), (xv2 + yv2 * zv2) - (zv2 + yv2 * xv2))


@pytest.mark.parametrize("linker", LINKERS)
def test_several_outputs_and_constants_inside(linker: str) -> None:
    x, y = ot.dvectors("x", "y")
    op = OpFromGraph([x, y], [ot.exp(x) * 2.0, x - y, ot.sum(y)])
    a, b, c = op(x, y)
    f = opweave.function([x, y], [a, b, c], mode=Mode(linker=linker))
    xv, yv = _values(4, n=2)
    got = f(xv, yv)
    np.testing.assert_allclose(got[0], np.exp(xv) * 2.0)
    np.testing.assert_allclose(got[1], xv - yv)
    np.testing.assert_allclose(got[2], yv.sum())


def test_an_output_that_is_an_input_is_a_copy() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x, x * 2])
    f = opweave.function([x], op(x))
    xv = np.arange(3.0)
    first, second = f(xv)
    np.testing.assert_array_equal(first, xv)
    np.testing.assert_array_equal(second, 2 * xv)
    first[0] = 99.0
    np.testing.assert_array_equal(xv, np.arange(3.0))


def test_the_inner_function_is_compiled_once_and_shared() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x + 1])
    assert op.runtime_cache == {}
    f = opweave.function([x], op(x))
    g = opweave.function([x], op(x) * 3)
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 1.0])
    inner = op.runtime_cache["py"]
    np.testing.assert_allclose(g(np.zeros(2)), [3.0, 3.0])
    np.testing.assert_allclose(f(np.ones(2)), [2.0, 2.0])
    assert op.runtime_cache["py"] is inner
    assert inner.trust_input


def test_mode_keyword_is_used_for_the_inner_function() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x * 2], mode=Mode(linker="py", optimizer=None))
    f = opweave.function([x], op(x), mode=Mode(linker="vm"))
    np.testing.assert_allclose(f(np.ones(2)), [2.0, 2.0])
    assert op.runtime_cache["py"].maker.mode.linker == "py"


@needs_c
def test_c_linker_needs_inline_and_compiles_the_inlined_graph() -> None:
    from opweave_c.linkers.c_linker import MissingCCodeError

    x, y = ot.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y + 1])
    with pytest.raises(MissingCCodeError, match="linker='cvm'"):
        opweave.function([x, y], op(x, y), mode=Mode(linker="c"))
    inline = OpFromGraph([x, y], [x * y + 1], inline=True)
    f = opweave.function([x, y], inline(x, y) * 2, mode=Mode(linker="c"))
    xv, yv = _values(3, n=2)
    np.testing.assert_allclose(f(xv, yv), (xv * yv + 1) * 2)


# ---------------------------------------------------------------------- inline


@pytest.mark.parametrize("optimizer", ["fast_run", "fast_compile"])
def test_inline_leaves_no_op_from_graph_node(optimizer: str) -> None:
    x, y = ot.dmatrices("x", "y")
    op = OpFromGraph([x, y], [ot.tanh(x) + y], inline=True)
    assert str(op) == "OpFromGraph{inline=True}"
    f = opweave.function([x, y], op(x, y) + op(y, x), mode=Mode(linker="vm", optimizer=optimizer))
    assert not _has_ofg(f)
    xv, yv = _values(2, 2, n=2)
    np.testing.assert_allclose(f(xv, yv), np.tanh(xv) + yv + np.tanh(yv) + xv)


def test_without_inline_the_node_stays() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x + 1])
    f = opweave.function([x], op(x))
    assert [type(o) for o in _ops_in(f)] == [OpFromGraph]


# ---------------------------------------------------------------------- shared variables


def test_shared_variables_become_implicit_inputs() -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.array([1.0, 2.0]), name="s")
    op = OpFromGraph([x], [x * s])
    assert op.shared_inputs == [s]
    assert len(op.inner_inputs) == 2
    out = op(x)
    assert out.owner.inputs[1] is s
    f = opweave.function([x], out)
    np.testing.assert_allclose(f(np.array([3.0, 4.0])), [3.0, 8.0])
    s.set_value(np.array([10.0, 0.5]))
    np.testing.assert_allclose(f(np.array([3.0, 4.0])), [30.0, 2.0])
    # The shared position may be given explicitly, with any variable of its Type.
    t = ot.dvector("t")
    g = opweave.function([x, t], op(x, t))
    np.testing.assert_allclose(g(np.array([3.0, 4.0]), np.array([2.0, 2.0])), [6.0, 8.0])


def test_gradient_reaches_the_shared_variable() -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.array([1.0, 2.0]), name="s")
    op = OpFromGraph([x], [x * s])
    gx, gs = grad(ot.sum(op(x)), [x, s])
    f = opweave.function([x], [gx, gs])
    got_x, got_s = f(np.array([3.0, 4.0]))
    np.testing.assert_allclose(got_x, [1.0, 2.0])
    np.testing.assert_allclose(got_s, [3.0, 4.0])


def test_strict_refuses_implicit_shared_variables() -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.ones(2), name="s")
    with pytest.raises(ValueError, match=r"strict=True.*shared variables \[s\]"):
        OpFromGraph([x], [x + s], strict=True)
    op = OpFromGraph([x, s], [x + s], strict=True)
    assert op.shared_inputs == []


# ---------------------------------------------------------------------- shapes


def test_shape_is_inferred_without_running_the_op() -> None:
    x = ot.dmatrix("x")
    y = ot.dvector("y")
    op = OpFromGraph([x, y], [ot.dot(x, x.T) + 1, ot.sum(x, axis=0) * y])
    a, b = op(x, y)
    f = opweave.function([x, y], [a.shape, b.shape[0]])
    assert not _has_ofg(f)
    shape_a, len_b = f(np.ones((4, 3)), np.ones(3))
    np.testing.assert_array_equal(shape_a, [4, 4])
    assert int(len_b) == 3


def test_infer_shape_through_a_nested_op() -> None:
    x = ot.dmatrix("x")
    inner = OpFromGraph([x], [x.T * 2])
    outer = OpFromGraph([x], [inner(x) + 1])
    f = opweave.function([x], outer(x).shape)
    assert not _has_ofg(f)
    np.testing.assert_array_equal(f(np.ones((2, 5))), [5, 2])


# ---------------------------------------------------------------------- gradients


def test_grad_matches_the_inlined_expression_and_finite_differences() -> None:
    x, y, z = ot.dmatrices("x", "y", "z")
    expr = ot.exp(x) * y + ot.sin(z) * x
    op = OpFromGraph([x, y, z], [expr])
    xv, yv, zv = _values(2, 3)
    got = opweave.function([x, y, z], grad(ot.sum(op(x, y, z) ** 2), [x, y, z]))(xv, yv, zv)
    want = opweave.function([x, y, z], grad(ot.sum(expr**2), [x, y, z]))(xv, yv, zv)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w)
    verify_grad(lambda a, b, c: op(a, b, c), [xv, yv, zv], rng=np.random.default_rng(1))


@pytest.mark.parametrize("inline", [False, True])
def test_grad_of_a_multi_output_op_with_one_output_unused(inline: bool) -> None:
    x, y = ot.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y, ot.exp(x)], inline=inline)
    first, _second = op(x, y)
    gx, gy = grad(ot.sum(first), [x, y])
    xv, yv = _values(3, n=2)
    got_x, got_y = opweave.function([x, y], [gx, gy])(xv, yv)
    np.testing.assert_allclose(got_x, yv)
    np.testing.assert_allclose(got_y, xv)
    first, second = op(x, y)
    gx2 = grad(ot.sum(first) + ot.sum(second), x)
    np.testing.assert_allclose(opweave.function([x, y], gx2)(xv, yv), yv + np.exp(xv))


def test_disconnected_input_and_connection_pattern() -> None:
    x, y = ot.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * 2, y + 1])
    a, _b = op(x, y)
    assert op.connection_pattern(a.owner) == [[True, False], [False, True]]
    gx, gy = grad(ot.sum(a), [x, y], disconnected_inputs="ignore", return_disconnected="None")
    assert gy is None
    np.testing.assert_allclose(opweave.function([x, y], gx)(np.ones(2), np.ones(2)), [2.0, 2.0])
    given = OpFromGraph([x, y], [x + y], connection_pattern=[[True], [False]])
    assert given.connection_pattern(None) == [[True], [False]]


def test_lop_overrides_callable() -> None:
    x, y = ot.dvectors("x", "y")

    def lop(inputs, outputs, output_grads):
        (g,) = output_grads
        return [g * 10, g * outputs[0]]

    op = OpFromGraph([x, y], [x * y], lop_overrides=lop)
    gx, gy = grad(ot.sum(op(x, y)), [x, y])
    xv, yv = _values(3, n=2)
    got_x, got_y = opweave.function([x, y], [gx, gy])(xv, yv)
    np.testing.assert_allclose(got_x, np.full(3, 10.0))
    np.testing.assert_allclose(got_y, xv * yv)


def test_lop_overrides_list_mixes_defaults_callables_and_special_types() -> None:
    x, y, z, w = ot.dvectors("x", "y", "z", "w")

    def double_y_grad(inputs, outputs, output_grads):
        return output_grads[0] * inputs[2] * 2

    op = OpFromGraph(
        [x, y, z, w],
        [x + y * z + w],
        lop_overrides=[None, double_y_grad, DisconnectedType()(), NullType("no grad of w")()],
    )
    out = ot.sum(op(x, y, z, w))
    gx, gy, gz = grad(out, [x, y, z], disconnected_inputs="ignore")
    xv, yv, zv, wv = _values(3, n=4)
    got_x, got_y, got_z = opweave.function([x, y, z, w], [gx, gy, gz], on_unused_input="ignore")(
        xv, yv, zv, wv
    )
    np.testing.assert_allclose(got_x, np.ones(3))
    np.testing.assert_allclose(got_y, 2 * zv)
    np.testing.assert_allclose(got_z, np.zeros(3))
    with pytest.raises(NullTypeGradError, match="no grad of w"):
        grad(out, w)


def test_grad_overrides_and_an_op_from_graph_as_override() -> None:
    x, y = ot.dscalars("x", "y")
    gx_in, gy_in, g_in = ot.dscalars("gx_in", "gy_in", "g_in")
    # grad_overrides: f(inputs, output_grads), PyTensor's older interface.
    with pytest.warns(FutureWarning, match="grad_overrides is deprecated"):
        op = OpFromGraph([x, y], [x * y], grad_overrides=lambda inps, grads: [grads[0], grads[0]])
    gx, gy = grad(op(x, y), [x, y])
    assert [float(v) for v in opweave.function([x, y], [gx, gy])(3.0, 4.0)] == [1.0, 1.0]
    # An OpFromGraph taking inputs + outputs + output grads.
    out_in = ot.dscalar("out_in")
    lop = OpFromGraph([gx_in, gy_in, out_in, g_in], [g_in * 5, g_in * out_in])
    op2 = OpFromGraph([x, y], [x * y], lop_overrides=lop)
    gx, gy = grad(op2(x, y), [x, y])
    assert [float(v) for v in opweave.function([x, y], [gx, gy])(3.0, 4.0)] == [5.0, 12.0]


def test_rop_through_the_inner_graph_and_overridden() -> None:
    x, v = ot.dvectors("x", "v")
    op = OpFromGraph([x], [ot.exp(x) * 3])
    r = Rop(op(x), x, v)
    xv, vv = _values(4, n=2)
    np.testing.assert_allclose(opweave.function([x, v], r)(xv, vv), 3 * np.exp(xv) * vv)
    over = OpFromGraph([x], [ot.exp(x)], rop_overrides=lambda inps, evs: [evs[0] * 7])
    r2 = Rop(over(x), x, v)
    np.testing.assert_allclose(opweave.function([x, v], r2)(xv, vv), 7 * vv)


def test_rop_with_an_eval_point_left_out_and_a_list_override() -> None:
    x, y, v = ot.dvectors("x", "y", "v")
    op = OpFromGraph([x, y], [x * y, x + y], rop_overrides=[None, DisconnectedType()()])
    first, second = op(x, y)
    r1, r2 = Rop([first, second], x, v, disconnected_outputs="ignore")
    xv, yv, vv = _values(3, n=3)
    got1, got2 = opweave.function([x, y, v], [r1, r2], on_unused_input="ignore")(xv, yv, vv)
    np.testing.assert_allclose(got1, yv * vv)
    np.testing.assert_allclose(got2, np.zeros(3))


# ---------------------------------------------------------------------- nesting


@pytest.mark.parametrize("linker", LINKERS)
def test_nested_op_from_graph(linker: str) -> None:
    x, y = ot.dvectors("x", "y")
    inner = OpFromGraph([x, y], [x * y])
    outer = OpFromGraph([x, y], [inner(x, y) + inner(y, y)])
    f = opweave.function([x, y], outer(x, y), mode=Mode(linker=linker))
    xv, yv = _values(3, n=2)
    np.testing.assert_allclose(f(xv, yv), xv * yv + yv * yv)
    gx, gy = grad(ot.sum(outer(x, y)), [x, y])
    got_x, got_y = opweave.function([x, y], [gx, gy], mode=Mode(linker=linker))(xv, yv)
    np.testing.assert_allclose(got_x, yv)
    np.testing.assert_allclose(got_y, xv + 2 * yv)


def test_nested_inline_inside_non_inline() -> None:
    x = ot.dvector("x")
    inner = OpFromGraph([x], [x + 1], inline=True)
    outer = OpFromGraph([x], [inner(x) * 2])
    f = opweave.function([x], outer(x))
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])
    assert not any(isinstance(n.op, OpFromGraph) for n in _inner_nodes(outer))


def _inner_nodes(op: OpFromGraph) -> list:
    return list(op.runtime_cache["py"].maker.fgraph.apply_nodes)


# ---------------------------------------------------------------------- bad input


def test_bad_input_type_names_the_input_and_the_expected_type() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x * 2])
    m = ot.dmatrix("m")
    with pytest.raises(TypeError, match=r"input 0 \(m\) has Type .*expected Type"):
        op(m)
    with pytest.raises(TypeError, match="input 0"):
        op(ot.ivector("iv"))
    with pytest.raises(ValueError, match="expects 1 inputs"):
        op(x, x)
    np.testing.assert_allclose(opweave.function([], op([1.0, 2.0]))(), [2.0, 4.0])


def test_bad_constructor_arguments() -> None:
    x, y = ot.dvectors("x", "y")
    with pytest.raises(TypeError, match="inputs must be a list"):
        OpFromGraph(x, [x])
    with pytest.raises(TypeError, match=r"outputs\[0\] must be a Variable"):
        OpFromGraph([x], [1.0])
    with pytest.raises(MissingInputError, match="y"):
        OpFromGraph([x], [x + y])
    with pytest.raises(NotImplementedError, match="updates and givens"):
        OpFromGraph([x], [x], updates=[])
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['colour'\\]"):
        OpFromGraph([x], [x], colour="red")
    with pytest.raises(ValueError, match="more than once"):
        OpFromGraph([x, x], [x + 1])
    with pytest.raises(ValueError, match="mutually exclusive"):
        OpFromGraph([x], [x], lop_overrides=lambda *a: a, grad_overrides=lambda *a: a)
    with pytest.raises(ValueError, match="'default' is no longer valid"):
        OpFromGraph([x], [x], lop_overrides="default")
    with pytest.raises(TypeError, match="rop_overrides cannot be a Variable"):
        OpFromGraph([x], [x], rop_overrides=y)
    with pytest.raises(TypeError, match=r"lop_overrides\[0\]"):
        OpFromGraph([x], [x], lop_overrides=[3])
    with pytest.raises(TypeError, match="name must be a str"):
        OpFromGraph([x], [x], name=3)
    with pytest.raises(ValueError, match="connection_pattern"):
        OpFromGraph([x], [x], connection_pattern=[[True, False]])
    with pytest.raises(ValueError, match="destroy_map"):
        OpFromGraph([x], [x], destroy_map={0: [1]})


def test_override_returning_the_wrong_number_of_gradients() -> None:
    x, y = ot.dvectors("x", "y")
    op = OpFromGraph([x, y], [x * y], lop_overrides=lambda i, o, g: [g[0]])
    with pytest.raises(ValueError, match="list of 2 results, got 1"):
        grad(ot.sum(op(x, y)), x)


# ---------------------------------------------------------------------- identity, pickling


def test_equality_is_identity() -> None:
    x = ot.dvector("x")
    a = OpFromGraph([x], [x + 1])
    b = OpFromGraph([x], [x + 1])
    assert a == a and a != b and hash(a) == hash(a)
    f = opweave.function([x], [a(x), b(x)])
    assert sum(isinstance(op, OpFromGraph) for op in _ops_in(f)) == 2


def test_destroy_map_is_kept() -> None:
    x = ot.dvector("x")
    op = OpFromGraph([x], [x * 2], destroy_map={0: (0,)})
    assert op.destroy_map == {0: [0]}
    with pytest.raises(TypeError, match="accept_inplace"):
        opweave.function([x], op(x * 1))
    f = opweave.function([x], op(x * 1), mode=Mode(linker="vm"), accept_inplace=True)
    xv = np.ones(2)
    np.testing.assert_allclose(f(xv), [2.0, 2.0])
    np.testing.assert_array_equal(xv, [1.0, 1.0])


@pytest.mark.parametrize("linker", LINKERS)
def test_a_compiled_function_using_it_pickles(linker: str) -> None:
    x = ot.dvector("x")
    s = opweave.shared(np.array([1.0, 2.0]), name="s")
    inner = OpFromGraph([x], [x * 3])
    op = OpFromGraph([x], [inner(x) + s], name="affine")
    f = opweave.function([x], grad(ot.sum(op(x) ** 2), x), mode=Mode(linker=linker))
    xv = np.array([0.5, -1.0])
    want = f(xv)
    assert op.runtime_cache  # compiled, and not pickled
    f2 = pickle.loads(pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL))
    np.testing.assert_allclose(f2(xv), want)
    np.testing.assert_allclose(want, 2 * (3 * xv + [1.0, 2.0]) * 3)
    op2 = pickle.loads(pickle.dumps(op))
    assert op2 != op and op2.runtime_cache == {} and str(op2) == "affine{inline=False}"
