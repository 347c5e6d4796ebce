"""BLAS threads that follow the machine's load: the rule, and the shared state a compile
fills for the backends."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.link import threads  # noqa: E402
from opweave.link.blas_load import LOADAVG, BlasLoad, blas_load, threads_for_load  # noqa: E402

VM = opweave.Mode(linker="vm")


@pytest.mark.parametrize(
    ("limit", "running", "current", "usable", "online", "want"),
    [
        (2, 1, 2, 2, 2, 2),  # quiet: only the caller runs
        (2, 2, 2, 2, 2, 2),  # quiet: the caller and its BLAS worker
        (2, 3, 2, 2, 2, 1),  # one other process
        (2, 4, 2, 2, 2, 1),  # two busy processes on two CPUs
        (2, 3, 1, 2, 2, 1),  # still two others once down to one thread
        (2, 1, 1, 2, 2, 2),  # they are gone: back to the limit
        (4, 3, 1, 4, 4, 2),  # two others of four CPUs leave two
        (2, 60, 2, 2, 64, 1),  # a big shared host: its load spread over every CPU
        (2, 12, 2, 2, 64, 2),  # ... and a light one
        (8, 1, 1, 16, 16, 8),  # never above the limit
        (1, 100, 1, 1, 1, 1),  # never below one
    ],
)
def test_the_rule(
    limit: int, running: int, current: int, usable: int, online: int, want: int
) -> None:
    assert threads_for_load(limit, running, current, usable, online) == want


def blas_counts() -> dict[str, int]:
    return {
        info["filepath"]: info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    }


@pytest.fixture
def restore_blas() -> Iterator[dict[str, int]]:
    before = blas_counts()
    if not before:
        pytest.skip("NumPy loaded no BLAS library that threadpoolctl knows")
    yield before
    controller = threadpoolctl.ThreadpoolController().select(user_api="blas")
    for lib in controller.lib_controllers:
        if lib.filepath in before:
            lib.set_num_threads(before[lib.filepath])
    threads.process_blas_threads.cache_clear()
    blas_load().enabled = 0


def compile_dot(**flags: object) -> None:
    x = ot.dmatrix("x")
    with opweave.config.change_flags(**{"blas__follow_load": True, **flags}):
        opweave.function([x], ot.dot(x, x), mode=VM)


def test_the_state_has_the_c_layout() -> None:
    names = [name for name, _ in BlasLoad._fields_]
    assert names[:7] == [
        "enabled",
        "limit",
        "current",
        "usable",
        "online",
        "raise_votes",
        "n_setters",
    ]
    assert blas_load() is blas_load()
    assert blas_load().path.decode() == LOADAVG


def test_auto_follows_the_load_and_a_number_does_not(restore_blas: dict[str, int]) -> None:
    compile_dot(blas__threads=2)
    state = blas_load()
    assert state.enabled == 0  # an explicit number is kept as it is
    compile_dot(blas__threads="auto", blas__follow_load=False)
    assert state.enabled == 0  # off by default: reproducible results
    compile_dot(blas__threads="auto")
    openblas = [
        info for info in threadpoolctl.threadpool_info() if info["internal_api"] == "openblas"
    ]
    limit = min(blas_counts().values())
    if not openblas or limit < 2 or not state.path:
        assert state.enabled == 0
        return
    assert state.enabled == 1
    assert state.limit == state.current == limit
    assert state.n_setters == len(openblas)
    assert all(state.setters[k] and state.getters[k] for k in range(state.n_setters))


def test_threads_the_load_took_away_are_given_back_by_the_next_compile(
    restore_blas: dict[str, int],
) -> None:
    compile_dot(blas__threads="auto")
    state = blas_load()
    limit = state.limit
    if not state.enabled:
        pytest.skip("the load is not followed here (one CPU, or no OpenBLAS)")
    # What a product does on a busy machine: fewer threads, recorded in the state.
    for lib in threadpoolctl.ThreadpoolController().select(internal_api="openblas").lib_controllers:
        lib.set_num_threads(1)
    state.current = 1
    threads.process_blas_threads().apply(0, follow_load=True)
    assert set(blas_counts().values()) == {limit}  # they were opweave's: the limit again
    assert state.current == limit
    # Threads someone else set are theirs: kept, and the load no longer followed.
    for lib in threadpoolctl.ThreadpoolController().select(internal_api="openblas").lib_controllers:
        lib.set_num_threads(1)
    threads.process_blas_threads().apply(0, follow_load=True)
    assert set(blas_counts().values()) == {1}
    assert state.enabled == 0


def test_values_agree_whatever_the_threads(restore_blas: dict[str, int]) -> None:
    """Why following the load is off by default: the last bits may change, no more."""
    x, y = ot.dmatrices("x", "y")
    f = opweave.function([x, y], ot.dot(x, y), mode=VM)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(300, 200)), rng.normal(size=(200, 250))
    outs = []
    for n in (1, 2):
        with threadpoolctl.threadpool_limits(limits=n, user_api="blas"):
            outs.append(f(a, b))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-13, atol=1e-13)
