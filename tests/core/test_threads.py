"""The threads of BLAS calls: usable CPUs, the ``blas__threads`` flag and when it applies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.link import threads  # noqa: E402
from opweave.link.blas_load import blas_load  # noqa: E402
from opweave.link.threads import (  # noqa: E402
    blas_threads,
    cgroup_cpu_limit,
    openmp_threads,
    usable_cpus,
)

VM = opweave.Mode(linker="vm")


def blas_counts() -> dict[str, int]:
    """threadpoolctl's threads of each BLAS library loaded."""
    return {
        info["filepath"]: info["num_threads"]
        for info in threadpoolctl.threadpool_info()
        if info["user_api"] == "blas"
    }


@pytest.fixture
def restore_blas() -> Iterator[dict[str, int]]:
    """The BLAS libraries' threads before the test, given back after it (and opweave's
    record of them forgotten)."""
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


def compile_dot(**flags: object) -> opweave.compile.Function:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    with opweave.config.change_flags(**flags):
        return opweave.function([x, y], ot.dot(x, y), mode=VM)


# ---------------------------------------------------------------- usable CPUs


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_cgroup_v2_quota_is_the_smallest_along_the_path(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    write(root / "cgroup.controllers", "cpu memory\n")
    write(root / "outer" / "cpu.max", "250000 100000\n")  # 2.5 CPUs
    write(root / "outer" / "inner" / "cpu.max", "max 100000\n")
    write(tmp_path / "self", "0::/outer/inner\n")
    assert cgroup_cpu_limit(root, tmp_path / "self") == 3  # rounded up
    write(root / "outer" / "inner" / "cpu.max", "100000 100000\n")
    assert cgroup_cpu_limit(root, tmp_path / "self") == 1


def test_cgroup_v2_without_quota(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    write(root / "cgroup.controllers", "cpu\n")
    write(root / "cpu.max", "max 100000\n")
    write(tmp_path / "self", "0::/\n")
    assert cgroup_cpu_limit(root, tmp_path / "self") is None


def test_cgroup_v1_quota(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "150000\n")
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_period_us", "100000\n")
    write(tmp_path / "self", "4:memory:/job\n3:cpu,cpuacct:/job\n")
    assert cgroup_cpu_limit(root, tmp_path / "self") == 2
    write(root / "cpu,cpuacct" / "job" / "cpu.cfs_quota_us", "-1\n")
    assert cgroup_cpu_limit(root, tmp_path / "self") is None


def test_no_cgroup_files_means_no_quota(tmp_path: Path) -> None:
    assert cgroup_cpu_limit(tmp_path / "absent", tmp_path / "absent-self") is None


def test_usable_cpus_is_affinity_bounded_by_the_quota(monkeypatch: pytest.MonkeyPatch) -> None:
    affinity = threads._affinity_cpus()
    if hasattr(os, "sched_getaffinity") and not hasattr(os, "process_cpu_count"):
        assert affinity == len(os.sched_getaffinity(0))
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: None)
    assert usable_cpus() == affinity
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: 1)
    assert usable_cpus() == 1
    monkeypatch.setattr(threads, "cgroup_cpu_limit", lambda: affinity + 5)
    assert usable_cpus() == affinity


def test_the_c_backend_counts_cores_with_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    module = pytest.importorskip("opweave_c.module")
    monkeypatch.setattr(module, "usable_cpus", lambda: 7)
    with opweave.config.change_flags(c__build_jobs=0):
        assert module.build_jobs() == 7
    with opweave.config.change_flags(c__build_jobs=3):
        assert module.build_jobs() == 3


# ---------------------------------------------------------------- the rule and the flags


def test_the_auto_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    assert blas_threads(3, before=8, cpus=2) == 3  # a number is set as it is
    assert blas_threads(0, before=8, cpus=2) == 2  # auto: the usable CPUs...
    assert blas_threads(0, before=1, cpus=4) == 1  # ...never more than the library had
    monkeypatch.setattr(threads, "usable_cpus", lambda: 5)
    assert openmp_threads(0) == 5
    assert openmp_threads(2) == 2


