"""The rewriting API under PyTensor's names: query strings, the kinds of database,
``register_*`` decorators, ``rewrite_graph``, ``ShapeFeature``, unconditional constant
folding, the scan databases, and the mode attributes built on them."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import JAX, NUMBA, OPT_MINIMUM, Mode, get_mode, optdb
from opweave.graph import node_rewriter, rewrite_graph
from opweave.graph.basic import Apply, Constant
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.rewriting.db import (
    EquilibriumDB,
    LocalGroupDB,
    ProxyDB,
    RewriteDatabase,
    RewriteDatabaseQuery,
    SequenceDB,
    TopoDB,
)
from opweave.graph.rewriting.graph import (
    EquilibriumGraphRewriter,
    RewriteFailureWarning,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    graph_rewriter,
)
from opweave.graph.rewriting.node import SequentialNodeRewriter
from opweave.link.lookup import LinkerNotFoundError
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.basic import (
    register_canonicalize,
    register_specialize,
    register_stabilize,
    topo_constant_folding,
    topo_unconditional_constant_folding,
)
from opweave.tensor.rewriting.shape import ShapeFeature, ShapeOptimizer, UnShapeOptimizer
from opweave.tensor.type import TensorType

EXP = ot.exp(ot.dscalar()).owner.op
SIN = ot.sin(ot.dscalar()).owner.op
COS = ot.cos(ot.dscalar()).owner.op
TANH = ot.tanh(ot.dscalar()).owner.op


def _swap(source: Op, target_fn, name: str):
    """A node rewriter replacing ``source(x)`` by ``target_fn(x)``."""

    @node_rewriter([Elemwise])
    def swap(fgraph, node):
        if node.op == source:
            return [target_fn(node.inputs[0])]
        return None

    swap.name = name
    return swap


def _ops(fgraph: FunctionGraph) -> list[str]:
    return sorted(type(getattr(n.op, "scalar_op", n.op)).__name__ for n in fgraph.apply_nodes)


# ---------------------------------------------------------------------- query strings


def _recorder(name: str, log: list[str]):
    @graph_rewriter
    def record(fgraph):
        log.append(name)

    return record


def test_query_strings_select_like_tag_lists() -> None:
    log: list[str] = []
    db = RewriteDatabase()
    db.register("a", _recorder("a", log), "fast_run", "inplace", position=2)
    db.register("b", _recorder("b", log), "fast_run", "stable", position=1)
    db.register("c", _recorder("c", log), "fast_compile", position=0)

    def run(*args, **kwargs) -> list[str]:
        log.clear()
        db.query(*args, **kwargs).rewrite(FunctionGraph([x := ot.dscalar()], [x + 1.0]))
        return list(log)

    assert run("+fast_run") == run(include=["fast_run"]) == ["b", "a"]
    assert run("+fast_run", "-inplace") == ["b"]
    assert run("+fast_run", "+fast_compile", "&stable") == ["b"]
    assert run("+c", "+a") == ["c", "a"]  # a name is a tag
    assert run(["fast_run"], ["stable"]) == ["a"]  # positional lists: include, exclude
    assert run("+fast_run", position_cutoff=2) == ["b"]
    assert run(RewriteDatabaseQuery(["fast_run"], position_cutoff=1.5)) == ["b"]
    extra = _recorder("extra", log)
    assert run(RewriteDatabaseQuery(["fast_compile"]).register((extra, 0.5))) == ["c", "extra"]

    with pytest.raises(ValueError, match=r"'fast_run'.*must start with '\+'"):
        db.query("fast_run")
    with pytest.raises(TypeError, match="either a RewriteDatabaseQuery alone"):
        db.query(RewriteDatabaseQuery(["fast_run"]), "+a")
    with pytest.raises(TypeError, match="subquery 'inner': expected a RewriteDatabaseQuery"):
        db.query("+fast_run", inner="+x")


def test_keyword_subquery_narrows_a_nested_database() -> None:
    db = SequenceDB()
    canon = EquilibriumDB()
    db.register("canon", canon, "fast_run", position=1)
    to_sin = _swap(EXP, ot.sin, "to_sin")
    to_cos = _swap(SIN, ot.cos, "to_cos")
    canon.register("to_sin", to_sin, "fast_run")
    canon.register("to_cos", to_cos, "fast_run")

    (inner,) = db.query("+fast_run").rewriters
    assert isinstance(inner, EquilibriumGraphRewriter)
    assert inner.node_rewriters == [to_sin, to_cos]
    (inner,) = db.query("+fast_run", canon=RewriteDatabaseQuery(["to_sin"])).rewriters
    assert inner.node_rewriters == [to_sin]
    # selecting by the nested database's name selects the entries tagged with it
    (inner,) = db.query("+canon").rewriters
    assert inner.node_rewriters == [to_sin, to_cos]


def test_optdb_query_string_selects_the_canonicalize_phase() -> None:
    x = ot.dvector("x")
    fg = FunctionGraph([x], [x * 1.0])
    optdb.query("+canonicalize").rewrite(fg)
    assert fg.outputs[0] is fg.inputs[0]  # x * 1 -> x
    fg = FunctionGraph([x], [x * 1.0])
    optdb.query("+canonicalize", "-local_mul_by_one").rewrite(fg)
    assert fg.outputs[0].owner is not None  # that rewrite was excluded


# ---------------------------------------------------------------------- kinds of database


def test_nested_databases_of_every_kind_rewrite_in_order() -> None:
    """A sequence of a TopoDB over a LocalGroupDB, a ShapeOptimizer, the canonicalize
    phase, an EquilibriumDB, and a cleanup TopoDB selected by another tag."""
    pipeline = SequenceDB()
    pipeline.name = "pipeline"
    early = LocalGroupDB()
    early.name = "early_db"
    pipeline.register(
        "early",
        TopoDB(early, order="in_to_out", ignore_newtrees=False, failure_callback=None),
        "basic",
        position=0,
    )
    pipeline.register("ShapeOpt", ShapeOptimizer(), "basic", position=0.11)
    pipeline.register(
        "pre-canonicalize", optdb.query("+canonicalize", "-nothing"), "basic", position=1
    )
    middle = EquilibriumDB()
    middle.name = "middle_db"
    pipeline.register("middle", middle, "basic", position=2)
    cleanup = LocalGroupDB()
    cleanup.name = "cleanup_db"
    pipeline.register(
        "cleanup",
        TopoDB(cleanup, order="out_to_in", ignore_newtrees=True, failure_callback=None),
        "cleanup",
        position=5,
    )
    early.register("exp_to_sin", _swap(EXP, ot.sin, "exp_to_sin"), "basic")
    middle.register("sin_to_cos", _swap(SIN, ot.cos, "sin_to_cos"), "basic")
    cleanup.register("cos_to_tanh", _swap(COS, ot.tanh, "cos_to_tanh"), "cleanup")

    assert isinstance(early.query("+basic"), SequentialNodeRewriter)
    walker = pipeline["early"].query("+basic")
    assert isinstance(walker, WalkingGraphRewriter) and walker.order == "in_to_out"
    assert isinstance(pipeline.query(RewriteDatabaseQuery(["basic"])), SequentialGraphRewriter)

    x = ot.dvector("x")
    fg = FunctionGraph([x], [ot.exp(x) * 1.0], clone=True)
    pipeline.query(RewriteDatabaseQuery(include=["basic"])).rewrite(fg)
    assert _ops(fg) == ["Cos"]  # exp -> sin, x * 1 -> x, sin -> cos; cleanup not run
    assert isinstance(fg.shape_feature, ShapeFeature)
    pipeline.query(RewriteDatabaseQuery(include=["cleanup"])).rewrite(fg)
    assert _ops(fg) == ["Tanh"]
    f = opweave.function(fg.inputs, fg.outputs[0])
    np.testing.assert_allclose(f(np.array([0.5, 2.0])), np.tanh([0.5, 2.0]))


def test_database_kinds_refuse_what_they_cannot_run() -> None:
    with pytest.raises(TypeError, match="LocalGroupDB holds node rewriters"):
        LocalGroupDB().register("shape", ShapeOptimizer())
    topo = TopoDB(LocalGroupDB())
    with pytest.raises(TypeError, match="register 'x' there"):
        topo.register("x", _swap(EXP, ot.sin, "x"))
    with pytest.raises(TypeError, match="expected a RewriteDatabase to wrap"):
        TopoDB(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="order must be"):
        TopoDB(LocalGroupDB(), order="sideways")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot both be true"):
        EquilibriumDB().register("r", _swap(EXP, ot.sin, "r"), final_rewriter=True, cleanup=True)
    with pytest.raises(TypeError, match="position must be a number or 'last'"):
        SequenceDB().register("r", ShapeOptimizer(), position="first")


def test_proxy_db_overwrite_and_last_position() -> None:
    inner = EquilibriumDB()
    to_sin = _swap(EXP, ot.sin, "to_sin")
    inner.register("to_sin", to_sin, "fast_run")
    proxy = ProxyDB(inner)
    assert "to_sin" in proxy and proxy["to_sin"] is to_sin
    assert proxy.query("+fast_run").node_rewriters == [to_sin]

    seq = SequenceDB()
    seq.register("a", ShapeOptimizer(), "t", position=3)
    seq.register("b", ShapeOptimizer(), "t", position="last")
    assert seq.position("b") == 4
    replacement = UnShapeOptimizer()
    with pytest.raises(ValueError, match="already registered"):
        seq.register("a", replacement, "t")
    seq.register("a", replacement, "t", position=3, overwrite_existing=True)
    assert seq["a"] is replacement


def test_sequence_db_goes_on_past_a_failing_entry_by_default() -> None:
    log: list[str] = []

    @graph_rewriter
    def broken(fgraph):
        raise RuntimeError("boom")

    def pipeline(**kwargs) -> SequenceDB:
        db = SequenceDB(**kwargs)
        db.register("broken", broken, "t", position=0)
        db.register("after", _recorder("after", log), "t", position=1)
        return db

    x = ot.dscalar("x")
    with pytest.warns(RewriteFailureWarning, match="broken raised RuntimeError: boom"):
        pipeline().query("+t").rewrite(FunctionGraph([x], [x + 1.0]))
    assert log == ["after"]
    with pytest.raises(RuntimeError, match="boom"):
        pipeline(failure_callback=None).query("+t").rewrite(FunctionGraph([x], [x + 1.0]))
    assert log == ["after"]  # the strict sequence stopped at the failure


def test_final_and_cleanup_entries_are_tried_last() -> None:
    db = EquilibriumDB()
    first = _swap(EXP, ot.sin, "first")
    last = _swap(SIN, ot.cos, "last")
    db.register("last", last, "t", final_rewriter=True)
    db.register("first", first, "t")
    assert db.query("+t").node_rewriters == [first, last]


def test_sequential_node_rewriter_apply_all_rewrites_chains() -> None:
    to_sin = _swap(EXP, ot.sin, "to_sin")
    to_cos = _swap(SIN, ot.cos, "to_cos")
    x = ot.dscalar("x")
    node = ot.exp(x).owner
    (once,) = SequentialNodeRewriter(to_sin, to_cos).transform(None, node)
    assert once.owner.op == SIN
    (chained,) = SequentialNodeRewriter(to_sin, to_cos, apply_all_rewrites=True).transform(
        None, node
    )
    assert chained.owner.op == COS and chained.owner.inputs[0] is x


def test_scan_databases_hold_the_scan_rewrites() -> None:
    from opweave.scan.rewriting import scan_eqopt1, scan_eqopt2, scan_merge

    assert "scan_push_out_non_seq" in scan_eqopt1 and "scan_merge" in scan_eqopt2
    assert scan_merge in scan_eqopt2.query("+scan").node_rewriters
    from opweave.scan import rewriting

    assert rewriting.scan_eqopt1 is not rewriting.scan_eqopt1  # nothing shared
    db = SequenceDB()
    db.register("scan_eqopt1", scan_eqopt1, "basic", "scan")
    db.register("scan_eqopt2", scan_eqopt2, "basic", "scan")
    # the entries are tagged fast_run and scan, not basic: "basic" selects none of them
    assert db.query("+basic").rewriters == []
    assert len(db.query("+scan").rewriters) == 2


# ---------------------------------------------------------------------- register_*


def test_register_canonicalize_runs_in_compiles_and_rewrite_graph() -> None:
    rewrite = register_canonicalize(_swap(EXP, ot.sin, "test_exp_to_sin"))
    assert "test_exp_to_sin" in optdb["canonicalize"]
    assert {"fast_run", "fast_compile", "canonicalize"} <= optdb["canonicalize"].tags(
        "test_exp_to_sin"
    )
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x))
    assert _ops(f.maker.fgraph) == ["Sin"]
    np.testing.assert_allclose(f(np.array([0.3, 1.0])), np.sin([0.3, 1.0]))
    assert rewrite_graph(ot.exp(x)).owner.op == SIN
    # excluded by name, it does not run
    g = opweave.function([x], ot.exp(x), mode=get_mode(None).excluding("test_exp_to_sin"))
    np.testing.assert_allclose(g(np.array([0.3])), np.exp([0.3]))
    assert rewrite is optdb["canonicalize"]["test_exp_to_sin"]


def test_registered_rewrites_code_is_part_of_the_rewritten_graph_key() -> None:
    """The plugin carrying a registered rewrite is attributed to the rewrite's module, so
    the kept rewritten graphs are keyed on that module's file too."""
    from opweave.compile.rewrite_cache import _code_stamps
    from opweave.plugins import get_plugin_manager

    register_canonicalize(_swap(EXP, ot.sin, "test_keyed_rewrite"))
    plugin = get_plugin_manager().get_plugin("optdb:canonicalize.test_keyed_rewrite")
    assert type(plugin).__module__ == __name__
    stamped = repr(_code_stamps(set()))
    assert __file__ in stamped


