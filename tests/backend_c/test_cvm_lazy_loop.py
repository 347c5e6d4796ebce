"""``cvm`` runs lazy graphs (``ifelse``) in the runtime's loop: the steps the core's lazy
loop runs, in its order, and no other (the branch an ``IfElse`` does not take never
runs), with the same values, frees and failure reports."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any, ClassVar

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.ifelse import IfElse, ifelse
from opweave.raise_op import Assert
from opweave_c.linkers.lazy_plan import EAGER, IFELSE, LAZY_THUNK


class Logged(Op):
    """``x + 1`` in Python, noting its tag in :attr:`log` each time it runs."""

    __props__ = ("tag",)
    log: ClassVar[list[str]] = []

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        Logged.log.append(self.tag)
        outputs[0][0] = np.asarray(inputs[0] + 1, dtype=node.outputs[0].dtype)


class Probe(Op):
    """``x`` in Python, noting which of :attr:`cells` are empty when it runs."""

    __props__ = ()
    cells: ClassVar[list[list[Any]]] = []
    seen: ClassVar[list[list[bool]]] = []

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        Probe.seen.append([cell[0] is None for cell in Probe.cells])
        outputs[0][0] = inputs[0].copy()


class LazyPick(Op):
    """``a`` when ``c`` is nonzero, else ``b``: a lazy Op of the project's protocol that is
    not an ``IfElse`` (its lazy thunk is called as the core calls it)."""

    __props__ = ()

    def make_node(self, c: Any, a: Any, b: Any) -> Apply:
        c, a, b = (ot.as_tensor_variable(v) for v in (c, a, b))
        return Apply(self, [c, a, b], [a.type()])

    def needed_inputs(self, node: Apply, inputs: Any, computed: Any) -> list[int]:
        if not computed[0][0]:
            return [0]
        return [1] if inputs[0][0] != 0 else [2]

    def perform(self, node: Apply, inputs: Any, outputs: Any) -> None:
        outputs[0][0] = np.array(inputs[1] if inputs[0] != 0 else inputs[2])


class BrokenLazy(Op):
    """A lazy Op whose thunk keeps asking for a computed input."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def make_thunk(
        self, node: Apply, storage_map: Any, compute_map: Any, no_recycling: Any, impl: Any = None
    ) -> Any:
        def thunk() -> list[int]:
            return [0]

        thunk.lazy = True  # type: ignore[attr-defined]
        return thunk


def compile_(inputs: Any, outputs: Any, linker: str, optimizer: Any = "default") -> Any:
    mode = Mode(linker=linker) if optimizer == "default" else Mode(linker, optimizer)
    return opweave.function(inputs, outputs, mode=mode)


def both(inputs: Any, outputs: Any, optimizer: Any = "default") -> tuple[Any, Any]:
    """The function on ``cvm`` (which must run the C loop) and on ``vm`` (the core's)."""
    f = compile_(inputs, outputs, "cvm", optimizer)
    assert f.fn.c_loop and f.fn.loop == "lazy"
    g = compile_(inputs, outputs, "vm", optimizer)
    assert g.fn.loop == "lazy"
    return f, g


def run_logged(fn: Any, *args: Any) -> tuple[Any, list[str]]:
    Logged.log.clear()
    out = fn(*args)
    return out, list(Logged.log)


def agree(f: Any, g: Any, *args: Any) -> list[str]:
    """Call both; they must give the same values after running the same Python nodes in
    the same order. Returns that order."""
    got, ran = run_logged(f, *args)
    want, ran_core = run_logged(g, *args)
    assert ran == ran_core
    for a, b in zip(
        got if isinstance(got, list) else [got],
        want if isinstance(want, list) else [want],
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)
    return ran


def intermediates(f: Any) -> list[list[Any]]:
    graph = f.maker.fgraph
    return [
        f.fn.storage_map[v]
        for node in graph.toposort()
        for v in node.outputs
        if v not in graph.outputs
    ]


def test_the_benchmark_graph_runs_in_the_c_loop_and_computes_one_branch() -> None:
    x = ot.dvector("x")
    f, g = both([x], ifelse(x.sum() > 0, ot.exp(x) * 2, ot.log(ot.abs(x) + 1)))
    assert IFELSE in f.maker.linker._loop.lazy[0]
    for xv in (np.array([0.5, 1.0, -0.2]), np.array([-3.0, 0.5]), np.zeros(4)):
        want = np.exp(xv) * 2 if xv.sum() > 0 else np.log(np.abs(xv) + 1)
        np.testing.assert_allclose(f(xv), want)
        np.testing.assert_array_equal(f(xv), g(xv))


