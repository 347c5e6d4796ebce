"""The cyclic collector's thresholds during a compile (opweave.compile.collector)."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.collector import COMPILE_THRESHOLD, fewer_collections


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_the_threshold_is_raised_inside_and_restored_after(thresholds) -> None:
    with fewer_collections():
        assert gc.get_threshold() == (COMPILE_THRESHOLD, 10, 10)
        with fewer_collections():  # nested: still raised
            assert gc.get_threshold()[0] == COMPILE_THRESHOLD
        assert gc.get_threshold()[0] == COMPILE_THRESHOLD
    assert gc.get_threshold() == (700, 10, 10)


def test_the_thresholds_come_back_when_the_block_raises(thresholds) -> None:
    with pytest.raises(RuntimeError, match="boom"), fewer_collections():
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_higher_user_threshold_is_kept(thresholds) -> None:
    gc.set_threshold(COMPILE_THRESHOLD * 2, 5, 5)
    with fewer_collections():
        assert gc.get_threshold() == (COMPILE_THRESHOLD * 2, 5, 5)
    assert gc.get_threshold() == (COMPILE_THRESHOLD * 2, 5, 5)


def test_overlapping_compiles_in_threads_restore_the_thresholds_once(thresholds) -> None:
    inside, release = threading.Barrier(3), threading.Event()
    seen = []

    def compile_in_thread() -> None:
        with fewer_collections():
            inside.wait()
            release.wait()
            seen.append(gc.get_threshold()[0])

    workers = [threading.Thread(target=compile_in_thread) for _ in range(2)]
    for w in workers:
        w.start()
    inside.wait()
    assert gc.get_threshold()[0] == COMPILE_THRESHOLD
    release.set()
    for w in workers:
        w.join()
    assert seen == [COMPILE_THRESHOLD, COMPILE_THRESHOLD]
    assert gc.get_threshold() == (700, 10, 10)


def test_rewriting_and_linking_run_with_the_raised_threshold(thresholds, monkeypatch) -> None:
    from opweave.compile.maker import FunctionMaker

    x = ot.dvector("x")
    mode = opweave.Mode(linker="vm")
    linker_class = type(opweave.function([x], x + 1, mode=mode).maker.linker)
    seen: dict[str, int] = {}
    rewrite_query, make_all = FunctionMaker._rewrite_query, linker_class.make_all

    def query(self, *args, **kwargs):
        seen["rewriting"] = gc.get_threshold()[0]
        return rewrite_query(self, *args, **kwargs)

    def link(self, *args, **kwargs):
        seen["linking"] = gc.get_threshold()[0]
        return make_all(self, *args, **kwargs)

    monkeypatch.setattr(FunctionMaker, "_rewrite_query", query)
    monkeypatch.setattr(linker_class, "make_all", link)
    f = opweave.function([x], ot.exp(x) * 2, mode=mode)
    assert seen == {"rewriting": COMPILE_THRESHOLD, "linking": COMPILE_THRESHOLD}
    assert gc.get_threshold() == (700, 10, 10)
    np.testing.assert_allclose(f(np.zeros(2)), [2.0, 2.0])


class _Cycle:
    """An object in a reference cycle with itself (only the cyclic collector frees it)."""

    def __init__(self) -> None:
        self.me = self


def test_what_the_block_allocated_moves_to_the_oldest_generation(thresholds) -> None:
    gc.collect()
    with fewer_collections():
        kept = [[k] for k in range(5000)]  # more than the first threshold: young objects
        assert gc.get_count()[0] > 700
    # no young collection is due (it would have walked all of them), and none ran: the
    # lists sit in the oldest generation, where a full collection still sees them
    assert gc.get_count()[0] < 700
    assert gc.get_freeze_count() == 0
    del kept
    dead = _Cycle()
    with fewer_collections():
        del dead
        _ = [[k] for k in range(1000)]
    assert any(isinstance(o, _Cycle) for o in gc.get_objects(generation=2))
    assert gc.collect() > 0  # a full collection frees the cycle
    assert not any(isinstance(o, _Cycle) for o in gc.get_objects())


def test_objects_the_program_froze_stay_frozen(thresholds) -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with fewer_collections():
            _ = [[k] for k in range(5000)]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_a_disabled_collector_is_left_as_it_is(thresholds) -> None:
    gc.disable()
    try:
        with fewer_collections():
            _ = [[k] for k in range(5000)]
        assert not gc.isenabled()
        assert gc.get_count()[0] >= 5000
    finally:
        gc.enable()
