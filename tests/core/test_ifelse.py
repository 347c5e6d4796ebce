"""``opweave.ifelse``: PyTensor's lazy ``ifelse``, its Op and the lazy thunk loop.

Values are compared with NumPy on the ``py``, ``vm`` and ``cvm`` linkers; laziness is shown
with Ops (defined here, with their own ``perform``) that count their runs or raise; the
eager loop stays the one linked for graphs without a lazy node.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.mode import linker_from_name
from opweave.gradient import verify_grad
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.ifelse import IfElse, ifelse
from opweave.link.lazy import is_lazy, make_lazy_thunk
from opweave.link.loop import run_loop
from opweave.tensor import TensorType


def _has_c() -> bool:
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return False
    return True


HAS_C = _has_c()
LINKERS = ["py", "vm", "cvm"] if HAS_C else ["py", "vm"]
LAZY_LINKERS = ["vm", "cvm"] if HAS_C else ["vm"]


class Counted(Op):
    """``x * 1`` in Python, counting its runs (``calls``); ``fail`` makes it raise."""

    __props__ = ("tag",)

    def __init__(self, tag: str, fail: bool = False) -> None:
        self.tag = tag
        self.fail = fail
        self.calls = 0

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        self.calls += 1
        if self.fail:
            raise ValueError(f"branch {self.tag} ran")
        out[0][0] = np.array(inputs[0], copy=True)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        return [shapes[0]]


def compile_(inputs: list[Variable], outputs: Any, linker: str, **kw: Any) -> Any:
    mode = Mode(linker=linker, optimizer=kw.pop("optimizer", None))
    return opweave.function(inputs, outputs, mode=mode, **kw)


# ====================================================================== values


@pytest.mark.parametrize("linker", LINKERS)
def test_selects_the_branch_by_the_condition(linker: str) -> None:
    c = ot.iscalar("c")
    x, y = ot.dvector("x"), ot.dvector("y")
    f = compile_([c, x, y], ifelse(c, ot.exp(x) * 2, ot.log(y) + 1), linker)
    xv, yv = np.array([0.5, 1.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(f(1, xv, yv), np.exp(xv) * 2)
    np.testing.assert_allclose(f(0, xv, yv), np.log(yv) + 1)
    np.testing.assert_allclose(f(-3, xv, yv), np.exp(xv) * 2)  # any nonzero is true
    np.testing.assert_allclose(f(0, xv, yv), np.log(yv) + 1)  # again, after the other


@pytest.mark.parametrize("linker", LINKERS)
def test_multiple_outputs_and_the_container_type(linker: str) -> None:
    c = ot.bscalar("c")
    x, m = ot.dvector("x"), ot.dmatrix("m")
    as_list = ifelse(c, [x + 1, m * 2], [x - 1, m.T])
    as_tuple = ifelse(c, (x,), (x * 3,))
    assert isinstance(as_list, list) and len(as_list) == 2
    assert isinstance(as_tuple, tuple) and len(as_tuple) == 1
    f = compile_([c, x, m], [*as_list, *as_tuple], linker)
    xv, mv = np.arange(3.0), np.arange(9.0).reshape(3, 3)
    a, b, t = f(1, xv, mv)
    np.testing.assert_allclose(a, xv + 1)
    np.testing.assert_allclose(b, mv * 2)
    np.testing.assert_allclose(t, xv)
    a, b, t = f(0, xv, mv)
    np.testing.assert_allclose(a, xv - 1)
    np.testing.assert_allclose(b, mv.T)
    np.testing.assert_allclose(t, xv * 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_output_is_a_copy_of_an_input_branch(linker: str) -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    f = compile_([c, x], ifelse(c, x, x * 2), linker)
    xv = np.arange(3.0)
    out = f(1, xv)
    np.testing.assert_allclose(out, xv)
    assert not np.shares_memory(out, xv)


@pytest.mark.parametrize("linker", LAZY_LINKERS)
def test_default_rewrites_keep_values_right(linker: str) -> None:
    # The condition, both branches and the inplace rewrites share ``x``.
    x = ot.dvector("x")
    out = ifelse(ot.gt(x.sum(), 0), ot.exp(x) * 2 + x, (x - 1) * x)
    f = opweave.function([x], [out, x * 3], mode=Mode(linker=linker))
    for xv in (np.array([1.0, 2.0]), np.array([-1.0, -2.0])):
        expected = np.exp(xv) * 2 + xv if xv.sum() > 0 else (xv - 1) * xv
        got, other = f(xv)
        np.testing.assert_allclose(got, expected)
        np.testing.assert_allclose(other, xv * 3)


def test_the_c_linker_refuses_and_points_to_cvm() -> None:
    if not HAS_C:
        pytest.skip("the C backend is not installed")
    from opweave_c.linkers.c_linker import MissingCCodeError

    c = ot.iscalar("c")
    x = ot.dvector("x")
    with pytest.raises(MissingCCodeError, match="cvm"):
        compile_([c, x], ifelse(c, x + 1, x - 1), "c")


# ====================================================================== laziness


@pytest.mark.parametrize("linker", LAZY_LINKERS)
def test_only_the_selected_branch_runs(linker: str) -> None:
    then_op, else_op = Counted("then"), Counted("else")
    c = ot.iscalar("c")
    x = ot.dvector("x")
    f = compile_([c, x], ifelse(c, then_op(x * 2), else_op(x + 1)), linker)
    assert f.fn.loop == "lazy"
    xv = np.arange(3.0)
    np.testing.assert_allclose(f(1, xv), xv * 2)
    assert (then_op.calls, else_op.calls) == (1, 0)
    np.testing.assert_allclose(f(0, xv), xv + 1)
    assert (then_op.calls, else_op.calls) == (1, 1)
    f(0, xv)
    f(0, xv)
    assert (then_op.calls, else_op.calls) == (1, 3)


@pytest.mark.parametrize("linker", LAZY_LINKERS)
def test_a_failing_branch_that_is_not_selected_never_runs(linker: str) -> None:
    bomb = Counted("bomb", fail=True)
    c = ot.iscalar("c")
    x = ot.dvector("x")
    f = compile_([c, x], ifelse(c, x + 1, bomb(ot.exp(x))), linker)
    np.testing.assert_allclose(f(1, np.ones(2)), [2.0, 2.0])
    assert bomb.calls == 0
    with pytest.raises(ValueError, match="branch bomb ran") as info:
        f(0, np.ones(2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error" in notes and "bomb" in notes


@pytest.mark.parametrize("linker", LAZY_LINKERS)
def test_nested_ifelse_and_a_shared_condition_node(linker: str) -> None:
    ops = {k: Counted(k) for k in ("a", "b", "c")}
    i = ot.iscalar("i")
    x = ot.dvector("x")
    inner = ifelse(ot.gt(i, 1), ops["b"](x + 2), ops["c"](x + 3))
    out = ifelse(ot.gt(i, 0), inner, ops["a"](x + 1))
    f = compile_([i, x], out, linker)
    xv = np.zeros(2)
    np.testing.assert_allclose(f(0, xv), xv + 1)
    np.testing.assert_allclose(f(1, xv), xv + 3)
    np.testing.assert_allclose(f(2, xv), xv + 2)
    assert [ops[k].calls for k in "abc"] == [1, 1, 1]


@pytest.mark.parametrize("linker", LAZY_LINKERS)
def test_the_lazy_loop_frees_intermediates(linker: str) -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    a = ot.exp(x)
    b = a * 2  # read by the then branch and by another output
    out = ifelse(c, b + 1, ot.log(a))
    found = linker_from_name(linker)
    linker_cls = found if isinstance(found, type) else type(found)
    gc_f = opweave.function([c, x], [out, b * 3], mode=Mode(linker=linker_cls(allow_gc=True)))
    keep_f = opweave.function(
        [c, x], [out, b * 3], mode=Mode(linker=linker_cls(allow_gc=False), optimizer=None)
    )
    xv = np.arange(3.0)
    for cv in (0, 1):
        expected = np.exp(xv) * 2 + 1 if cv else xv
        got, other = gc_f(cv, xv)
        np.testing.assert_allclose(got, expected)
        np.testing.assert_allclose(other, np.exp(xv) * 6)
        outputs = set(gc_f.maker.fgraph.outputs)
        kept = [
            v
            for v, cell in gc_f.fn.storage_map.items()
            if v.owner is not None and v not in outputs and cell[0] is not None
        ]
        assert kept == [], f"intermediates kept: {kept}"
    keep_f(1, xv)
    kept = [
        v
        for v, cell in keep_f.fn.storage_map.items()
        if v.owner is not None and cell[0] is not None
    ]
    assert len(kept) >= 3


def test_profiling_the_lazy_loop_counts_only_what_ran() -> None:
    then_op, else_op = Counted("then"), Counted("else")
    c = ot.iscalar("c")
    x = ot.dvector("x")
    out = ifelse(c, then_op(x), else_op(x))
    f = opweave.function([c, x], out, mode=Mode(linker="vm", optimizer=None), profile=True)
    f(1, np.ones(2))
    counts = {str(node.op): n for (_, node), n in f.profile.apply_callcount.items()}
    assert counts["Counted{tag='then'}"] == 1
    assert counts["Counted{tag='else'}"] == 0
    assert counts["if{}"] >= 1
    assert f.profile.vm_call_time > 0


# ====================================================================== the chosen loop


@pytest.mark.parametrize("linker", LINKERS)
def test_graphs_without_a_lazy_node_keep_the_eager_loop(linker: str) -> None:
    x = ot.dvector("x")
    f = compile_([x], ot.exp(x) + 1, linker)
    assert f.fn.loop == "eager"
    # cvm runs an eager graph's steps in its C loop, others in the core's eager loop.
    in_c = getattr(f.fn, "c_loop", False)
    assert in_c == (linker == "cvm")
    assert in_c or f.fn.__qualname__.startswith(run_loop.__qualname__ + ".<locals>.")
    c = ot.iscalar("c")
    g = compile_([c, x], ifelse(c, x, x + 1), linker)
    assert g.fn.loop == "lazy"
    assert not g.fn.__qualname__.startswith(run_loop.__qualname__)


def test_lazy_thunk_asks_for_the_condition_then_for_its_branch() -> None:
    c = ot.iscalar("c")
    x, y = ot.dvector("x"), ot.dvector("y")
    node = ifelse(c, x, y).owner
    storage = {v: [None] for v in (*node.inputs, *node.outputs)}
    computed = {v: [0] for v in storage}
    ran: list[bool] = []
    thunk = make_lazy_thunk(node, lambda: ran.append(True), storage, computed)
    assert is_lazy(thunk)
    assert thunk() == [0]
    storage[c][0], computed[c][0] = np.int32(0), 1
    assert thunk() == [2]
    storage[y][0], computed[y][0] = np.ones(2), 1
    assert thunk() == [] and ran == [True]
    assert computed[node.outputs[0]][0] == 1


class BrokenLazy(Op):
    """A PyTensor-style lazy Op whose thunk keeps asking for a computed input."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        def thunk() -> list[int]:
            return [0]

        thunk.lazy = True  # type: ignore[attr-defined]
        return thunk


