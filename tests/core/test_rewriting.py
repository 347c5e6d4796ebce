"""The rewrite framework: node and graph rewriters, merging, and the rewrite database."""

from __future__ import annotations

import pytest

from opweave.graph.basic import Apply, Constant, equal_computations
from opweave.graph.features import DestroyHandler, Feature, ReplaceValidate
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.rewriting import (
    EquilibriumDB,
    EquilibriumGraphRewriter,
    GraphRewriter,
    MergeOptimizer,
    NodeRewriter,
    PatternNodeRewriter,
    RewriteDatabase,
    RewriteDatabaseQuery,
    SequentialGraphRewriter,
    WalkingGraphRewriter,
    build_rewrite_database,
    in2out,
    node_rewriter,
    out2in,
)
from opweave.graph.rewriting.graph import EquilibriumLimitError, EquilibriumLimitWarning
from opweave.graph.type import Type
from opweave.graph.utils import InconsistencyError
from opweave.plugins import create_plugin_manager, hookimpl

# ---------------------------------------------------------------------- toy Types and Ops


class Double(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        if strict and not isinstance(x, float):
            raise TypeError("Expected a float!")
        return float(x)

    def __eq__(self, other):
        return type(other) is Double

    def __hash__(self):
        return hash(Double)


class Text(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        return str(x)

    def __eq__(self, other):
        return type(other) is Text

    def __hash__(self):
        return hash(Text)


double = Double()
text = Text()


class Binary(Op):
    __props__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])

    def __str__(self):
        return self.name


class Unary(Op):
    __props__ = ("name",)

    def __init__(self, name):
        self.name = name

    def make_node(self, x):
        return Apply(self, [x], [double()])

    def __str__(self):
        return self.name


class AddInplace(Op):
    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])

    def __str__(self):
        return "add_inplace"


add, mul, sub = Binary("add"), Binary("mul"), Binary("sub")
neg, exp = Unary("neg"), Unary("exp")
add_inplace = AddInplace()


def fgraph(inputs, outputs):
    return FunctionGraph(inputs, outputs, clone=False)


def const(value):
    return Constant(double, value)


def same(fg, *expected):
    return equal_computations(fg.outputs, list(expected))


# ---------------------------------------------------------------------- node_rewriter


@node_rewriter([neg])
def local_neg_neg(fgraph, node):
    """neg(neg(x)) -> x"""
    (x,) = node.inputs
    if x.owner is not None and x.owner.op == neg:
        return [x.owner.inputs[0]]
    return False


def test_node_rewriter_records_tracks_and_stays_callable() -> None:
    assert isinstance(local_neg_neg, NodeRewriter)
    assert local_neg_neg.tracks() == [neg]
    assert str(local_neg_neg) == "local_neg_neg"

    @node_rewriter([Unary])
    def by_class(fgraph, node):
        return False

    assert by_class.tracks() == [Unary]
    x = double("x")
    node = neg(neg(x)).owner
    assert local_neg_neg(None, node) == [x]


def test_node_rewriter_rejects_bad_tracks() -> None:
    with pytest.raises(TypeError):
        node_rewriter(["neg"])
    with pytest.raises(ValueError):
        node_rewriter([])


def test_neg_neg_with_in2out() -> None:
    x = double("x")
    out = exp(neg(neg(x)))
    fg = fgraph([x], [out])
    assert [str(n.op) for n in fg.toposort()] == ["neg", "neg", "exp"]
    in2out(local_neg_neg).rewrite(fg)
    assert [str(n.op) for n in fg.toposort()] == ["exp"]
    assert fg.outputs[0].owner.inputs[0] is x
    fg.check_integrity()
    # it went through ReplaceValidate
    assert any(isinstance(f, ReplaceValidate) for f in fg.features)


def test_rewrite_replacing_an_output_and_naming() -> None:
    x = double("x")
    out = neg(neg(x))
    out.name = "result"
    fg = fgraph([x], [out])
    in2out(local_neg_neg).rewrite(fg)
    assert fg.outputs == [x]
    assert x.name == "x"  # an existing variable keeps its name

    @node_rewriter([neg])
    def neg_to_sub(fgraph, node):
        return [sub(const(0.0), node.inputs[0])]

    y = double("y")
    out = neg(y)
    out.name = "minus_y"
    fg = fgraph([y], [out])
    in2out(neg_to_sub).rewrite(fg)
    assert fg.outputs[0].name == "minus_y"  # a fresh variable takes the old name
    assert str(fg.outputs[0].owner.op) == "sub"