def test_register_decorators_with_tags_and_names() -> None:
    @register_stabilize("my_tag", name="test_sin_to_cos")
    @node_rewriter([Elemwise])
    def unused_name(fgraph, node):
        if node.op == SIN:
            return [ot.cos(node.inputs[0])]
        return None

    register_specialize(_swap(COS, ot.tanh, "test_cos_to_tanh"), use_db_name_as_tag=False)
    assert "my_tag" in optdb["stabilize"].tags("test_sin_to_cos")
    assert "specialize" not in optdb["specialize"].tags("test_cos_to_tanh")
    x = ot.dvector("x")
    f = opweave.function([x], ot.sin(x))
    assert _ops(f.maker.fgraph) == ["Tanh"]  # sin -> cos (stabilize) -> tanh (specialize)
    out = rewrite_graph(ot.sin(x), include=("stabilize",))
    assert out.owner.op == COS
    with pytest.raises(TypeError, match="expected a NodeRewriter"):
        register_canonicalize(lambda fgraph, node: None)
    with pytest.raises(ValueError, match="already registered"):
        register_stabilize(_swap(SIN, ot.cos, "test_sin_to_cos"))


# ---------------------------------------------------------------------- rewrite_graph


def test_rewrite_graph_returns_what_it_was_given() -> None:
    x = ot.dvector("x")
    y = x * 1.0
    assert rewrite_graph(y) is x
    assert rewrite_graph([y, ot.neg(ot.neg(x))]) == [x, x]
    fg = FunctionGraph([x], [y], clone=False)
    assert rewrite_graph(fg) is fg and fg.outputs == [x]
    # clone=True rewrites a copy: the original graph is unchanged
    z = ot.exp(x) * 1.0
    out = rewrite_graph(z, clone=True)
    assert z.owner.op.scalar_op.__class__.__name__ == "Mul"
    assert out.owner.op == EXP and out.owner.inputs[0] is not x
    # custom_rewrite runs after the query; exclude= goes to the query
    swapped = rewrite_graph(
        ot.exp(x) * 1.0,
        include=("canonicalize",),
        exclude=("local_mul_by_one",),
        custom_rewrite=WalkingGraphRewriter(_swap(EXP, ot.sin, "s")),
    )
    assert swapped.owner.inputs[0].owner.op == SIN
    with pytest.raises(TypeError, match="graph must be a Variable"):
        rewrite_graph(3.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="custom_rewrite must be a GraphRewriter"):
        rewrite_graph(y, custom_rewrite=_swap(EXP, ot.sin, "s"))  # type: ignore[arg-type]


