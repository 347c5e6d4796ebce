"""A compiled function is safe to call from many threads at once, on every linker."""

from __future__ import annotations

import numpy as np
import pytest
from thread_runs import run_threads

import opweave
import opweave.tensor as ot
from opweave.compile import Mode

LINKERS = ("py", "vm", "c", "cvm")
N_THREADS = 8
N_CALLS = 200

pytestmark = pytest.mark.usefixtures("fast_switching")


@pytest.mark.parametrize("linker", LINKERS)
def test_one_function_called_from_many_threads_on_scalars(linker: str) -> None:
    x, y, z = ot.dscalar("x"), ot.dscalar("y"), ot.dscalar("z")
    f = opweave.function([x, y, z], (x + y) * z, mode=Mode(linker=linker))

    def work(k: int) -> list[tuple[float, float]]:
        wrong = []
        for i in range(N_CALLS):
            a, b, c = float(k), float(i), float(k + i + 1)
            got = float(f(a, b, c))
            if got != (a + b) * c:
                wrong.append((got, (a + b) * c))
        return wrong

    assert run_threads(N_THREADS, work) == [[]] * N_THREADS


@pytest.mark.parametrize("linker", LINKERS)
def test_one_function_called_from_many_threads_on_arrays(linker: str) -> None:
    a, b = ot.matrix("a"), ot.vector("b")
    out = ot.exp(a) * b + a.sum(axis=0)
    f = opweave.function([a, b], [out, out.sum()], mode=Mode(linker=linker))

    def work(k: int) -> int:
        rng = np.random.default_rng(k)
        wrong = 0
        for i in range(N_CALLS):
            av = rng.standard_normal((3 + k % 3, 4))
            bv = np.full(4, float(i))
            got, total = f(av, bv)
            want = np.exp(av) * bv + av.sum(axis=0)
            if not (np.allclose(got, want) and np.isclose(total, want.sum())):
                wrong += 1
        return wrong

    assert run_threads(N_THREADS, work) == [0] * N_THREADS


@pytest.mark.parametrize("linker", LINKERS)
def test_keyword_and_positional_calls_from_threads_with_defaults(linker: str) -> None:
    """The generic path (keywords, omitted inputs with defaults) and the fast path mix."""
    x, y = ot.dscalar("x"), ot.dscalar("y")
    f = opweave.function([x, opweave.In(y, value=10.0)], x * y, mode=Mode(linker=linker))

    def work(k: int) -> int:
        wrong = 0
        for i in range(N_CALLS):
            v = float(k * N_CALLS + i)
            if i % 3 == 0:
                got, want = f(x=v), v * 10.0
            elif i % 3 == 1:
                got, want = f(v), v * 10.0
            else:
                got, want = f(v, 2.0), v * 2.0
            wrong += float(got) != want
        return wrong

    assert run_threads(N_THREADS, work) == [0] * N_THREADS


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_updates_from_threads_are_not_lost(linker: str) -> None:
    count = opweave.shared(np.float64(0.0), name="count")
    step = ot.dscalar("step")
    f = opweave.function([step], count, updates=[(count, count + step)], mode=Mode(linker=linker))

    def work(k: int) -> None:
        for _ in range(N_CALLS):
            f(1)  # an int: goes through the Type's Python filter on every linker

    run_threads(N_THREADS, work)
    assert float(count.get_value()) == N_THREADS * N_CALLS


@pytest.mark.parametrize("linker", LINKERS)
def test_compiling_from_threads(linker: str) -> None:
    def work(k: int) -> float:
        x = ot.vector("x")
        f = opweave.function([x], (x * float(k % 3) + 1.0).sum(), mode=Mode(linker=linker))
        return float(f(np.arange(4.0)))

    results = run_threads(N_THREADS, work)
    assert results == [float((np.arange(4.0) * (k % 3) + 1.0).sum()) for k in range(N_THREADS)]
