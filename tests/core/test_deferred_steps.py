"""Steps a compile leaves for the time it waits on a compiler (``opweave.link.deferred``),
and the rewrite cache's store, which is such a step."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import FunctionMaker, In, Mode, Out
from opweave.link.deferred import defer, has_deferred, run_deferred, waiting_room


def test_outside_a_block_a_step_runs_at_once() -> None:
    done: list[str] = []
    defer(lambda: done.append("a"))
    assert done == ["a"]
    run_deferred()  # nothing kept
    assert done == ["a"]


def test_steps_wait_for_run_deferred_then_the_end_of_the_block() -> None:
    done: list[str] = []
    with waiting_room():
        assert not has_deferred()
        defer(lambda: done.append("a"))
        defer(lambda: done.append("b"))
        assert done == [] and has_deferred()
        run_deferred()
        assert done == ["a", "b"] and not has_deferred()
        defer(lambda: done.append("c"))
        with waiting_room():  # nested: the outer block keeps the step
            defer(lambda: done.append("d"))
        assert done == ["a", "b"]
    assert done == ["a", "b", "c", "d"]


def test_steps_still_run_when_the_block_raises() -> None:
    done: list[str] = []
    with pytest.raises(RuntimeError, match="link failed"):
        with waiting_room():
            defer(lambda: done.append("kept"))
            raise RuntimeError("link failed")
    assert done == ["kept"]


def test_each_thread_keeps_its_own_steps() -> None:
    done: list[str] = []
    seen_by_other: list[list[str]] = []

    def other() -> None:
        run_deferred()  # not this thread's steps
        seen_by_other.append(list(done))

    with waiting_room():
        defer(lambda: done.append("main"))
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen_by_other == [[]]
    assert done == ["main"]


@pytest.fixture
def own_compiledir(tmp_path: Path) -> Iterator[Path]:
    with opweave.config.change_flags(compiledir=str(tmp_path), cache_rewrites=True):
        yield tmp_path


def _kept(compiledir: Path) -> list[Path]:
    folder = compiledir / "rewritten"
    return sorted(folder.glob("*.pickle")) if folder.exists() else []


def _maker(linker: str, outer: Any = ot.arccosh) -> FunctionMaker:
    # Node kinds no other test compiles, so the C module is built here, not found loaded.
    x = ot.fvector("x")
    e = outer(1.5 + x * x) - ot.max(x) * ot.log1p(x * x)
    return FunctionMaker([In(x)], [Out(e)], mode=Mode(linker=linker))


@pytest.mark.parametrize(("jobs", "outer"), [(1, ot.arcsinh), (2, ot.arctanh)])
def test_the_rewritten_graph_is_kept_while_the_link_waits(
    own_compiledir: Path, jobs: int, outer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rewriting leaves the store to ``create``; with two build jobs it runs while the C
    compiler runs (before the modules are loaded), with one at the end of the link."""
    import opweave_c.module as module

    order: list[str] = []
    real_load = module.load_module

    def load(*args: Any) -> Any:
        order.append("loaded" if _kept(own_compiledir) else "loaded before the store")
        return real_load(*args)

    monkeypatch.setattr(module, "load_module", load)
    with opweave.config.change_flags(c__build_jobs=jobs):
        maker = _maker("cvm", outer)
        assert _kept(own_compiledir) == []
        maker.create()
    assert len(_kept(own_compiledir)) == 1
    assert order and set(order) == ({"loaded"} if jobs == 2 else {"loaded before the store"})


def test_a_failed_link_still_keeps_the_rewritten_graph(
    own_compiledir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the linker broke")

    for attempt in range(2):  # the same lines build both (creation traces are in the key)
        maker = _maker("vm")
        if attempt == 0:
            monkeypatch.setattr(maker.linker, "make_all", broken)
            with pytest.raises(RuntimeError, match="the linker broke"):
                maker.create()
            assert len(_kept(own_compiledir)) == 1
    assert maker.rewrites_reused
