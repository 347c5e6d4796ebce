"""Several compiled functions sharing state, called from many threads, lose no update.

Calls of one function run one at a time; functions that write the same shared variable
(an update, or a random generator's state) must also run one at a time, whichever
function each thread calls.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from thread_runs import run_threads

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.random.utils import RandomStream

LINKERS = ("py", "vm", "c", "cvm")
#: The random Ops have no C code, so the whole-graph ``c`` linker refuses them.
RANDOM_LINKERS = ("py", "vm", "cvm")
N_THREADS = 8
N_CALLS = 200  # per thread: 1600 calls in all


pytestmark = pytest.mark.usefixtures("fast_switching")


@pytest.mark.parametrize("linker", LINKERS)
def test_two_functions_incrementing_one_counter_lose_no_update(linker: str) -> None:
    count = opweave.shared(np.float64(0.0), name="count")
    step = ot.dscalar("step")
    mode = Mode(linker=linker)
    add_one = opweave.function([], [], updates=[(count, count + 1.0)], mode=mode)
    add_one_too = opweave.function([], [], updates=[(count, count + 1.0)], mode=mode)
    add_step = opweave.function([step], count, updates=[(count, count + step)], mode=mode)
    functions = (add_one, add_one_too, add_step, add_one, add_one_too, add_step) + (add_one,) * 2

    def work(k: int) -> None:
        fn = functions[k]
        args = (1,) if fn is add_step else ()  # an int: the Type's Python filter runs
        for _ in range(N_CALLS):
            fn(*args)

    run_threads(N_THREADS, work)
    assert float(count.get_value()) == N_THREADS * N_CALLS


@pytest.mark.parametrize("linker", ("vm", "c"))
def test_a_clone_of_the_counter_shares_its_updates(linker: str) -> None:
    count = opweave.shared(np.zeros(3), name="count")
    alias = count.clone()  # the same container: the same state
    mode = Mode(linker=linker)
    up = opweave.function([], [], updates=[(count, count + 1.0)], mode=mode)
    up_alias = opweave.function([], [], updates=[(alias, alias + 2.0)], mode=mode)
    functions = (up, up_alias)

    def work(k: int) -> None:
        for _ in range(N_CALLS):
            functions[k % 2]()

    run_threads(N_THREADS, work)
    half = N_THREADS // 2 * N_CALLS
    np.testing.assert_array_equal(count.get_value(), np.full(3, half * 1.0 + half * 2.0))


@pytest.mark.parametrize("linker", ("py", "c"))
def test_functions_updating_two_counters_in_opposite_orders_do_not_deadlock(
    linker: str,
) -> None:
    a = opweave.shared(np.float64(0.0), name="a")
    b = opweave.shared(np.float64(0.0), name="b")
    mode = Mode(linker=linker)
    ab = opweave.function([], [], updates=[(a, a + 1.0), (b, b + 1.0)], mode=mode)
    ba = opweave.function([], [], updates=[(b, b + 10.0), (a, a + 10.0)], mode=mode)
    only_b = opweave.function([], [], updates=[(b, b + 100.0)], mode=mode)
    functions = (ab, ba, only_b)
    calls = [0, 0, 0]

    def work(k: int) -> None:
        for _ in range(N_CALLS // 2):
            functions[k % 3]()

    run_threads(N_THREADS, work)
    for k in range(N_THREADS):
        calls[k % 3] += N_CALLS // 2
    assert float(a.get_value()) == calls[0] * 1.0 + calls[1] * 10.0
    assert float(b.get_value()) == calls[0] * 1.0 + calls[1] * 10.0 + calls[2] * 100.0


@pytest.mark.parametrize("linker", RANDOM_LINKERS)
def test_two_functions_drawing_from_one_stream_never_repeat_a_draw(linker: str) -> None:
    seed = 20240
    srng = RandomStream(seed)
    x = srng.uniform(0.0, 1.0, size=())
    mode = Mode(linker=linker)
    draw = opweave.function([], x, mode=mode)
    draw_twice = opweave.function([], [x, 2.0 * x], mode=mode)

    def work(k: int) -> list[float]:
        if k % 2:
            return [float(draw()) for _ in range(N_CALLS)]
        return [float(draw_twice()[0]) for _ in range(N_CALLS)]

    draws = [v for chunk in run_threads(N_THREADS, work) for v in chunk]
    assert len(set(draws)) == len(draws) == N_THREADS * N_CALLS
    # Every call took the next draws of the one generator the stream made.
    generator = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    assert sorted(draws) == sorted(generator.uniform(0.0, 1.0, size=len(draws)).tolist())


@pytest.mark.parametrize("linker", ("vm",))
def test_two_functions_drawing_arrays_from_one_generator_never_repeat(linker: str) -> None:
    srng = RandomStream(5)
    x = srng.normal(0.0, 1.0, size=(4,))
    mode = Mode(linker=linker)
    plain = opweave.function([], x, mode=mode)
    summed = opweave.function([], [x, x.sum()], mode=mode)

    def work(k: int) -> list[tuple[float, ...]]:
        if k % 2:
            return [tuple(plain()) for _ in range(N_CALLS // 4)]
        return [tuple(summed()[0]) for _ in range(N_CALLS // 4)]

    rows = [row for chunk in run_threads(N_THREADS, work) for row in chunk]
    assert len(set(rows)) == len(rows)
    generator = np.random.default_rng(np.random.SeedSequence(5).spawn(1)[0])
    expected = [tuple(generator.normal(0.0, 1.0, size=4)) for _ in rows]
    assert sorted(rows) == sorted(expected)


def test_a_function_without_updates_reads_while_the_state_is_held() -> None:
    """Functions that write no shared variable take no lock of the shared state."""
    w = opweave.shared(np.arange(3.0), name="w")
    read = opweave.function([], w * 2.0, mode=Mode(linker="vm"))
    update = opweave.function([], [], updates=[(w, w + 1.0)], mode=Mode(linker="vm"))
    held = threading.Event()
    done = threading.Event()

    def hold_state() -> None:
        with w.container.state_lock:  # type: ignore[attr-defined]
            held.set()
            done.wait(30)

    holder = threading.Thread(target=hold_state, daemon=True)
    holder.start()
    held.wait(30)
    try:
        np.testing.assert_array_equal(read(), np.arange(3.0) * 2.0)
        blocked = threading.Thread(target=update, daemon=True)
        blocked.start()
        blocked.join(0.2)
        assert blocked.is_alive(), "an updating function ran while its state was held"
    finally:
        done.set()
    holder.join(30)
    blocked.join(30)
    np.testing.assert_array_equal(w.get_value(), np.arange(3.0) + 1.0)
