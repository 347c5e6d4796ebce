"""``cvm`` runs its steps in the runtime's loop: compiled blocks called directly, nodes
without C through the C API, intermediates freed after their last use, failures reported
as by the core's loop, and a call that is one C call."""

from __future__ import annotations

import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.ifelse import ifelse
from opweave.xtensor.type import XTensorType
from opweave_c.linkers.c_loop import CLoop, exact_spec


class PyDouble(Op):
    """``2 * x`` with a Python implementation only: a step the loop calls through the C
    API. Raises ``ValueError`` for an element below -100; ``interrupt`` makes it raise
    ``KeyboardInterrupt`` instead."""

    __props__ = ("interrupt",)

    def __init__(self, interrupt: bool = False) -> None:
        self.interrupt = interrupt

    def make_node(self, x):
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        (x,) = inputs
        if np.any(x < -100):
            if self.interrupt:
                raise KeyboardInterrupt
            raise ValueError("an element is below -100")
        outputs[0][0] = np.asarray(2 * x, dtype=node.outputs[0].dtype)


def cvm(inputs, outputs, **kwargs):
    return opweave.function(inputs, outputs, mode=Mode(linker="cvm"), **kwargs)


def mixed():
    """``exp(2 * (x + 1)) + y``: C, then Python, then C steps."""
    x, y = ot.dvector("x"), ot.dvector("y")
    return [x, y], ot.exp(PyDouble()(x + 1.0)) + y


def expected(x, y):
    return np.exp(2 * (x + 1.0)) + y


def intermediates(f):
    graph = f.maker.fgraph
    return [
        f.fn.storage_map[v]
        for node in graph.toposort()
        for v in node.outputs
        if v not in graph.outputs
    ]


def test_a_graph_of_c_and_python_steps_runs_in_the_c_loop() -> None:
    f = cvm(*mixed())
    assert f.fn.c_loop and f.fn.loop == "eager"
    order = f.maker.fgraph.toposort()
    python_steps = [k for k, node in enumerate(order) if isinstance(node.op, PyDouble)]
    assert python_steps and python_steps[0] not in f.fn.c_nodes
    assert len(f.fn.c_nodes) == len(order) - len(python_steps)
    x, y = np.linspace(-1.0, 1.0, 5), np.arange(5.0)
    np.testing.assert_allclose(f(x, y), expected(x, y))
    np.testing.assert_allclose(f(y, x), expected(y, x))  # again, on other values
    # The linked graph's function runs the same loop on what the cells hold.
    for cell, value in zip(f.input_cells, (x, x), strict=True):
        cell[0] = value
    f.fn()
    out = f.fn.storage_map[f.maker.fgraph.outputs[0]][0]
    np.testing.assert_allclose(out, expected(x, x))


def test_intermediates_are_freed_after_their_last_use_or_kept() -> None:
    f = cvm(*mixed())
    assert f.fn.allow_gc
    f(np.ones(3), np.ones(3))
    cells = intermediates(f)
    assert cells and all(cell[0] is None for cell in cells)
    with opweave.config.change_flags(allow_gc=False):
        g = cvm(*mixed())
    assert g.fn.c_loop and not g.fn.allow_gc
    g(np.ones(3), np.ones(3))
    kept = intermediates(g)
    assert kept and all(isinstance(cell[0], np.ndarray) for cell in kept)