@pytest.mark.parametrize("cond", [0, 1])
def test_only_the_taken_branch_runs(cond: int) -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    out = ifelse(c, Logged("then")(x) * 2.0, Logged("else")(x) - 1.0)
    f, g = both([c, x], out)
    ran = agree(f, g, cond, np.arange(3.0))
    assert ran == (["then"] if cond else ["else"])


def test_a_failing_branch_that_is_not_taken_never_runs() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    guarded = Assert("the else branch ran")(x * 3.0, ot.all(ot.gt(x, 100.0)))
    f, _ = both([c, x], ifelse(c, ot.exp(x), guarded))
    np.testing.assert_allclose(f(1, np.zeros(2)), [1.0, 1.0])
    with pytest.raises(AssertionError, match="the else branch ran") as info:
        f(0, np.zeros(2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error: Assert" in notes
    assert all(cell[0] is None for cell in intermediates(f))
    np.testing.assert_allclose(f(1, np.zeros(2)), [1.0, 1.0])


@pytest.mark.parametrize(("c1", "c2"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_nested_ifelse_runs_what_the_core_runs(c1: int, c2: int) -> None:
    a, b, x = ot.iscalar("a"), ot.iscalar("b"), ot.dvector("x")
    inner = ifelse(b, Logged("inner then")(x), Logged("inner else")(x) * 3.0)
    out = ifelse(a, inner + Logged("outer then")(x), Logged("outer else")(x))
    f, g = both([a, b, x], out)
    ran = agree(f, g, c1, c2, np.arange(4.0))
    if c1:
        assert "outer else" not in ran and "outer then" in ran
        assert ("inner then" in ran) == bool(c2) and ("inner else" in ran) == (not c2)
    else:
        assert ran == ["outer else"]


@pytest.mark.parametrize("cond", [0, 1])
def test_a_node_shared_by_both_branches_runs_either_way(cond: int) -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    shared = Logged("shared")(ot.exp(x))
    out = ifelse(c, Logged("then")(shared), Logged("else")(shared) * 2.0)
    f, g = both([c, x], out)
    ran = agree(f, g, cond, np.arange(3.0))
    assert sorted(ran) == sorted(["shared", "then" if cond else "else"])


@pytest.mark.parametrize(("c1", "c2"), [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_a_condition_computed_in_another_ifelse_branch(c1: int, c2: int) -> None:
    a, b, x = ot.iscalar("a"), ot.iscalar("b"), ot.dvector("x")
    first = ifelse(a, Logged("first then")(x), Logged("first else")(x) * 0.0)
    # The second condition reads the first IfElse's output, whose branches are lazy.
    second_cond = ot.gt(first.sum(), 0.0) * b
    out = ifelse(second_cond, Logged("second then")(x), Logged("second else")(x))
    f, g = both([a, b, x], [out, first])
    ran = agree(f, g, c1, c2, np.arange(3.0))
    assert ("first then" in ran) == bool(c1)
    assert ("second then" in ran) == bool(c1 and c2)


@pytest.mark.parametrize(
    ("dtype", "value"),
    [
        ("int8", 0),
        ("int8", -3),
        ("uint64", 2**63),
        ("float64", -0.0),
        ("float64", np.nan),
        ("float32", 1e-30),
        ("bool", True),
        ("bool", False),
        ("complex128", 0j),
        ("complex128", 1j),
    ],
)
def test_the_condition_is_read_as_the_python_kernel_reads_it(dtype: str, value: Any) -> None:
    c, x = ot.scalar("c", dtype=dtype), ot.dvector("x")
    f, g = both([c, x], ifelse(c, Logged("then")(x), Logged("else")(x) * 2.0))
    ran = agree(f, g, np.asarray(value, dtype=dtype), np.arange(3.0))
    assert ran == (["then"] if np.asarray(value, dtype=dtype) != 0 else ["else"])


@pytest.mark.parametrize(("as_view", "cond"), [(False, 0), (False, 1), (True, 0), (True, 1)])
def test_outputs_are_copies_unless_a_view_of_the_then_branch(as_view: bool, cond: int) -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    out = IfElse(1, as_view=as_view)(c, x * 2.0, x + 1.0)
    with opweave.config.change_flags(allow_gc=False):
        f, _ = both([c, x], out, optimizer=None)
    assert not f.fn.allow_gc
    got = f(cond, np.arange(3.0))
    (node,) = [n for n in f.maker.fgraph.apply_nodes if isinstance(n.op, IfElse)]
    assert node.op.as_view == as_view
    taken = f.fn.storage_map[node.inputs[1 if cond else 2]][0]
    held = f.fn.storage_map[node.outputs[0]][0]
    np.testing.assert_array_equal(got, taken)
    assert (held is taken) == (as_view and bool(cond))


@pytest.mark.parametrize("cond", [0, 1])
def test_intermediates_are_freed_when_the_core_frees_them(cond: int) -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    early = ot.exp(x)
    then = Probe()(Logged("then")(early) * 2.0)
    out = ifelse(c, then + early, Probe()(Logged("else")(x)) + early)
    seen = {}
    for linker in ("cvm", "vm"):
        f = compile_([c, x], out, linker)
        Probe.cells = intermediates(f)
        Probe.seen = []
        f(cond, np.arange(3.0))
        seen[linker] = Probe.seen
        assert all(cell[0] is None for cell in intermediates(f))
    assert seen["cvm"] == seen["vm"] and seen["cvm"]


def test_a_lazy_op_that_is_not_an_ifelse_is_asked_as_the_core_asks_it() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    f, g = both([c, x], LazyPick()(c, Logged("a")(x), Logged("b")(x)) * 2.0)
    assert LAZY_THUNK in f.maker.linker._loop.lazy[0]
    assert agree(f, g, 1, np.arange(2.0)) == ["a"]
    assert agree(f, g, 0, np.arange(2.0)) == ["b"]


def test_a_lazy_thunk_asking_for_computed_inputs_is_reported() -> None:
    x = ot.dvector("x")
    f = compile_([x], BrokenLazy()(ot.exp(x)), "cvm")
    assert f.fn.c_loop and f.maker.linker._loop.lazy[0] == (EAGER, LAZY_THUNK)
    with pytest.raises(RuntimeError, match="lazy protocol is broken") as info:
        f(np.ones(2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "Apply node that caused the error: BrokenLazy" in notes


def test_the_linked_function_runs_the_same_loop_on_its_cells() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    f, _ = both([c, x], ifelse(c, Logged("then")(x), Logged("else")(x)) * 2.0)
    for cell, value in zip(f.input_cells, (np.int32(0), np.arange(2.0)), strict=True):
        cell[0] = value
    Logged.log.clear()
    f.fn()
    assert Logged.log == ["else"]
    np.testing.assert_array_equal(f.fn.storage_map[f.maker.fgraph.outputs[0]][0], [2.0, 4.0])


def test_updates_of_a_lazy_graph_are_applied_by_the_one_c_call() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    values = {}
    for linker in ("cvm", "vm"):
        acc = opweave.shared(np.zeros(2), "acc")
        step = ifelse(c, Logged("then")(x), -x)
        f = opweave.function(
            [c, x], step * 2.0, updates={acc: acc + step}, mode=Mode(linker=linker)
        )
        assert f.fn.loop == "lazy" and getattr(f.fn, "c_loop", False) == (linker == "cvm")
        Logged.log.clear()
        outs = [f(1, np.ones(2)), f(0, np.ones(2)), f(1, np.full(2, 3.0))]
        values[linker] = (outs, acc.get_value(), list(Logged.log))
    (outs, total, ran), (want, want_total, want_ran) = values["cvm"], values["vm"]
    np.testing.assert_array_equal(outs, want)
    np.testing.assert_array_equal(total, want_total)
    np.testing.assert_array_equal(total, [5.0, 5.0])
    assert ran == want_ran == ["then", "then"]


def test_calls_from_several_threads_take_their_own_branch() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    f, _ = both([c, x], ifelse(c, ot.exp(x) * 2.0, ot.log(ot.abs(x) + 1.0)))
    xv = np.linspace(-1.0, 1.0, 5)
    wrong: list[int] = []

    def work(k: int) -> None:
        for i in range(200):
            cond = (i + k) % 2
            want = np.exp(xv) * 2.0 if cond else np.log(np.abs(xv) + 1.0)
            if not np.allclose(f(cond, xv), want):
                wrong.append(i)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_a_dropped_function_and_its_graph_are_collected_at_once() -> None:
    c, x = ot.iscalar("c"), ot.dvector("x")
    f, _ = both([c, x], ifelse(c, Logged("then")(x), Logged("else")(x)) * 2.0)
    f(1, np.ones(2))
    # The loop's arguments reach the graph (the steps' thunks): the collection that finds
    # the function unreachable finds them unreachable too.
    node = weakref.ref(f.maker.fgraph.toposort()[0])
    linker = weakref.ref(f.maker.linker)
    cycle: list[Any] = [f]
    cycle.append(cycle)
    del f, cycle
    gc.collect()
    assert linker() is None and node() is None
