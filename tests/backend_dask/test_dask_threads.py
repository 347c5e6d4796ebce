"""Threads inside the dask linker's tasks: BLAS and OpenMP limited, restored after."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pytest

dask = pytest.importorskip("dask")
threadpoolctl = pytest.importorskip("threadpoolctl")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.graph.basic import Apply  # noqa: E402
from opweave.graph.op import Op  # noqa: E402
from opweave.link.threads import usable_cpus  # noqa: E402
from opweave_dask import threads  # noqa: E402
from opweave_dask.threads import blas_for_tasks, dask_worker_threads, task_threads  # noqa: E402


def blas_counts() -> list[int]:
    return [
        info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    ]


class RecordBlasThreads(Op):
    """``x`` as it is; records the BLAS libraries' threads where its ``perform`` runs (an
    Op without a chunk-wise form: one Dask task)."""

    __props__ = ()
    seen: ClassVar[list[list[int]]] = []

    def make_node(self, x: Any) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[Any], out: Any) -> None:
        RecordBlasThreads.seen.append(blas_counts())
        out[0][0] = np.array(inputs[0], copy=True)


@pytest.fixture
def blas_before() -> list[int]:
    counts = blas_counts()
    if not counts:
        pytest.skip("NumPy loaded no BLAS library that threadpoolctl knows")
    return counts


def test_task_threads_share_the_usable_cpus() -> None:
    assert task_threads(3) == 3
    with dask.config.set(scheduler="sync"):
        assert dask_worker_threads() == 1
        assert task_threads(0) == usable_cpus()
    with dask.config.set(scheduler="threads", num_workers=usable_cpus()):
        assert task_threads(0) == 1
    with dask.config.set(scheduler="threads", num_workers=1):
        assert task_threads(0) == usable_cpus()


def test_blas_limits_hold_while_any_run_holds_them(blas_before: list[int]) -> None:
    """Runs nest, also across threads: the limits end with the last run."""
    seen: list[list[int]] = []

    def other() -> None:
        with blas_for_tasks():
            seen.append(blas_counts())

    with dask.config.set(scheduler="threads", num_workers=usable_cpus()):
        with blas_for_tasks():
            assert set(blas_counts()) == {1}
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
            assert seen == [[1] * len(blas_before)]
            assert set(blas_counts()) == {1}  # the other run ended, this one holds
        assert blas_counts() == blas_before


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_tasks_run_with_the_task_blas_threads(blas_before: list[int], scheduler: str) -> None:
    x = ot.dvector("x")
    out = RecordBlasThreads()(x * 2.0)
    with opweave.config.change_flags(dask__compute=True):
        f = opweave.function([x], out, mode=opweave.Mode(linker="dask"))
    RecordBlasThreads.seen.clear()
    with dask.config.set(scheduler=scheduler, num_workers=usable_cpus()):
        want = [min(n, task_threads(0)) for n in blas_before]
        with opweave.config.change_flags(dask__compute=True):
            np.testing.assert_array_equal(f(np.arange(4.0)), np.arange(4.0) * 2)
    assert RecordBlasThreads.seen == [want]
    assert blas_counts() == blas_before  # given back after the computation


def test_lazy_outputs_computed_in_blas_for_tasks(blas_before: list[int]) -> None:
    x = ot.dvector("x")
    f = opweave.function([x], RecordBlasThreads()(x), mode=opweave.Mode(linker="dask"))
    RecordBlasThreads.seen.clear()
    lazy = f(np.arange(3.0))
    with dask.config.set(scheduler="threads", num_workers=usable_cpus()), blas_for_tasks():
        np.testing.assert_array_equal(lazy.compute(), np.arange(3.0))
    assert RecordBlasThreads.seen == [[1] * len(blas_before)]
    assert blas_counts() == blas_before


def test_an_explicit_flag_is_the_task_threads(blas_before: list[int]) -> None:
    with (
        opweave.config.change_flags(blas__threads=1),
        dask.config.set(scheduler="sync"),
        blas_for_tasks(),
    ):
        assert set(blas_counts()) == {1}
    assert blas_counts() == blas_before


class FakeLib:
    """A library as threadpoolctl controls it, recording the limits set."""

    def __init__(self, user_api: str, layer: str, calls: list[tuple[str, int]]) -> None:
        self.user_api = user_api
        self.threading_layer = layer
        self.num_threads = 8
        self.calls = calls

    def set_num_threads(self, n: int) -> None:
        self.calls.append((self.user_api, n))


def test_a_task_thread_limits_its_own_openmp_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenMP, and a BLAS library on OpenMP, have per-thread limits: each task thread sets
    its own, once per pair of flags; a BLAS library on pthreads is left to
    ``blas_for_tasks``."""
    calls: list[tuple[str, int]] = []
    libs = [
        FakeLib("openmp", "openmp", calls),
        FakeLib("blas", "openmp", calls),
        FakeLib("blas", "pthreads", calls),
    ]

    class FakeController:
        lib_controllers = libs

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", FakeController)
    state = threading.local()
    monkeypatch.setattr(threads, "_thread_state", lambda: state)
    with dask.config.set(scheduler="threads", num_workers=usable_cpus()):
        threads.limit_task_thread()
        threads.limit_task_thread()
        assert calls == [("openmp", 1), ("blas", 1)]
        with opweave.config.change_flags(openmp__threads=2, blas__threads=3):
            threads.limit_task_thread()
        assert calls[2:] == [("openmp", 2), ("blas", 3)]


def test_a_task_thread_without_openmp_looks_again_after_imports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looks: list[int] = []

    class FakeController:
        def __init__(self) -> None:
            looks.append(1)
            self.lib_controllers: list[Any] = []

    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", FakeController)
    state = threading.local()
    monkeypatch.setattr(threads, "_thread_state", lambda: state)
    threads.limit_task_thread()
    threads.limit_task_thread()
    assert len(looks) == 1
    monkeypatch.setitem(sys.modules, "opweave_test_new_module", sys)
    threads.limit_task_thread()
    assert len(looks) == 2