def test_rewrite_with_wrong_type_is_an_error() -> None:
    @node_rewriter([neg])
    def to_text(fgraph, node):
        return [text("s")]

    x = double("x")
    fg = fgraph([x], [neg(x)])
    with pytest.raises(TypeError, match="to_text"):
        in2out(to_text).rewrite(fg)


def test_rewrite_returning_a_dict() -> None:
    @node_rewriter([exp])
    def exp_of_neg(fgraph, node):
        (arg,) = node.inputs
        if arg.owner is not None and arg.owner.op == neg:
            return {node.outputs[0]: neg(exp(arg.owner.inputs[0])), "remove": [node]}
        return None

    x = double("x")
    fg = fgraph([x], [exp(neg(x))])
    in2out(exp_of_neg).rewrite(fg)
    assert same(fg, neg(exp(x)))


def test_rewrite_rejected_by_validation_is_undone() -> None:
    class NoMul(Feature):
        def validate(self, fgraph):
            if any(n.op == mul for n in fgraph.apply_nodes):
                raise InconsistencyError("no mul")

    @node_rewriter([add])
    def add_to_mul(fgraph, node):
        return [mul(*node.inputs)]

    x, y = double("x"), double("y")
    out = add(x, y)
    fg = fgraph([x, y], [out])
    fg.attach_feature(NoMul())
    in2out(add_to_mul).rewrite(fg)
    assert fg.outputs == [out]
    fg.check_integrity()


def test_inplace_rewriter_attaches_destroy_handler() -> None:
    @node_rewriter([add], inplace=True)
    def make_inplace(fgraph, node):
        return [add_inplace(*node.inputs)]

    x, y = double("x"), double("y")
    fg = fgraph([x, y], [neg(add(mul(x, y), y)), exp(add(x, y))])
    in2out(make_inplace).rewrite(fg)
    assert any(isinstance(f, DestroyHandler) for f in fg.features)
    ops = sorted(str(n.op) for n in fg.apply_nodes)
    # add(mul(x, y), y) may overwrite the intermediate; add(x, y) must not touch input x
    assert ops == ["add", "add_inplace", "exp", "mul", "neg"]
    assert fg.outputs[1].owner.inputs[0].owner.op == add


# ---------------------------------------------------------------------- PatternNodeRewriter


def test_pattern_neg_neg() -> None:
    rw = PatternNodeRewriter((neg, (neg, "x")), "x")
    assert rw.tracks() == [neg]
    x = double("x")
    fg = fgraph([x], [exp(neg(neg(x)))])
    in2out(rw).rewrite(fg)
    assert same(fg, exp(x))


def test_pattern_builds_output_and_matches_classes() -> None:
    # add(x, neg(y)) -> sub(x, y), with the inner op given by class
    rw = PatternNodeRewriter((add, "x", (Unary, "y")), (sub, "x", "y"))
    x, y = double("x"), double("y")
    fg = fgraph([x, y], [add(x, neg(y))])
    in2out(rw).rewrite(fg)
    assert same(fg, sub(x, y))


def test_pattern_repeated_name_must_bind_same_variable() -> None:
    rw = PatternNodeRewriter((sub, "x", "x"), const(0.0))
    x, y = double("x"), double("y")
    fg = fgraph([x, y], [sub(x, x), sub(x, y)])
    in2out(rw).rewrite(fg)
    assert isinstance(fg.outputs[0], Constant) and fg.outputs[0].data == 0.0
    assert fg.outputs[1].owner.op == sub


