"""The graph layer under PyTensor's newest names and layout.

``opweave.graph.traversal`` (graph walks), ``opweave.graph.replace`` (``clone_replace``,
``graph_replace``, ``vectorize_graph``), ``FunctionGraph.freeze`` and the
``FrozenFunctionGraph``, ``NominalVariable``, ``FunctionGraph.remove_*``, the rewriter
constructors of ``opweave.graph.rewriting.basic``, ``Variable.dprint`` and
``Variable.eval`` with ``givens``/``mode``, and ``opweave.tensor.rewriting.elemwise``.
"""

from __future__ import annotations

import copy
import importlib
import pickle
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.graph import basic, fg, replace, traversal
from opweave.graph.basic import AbstractApply, Apply, FrozenApply, NominalVariable
from opweave.graph.features import DestroyHandler, Feature
from opweave.graph.fg import FrozenFunctionGraph, FunctionGraph
from opweave.graph.replace import (
    _vectorize_node,
    clone_replace,
    graph_replace,
    vectorize_graph,
    vectorize_node,
)
from opweave.graph.rewriting import basic as rw
from opweave.graph.traversal import (
    ancestors,
    apply_ancestors,
    apply_depends_on,
    applys_between,
    explicit_graph_inputs,
    general_toposort,
    get_var_by_name,
    graph_inputs,
    io_toposort,
    orphans_between,
    toposort,
    toposort_with_orderings,
    truncated_graph_inputs,
    variable_ancestors,
    variable_depends_on,
    vars_between,
    walk,
    walk_toposort,
)
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.reductions import Argmax
from opweave.tensor.type import TensorType

PY = Mode(linker="py")
RNG = np.random.default_rng(20260820)


def run(inputs: list[Any], outputs: Any, *values: Any) -> Any:
    return opweave.function(inputs, outputs, mode=PY)(*values)


# ====================================================================== names


TRAVERSAL_NAMES = [
    "ancestors",
    "apply_ancestors",
    "apply_depends_on",
    "applys_between",
    "explicit_graph_inputs",
    "general_toposort",
    "get_var_by_name",
    "graph_inputs",
    "io_toposort",
    "orphans_between",
    "toposort",
    "toposort_with_orderings",
    "truncated_graph_inputs",
    "variable_ancestors",
    "variable_depends_on",
    "vars_between",
    "walk",
    "walk_toposort",
]


@pytest.mark.parametrize("name", TRAVERSAL_NAMES)
def test_traversal_names_are_importable_and_callable(name: str) -> None:
    assert callable(getattr(traversal, name)) and name in traversal.__all__


@pytest.mark.parametrize(
    ("old", "name"),
    [("basic", n) for n in TRAVERSAL_NAMES] + [("basic", "clone_replace")],
)
def test_old_locations_give_the_same_functions(old: str, name: str) -> None:
    module = importlib.import_module(f"opweave.graph.{old}")
    new = getattr(traversal, name, None) or getattr(replace, name)
    assert getattr(module, name) is new


def test_an_unknown_name_of_basic_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'not_a_walk'"):
        basic.not_a_walk  # noqa: B018


def test_package_level_names() -> None:
    import opweave.graph as g

    assert g.graph_replace is graph_replace and g.vectorize_graph is vectorize_graph
    assert g.FrozenFunctionGraph is FrozenFunctionGraph and g.NominalVariable is NominalVariable
    assert g.clone_replace is clone_replace and g.toposort is toposort
    assert fg.FrozenFunctionGraph is FrozenFunctionGraph


@pytest.mark.parametrize(
    "name",
    [
        "dfs_rewriter",
        "in2out",
        "out2in",
        "walking_rewriter",
        "EquilibriumGraphRewriter",
        "WalkingGraphRewriter",
        "node_rewriter",
        "graph_rewriter",
        "inplace_graph_rewriter",
        "FromFunctionGraphRewriter",
        "SequentialGraphRewriter",
        "SequentialNodeRewriter",
        "OpKeyGraphRewriter",
        "PatternNodeRewriter",
        "MergeOptimizer",
        "copy_stack_trace",
        "NodeRewriter",
        "GraphRewriter",
    ],
)
def test_rewriting_basic_names(name: str) -> None:
    import opweave.graph.rewriting as package

    assert getattr(rw, name) is getattr(package, name)


def test_tensor_rewriting_elemwise_reexports() -> None:
    from opweave.tensor.rewriting import elemwise, fusion, inplace, reduce_fusion

    assert elemwise.FusionOptimizer is fusion.FusionOptimizer
    assert elemwise.InplaceElemwiseOptimizer is inplace.InplaceElemwiseOptimizer
    assert elemwise.local_careduce_fusion is reduce_fusion.local_careduce_fusion


