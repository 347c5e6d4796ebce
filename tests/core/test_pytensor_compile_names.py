"""PyTensor's names and behaviours in ``compile``, ``configdefaults``, ``graph.fg``,
``graph.op``, ``graph.utils`` and ``tensor.math._allclose``."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import (
    OPT_FAST_RUN_STABLE,
    OPT_O2,
    OPT_O3,
    OPT_STABILIZE,
    OPT_UNSAFE,
    VM,
    AddDestroyHandler,
    AliasedMemoryError,
    FromFunctionOp,
    In,
    Mode,
    Out,
    SharedVariable,
    SymbolicInput,
    SymbolicOutput,
    UnusedInputError,
    collect_new_shareds,
    function,
    predefined_linkers,
    predefined_optimizers,
    shared_constructor,
)
from opweave.compile.debug import DebugMode, MonitorMode, detect_nan
from opweave.compile.mode import CVM, JAX, RunnableQuery, fast_run_linkers_to_mode
from opweave.compile.ops import as_op, load_back, wrap_py
from opweave.configdefaults import config
from opweave.graph.basic import Constant, NominalVariable
from opweave.graph.features import DestroyHandler
from opweave.graph.fg import (
    AbstractFunctionGraph,
    ClientType,
    FrozenFunctionGraph,
    FunctionGraph,
)
from opweave.graph.op import Op, io_connection_pattern, is_thunk_type
from opweave.graph.rewriting.basic import node_rewriter
from opweave.graph.rewriting.db import EquilibriumDB, RewriteDatabaseQuery, SequenceDB
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.graph.type import generic
from opweave.graph.utils import (
    AssocList,
    InconsistencyError,
    MetaObject,
    MissingInputError,
    Scratchpad,
    get_variable_trace_string,
    simple_extract_stack,
)
from opweave.link.basic import Container
from opweave.link.lookup import LinkerNotFoundError
from opweave.tensor.math import _allclose, add
from opweave.tensor.type import dmatrix, dscalar, dvector, fvector


@wrap_py([dmatrix, dvector], dvector, infer_shape=lambda node, shapes: [shapes[1]])
def flat_cumprod_plus(x, y):
    """Module level, so that the Op pickles (found again by its module and name)."""
    return np.cumprod(x) + y


# ----------------------------------------------------------------- tensor.math._allclose


def test_allclose_default_tolerances_follow_the_narrowest_dtype() -> None:
    # float64: NumPy's own defaults (rtol 1e-5, atol 1e-8).
    assert _allclose(1.0, 1.0 + 5e-6)
    assert not _allclose(1.0, 1.0 + 5e-5)
    # float32 or complex64 on either side: atol = rtol = 1e-5.
    a32 = np.float32(0.0)
    assert _allclose(a32, 9e-6) and not _allclose(a32, 2e-5)
    assert _allclose(np.complex64(0.0), 9e-6)
    # float16: atol = rtol = 1e-3.
    assert _allclose(np.float16(0.0), 9e-4) and not _allclose(np.float16(0.0), 2e-3)


def test_allclose_explicit_tolerances_and_the_sloppy_flag() -> None:
    assert _allclose([1.0, 2.0], [1.1, 2.2], rtol=0.11)
    assert not _allclose([1.0], [1.1], rtol=0.01)
    assert _allclose(0.0, 0.5, atol=1.0)
    with config.change_flags(tensor__cmp_sloppy=1):
        assert _allclose(1.0, 1.0 + 5e-5)  # float64 rtol 1e-4, atol 1e-3
    with config.change_flags(tensor__cmp_sloppy=2):
        assert _allclose(np.float16(0.0), 9e-3)  # float16 atol 1e-2


# ----------------------------------------------------------------- compile.ops.wrap_py


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_wrap_py_runs_the_function_on_every_linker(linker: str) -> None:
    if linker == "cvm":
        pytest.importorskip("opweave_c")
    x, y = dmatrix("x"), dvector("y")
    f = function([x, y], flat_cumprod_plus(x, y), mode=Mode(linker=linker, optimizer=None))
    xv, yv = np.array([[1.5, 5.0], [2.0, 2.0]]), np.array([1.0, 100.0, 2.0, 200.0])
    np.testing.assert_allclose(f(xv, yv), np.cumprod(xv) + yv)


def test_wrap_py_op_contract() -> None:
    x, y = dmatrix("x"), dvector("y")
    out = flat_cumprod_plus(x, y)
    assert isinstance(out.owner.op, FromFunctionOp)
    assert str(out.owner.op) == "FromFunctionOp{flat_cumprod_plus}"
    assert out.type == dvector
    with pytest.raises(TypeError, match=r"input 1 of FromFunctionOp\{flat_cumprod_plus\} must"):
        flat_cumprod_plus(x, dmatrix("z"))
    with pytest.raises(ValueError, match="expects 2 inputs, got 1"):
        flat_cumprod_plus(x)
    # The shape comes from infer_shape (y's length), without running the function.
    f = function([x, y], out.shape)
    assert not any(isinstance(n.op, FromFunctionOp) for n in f.maker.fgraph.apply_nodes)
    np.testing.assert_array_equal(f(np.zeros((1, 1)), np.zeros(7)), [7])


def test_wrap_py_pickles_by_module_and_name() -> None:
    assert load_back(__name__, "flat_cumprod_plus") is flat_cumprod_plus
    assert pickle.loads(pickle.dumps(flat_cumprod_plus)) is flat_cumprod_plus

    @wrap_py(dvector, dvector)
    def local(v):
        return v

    with pytest.raises(pickle.PicklingError, match="wrap_py"):
        pickle.dumps(local)


def test_wrap_py_several_outputs_and_bad_arguments() -> None:
    @wrap_py(dvector, [dvector, dvector])
    def split_signs(v):
        return np.maximum(v, 0.0), np.minimum(v, 0.0)

    v = dvector("v")
    pos, neg = split_signs(v)
    f = function([v], [pos, neg])
    data = np.array([-1.0, 2.0, -3.0])
    got_pos, got_neg = f(data)
    np.testing.assert_array_equal(got_pos, np.maximum(data, 0.0))
    np.testing.assert_array_equal(got_neg, np.minimum(data, 0.0))

    @wrap_py(dvector, [dvector, dvector])
    def one_only(v):
        return v

    g = function([v], one_only(v), mode=Mode(linker="py", optimizer=None))
    with pytest.raises(ValueError, match="returned 1 values for 2 outputs"):
        g(data)
    with pytest.raises(TypeError, match="itypes must be a Type"):
        wrap_py([np.float64], dvector)
    with pytest.raises(TypeError, match="infer_shape must be callable"):
        wrap_py(dvector, dvector, infer_shape=3)


def test_as_op_is_the_deprecated_wrap_py_and_top_level_names() -> None:
    with pytest.warns(FutureWarning, match="use wrap_py"):
        deco = as_op(dvector, dvector)
    op = deco(np.cumsum)
    v = dvector("v")
    np.testing.assert_array_equal(function([v], op(v))(np.arange(4.0)), np.cumsum(np.arange(4.0)))
    assert opweave.wrap_py is wrap_py and opweave.as_op is as_op


def test_wrap_py_is_refused_by_the_whole_graph_c_linker() -> None:
    pytest.importorskip("opweave_c")
    x, y = dmatrix("x"), dvector("y")
    with pytest.raises(Exception, match=r"FromFunctionOp.*no C implementation"):
        function([x, y], flat_cumprod_plus(x, y), mode=Mode(linker="c", optimizer=None))


def test_op_with_itypes_and_otypes_needs_no_make_node() -> None:
    class Twice(Op):
        __props__ = ()
        itypes = [dvector]
        otypes = [dvector]

        def perform(self, node, inputs, output_storage):
            output_storage[0][0] = inputs[0] * 2

    v = dvector("v")
    out = Twice()(v)
    assert out.type == dvector
    np.testing.assert_array_equal(function([v], out)(np.arange(3.0)), np.arange(3.0) * 2)
    with pytest.raises(TypeError, match="input 0 of Twice must be a Variable of"):
        Twice()(fvector("f"))

    class Bare(Op):
        __props__ = ()

    with pytest.raises(NotImplementedError, match="define make_node, or set itypes"):
        Bare()(v)


# ----------------------------------------------------------------- configdefaults


@pytest.mark.parametrize(("name", "backend"), [("NUMBA", "Numba"), ("MLX", "MLX")])
def test_config_mode_accepts_foreign_backend_names(name: str, backend: str) -> None:
    x = dscalar("x")
    with config.change_flags(mode=name):
        assert config.mode == name
        with pytest.raises(LinkerNotFoundError, match=f"no {backend} backend"):
            function([x], x + 1.0)
    with config.change_flags(mode="PYTORCH"), pytest.raises(LinkerNotFoundError, match="PyTorch"):
        function([x], x + 1.0)


def test_config_mode_names_a_plugin_mode_checked_when_used() -> None:
    """A mode name is checked when a function is compiled with it (plugins add modes, and
    they load after the configuration is read); the error says it came from config.mode."""
    x = dscalar("x")
    with config.change_flags(mode="CVM"):
        assert type(function([x], x + 1.0).maker.linker).__name__ == "CVMLinker"
    with (
        config.change_flags(mode="FASTRUN"),
        pytest.raises(ValueError, match=r"unknown mode 'FASTRUN' \(config\.mode, set from code\)"),
    ):
        function([x], x + 1.0)


def test_on_opt_error_flag_only_raises() -> None:
    assert config.on_opt_error == "raise"
    with config.change_flags(on_opt_error="raise"):
        assert config.on_opt_error == "raise"
    with pytest.raises(ValueError, match="on_opt_error"):
        config.on_opt_error = "warn"


def test_debugmode_patience_flag_is_the_default_stability_patience() -> None:
    assert DebugMode().stability_patience == config.DebugMode__patience
    with config.change_flags(DebugMode__patience=5):
        assert DebugMode().stability_patience == 5
        assert DebugMode(stability_patience=3).stability_patience == 3


def test_debugmode_failure_names_the_rewrite_that_made_the_node() -> None:
    @node_rewriter([add])
    def doubled_last_input(fgraph: Any, node: Any) -> Any:
        inputs = list(node.inputs)
        if inputs[-1].owner is None:
            inputs[-1] = ot.concatenate((inputs[-1], inputs[-1]))
            return [node.op(*inputs)]
        return False

    db = EquilibriumDB()
    db.register("doubled_last_input", doubled_last_input, "all")
    a, b = dvector("a"), dvector("b")
    f = function([a, b], a + b, mode=DebugMode(optimizer=db.query("+all")))
    with pytest.raises(ValueError) as info:
        f([1.0, 2.0, 3.0], [2.0, 3.0, 4.0])
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "the node was made by the rewrite(s): doubled_last_input" in notes


def test_optimizer_verbose_prints_replacements(capsys: pytest.CaptureFixture[str]) -> None:
    x, y, z = dvector("x"), dvector("y"), dvector("z")
    fg = FunctionGraph([x, y, z], [ot.exp(x) + y], clone=False)
    with config.change_flags(optimizer_verbose=False):
        fg.replace(y, z, reason="y_to_z")
    assert capsys.readouterr().out == ""
    with config.change_flags(optimizer_verbose=True):
        fg.replace(z, y, reason="z_to_y")
    assert "rewriting: rewrite z_to_y replaces z" in capsys.readouterr().out
    with config.change_flags(optimizer_verbose=True, optimizer_verbose_ignore="y_to_z,other"):
        fg.replace(y, z, reason="y_to_z")
        fg.replace(z, y, reason="z_to_y")
    out = capsys.readouterr().out
    assert "y_to_z" not in out and "z_to_y" in out


# ----------------------------------------------------------------- compile.maker / mode


class _DoubleOutputs(GraphRewriter):
    """Replaces each output ``o`` by ``o * 2`` (a visible change)."""

    def apply(self, fgraph: FunctionGraph) -> None:
        for out in list(fgraph.outputs):
            fgraph.replace(out, out * 2.0, reason="double")


def test_mode_runs_a_graph_rewriter_given_as_optimizer() -> None:
    v = dvector("v")
    mode = Mode(linker="py", optimizer=_DoubleOutputs())
    assert mode.rewrite_query() is None and isinstance(mode.provided_optimizer, _DoubleOutputs)
    f = function([v], ot.exp(v), mode=mode)
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), 2.0 * np.exp([0.0, 1.0]))
    with pytest.raises(ValueError, match="unknown optimizer"):
        Mode(optimizer=object())


def test_mode_db_and_str() -> None:
    empty = SequenceDB()
    mode = Mode(linker="py", optimizer=RewriteDatabaseQuery(include=None), db=empty)
    assert mode.optdb is empty and mode.including("x").optdb is empty
    assert str(mode).startswith("Mode(linker=py, optimizer=RewriteDatabaseQuery")
    assert str(Mode("py", None)) == "Mode(linker=py, optimizer=None)"
    # An empty database rewrites nothing: the multiplication by 1 stays.
    v = dvector("v")
    kept = function([v], ot.exp(v) * 1.0, mode=Mode(linker="py", db=empty))
    assert any("Mul" in str(n.op) for n in kept.maker.fgraph.apply_nodes)
    assert Mode(linker="py").optdb is opweave.compile.optdb


def test_mode_register_runs_a_rewriter_in_the_sequence() -> None:
    seen: list[int] = []

    class Record(GraphRewriter):
        def apply(self, fgraph: FunctionGraph) -> None:
            seen.append(len(fgraph.apply_nodes))

    v = dvector("v")
    mode = Mode(linker="py", optimizer="fast_run").register((Record(), 49.9))
    assert Mode(linker="py").extra_rewrites() == []
    function([v], ot.exp(v) * 1.0, mode=mode)
    assert len(seen) == 1
    with pytest.raises(TypeError, match=r"Mode\.register adds rewrites to a query"):
        Mode(optimizer=_DoubleOutputs()).register((Record(), 1.0))


def test_duplicate_inputs_are_refused() -> None:
    x = dscalar("x")
    with pytest.raises(UnusedInputError, match="is used twice in inputs"):
        function([x, x], x)


def test_in_update_needs_a_value_and_a_container_value_is_state() -> None:
    s = opweave.shared(1.0)
    wrapped = In(s, update=s + 1)  # accepted here; function() refuses it
    with pytest.raises(TypeError, match="has an update but no value"):
        function([wrapped], [])

    a = dscalar("a")
    cell = Container(a, storage=[np.array(0.0)])
    f = function([In(a, value=cell, implicit=True, update=a + 1)], a)
    assert [float(f()) for _ in range(3)] == [0.0, 1.0, 2.0]
    assert float(cell.storage[0]) == 3.0


def test_givens_accept_plain_values() -> None:
    x, y = dvector("x"), dscalar("y")
    f = function([x], x + y, givens={y: 2.0})
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [3.0, 4.0])
    assert any(isinstance(v, Constant) for n in f.maker.fgraph.apply_nodes for v in n.inputs)
    with pytest.raises(TypeError, match=r"replacement of y must be a Variable.*or a value"):
        function([x], x + y, givens={y: "nope"})


def test_pytensor_optimizer_queries() -> None:
    assert OPT_FAST_RUN_STABLE.require == {"stable"} and "fast_run" in OPT_FAST_RUN_STABLE.include
    assert OPT_O2.include == {"fast_compile", "fusion"}
    assert "inplace" in OPT_O3.exclude and "unsafe" in OPT_UNSAFE.include
    assert OPT_STABILIZE.position_cutoff == pytest.approx(1.5000001)
    assert [OPT_O3.name, OPT_STABILIZE.name] == ["OPT_O3", "OPT_STABILIZE"]
    names = ("o1", "o2", "o3", "o4", "unsafe", "fast_run_stable", "stabilize")
    assert all(n in predefined_optimizers for n in names)
    assert Mode(optimizer="stabilize").position_cutoff() == pytest.approx(1.5000001)
    assert Mode(optimizer="fast_run").position_cutoff() == float("inf")


def test_predefined_queries_rewrite_a_graph_themselves() -> None:
    # PyTensor's ``mode.JAX.optimizer.rewrite(fgraph)``: the query runs its rewrites.
    x = dvector("x")
    fg = FunctionGraph([x], [ot.exp(x) * 1.0])
    JAX.optimizer.rewrite(fg)
    assert not any("Mul" in str(n.op) for n in fg.apply_nodes)
    assert isinstance(OPT_O3, RunnableQuery) and isinstance(OPT_STABILIZE, RunnableQuery)
    fg2 = FunctionGraph([x], [x**2])
    OPT_STABILIZE.rewrite(fg2)
    assert [type(n.op.scalar_op).__name__ for n in fg2.apply_nodes] == ["Pow"]
    assert fast_run_linkers_to_mode["cvm"] is CVM and fast_run_linkers_to_mode["vm"] is VM


def test_stabilize_stops_before_specialize() -> None:
    # ``specialize`` turns x ** 2 into sqr(x); the stabilize cutoff keeps the Pow.
    x = dvector("x")
    ops = {
        name: {type(n.op.scalar_op).__name__ for n in f.maker.fgraph.apply_nodes}
        for name, f in (
            (o, function([x], x**2, mode=Mode(linker="py", optimizer=o)))
            for o in ("stabilize", "fast_run")
        )
    }
    assert "Pow" in ops["stabilize"] and "Pow" not in ops["fast_run"]


def test_add_destroy_handler_and_linker_table() -> None:
    x = dvector("x")
    fg = FunctionGraph([x], [ot.exp(x)])
    with pytest.warns(UserWarning, match="no Supervisor feature"):
        AddDestroyHandler().rewrite(fg)
    assert any(isinstance(f, DestroyHandler) for f in fg.features)
    assert "py" in predefined_linkers and "vm" in list(predefined_linkers)
    assert type(predefined_linkers["py"]).__name__ == "PerformLinker"
    with pytest.raises(KeyError):
        predefined_linkers["numba"]
    assert (VM.linker, VM.optimizer) == ("vm", "fast_run")


def test_io_aliases_errors_and_shared_helpers() -> None:
    assert SymbolicInput is In and SymbolicOutput is Out
    assert issubclass(AliasedMemoryError, Exception)
    anything = {"a": 1}
    var = shared_constructor(anything, name="d")
    assert isinstance(var, SharedVariable) and var.type == generic
    assert var.get_value() == anything and var.name == "d"
    with collect_new_shareds() as outer:
        first = opweave.shared(np.zeros(2))
        with collect_new_shareds() as inner:
            second = opweave.shared(object())
        third = SharedVariable(generic, 3)
    assert inner == [second]
    assert [id(v) for v in outer] == [id(first), id(third)]
    assert opweave.shared is opweave.compile.sharedvalue.shared
    assert second.type == generic


def test_monitor_mode_calls_the_functions_around_each_node(
    capsys: pytest.CaptureFixture[str],
) -> None:
    calls: list[tuple[str, int, str, list[Any]]] = []

    def pre(fgraph: FunctionGraph, i: int, node: Any, fn: Any) -> None:
        calls.append(("pre", i, str(node.op), [c[0] for c in fn.inputs]))

    def post(fgraph: FunctionGraph, i: int, node: Any, fn: Any) -> None:
        calls.append(("post", i, str(node.op), [c[0] for c in fn.outputs]))

    x = dvector("x")
    mode = MonitorMode(pre_func=pre, post_func=post, optimizer=None)
    f = function([x], ot.exp(x) * 2.0, mode=mode)
    data = np.array([0.0, 1.0])
    np.testing.assert_allclose(f(data), np.exp(data) * 2.0)
    n_nodes = len(f.maker.fgraph.apply_nodes)
    assert [(c[0], c[1]) for c in calls] == [
        (when, i) for i in range(n_nodes) for when in ("pre", "post")
    ]
    exp_index = next(k for k, c in enumerate(calls) if c[0] == "pre" and "exp" in str(c[2]).lower())
    np.testing.assert_array_equal(calls[exp_index][3][0], data)
    np.testing.assert_allclose(calls[exp_index + 1][3][0], np.exp(data))
    assert isinstance(mode.including("fast_run"), MonitorMode)
    with pytest.raises(ValueError, match="uses its own linker"):
        MonitorMode(linker="py")

    g = function([x], ot.log(x), mode=MonitorMode(post_func=detect_nan, optimizer=None))
    with np.errstate(invalid="ignore"):
        g(np.array([-1.0]))
    assert "*** NaN detected ***" in capsys.readouterr().out


# ----------------------------------------------------------------- graph.fg


def test_fgraph_interfaces_and_import_missing() -> None:
    assert ClientType is not None
    x, y = dvector("x"), dvector("y")
    fg = FunctionGraph([x], [ot.exp(x)], clone=False)
    assert isinstance(fg, AbstractFunctionGraph)
    assert isinstance(fg.freeze(), AbstractFunctionGraph)
    with pytest.raises(MissingInputError):
        fg.import_var(x + y)
    fg.import_var(x + y, import_missing=True)
    assert fg.inputs == [x, y]
    z = dvector("z")
    node = (z * 2.0).owner
    fg.import_node(node, import_missing=True, reason="test")
    assert fg.inputs[-1] is z and node.tag.imported_by == ["test"]


def test_fgraph_nominal_roots_are_not_inputs_and_integrity_messages() -> None:
    nominal = NominalVariable(0, dvector)
    fg = FunctionGraph(outputs=[ot.exp(nominal)], clone=False)
    assert fg.inputs == [] and nominal in fg.variables
    x = dvector("x")
    out = ot.exp(x)
    fg = FunctionGraph([x], [out + 1.0], clone=False)
    fg.apply_nodes.remove(out.owner)
    with pytest.raises(InconsistencyError, match="The following nodes are"):
        fg.check_integrity()
    with pytest.raises(ValueError, match="One of the provided inputs is the output"):
        FunctionGraph([out], [out + 1.0], clone=False)


def test_remove_client_tolerates_an_already_removed_client() -> None:
    x = dvector("x")
    a = ot.exp(x)
    b = a * x
    fg = FunctionGraph([x], [b], clone=False)
    fg.remove_client(x, (b.owner, 1))
    fg.remove_client(x, (b.owner, 1))  # no error the second time
    assert (b.owner, 1) not in fg.clients[x]


def test_frozen_from_structural_inputs() -> None:
    x = dvector("x")
    inner = ot.exp(x)
    out = ot.log(inner) + ot.exp(x)
    frozen = FrozenFunctionGraph.from_structural_inputs([inner], [out])
    assert len(frozen.inputs) == 1
    # Both occurrences of exp(x) (equal in structure) now read the one input.
    ops = sorted(str(n.op) for n in frozen.toposort())
    assert ops == ["Add", "Log"]
    with pytest.raises(ValueError, match="could not be mapped"):
        FrozenFunctionGraph.from_io([x], [dvector("other")])
    with pytest.raises(ValueError, match="Orphan variable: orphan"):
        FrozenFunctionGraph.from_io([x], [x + dvector("orphan")])


# ----------------------------------------------------------------- graph.op and graph.utils


def test_io_connection_pattern_and_thunk_cast() -> None:
    x, y, z = dvector("x"), dvector("y"), dvector("z")
    assert io_connection_pattern([x, y, z], [x + y, ot.exp(z)]) == [
        [True, False],
        [True, False],
        [False, True],
    ]

    def thunk() -> None:
        return None

    assert is_thunk_type(thunk) is thunk


def test_graph_utils_helpers() -> None:
    assert Scratchpad is type(dvector("v").tag)

    class Props(MetaObject):
        __props__ = ("a",)

    assert Props() != object()
    with pytest.raises(TypeError, match="must be a tuple of attribute names"):

        class BadProps(MetaObject):
            __props__ = "a"

    assoc = AssocList()
    assoc["k"] = 1
    assoc[[1, 2]] = 2  # an unhashable key
    assert (assoc["k"], assoc[[1, 2]], assoc["missing"]) == (1, 2, None)
    assert [1, 2] in assoc and len(assoc) == 2
    del assoc[[1, 2]]
    assoc.discard("k")
    assoc.discard("absent")
    assert len(assoc) == 0

    stack = simple_extract_stack()
    assert stack[-1][2] == "test_graph_utils_helpers" and stack[-1][0] == __file__
    assert len(simple_extract_stack(limit=2)) == 2

    with config.change_flags(traceback__limit=8):
        v = dvector("traced")
    text = get_variable_trace_string(v)
    assert "Backtrace when that variable is created" in text and __file__ in text
    with config.change_flags(traceback__limit=0):
        untraced = dvector("untraced")
    assert get_variable_trace_string(untraced) == ""


def test_mode_private_optimizer_is_the_provided_query() -> None:
    # PyTensor's tests build their JAX mode from ``JAX._optimizer.exclude``.
    mode = Mode(linker="py", optimizer="fast_run").excluding("fusion")
    assert mode._optimizer.exclude == mode.provided_optimizer.exclude
    assert "fusion" in mode._optimizer.exclude
    assert "fast_run" in mode._optimizer.include