def test_pattern_constants_and_constraints() -> None:
    rw = PatternNodeRewriter((mul, "x", const(1.0)), "x")
    x = double("x")
    fg = fgraph([x], [mul(x, const(1.0)), mul(x, const(2.0))])
    in2out(rw).rewrite(fg)
    assert fg.outputs[0] is x
    assert fg.outputs[1].owner.op == mul

    only_named = PatternNodeRewriter(
        (neg, {"pattern": "v", "constraint": lambda v: v.name == "a"}), (exp, "v")
    )
    a, b = double("a"), double("b")
    fg = fgraph([a, b], [neg(a), neg(b)])
    in2out(only_named).rewrite(fg)
    assert same(fg, exp(a), neg(b))


def test_pattern_skips_shared_inner_nodes_unless_allowed() -> None:
    x = double("x")
    inner = neg(x)
    fg = fgraph([x], [neg(inner), inner])
    in2out(PatternNodeRewriter((neg, (neg, "x")), "x")).rewrite(fg)
    assert fg.outputs[0].owner.op == neg  # inner has two clients: not matched
    in2out(PatternNodeRewriter((neg, (neg, "x")), "x", allow_multiple_clients=True)).rewrite(fg)
    assert fg.outputs[0] is x


def test_pattern_rejects_bad_patterns() -> None:
    with pytest.raises(TypeError):
        PatternNodeRewriter("x", "x")
    with pytest.raises(TypeError):
        PatternNodeRewriter(("neg", "x"), "x")


# ---------------------------------------------------------------------- walking order


def visit_recorder(seen):
    @node_rewriter(None)
    def record(fgraph, node):
        seen.append(str(node.op))
        return False

    return record


def test_in2out_and_out2in_visit_orders() -> None:
    x, y = double("x"), double("y")
    out = neg(mul(add(x, y), y))
    seen_in: list[str] = []
    in2out(visit_recorder(seen_in)).rewrite(fgraph([x, y], [out]))
    assert seen_in == ["add", "mul", "neg"]
    seen_out: list[str] = []
    out2in(visit_recorder(seen_out)).rewrite(fgraph([x, y], [out]))
    assert seen_out == ["neg", "mul", "add"]


def test_walker_rejects_bad_order() -> None:
    with pytest.raises(ValueError):
        WalkingGraphRewriter(local_neg_neg, order="sideways")


@node_rewriter([add])
def local_add_negs(fgraph, node):
    """add(neg(a), neg(b)) -> neg(add(a, b))"""
    a, b = node.inputs
    if all(v.owner is not None and v.owner.op == neg for v in (a, b)):
        return [neg(add(a.owner.inputs[0], b.owner.inputs[0]))]
    return False


@node_rewriter([neg])
def local_neg_add_to_exp(fgraph, node):
    """neg(add(a, b)) -> exp(add(a, b)) (only to see which nodes are visited)"""
    (arg,) = node.inputs
    if arg.owner is not None and arg.owner.op == add:
        return [exp(arg)]
    return False


def test_new_nodes_visited_unless_ignore_newtrees() -> None:
    x, y = double("x"), double("y")
    # local_add_negs turns add(neg(x), neg(y)) into a new neg(add(x, y)) node
    fg = fgraph([x, y], [exp(add(neg(x), neg(y)))])
    in2out(local_add_negs, local_neg_add_to_exp, ignore_newtrees=True).rewrite(fg)
    assert same(fg, exp(neg(add(x, y))))  # the new neg node was not visited

    fg = fgraph([x, y], [exp(add(neg(x), neg(y)))])
    in2out(local_add_negs, local_neg_add_to_exp).rewrite(fg)
    assert same(fg, exp(exp(add(x, y))))


# ---------------------------------------------------------------------- equilibrium


def test_equilibrium_reaches_a_fixed_point() -> None:
    x, y, z = double("x"), double("y"), double("z")
    # add(add(neg(x), neg(y)), neg(z)) -> add(neg(add(x, y)), neg(z)) -> neg(add(add(x, y), z))

    def build():
        return fgraph([x, y, z], [exp(add(add(neg(x), neg(y)), neg(z)))])

    once = build()
    out2in(local_add_negs, local_neg_neg, ignore_newtrees=True).rewrite(once)
    assert not same(once, exp(neg(add(add(x, y), z))))  # one walk is not enough

    fg = build()
    eq = EquilibriumGraphRewriter([local_add_negs, local_neg_neg])
    passes = eq.rewrite(fg)
    assert same(fg, exp(neg(add(add(x, y), z))))
    assert passes >= 2  # the last pass confirms nothing changes
    assert eq.counts[local_add_negs] == 2
    assert eq.rewrite(fg) == 1  # already at the fixed point
    fg.check_integrity()