# ====================================================================== traversal


@pytest.fixture
def chain() -> tuple[Any, ...]:
    """``c = (exp(x) + y) * z`` and its parts."""
    x, y, z = ot.dscalar("x"), ot.dscalar("y"), ot.dscalar("z")
    a = ot.exp(x)
    b = a + y
    c = b * z
    return x, y, z, a, b, c


def test_graph_inputs_and_ancestors(chain: tuple[Any, ...]) -> None:
    x, y, z, a, b, c = chain
    # PyTensor's order (checked against it): last input first, depth first.
    assert list(graph_inputs([c])) == [z, y, x]
    assert list(ancestors([c])) == [c, z, b, y, a, x]
    assert variable_ancestors is ancestors
    # A blocker is yielded but what computes it is not visited; it is no root.
    assert list(ancestors([c], blockers=[a])) == [c, z, b, y, a]
    assert list(graph_inputs([c], blockers=[b])) == [z]


def test_apply_ancestors_and_applys_between(chain: tuple[Any, ...]) -> None:
    x, y, z, a, b, c = chain
    assert list(apply_ancestors([c])) == [c.owner, b.owner, a.owner]
    assert list(applys_between([a], [c])) == [c.owner, b.owner]
    assert list(applys_between([x, y, z], [c])) == [c.owner, b.owner, a.owner]


def test_vars_between_includes_the_other_outputs_of_nodes_crossed() -> None:
    x = ot.dvector("x")
    first, second = Elemwise(_two_outputs())(x)
    total = first + x
    assert set(vars_between([x], [total])) == {total, first, second, x}
    assert second not in set(ancestors([total]))
    assert set(vars_between([first], [total])) == {total, first, x}


def _two_outputs() -> ps.Composite:
    a = ps.float64("a")
    return ps.Composite([a], [ps.exp(a), ps.log(a)])


def test_orphans_between(chain: tuple[Any, ...]) -> None:
    x, y, z, _a, b, c = chain
    assert list(orphans_between([x], [c])) == [y, z]
    assert list(orphans_between([b], [c])) == [z]
    two = ot.constant(2.0)
    assert list(orphans_between([x, y, z], [c * two])) == [two]


def test_explicit_graph_inputs_leave_out_constants_and_shared_variables() -> None:
    x, y = ot.dscalar("x"), ot.dscalar("y")
    s = opweave.shared(np.float64(1.5), name="s")
    out = (x * s + 2.0) * y
    assert list(explicit_graph_inputs(out)) == [y, x]  # PyTensor's order
    assert list(explicit_graph_inputs([out, x])) == [x, y]
    assert s in set(graph_inputs([out]))


def test_depends_on(chain: tuple[Any, ...]) -> None:
    x, y, z, a, b, c = chain
    assert variable_depends_on(c, x) and variable_depends_on(c, [z])
    assert not variable_depends_on(a, [y, z]) and variable_depends_on(a, a)
    assert apply_depends_on(c.owner, a.owner) and apply_depends_on(c.owner, [b.owner])
    assert not apply_depends_on(a.owner, c.owner)


def test_truncated_graph_inputs(chain: tuple[Any, ...]) -> None:
    x, y, z, a, b, c = chain
    assert truncated_graph_inputs([c]) == [c]
    assert truncated_graph_inputs([c, c, b]) == [c, b]
    assert truncated_graph_inputs([c], [a]) == [z, y, a]
    assert truncated_graph_inputs([c], [b]) == [z, b]
    # Two included variables, one computed from the other: the walk goes above both.
    assert truncated_graph_inputs([c], [b, x]) == [z, b, y, x]
    # An included variable the outputs do not use is not returned.
    w = ot.dscalar("w")
    assert truncated_graph_inputs([c], [a, w]) == [z, y, a]
    assert truncated_graph_inputs([c, b], [x]) == [y, x, z]
    # An output computed from another output: the other one suffices.
    v = y * z
    assert truncated_graph_inputs([ot.exp(v), v], [x]) == [v]


def test_toposorts(chain: tuple[Any, ...]) -> None:
    x, y, z, a, b, c = chain
    order = [a.owner, b.owner, c.owner]
    assert io_toposort([x, y, z], [c]) == order
    assert list(toposort([c])) == order
    assert list(toposort([c], blockers=[b])) == [c.owner]
    assert list(toposort_with_orderings([c], orderings={b.owner: [a.owner]})) == order


