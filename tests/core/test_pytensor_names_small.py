"""Small PyTensor names at PyTensor's paths: type_other, as_symbolic, updates, gufunc
signatures, graph helpers, tracked Op objects (switch, clip, fill, alloc), shape helpers,
the JAX/Numba placeholders."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.graph.basic import Apply, Constant
from opweave.graph.fg import FunctionGraph, Output
from opweave.graph.op import HasInnerGraph, compute_test_value
from opweave.graph.rewriting.basic import in2out, node_rewriter
from opweave.tensor.basic import Alloc, AllocEmpty
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type_other import (
    MakeSlice,
    NoneConst,
    NoneTypeT,
    SliceConstant,
    SliceType,
    make_slice,
    slicetype,
)

LINKERS = ["py", "vm", "cvm"]


def _run(inputs, outputs, linker, *values):
    if linker == "cvm":
        pytest.importorskip("opweave_c", reason="the C backend (opweave-c) is not installed")
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))(*values)


# ---------------------------------------------------------------------- type_other


def test_none_const_and_slices_as_symbolic() -> None:
    assert ot.NoneConst is NoneConst and isinstance(NoneConst.type, NoneTypeT)
    assert NoneConst.equals(NoneConst) and not NoneConst.equals(ot.constant(0))
    assert opweave.as_symbolic(None) is NoneConst
    with pytest.raises(TypeError, match="expected None"):
        NoneConst.type.filter(0)
    const = opweave.as_symbolic(slice(np.array(1), 5))
    assert isinstance(const, SliceConstant) and const.data == slice(1, 5, None)
    assert const.signature() == opweave.as_symbolic(slice(1, 5)).signature()
    with pytest.raises(TypeError, match="expected a slice"):
        slicetype.filter(3)
    x = ot.dvector("x")
    assert opweave.as_symbolic(x) is x
    assert opweave.as_symbolic([1.0, 2.0], name="v").name == "v"


@pytest.mark.parametrize("linker", LINKERS)
def test_make_slice_builds_the_slice(linker) -> None:
    i = ot.lscalar("i")
    s = opweave.as_symbolic(slice(i, None, 2))
    assert isinstance(s.owner.op, MakeSlice) and isinstance(s.type, SliceType)
    assert s.owner.inputs[1] is NoneConst
    assert _run([i], s, linker, 3) == slice(3, None, 2)
    with pytest.raises(TypeError, match="0-d integer"):
        make_slice(ot.dscalar("f"))


def test_is_basic_idx() -> None:
    from opweave.tensor.subtensor import is_basic_idx

    assert is_basic_idx(slice(None)) and is_basic_idx(None) and is_basic_idx(NoneConst)
    assert is_basic_idx(make_slice(slice(1, 2)))
    assert not is_basic_idx(3) and not is_basic_idx(ot.lscalar("i"))


# ---------------------------------------------------------------------- updates, utils


def test_ordered_updates() -> None:
    from opweave.updates import OrderedUpdates

    a, b = opweave.shared(1.0, name="a"), opweave.shared(2.0, name="b")
    up = OrderedUpdates([(a, a + 1)])
    with pytest.raises(TypeError, match="SharedVariable"):
        up[ot.dscalar("x")] = 1
    new_b = b * 2
    both = up + {b: new_b}
    assert isinstance(both, OrderedUpdates) and list(both) == [a, b]
    both.update({b: new_b})  # the same value again is fine
    with pytest.raises(KeyError, match="Collision"):
        both.update({b: b + 3})
    f = opweave.function([], [], updates=both)
    f()
    assert a.get_value() == 2.0 and b.get_value() == 4.0
    assert opweave.OrderedUpdates is OrderedUpdates


def test_gufunc_signatures() -> None:
    from opweave.tensor.utils import _parse_gufunc_signature, safe_signature

    # values as numpy.vectorize parses them (same grammar)
    assert _parse_gufunc_signature("(m,n),(n,p)->(m,p)") == (
        [("m", "n"), ("n", "p")],
        [("m", "p")],
    )
    assert _parse_gufunc_signature(" (a) , () -> (a),()") == ([("a",), ()], [("a",), ()])
    assert _parse_gufunc_signature("->()") == ([], [()])
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        _parse_gufunc_signature("(m,n)")
    assert safe_signature([2, 0], [1]) == "(i00,i01),()->(o00)"
    assert safe_signature([], [0]) == "->()"


# ---------------------------------------------------------------------- graph helpers


def test_output_clients_carry_an_output_op() -> None:
    x = ot.dvector("x")
    y = ot.exp(x)
    fg = FunctionGraph([x], [y, ot.log(y)], clone=False)
    [(client, index)] = [entry for entry in fg.clients[y] if entry[0] == "output"]
    assert client == "output" and index == 0
    assert isinstance(client.op, Output) and client.op.idx == 0
    assert client.inputs == [y] and client.outputs == []
    z = ot.sqrt(x)
    fg.replace(y, z)
    entries = [c for c, _ in fg.clients[z] if c == "output"]
    assert [c.op.idx for c in entries] == [0] and entries[0].inputs == [z]
    fg.remove_output(0)
    [(client, index)] = [e for e in fg.clients[fg.outputs[0]] if e[0] == "output"]
    assert client.op == Output(0) and index == 0
    fg.check_integrity()


def test_has_inner_graph_and_type_casting_op() -> None:
    from opweave.compile.builders import OpFromGraph
    from opweave.compile.ops import TypeCastingOp, ViewOp

    a = ot.dscalar("a")
    ofg = OpFromGraph([a], [a * 2])
    assert isinstance(ofg, HasInnerGraph) and not isinstance(ot.exp, HasInnerGraph)
    assert issubclass(ViewOp, TypeCastingOp)

    class Marker(TypeCastingOp):
        def make_node(self, x):
            return Apply(self, [x], [x.type()])

    x = ot.dvector("x")
    for linker in LINKERS:
        out = _run([x], Marker()(x) * 3, linker, np.array([1.0, 2.0]))
        np.testing.assert_array_equal(out, [3.0, 6.0])


def test_compute_test_value_follows_the_flag() -> None:
    x = ot.dvector("x")
    y = ot.exp(x)
    assert opweave.config.compute_test_value == "off"
    with opweave.config.change_flags(compute_test_value="ignore"):
        compute_test_value(y.owner)  # x has no test value: nothing happens
    assert not hasattr(y.tag, "test_value")
    with opweave.config.change_flags(compute_test_value="raise"):
        with pytest.raises(ValueError, match="cannot compute test value"):
            compute_test_value(y.owner)
    x.tag.test_value = np.array([0.0, 1.0])
    with opweave.config.change_flags(compute_test_value="raise"):
        compute_test_value(y.owner)
    np.testing.assert_allclose(y.tag.test_value, np.exp([0.0, 1.0]))


def test_meta_type_checks_props() -> None:
    from opweave.graph.utils import MetaType

    class Fine(metaclass=MetaType):
        __props__ = ("a",)

    assert isinstance(Fine, MetaType)
    with pytest.raises(TypeError, match="__props__"):

        class Bad(metaclass=MetaType):
            __props__ = ["a"]


# ---------------------------------------------------------------------- tracked Ops


def test_switch_clip_fill_alloc_are_op_objects_that_rewriters_track() -> None:
    from opweave.tensor.basic import alloc, fill, second, switch, where
    from opweave.tensor.math import clip
    from opweave.tensor.math import switch as math_switch

    assert isinstance(switch, Elemwise) and switch is math_switch and switch is ot.switch
    assert isinstance(clip, Elemwise) and isinstance(second, Elemwise) and fill is second
    assert isinstance(alloc, Alloc) and ot.alloc is alloc
    x = ot.dvector("x")
    assert where(ot.gt(x, 0), x, 0).owner.op == switch
    assert clip(x, 0, 1).owner.op == clip and fill(x, 2.0).owner.op == second
    seen = []

    @node_rewriter([switch, clip, alloc])
    def spot(fgraph, node):
        seen.append(node.op)

    out = alloc(clip(where(ot.gt(x, 0), x, -x), 0.5, 2.0), 2, x.shape[0])
    fg = FunctionGraph([x], [out], clone=False)
    in2out(spot).rewrite(fg)
    assert seen == [switch, clip, alloc]


@pytest.mark.parametrize("linker", LINKERS)
def test_tracked_ops_compute_numpy_values(linker) -> None:
    x = ot.dvector("x")
    outs = [
        ot.switch(ot.gt(x, 0), x, -x),
        ot.clip(x, -0.5, 1.5),
        ot.fill(x, 7.0),
        ot.alloc(x, 2, 3),
        ot.math.logaddexp(x, ot.constant(0.5, dtype="float64")),
        ot.math.variadic_add(x, x, 1.0),
        ot.math.variadic_mul(x),
    ]
    v = np.array([-1.0, 0.25, 2.0])
    got = _run([x], outs, linker, v)
    expected = [
        np.where(v > 0, v, -v),
        np.clip(v, -0.5, 1.5),
        np.full(3, 7.0),
        np.broadcast_to(v, (2, 3)),
        np.logaddexp(v, 0.5),
        v + v + 1.0,
        v,
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    assert ot.math.variadic_add().data == 0 and ot.math.variadic_mul().data == 1


def test_special_inverses_and_matmul_are_at_tensor_math() -> None:
    from scipy import special

    from opweave.tensor.blas import MatMul
    from opweave.tensor.math import _matmul, betaincinv, gammaincinv
    from opweave.tensor.special_extra import gammaincinv as gammaincinv_extra

    assert isinstance(_matmul, MatMul) and gammaincinv == gammaincinv_extra
    a = ot.dvector("a")
    f = opweave.function([a], [betaincinv(2.0, 3.0, a), gammaincinv(2.0, a)])
    v = np.array([0.1, 0.5, 0.9])
    got = f(v)
    np.testing.assert_allclose(got[0], special.betaincinv(2.0, 3.0, v), rtol=1e-10)
    np.testing.assert_allclose(got[1], special.gammaincinv(2.0, v), rtol=1e-10)


# ---------------------------------------------------------------------- shapes, misc


def test_shape_helpers_and_constants() -> None:
    from opweave.tensor.shape import shape_tuple

    x = ot.tensor("x", shape=(None, 3))
    first, second_len = shape_tuple(x)
    assert isinstance(second_len, Constant) and second_len.data == 3
    assert opweave.function([x], first)(np.zeros((4, 3))) == 4
    m = ot.dmatrix("m")
    b = ot.specify_broadcastable(m, 1)
    assert b.type.shape == (None, 1)
    f = opweave.function([m], b)
    with pytest.raises(AssertionError):
        f(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="static length 3"):
        ot.specify_broadcastable(x, 1)
    assert ot.inf == np.inf and ot.pi == np.pi and ot.Variable is opweave.Variable


def test_alloc_empty_and_batched_dot() -> None:
    n = ot.lscalar("n")
    empty = AllocEmpty("float32")(n, 3)
    assert empty.type.dtype == "float32" and empty.type.shape == (None, 3)
    out = opweave.function([n], empty)(2)
    assert out.shape == (2, 3) and out.dtype == np.float32
    a, b = ot.dtensor3("a"), ot.dmatrix("b")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        f = opweave.function(
            [a, b], [ot.batched_dot(a, a.transpose(0, 2, 1)), ot.batched_dot(a, b)]
        )
    av, bv = np.arange(24.0).reshape(2, 3, 4), np.arange(8.0).reshape(2, 4)
    mm, mv = f(av, bv)
    np.testing.assert_allclose(mm, np.einsum("bij,bkj->bik", av, av))
    np.testing.assert_allclose(mv, np.einsum("bij,bj->bi", av, bv))


def test_dimshuffle_get_path_and_map() -> None:
    from pathlib import Path

    from opweave.tensor.elemwise import DimShuffle

    path = DimShuffle.get_path(Path(DimShuffle.c_func_file))
    assert path.is_absolute() and path.parent.parent.name == "tensor"
    assert DimShuffle.get_path(Path("/abs/file.c")) == Path("/abs/file.c")
    assert opweave.map is opweave.scan.map


@pytest.mark.parametrize(
    "module", ["opweave.link.mlx", "opweave.link.mlx.dispatch", "opweave.link.numba.dispatch"]
)
def test_backend_modules_no_plugin_provides_say_how_to_get_them(module: str) -> None:
    with pytest.raises(ModuleNotFoundError, match="no installed plugin provides it") as info:
        importlib.import_module(module)
    assert "python -m opweave info" in str(info.value)
    assert info.value.name == module.rsplit(".", 1)[0] if "dispatch" in module else module


def test_add_output_can_import_missing_inputs() -> None:
    from opweave.graph.utils import MissingInputError

    x, y = ot.dscalar("x"), ot.dscalar("y")
    fg = FunctionGraph([x], [ot.exp(x)], clone=False)
    with pytest.raises(MissingInputError):
        fg.add_output(x + y)
    assert len(fg.outputs) == 1
    fg.add_output(x + y, import_missing=True)
    assert fg.inputs == [x, y] and len(fg.outputs) == 2
    fg.check_integrity()


def test_as_tensor_variable_dispatcher_registration() -> None:
    from opweave.tensor.basic import _as_tensor_variable
    from opweave.tensor.conversion import registered_conversion

    class Wrapped:
        def __init__(self, values):
            self.values = values

    assert registered_conversion(Wrapped([1.0])) is None
    with pytest.raises(NotImplementedError, match="Cannot convert"):
        _as_tensor_variable(Wrapped([1.0]), None, None)

    @_as_tensor_variable.register(Wrapped)
    def _wrapped_to_tensor(x, name, ndim, **kwargs):
        return ot.as_tensor_variable(np.asarray(x.values), name=name, ndim=ndim, **kwargs)

    assert registered_conversion(Wrapped([1.0])) is _wrapped_to_tensor
    out = _as_tensor_variable(Wrapped([1.0, 2.0]), "w", None)
    np.testing.assert_array_equal(out.data, [1.0, 2.0])
    # as_tensor_variable (and everything built on it) uses the registered conversion
    converted = ot.as_tensor_variable(Wrapped([3.0, 4.0]), name="v")
    assert converted.name == "v"
    np.testing.assert_array_equal(converted.data, [3.0, 4.0])
    np.testing.assert_array_equal((Wrapped([1.0]) + ot.constant(1.0)).eval(), [2.0])


def test_op_call_names_outputs_and_computes_test_values_when_asked() -> None:
    x = ot.dvector("x")
    assert ot.exp(x, name="e").name == "e"
    parts = ot.basic.Split(2)(x, 0, [1, 2], name="part")
    assert [p.name for p in parts] == ["part_0", "part_1"]
    x.tag.test_value = np.array([0.0, 2.0])
    y = ot.exp(x)
    assert not hasattr(y.tag, "test_value")  # the flag is off by default
    with opweave.config.change_flags(compute_test_value="raise"):
        z = ot.log1p(x)
    np.testing.assert_allclose(z.tag.test_value, np.log1p([0.0, 2.0]))
