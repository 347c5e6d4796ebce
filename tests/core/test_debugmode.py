"""DebugMode: every implementation compared, every Op contract and every rewrite checked."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
from opweave import config
from opweave.compile import In, Mode, get_mode
from opweave.compile.debugmode import (
    BadDestroyMap,
    BadOptimization,
    BadThunkOutput,
    BadViewMap,
    DebugLinker,
    DebugMode,
    DebugModeError,
    InvalidValueError,
    StochasticOrder,
)
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.rewriting import node_rewriter
from opweave.link.implementations import ImplementationTable
from opweave.plugins import hookimpl
from opweave_double import add, double, double_vector, hidden_buffer_add, mul, sub

# ---------------------------------------------------------------------- toy vector Ops


class VecOp(Op):
    """One or two double_vector inputs, one double_vector output; ``compute`` is the math."""

    nin = 1

    def make_node(self, *inputs: Variable) -> Apply:
        assert len(inputs) == self.nin
        for inp in inputs:
            assert inp.type == double_vector
        return Apply(self, list(inputs), [double_vector()])

    def compute(self, *xs: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def perform(self, node, inputs, out):
        out[0][0] = self.compute(*inputs)

    def __str__(self) -> str:
        return type(self).__name__


class VecAdd(VecOp):
    nin = 2

    def compute(self, x, y):
        return x + y


class VecScale(VecOp):
    """Correctly reuses its output storage when the shape matches (any strides)."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        z = out[0][0]
        if isinstance(z, np.ndarray) and z.shape == x.shape:
            np.multiply(x, 3.0, out=z)
        else:
            out[0][0] = x * 3.0


class DebugPerformDisagrees(VecOp):
    def compute(self, x):
        return x + 1.0

    def debug_perform(self, node, inputs, out):
        out[0][0] = inputs[0] + 2.0


class DebugPerformAgrees(VecOp):
    def __init__(self) -> None:
        self.debug_calls = 0

    def compute(self, x):
        return x + 1.0

    def debug_perform(self, node, inputs, out):
        self.debug_calls += 1
        out[0][0] = inputs[0] + 1.0


class SneakyInplace(VecOp):
    """Overwrites its input without declaring it in destroy_map."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        x += 1.0
        out[0][0] = x.copy()


class DeclaredInplace(VecOp):
    destroy_map = {0: [0]}

    def perform(self, node, inputs, out):
        (x,) = inputs
        x += 1.0
        out[0][0] = x


class SneakyView(VecOp):
    """Returns its input itself without declaring it in view_map."""

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0]


class DeclaredView(VecOp):
    view_map = {0: [0]}

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0][::-1]


class TwinOutputs(Op):
    """Two outputs returning the same array."""

    def make_node(self, x):
        return Apply(self, [x], [double_vector(), double_vector()])

    def perform(self, node, inputs, out):
        z = inputs[0] * 2.0
        out[0][0] = z
        out[1][0] = z

    def __str__(self) -> str:
        return "TwinOutputs"


class WrongDtype(VecOp):
    def compute(self, x):
        return x.astype("int64")


class WrongRank(VecOp):
    def compute(self, x):
        return x.reshape((1, -1)).copy()


class MakesNaN(VecOp):
    def compute(self, x):
        return x * np.nan


class BlindReuse(VecOp):
    """Writes into whatever buffer is in its output storage, whatever its shape."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        z = out[0][0]
        if z is None:
            z = np.empty_like(x)
        n = min(len(z), len(x))
        z[:n] = x[:n] * 2.0
        out[0][0] = z


class StaleCache(VecOp):
    """Only computes when its output storage is empty: stale values when it is not."""

    def perform(self, node, inputs, out):
        if out[0][0] is None:
            out[0][0] = inputs[0] * 2.0


class RavelWrite(VecOp):
    """Writes through ``ravel()``, which copies a non-contiguous buffer: strided bug."""

    def perform(self, node, inputs, out):
        (x,) = inputs
        z = out[0][0]
        if isinstance(z, np.ndarray) and z.shape == x.shape:
            flat = z.ravel()
            flat[:] = x * 2.0
        else:
            out[0][0] = x * 2.0


class WithFakeC(VecOp):
    """A ``py`` implementation here, and a ``c`` one supplied by a test plugin."""

    def compute(self, x):
        return x * 2.0


vec_add = VecAdd()
vec_scale = VecScale()


