"""``config.openmp__threads``: the threads of the C backend's OpenMP loops."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.link.threads import usable_cpus

C = Mode(linker="c")


def _source(tmp_path: Path, **flags: object) -> tuple[opweave.compile.Function, str]:
    x = ot.dvector("x")
    with opweave.config.change_flags(
        openmp=True, openmp_elemwise_minsize=1, compiledir=str(tmp_path), **flags
    ):
        f = opweave.function([x], ot.mul(ot.exp(x), 2.0), mode=C)
    return f, "".join(p.read_text() for p in tmp_path.rglob("*.c"))


def test_a_number_of_threads_is_the_loops_number(tmp_path: Path) -> None:
    f, source = _source(tmp_path, openmp__threads=3)
    assert "num_threads(opw_threads)" in source
    assert "const int opw_threads = 3;" in source
    x = np.linspace(-1, 1, 10_001)
    np.testing.assert_allclose(f(x), np.exp(x) * 2.0, rtol=1e-15)


def test_auto_is_the_thread_limit_within_the_usable_cpus(tmp_path: Path) -> None:
    _, source = _source(tmp_path, openmp__threads="auto")
    cpus = usable_cpus()
    expected = f"(omp_get_max_threads() < {cpus} ? omp_get_max_threads() : {cpus})"
    assert f"const int opw_threads = {expected};" in source


# A child process: the OpenMP threads a loop starts stay (libgomp's pool), so the threads
# of the process that one large call started tell how many it ran on.
CHILD = """
import os, sys, numpy as np, opweave, opweave.tensor as ot
x = ot.dvector("x")
flags = dict(openmp=True, openmp_elemwise_minsize=1, compiledir=sys.argv[1])
if sys.argv[2] != "-":
    flags["openmp__threads"] = sys.argv[2]
with opweave.config.change_flags(**flags):
    f = opweave.function([x], ot.exp(x) * 2.0, mode=opweave.Mode(linker="c"))
before = set(os.listdir("/proc/self/task"))
f(np.ones(1_000_000))
print(len(set(os.listdir("/proc/self/task")) - before))
"""


def _threads_started(tmp_path: Path, flag: str, env: dict[str, str]) -> int:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), flag],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_the_flag_reaches_the_running_loop(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    assert _threads_started(tmp_path, "3", env) == 2  # the calling thread and two more
    assert _threads_started(tmp_path, "1", env) == 0
    # auto: the usable CPUs, and no more than OMP_NUM_THREADS says
    assert _threads_started(tmp_path, "-", env) == usable_cpus() - 1
    assert _threads_started(tmp_path, "-", {**env, "OMP_NUM_THREADS": "1"}) == 0
