"""Graphs, their features and Composite Ops survive ``pickle`` with their structure intact.

The helpers features install on a graph (``fgraph.checkpoint``, ``fgraph.revert``,
``fgraph.validate``, ``fgraph.replace_validate`` ...) used to be lambdas, which made every
FunctionGraph, and so every compiled function, unpicklable.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Apply, Constant, io_toposort
from opweave.graph.features import (
    ChangeTracker,
    DestroyHandler,
    History,
    ReplaceValidate,
    Validator,
)
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import build_rewrite_database
from opweave.graph.utils import InconsistencyError
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise

LINKERS = ("py", "vm", "c", "cvm")

#: The helpers each feature installs on the graph it is attached to.
INSTALLED = {
    History: ("checkpoint", "revert"),
    Validator: ("validate", "consistent"),
    ReplaceValidate: ("replace_validate", "replace_all_validate", "replace_all_validate_remove"),
    DestroyHandler: ("destroyers", "has_destroyers"),
}


def roundtrip(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def structure(fg: FunctionGraph) -> list[Any]:
    """A description of ``fg`` that two equal graphs share and that ignores identity."""
    nodes = io_toposort(fg.inputs, fg.outputs)
    index: dict[Any, Any] = {v: ("in", k) for k, v in enumerate(fg.inputs)}
    desc: list[Any] = [[(str(v), v.type) for v in fg.inputs]]
    for n, node in enumerate(nodes):
        args = []
        for v in node.inputs:
            if isinstance(v, Constant):
                args.append(("const", v.type, np.asarray(v.data).tolist()))
            else:
                args.append(index[v])
        desc.append((node.op, tuple(args), tuple(o.type for o in node.outputs)))
        for j, out in enumerate(node.outputs):
            index[out] = ("node", n, j)
    desc.append([index.get(o, str(o)) for o in fg.outputs])
    desc.append(
        sorted(
            (repr(index.get(var, str(var))), sorted(repr(c[1]) for c in clients))
            for var, clients in fg.clients.items()
        )
    )
    return desc


def rewritten_graph() -> tuple[FunctionGraph, list[Any], Any]:
    """A FAST_RUN-rewritten graph (fused, in place) with History, ReplaceValidate and
    DestroyHandler attached, the inputs it takes and the function computing it."""
    x, y = ot.dmatrix("x"), ot.dvector("y")
    outs = [ot.exp(x) * y + ot.tanh(x) - 2.0, ot.sum(x * x, axis=0) + y]
    fg = FunctionGraph([x, y], outs, features=[ReplaceValidate(), DestroyHandler()])
    include, exclude, require = Mode(optimizer="fast_run").rewrite_query()  # type: ignore[misc]
    build_rewrite_database().query(include=include, exclude=exclude, require=require).rewrite(fg)
    values = [np.linspace(-1.0, 1.0, 6).reshape(2, 3), np.array([0.5, -1.5, 2.0])]
    return fg, values, opweave.function([x, y], outs, mode=Mode(linker="py", optimizer=None))


def run_graph(fg: FunctionGraph, values: list[Any], linker: str = "py") -> list[Any]:
    """Compile (a copy of) ``fg`` without rewriting and run it on ``values``."""
    copy = fg.clone()
    f = opweave.function(
        copy.inputs, copy.outputs, mode=Mode(linker=linker, optimizer=None), accept_inplace=True
    )
    return f(*values)  # type: ignore[no-any-return]


def test_rewritten_graph_with_features_roundtrips_with_equal_structure() -> None:
    fg, values, _ = rewritten_graph()
    assert any(
        isinstance(n.op.scalar_op, Composite) for n in fg.apply_nodes if hasattr(n.op, "scalar_op")
    )
    before = structure(fg)
    text = opweave.dprint(fg, file="str", print_type=True)

    new = roundtrip(fg)

    assert new is not fg
    assert structure(new) == before
    assert opweave.dprint(new, file="str", print_type=True) == text
    new.check_integrity()
    assert [type(f) for f in new.features] == [type(f) for f in fg.features]
    assert new.update_mapping == fg.update_mapping
    for a, b in zip(run_graph(new, values), run_graph(fg, values), strict=True):
        np.testing.assert_array_equal(a, b)


def test_unpickled_helpers_act_on_the_unpickled_graph() -> None:
    fg, _, _ = rewritten_graph()
    new = roundtrip(fg)
    for feature in new.features:
        for name in INSTALLED.get(type(feature), ()):
            helper = getattr(new, name)
            assert getattr(helper, "fgraph", new) is new, name
    handler = new.destroy_handler
    assert handler in new.features and handler.fgraph is new
    assert {n for n in handler.destroyers_set} <= new.apply_nodes
    history = next(f for f in new.features if isinstance(f, History))
    assert list(history.history) == [new]


def test_unpickled_graph_can_still_be_edited_validated_and_reverted() -> None:
    fg, values, _ = rewritten_graph()
    new = roundtrip(fg)
    before = structure(new)
    reference = run_graph(new, values)

    chk = new.checkpoint()
    out = new.outputs[1]
    new.replace_validate(out, (out * 2.0).astype(out.dtype), reason="test")
    assert structure(new) != before
    np.testing.assert_allclose(run_graph(new, values)[1], 2 * reference[1])
    new.revert(chk)
    assert structure(new) == before
    new.validate()
    assert new.consistent()
    new.check_integrity()
    # The original graph is untouched by edits of the copy.
    assert structure(fg) == before


def test_unpickled_destroy_handler_still_refuses_destroying_an_input() -> None:
    x = ot.dvector("x")
    fg = FunctionGraph([x], [ot.exp(x) + 1.0], features=[ReplaceValidate(), DestroyHandler()])
    new = roundtrip(fg)
    inplace_add = Elemwise(ps.add, inplace_pattern={0: 0})
    out = new.outputs[0]
    bad = inplace_add(new.inputs[0], ot.constant(1.0))
    chk = new.checkpoint()
    with pytest.raises(InconsistencyError):
        new.replace_validate(out, bad)
    assert new.checkpoint() == chk
    assert structure(new) == structure(fg)


def test_graph_with_every_feature_roundtrips() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    tracker = ChangeTracker()
    fg = FunctionGraph(
        [x, y],
        [x * y + 1.0],
        features=[History(), Validator(), ReplaceValidate(), DestroyHandler(), tracker],
    )
    fg.replace_validate(fg.outputs[0], fg.outputs[0] + fg.inputs[1])
    new = roundtrip(fg)
    assert structure(new) == structure(fg)
    new_tracker = next(f for f in new.features if isinstance(f, ChangeTracker))
    assert new_tracker.changes == tracker.changes > 0
    history = next(f for f in new.features if isinstance(f, History))
    assert new.checkpoint() == fg.checkpoint() == len(history.history[new])
    new.revert(0)
    new.check_integrity()
    assert opweave.dprint(new, file="str") == opweave.dprint(
        FunctionGraph([x, y], [x * y + 1.0]), file="str"
    )


def make_composite() -> Composite:
    a, b, c = ps.float64("a"), ps.float64("b"), ps.int32("c")
    return Composite([a, b, c], [ps.exp(a) * b + c, ps.maximum(a, b) - 1.5], name=None)


def test_composite_made_in_a_test_roundtrips_equal() -> None:
    op = make_composite()
    assert str(op).startswith("Composite{")  # caches the printed form
    new = roundtrip(op)
    assert new == op and hash(new) == hash(op)
    assert not [k for k in new.__dict__ if k.startswith("_cache_")]
    assert str(new) == str(op)
    assert new.inputs_type == op.inputs_type and new.outputs_type == op.outputs_type


@pytest.mark.parametrize("linker", LINKERS)
def test_unpickled_composite_computes_the_same(linker: str) -> None:
    op = make_composite()
    a, b = ot.dvector("a"), ot.dvector("b")
    c = ot.ivector("c")
    values = [
        np.array([0.5, -2.0, 3.0]),
        np.array([1.0, 4.0, -0.25]),
        np.array([1, -3, 7], "int32"),
    ]
    mode = Mode(linker=linker, optimizer=None)
    # Run the original first so that backends have cached what they build from it.
    expected = opweave.function([a, b, c], Elemwise(op)(a, b, c), mode=mode)(*values)
    new = roundtrip(op)
    got = opweave.function([a, b, c], Elemwise(new)(a, b, c), mode=mode)(*values)
    assert len(got) == len(expected) == 2
    for g, e in zip(got, expected, strict=True):
        assert g.dtype == e.dtype == np.float64
        np.testing.assert_array_equal(g, e)
    np.testing.assert_allclose(got[0], np.exp(values[0]) * values[1] + values[2])
    np.testing.assert_allclose(got[1], np.maximum(values[0], values[1]) - 1.5)


def test_composite_pickles_after_its_python_implementation_is_cached() -> None:
    from opweave_python.impls.scalar import composite_impl

    op = make_composite()
    impl = composite_impl(op)
    assert "_cache_python_impl" in op.__dict__
    new = roundtrip(op)
    assert "_cache_python_impl" not in new.__dict__
    np.testing.assert_allclose(composite_impl(new)(0.5, 2.0, 3), impl(0.5, 2.0, 3))


def test_nested_composite_in_a_graph_roundtrips() -> None:
    inner = make_composite()
    a, b = ps.float64("a"), ps.float64("b")
    outer = Composite([a, b], [inner(a, b, ps.constant(np.int32(2)))[0] * a])
    node = roundtrip(outer(ps.float64("p"), ps.float64("q")).owner)
    assert isinstance(node, Apply) and node.op == outer


# ------------------------------------------------- a function asked for the "auto" linker

#: Loads a pickled function in a process where the C backend's plugin is not loaded, and
#: prints the linker the function asks for, the one it got and its values.
LOAD_WITHOUT_C = """
import pickle, sys
import numpy as np
from opweave.plugins import create_plugin_manager, use_plugin_manager
pm = create_plugin_manager(autoload=False)
pm.set_blocked("c")
pm.load_entry_points()
with use_plugin_manager(pm):
    f = pickle.load(open(sys.argv[1], "rb"))
    print(f.maker.mode.linker, type(f.maker.linker).__module__.partition(".")[0])
    print(f(np.array([0.0, 1.0, -2.0])).tolist())
"""


@pytest.mark.parametrize("through", ["mode", "config"])
def test_auto_linker_is_chosen_again_where_unpickled(
    through: str, tmp_path: Any, fresh_python: Any
) -> None:
    x = ot.dvector("x")
    if through == "mode":
        f = opweave.function([x], ot.exp(x) * 2.0, mode=Mode(linker="auto"))
    else:
        with opweave.config.change_flags(linker="auto"):
            f = opweave.function([x], ot.exp(x) * 2.0)
    assert type(f.maker.linker).__module__.startswith("opweave_c")  # auto picked C here
    assert roundtrip(f).maker.mode.linker == "auto"
    path = tmp_path / "f.pkl"
    path.write_bytes(pickle.dumps(f))
    linkers, values = fresh_python(LOAD_WITHOUT_C, str(path)).splitlines()
    assert linkers.split() == ["auto", "opweave_python"]
    np.testing.assert_allclose(eval(values), np.exp([0.0, 1.0, -2.0]) * 2.0)