def fake_c_plugin(c_compute, calls):
    """A plugin with a ``c`` table of its own (for ``WithFakeC``) and the thunks it builds
    from it, declared in its ``opweave_backend_info`` answer."""

    def make_thunk(node, implementation, storage_map, compute_map, no_recycling):
        in_cell = storage_map[node.inputs[0]]
        out_cell = storage_map[node.outputs[0]]

        def thunk():
            calls.append(node)
            out_cell[0] = implementation(in_cell[0])
            compute_map[node.outputs[0]][0] = 1

        thunk.lazy = False
        return thunk

    class FakeCBackend:
        @hookimpl
        def opweave_backend_info(self):
            return {
                "name": "fake-c",
                "linkers": [],
                "available": True,
                "reason": None,
                "implementations": ImplementationTable(
                    "c", {WithFakeC: c_compute}, scope=lambda: [WithFakeC]
                ),
                "make_thunk": make_thunk,
            }

    return FakeCBackend()


@pytest.fixture
def xyz():
    return double("x"), double("y"), double("z")


@pytest.fixture
def vx():
    return double_vector("vx")


ARR = np.array([1.0, -2.0, 3.5, 4.0])


def run_debug(inputs, outputs, *args, mode=None, **kwargs):
    f = opweave.function(inputs, outputs, mode=mode or DebugMode(), **kwargs)
    return f(*args)


# ---------------------------------------------------------------------- correct graphs


def test_double_graph_runs_under_debugmode(xyz) -> None:
    x, y, z = xyz
    expr = mul(add(x, y), z)
    f = opweave.function([x, y, z], expr, mode=DebugMode())
    assert isinstance(f.maker.mode, DebugMode)
    assert f(1.0, 2.0, 3.0) == 9.0
    assert f(2.0, -5.0, 0.5) == -1.5


def test_mode_name_and_config_flag_select_debugmode(xyz) -> None:
    x, y, z = xyz
    expr = mul(add(x, y), z)
    assert isinstance(get_mode("DebugMode"), DebugMode)
    f = opweave.function([x, y, z], expr, mode="DebugMode")
    assert isinstance(f.maker.mode, DebugMode)
    assert isinstance(f.maker.linker, DebugLinker)
    assert f(1.0, 2.0, 3.0) == 9.0
    with config.change_flags(mode="DebugMode"):
        g = opweave.function([x, y, z], expr)
    assert isinstance(g.maker.mode, DebugMode)
    assert g(1.0, 2.0, 3.0) == 9.0


def test_vector_graph_matches_the_normal_linkers(vx) -> None:
    vy = double_vector("vy")
    expr = vec_scale(vec_add(vec_scale(vx), vy))
    b = np.array([0.5, 0.25, -1.0, 2.0])
    f = opweave.function([vx, vy], expr, mode=DebugMode())
    expected = (ARR * 3.0 + b) * 3.0
    for linker in ("py", "vm"):
        ref = opweave.function([vx, vy], expr, mode=Mode(linker=linker))
        np.testing.assert_array_equal(ref(ARR, b), expected)
    for _ in range(3):  # the "previous" pre-allocation has something to reuse from now on
        np.testing.assert_array_equal(f(ARR, b), expected)
    a = ARR.copy()
    f(a, b)
    np.testing.assert_array_equal(a, ARR)


def test_declared_destroy_and_view_maps_pass(vx) -> None:
    f = opweave.function(
        [In(vx, mutable=True)], DeclaredInplace()(vx), mode=DebugMode(), accept_inplace=True
    )
    a = ARR.copy()
    np.testing.assert_array_equal(f(a), ARR + 1.0)
    np.testing.assert_array_equal(a, ARR + 1.0)  # destroyed, as with the normal linkers
    g = opweave.function([vx], DeclaredView()(vec_scale(vx)), mode=DebugMode())
    np.testing.assert_array_equal(g(ARR), (ARR * 3.0)[::-1])
    # a view of an input as output is copied for the caller
    h = opweave.function([vx], DeclaredView()(vx), mode=DebugMode())
    a = ARR.copy()
    out = h(a)
    np.testing.assert_array_equal(out, a[::-1])
    assert not np.shares_memory(out, a)


def test_hidden_output_may_alias_the_visible_one(vx) -> None:
    vy = double_vector("vy")
    f = opweave.function([vx, vy], hidden_buffer_add(vx, vy), mode=DebugMode())
    np.testing.assert_array_equal(f(ARR, ARR), ARR * 2)
    np.testing.assert_array_equal(f(ARR[:2], ARR[:2]), ARR[:2] * 2)


def test_agreeing_debug_perform_is_the_reference(vx) -> None:
    op = DebugPerformAgrees()
    f = opweave.function([vx], op(vx), mode=DebugMode())
    np.testing.assert_array_equal(f(ARR), ARR + 1.0)
    assert op.debug_calls >= 1


def test_every_offered_implementation_runs(vx, plugin_manager) -> None:
    calls: list = []
    plugin_manager.register(fake_c_plugin(lambda x: x * 2.0, calls))
    f = opweave.function([vx], WithFakeC()(vx), mode=DebugMode())
    np.testing.assert_array_equal(f(ARR), ARR * 2.0)
    assert calls
    assert f.maker.linker.make_all()[3][0].impl_names == ["py", "c"]
    calls.clear()
    g = opweave.function([vx], WithFakeC()(vx), mode=DebugMode(check_c_code=False))
    g(ARR)
    assert not calls