# ---------------------------------------------------------------------- constant folding


class HalfNoFold(Op):
    """x / 2 on a float64 vector, declared not worth folding."""

    __props__ = ()

    def make_node(self, x):
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] / 2.0

    def do_constant_folding(self, fgraph, node):
        return False


def test_unconditional_constant_folding_ignores_do_constant_folding() -> None:
    c = ot.constant(np.array([2.0, 6.0]))
    out = HalfNoFold()(c) + 1.0
    fg = FunctionGraph([], [out], clone=True)
    topo_constant_folding.apply(fg)
    assert not isinstance(fg.outputs[0], Constant)  # the Op said no
    topo_unconditional_constant_folding.apply(fg)
    assert isinstance(fg.outputs[0], Constant)
    np.testing.assert_array_equal(fg.outputs[0].data, np.array([2.0, 6.0]) / 2.0 + 1.0)


def test_constant_fold_with_a_shape_feature() -> None:
    """Constants through shapes, as a graph of shapes is folded with a ShapeFeature."""
    a = ot.alloc(ot.constant(2.0), 3, 2)
    fg = FunctionGraph(outputs=[a.shape, a * 2.0], features=[ShapeFeature()], clone=True)
    rewrite_graph(fg)
    topo_unconditional_constant_folding.apply(fg)
    assert all(isinstance(o, Constant) for o in fg.outputs)
    np.testing.assert_array_equal(fg.outputs[0].data, [3, 2])
    np.testing.assert_array_equal(fg.outputs[1].data, np.full((3, 2), 4.0))


