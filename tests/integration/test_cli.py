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
