"""The ``opweave`` command: ``demo`` and ``info`` as a newcomer runs them."""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest

from opweave.cli import main


def test_demo_runs_the_tutorial_example_with_every_linker(session_config) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "opweave", "demo"],
        capture_output=True,
        text=True,
        env={**os.environ, "OPWEAVE_FLAGS": f"compiledir={session_config}"},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "linker   py: f(1.0, 2.0, 3.0) = 9.0" in out
    assert "linker   vm: f(1.0, 2.0, 3.0) = 9.0" in out
    assert "linker    c: f(1.0, 2.0, 3.0) = 9.0" in out
    assert "linker  cvm: f(1.0, 2.0, 3.0) = 9.0" in out
    if "jax" in out.partition("\nlinkers: ")[2].splitlines()[0].split(", "):
        # opweave-jax has no Python fallback: it refuses the plugin's Type, saying so
        assert "linker  jax: refused: jax linker: input x has type double" in out
    assert "double = opweave_double.plugin [opweave-double 0.1.0]: loaded" in out
    assert "bad input is refused by name: TypeError" in out
    assert "logistic regression: symbolic grad, shared weights, updates" in out


def test_info_lists_backends_and_config_sources(capsys) -> None:
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "opweave-python: linkers py, vm; available" in out
    assert "opweave-c: linkers c, cvm; available" in out
    usable = next(line for line in out.splitlines() if line.startswith("linkers: "))
    assert {"c", "cvm", "py", "vm"} <= set(usable.removeprefix("linkers: ").split(", "))
    assert "linker = " in out and "mode = 'FAST_RUN'" in out


def test_printing_debugprint_and_pprint() -> None:
    import opweave
    from opweave_double import add, double, mul

    x, y, z = double("x"), double("y"), double("z")
    expr = mul(add(x, y), z)
    buf = io.StringIO()
    assert opweave.dprint(expr, file=buf) is buf  # the stream, as PyTensor returns it
    text = buf.getvalue().strip()
    assert opweave.dprint(expr, file="str") == text
    assert text.splitlines() == [
        "mul [id A]",
        " |add [id B]",
        " | |x [id C]",
        " | |y [id D]",
        " |z [id E]",
    ]
    assert opweave.pprint(expr) == "mul(add(x, y), z)"


def test_logistic_regression_loss_falls() -> None:
    from opweave.cli import logistic_regression

    buf = io.StringIO()
    losses = logistic_regression(buf, steps=60, seed=1)
    assert losses[0] == pytest.approx(np.log(2.0))  # zero weights: p = 0.5 everywhere
    assert all(b <= a + 1e-12 for a, b in itertools.pairwise(losses))
    assert losses[-1] < 0.5 * losses[0]
    assert "training accuracy" in buf.getvalue()


def _run_cli(*args: str, flags: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if flags is not None:
        env["OPWEAVE_FLAGS"] = flags
    return subprocess.run(
        [sys.executable, "-m", "opweave", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_info_reports_the_versions_a_bug_report_needs(capsys) -> None:
    from importlib import metadata

    import opweave

    assert main(["info"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    block = lines[
        lines.index("versions:") + 1 : lines.index("plugins (entry points 'opweave.plugins'):")
    ]
    versions = dict(line.strip().split(": ", 1) for line in block)
    assert versions["python"].startswith(".".join(map(str, sys.version_info[:3])) + " (")
    assert versions["numpy"] == np.__version__
    assert versions["scipy"] == metadata.version("scipy")
    assert versions["opweave"] == opweave.__version__
    for dist in ("opweave-python", "opweave-c", "opweave-dask"):
        assert versions[dist] == metadata.version(dist)
    compiler = versions["C compiler (opweave-c)"]
    cxx = opweave.config.cxx
    first_line = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout
    assert compiler.endswith(": " + first_line.splitlines()[0])
    import dask

    assert versions["dask (opweave-dask)"] == dask.__version__


def test_version_flag_prints_the_version() -> None:
    import opweave

    proc = _run_cli("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"opweave {opweave.__version__}"


@pytest.mark.parametrize("command", ["info", "matrix", "demo"])
def test_a_mistyped_config_flag_is_one_line_and_a_nonzero_exit(command: str) -> None:
    proc = _run_cli(command, flags="linkr=cvm")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    (said,) = proc.stderr.splitlines()  # one line: what is wrong, and the known flags
    assert said.startswith(
        "opweave: error: unknown opweave config flag 'linkr' (from OPWEAVE_FLAGS)"
    )
    assert "did you mean 'linker'?" in said and "known flags:" in said
    assert proc.stdout == ""


def test_a_mistyped_command_line_option_is_refused_briefly() -> None:
    proc = _run_cli("info", "--opz")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1] == "opweave: error: unrecognized arguments: --opz"