# ---------------------------------------------------------------------- ShapeFeature


def test_shape_feature_gives_shapes() -> None:
    x = ot.dmatrix("x")
    y = ot.dvector("y")
    s = TensorType("float64", shape=(4, None))("s")
    summed = (x + y).sum(axis=0)
    stacked = ot.concatenate([x, x], axis=0)
    fg = FunctionGraph(
        [x, y, s], [summed, stacked, s * 2.0], features=[ShapeFeature()], clone=False
    )
    feature = fg.shape_feature
    assert isinstance(feature, ShapeFeature)
    assert len(feature.shape_of[summed]) == 1 and len(feature.shape_of[stacked]) == 2
    four = feature.get_shape(fg.outputs[2], 0)
    assert isinstance(four, Constant) and int(four.data) == 4
    assert feature.same_shape(s, fg.outputs[2])
    assert not feature.same_shape(x, stacked, 0, 0)
    f = opweave.function(
        [x, y],
        [feature.shape_of[summed][0], *feature.shape_of[stacked], feature.make_vector_shape(x)],
        on_unused_input="ignore",
    )
    xv, yv = np.ones((2, 3)), np.ones(3)
    got = [int(v) if np.ndim(v) == 0 else list(v) for v in f(xv, yv)]
    expected_stacked = np.concatenate([xv, xv], axis=0).shape
    assert got == [(xv + yv).sum(axis=0).shape[0], *expected_stacked, list(xv.shape)]

    # a second ShapeFeature is not attached
    fg.attach_feature(ShapeFeature())
    assert fg.shape_feature is feature
    with pytest.raises(TypeError, match="must be an int or an integer scalar"):
        feature.set_shape_i(x, 0, 1.5)


