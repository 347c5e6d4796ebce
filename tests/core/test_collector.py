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
