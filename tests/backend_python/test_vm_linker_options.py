"""PyTensor's ``VMLinker`` arguments and the ``vm__lazy`` flag: which loop runs a graph
(lazy or eager, and so whether the branch an ``ifelse`` does not take runs), callbacks
around each thunk, and clear refusals of what the ``vm`` linker does not do."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.ifelse import ifelse
from opweave.link.vm import VMLinker


def _guarded_index() -> tuple[Any, Any, Any]:
    """``x[i] if i < 3 else x[0]``: the taken branch is fine, the other one raises."""
    x, i = pt.vector("x"), pt.lscalar("i")
    return x, i, ifelse(pt.lt(i, 3), x[i], x[0])


@pytest.mark.parametrize("lazy", [None, True])
def test_lazy_loops_skip_the_branch_not_taken(lazy: bool | None) -> None:
    x, i, out = _guarded_index()
    fn = opweave.function([x, i], out, mode=Mode(linker=VMLinker(lazy=lazy)))
    assert fn(np.arange(3.0) + 1, 5) == 1.0
    assert fn.fn.loop == "lazy"


def test_eager_loop_runs_both_branches() -> None:
    x, i, out = _guarded_index()
    fn = opweave.function([x, i], out, mode=Mode(linker=VMLinker(lazy=False)))
    assert fn.fn.loop == "eager"
    assert fn(np.arange(3.0) + 1, 1) == 2.0
    with pytest.raises(IndexError):
        fn(np.arange(3.0) + 1, 5)


def test_lazy_true_takes_the_lazy_loop_without_a_lazy_node() -> None:
    a, b = pt.scalars("ab")
    fn = opweave.function([a, b], a * b + a, mode=Mode(linker=VMLinker(lazy=True)))
    assert fn.fn.loop == "lazy"
    assert fn(2.0, 3.0) == 8.0


@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_the_flag_chooses_the_loop_of_every_thunk_loop_linker(linker: str) -> None:
    x, i, out = _guarded_index()
    with opweave.config.change_flags(vm__lazy=False):
        eager = opweave.function([x, i], out, mode=Mode(linker=linker))
    with pytest.raises(IndexError):
        eager(np.arange(3.0), 5)
    with opweave.config.change_flags(vm__lazy=True):
        lazy = opweave.function([x, i], out, mode=Mode(linker=linker))
    assert lazy(np.arange(3.0) + 1, 5) == 1.0


def test_the_linker_argument_overrides_the_flag() -> None:
    x, i, out = _guarded_index()
    with opweave.config.change_flags(vm__lazy=False):
        fn = opweave.function([x, i], out, mode=Mode(linker=VMLinker(lazy=True)))
    assert fn(np.arange(3.0) + 1, 5) == 1.0


def test_flag_values() -> None:
    assert opweave.config.vm__lazy is None
    with opweave.config.change_flags(vm__lazy="True"):
        assert opweave.config.vm__lazy is True
    with opweave.config.change_flags(vm__lazy="none"):
        assert opweave.config.vm__lazy is None
    with pytest.raises(ValueError, match=r"vm__lazy.*expected None, True or False"):
        opweave.config.vm__lazy = "sometimes"


def test_callback_runs_after_every_thunk_call() -> None:
    calls: Counter[str] = Counter()

    def callback(node: Any, thunk: Any, storage_map: Any, compute_map: Any) -> None:
        assert all(compute_map[out][0] for out in node.outputs) or thunk.lazy
        calls[type(node.op).__name__] += 1

    a, b, c = pt.scalars("abc")
    fn = opweave.function(
        [a, b, c], (a + b) + c, mode=Mode(optimizer=None, linker=VMLinker(callback=callback))
    )
    n_nodes = len(fn.maker.fgraph.toposort())
    assert fn(1.0, 2.0, 3.0) == 6.0
    assert calls.total() == n_nodes
    fn(1.0, 2.0, 3.0)
    assert calls.total() == 2 * n_nodes

    calls.clear()
    fn = opweave.function(
        [a, b, c],
        ifelse(a, 2 * b, 2 * c),
        mode=Mode(optimizer=None, linker=VMLinker(callback=callback)),
    )
    assert fn(1.0, 2.0, 3.0) == 4.0
    # the ifelse's thunk runs twice (asking for the condition, then for its branch), one
    # branch's product once, the other's not at all
    assert calls == Counter({"IfElse": 2, "Elemwise": 1})


def test_callback_input_runs_before_and_callback_after() -> None:
    events: list[tuple[str, bool]] = []

    def before(node: Any, thunk: Any, storage_map: Any, compute_map: Any) -> None:
        events.append(("before", bool(compute_map[node.outputs[0]][0])))

    def after(node: Any, thunk: Any, storage_map: Any, compute_map: Any) -> None:
        events.append(("after", storage_map[node.outputs[0]][0] is not None))

    a = pt.scalar("a")
    linker = VMLinker(callback=after, callback_input=before, allow_gc=False)
    fn = opweave.function([a], pt.exp(a), mode=Mode(optimizer=None, linker=linker))
    assert fn(0.0) == 1.0
    assert [kind for kind, _ in events] == ["before", "after"]
    assert events[1][1]


def test_a_linker_used_for_a_second_graph_keeps_its_arguments() -> None:
    calls: list[str] = []
    linker = VMLinker(callback=lambda **kw: calls.append(str(kw["node"].op)), lazy=False)
    a = pt.scalar("a")
    first = opweave.function([a], a + 1, mode=Mode(optimizer=None, linker=linker))
    x, i, out = _guarded_index()
    second = opweave.function([x, i], out, mode=Mode(optimizer=None, linker=linker))
    first(1.0)
    assert len(calls) == 1
    with pytest.raises(IndexError):
        second(np.arange(3.0), 5)
    assert len(calls) > 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"use_cloop": True}, "Mode\\(linker='cvm'\\)"),
        ({"c_thunks": True}, "Mode\\(linker='cvm'\\)"),
        ({"schedule": sorted}, "schedule and allow_partial_eval"),
        ({"allow_partial_eval": True}, "schedule and allow_partial_eval"),
        ({"lazy": "yes"}, "lazy must be None, True or False"),
    ],
)
def test_what_the_vm_does_not_do_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VMLinker(**kwargs)


def test_pytensor_defaults_are_accepted() -> None:
    linker = VMLinker(allow_gc=False, use_cloop=False, c_thunks=False, allow_partial_eval=None)
    a = pt.scalar("a")
    fn = opweave.function([a], a * 2, mode=Mode(linker=linker))
    assert fn(2.5) == 5.0
