"""FunctionGraph features: History, Validator, ReplaceValidate and the DestroyHandler."""

from __future__ import annotations

import pytest

from opweave.graph.basic import Apply, Constant, io_toposort
from opweave.graph.features import (
    Bookkeeper,
    ChangeTracker,
    DestroyHandler,
    Feature,
    History,
    ReplacementDidNotRemoveError,
    ReplaceValidate,
    Validator,
)
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.type import Type
from opweave.graph.utils import InconsistencyError

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


double = Double()


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
    """Overwrites its first input."""

    __props__ = ()
    destroy_map = {0: [0]}

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])


class AddInplaceSame(AddInplace):
    """Like AddInplace, but may be given the same variable twice."""

    destroyhandler_tolerate_same = [(0, 1)]


class View(Op):
    """Returns a view of its input."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x):
        return Apply(self, [x], [double()])


class BadView(Op):
    __props__ = ()
    view_map = {0: [0, 1]}

    def make_node(self, x, y):
        return Apply(self, [x, y], [double()])


add, mul = Binary("add"), Binary("mul")
neg = Unary("neg")
add_inplace = AddInplace()
add_inplace_same = AddInplaceSame()
view = View()


def make_fgraph(inputs, outputs, *features):
    return FunctionGraph(inputs, outputs, features=list(features), clone=False)


def mutable(name):
    var = double(name)
    var.tag.mutable = True
    return var


# ---------------------------------------------------------------------- Feature, Bookkeeper


class Recorder(Bookkeeper):
    def __init__(self):
        self.events = []

    def on_import(self, fgraph, node, reason):
        self.events.append(("import", str(node.op), reason))

    def on_prune(self, fgraph, node, reason):
        self.events.append(("prune", str(node.op), reason))

    def on_change_input(self, fgraph, node, i, old_var, new_var, reason=None):
        self.events.append(("change", i, old_var, new_var))


def test_feature_base_callbacks_are_no_ops() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [add(x, y)], Feature())
    fg.replace(fg.outputs[0], mul(x, y))
    assert str(fg.outputs[0].owner.op) == "mul"
    assert Feature().orderings(fg) == {}


def test_bookkeeper_imports_existing_nodes_on_attach_and_sees_edits() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    out = neg(a)
    fg = make_fgraph([x, y], [out])
    rec = Recorder()
    fg.attach_feature(rec)
    assert rec.events == [("import", "add", "on_attach"), ("import", "neg", "on_attach")]
    rec.events.clear()
    m = mul(x, y)
    fg.replace(a, m, reason="test")
    assert ("import", "mul", "test") in rec.events
    assert ("change", 0, a, m) in rec.events
    assert ("prune", "add", "test") in rec.events
    rec.events.clear()
    fg.remove_feature(rec)
    assert rec.events == [("prune", "neg", "on_detach"), ("prune", "mul", "on_detach")]


def test_change_tracker_counts_edits() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [add(x, y)])
    tracker = ChangeTracker()
    fg.attach_feature(tracker)
    assert tracker.changes == 0
    fg.replace(fg.outputs[0], mul(x, y))
    assert tracker.changes == 2  # one import, one input change


# ---------------------------------------------------------------------- History


def test_history_revert_restores_graph() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    out = neg(a)
    fg = make_fgraph([x, y], [out], History())
    chk = fg.checkpoint()
    m = mul(x, y)
    fg.replace(a, m)
    fg.replace(fg.outputs[0], neg(m))
    assert fg.outputs[0] is not out
    assert a.owner not in fg.apply_nodes
    assert fg.checkpoint() == chk + 2

    fg.revert(chk)
    assert fg.outputs[0] is out
    assert out.owner.inputs[0] is a
    assert fg.apply_nodes == {a.owner, out.owner}
    assert m.owner not in fg.apply_nodes
    fg.check_integrity()
    assert fg.checkpoint() == chk


def test_history_partial_revert_and_detach() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    fg = make_fgraph([x, y], [neg(a)])
    history = History()
    fg.attach_feature(history)
    m = mul(x, y)
    fg.replace(a, m)
    chk = fg.checkpoint()
    s = add(m, y)
    fg.replace(m, s)
    fg.revert(chk)
    assert fg.outputs[0].owner.inputs[0] is m
    fg.attach_feature(History())  # a second History is refused silently
    assert sum(isinstance(f, History) for f in fg.features) == 1
    fg.remove_feature(history)
    assert not hasattr(fg, "checkpoint") and not hasattr(fg, "revert")


# ---------------------------------------------------------------------- Validator / ReplaceValidate


class NoNeg(Feature):
    """Rejects graphs containing a neg node."""

    def validate(self, fgraph):
        if any(node.op == neg for node in fgraph.apply_nodes):
            raise InconsistencyError("neg is not allowed")


def test_validator_runs_every_feature() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [add(x, y)], Validator(), NoNeg())
    fg.validate()
    assert fg.consistent()
    fg.replace(fg.outputs[0], neg(x))
    with pytest.raises(InconsistencyError, match="neg is not allowed"):
        fg.validate()
    assert not fg.consistent()


def test_replace_validate_attaches_history_and_validator() -> None:
    x, y = double("x"), double("y")
    rv = ReplaceValidate()
    fg = make_fgraph([x, y], [add(x, y)], rv)
    kinds = [type(f) for f in fg.features]
    assert History in kinds and Validator in kinds and ReplaceValidate in kinds
    fg.attach_feature(ReplaceValidate())
    assert sum(isinstance(f, ReplaceValidate) for f in fg.features) == 1
    fg.remove_feature(rv)
    assert not hasattr(fg, "replace_validate") and not hasattr(fg, "replace_all_validate")


def test_replace_validate_accepts_valid_replacement() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    fg = make_fgraph([x, y], [a], ReplaceValidate(), NoNeg())
    m = mul(x, y)
    fg.replace_validate(a, m, reason="ok")
    assert fg.outputs[0] is m


def test_replace_all_validate_reverts_when_validation_fails() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    b = mul(a, y)
    fg = make_fgraph([x, y], [b, a], ReplaceValidate(), NoNeg())
    before_nodes = set(fg.apply_nodes)
    new_a = mul(x, x)
    with pytest.raises(InconsistencyError):
        fg.replace_all_validate([(a, new_a), (b, neg(y))], reason="bad")
    assert fg.outputs == [b, a]
    assert fg.apply_nodes == before_nodes
    assert b.owner.inputs[0] is a
    fg.check_integrity()


def test_replace_all_validate_reverts_when_a_replacement_raises() -> None:
    class Other(Double):
        def __eq__(self, other):
            return type(other) is Other

        def __hash__(self):
            return hash(Other)

    x, y = double("x"), double("y")
    a, b = add(x, y), mul(x, y)
    fg = make_fgraph([x, y], [a, b], ReplaceValidate())
    with pytest.raises(TypeError):
        fg.replace_all_validate([(a, neg(x)), (b, Other()("z"))])
    assert fg.outputs == [a, b]
    fg.check_integrity()


def test_replace_all_validate_remove() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    out = neg(a)
    fg = make_fgraph([x, y], [out, a], ReplaceValidate())
    with pytest.raises(ReplacementDidNotRemoveError):
        # `a` is still an output, so its node stays: refused and reverted.
        fg.replace_all_validate_remove([(out, neg(x))], remove=[a.owner])
    assert fg.outputs[0] is out
    m = mul(x, y)
    fg.replace_all_validate_remove([(a, m)], remove=[a.owner])
    assert a.owner not in fg.apply_nodes


# ---------------------------------------------------------------------- DestroyHandler


def position(order, var):
    return order.index(var.owner)


def test_destroyer_is_ordered_after_readers() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    r = neg(t)  # reads t
    d = add_inplace(t, y)  # overwrites t
    fg = make_fgraph([x, y], [r, d], DestroyHandler())
    assert fg.orderings() == {d.owner: [r.owner]}
    fg.validate()
    # the data dependencies alone let d run before r here ...
    data_order = io_toposort(fg.inputs, fg.outputs)
    assert position(data_order, d) < position(data_order, r)
    # ... the DestroyHandler's orderings do not
    order = fg.toposort()
    assert position(order, r) < position(order, d)
    assert fg.destroyers(t) == [d.owner]
    assert fg.destroyers(r) == []
    assert fg.has_destroyers([t]) and not fg.has_destroyers([x, y, r])


def test_destroying_a_protected_input_is_refused() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [add_inplace(x, y)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="graph input"):
        fg.validate()
    assert not fg.consistent()


def test_destroying_a_mutable_input_is_allowed() -> None:
    x, y = mutable("x"), double("y")
    r = neg(x)
    d = add_inplace(x, y)
    fg = make_fgraph([x, y], [d, r], DestroyHandler())
    fg.validate()
    order = fg.toposort()
    assert position(order, r) < position(order, d)


def test_destroying_a_constant_is_refused() -> None:
    y = double("y")
    c = Constant(double, 2.0)
    fg = make_fgraph([y], [add_inplace(c, y)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="constant"):
        fg.validate()


def test_double_destruction_is_refused() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [add_inplace(t, y), add_inplace(t, x)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="destroyed"):
        fg.validate()


def test_destroying_an_output_is_refused() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [t, add_inplace(t, y)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="output"):
        fg.validate()


def test_output_viewing_a_destroyed_variable_is_refused() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [view(t), add_inplace(t, y)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="view"):
        fg.validate()


def test_reader_needing_the_destroyer_result_is_a_cycle() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    d = add_inplace(t, y)
    r = add(t, d)  # reads t (must run before d) and needs d (must run after d)
    fg = make_fgraph([x, y], [r], DestroyHandler())
    with pytest.raises(InconsistencyError, match="scheduled"):
        fg.validate()


def test_views_are_tracked_through_a_chain() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    v1 = view(t)
    v2 = view(v1)
    reader = neg(v2)
    d = add_inplace(v1, y)  # destroys t's memory through a view
    other = neg(t)
    dh = DestroyHandler()
    fg = make_fgraph([x, y], [d, reader, other], dh)
    assert dh.view_i == {v1: t, v2: v1}
    assert dh.view_o == {t: {v1}, v1: {v2}}
    assert dh.get_root(v2) is t
    assert dh.get_impact(t) == {v1, v2}
    fg.validate()
    assert set(fg.orderings()[d.owner]) == {v1.owner, v2.owner, reader.owner, other.owner}
    order = fg.toposort()
    for before in (v2, reader, other):
        assert position(order, before) < position(order, d)
    assert fg.destroyers(t) == fg.destroyers(v2) == [d.owner]


def test_double_destruction_through_views_is_refused() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [add_inplace(view(t), y), add_inplace(t, x)], DestroyHandler())
    with pytest.raises(InconsistencyError):
        fg.validate()


def test_view_of_a_protected_input_cannot_be_destroyed() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [add_inplace(view(x), y)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="graph input"):
        fg.validate()


def test_input_aliasing_needs_tolerate_flags() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [add_inplace(t, t)], DestroyHandler())
    with pytest.raises(InconsistencyError, match="alias"):
        fg.validate()
    t2 = mul(x, y)
    fg2 = make_fgraph([x, y], [add_inplace_same(t2, t2)], DestroyHandler())
    fg2.validate()
    t3 = mul(x, y)
    fg3 = make_fgraph([x, y], [add_inplace_same(t3, view(t3))], DestroyHandler())
    with pytest.raises(InconsistencyError, match="alias"):
        fg3.validate()


def test_view_map_with_two_inputs_is_not_supported() -> None:
    x, y = double("x"), double("y")
    fg = make_fgraph([x, y], [BadView()(x, y)])
    with pytest.raises(NotImplementedError, match="one input"):
        fg.attach_feature(DestroyHandler())
    assert not hasattr(fg, "destroy_handler")


def test_view_follows_input_changes_and_prunes() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    v = view(t)
    dh = DestroyHandler()
    fg = make_fgraph([x, y], [neg(v)], dh)
    u = add(x, y)
    fg.replace(t, u)
    assert dh.view_i == {v: u}
    assert dh.view_o == {u: {v}}
    fg.replace(v, neg(x))
    assert dh.view_i == {} and dh.view_o == {}


def test_destroyers_forgotten_when_pruned_and_handler_detach() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    d = add_inplace(t, y)
    dh = DestroyHandler()
    fg = make_fgraph([x, y], [neg(d)], dh)
    assert dh.destroyers_set == {d.owner}
    fg.replace(d, add(t, y))
    assert dh.destroyers_set == set()
    assert not fg.has_destroyers([t])
    fg.attach_feature(DestroyHandler())  # a second handler is refused silently
    assert sum(isinstance(f, DestroyHandler) for f in fg.features) == 1
    fg.remove_feature(dh)
    assert not hasattr(fg, "destroyers") and not hasattr(fg, "destroy_handler")


def test_replace_validate_reverts_a_forbidden_destruction() -> None:
    x, y = double("x"), double("y")
    a = add(x, y)
    out = neg(a)
    fg = make_fgraph([x, y], [out], DestroyHandler(), ReplaceValidate())
    with pytest.raises(InconsistencyError):
        fg.replace_validate(a, add_inplace(x, y))  # x is a protected input
    assert out.owner.inputs[0] is a
    assert not fg.has_destroyers([x])
    t = mul(x, y)
    fg.replace_validate(a, add_inplace(t, y))  # t is an intermediate: fine
    assert fg.has_destroyers([t])


def test_features_follow_a_cloned_graph() -> None:
    x, y = double("x"), double("y")
    t = mul(x, y)
    fg = make_fgraph([x, y], [neg(t), add_inplace(t, y)], ReplaceValidate(), DestroyHandler())
    new, equiv = fg.clone_get_equiv()
    kinds = {type(f) for f in new.features}
    assert {History, Validator, ReplaceValidate, DestroyHandler} <= kinds
    assert new.destroy_handler is not fg.destroy_handler
    assert new.destroyers(equiv[t]) == [equiv[fg.outputs[1]].owner]
    new.validate()
    chk = new.checkpoint()
    new.replace(new.outputs[0], new.outputs[1])
    new.revert(chk)
    assert new.outputs[0] is equiv[fg.outputs[0]]