def test_a_lazy_thunk_that_asks_for_a_computed_input_is_reported() -> None:
    x = ot.dvector("x")
    f = compile_([x], BrokenLazy()(x + 1), "vm")
    with pytest.raises(RuntimeError, match="lazy protocol is broken"):
        f(np.ones(2))


# ====================================================================== gradients


@pytest.mark.parametrize("cond", [0, 1])
def test_grad_flows_into_the_selected_branch(cond: int) -> None:
    c = ot.iscalar("c")
    x, y = ot.dvector("x"), ot.dvector("y")
    cost = ifelse(c, (x**2).sum(), (ot.sin(y) * 3).sum())
    _, gx, gy = opweave.grad(cost, [c, x, y], disconnected_inputs="ignore")
    f = opweave.function([c, x, y], [gx, gy], mode=Mode(linker="vm"))
    xv, yv = np.array([1.0, -2.0]), np.array([0.3, 0.7])
    got_x, got_y = f(cond, xv, yv)
    np.testing.assert_allclose(got_x, 2 * xv if cond else 0 * xv)
    np.testing.assert_allclose(got_y, 0 * yv if cond else 3 * np.cos(yv))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_verify_grad_through_both_branches(sign: float) -> None:
    def fun(x: Variable, y: Variable) -> Variable:
        return ifelse(ot.gt(x.sum(), 0), x * y + ot.exp(x), ot.sin(y) * x)

    xv = sign * np.array([0.7, 1.1, 0.4])
    yv = np.array([0.2, -0.5, 0.9])
    verify_grad(fun, [xv, yv], rng=np.random.default_rng(0), mode=Mode(linker="vm"))