def test_equilibrium_with_a_graph_rewriter() -> None:
    class CountingMerge(MergeOptimizer):
        calls = 0

        def apply(self, fgraph):
            type(self).calls += 1
            return super().apply(fgraph)

    x = double("x")
    out = add(neg(neg(exp(x))), exp(x))  # merge only possible after neg(neg()) goes
    fg = fgraph([x], [out])
    EquilibriumGraphRewriter([CountingMerge(), local_neg_neg]).rewrite(fg)
    assert same(fg, add(exp(x), exp(x)))
    e = fg.outputs[0].owner.inputs
    assert e[0] is e[1]
    assert CountingMerge.calls >= 2


@node_rewriter([add])
def local_swap(fgraph, node):
    a, b = node.inputs
    return [add(b, a)]


def test_equilibrium_bound_raises() -> None:
    x, y = double("x"), double("y")
    fg = fgraph([x, y], [add(x, y)])
    with pytest.raises(EquilibriumLimitError, match="local_swap"):
        EquilibriumGraphRewriter([local_swap], max_use_ratio=3, on_limit="raise").rewrite(fg)
    fg.check_integrity()


def test_equilibrium_bound_warns_and_leaves_a_valid_graph() -> None:
    x, y = double("x"), double("y")
    fg = fgraph([x, y], [add(x, y)])
    eq = EquilibriumGraphRewriter([local_swap], max_use_ratio=2)
    with pytest.warns(EquilibriumLimitWarning, match="local_swap"):
        eq.rewrite(fg)
    assert eq.counts[local_swap] == 3
    fg.check_integrity()
    assert fg.outputs[0].owner.op == add


def test_equilibrium_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        EquilibriumGraphRewriter([local_swap], max_use_ratio=0)
    with pytest.raises(ValueError):
        EquilibriumGraphRewriter([local_swap], on_limit="ignore")
    with pytest.raises(TypeError):
        EquilibriumGraphRewriter(["local_swap"])


# ---------------------------------------------------------------------- MergeOptimizer


def test_merge_duplicate_nodes() -> None:
    x, y = double("x"), double("y")
    out1 = neg(add(x, y))
    out2 = exp(neg(add(x, y)))
    fg = fgraph([x, y], [out1, out2])
    assert len(fg.apply_nodes) == 5
    merge = MergeOptimizer()
    merge.rewrite(fg)
    assert len(fg.apply_nodes) == 3
    assert fg.outputs[1].owner.inputs[0] is fg.outputs[0]
    assert merge.merged_nodes == 2
    fg.check_integrity()


def test_merge_keeps_different_ops_and_input_orders() -> None:
    x, y = double("x"), double("y")
    fg = fgraph([x, y], [add(x, y), mul(x, y), add(y, x), Binary("add")(x, y)])
    MergeOptimizer().rewrite(fg)
    a, m, a_swapped, a_again = fg.outputs
    assert a is a_again  # equal ops (by __props__), same inputs: merged
    assert len({a, m, a_swapped}) == 3
    assert len(fg.apply_nodes) == 3


def test_merge_equal_constants_then_nodes() -> None:
    x = double("x")
    c1, c2, c3 = const(2.0), const(2.0), const(3.0)
    fg = fgraph([x], [mul(x, c1), mul(x, c2), mul(x, c3)])
    merge = MergeOptimizer()
    merge.rewrite(fg)
    o1, o2, o3 = fg.outputs
    assert o1 is o2
    assert o3 is not o1
    kept = o1.owner.inputs[1]
    assert kept in (c1, c2)
    assert o3.owner.inputs[1] is c3
    assert merge.merged_constants == 1 and merge.merged_nodes == 1
    assert (c1 if kept is c2 else c2) not in fg.variables


def test_merge_does_nothing_without_duplicates() -> None:
    x, y = double("x"), double("y")
    out = neg(add(x, y))
    fg = fgraph([x, y], [out])
    assert MergeOptimizer().rewrite(fg) == 0
    assert fg.outputs == [out]


