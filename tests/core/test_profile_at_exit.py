"""Profiles printed at exit when ``config.profile`` is on, to ``profiling__destination``."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import opweave
from opweave.compile.profiling import ProfileStats

SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import opweave, opweave.tensor as ot
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2, name="doubled_exp")
    g = opweave.function([x], ot.log(x), name="never_called")
    for _ in range(3):
        f(np.arange(5.0))
    print("done")
    """
)


def _run(flags: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPWEAVE_FLAGS=flags)
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True
    )


def test_profiles_are_printed_to_stderr_at_exit() -> None:
    proc = _run("profile=True,profiling__n_apply=1")
    assert proc.stdout.strip() == "done"
    assert proc.stderr.count("Function profiling") == 1  # the uncalled function is skipped
    assert "Message: doubled_exp" in proc.stderr
    assert "Time in 3 calls to Function.__call__" in proc.stderr


def test_profiles_go_to_the_file_named(tmp_path: Path) -> None:
    out = tmp_path / "profiles.txt"
    proc = _run(f"profile=True,profiling__destination={out}")
    assert "Function profiling" not in proc.stderr
    text = out.read_text()
    assert "Message: doubled_exp" in text and "Time in 3 calls" in text


def test_nothing_is_printed_when_profiling_is_off() -> None:
    proc = _run("profile=False")
    assert "Function profiling" not in proc.stderr + proc.stdout


def test_print_at_exit_follows_the_flags(capsys: pytest.CaptureFixture[str]) -> None:
    stats = ProfileStats("by hand", atexit_print=False)
    stats.fct_callcount = 2
    with opweave.config.change_flags(profile=True, profiling__destination="stdout"):
        stats.print_at_exit()
    assert "Message: by hand" in capsys.readouterr().out
    with opweave.config.change_flags(profile=False):
        stats.print_at_exit()
    assert capsys.readouterr().out == ""