@pytest.mark.parametrize("name", ["blas__threads", "openmp__threads"])
def test_thread_flags_accept_auto_and_positive_numbers(name: str) -> None:
    with opweave.config.change_flags(**{name: "auto"}):
        assert getattr(opweave.config, name) == 0
    with opweave.config.change_flags(**{name: "3"}):
        assert getattr(opweave.config, name) == 3
    with opweave.config.change_flags(**{name: 2}):
        assert getattr(opweave.config, name) == 2


@pytest.mark.parametrize("name", ["blas__threads", "openmp__threads"])
@pytest.mark.parametrize("bad", [-1, "many", 1.5, True])
def test_thread_flags_refuse_other_values(name: str, bad: object) -> None:
    with (
        pytest.raises(ValueError, match=rf"config flag '{name}'.*positive number of threads"),
        opweave.config.change_flags(**{name: bad}),
    ):
        pass


def test_blas_threads_flag_takes_effect_when_a_function_is_linked(
    restore_blas: dict[str, int],
) -> None:
    f = compile_dot(blas__threads=1)
    assert set(blas_counts().values()) == {1}
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(a, a.T), a @ a.T)
    compile_dot(blas__threads=2)
    assert set(blas_counts().values()) == {2}
    compile_dot(blas__threads="auto")
    want = {path: min(n, usable_cpus()) for path, n in restore_blas.items()}
    assert blas_counts() == want


def test_auto_keeps_a_limit_the_user_set(restore_blas: dict[str, int]) -> None:
    compile_dot(blas__threads=2)
    with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
        compile_dot(blas__threads="auto")
        assert set(blas_counts().values()) == {1}


def test_calls_do_not_apply_the_limits(
    restore_blas: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    compile_dot(blas__threads=1)  # what compiling imports, imported
    applied: list[int] = []
    state = threads.process_blas_threads()

    def apply(flag: int, follow_load: bool = False) -> dict[str, int]:
        applied.append(flag)
        state.last = (flag, follow_load, len(sys.modules))
        return {}

    monkeypatch.setattr(state, "apply", apply)
    f = compile_dot(blas__threads=2)
    assert applied == [2]
    a = np.ones((2, 2))
    for _ in range(5):
        f(a, a)
    assert applied == [2]
    compile_dot(blas__threads=2)  # nothing changed: nothing to do
    assert applied == [2]


@pytest.mark.parametrize(
    ("flags", "blas_env", "want"),
    [
        ("blas__threads=1", "2", 1),  # a number is set, above the environment's too
        ("", "1", 1),  # auto keeps the environment's limit
    ],
)
def test_the_environment_and_the_flags(flags: str, blas_env: str, want: int) -> None:
    code = (
        "import json, numpy, threadpoolctl, opweave, opweave.tensor as ot\n"
        "x = ot.dmatrix('x')\n"
        "opweave.function([x], ot.dot(x, x), mode=opweave.Mode(linker='vm'))\n"
        "print(json.dumps([i['num_threads'] for i in "
        "threadpoolctl.threadpool_info() if i['user_api'] == 'blas']))\n"
    )
    env = {**os.environ, "OPWEAVE_FLAGS": flags, "OPENBLAS_NUM_THREADS": blas_env}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    counts = json.loads(out.stdout.strip().splitlines()[-1])
    assert counts and set(counts) == {want}


# ---------------------------------------------------------------- following the load


def compile_dot_following(**flags: object) -> None:
    """A product compiled with ``blas__follow_load`` on (unless ``flags`` say otherwise)."""
    compile_dot(**{"blas__follow_load": True, **flags})


def test_auto_follows_the_load_and_a_number_does_not(restore_blas: dict[str, int]) -> None:
    compile_dot_following(blas__threads=2)
    state = blas_load()
    assert state.enabled == 0  # an explicit number is kept as it is
    compile_dot_following(blas__threads="auto", blas__follow_load=False)
    assert state.enabled == 0  # off by default: reproducible results
    compile_dot_following(blas__threads="auto")
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
    compile_dot_following(blas__threads="auto")
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