def test_shape_feature_replacement_learns_the_replaced_shape() -> None:
    n = ot.lscalar("n")
    y = ot.dvector("y")
    v = ot.exp(ot.alloc(np.float64(0.0), n))
    fg = FunctionGraph([n, y], [v * 2.0], features=[ShapeFeature()], clone=False)
    feature = fg.shape_feature
    (known_dim,) = feature.shape_of[v]
    f = opweave.function([n], known_dim)
    assert int(f(5)) == 5
    w = ot.sin(y)
    fg.replace(v, w)
    # what was known of v, the replaced variable, is w's shape (computed from n)
    assert feature.shape_of[w] == (known_dim,)


def test_shape_optimizer_attaches_and_unshape_removes() -> None:
    x = ot.dvector("x")
    fg = FunctionGraph([x], [ot.exp(x)])
    ShapeOptimizer().rewrite(fg)
    assert isinstance(fg.shape_feature, ShapeFeature)
    UnShapeOptimizer().rewrite(fg)
    assert not hasattr(fg, "shape_feature")


# ---------------------------------------------------------------------- modes


def test_provided_optimizer_keeps_the_mode_tags() -> None:
    mode = get_mode(None).excluding("inplace", "fusion")
    query = mode.provided_optimizer
    assert "fast_run" in query.include and {"inplace", "fusion"} <= query.exclude
    more = Mode(linker=mode.linker, optimizer=query.including("test_extra"))
    assert "test_extra" in more.provided_optimizer.include
    assert {"inplace", "fusion"} <= more.provided_optimizer.exclude
    assert Mode(optimizer=None).provided_optimizer.include == frozenset()