def test_io_toposort_with_orderings_and_cycles() -> None:
    x = ot.dscalar("x")
    p, q = ot.exp(x), ot.log(x)
    out = p + q
    order = io_toposort([x], [out], {p.owner: [q.owner]})
    assert order.index(q.owner) < order.index(p.owner)
    with pytest.raises(ValueError, match="cycle"):
        io_toposort([x], [out], {p.owner: [out.owner]})


def test_general_toposort_and_walk_toposort() -> None:
    deps = {"d": ["b", "c"], "b": ["a"], "c": ["a"], "a": []}
    order = general_toposort(["d"], lambda n: deps[n])
    assert order[0] == "a" and order[-1] == "d" and sorted(order) == ["a", "b", "c", "d"]
    assert list(walk_toposort(["d"], lambda n: deps[n])) == order
    with pytest.raises(ValueError, match="cycle"):
        general_toposort(["a"], lambda n: {"a": ["b"], "b": ["a"]}[n])


def test_walk_orders_and_children() -> None:
    tree = {1: [2, 3], 2: [4], 3: [4], 4: []}
    assert list(walk([1], lambda n: tree[n])) == [1, 2, 3, 4]
    assert list(walk([1], lambda n: tree[n], bfs=False)) == [1, 3, 4, 2]
    assert next(walk([1], lambda n: tree[n], return_children=True)) == (1, [2, 3])


def test_get_var_by_name(chain: tuple[Any, ...]) -> None:
    x, _y, _z, _a, _b, c = chain
    assert get_var_by_name([c], "x") == (x,)
    assert get_var_by_name([c], "nothing") == ()
    assert get_var_by_name([c], c.auto_name) == (c,)


# ====================================================================== replace


def test_graph_replace_of_an_intermediate_variable() -> None:
    x, y, w = ot.dvector("x"), ot.dvector("y"), ot.dvector("w")
    a = ot.exp(x)
    e = ot.exp(y)  # does not depend on what is replaced: shared with the new graph
    out = a * e + a
    new = graph_replace(out, {a: ot.log(w)})
    assert out.owner.inputs[1] is a  # the original graph is untouched
    assert x not in set(graph_inputs([new])) and w in set(graph_inputs([new]))
    assert e in set(ancestors([new]))
    yv, wv = RNG.uniform(1, 2, 3), RNG.uniform(1, 2, 3)
    np.testing.assert_allclose(run([y, w], new, yv, wv), np.log(wv) * np.exp(yv) + np.log(wv))


def test_graph_replace_returns_the_form_it_was_given() -> None:
    x, y = ot.dscalar("x"), ot.dscalar("y")
    out1, out2 = x + 1.0, x * 2.0
    new = graph_replace([out1, out2], [(x, y)])
    assert isinstance(new, list) and len(new) == 2
    np.testing.assert_allclose(run([y], new, 3.0), [4.0, 6.0])
    single = graph_replace(out1, {x: y})
    np.testing.assert_allclose(run([y], single, 3.0), 4.0)


def test_graph_replace_keeps_unaffected_outputs() -> None:
    x, y, z = ot.dscalar("x"), ot.dscalar("y"), ot.dscalar("z")
    keep = ot.exp(y)
    new_keep, new_other = graph_replace([keep, x + y], {x: z})
    assert new_keep is keep
    np.testing.assert_allclose(run([y, z], new_other, 1.0, 2.0), 3.0)


def test_graph_replace_strictness_and_types() -> None:
    x, y, u = ot.dscalar("x"), ot.dscalar("y"), ot.dscalar("unused")
    out = x + 1.0
    with pytest.raises(ValueError, match="not part of the graph: unused"):
        graph_replace(out, {u: y})
    assert graph_replace(out, {u: y}, strict=False) is out
    with pytest.raises(TypeError):
        graph_replace(out, {x: ot.dvector("v")})
    with pytest.raises(TypeError, match="Variables to Variables"):
        graph_replace(out, {x: "2.0"})  # type: ignore[dict-item]
    # As in PyTensor, a number or an array stands for a constant of the old Type.
    for value in (2.0, 2, np.float64(2.0), np.array(2.0)):
        new = graph_replace(out, {x: value})  # type: ignore[dict-item]
        assert new.dtype == "float64"
        np.testing.assert_array_equal(new.eval(), 3.0)
        cloned = clone_replace(out, {x: value}, rebuild_strict=False)  # type: ignore[dict-item]
        np.testing.assert_array_equal(cloned.eval(), 3.0)
    with pytest.raises(TypeError, match="dict"):
        graph_replace(out, 3)  # type: ignore[arg-type]


