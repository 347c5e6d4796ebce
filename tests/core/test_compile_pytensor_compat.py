"""``opweave.compile`` as PyTensor has it: aliased mutable inputs, ``default_update``,
names and module layout, ``Function.copy``, ``function_dump``, ``optdb``."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import In, Mode, Out
from opweave.graph import InconsistencyError
from opweave.link.lookup import LinkerNotFoundError
from opweave.tensor import dmatrix, dot, dscalar, dvector

LINKERS = ["py", "vm", "c", "cvm"]


def _fn(inputs, outputs, linker, **kwargs):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker), **kwargs)


# ---------------------------------------------------------------------- aliased inputs


def _two_mutable(linker, x_mutable=True, y_mutable=True):
    x, y = dvector("x"), dvector("y")
    m1, m2 = dmatrix("m1"), dmatrix("m2")
    return _fn(
        [In(x, mutable=x_mutable), In(y, mutable=y_mutable), m1, m2],
        dot(x * 2, m1) + dot(y * 3, m2),
        linker,
    )


def _expected(a, b, m1, m2):
    return (a * 2) @ m1 + (b * 3) @ m2


@pytest.mark.parametrize("linker", LINKERS)
def test_same_array_for_two_mutable_inputs(linker) -> None:
    f = _two_mutable(linker)
    v, m = np.arange(1.0, 6.0), np.eye(5)
    np.testing.assert_allclose(f(v, v, m, m), [5.0, 10.0, 15.0, 20.0, 25.0])


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(("x_mutable", "y_mutable"), [(True, False), (False, True)])
def test_mutable_input_aliasing_a_protected_one(linker, x_mutable, y_mutable) -> None:
    f = _two_mutable(linker, x_mutable, y_mutable)
    v = np.arange(1.0, 6.0)
    m1 = np.arange(25.0).reshape(5, 5)
    expected = _expected(v, v, m1, m1)
    np.testing.assert_allclose(f(v, v, m1, m1), expected)
    # The argument of the protected input is never overwritten.
    np.testing.assert_array_equal(v, np.arange(1.0, 6.0))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    "views",
    [
        lambda v: (v, v[::-1]),
        lambda v: (v[1:], v[:-1]),
        lambda v: (v[::2], v[::2]),
        lambda v: (v[:3], v[:3].copy()),  # no shared memory: nothing to copy
    ],
    ids=["reversed", "shifted", "strided", "distinct"],
)
def test_views_of_one_array_for_mutable_inputs(linker, views) -> None:
    f = _two_mutable(linker)
    base = np.arange(1.0, 8.0)
    a, b = views(base)
    n = a.shape[0]
    m1 = np.arange(float(n * n)).reshape(n, n)
    m2 = np.eye(n) * 2.0
    expected = _expected(a.copy(), b.copy(), m1, m2)
    np.testing.assert_allclose(f(a, b, m1, m2), expected)


@pytest.mark.parametrize("linker", LINKERS)
def test_aliased_arguments_by_keyword_and_default(linker) -> None:
    x, y, m = dvector("x"), dvector("y"), dmatrix("m")
    v = np.arange(1.0, 4.0)
    f = _fn([In(x, mutable=True), In(y, value=v, borrow=True), m], dot(x * 2, m) + y, linker)
    eye = np.eye(3)
    np.testing.assert_allclose(f(x=v, m=eye), v * 3)  # x is the default of y
    np.testing.assert_allclose(f(v, m=eye), v * 3)
    np.testing.assert_allclose(f(v, v, eye), v * 3)


@pytest.mark.parametrize("linker", LINKERS)
def test_unaliased_mutable_argument_is_still_overwritten(linker) -> None:
    # Copies are made only for aliased arguments: a mutable input is still overwritten.
    f = _two_mutable(linker)
    a, b, m = np.arange(1.0, 6.0), np.arange(6.0, 11.0), np.eye(5)
    expected = _expected(a, b, m, m)
    np.testing.assert_allclose(f(a, b, m, m), expected)
    np.testing.assert_allclose(a, np.arange(1.0, 6.0) * 2)
    np.testing.assert_allclose(b, np.arange(6.0, 11.0) * 3)


def _shared_updated_in_place(linker):
    s = ot.shared(np.arange(1.0, 6.0), name="s")
    x = dvector("x")
    doubled = s * 2.0
    f = _fn([x], doubled + x, linker, updates={s: doubled})
    return s, f


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("view", [lambda a: a, lambda a: a[::-1]], ids=["same", "reversed"])
def test_shared_value_passed_to_a_function_updating_it_in_place(linker, view) -> None:
    s, f = _shared_updated_in_place(linker)
    assert f.maker.fgraph.destroyers(f.maker.fgraph.inputs[1])  # updated in place
    start = s.get_value()
    arg = view(s.get_value(borrow=True))
    np.testing.assert_allclose(f(arg), start * 2 + view(start))
    np.testing.assert_allclose(s.get_value(), start * 2)
    # Unaliased arguments are not copied, and the next call sees the new value.
    np.testing.assert_allclose(f(np.ones(5)), start * 4 + 1)


@pytest.mark.parametrize("linker", LINKERS)
def test_two_shared_variables_sharing_memory(linker) -> None:
    base = np.arange(1.0, 6.0)
    s = ot.shared(base, borrow=True, name="s")
    t = ot.shared(base, borrow=True, name="t")
    assert np.shares_memory(s.get_value(borrow=True), t.get_value(borrow=True))
    doubled = s * 2.0
    f = _fn([], doubled + t, linker, updates={s: doubled})
    start = base.copy()
    np.testing.assert_allclose(f(), start * 3)
    np.testing.assert_allclose(s.get_value(), start * 2)
    np.testing.assert_allclose(t.get_value(), start)


@pytest.mark.parametrize("linker", LINKERS)
def test_functions_without_destroyed_inputs_do_not_check(linker, monkeypatch) -> None:
    x, y = dvector("x"), dvector("y")
    f = _fn([x, y], x * 2 + y, linker)
    g = _two_mutable(linker)
    calls = []

    def counting(a, b):
        calls.append(1)
        return np.may_share_memory(a, b)

    monkeypatch.setattr(ot.TensorType, "may_share_memory", staticmethod(counting))
    v = np.arange(3.0)
    np.testing.assert_allclose(f(v, v), v * 3)
    assert calls == []
    m = np.eye(5)
    w = np.arange(5.0)
    np.testing.assert_allclose(g(w, w, m, m), np.arange(5.0) * 5)
    assert calls


# ---------------------------------------------------------------------- default_update


def _counter(start=0.0):
    s = ot.shared(np.float64(start), name="count")
    s.default_update = s + 1.0
    return s


def test_default_update_is_applied() -> None:
    s = _counter()
    f = opweave.function([], s)
    assert [float(f()) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert float(s.get_value()) == 3.0
    assert [target for target, _ in f.maker.updates] == [s]


def test_default_update_through_an_output_expression() -> None:
    s = _counter(5.0)
    x = dscalar("x")
    f = opweave.function([x], x * s)
    assert float(f(2.0)) == 10.0
    assert float(f(2.0)) == 12.0


def test_explicit_update_overrides_default_update() -> None:
    s = _counter(1.0)
    f = opweave.function([], s, updates={s: s * 10.0})
    f()
    f()
    assert float(s.get_value()) == 100.0


@pytest.mark.parametrize("off", [True, "list"])
def test_no_default_updates(off) -> None:
    s = _counter()
    t = _counter()
    no = True if off is True else [s]
    f = opweave.function([], s + t, no_default_updates=no)
    f()
    assert float(s.get_value()) == 0.0
    assert float(t.get_value()) == (0.0 if off is True else 1.0)


def test_no_default_updates_must_be_bool_or_list() -> None:
    s = _counter()
    with pytest.raises(TypeError, match="no_default_updates must be True, False or a list"):
        opweave.function([], s, no_default_updates="s")


def test_default_update_with_givens() -> None:
    s = ot.shared(np.float64(1.0), name="s")
    k = dscalar("k")
    s.default_update = s + k
    x = dscalar("x")
    f = opweave.function([x], s, givens={k: x * 2.0})
    f(3.0)
    assert float(s.get_value()) == 7.0
    # A shared variable that givens replace is not in the graph: no default update.
    t = _counter(4.0)
    g = opweave.function([x], t * 2.0, givens={t: x})
    assert float(g(1.5)) == 3.0
    assert float(t.get_value()) == 4.0


def test_default_updates_found_in_default_updates() -> None:
    step = _counter(1.0)
    total = ot.shared(np.float64(0.0), name="total")
    total.default_update = total + step
    f = opweave.function([], total)
    f()
    f()
    assert (float(total.get_value()), float(step.get_value())) == (3.0, 3.0)


def test_default_update_of_the_wrong_type() -> None:
    s = ot.shared(np.zeros(3), name="s")
    s.default_update = ot.dmatrix("m")
    with pytest.raises(TypeError, match="default_update of shared variable s must be of its type"):
        opweave.function([], s)


def test_default_update_is_not_cloned() -> None:
    s = _counter()
    assert s.clone().default_update is None


def test_rebuild_collect_shared() -> None:
    from opweave.compile import rebuild_collect_shared

    s = _counter()
    x, y = dscalar("x"), dscalar("y")
    out = x + s
    ins, outs, (clone_d, update_d, update_expr, shared_inputs) = rebuild_collect_shared(
        [out], [y], replace={x: y * 2.0}
    )
    assert ins == [y] and shared_inputs == [s] and list(update_d) == [s]
    assert outs[0] is not out and clone_d[out] is outs[0]
    assert opweave.function([y], outs[0], no_default_updates=True)(1.5) == 3.0
    assert update_expr[0][0] is s
    _, unchanged, (_, no_updates, _, _) = rebuild_collect_shared(
        [out], [x], no_default_updates=True
    )
    assert unchanged[0] is out and no_updates == {}  # nothing replaced: the graph is kept
    with pytest.raises(ValueError, match="x is an input of the function"):
        rebuild_collect_shared([out], [x], replace={x: y})


# ---------------------------------------------------------------------- names and layout


def test_pytensor_module_layout_imports() -> None:
    from opweave.compile import aliasing, debug, executor, maker, mode, rebuild
    from opweave.compile.debug import debugmode, dump
    from opweave.compile.debugmode import DebugMode as OldDebugMode
    from opweave.compile.function import function as old_function
    from opweave.compile.function_maker import FunctionMaker as OldMaker

    assert maker.FunctionMaker is OldMaker is opweave.compile.FunctionMaker
    assert maker.function is old_function is opweave.compile.function is opweave.function
    assert executor.Function is opweave.compile.Function
    assert debug.DebugMode is debugmode.DebugMode is OldDebugMode
    assert dump.function_dump is opweave.compile.function_dump
    assert mode.optdb is opweave.compile.optdb
    assert mode.get_default_mode is opweave.compile.get_default_mode
    assert rebuild.rebuild_collect_shared is opweave.compile.rebuild_collect_shared
    for name in (
        "Supervisor",
        "add_supervisor_to_fgraph",
        "alias_root",
        "infer_reuse_pattern",
        "insert_deepcopy",
        "view_tree_set",
    ):
        assert getattr(aliasing, name) is getattr(opweave.compile, name)
    for name in opweave.compile.__all__:
        assert getattr(opweave.compile, name) is not None


def test_get_default_mode_follows_config() -> None:
    from opweave.compile.debug.debugmode import DebugMode
    from opweave.compile.mode import get_default_mode

    with opweave.config.change_flags(mode="FAST_COMPILE"):
        assert get_default_mode().optimizer == "fast_compile"
    with opweave.config.change_flags(mode="DebugMode"):
        assert isinstance(get_default_mode(), DebugMode)
    with opweave.config.change_flags(mode="FAST_RUN", linker="py"):
        assert get_default_mode().linker == "py"


@pytest.mark.parametrize(
    ("name", "optimizer"),
    [
        ("FAST_RUN", "fast_run"),
        ("fast_run", "fast_run"),
        ("Fast_Compile", "fast_compile"),
        ("fast_compile", "fast_compile"),
        ("Mode", "fast_run"),
    ],
)
def test_mode_names_any_case(name, optimizer) -> None:
    from opweave.compile.mode import get_mode

    mode = get_mode(name)
    assert mode.optimizer == optimizer
    x = dscalar("x")
    assert opweave.function([x], x + 1.0, mode=name)(1.0) == 2.0


@pytest.mark.parametrize("name", ["DebugMode", "DEBUG_MODE", "debugmode"])
def test_debug_mode_names(name) -> None:
    from opweave.compile.debug import DebugMode, InvalidValueError

    x = dvector("x")
    f = opweave.function([x], ot.log(x), mode=name)
    assert isinstance(f.maker.mode, DebugMode)
    with pytest.raises(InvalidValueError):
        f(np.array([-1.0]))


@pytest.mark.parametrize(("name", "linker"), [("C", "c"), ("cvm", "cvm")])
def test_linker_modes(name, linker) -> None:
    x = dvector("x")
    f = opweave.function([x], x * 2.0, mode=name)
    assert f.maker.linker.name == linker
    np.testing.assert_allclose(f(np.arange(3.0)), [0.0, 2.0, 4.0])


@pytest.mark.parametrize(
    ("name", "backend"), [("NUMBA", "Numba"), ("mlx", "MLX"), ("PYTORCH", "PyTorch")]
)
def test_foreign_backend_modes_name_the_opweave_equivalent(name, backend) -> None:
    x = dscalar("x")
    with pytest.raises(ValueError, match=rf"opweave ships no {backend} backend.*'cvm'"):
        opweave.function([x], x + 1.0, mode=name)
    with pytest.raises(ValueError, match=r"no NanGuardMode.*DebugMode"):
        opweave.function([x], x + 1.0, mode="NanGuardMode")
    with pytest.raises(ValueError, match="unknown mode 'FAST'"):
        opweave.function([x], x + 1.0, mode="FAST")


@pytest.mark.parametrize(
    ("name", "cls", "allow_gc"),
    [
        ("c|py", "CVMLinker", None),
        ("c|py_nogc", "CVMLinker", False),
        ("vm_nogc", "VMLinker", False),
        ("cvm_nogc", "CVMLinker", False),
        ("vm", "VMLinker", None),
        ("py", "PerformLinker", None),
    ],
)
def test_pytensor_linker_names(name, cls, allow_gc) -> None:
    x = dvector("x")
    f = opweave.function([x], (x + 1.0) * 2.0, mode=Mode(linker=name))
    assert type(f.maker.linker).__name__ == cls
    assert f.maker.linker.allow_gc is allow_gc
    # The loop frees intermediates unless told not to (the py linker keeps them all).
    assert f.fn.allow_gc is (allow_gc is None and cls != "PerformLinker")
    np.testing.assert_allclose(f(np.arange(3.0)), [2.0, 4.0, 6.0])
    with opweave.config.change_flags(linker=name):
        g = opweave.function([x], x * 3.0)
    assert type(g.maker.linker).__name__ == cls


@pytest.mark.parametrize(("name", "backend"), [("numba", "Numba"), ("mlx", "MLX")])
def test_foreign_linkers_name_the_available_ones(name, backend) -> None:
    x = dscalar("x")
    with pytest.raises(LinkerNotFoundError) as info:
        opweave.function([x], x + 1.0, mode=Mode(linker=name))
    msg = str(info.value)
    assert f"opweave ships no {backend} backend" in msg
    assert "available linkers: " in msg and "cvm" in msg and "py" in msg


def test_register_mode_linker_and_optimizer(monkeypatch) -> None:
    from opweave.compile import mode as mode_module
    from opweave.graph.rewriting.db import RewriteDatabaseQuery

    monkeypatch.setattr(mode_module, "predefined_modes", dict(mode_module.predefined_modes))
    monkeypatch.setattr(
        mode_module, "predefined_optimizers", dict(mode_module.predefined_optimizers)
    )
    monkeypatch.setattr(mode_module, "_registered_linkers", {})
    mode_module.register_optimizer("merge_only", RewriteDatabaseQuery(include=["merge"]))
    mode_module.register_linker("python_nogc_test", mode_module.linker_from_name("py"))
    mode_module.register_mode("MY_MODE", Mode("python_nogc_test", "merge_only"))
    x = dscalar("x")
    f = opweave.function([x], (x + 0.0) * 1.0, mode="MY_MODE")
    assert type(f.maker.linker).__name__ == "PerformLinker"
    assert f(2.0) == 2.0
    # Only the merge rewrites ran: x + 0 and * 1 are still computed.
    fast = opweave.function([x], (x + 0.0) * 1.0, mode="FAST_RUN")
    assert len(f.maker.fgraph.apply_nodes) > len(fast.maker.fgraph.apply_nodes)
    with pytest.raises(ValueError, match="already taken"):
        mode_module.register_mode("MY_MODE", Mode())
    with pytest.raises(ValueError, match="already taken"):
        mode_module.register_optimizer("fast_run", RewriteDatabaseQuery(include=["x"]))
    with pytest.raises(ValueError, match="already taken"):
        mode_module.register_linker("cvm", mode_module.linker_from_name("cvm"))


def test_predefined_optimizers_are_queries_of_optdb() -> None:
    from opweave.compile.mode import OPT_FAST_COMPILE, optdb, predefined_optimizers

    assert predefined_optimizers["fast_compile"] is OPT_FAST_COMPILE
    assert {None, "None", "merge", "fast_run", "fast_compile"} <= set(predefined_optimizers)
    fast_compile = set(optdb.database().selected_names(OPT_FAST_COMPILE))
    fast_run = set(optdb.database().selected_names(predefined_optimizers["fast_run"]))
    assert "merge1" in fast_compile and "canonicalize" in fast_run
    assert "canonicalize" not in fast_compile
    # A query is a Mode's optimizer, like its name.
    x = dvector("x")
    by_query = opweave.function([x], x * 1.0, mode=Mode("py", OPT_FAST_COMPILE))
    by_name = opweave.function([x], x * 1.0, mode=Mode("py", "fast_compile"))
    assert str(by_query.maker.fgraph) == str(by_name.maker.fgraph)


def test_optdb_reads_and_registers() -> None:
    from opweave.compile.mode import optdb
    from opweave.graph.rewriting import node_rewriter

    assert "canonicalize" in optdb and "inplace" in optdb.phases()
    assert "fast_run" in optdb.tags("canonicalize")
    exp_op = ot.exp(dscalar()).owner.op

    @node_rewriter([ot.Elemwise])
    def exp_to_log(fgraph, node):
        if node.op == exp_op:
            return [ot.log(node.inputs[0])]
        return None

    optdb["canonicalize"].register("test_exp_to_log", exp_to_log, "test_exp_to_log_tag")
    assert "test_exp_to_log" in optdb["canonicalize"]
    with pytest.raises(ValueError, match="already registered"):
        optdb["canonicalize"].register("test_exp_to_log", exp_to_log, "other")
    x = dscalar("x")
    plain = opweave.function([x], ot.exp(x))
    assert plain(0.0) == 1.0
    tagged = opweave.function([x], ot.exp(x), mode=Mode().including("test_exp_to_log_tag"))
    assert tagged(1.0) == 0.0


def test_optdb_registration_stays_with_its_plugin_manager() -> None:
    from opweave.compile.mode import optdb
    from opweave.graph.rewriting.merge import MergeOptimizer
    from opweave.plugins import create_plugin_manager, use_plugin_manager

    optdb.register("test_extra_merge", MergeOptimizer(), "test_extra", position=60)
    assert "test_extra_merge" in optdb
    with use_plugin_manager(create_plugin_manager()):
        assert "test_extra_merge" not in optdb


# ---------------------------------------------------------------------- aliasing helpers


def test_alias_helpers() -> None:
    from opweave.compile.aliasing import alias_root, infer_reuse_pattern, view_tree_set
    from opweave.graph.fg import FunctionGraph

    x = dmatrix("x")
    t = x.T
    row = t[0]
    out = row * 2.0
    fg = FunctionGraph([x], [t, row, out], clone=False)
    assert alias_root(row) is x and alias_root(out) is out
    views: set = set()
    view_tree_set(fg, x, views)
    assert views == {x, t, row}
    assert infer_reuse_pattern(fg, [row]) == {t, row}


def test_supervisor_protects_inputs_not_marked_mutable() -> None:
    from opweave.compile.aliasing import Supervisor, add_supervisor_to_fgraph
    from opweave.graph.features import DestroyHandler
    from opweave.graph.fg import FunctionGraph

    from .test_function import DoubleInplace

    op, vec = DoubleInplace.make()
    v = vec("v")
    fg = FunctionGraph([v], [op(v)])
    with pytest.raises(TypeError, match="accept_inplace"):
        add_supervisor_to_fgraph(fg, [In(v)])
    with pytest.raises(InconsistencyError):
        add_supervisor_to_fgraph(FunctionGraph([v], [op(v)]), [In(v)], accept_inplace=True)
    ok = FunctionGraph([v], [op(v)])
    add_supervisor_to_fgraph(ok, [In(v, mutable=True)], accept_inplace=True)
    assert any(isinstance(f, Supervisor) for f in ok.features)
    # A Supervisor alone refuses what it protects, whatever the input's tag says.
    other = FunctionGraph([v], [op(v)])
    other.inputs[0].tag.mutable = True
    other.attach_feature(DestroyHandler())
    other.attach_feature(Supervisor(other.inputs))
    with pytest.raises(InconsistencyError, match="protected"):
        other.validate()


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("borrow", [False, True])
def test_insert_deepcopy_and_borrow(borrow, linker) -> None:
    x = dvector("x")
    f = opweave.function([In(x, borrow=borrow)], Out(x, borrow=borrow), mode=Mode(linker))
    ops = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert ops == (["ViewOp"] if borrow else ["DeepCopyOp"])
    v = np.arange(3.0)
    out = f(v)
    np.testing.assert_array_equal(out, v)
    assert np.shares_memory(out, v) is borrow


# ---------------------------------------------------------------------- Function.copy


def _accumulator(linker="vm"):
    state = ot.shared(np.float64(0.0), name="state")
    x = dscalar("x")
    f = _fn([x], state * 1.0, linker, updates={state: state + x}, name="acc")
    return state, f


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_shares_state_and_names(linker) -> None:
    state, f = _accumulator(linker)
    g = f.copy()
    assert g.name == "acc copy" and f.copy(name="other").name == "other"
    assert g is not f and g.maker is not f.maker
    f(1.0)
    assert float(g(2.0)) == 1.0
    assert float(state.get_value()) == 3.0


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_swap_shared_variables(linker) -> None:
    state, f = _accumulator(linker)
    other = ot.shared(np.float64(100.0), name="other")
    g = f.copy(swap={state: other})
    assert float(g(5.0)) == 100.0
    assert float(other.get_value()) == 105.0 and float(state.get_value()) == 0.0
    assert float(f(1.0)) == 0.0
    assert float(state.get_value()) == 1.0 and float(other.get_value()) == 105.0


def test_copy_swap_errors() -> None:
    state, f = _accumulator()
    with pytest.raises(TypeError, match="keys of swap must be shared variables"):
        f.copy(swap={dscalar("y"): state})
    with pytest.raises(TypeError, match="must be a shared variable"):
        f.copy(swap={state: dscalar("y")})
    with pytest.raises(ValueError, match="is not an input"):
        f.copy(swap={ot.shared(np.float64(1.0), name="stranger"): state})
    with pytest.raises(TypeError, match=r"has type .*expected"):
        f.copy(swap={state: ot.shared(np.zeros(3), name="vec")})


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_delete_updates(linker) -> None:
    state, f = _accumulator(linker)
    g = f.copy(delete_updates=True)
    assert g.maker.fgraph.update_mapping == {} and g.maker.updates == []
    assert float(g(5.0)) == 0.0
    assert float(state.get_value()) == 0.0
    f(2.0)
    assert float(g(5.0)) == 2.0


def test_copy_delete_updates_warns_when_updated_in_place() -> None:
    _, f = _shared_updated_in_place("vm")
    with pytest.warns(UserWarning, match="will still change"):
        f.copy(delete_updates=True)


@pytest.mark.parametrize("linker", LINKERS)
def test_copy_share_memory(linker) -> None:
    x = dvector("x")
    with opweave.config.change_flags(allow_gc=False):
        f = opweave.function([x], ot.exp(x) * 2.0 + 1.0, mode=Mode(linker).excluding("fusion"))
        g = f.copy(share_memory=True)
        h = f.copy()
    v = np.arange(3.0)
    for fn in (f, g, h):
        np.testing.assert_allclose(fn(v), np.exp(v) * 2 + 1)
    original_cells = {id(c) for c in f.fn.storage_map.values()}

    def cells(fn):
        fgraph = fn.maker.fgraph
        inner = [v for v in fgraph.variables if v.owner is not None and v not in fgraph.outputs]
        ends = [*fgraph.inputs, *fgraph.outputs]
        return [id(fn.fn.storage_map[v]) for v in inner], [id(fn.fn.storage_map[v]) for v in ends]

    shared_inner, shared_ends = cells(g)
    own_inner, own_ends = cells(h)
    assert shared_inner and all(c in original_cells for c in shared_inner)
    assert not any(c in original_cells for c in own_inner)
    # Inputs and outputs are never shared.
    assert not any(c in original_cells for c in shared_ends + own_ends)


def test_copy_of_state_carrying_inputs_is_independent() -> None:
    x, acc = dscalar("x"), dscalar("acc")
    f = opweave.function([x, In(acc, value=0.0, update=acc + x)], acc)
    f(1.0)
    g = f.copy()
    assert float(g(2.0)) == 1.0 and float(g(0.0)) == 3.0
    assert float(f(0.0)) == 1.0
    h = f.copy(delete_updates=True)
    assert float(h(5.0)) == 1.0 and float(h(5.0)) == 1.0


def test_copy_module_copy() -> None:
    import copy

    state, f = _accumulator()
    g = copy.copy(f)
    g(4.0)
    assert float(state.get_value()) == 4.0 and g.name == "acc copy"


# ---------------------------------------------------------------------- function_dump


def test_function_dump_round_trip(tmp_path) -> None:
    from opweave.compile.debug.dump import function_dump

    s = ot.shared(np.arange(3.0), name="s")
    x = dvector("x")
    x.tag.note = "kept"
    x.tag.unpicklable = lambda: None
    path = tmp_path / "f.pkl"
    function_dump(
        path,
        [x],
        x * s,
        updates={s: s + 1.0},
        name="dumped",
        extra_tag_to_remove=["unpicklable"],
    )
    with path.open("rb") as fh:
        kwargs = pickle.load(fh)
    assert kwargs["name"] == "dumped" and kwargs["no_default_updates"] is False
    (loaded_x,) = kwargs["inputs"]
    assert loaded_x.tag.note == "kept" and not hasattr(loaded_x.tag, "unpicklable")
    f = opweave.function(**kwargs)
    np.testing.assert_allclose(f(np.ones(3)), [0.0, 1.0, 2.0])
    ((loaded_s, _),) = kwargs["updates"].items()
    np.testing.assert_allclose(loaded_s.get_value(), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(s.get_value(), [0.0, 1.0, 2.0])  # the original is untouched
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        function_dump(tmp_path / "g.pkl", [x], x * 2.0)


def test_no_warnings_from_the_common_paths() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = dvector("x")
        f = opweave.function([x], x + 1.0)
        np.testing.assert_allclose(f.copy()(np.zeros(2)), [1.0, 1.0])


def test_explicit_update_overrides_default_update_reached_through_givens() -> None:
    u = _counter()
    x, y = dscalar("x"), dscalar("y")
    f = opweave.function([x], y, givens={y: x + u}, updates={u: u + 100.0})
    assert float(f(1.0)) == 1.0
    assert float(u.get_value()) == 100.0


def test_in_update_is_rebuilt_with_givens() -> None:
    x, acc, k = dscalar("x"), dscalar("acc"), dscalar("k")
    f = opweave.function([x, In(acc, value=0.0, update=acc + k)], acc, givens={k: x * 2.0})
    assert [float(f(1.0)), float(f(1.0)), float(f(0.0))] == [0.0, 2.0, 4.0]


def test_mode_instances_and_missing_backend_modes() -> None:
    from opweave.compile import CVM, FAST_COMPILE, C, get_mode

    assert get_mode("c") is C and get_mode("CVM") is CVM
    assert get_mode("fast_compile") is FAST_COMPILE
    assert (C.linker, CVM.linker, FAST_COMPILE.optimizer) == ("c", "cvm", "fast_compile")
    from opweave.compile import JAX, NUMBA
    from opweave.link.lookup import LinkerNotFoundError

    assert (JAX.linker, NUMBA.linker) == ("jax", "numba")
    x = opweave.tensor.dvector("x")
    with pytest.raises(LinkerNotFoundError, match=r"no Numba backend.*linker 'cvm'"):
        opweave.function([x], x * 2, mode=NUMBA)
    # opweave-jax (the ``jax`` extra) is installed with the repository: its JAX mode compiles.
    np.testing.assert_array_equal(opweave.function([x], x * 2, mode=JAX)(np.arange(3.0)), [0, 2, 4])
    assert JAX is opweave.compile.mode.get_mode("JAX")
    with pytest.raises(ImportError, match="no PyTorch backend"):
        from opweave.compile import PYTORCH  # noqa: F401
    assert not hasattr(opweave.compile, "jax")
