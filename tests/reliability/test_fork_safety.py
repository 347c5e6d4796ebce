"""A process forked while other threads call or compile functions can call and compile.

``os.fork`` copies only the calling thread: a lock another thread held stays held in the
child. The child here must compute the right values; a child that does not finish within
a bound is killed and the test fails (rather than hangs).
"""

from __future__ import annotations

import gc
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.compile.collector import fewer_collections
from opweave.graph.basic import Apply
from opweave.graph.op import Op
from opweave.link.implementations import ImplementationTable
from opweave.link.progress import current as current_progress

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork"),
    # Python 3.12+ warns on every fork of a process with threads: forking one is the point.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

#: The linkers that run a Python ``perform`` (what :class:`WaitInPerform` needs).
PERFORM_LINKERS = ("py", "vm", "cvm")
#: How long a child may take before it counts as hung (only reached when it is).
CHILD_BOUND = 60.0


def in_child(body: Callable[[], None], bound: float = CHILD_BOUND) -> str:
    """Fork, run ``body`` in the child, and say how the child ended: ``"ok"``,
    ``"hung"`` (killed after ``bound`` seconds) or the error it raised."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the test run
        os.close(read_end)
        outcome = "ok"
        try:
            body()
        except BaseException:
            outcome = traceback.format_exc()
        finally:
            os.write(write_end, outcome.encode()[-4000:])
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        deadline = time.monotonic() + bound
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return "hung"
            time.sleep(0.005)
        return pipe.read().decode() or "the child ended without a word"


def compile_and_call(linker: str) -> None:
    """What the child does: compile a new function and check its value."""
    y = ot.vector("y")
    g = opweave.function([y], (y * 3.0).sum() + 1.0, mode=Mode(linker=linker))
    assert float(g(np.arange(4.0))) == float((np.arange(4.0) * 3.0).sum() + 1.0)


class WaitInPerform(Op):
    """Doubles its input; in the process that made it, its first call waits inside the
    call (``entered`` set) until ``release`` is set."""

    __props__ = ("token",)  # every instance its own Op: no compile reuses another's

    def __init__(self) -> None:
        self.token = uuid.uuid4().hex
        self.parent = os.getpid()
        self.entered = threading.Event()
        self.release = threading.Event()

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: list[Any], outputs: list[list[Any]]) -> None:
        if os.getpid() == self.parent and not self.entered.is_set():
            self.entered.set()
            self.release.wait(CHILD_BOUND)
        outputs[0][0] = inputs[0] * 2.0


@pytest.mark.parametrize("linker", PERFORM_LINKERS)
def test_child_forked_during_a_call_in_another_thread_calls_the_function(linker: str) -> None:
    op = WaitInPerform()
    x = ot.vector("x")
    f = opweave.function([x], op(x) + 1.0, mode=Mode(linker=linker))
    caller = threading.Thread(target=f, args=(np.zeros(2),), daemon=True)
    caller.start()
    try:
        assert op.entered.wait(CHILD_BOUND)  # the other thread is inside f's call

        def body() -> None:
            np.testing.assert_array_equal(f(np.arange(3.0)), np.arange(3.0) * 2.0 + 1.0)
            compile_and_call(linker)

        assert in_child(body) == "ok"
    finally:
        op.release.set()
        caller.join(CHILD_BOUND)
    np.testing.assert_array_equal(f(np.arange(2.0)), np.arange(2.0) * 2.0 + 1.0)


class SlowArray:
    """An argument whose conversion to an array (inside the call, where the ``c`` linker
    converts arguments) waits, in the process that made it, until ``release`` is set."""

    def __init__(self) -> None:
        self.parent = os.getpid()
        self.entered = threading.Event()
        self.release = threading.Event()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if os.getpid() == self.parent:
            self.entered.set()
            self.release.wait(CHILD_BOUND)
        return np.zeros(3)


def test_child_forked_during_a_c_call_in_another_thread_calls_the_function() -> None:
    x = ot.vector("x")
    f = opweave.function([x], x * 2.0 + 1.0, mode=Mode(linker="c"))
    slow = SlowArray()
    caller = threading.Thread(target=f, args=(slow,), daemon=True)
    caller.start()
    try:
        assert slow.entered.wait(CHILD_BOUND)  # the other thread is inside f's call

        def body() -> None:
            np.testing.assert_array_equal(f(np.arange(3.0)), np.arange(3.0) * 2.0 + 1.0)

        assert in_child(body, bound=5.0) == "ok"
    finally:
        slow.release.set()
        caller.join(CHILD_BOUND)


@pytest.mark.parametrize("linker", PERFORM_LINKERS)
def test_child_forked_during_an_update_of_shared_state_can_update_it(linker: str) -> None:
    op = WaitInPerform()
    count = opweave.shared(np.zeros(2), name="count")
    mode = Mode(linker=linker)
    slow = opweave.function([], [], updates=[(count, op(count) + 1.0)], mode=mode)
    fast = opweave.function([], [], updates=[(count, count + 1.0)], mode=mode)
    caller = threading.Thread(target=slow, daemon=True)
    caller.start()
    try:
        assert op.entered.wait(CHILD_BOUND)

        def body() -> None:
            fast()
            np.testing.assert_array_equal(count.get_value(), np.ones(2))
            count.set_value(np.full(2, 5.0))
            fast()
            np.testing.assert_array_equal(count.get_value(), np.full(2, 6.0))

        assert in_child(body) == "ok"
    finally:
        op.release.set()
        caller.join(CHILD_BOUND)
    np.testing.assert_array_equal(count.get_value(), np.ones(2))


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads often, so that the fork lands inside the other threads' calls."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


@pytest.mark.usefixtures("fast_switching")
def test_children_forked_while_threads_call_and_compile() -> None:
    linker = "vm"
    x = ot.vector("x")
    f = opweave.function([x], (x * 2.0 + 1.0).sum(), mode=Mode(linker=linker))
    stop = threading.Event()
    errors: list[BaseException] = []

    def call() -> None:
        a = np.arange(100.0)
        try:
            while not stop.is_set():
                f(a)
        except BaseException as exc:
            errors.append(exc)

    def compile_() -> None:
        k = 0
        try:
            while not stop.is_set():
                k += 1
                z = ot.vector("z")
                opweave.function([z], z * float(k), mode=Mode(linker=linker))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=t, daemon=True) for t in (call, call, compile_)]
    for t in threads:
        t.start()

    def body() -> None:
        assert float(f(np.arange(3.0))) == float((np.arange(3.0) * 2.0 + 1.0).sum())
        compile_and_call(linker)

    try:
        outcomes = [in_child(body) for _ in range(3)]
    finally:
        stop.set()
        for t in threads:
            t.join(CHILD_BOUND)
    assert not errors
    assert outcomes == ["ok"] * 3


class PoolWork:
    """The function a forked pool's workers call (they inherit it: nothing is pickled)."""

    function: Any = None

    @classmethod
    def call(cls, value: float) -> float:
        return float(cls.function(np.full(3, value)))