def test_clone_replace_copies_every_node() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    e = ot.exp(y)
    out = x + e
    new = clone_replace(out, {x: y * 2.0})
    assert new.owner is not out.owner and new.owner.inputs[1].owner is not e.owner
    yv = RNG.normal(size=3)
    np.testing.assert_allclose(run([y], new, yv), yv * 2 + np.exp(yv))


def test_clone_replace_rebuild_strict() -> None:
    x = ot.dvector("x")
    f32 = ot.fvector("f")
    out = ot.exp(x)
    with pytest.raises(TypeError):
        clone_replace(out, {x: f32})
    loose = clone_replace(out, {x: f32}, rebuild_strict=False)
    assert loose.type.dtype == "float32"
    fv = np.array([0.0, 1.0], dtype="float32")
    np.testing.assert_allclose(run([f32], loose, fv), np.exp(fv), rtol=1e-6)


# ====================================================================== vectorize_graph


def test_vectorize_a_softmax_rowwise() -> None:
    x = ot.dvector("x")
    y = ot.exp(x) / ot.exp(x).sum()
    xs = ot.dmatrix("xs")
    ys = vectorize_graph(y, {x: xs})
    assert ys.type.ndim == 2
    xv = RNG.normal(size=(3, 4))
    expected = np.exp(xv) / np.exp(xv).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(run([xs], ys, xv), expected)


def test_vectorize_broadcasts_unbatched_inputs_and_reductions() -> None:
    x, m = ot.dvector("x"), ot.dmatrix("m")
    outs = [
        x + m,
        (x * m).sum(axis=0),
        (x.dimshuffle("x", 0) * m).max(),
        m.T * x.dimshuffle(0, "x"),
    ]
    xs = ot.dmatrix("xs")
    new = vectorize_graph(outs, {x: xs})
    assert [v.type.ndim for v in new] == [3, 2, 1, 3]
    xv, mv = RNG.normal(size=(5, 3)), RNG.normal(size=(2, 3))
    got = run([xs, m], new, xv, mv)
    np.testing.assert_allclose(got[0], xv[:, None, :] + mv)
    np.testing.assert_allclose(got[1], (xv[:, None, :] * mv).sum(axis=1))
    np.testing.assert_allclose(got[2], (xv[:, None, :] * mv).max(axis=(1, 2)))
    np.testing.assert_allclose(got[3], mv.T[None] * xv[:, :, None])


def test_vectorize_with_two_batch_dimensions() -> None:
    x = ot.dvector("x")
    out = ot.exp(x).sum() * x
    xs = ot.dtensor3("xs")
    new = vectorize_graph(out, {x: xs})
    xv = RNG.normal(size=(2, 3, 4))
    np.testing.assert_allclose(run([xs], new, xv), np.exp(xv).sum(axis=2, keepdims=True) * xv)


def test_vectorize_an_inplace_elemwise() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = tm.add_inplace(x * 2.0, y)
    xs = ot.dmatrix("xs")
    new = vectorize_graph(out, {x: xs})
    assert new.owner.op.destroy_map == {}
    xv, yv = RNG.normal(size=(2, 3)), RNG.normal(size=3)
    np.testing.assert_allclose(run([xs, y], new, xv, yv), xv * 2 + yv)


def test_vectorize_without_batch_dims_rebuilds_any_op() -> None:
    x = ot.dmatrix("x")
    out = x.argmax(axis=0)
    other = ot.dmatrix("other")
    new = vectorize_graph(out, {x: other})
    assert isinstance(new.owner.op, Argmax) and new.owner.inputs[0] is other
    ov = RNG.normal(size=(3, 4))
    np.testing.assert_array_equal(run([other], new, ov), ov.argmax(axis=0))


def test_vectorize_an_op_without_a_rule_wraps_it_in_blockwise() -> None:
    from opweave.tensor.blockwise import Blockwise
    from opweave.tensor.sort import SortOp

    x = ot.dmatrix("x")
    new = vectorize_graph(ot.sort(x, axis=0), {x: ot.dtensor3("xs")})
    assert isinstance(new.owner.op, Blockwise)
    assert isinstance(new.owner.op.core_op, SortOp)
    xv = (np.arange(24.0).reshape(2, 3, 4) * 7) % 5
    got = opweave.function([new.owner.inputs[0]], new)(xv)
    np.testing.assert_array_equal(got, np.sort(xv, axis=1))


class _AxisArgmax(Argmax):
    """An Argmax with a registered vectorization rule (batch axes shift its axis)."""


