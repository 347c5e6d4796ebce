"""PyTensor's named rewrites and rewrite/scan/ifelse helpers at PyTensor's paths.

Graph structures expected after a rewrite were taken from PyTensor 2.38.3 applying the
rewrite of the same name to the same graph (noted where so); values are compared with
NumPy on the py, vm and cvm linkers.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as pt
from opweave.compile.mode import Mode, get_default_mode
from opweave.compile.ops import view_op
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import basic as gb
from opweave.graph.rewriting.graph import in2out
from opweave.graph.rewriting.utils import get_clients_at_depth, rewrite_subgraph
from opweave.graph.traversal import ancestors
from opweave.raise_op import Assert, assert_op
from opweave.tensor.basic import Alloc, Join, MakeVector
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting import basic as tb

IFELSE = importlib.import_module("opweave.ifelse")
SCAN_UTILS = importlib.import_module("opweave.scan.utils")
SCAN_OP = importlib.import_module("opweave.scan.op")
SCAN_BASIC = importlib.import_module("opweave.scan.basic")
LINKERS = ["py", "vm", "cvm"]


def _rewrite(rewriter, outputs, inputs):
    fgraph = FunctionGraph(inputs, outputs, clone=True)
    in2out(rewriter).rewrite(fgraph)
    return fgraph


def _ops(fgraph):
    """(Op class, scalar Op class or None) of each node, in topological order."""
    return [
        (type(n.op).__name__, type(getattr(n.op, "scalar_op", None)).__name__)
        if isinstance(n.op, Elemwise)
        else (type(n.op).__name__, None)
        for n in fgraph.toposort()
    ]


def _values(fgraph, *args, linker):
    fn = opweave.function(
        fgraph.inputs,
        fgraph.outputs,
        mode=Mode(linker=linker, optimizer=None),
        on_unused_input="ignore",
    )
    return fn(*args)


def vec3(name):
    return pt.tensor(name, shape=(3,), dtype="float64")


# ---------------------------------------------------------------------- asserts


@pytest.mark.parametrize("linker", LINKERS)
def test_local_remove_useless_assert_drops_true_conditions(linker):
    x = vec3("x")
    out = assert_op(x, np.array(True), pt.all(x > 0))
    fgraph = _rewrite(tb.local_remove_useless_assert, [out], [x])
    # PyTensor 2.38.3: one Assert left, with the one non-constant condition.
    asserts = [n for n in fgraph.toposort() if isinstance(n.op, Assert)]
    assert len(asserts) == 1 and len(asserts[0].inputs) == 2
    np.testing.assert_array_equal(_values(fgraph, [1.0, 2, 3], linker=linker)[0], [1, 2, 3])
    with pytest.raises(AssertionError):
        _values(fgraph, [-1.0, 2, 3], linker=linker)


def test_local_remove_useless_assert_removes_all_true_assert():
    x = vec3("x")
    fgraph = _rewrite(tb.local_remove_useless_assert, [assert_op(x, np.array(True))], [x])
    assert fgraph.outputs[0] is fgraph.inputs[0]


def test_local_remove_all_assert_runs_only_with_unsafe():
    x = vec3("x")
    out = assert_op(x, pt.all(x > 0))
    safe = opweave.function([x], out)
    with pytest.raises(AssertionError):
        safe(np.array([-1.0, 2, 3]))
    unsafe = opweave.function([x], out, mode=get_default_mode().including("unsafe"))
    np.testing.assert_array_equal(unsafe(np.array([-1.0, 2, 3])), [-1, 2, 3])
    assert not any(isinstance(n.op, Assert) for n in unsafe.maker.fgraph.toposort())


def test_excluding_by_pytensor_name_turns_rewrite_off():
    x = vec3("x")
    out = pt.alloc(x, 3)
    kept = opweave.function([x], out, mode=get_default_mode().excluding("local_useless_alloc"))
    removed = opweave.function([x], out)
    assert any(isinstance(n.op, Alloc) for n in kept.maker.fgraph.toposort())
    assert not any(isinstance(n.op, Alloc) for n in removed.maker.fgraph.toposort())
    np.testing.assert_array_equal(kept(np.arange(3.0)), removed(np.arange(3.0)))


# ---------------------------------------------------------------------- switch / cast


@pytest.mark.parametrize("linker", LINKERS)
def test_local_useless_switch(linker):
    x, y, c = vec3("x"), vec3("y"), vec3("c")
    fg = _rewrite(tb.local_useless_switch, [pt.switch(np.array([0, 0, 0]), x, y)], [x, y])
    assert fg.outputs[0] is fg.inputs[1]
    fg = _rewrite(tb.local_useless_switch, [pt.switch(c, x, x)], [c, x])
    assert fg.outputs[0] is fg.inputs[1]  # PyTensor 2.38.3: no node left


@pytest.mark.parametrize("linker", LINKERS)
def test_local_merge_switch_same_cond(linker):
    x, y, c = vec3("x"), vec3("y"), vec3("c")
    out = pt.switch(c, x, y) + pt.switch(c, y * 2, x)
    fg = _rewrite(tb.local_merge_switch_same_cond, [out], [c, x, y])
    # PyTensor 2.38.3: Add, Add, Switch (the Mul stays)
    assert [o for o in _ops(fg) if o[0] == "Elemwise" and o[1] != "Mul"] == [
        ("Elemwise", "Add"),
        ("Elemwise", "Add"),
        ("Elemwise", "Switch"),
    ]
    cv, xv, yv = np.array([1.0, 0, 1]), np.arange(3.0), np.array([5.0, 6, 7])
    expected = np.where(cv, xv, yv) + np.where(cv, yv * 2, xv)
    np.testing.assert_array_equal(_values(fg, cv, xv, yv, linker=linker)[0], expected)


@pytest.mark.parametrize(
    ("mid", "last", "n_casts"),
    # PyTensor 2.38.3: int32->int64->float64 and int32->float32->float32 leave one Cast,
    # int32->int8->int32 (not an upcast) leaves both.
    [("int64", "float64", 1), ("float32", "float32", 1), ("int8", "int32", 2)],
)
def test_local_cast_cast(mid, last, n_casts):
    iv = pt.ivector("iv")
    fg = _rewrite(tb.local_cast_cast, [pt.cast(pt.cast(iv, mid), last)], [iv])
    assert [o[1] for o in _ops(fg)] == ["Cast"] * n_casts
    value = np.array([1, 300, -5], dtype="int32")
    expected = value.astype(mid).astype(last)
    np.testing.assert_array_equal(_values(fg, value, linker="py")[0], expected)


def test_is_an_upcast_and_elemwise_of():
    assert tb.is_an_upcast("int32", "int64") and tb.is_an_upcast("int8", "float32")
    assert not tb.is_an_upcast("int64", "int32") and not tb.is_an_upcast("float64", "int64")
    pattern = tb.elemwise_of(ps.Cast)
    assert pattern.matches(pt.cast(pt.ivector(), "int64").owner.op)
    assert not pattern.matches(pt.exp(pt.vector()).owner.op)
    assert tb.local_cast_cast.scalar_tracks() == (ps.Cast,)


# ---------------------------------------------------------------------- join / split / sum


@pytest.mark.parametrize("linker", LINKERS)
def test_join_rewrites(linker):
    x, y, s = vec3("x"), vec3("y"), pt.scalar("s")
    fg = _rewrite(tb.local_join_1, [pt.join(0, x)], [x])
    assert fg.outputs[0] is fg.inputs[0]
    empty = pt.tensor("e", shape=(0,))
    fg = _rewrite(tb.local_join_empty, [pt.join(0, x, empty, y)], [x, empty, y])
    (join_node,) = [n for n in fg.toposort() if isinstance(n.op, Join)]
    assert len(join_node.inputs) == 3
    joined = pt.join(0, pt.stack([s, s]), pt.stack([s]), x)
    fg = _rewrite(tb.local_join_make_vector, [joined], [s, x])
    # PyTensor 2.38.3: one MakeVector of the three scalars, then the Join
    (mv,) = [n for n in fg.toposort() if isinstance(n.op, MakeVector)]
    assert len(mv.inputs) == 3
    got = _values(fg, 2.0, np.arange(3.0), linker=linker)[0]
    np.testing.assert_array_equal(got, [2, 2, 2, 0, 1, 2])


@pytest.mark.parametrize("linker", LINKERS)
def test_local_sum_make_vector_and_useless_split(linker):
    s = pt.scalar("s")
    fg = _rewrite(tb.local_sum_make_vector, [pt.sum(pt.stack([s, s * 2]))], [s])
    # PyTensor 2.38.3: Mul, Add
    assert _ops(fg) == [("Elemwise", "Mul"), ("Elemwise", "Add")]
    assert _values(fg, 1.5, linker=linker)[0] == 4.5
    x = vec3("x")
    fg = _rewrite(tb.local_useless_split, [pt.split(x, [3], 1)[0]], [x])
    assert not any(type(n.op).__name__ == "Split" for n in fg.toposort())
    np.testing.assert_array_equal(_values(fg, np.arange(3.0), linker=linker)[0], [0, 1, 2])


# ---------------------------------------------------------------------- alloc / fill / elemwise


@pytest.mark.parametrize("linker", LINKERS)
def test_alloc_rewrites(linker):
    x, s = vec3("x"), pt.scalar("s")
    fg = _rewrite(tb.local_useless_alloc, [pt.alloc(x, 3)], [x])
    assert fg.outputs[0] is fg.inputs[0]
    fg = _rewrite(tb.local_alloc_sink_dimshuffle, [pt.alloc(x, 1, 1, 3)], [x])
    assert [o[0] for o in _ops(fg)] == ["DimShuffle"]  # PyTensor 2.38.3
    assert _values(fg, np.arange(3.0), linker=linker)[0].shape == (1, 1, 3)
    fg = _rewrite(tb.local_merge_alloc, [pt.alloc(pt.alloc(s, 1, 3), 2, 3)], [s])
    assert len([n for n in fg.toposort() if isinstance(n.op, Alloc)]) == 1
    np.testing.assert_array_equal(_values(fg, 4.0, linker=linker)[0], np.full((2, 3), 4.0))
    fg = _rewrite(tb.local_alloc_unary, [pt.exp(pt.alloc(s, 2, 3))], [s])
    assert isinstance(fg.outputs[0].owner.op, Alloc)
    np.testing.assert_allclose(_values(fg, 0.5, linker=linker)[0], np.full((2, 3), np.exp(0.5)))
    fg = _rewrite(tb.local_dimshuffle_alloc, [pt.alloc(x, 2, 3).T], [x])
    assert isinstance(fg.outputs[0].owner.op, Alloc)
    np.testing.assert_array_equal(
        _values(fg, np.arange(3.0), linker=linker)[0], np.tile(np.arange(3.0), (2, 1)).T
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_fill_and_elemwise_alloc_rewrites(linker):
    x, m = vec3("x"), pt.tensor("m", shape=(2, 3))
    fg = _rewrite(tb.local_useless_fill, [pt.second(x, x * 2)], [x])
    assert fg.outputs[0].owner.op.scalar_op.__class__ is ps.Mul
    fg = _rewrite(tb.local_second_to_alloc, [pt.second(m, x)], [m, x])
    assert isinstance(fg.outputs[0].owner.op, Alloc)
    xv, mv = np.arange(3.0), np.ones((2, 3))
    np.testing.assert_array_equal(_values(fg, mv, xv, linker=linker)[0], np.tile(xv, (2, 1)))
    fg = _rewrite(tb.local_elemwise_alloc, [pt.alloc(x, 2, 3) + m], [x, m])
    assert isinstance(fg.outputs[0].owner.op, Elemwise)
    np.testing.assert_array_equal(_values(fg, xv, mv, linker=linker)[0], xv + mv)


@pytest.mark.parametrize("linker", LINKERS)
def test_local_useless_elemwise(linker):
    x = vec3("x")
    fg = _rewrite(tb.local_useless_elemwise, [pt.eq(x, x)], [x])
    assert not any(isinstance(n.op, Elemwise) for n in fg.toposort())
    np.testing.assert_array_equal(_values(fg, np.arange(3.0), linker=linker)[0], [1, 1, 1])
    b = pt.tensor("b", shape=(3,), dtype="bool")
    fg = _rewrite(tb.local_useless_elemwise, [pt.and_(b, np.array([True] * 3))], [b])
    assert fg.outputs[0] is fg.inputs[0]
    fg = _rewrite(tb.local_useless_elemwise, [pt.or_(b, np.array([True] * 3))], [b])
    bv = np.array([True, False, True])
    np.testing.assert_array_equal(_values(fg, bv, linker=linker)[0], [True] * 3)


def test_identity_rewrites():
    x, s = vec3("x"), ps.float64("s")
    for rewriter, out, inputs in (
        (tb.local_view_op, view_op(x), [x]),
        (tb.remove_tensor_copy, pt.tensor_copy(x), [x]),
    ):
        fg = _rewrite(rewriter, [out], inputs)
        assert fg.outputs[0] is fg.inputs[0]
    t = pt.scalar("t")
    fg = _rewrite(
        tb.local_tensor_scalar_tensor, [pt.tensor_from_scalar(pt.scalar_from_tensor(t))], [t]
    )
    assert fg.outputs[0] is fg.inputs[0]
    fg = _rewrite(
        tb.local_scalar_tensor_scalar, [pt.scalar_from_tensor(pt.tensor_from_scalar(s))], [s]
    )
    assert fg.outputs[0] is fg.inputs[0]


def test_join_to_repeat_and_extract_diag_of_transpose():
    x, m = vec3("x"), pt.matrix("m")
    fg = _rewrite(tb.local_join_to_repeat, [pt.join(0, x, x)], [x])
    assert not any(isinstance(n.op, Join) for n in fg.toposort())
    np.testing.assert_array_equal(_values(fg, np.arange(3.0), linker="vm")[0], [0, 1, 2] * 2)
    fg = _rewrite(tb.extract_diag_of_transpose, [pt.diagonal(m.T, offset=1)], [m])
    assert fg.outputs[0].owner.inputs[0] is fg.inputs[0]
    mv = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(_values(fg, mv, linker="vm")[0], np.diagonal(mv.T, offset=1))


def test_shape_helpers():
    x, m = pt.vector("x"), pt.tensor("m", shape=(2, 3))
    row = pt.tensor("r", shape=(1, 3))
    assert tb.broadcasted_by(x, m) and tb.broadcasted_by(row, m)
    assert not tb.broadcasted_by(m, row)
    assert tb.get_simplified_shape(m, fgraph=None) == (2, 3)
    shape = tb.get_simplified_broadcast_shape(row, m, fgraph=None)
    assert shape == [2, 3]
    c1, c2 = pt.constant(np.array([1, 2], "int32")), pt.constant(np.array([1.0, 2.0]))
    assert tb.equivalent_up_to_constant_casting(c1, c2)
    assert not tb.equivalent_up_to_constant_casting(c1, pt.constant(np.array([1.0, 3.0])))
    node = (m + row).owner
    out = tb.broadcast_like_elemwise(np.array(1, "int64"), node, fgraph=None)
    assert out.type.dtype == "float64" and out.type.shape == (2, 3)


# ---------------------------------------------------------------------- graph.rewriting


def test_graph_rewriting_classes():
    x, y = vec3("x"), vec3("y")
    sub = gb.SubstitutionNodeRewriter(pt.add, pt.mul)
    fg = _rewrite(sub, [x + y], [x, y])
    assert fg.outputs[0].owner.op == pt.mul
    assert str(sub) == f"{pt.add} -> {pt.mul}"
    assert issubclass(gb.WalkingGraphRewriter, gb.NodeProcessingGraphRewriter)
    assert issubclass(gb.EquilibriumGraphRewriter, gb.NodeProcessingGraphRewriter)
    assert issubclass(gb.GraphRewriter, gb.Rewriter) and issubclass(gb.NodeRewriter, gb.Rewriter)
    tracker = gb.OpToRewriterTracker()
    for rw in (tb.local_useless_alloc, tb.local_cast_cast, sub):
        tracker.add_tracker(rw)
    assert tracker.get_trackers(pt.add) == [tb.local_cast_cast, sub]
    assert tracker.get_trackers(pt.alloc(x, 3).owner.op) == [tb.local_useless_alloc]
    assert gb.merge_dict({"a": 1, "b": 2}, {"b": 3, "c": 4}) == {"a": 1, "b": 5, "c": 4}
    assert isinstance(gb.get_active_mode(fg), Mode)


def test_change_tracker_and_merge_feature():
    x = vec3("x")
    fg = FunctionGraph([x], [pt.exp(x) + pt.exp(x)], clone=False)
    tracker, merge = gb.ChangeTracker(), gb.MergeFeature()
    fg.attach_feature(tracker)
    fg.attach_feature(merge)
    assert fg.change_tracker is tracker and fg.merge_feature is merge
    assert len(merge.scheduled) == 1  # the two exp(x) nodes
    assert not tracker.changed
    fg.replace(fg.outputs[0], pt.log(x))
    assert tracker.changed and tracker.nb_imported == 1
    tracker.reset()
    assert not tracker.changed


def test_pre_constant_merge_and_pre_greedy_node_rewriter():
    x = pt.scalar("x")
    fg = FunctionGraph([x], [pt.exp(x)], clone=False)
    c1, c2 = pt.constant(np.float64(2.0)), pt.constant(np.float64(2.0))
    out = pt.add(pt.mul(x, c1), c2)
    gb.pre_constant_merge(fg, [out])
    assert out.owner.inputs[1] is out.owner.inputs[0].owner.inputs[1]
    v = vec3("v")
    y = pt.alloc(pt.exp(v), 3)
    rewritten = gb.pre_greedy_node_rewriter(fg, [tb.local_useless_alloc], y)
    assert rewritten.owner.op == pt.exp


def test_rewrite_subgraph_and_clients_at_depth():
    x = vec3("x")
    frontier = pt.exp(x)
    out = frontier * 1.0
    (new,) = rewrite_subgraph([out], [frontier])
    assert new is frontier and frontier.owner is not None  # the owner is restored
    fg = FunctionGraph([x], [pt.log(pt.exp(x) + 1)], clone=False)
    exp_node = fg.outputs[0].owner.inputs[0].owner.inputs[0].owner
    (client,) = get_clients_at_depth(fg, exp_node, 2)
    assert client is fg.outputs[0].owner


# ---------------------------------------------------------------------- ifelse


@pytest.mark.parametrize("linker", LINKERS)
def test_ifelse_rewrites(linker):
    c, x, y = pt.scalar("c"), vec3("x"), vec3("y")
    out = IFELSE.ifelse(c, IFELSE.ifelse(c, x, y), y * 2)
    fg = _rewrite(IFELSE.cond_merge_ifs_true, [out], [c, x, y])
    assert fg.outputs[0].owner.inputs[1] is fg.inputs[1]
    out = IFELSE.ifelse(c, x, IFELSE.ifelse(c, x * 2, y))
    fg = _rewrite(IFELSE.cond_merge_ifs_false, [out], [c, x, y])
    assert fg.outputs[0].owner.inputs[2] is fg.inputs[2]
    a, b = IFELSE.ifelse(c, [x, x], [y, y])
    fg = _rewrite(IFELSE.cond_remove_identical, [a, b], [c, x, y])
    assert fg.outputs[0] is fg.outputs[1] and fg.outputs[0].owner.op.n_outs == 1
    fg = _rewrite(
        IFELSE.ifelse_lift_single_if_through_acceptable_ops,
        [pt.exp(IFELSE.ifelse(c, x, y))],
        [c, x, y],
    )
    assert isinstance(fg.outputs[0].owner.op, IFELSE.IfElse)
    xv, yv = np.arange(3.0), np.ones(3)
    np.testing.assert_allclose(_values(fg, 0.0, xv, yv, linker=linker)[0], np.exp(yv))
    np.testing.assert_allclose(_values(fg, 1.0, xv, yv, linker=linker)[0], np.exp(xv))


def test_cond_merge_and_make_inplace():
    c, x, y = pt.scalar("c"), vec3("x"), vec3("y")
    fg = FunctionGraph([c, x, y], [IFELSE.ifelse(c, x, y), IFELSE.ifelse(c, y, x)], clone=True)
    assert IFELSE.CondMerge().rewrite(fg)
    assert len([n for n in fg.toposort() if isinstance(n.op, IFELSE.IfElse)]) == 1
    f = opweave.function([c, x, y], IFELSE.ifelse(c, x + 1, y))
    (node,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, IFELSE.IfElse)]
    assert node.op.as_view
    np.testing.assert_array_equal(f(1.0, np.zeros(3), np.ones(3)), [1, 1, 1])


# ---------------------------------------------------------------------- scan


def test_scan_utils_helpers():
    x = pt.vector("x")
    new = SCAN_UTILS.safe_new(x, "_copy")
    assert new.type == x.type and new.name == "x_copy" and new.owner is None
    assert SCAN_UTILS.safe_new(x, dtype="float32").type.dtype == "float32"
    f = opweave.function([x], SCAN_UTILS.expand_empty(x, 2)[:3])
    np.testing.assert_array_equal(f(np.arange(3.0)), [0, 1, 2])
    assert opweave.function([x], SCAN_UTILS.expand_empty(x, 2).shape)(np.arange(3.0))[0] == 5
    y = pt.vector("y")
    validator = SCAN_UTILS.Validator(valid=[x], invalid=[y])
    e = pt.exp(x)
    assert validator.check(e) == (e, True)
    assert validator.check(x + y) is None
    new_inputs, (new_out,) = SCAN_UTILS.reconstruct_graph([x], [pt.exp(x)], tag="_r")
    assert new_out.owner.inputs[0] is new_inputs[0] and new_inputs[0].name == "x_r"
    replaced = SCAN_UTILS.forced_replace(pt.exp(x) * (1 - pt.exp(x)), pt.exp(x), y)
    assert x not in set(ancestors([replaced]))  # every exp(x) was replaced
    g = opweave.function([x, y], replaced, on_unused_input="ignore")
    assert g(np.zeros(1), np.array([0.25]))[0] == 0.25 * 0.75
    with pytest.raises(SCAN_UTILS.InnerFunctionError):
        raise SCAN_UTILS.InnerFunctionError("inner")


def test_scan_op_helpers_and_layout_accessors():
    with pytest.raises(TypeError, match="broadcast pattern"):
        SCAN_OP.check_broadcast(pt.tensor(shape=(1, None)), pt.tensor(shape=(None, None)))
    SCAN_OP.check_broadcast(pt.matrix(), pt.matrix())
    x, a = pt.vector("x"), pt.scalar("a")
    res, _ = opweave.scan(
        lambda xi, acc, a: [acc + a * xi, xi * 2],
        sequences=[x],
        outputs_info=[pt.as_tensor(np.float64(0)), None],
        non_sequences=[a],
    )
    node = res[0].owner
    while not isinstance(node.op, SCAN_OP.Scan):
        node = next(i.owner for i in node.inputs if i.owner is not None)
    op = node.op
    assert isinstance(op, SCAN_OP.ScanMethodsMixin)
    assert op.outer_seqs(node.inputs) == [node.inputs[1]]
    assert len(op.outer_sitsot(node.inputs)) == 1 and op.outer_mitsot(node.inputs) == []
    assert op.outer_non_seqs(node.inputs)[-1] is a
    assert len(op.inner_nitsot_outs(op.inner_outputs)) == 1
    assert SCAN_BASIC.get_updates_and_outputs is SCAN_UTILS.get_updates_and_outputs


def test_scan_checkpoints_matches_scan():
    x, a = pt.vector("x"), pt.scalar("a")
    zero = pt.as_tensor(np.float64(0))

    def step(xi, acc, a):
        return acc + a * xi

    res, _ = opweave.scan(step, sequences=[x], outputs_info=[zero], non_sequences=[a])
    ck, _ = opweave.scan.scan_checkpoints(
        step, sequences=[x], outputs_info=[zero], non_sequences=[a], save_every_N=3
    )
    f = opweave.function(
        [x, a], [res[-1], ck[-1], opweave.grad(res[-1], a), opweave.grad(ck[-1], a)]
    )
    r, c, gr, gc = f(np.arange(7.0), 2.0)
    assert r == c == 2.0 * np.arange(7.0).sum()
    assert gr == gc == np.arange(7.0).sum()


@pytest.mark.parametrize("linker", LINKERS)
def test_alloc_sink_dimshuffle_with_symbolic_length(linker):
    x = pt.vector("x")
    fg = _rewrite(tb.local_alloc_sink_dimshuffle, [pt.alloc(x, 1, 1, x.shape[0])], [x])
    # PyTensor 2.38.3: only the ExpandDims is left
    assert [o[0] for o in _ops(fg)] == ["DimShuffle"]
    out = _values(fg, np.arange(4.0), linker=linker)[0]
    np.testing.assert_array_equal(out, np.arange(4.0).reshape(1, 1, 4))