def test_multiprocessing_fork_workers_call_a_function_other_threads_call() -> None:
    op = WaitInPerform()
    x = ot.vector("x")
    f = opweave.function([x], op(x).sum(), mode=Mode(linker="vm"))
    caller = threading.Thread(target=f, args=(np.zeros(3),), daemon=True)
    caller.start()
    PoolWork.function = f
    try:
        assert op.entered.wait(CHILD_BOUND)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            pending = pool.map_async(PoolWork.call, [1.0, 2.0])
            assert pending.get(CHILD_BOUND) == [6.0, 12.0]
    finally:
        PoolWork.function = None
        op.release.set()
        caller.join(CHILD_BOUND)


def test_a_fork_waits_for_another_thread_importing_a_tables_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child could not finish an import another thread had begun: a fork waits until
    the implementation table being loaded (its modules imported) is loaded."""
    entered = threading.Event()
    release = threading.Event()
    holder = types.ModuleType(f"_opweave_fork_hold_{uuid.uuid4().hex}")
    holder.hold = lambda: (entered.set(), release.wait(CHILD_BOUND))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, holder.__name__, holder)
    name = f"_opweave_fork_table_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(
        f"import {holder.__name__}\n{holder.__name__}.hold()\nENTRIES = {{int: 'an entry'}}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    table = ImplementationTable("test", lambda: importlib.import_module(name).ENTRIES)
    loader = threading.Thread(target=table.lookup, args=(int,), daemon=True)
    loader.start()
    outcome: list[str] = []

    def body() -> None:
        assert table.lookup(bool) == "an entry"

    forker = threading.Thread(target=lambda: outcome.append(in_child(body)), daemon=True)
    try:
        assert entered.wait(CHILD_BOUND)  # the other thread is importing the table's module
        forker.start()
        forker.join(0.5)  # a fork now would leave that import half done in the child
    finally:
        release.set()
        loader.join(CHILD_BOUND)
        forker.join(2 * CHILD_BOUND)
    module = sys.modules.pop(name, None)
    assert outcome == ["ok"]
    assert module is not None and module.ENTRIES == {int: "an entry"}


def test_child_forked_during_another_threads_compile_gets_the_collector_back() -> None:
    before = gc.get_threshold()
    inside = threading.Event()
    release = threading.Event()

    def compile_like() -> None:
        with fewer_collections():
            inside.set()
            release.wait(CHILD_BOUND)

    worker = threading.Thread(target=compile_like, daemon=True)
    worker.start()
    try:
        assert inside.wait(CHILD_BOUND)
        assert gc.get_threshold() != before

        def body() -> None:
            assert gc.get_threshold() == before
            with fewer_collections():
                assert gc.get_threshold() != before
            assert gc.get_threshold() == before

        assert in_child(body) == "ok"
    finally:
        release.set()
        worker.join(CHILD_BOUND)
    assert gc.get_threshold() == before


def test_child_forked_while_another_thread_reports_progress_can_report() -> None:
    silent = current_progress()  # outside a compile: the reporter every thread shares
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with silent._lock:
            held.set()
            release.wait(CHILD_BOUND)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert held.wait(CHILD_BOUND)

        def body() -> None:
            with current_progress().steps("counting", 2) as steps:
                steps.advance(2)

        assert in_child(body) == "ok"
    finally:
        release.set()
        holder.join(CHILD_BOUND)