@_vectorize_node.register(_AxisArgmax)
def _vectorize_axis_argmax(op: _AxisArgmax, node: Apply, x: Any) -> Apply:
    batch = x.type.ndim - node.inputs[0].type.ndim
    return _AxisArgmax(axis=tuple(a + batch for a in op.axis)).make_node(x)  # type: ignore[union-attr]


def test_a_registered_rule_is_used() -> None:
    x = ot.dmatrix("x")
    out = _AxisArgmax(axis=(1,))(x)
    xs = ot.dtensor3("xs")
    new = vectorize_graph(out, {x: xs})
    assert new.owner.op.axis == (2,)
    xv = RNG.normal(size=(2, 3, 4))
    np.testing.assert_array_equal(run([xs], new, xv), xv.argmax(axis=2))
    node = vectorize_node(out.owner, xs)
    assert node.op.axis == (2,)  # type: ignore[union-attr]


def test_vectorize_refuses_non_variables() -> None:
    x = ot.dvector("x")
    with pytest.raises(TypeError, match="Variables to Variables"):
        vectorize_graph(x + 1.0, {x: np.ones((2, 3))})  # type: ignore[dict-item]


# ====================================================================== freeze


def _fgraph(swap: bool = False, dtype: str = "float64") -> FunctionGraph:
    a = ot.vector("a", dtype=dtype)
    b = ot.vector("b", dtype=dtype)
    out = ot.exp(b) * a if swap else ot.exp(a) * b
    return FunctionGraph([a, b], [out + 1.0, a])


def test_equal_graphs_freeze_equal_with_equal_hashes() -> None:
    f1, f2 = _fgraph().freeze(), _fgraph().freeze()
    assert f1 == f2 and hash(f1) == hash(f2)
    assert {f1: "cached"}[f2] == "cached"
    assert f1.outputs[0] is f2.outputs[0]  # interned nodes


def test_different_graphs_freeze_different() -> None:
    base = _fgraph().freeze()
    assert base != _fgraph(swap=True).freeze()
    assert base != _fgraph(dtype="float32").freeze()
    x = ot.dvector("x")
    assert FunctionGraph([x], [x * 2.0]).freeze() != FunctionGraph([x], [x * 3.0]).freeze()
    assert FunctionGraph([x], [x * 2.0]).freeze() == FunctionGraph([x], [x * 2.0]).freeze()


def test_frozen_graph_parts_are_immutable() -> None:
    frozen = _fgraph().freeze()
    assert isinstance(frozen.inputs, tuple) and isinstance(frozen.outputs, tuple)
    assert isinstance(frozen.apply_nodes, frozenset)
    assert all(
        isinstance(n, FrozenApply) and isinstance(n.inputs, tuple) for n in frozen.toposort()
    )
    assert all(isinstance(i, NominalVariable) for i in frozen.inputs)
    with pytest.raises(AttributeError):
        frozen.inputs = ()  # type: ignore[misc]
    assert copy.copy(frozen) is frozen and copy.deepcopy(frozen) is frozen
    assert not hasattr(frozen.toposort()[0], "clone_with_new_inputs")


def test_frozen_graph_structure() -> None:
    source = _fgraph()
    frozen = source.freeze()
    assert [str(i) for i in frozen.inputs] == ["i0", "i1"]
    assert [str(n.op) for n in frozen.toposort()] == [str(n.op) for n in source.toposort()]
    assert frozen.outputs[1] is frozen.inputs[0]
    clients = frozen.clients
    assert ("output", 1) in clients[frozen.inputs[0]]
    assert frozen.outputs[0] in frozen and frozen.toposort()[0] in frozen
    assert frozen.variables >= set(frozen.inputs) | set(frozen.outputs)


def test_unfreeze_and_bind_compute_the_same() -> None:
    frozen = _fgraph().freeze()
    av, bv = RNG.normal(size=3), RNG.normal(size=3)
    thawed = frozen.unfreeze()
    assert isinstance(thawed, FunctionGraph)
    thawed.check_integrity()
    got = run(list(thawed.inputs), list(thawed.outputs), av, bv)
    np.testing.assert_allclose(got[0], np.exp(av) * bv + 1.0)
    np.testing.assert_allclose(got[1], av)
    p, q = ot.dvector("p"), ot.dvector("q")
    out, _ = frozen.bind([p, q])
    np.testing.assert_allclose(run([p, q], out, av, bv), np.exp(av) * bv + 1.0)
    with pytest.raises(ValueError, match="2 inputs"):
        frozen.bind([p])
    with pytest.raises(KeyError, match="no replacement"):
        frozen.bind({frozen.inputs[0]: p})