# ---------------------------------------------------------------------- broken Ops


def test_perform_and_debug_perform_disagree(vx) -> None:
    out = DebugPerformDisagrees()(vx)
    with pytest.raises(BadThunkOutput) as info:
        run_debug([vx], out, ARR)
    msg = str(info.value)
    assert str(out.owner) in msg
    assert "debug_perform" in msg and "'py'" in msg
    assert info.value.impl1 == "debug_perform" and info.value.impl2 == "py"
    np.testing.assert_array_equal(info.value.value1, ARR + 2.0)
    np.testing.assert_array_equal(info.value.value2, ARR + 1.0)
    assert "shape=(4,)" in msg and "dtype=float64" in msg


def test_c_and_py_implementations_disagree(vx, plugin_manager) -> None:
    plugin_manager.register(fake_c_plugin(lambda x: x * 2.0 + 1.0, []))
    out = WithFakeC()(vx)
    with pytest.raises(BadThunkOutput) as info:
        run_debug([vx], out, ARR)
    assert (info.value.impl1, info.value.impl2) == ("py", "c")
    assert str(out.owner) in str(info.value)


def test_undeclared_destruction_is_bad_destroy_map(vx) -> None:
    out = SneakyInplace()(vx)
    with pytest.raises(BadDestroyMap) as info:
        run_debug([vx], out, ARR)
    msg = str(info.value)
    assert str(out.owner) in msg
    assert "input 0" in msg and "destroy_map" in msg
    assert info.value.input_index == 0
    np.testing.assert_array_equal(info.value.old_value, ARR)
    np.testing.assert_array_equal(info.value.new_value, ARR + 1.0)


def test_undeclared_view_of_an_input_is_bad_view_map(vx) -> None:
    out = SneakyView()(vec_scale(vx))
    with pytest.raises(BadViewMap) as info:
        run_debug([vx], out, ARR)
    msg = str(info.value)
    assert str(out.owner) in msg
    assert info.value.in_alias_idx == [0]
    assert "input(s) 0" in msg


def test_outputs_aliasing_each_other_is_bad_view_map(vx) -> None:
    a, b = TwinOutputs()(vx)
    with pytest.raises(BadViewMap) as info:
        run_debug([vx], [vec_add(a, b)], ARR)
    assert info.value.out_alias_idx == [1]
    assert str(a.owner) in str(info.value)


@pytest.mark.parametrize("op", [WrongDtype(), WrongRank()], ids=str)
def test_value_rejected_by_the_type_is_invalid(vx, op) -> None:
    out = op(vx)
    with pytest.raises(InvalidValueError) as info:
        run_debug([vx], out, ARR)
    assert str(out.owner) in str(info.value)
    assert info.value.variable.type == double_vector


def test_nan_is_invalid_unless_check_isfinite_is_off(vx) -> None:
    out = MakesNaN()(vx)
    with pytest.raises(InvalidValueError) as info:
        run_debug([vx], out, ARR)
    assert "non-finite" in str(info.value)
    assert str(out.owner) in str(info.value)
    result = run_debug([vx], out, ARR, mode=DebugMode(check_isfinite=False))
    assert np.isnan(result).all()


def test_blind_reuse_of_a_wrong_sized_buffer(vx) -> None:
    out = BlindReuse()(vx)
    with pytest.raises(BadThunkOutput) as info:
        run_debug([vx], out, ARR)
    assert info.value.prealloc == "wrong_size"
    msg = str(info.value)
    assert "wrong_size" in msg and str(out.owner) in msg
    # the other modes do not reveal it
    mode = DebugMode(check_preallocated_output=["previous", "strided"])
    np.testing.assert_array_equal(run_debug([vx], out, ARR, mode=mode), ARR * 2.0)


def test_stale_output_reuse_is_caught_by_previous(vx) -> None:
    f = opweave.function(
        [vx], StaleCache()(vx), mode=DebugMode(check_preallocated_output=["previous"])
    )
    np.testing.assert_array_equal(f(ARR), ARR * 2.0)
    with pytest.raises(BadThunkOutput) as info:
        f(ARR + 1.0)
    assert info.value.prealloc == "previous"
    assert "previous" in str(info.value)
    # on the first call, a wrong-sized buffer already gives it away
    with pytest.raises(BadThunkOutput, match="wrong_size"):
        run_debug([vx], StaleCache()(vx), ARR)