# ---------------------------------------------------------------------- sequences


class Recording(GraphRewriter):
    def __init__(self, label, log):
        self.label = label
        self.log = log
        self.name = label

    def apply(self, fgraph):
        self.log.append(self.label)


def test_sequential_graph_rewriter_runs_in_order_and_wraps_node_rewriters() -> None:
    log: list[str] = []
    seq = SequentialGraphRewriter(Recording("a", log), local_neg_neg, Recording("b", log))
    assert isinstance(seq.rewriters[1], WalkingGraphRewriter)
    x = double("x")
    fg = fgraph([x], [neg(neg(x))])
    seq(fg)
    assert log == ["a", "b"]
    assert fg.outputs == [x]


# ---------------------------------------------------------------------- database


def test_database_register_and_lookup() -> None:
    db = RewriteDatabase()
    merge = MergeOptimizer()
    db.register("merge", merge, "fast_run", position=3)
    assert "merge" in db and "other" not in db
    assert db["merge"] is merge
    assert db.tags("merge") == {"fast_run", "merge"}
    with pytest.raises(ValueError, match="already registered"):
        db.register("merge", MergeOptimizer(), "fast_run")
    with pytest.raises(KeyError, match="nope"):
        db["nope"]
    with pytest.raises(TypeError):
        db.register("bad", object())
    db.register("later", MergeOptimizer())
    assert db.position("later") == 4  # default: after the last entry


def names_of(rewriter):
    return [str(r) for r in rewriter.rewriters]


def test_database_query_include_exclude_require_and_positions() -> None:
    log: list[str] = []
    db = RewriteDatabase()
    db.register("c", Recording("c", log), "fast_run", "inplace", position=2)
    db.register("b", Recording("b", log), "fast_run", position=1)
    db.register("a", Recording("a", log), "fast_compile", position=1)
    db.register("d", Recording("d", log), "fast_run", "stable", position=0.5)

    assert names_of(db.query(include=["fast_run"])) == ["d", "b", "c"]
    assert names_of(db.query(include=["fast_run", "fast_compile"])) == ["d", "a", "b", "c"]
    assert names_of(db.query(include=["fast_run"], exclude=["inplace"])) == ["d", "b"]
    assert names_of(db.query(include=["fast_run"], require=["stable"])) == ["d"]
    assert names_of(db.query(include=["a"])) == ["a"]  # the name is a tag
    assert names_of(db.query()) == []
    q = RewriteDatabaseQuery(include=["fast_run"]).excluding("c").including("a")
    assert names_of(db.query(q)) == ["d", "a", "b"]

    x = double("x")
    db.query(include=["fast_run"]).rewrite(fgraph([x], [neg(x)]))
    assert log == ["d", "b", "c"]


def test_equilibrium_db_and_nested_queries() -> None:
    db = RewriteDatabase()
    canon = EquilibriumDB()
    db.register("canonicalize", canon, "fast_run", position=1)
    assert canon.name == "canonicalize"
    canon.register("local_neg_neg", local_neg_neg, "fast_run")
    canon.register("local_add_negs", local_add_negs, "fast_run")
    canon.register("local_swap", local_swap, use_db_name_as_tag=False)

    assert canon.tags("local_neg_neg") == {"fast_run", "local_neg_neg", "canonicalize"}
    assert canon.tags("local_swap") == {"local_swap"}

    rewriter = db.query(include=["fast_run"])
    (inner,) = rewriter.rewriters
    assert isinstance(inner, EquilibriumGraphRewriter)
    assert inner.node_rewriters == [local_neg_neg, local_add_negs]

    # including the database name selects what was registered with that tag
    (inner,) = db.query(include=["canonicalize"]).rewriters
    assert inner.node_rewriters == [local_neg_neg, local_add_negs]
    # subquery narrows one nested database
    q = RewriteDatabaseQuery(
        include=["fast_run"], subquery={"canonicalize": RewriteDatabaseQuery(["local_add_negs"])}
    )
    (inner,) = db.query(q).rewriters
    assert inner.node_rewriters == [local_add_negs]
    # a nested database selecting nothing contributes nothing
    assert db.query(include=["fast_run"], exclude=["canonicalize"]).rewriters == []

    x, y, z = double("x"), double("y"), double("z")
    fg = fgraph([x, y, z], [add(add(neg(x), neg(y)), neg(z))])
    db.query(include=["fast_run"]).rewrite(fg)
    assert same(fg, neg(add(add(x, y), z)))