def test_minimum_compile_optimizer_runs_no_standard_rewrite() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], x * 1.0, mode=Mode(linker="py", optimizer="minimum_compile"))
    assert "Mul" in _ops(f.maker.fgraph)  # x * 1 is not rewritten to x
    np.testing.assert_allclose(f(np.array([1.5, -2.0])), [1.5, -2.0])
    provided = Mode(optimizer="minimum_compile").provided_optimizer
    assert provided.include == OPT_MINIMUM.include == {"minimum_compile"}


def test_jax_and_numba_modes_exist_and_numba_refuses_to_compile() -> None:
    assert JAX.provided_optimizer.include == {"fast_run", "jax"}
    assert isinstance(JAX.optimizer, RewriteDatabaseQuery)
    assert get_mode("numba") is NUMBA
    # The installed opweave-jax gives its own JAX mode, with PyTensor's query.
    assert get_mode("JAX").linker == "jax"
    assert get_mode("JAX").provided_optimizer.include >= {"fast_run", "jax"}
    x = ot.dscalar("x")
    assert opweave.function([x], x + 1.0, mode="JAX")(2.0) == 3.0
    with pytest.raises(LinkerNotFoundError, match=r"opweave ships no Numba backend"):
        opweave.function([x], x + 1.0, mode=NUMBA)


def test_check_stack_trace() -> None:
    from opweave.graph.rewriting.basic import check_stack_trace
    from opweave.tensor.elemwise import DimShuffle

    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2.0 + 1.0)
    assert check_stack_trace(f) and check_stack_trace(f, ops_to_check="all")
    fg = FunctionGraph([x], [ot.exp(x)])
    assert check_stack_trace(fg, ops_to_check=[ot.exp(x).owner.op.scalar_op.__class__])
    fg.outputs[0].tag.trace = []
    assert not check_stack_trace(fg)
    assert check_stack_trace(fg, ops_to_check=lambda node: False, bug_print="ignore")
    with pytest.raises(ValueError, match="none of the Ops to check"):
        check_stack_trace(fg, ops_to_check=DimShuffle)
    with pytest.raises(ValueError, match="expected 'last' or 'all'"):
        check_stack_trace(fg, ops_to_check="first")
    with pytest.raises(ValueError, match="expected a FunctionGraph or a compiled function"):
        check_stack_trace(x)