def test_writing_through_a_copy_of_a_strided_buffer(vx) -> None:
    out = RavelWrite()(vx)
    with pytest.raises(BadThunkOutput) as info:
        run_debug([vx], out, ARR)
    assert info.value.prealloc == "strided"
    off = DebugMode(check_preallocated_output=[])
    np.testing.assert_array_equal(run_debug([vx], out, ARR, mode=off), ARR * 2.0)


# ---------------------------------------------------------------------- rewrites


@node_rewriter([add])
def bad_add_to_sub(fgraph, node):
    return [sub(*node.inputs)]


class BadRewritePlugin:
    @hookimpl
    def opweave_rewrites(self, db):
        db["canonicalize"].register("bad_add_to_sub", bad_add_to_sub, "fast_run")


def test_wrong_rewrite_is_bad_optimization(xyz, plugin_manager) -> None:
    x, y, z = xyz
    plugin_manager.register(BadRewritePlugin())
    f_fast = opweave.function([x, y, z], mul(add(x, y), z), mode="FAST_RUN")
    assert f_fast(1.0, 2.0, 3.0) == -3.0  # the wrong rewrite silently applies
    with pytest.raises(BadOptimization) as info:
        run_debug([x, y, z], mul(add(x, y), z), 1.0, 2.0, 3.0)
    err = info.value
    assert err.reason == "bad_add_to_sub"
    assert err.old_value == 3.0 and err.new_value == -1.0
    msg = str(err)
    assert "bad_add_to_sub" in msg
    assert "add(x, y)" in msg and "sub(x, y)" in msg
    assert "old value" in msg and "3.0" in msg and "-1.0" in msg


def test_correct_rewrites_pass_and_are_recorded(xyz) -> None:
    x, _, _ = xyz
    f = opweave.function([x], mul(add(x, 0.0), 1.0), mode=DebugMode())
    assert f(2.5) == 2.5
    reasons = {r.reason for r in f.maker.linker.replacements}
    assert {"remove_add_zero", "remove_mul_one"} <= reasons
    assert "add" not in str(f.maker.fgraph)


def test_nondeterministic_rewriting_is_stochastic_order(xyz, plugin_manager) -> None:
    x, y, z = xyz
    counter = [0]

    @node_rewriter([add])
    def alternating_swap(fgraph, node):
        a, b = node.inputs
        if a.name != "x":
            return None
        counter[0] += 1
        return [add(b, a)] if counter[0] % 2 else None

    class SwapPlugin:
        @hookimpl
        def opweave_rewrites(self, db):
            db["canonicalize"].register("alternating_swap", alternating_swap, "fast_run")

    plugin_manager.register(SwapPlugin())
    with pytest.raises(StochasticOrder):
        opweave.function([x, y, z], mul(add(x, y), z), mode=DebugMode())
    counter[0] = 0
    f = opweave.function([x, y, z], mul(add(x, y), z), mode=DebugMode(stability_patience=1))
    assert f(1.0, 2.0, 3.0) == 9.0


# ---------------------------------------------------------------------- the mode itself


def test_errors_share_a_base_class() -> None:
    for cls in (BadThunkOutput, BadDestroyMap, BadViewMap, BadOptimization, InvalidValueError):
        assert issubclass(cls, DebugModeError)


def test_mode_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="linker"):
        DebugMode(linker="py")
    with pytest.raises(ValueError, match="pre-allocation"):
        DebugMode(check_preallocated_output=["sideways"])
    with pytest.raises(ValueError):
        DebugMode(require_matching_strides=3)
    mode = DebugMode(check_preallocated_output="ALL")
    assert "f_contiguous" in mode.check_preallocated_output
    assert DebugMode().check_preallocated_output == ("previous", "wrong_size", "strided")


def test_including_keeps_debugmode(xyz) -> None:
    x = xyz[0]
    mode = DebugMode().excluding("double")
    assert isinstance(mode, DebugMode)
    assert isinstance(mode.linker, DebugLinker) and mode.linker.mode is mode
    f = opweave.function([x], add(x, 0.0), mode=mode)
    assert f(2.0) == 2.0
    assert "add" in str(f.maker.fgraph.toposort())


def test_debug_linker_in_a_plain_mode_checks_ops(vx) -> None:
    mode = Mode(linker=DebugLinker())
    np.testing.assert_array_equal(run_debug([vx], vec_scale(vx), ARR, mode=mode), ARR * 3.0)
    with pytest.raises(BadViewMap):
        run_debug([vx], SneakyView()(vec_scale(vx)), ARR, mode=mode)


def test_failing_perform_names_the_node(vx) -> None:
    class Boom(VecOp):
        def compute(self, x):
            raise ZeroDivisionError("boom")

    out = Boom()(vx)
    with pytest.raises(ZeroDivisionError) as info:
        run_debug([vx], out, ARR)
    assert any(str(out.owner) in note for note in getattr(info.value, "__notes__", []))
