"""Tiered compilation (opweave.compile.tiered): a function runs on the Python kernels while
its linker links in the background, then switches to it between two calls."""

from __future__ import annotations

import os
import pickle
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import tiered
from opweave.compile.mode import Mode
from opweave.link.basic import Linker
from opweave.link.lookup import LinkerNotFoundError, resolve_linker
from opweave.link.progress import current as current_progress


@pytest.fixture(autouse=True)
def tiered_on() -> Iterator[None]:
    """The suite compiles untiered (tests/conftest.py); these tests are about tiering."""
    with opweave.config.change_flags(compile__tiered=True):
        yield


class GatedLinker(Linker):
    """The ``vm`` linker behind a gate: its link waits until ``release`` is set, then
    fails with ``error`` if given; it counts the calls its function runs."""

    name = "gated"
    links_slowly = True

    def __init__(
        self, release: threading.Event, error: Exception | None = None, allow_gc: Any = None
    ) -> None:
        super().__init__(allow_gc)
        self.release = release
        self.error = error
        self.calls = 0
        self.links: list[dict[str, Any]] = []

    def accept(self, fgraph: Any, no_recycling: Any = None, profile: Any = None) -> Linker:
        super().accept(fgraph, no_recycling, profile)
        self.inner = resolve_linker("vm")(allow_gc=self.allow_gc).accept(fgraph, no_recycling)
        return self

    def make_all(
        self,
        input_storage: Any = None,
        output_storage: Any = None,
        storage_map: Any = None,
    ) -> Any:
        self.release.wait(30)
        self.links.append(
            {
                "thread": threading.current_thread(),
                "progress": current_progress().enabled,
                "check_input": opweave.config.check_input,
            }
        )
        if self.error is not None:
            raise self.error
        fn, ins, outs, thunks, order = self.inner.make_all(
            input_storage, output_storage, storage_map
        )

        def run() -> None:
            self.calls += 1
            fn()

        return run, ins, outs, thunks, order


def _graph() -> tuple[list[Any], Any]:
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    return [x, y, z], ot.exp(x) * y + z


def _args() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.linspace(-2.0, 2.0, 7)
    return a, a * 3.0, a - 1.0


def _expected() -> np.ndarray:
    a, b, c = _args()
    expected: np.ndarray = np.exp(a) * b + c
    return expected


def _gated(error: Exception | None = None) -> tuple[Callable[[], Any], GatedLinker]:
    release = threading.Event()
    linker = GatedLinker(release, error)
    inputs, out = _graph()

    def compile_it() -> Any:
        return opweave.function(inputs, out, mode=Mode(linker=linker))

    return compile_it, linker


def _wait_link_end(f: Any) -> None:
    deadline = time.monotonic() + 30
    while f.compiling and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not f.compiling


def test_users_get_tiering_by_default(fresh_python: Callable[..., str], tmp_path: Any) -> None:
    assert opweave.config.param("compile__tiered").default is True
    # A user's process: no OPWEAVE_FLAGS, no config file (the suite's turns tiering off).
    env = {k: v for k, v in os.environ.items() if k != "OPWEAVE_FLAGS"}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    code = "import opweave; print(opweave.config.compile__tiered)"
    assert fresh_python(code, env=env, cwd=str(tmp_path)).strip() == "True"


def test_python_tier_runs_until_the_link_is_done() -> None:
    compile_it, linker = _gated()
    f = compile_it()
    assert f.tier == "vm"
    assert f.compiling
    assert f.maker.linker is linker
    np.testing.assert_allclose(f(*_args()), _expected())
    assert linker.calls == 0  # the call ran on the Python tier
    assert set(f.maker.node_impls.values()) == {"py"}
    linker.release.set()
    assert f.wait_compiled() is True
    assert not f.compiling
    assert f.tier == "gated"
    assert not f.compiling
    np.testing.assert_allclose(f(*_args()), _expected())
    assert linker.calls == 1
    assert linker.links[0]["thread"] is not threading.main_thread()


def test_the_switch_happens_at_the_next_call() -> None:
    compile_it, linker = _gated()
    f = compile_it()
    linker.release.set()
    _wait_link_end(f)
    assert f.tier == "vm"  # nothing switches between calls
    np.testing.assert_allclose(f(*_args()), _expected())
    assert f.tier == "gated"
    assert linker.calls == 1


def test_wait_compiled_times_out_while_linking() -> None:
    compile_it, linker = _gated()
    f = compile_it()
    assert f.wait_compiled(timeout=0.01) is False
    assert f.tier == "vm"
    linker.release.set()
    assert f.wait_compiled(timeout=30) is True


def test_a_link_done_within_the_grace_period_uses_no_python_tier() -> None:
    compile_it, linker = _gated()
    linker.release.set()
    f = compile_it()
    assert not f.compiling
    assert f.tier == "gated"
    assert f.wait_compiled() is True
    np.testing.assert_allclose(f(*_args()), _expected())
    assert linker.calls == 1


def test_flag_off_links_before_returning() -> None:
    compile_it, linker = _gated()
    timer = threading.Timer(0.1, linker.release.set)
    timer.start()
    with opweave.config.change_flags(compile__tiered=False):
        f = compile_it()
    assert f.tier == "gated"
    assert linker.links[0]["thread"] is threading.current_thread()


def test_a_profiled_function_is_not_tiered() -> None:
    release = threading.Event()
    linker = GatedLinker(release)
    inputs, out = _graph()
    timer = threading.Timer(0.1, release.set)
    timer.start()
    f = opweave.function(inputs, out, mode=Mode(linker=linker), profile=True)
    assert f.tier == "gated"
    f(*_args())
    assert f.profile.fct_callcount == 1