def test_a_failing_python_step_is_named_then_the_intermediates_freed() -> None:
    f = cvm(*mixed())
    with pytest.raises(ValueError, match="below -100") as info:
        f(np.array([1.0, -500.0]), np.zeros(2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error: PyDouble" in notes
    assert "shape=(2,) dtype=float64" in notes  # its input, described before being freed
    assert all(cell[0] is None for cell in intermediates(f))
    np.testing.assert_allclose(f(np.zeros(2), np.ones(2)), expected(np.zeros(2), np.ones(2)))


def test_a_failing_c_step_is_named_as_by_the_core_loop() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = cvm([x, y], ot.exp(PyDouble()(x)) + y)
    assert f.fn.c_loop
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    last = f.maker.fgraph.toposort()[-1]
    assert f"Apply node that caused the error: {last}" in notes
    assert "shape=(4,)" in notes
    np.testing.assert_allclose(f(np.ones(3), np.ones(3)), np.exp(2.0) + 1.0)


def test_an_interrupt_in_a_step_propagates_and_frees_the_intermediates() -> None:
    x = ot.dvector("x")
    f = cvm([x], ot.exp(PyDouble(interrupt=True)(x + 1.0)) * 3.0)
    with pytest.raises(KeyboardInterrupt):
        f(np.array([-500.0]))
    assert all(cell[0] is None for cell in intermediates(f))
    np.testing.assert_allclose(f(np.zeros(1)), 3.0 * np.exp(2.0))


def test_refused_arguments_are_named_as_by_the_generic_call() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    f = cvm([x, y], x * 2.0 + y)
    assert f.fn.c_loop
    with pytest.raises(TypeError, match=r"bad input argument 1 \(name 'y'\)") as info:
        f(np.ones(2), np.ones((2, 2)))
    assert "wrong rank" in str(info.value)
    with pytest.raises(TypeError, match=r"bad input argument 0 \(name 'x'\)"):
        f("text", np.ones(2))
    np.testing.assert_allclose(f(np.ones(2), np.ones(2)), [3.0, 3.0])


def test_arguments_that_are_not_exact_go_through_the_filter() -> None:
    x = ot.dvector("x")
    f = cvm([x], x * 2.0)
    strided = np.arange(8.0)[::2]
    swapped = np.arange(3.0).astype(">f8")
    for value in ([1.0, 2.0], np.arange(3), swapped, strided, np.float64(4.0) * np.ones(2)):
        np.testing.assert_allclose(f(value), np.asarray(value, dtype=float) * 2.0)
    with pytest.raises(TypeError, match="bad input argument 0"):
        f(np.ones(2, dtype=np.float32) + 0.1j)


def test_exact_spec_describes_what_the_tensor_filter_returns_unchanged() -> None:
    assert exact_spec(ot.dvector().type) == (np.dtype("float64").num, 1, (-1,))
    assert exact_spec(ot.TensorType("int32", shape=(3, None))) == (
        np.dtype("int32").num,
        2,
        (3, -1),
    )
    assert exact_spec(opweave.scalar.float64) is None
    value = np.arange(3.0)
    assert ot.dvector().type.filter(value) is value


def test_named_dimension_arrays_take_the_tensor_exact_path() -> None:
    xtype = XTensorType("int32", dims=("a", "b"), shape=(3, None))
    assert exact_spec(xtype) == exact_spec(xtype.tensor_type) == (np.dtype("int32").num, 2, (3, -1))
    x = xtype("x")
    f = cvm([x], x.values * 2)
    value = np.arange(6, dtype="int32").reshape(3, 2)
    np.testing.assert_array_equal(f(value), value * 2)
    np.testing.assert_array_equal(f(value[:, ::-1]), value[:, ::-1] * 2)  # a strided view
    with pytest.raises(TypeError, match="bad input argument 0"):
        f(np.zeros((4, 2), dtype="int32"))  # the static length is still checked
    with pytest.raises(TypeError):
        f(np.zeros((3, 2)))  # float64 is no int32 (the filter refuses it)


def test_static_shapes_are_checked_on_exact_arrays() -> None:
    x = ot.TensorType("float64", shape=(3,))("x")
    f = cvm([x], x + 1.0)
    np.testing.assert_allclose(f(np.zeros(3)), np.ones(3))
    with pytest.raises(TypeError, match="bad input argument 0"):
        f(np.zeros(4))


def test_updates_defaults_and_keywords_go_through_the_loop() -> None:
    x = ot.dscalar("x")
    acc = opweave.shared(np.float64(0.0), name="acc")
    f = cvm([x], acc + x, updates=[(acc, acc + x)])
    assert f.fn.c_loop
    f(1.0)
    f(x=2.5)
    assert float(acc.get_value()) == 3.5
    y = ot.dscalar("y")
    g = cvm([x, In(y, value=10.0)], [x + y, x * y])
    assert [float(v) for v in g(2.0)] == [12.0, 20.0]
    assert [float(v) for v in g(2.0, y=3.0)] == [5.0, 6.0]


def test_lazy_graphs_run_in_the_c_loop_and_profiled_graphs_keep_the_core_loop() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    lazy = cvm([c, x], ifelse(c, x * 2.0, x + 1.0))
    assert lazy.fn.loop == "lazy" and lazy.fn.c_loop
    np.testing.assert_allclose(lazy(1, np.ones(2)), [2.0, 2.0])
    profiled = cvm([x], ot.exp(x) + 1.0, profile=True)
    assert not profiled.fn.c_loop
    np.testing.assert_allclose(profiled(np.zeros(2)), [2.0, 2.0])
    assert profiled.profile.apply_callcount


def test_calls_keep_no_reference_and_the_function_is_collected() -> None:
    f = cvm(*mixed())
    x, y = np.ones(4), np.ones(4)
    f(x, y)
    before = sys.getrefcount(x), sys.getrefcount(y)
    for _ in range(50):
        f(x, y)
    assert (sys.getrefcount(x), sys.getrefcount(y)) == before
    with pytest.raises(ValueError):
        f(np.full(4, -500.0), y)
    assert sys.getrefcount(y) == before[1]
    linker = weakref.ref(f.maker.linker)
    del f
    gc.collect()
    assert linker() is None


def test_calls_from_several_threads_each_get_their_own_result() -> None:
    f = cvm(*mixed())
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for i in range(50):
                x, y = np.full(64, k / 10.0), np.full(64, float(i))
                np.testing.assert_allclose(f(x, y), expected(x, y))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


class CallsBack(Op):
    """Calls the function it is given from inside that function's own call."""

    __props__ = ()

    def __init__(self) -> None:
        self.function = None

    def make_node(self, x):
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, outputs):
        if self.function is not None and inputs[0].size:
            self.function(inputs[0][:0])
        outputs[0][0] = inputs[0].copy()


def test_a_function_called_from_inside_its_own_call_is_refused() -> None:
    x = ot.dvector("x")
    op = CallsBack()
    f = cvm([x], op(ot.exp(x)) + 1.0)
    assert f.fn.c_loop
    op.function = f
    with pytest.raises(RuntimeError, match="called again from inside its own call"):
        f(np.ones(2))
    op.function = None
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])