def test_frozen_graph_pickles_to_an_equal_graph() -> None:
    frozen = _fgraph().freeze()
    back = pickle.loads(pickle.dumps(frozen))
    assert back == frozen and hash(back) == hash(frozen)
    assert back.toposort()[0] is frozen.toposort()[0]


def test_constants_count_by_value_and_orphans_are_refused() -> None:
    x = ot.dvector("x")
    one = FunctionGraph([x], [x + ot.constant(2.0), ot.constant(5.0)]).freeze()
    two = FunctionGraph([x], [x + ot.constant(2.0), ot.constant(5.0)]).freeze()
    assert one == two
    y = ot.dvector("y")
    with pytest.raises(ValueError, match="cannot freeze the graph: y"):
        FrozenFunctionGraph.from_io([x], [x + y])


def test_from_io_dedup_nodes() -> None:
    x = ot.dvector("x")
    twice = [ot.exp(x), ot.exp(x)]
    deduped = FrozenFunctionGraph.from_io([x], twice, dedup_nodes=True)
    assert deduped.outputs[0] is deduped.outputs[1] and len(deduped.apply_nodes) == 1
    kept = FrozenFunctionGraph.from_io([x], twice)
    assert kept.outputs[0] is not kept.outputs[1] and len(kept.apply_nodes) == 2


def test_freeze_bakes_in_a_destroy_aware_order() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    t = x * y
    reader = ot.exp(t)
    destroyer = tm.add_inplace(t, y)
    g = FunctionGraph([x, y], [destroyer, reader], features=[DestroyHandler()], clone=False)
    order = [n.op for n in g.freeze().toposort()]
    assert order.index(reader.owner.op) < order.index(destroyer.owner.op)


def test_debugprint_of_a_frozen_graph() -> None:
    text = opweave.dprint(_fgraph().freeze(), file="str", ids="")
    assert text.splitlines()[:3] == ["Add", " |Mul", " | |Exp"]
    assert " | | |i0" in text.splitlines()


# ====================================================================== NominalVariable


def test_nominal_variables_are_interned() -> None:
    t = TensorType("float64", shape=(None,))
    n0 = NominalVariable(0, t)
    assert NominalVariable(0, TensorType("float64", shape=(None,))) is n0
    assert NominalVariable(1, t) is not n0 and NominalVariable(0, ot.fvector().type) is not n0
    assert isinstance(n0, ot.TensorVariable) and n0.owner is None and str(n0) == "i0"
    assert n0.clone() is n0 and pickle.loads(pickle.dumps(n0)) is n0
    np.testing.assert_allclose(run([n0], n0 * 2.0, np.array([1.0, 2.0])), [2.0, 4.0])


def test_a_nominal_variable_cannot_be_an_output() -> None:
    n = NominalVariable("out", TensorType("float64", shape=(None,)))
    with pytest.raises(ValueError, match="nominal variable"):
        Apply(tm.exp, [ot.dvector()], [n])


# ====================================================================== remove_*


class Pruned(Feature):
    def __init__(self) -> None:
        self.pruned: list[Any] = []

    def on_prune(self, fgraph: Any, node: Any, reason: Any) -> None:
        self.pruned.append(node)


def test_remove_node_removes_what_depends_on_it() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    a = ot.exp(x)
    b = a + y
    c = ot.log(a)
    d = b * y
    watch = Pruned()
    g = FunctionGraph([x, y], [d, c, a], features=[watch], clone=False)
    g.remove_node(b.owner, reason="test")
    assert g.outputs == [c, a] and g.apply_nodes == {a.owner, c.owner}
    assert set(watch.pruned) == {b.owner, d.owner}
    assert b not in g.variables and d not in g.variables
    assert g.clients[y] == [] and ("output", 1) in g.clients[a]
    assert b.owner.tag.removed_by == ["test"]
    g.check_integrity()
    g.remove_node(b.owner)  # not in the graph any more: nothing happens
    g.check_integrity()


def test_remove_node_with_outputs_before_and_after_it() -> None:
    x = ot.dvector("x")
    b = ot.exp(x)
    d = ot.log(b)
    keep = x * 2.0
    g = FunctionGraph([x], [d, b, keep, d], clone=False)
    g.remove_node(b.owner)
    assert g.outputs == [keep] and g.clients[keep] == [("output", 0)]
    g.check_integrity()
    np.testing.assert_allclose(run(g.inputs, g.outputs, np.array([1.5])), [[3.0]])