def test_a_background_failure_warns_once_and_stays_on_python() -> None:
    compile_it, linker = _gated(RuntimeError("no compiler today"))
    f = compile_it()
    linker.release.set()
    _wait_link_end(f)
    with pytest.warns(RuntimeWarning, match=r"'gated' linker failed.*no compiler today"):
        np.testing.assert_allclose(f(*_args()), _expected())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(f(*_args()), _expected())
    assert f.tier == "vm"
    with pytest.raises(RuntimeError, match="no compiler today"):
        f.wait_compiled()


def test_a_failure_within_the_grace_period_raises_at_compile_time() -> None:
    compile_it, linker = _gated(RuntimeError("bad C"))
    linker.release.set()
    with pytest.raises(RuntimeError, match="bad C"):
        compile_it()


def test_the_background_link_shows_no_progress() -> None:
    compile_it, linker = _gated()
    with opweave.config.change_flags(compile__progress_delay=0):
        f = compile_it()
    linker.release.set()
    f.wait_compiled()
    assert linker.links[0]["progress"] is False


def test_flags_changed_during_the_link_are_those_of_the_compile() -> None:
    compile_it, linker = _gated()
    with opweave.config.change_flags(check_input=False):
        f = compile_it()
    linker.release.set()  # the link now reads check_input=True: it is done again
    f.wait_compiled()
    assert [link["check_input"] for link in linker.links] == [True, False]
    assert linker.links[1]["thread"] is threading.current_thread()
    np.testing.assert_allclose(f(*_args()), _expected())
    assert linker.calls == 1


def test_calls_from_threads_across_the_switch() -> None:
    compile_it, linker = _gated()
    f = compile_it()
    errors: list[BaseException] = []
    expected = _expected()
    made = threading.Semaphore(0)
    deadline = time.monotonic() + 30

    def work() -> None:
        try:
            # Calls until the final tier has run some: across the switch.
            while linker.calls < 20 and time.monotonic() < deadline:
                np.testing.assert_allclose(f(*_args()), expected)
                made.release()
        except BaseException as exc:
            errors.append(exc)
            made.release()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for _ in range(8):  # calls on the Python tier first
        made.acquire()
    assert linker.calls == 0
    linker.release.set()
    for t in threads:
        t.join()
    assert errors == []
    assert linker.calls >= 20
    assert f.tier == "gated"


def test_a_linker_whose_values_differ_is_not_tiered() -> None:
    compile_it, linker = _gated()
    linker.python_tier_agrees = lambda fgraph: False  # type: ignore[attr-defined]
    timer = threading.Timer(0.1, linker.release.set)
    timer.start()
    f = compile_it()
    assert not f.compiling
    assert f.tier == "gated"
    assert linker.links[0]["thread"] is threading.current_thread()


def _cvm_usable() -> bool:
    try:
        resolve_linker("cvm")
    except LinkerNotFoundError:
        return False
    return True


EDGES = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 5e-324, -5e-324, 709.78, 709.79, 710.0, -745.1,
     -746.0, 1e308, -1e308, np.inf, -np.inf, np.nan, 3.0e-8, -20.5]
)  # fmt: skip


def _edge_args() -> list[np.ndarray]:
    x, y, z = np.meshgrid(EDGES, EDGES, EDGES, indexing="ij")
    return [x.ravel().copy(), y.ravel().copy(), z.ravel().copy()]


def _exact_graph() -> tuple[list[Any], Any]:
    """A fused graph of correctly rounded operations: the same bits in C and in NumPy."""
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    return [x, y, z], ot.sqrt(ot.abs(x)) * y + z / 3.0 - ot.maximum(x, y)


def _both_tiers(tmp_path: Any, args: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The exact graph on ``args``: on the Python tier (the first call on an empty compile
    directory), on the cvm tier after the switch, from an unpickled copy, and on ``vm``."""
    inputs, out = _exact_graph()
    with opweave.config.change_flags(compiledir=str(tmp_path), linker="cvm"):
        f = opweave.function(inputs, out)
        assert f.tier == "vm"  # a compiler runs in an empty compile directory
        with np.errstate(all="ignore"):
            first = f(*args).copy()
            clone = pickle.loads(pickle.dumps(f))
            assert f.wait_compiled() and clone.wait_compiled()
            assert f.tier == clone.tier == "cvm"
            assert set(f.maker.node_impls.values()) == {"c"}
            final = f(*args).copy()
            from_clone = clone(*args).copy()
            reference = opweave.function(inputs, out, mode=Mode(linker="vm"))(*args)
    return first, final, from_clone, reference


@pytest.mark.skipif(not _cvm_usable(), reason="the cvm linker is not usable here")
def test_an_exact_graph_agrees_bit_for_bit_across_tiers(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tiered, "GRACE_S", 0.0)
    first, final, from_clone, reference = _both_tiers(tmp_path, _edge_args())
    np.testing.assert_array_equal(first, reference)
    for got in (final, from_clone):
        np.testing.assert_array_equal(got, first)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(first))


@pytest.mark.skipif(not _cvm_usable(), reason="the cvm linker is not usable here")
def test_a_graph_calling_exp_waits_for_its_c(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C's exp (glibc's vector math, within 4 ulp) and NumPy's may differ in the last bits:
    the function does not run on the Python tier, so every call gives the C's bits."""
    monkeypatch.setattr(tiered, "GRACE_S", 0.0)
    inputs, out = _graph()
    with opweave.config.change_flags(compiledir=str(tmp_path), linker="cvm"):
        f = opweave.function(inputs, out)
    assert f.tier == "cvm" and not f.compiling
    assert set(f.maker.node_impls.values()) == {"c"}
