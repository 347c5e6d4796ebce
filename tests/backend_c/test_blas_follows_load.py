"""The C backend's products follow the load with ``blas__follow_load``: fewer OpenBLAS
threads while other threads want the CPUs, the limit again after two quiet looks, and
nothing changed where someone else set the threads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.link import threads  # noqa: E402
from opweave.link.blas_load import LOADAVG, BlasLoad, blas_load  # noqa: E402


def openblas_counts() -> set[int]:
    return {
        info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["internal_api"] == "openblas"
    }


@pytest.fixture
def followed(tmp_path: Path) -> Iterator[tuple[BlasLoad, Path, object]]:
    """A ``c`` function of a product compiled with the load followed, reading a load file
    the test writes, at every product; the threads and the state given back after."""
    before = threadpoolctl.threadpool_info()
    x, y = ot.dmatrices("x", "y")
    with opweave.config.change_flags(blas__threads="auto", blas__follow_load=True):
        f = opweave.function([x, y], ot.dot(x, y), mode=opweave.Mode(linker="c"))
    state = blas_load()
    if not state.enabled:
        pytest.skip("the load cannot be followed here (one CPU, or no OpenBLAS)")
    loadavg = tmp_path / "loadavg"
    state.path = str(loadavg).encode()
    state.interval = 0.0
    state.usable = state.online = state.limit
    yield state, loadavg, f
    state.path = LOADAVG.encode()
    state.interval = 0.05
    state.enabled = 0
    controller = threadpoolctl.ThreadpoolController()
    for info, lib in zip(before, controller.lib_controllers, strict=False):
        if info["filepath"] == lib.filepath:
            lib.set_num_threads(info["num_threads"])
    threads.process_blas_threads.cache_clear()


def product(f: object) -> None:
    a = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(f(a, a.T), a @ a.T)  # type: ignore[operator]


def test_fewer_threads_at_once_and_more_after_two_quiet_looks(
    followed: tuple[BlasLoad, Path, object],
) -> None:
    state, loadavg, f = followed
    limit = state.limit
    loadavg.write_text(f"3.10 2.00 1.50 {limit + 2}/612 4242\n")  # two others run
    product(f)
    assert state.current == 1 and openblas_counts() == {1}
    loadavg.write_text("0.10 0.20 0.30 1/612 4242\n")  # quiet again
    product(f)
    assert state.current == 1  # one look is not enough
    product(f)
    assert state.current == limit and openblas_counts() == {limit}


def test_nothing_is_read_between_looks(followed: tuple[BlasLoad, Path, object]) -> None:
    state, loadavg, f = followed
    state.interval = 3600.0
    state.last = -1e9  # long ago, even on a machine up for less than the interval
    loadavg.write_text(f"3.10 2.00 1.50 {state.limit + 2}/612 4242\n")
    product(f)  # the first look (the last one was long ago)
    assert state.current == 1
    loadavg.write_text("0.10 0.20 0.30 1/612 4242\n")
    product(f)
    product(f)
    assert state.current == 1  # within the interval: no look


def test_threads_someone_else_set_are_left_alone(followed: tuple[BlasLoad, Path, object]) -> None:
    state, loadavg, f = followed
    loadavg.write_text(f"3.10 2.00 1.50 {state.limit + 2}/612 4242\n")
    with threadpoolctl.threadpool_limits(limits=state.limit + 1, user_api="blas"):
        product(f)
        assert state.enabled == 0
        assert openblas_counts() == {state.limit + 1}


@pytest.mark.parametrize("text", ["", "garbage", "1.0 2.0 3.0", "1 2 3 x/y 5"])
def test_an_unreadable_load_changes_nothing(
    followed: tuple[BlasLoad, Path, object], text: str
) -> None:
    state, loadavg, f = followed
    loadavg.write_text(text)
    product(f)
    assert state.current == state.limit and state.enabled == 1


def test_a_missing_load_file_changes_nothing(followed: tuple[BlasLoad, Path, object]) -> None:
    state, _, f = followed
    product(f)  # the file was never written
    assert state.current == state.limit and state.enabled == 1