def test_remove_node_prunes_what_only_it_used() -> None:
    x = ot.dvector("x")
    a = ot.exp(x)
    b = ot.log(a)
    g = FunctionGraph([x], [b], clone=False)
    g.remove_node(b.owner)
    assert g.outputs == [] and g.apply_nodes == set() and g.variables == {x}
    g.check_integrity()


def test_remove_output_renumbers_the_later_ones() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    a, b, c = ot.exp(x), ot.log(y), x + y
    g = FunctionGraph([x, y], [a, b, c, a], update_mapping={2: 0, 3: 1}, clone=False)
    g.remove_output(1)
    assert g.outputs == [a, c, a] and b.owner not in g.apply_nodes
    assert sorted(g.clients[a], key=str) == [("output", 0), ("output", 2)]
    assert g.update_mapping == {1: 0, 2: 1}
    g.check_integrity()
    g.remove_output(0)
    assert g.outputs == [c, a] and a.owner in g.apply_nodes
    g.check_integrity()
    av = run(list(g.inputs), list(g.outputs), np.array([1.0]), np.array([2.0]))
    np.testing.assert_allclose(av, [[3.0], np.exp([1.0])])


def test_remove_input_removes_its_users() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    a, b = ot.exp(x), x + y
    g = FunctionGraph([x, y], [a, b, y], update_mapping={0: 1}, clone=False)
    g.remove_input(1)
    assert g.inputs == [x] and g.outputs == [a]
    assert g.apply_nodes == {a.owner} and y not in g.variables
    assert g.update_mapping == {}
    g.check_integrity()
    np.testing.assert_allclose(run(g.inputs, g.outputs, np.array([0.0])), [[1.0]])


def test_removing_an_inplace_node_keeps_the_destroy_handler_consistent() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    t = x * y
    d = tm.add_inplace(t, y)
    g = FunctionGraph([x, y], [d, ot.exp(t)], features=[DestroyHandler()], clone=False)
    g.remove_node(d.owner)
    assert g.outputs[0].owner.op == tm.exp
    g.validate()  # type: ignore[attr-defined]


# ====================================================================== dprint, eval


def test_variable_and_graph_dprint_pass_keywords() -> None:
    x = ot.dvector("x")
    out = ot.exp(x)
    assert out.dprint(file="str", ids="") == "Exp\n |x"
    assert out.dprint(file="str", print_type=True).startswith("Exp [id A] <TensorType(float64")
    assert out.owner.dprint(file="str") == out.dprint(file="str")
    g = FunctionGraph([x], [out])
    assert g.dprint(file="str", ids="") == "Exp\n |x"