class NegNegPlugin:
    calls = 0

    @hookimpl
    def opweave_rewrites(self, db):
        type(self).calls += 1
        db["canonicalize"].register("local_neg_neg", local_neg_neg, "fast_run")


def test_build_rewrite_database_calls_plugins_on_a_fresh_manager() -> None:
    pm = create_plugin_manager(autoload=False)
    pm.register(NegNegPlugin(), name="negneg")
    NegNegPlugin.calls = 0
    db = build_rewrite_database(pm)
    assert NegNegPlugin.calls == 1
    phases = ["merge1", "canonicalize", "stabilize", "specialize", "merge2", "inplace"]
    assert [n for n in db if n in phases] == phases
    assert [db.position(n) for n in phases] == [0, 1, 1.5, 2, 49, 50]
    assert {"fast_run", "fast_compile", "merge"} <= db.tags("merge1")
    assert {"fast_run", "inplace"} <= db.tags("inplace")
    assert "fast_compile" not in db.tags("canonicalize")
    assert isinstance(db["canonicalize"], EquilibriumDB)
    assert "local_neg_neg" in db["canonicalize"]

    # every call builds a new database: nothing is shared between compilations
    other = build_rewrite_database(pm)
    assert other is not db and other["canonicalize"] is not db["canonicalize"]
    assert NegNegPlugin.calls == 2

    x, y = double("x"), double("y")
    fg = fgraph([x, y], [add(neg(neg(x)), y), add(x, y)])
    db.query(include=["fast_run"]).rewrite(fg)
    assert fg.outputs[0] is fg.outputs[1]  # neg(neg(x)) -> x, then merged
    fg = fgraph([x, y], [add(neg(neg(x)), y)])
    db.query(include=["fast_compile"]).rewrite(fg)
    assert same(fg, add(neg(neg(x)), y))  # canonicalize is not part of fast_compile


def test_build_rewrite_database_without_plugins() -> None:
    pm = create_plugin_manager(autoload=False)
    pm.unregister(name="opweave.builtin")  # not even the core's own rewrites
    db = build_rewrite_database(pm)
    assert len(db["canonicalize"]) == 0
    x = double("x")
    fg = fgraph([x], [neg(x), neg(x)])
    db.query(include=["fast_run"]).rewrite(fg)
    assert fg.outputs[0] is fg.outputs[1]


def test_scalar_tracks_show_a_rewriter_only_its_scalar_ops() -> None:
    """A rewriter with ``scalar_tracks`` is shown the elementwise nodes of those scalar
    Ops only, by the equilibrium and walking rewriters alike; without, every one."""
    import opweave.scalar as ps
    import opweave.tensor as ot
    from opweave.tensor.elemwise import Elemwise

    seen: list[str] = []

    @node_rewriter([Elemwise], scalar_tracks=(ps.Mul, ps.Exp))
    def some(fgraph: FunctionGraph, node: Apply) -> bool:
        seen.append(type(node.op.scalar_op).__name__)
        return False

    @node_rewriter([Elemwise])
    def every(fgraph: FunctionGraph, node: Apply) -> bool:
        seen.append(type(node.op.scalar_op).__name__)
        return False

    assert some.scalar_tracks() == (ps.Mul, ps.Exp) and every.scalar_tracks() is None
    x = ot.dvector("x")
    g = FunctionGraph([x], [ot.exp(x * 2.0 + 1.0) * x], clone=False)
    for rewriter, expected in (
        (EquilibriumGraphRewriter([some]), ["Exp", "Mul", "Mul"]),
        (in2out(some), ["Exp", "Mul", "Mul"]),
        (EquilibriumGraphRewriter([every]), ["Add", "Exp", "Mul", "Mul"]),
    ):
        seen.clear()
        rewriter.rewrite(g)
        assert sorted(seen) == expected