def test_link_steps_refuses_inconsistent_arguments() -> None:
    f = cvm(*mixed())
    loop = f.maker.linker._loop
    assert isinstance(loop, CLoop)
    link = loop.module.link_steps
    good = (
        loop.steps,
        loop.gc_ends,
        *loop.gc_cells,
        *loop.release_cells,
        None,
        (),
        (),
        (),
        [None],
        (),
        (),
        (),
        False,
        (),
    )
    run, _call = link(*good)
    (x, y), out = f.maker.fgraph.inputs, f.maker.fgraph.outputs[0]
    f.fn.storage_map[x][0], f.fn.storage_map[y][0] = np.zeros(2), np.ones(2)
    run()  # the steps, on what the cells hold
    np.testing.assert_allclose(f.fn.storage_map[out][0], expected(np.zeros(2), np.ones(2)))
    with pytest.raises(TypeError, match="must be a bound block's state or a callable"):
        link((1, *loop.steps[1:]), *good[1:])
    with pytest.raises(ValueError, match="inconsistent"):
        link(loop.steps, loop.gc_ends[:-1], *good[2:])
    with pytest.raises(ValueError, match="must grow"):
        link(loop.steps, tuple(reversed(range(len(loop.steps)))), *good[2:])
    with pytest.raises(TypeError, match="one-element list"):
        link(*good[:2], ([], *loop.gc_cells[0][1:]), *good[3:])