def test_eval_with_givens_mode_and_names(monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    xv = np.array([1.0, 2.0])
    out = x + y
    np.testing.assert_allclose(out.eval({x: xv}, givens={y: x * 3.0}), xv * 4)
    np.testing.assert_allclose(out.eval({"x": xv, "y": xv}, mode="FAST_COMPILE"), xv * 2)
    np.testing.assert_allclose(out.eval({x: xv, y: xv}, mode=PY), xv * 2)
    compiled: list[Any] = []
    function = opweave.function

    def counting(*args: Any, **kwargs: Any) -> Any:
        compiled.append(kwargs)
        return function(*args, **kwargs)

    monkeypatch.setattr(opweave, "function", counting)
    twice = x * 2.0
    for _ in range(2):
        np.testing.assert_allclose(twice.eval({x: xv}, mode=PY), xv * 2)
    assert len(compiled) == 1  # cached per inputs and keywords
    np.testing.assert_allclose(twice.eval({x: xv}, mode="FAST_COMPILE"), xv * 2)
    assert len(compiled) == 2


def test_eval_bad_keys() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = x * 2.0
    with pytest.raises(ValueError, match=r"no variable of the graph .* is named 'z'"):
        out.eval({"z": np.ones(2)})
    same = ot.dvector("x")
    with pytest.raises(ValueError, match="2 variables of the graph are named 'x'"):
        (x + same).eval({"x": np.ones(2)})
    with pytest.raises(TypeError, match="Variables or names"):
        out.eval({3: np.ones(2)})  # type: ignore[dict-item]
    np.testing.assert_allclose(
        out.eval({x: np.ones(2), "z": 1.0, y: np.ones(2)}, on_unused_input="ignore"), [2.0, 2.0]
    )


# ====================================================================== rewriters


def _visits(order_rewriter: Any) -> list[str]:
    seen: list[str] = []

    @rw.node_rewriter(None)
    def record(fgraph: Any, node: Any) -> bool:
        seen.append(str(node.op))
        return False

    x, y = ot.dvector("x"), ot.dvector("y")
    g = FunctionGraph([x, y], [ot.exp(x) + ot.log(y)])
    order_rewriter(record).rewrite(g)
    return seen


def test_walking_orders() -> None:
    assert _visits(rw.in2out) == ["Exp", "Log", "Add"]
    assert _visits(rw.out2in) == ["Add", "Log", "Exp"]
    assert _visits(rw.dfs_rewriter) == ["Add", "Log", "Exp"]  # PyTensor's order
    assert str(rw.dfs_rewriter(rw.node_rewriter(None)(lambda f, n: False))) == "<lambda>"
    with pytest.raises(ValueError, match="'dfs'"):
        rw.WalkingGraphRewriter([], order="sideways")  # type: ignore[arg-type]


def test_dfs_rewriter_rewrites() -> None:
    @rw.node_rewriter([tm.exp])
    def exp_to_log(fgraph: Any, node: Any) -> list[Any]:
        return [ot.log(node.inputs[0])]

    x = ot.dvector("x")
    g = FunctionGraph([x], [ot.exp(ot.exp(x)) * x])
    rw.dfs_rewriter(exp_to_log).rewrite(g)
    assert [str(n.op) for n in g.toposort()] == ["Log", "Log", "Mul"]


def test_graph_rewriter_decorators() -> None:
    calls: list[Any] = []

    @rw.graph_rewriter
    def count_nodes(fgraph: Any) -> int:
        calls.append(fgraph)
        return len(fgraph.apply_nodes)

    x = ot.dvector("x")
    g = FunctionGraph([x], [ot.exp(x) + 1.0])
    assert (
        isinstance(count_nodes, rw.FromFunctionGraphRewriter) and str(count_nodes) == "count_nodes"
    )
    assert count_nodes.rewrite(g) == 3 and calls == [g]

    @rw.inplace_graph_rewriter
    def nothing(fgraph: Any) -> None:
        return None

    nothing.rewrite(g)
    assert any(isinstance(f, DestroyHandler) for f in g.features)
    rw.SequentialGraphRewriter(count_nodes, nothing).rewrite(g)
    assert len(calls) == 2


def test_op_key_graph_rewriter() -> None:
    x = ot.dvector("x")
    neg_neg = rw.PatternNodeRewriter((tm.neg, (tm.neg, "x")), "x")
    g = FunctionGraph([x], [tm.neg(tm.neg(x)) + ot.exp(tm.neg(tm.neg(ot.exp(x))))])
    op_key = rw.OpKeyGraphRewriter(neg_neg)
    assert op_key.op_key == tm.neg
    op_key.rewrite(g)
    assert sorted(str(n.op) for n in g.toposort()) == ["Add", "Exp", "Exp"]
    xv = RNG.normal(size=3)
    np.testing.assert_allclose(run(list(g.inputs), g.outputs[0], xv), xv + np.exp(np.exp(xv)))
    with pytest.raises(TypeError, match="exactly one Op"):
        rw.OpKeyGraphRewriter(rw.node_rewriter(None)(lambda f, n: False))


def test_copy_stack_trace() -> None:
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    x.tag.trace = [("file.py", 1, "f", "x = ...")]
    y.tag.trace = [[("file.py", 2, "g", "y = ...")]]
    z.tag.trace = []  # forget where the test created z: only copied traces are compared
    assert rw.copy_stack_trace(x, z) is z
    assert z.tag.trace == [[("file.py", 1, "f", "x = ...")]]
    w = ot.dvector("w")
    own = w.tag.trace  # where this test created w: kept first, the copies appended
    assert own[0][-1][:3] == (__file__, own[0][-1][1], "test_copy_stack_trace")
    w.tag.trace = []
    rw.copy_stack_trace([x, y], [w])
    assert w.tag.trace == [[("file.py", 1, "f", "x = ...")], [("file.py", 2, "g", "y = ...")]]
    with pytest.raises(TypeError, match="takes Variables or sequences of them; to_var is int"):
        rw.copy_stack_trace(x, 3)  # type: ignore[arg-type]


# ====================================================================== abstract apply


def test_frozen_and_editable_nodes_share_the_apply_interface() -> None:
    frozen = _fgraph().freeze()
    node = frozen.toposort()[0]
    assert isinstance(node, AbstractApply) and not isinstance(node, Apply)
    assert node.nin == 1 and node.nout == 1 and node.out is node.outputs[0]
    assert node.outputs[0].owner is node and node.outputs[0].index == 0
    assert str(node) == "Exp(i0)"