def test_grad_of_one_output_of_a_multi_output_ifelse() -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    a, _ = ifelse(c, [x * 2, x * 3], [x * 4, x * 5])
    g = opweave.grad(a.sum(), x)
    f = opweave.function([c, x], g, mode=Mode(linker="vm"))
    np.testing.assert_allclose(f(1, np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(f(0, np.ones(2)), [4.0, 4.0])


def test_grad_graph_is_lazy_too() -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    g = opweave.grad(ifelse(c, ot.exp(x), x * 2).sum(), x)
    node_ops = [type(n.op) for n in opweave.function([c, x], g).maker.fgraph.toposort()]
    assert IfElse in node_ops


def test_r_op_is_the_ifelse_of_the_eval_points() -> None:
    c = ot.iscalar("c")
    x, v = ot.dvector("x"), ot.dvector("v")
    out = ifelse(c, x**2, ot.sin(x))
    jv = opweave.Rop(out, x, v)
    f = opweave.function([c, x, v], jv, mode=Mode(linker="vm"))
    xv, vv = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    np.testing.assert_allclose(f(1, xv, vv), 2 * xv * vv)
    np.testing.assert_allclose(f(0, xv, vv), np.cos(xv) * vv)
    node = out.owner
    assert node.op.R_op(node.inputs, [None] * len(node.inputs)) == [None]


# ====================================================================== shapes


@pytest.mark.parametrize("cond", [0, 1])
def test_infer_shape_is_an_ifelse_of_the_shapes(cond: int) -> None:
    c = ot.iscalar("c")
    x, m = ot.dvector("x"), ot.dmatrix("m")
    out = ifelse(c, m[:, :2], ot.outer(x, x))
    node = out.owner
    shapes = [tuple(ot.shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    (inferred,) = node.op.infer_shape(None, node, shapes)
    assert len(inferred) == 2
    assert all(isinstance(s.owner.op, IfElse) for s in inferred)
    f = compile_([c, x, m], [out, *inferred], "vm", on_unused_input="ignore")
    value, *shape = f(cond, np.ones(4), np.ones((3, 5)))
    assert tuple(int(s) for s in shape) == value.shape == ((3, 2) if cond else (4, 4))
    # The compiled default mode answers ``out.shape`` without computing the branch.
    bomb = Counted("bomb", fail=True)
    shape_f = opweave.function([c, x, m], ifelse(c, bomb(m), ot.outer(x, x)).shape)
    assert tuple(shape_f(cond, np.ones(4), np.ones((3, 5)))) == ((3, 5) if cond else (4, 4))
    assert bomb.calls == 0


def test_infer_shape_passes_lengths_both_branches_share() -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    node = ifelse(c, x + 1, x * 2).owner
    shared_len = ot.shape_i(x, 0)
    (shape,) = node.op.infer_shape(None, node, [(), (shared_len,), (shared_len,)])
    assert shape == (shared_len,)
    assert node.op.infer_shape(None, node, [(), None, None]) == [None]


# ====================================================================== types and errors


def test_condition_must_be_a_scalar() -> None:
    x = ot.dvector("x")
    with pytest.raises(TypeError, match="The condition argument must be a truthy scalar value"):
        ifelse(x, x, x)


def test_branches_must_have_the_same_length() -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    with pytest.raises(ValueError, match="got 2 for `then`, and 1 for `else`"):
        ifelse(c, [x, x], [x])
    with pytest.raises(ValueError, match="Wrong number of arguments: expected 2, got 3"):
        IfElse(1)(c, x, x, x)


def test_branch_dtypes_and_ranks_must_match() -> None:
    c = ot.iscalar("c")
    with pytest.raises(TypeError, match="true_branch=float64, false_branch=float32"):
        ifelse(c, ot.dvector("x"), ot.vector("y", dtype="float32"))
    with pytest.raises(TypeError, match=r"compatible ndim values.*true_branch=1, false_branch=2"):
        ifelse(c, ot.dvector("x"), ot.dmatrix("m"))


def test_output_keeps_the_static_lengths_both_branches_share() -> None:
    c = ot.iscalar("c")
    a = TensorType("float64", shape=(3, 4))("a")
    b = TensorType("float64", shape=(3, 5))("b")
    out = ifelse(c, a, b)
    assert out.type.shape == (3, None)
    same = ifelse(c, a, a * 2)
    assert same.type.shape == (3, 4)
    f = compile_([c, a, b], out, "vm")
    assert f(1, np.ones((3, 4)), np.ones((3, 5))).shape == (3, 4)
    assert f(0, np.ones((3, 4)), np.ones((3, 5))).shape == (3, 5)


def test_python_numbers_as_branches() -> None:
    c = ot.iscalar("c")
    out = ifelse(c, np.float64(2.5), np.float64(-1.0))
    f = compile_([c], out, "vm")
    assert float(f(1)) == 2.5 and float(f(0)) == -1.0


def test_op_props_and_printing() -> None:
    assert IfElse(2) == IfElse(2, name="other") and IfElse(2) != IfElse(3)
    assert IfElse(2) != IfElse(2, as_view=True)
    assert str(IfElse(1)) == "if{}" and str(IfElse(1, as_view=True, name="n")) == "if{n,inplace}"
    assert IfElse(2, as_view=True).view_map == {0: [1], 1: [2]}
    with pytest.raises(TypeError, match="n_outs"):
        IfElse(-1)


def test_debugmode_runs_the_implementation_eagerly() -> None:
    c = ot.iscalar("c")
    x = ot.dvector("x")
    f = opweave.function([c, x], ifelse(c, ot.exp(x), x * 2), mode="DebugMode")
    np.testing.assert_allclose(f(1, np.ones(2)), np.exp(np.ones(2)))
    np.testing.assert_allclose(f(0, np.ones(2)), [2.0, 2.0])


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_ifelse_of_scalar_typed_branches(linker: str) -> None:
    import opweave.scalar as ps

    c = ot.iscalar("c")
    a, b = ps.float64("a"), ps.float64("b")
    out = ifelse(c, a * 2.0, b + 1.0)
    assert out.type == a.type
    f = opweave.function([c, a, b], out, mode=opweave.Mode(linker=linker))
    assert f(1, 1.0, 2.0) == 2.0
    assert f(0, 1.0, 2.0) == 3.0
