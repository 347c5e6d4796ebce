"""The PyMC row: PyMC's linear regression on opweave (through the alias) and on PyTensor.

Both sides run ``pymc_side.py`` in their own venv (built by
``tests/integration/pymc_envs.py``: ``.pymc-venv`` has PyMC without PyTensor and opweave,
``.pymc-pytensor-venv`` PyMC with its PyTensor), each twice with the same fresh compile
directory: the first process measures the cold compile, the second the warm one (and the
per-call times and NUTS). Ratios are opweave / PyTensor (lower is better).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SIDE = Path(__file__).with_name("pymc_side.py")
sys.path.insert(0, str(REPO / "tests" / "integration"))  # the venv builder the tests use
import pymc_envs  # noqa: E402

TIMEOUT_S = 1800
ROWS = (
    ("import PyMC (s)", "import", "cold"),
    ("compile logp + dlogp, cold (s)", "compile", "cold"),
    ("compile logp + dlogp, warm (s)", "compile", "warm"),
    ("logp per call (µs)", "logp", "warm"),
    ("dlogp per call (µs)", "dlogp", "warm"),
    ("NUTS, 1 chain, 500 + 500 draws (s)", "nuts", "warm"),
)


def run_side(command: list[str], flags_variable: str, flags: str) -> dict[str, Any]:
    env = pymc_envs.clean_environment() | {flags_variable: flags}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(side: str) -> dict[str, dict[str, Any]]:
    """The cold and the warm run of one side (``"opweave"`` or ``"PyTensor"``)."""
    if side == "opweave":
        python = pymc_envs.ensure_venv(pymc_envs.OPWEAVE_VENV)
        command = [str(python), "-m", "opweave.compat", str(SIDE)]
        variable, flag = "OPWEAVE_FLAGS", "compiledir"
    else:
        python = pymc_envs.ensure_venv(pymc_envs.PYTENSOR_VENV)
        command = [str(python), str(SIDE)]
        variable, flag = "PYTENSOR_FLAGS", "base_compiledir"
    with tempfile.TemporaryDirectory(prefix=f"pymc-{side}-") as compiledir:
        flags = f"{flag}={compiledir}"
        cold = run_side(command, variable, flags)
        return {"cold": cold, "warm": run_side(command, variable, flags)}


def cell(value: float, key: str) -> str:
    return f"{value * 1e6:.1f}" if key in ("logp", "dlogp") else f"{value:.3g}"


def section() -> str:
    """The PyMC table, measured, as markdown."""
    print("PyMC: measuring on opweave and on PyTensor ...", file=sys.stderr, flush=True)
    sides = {}
    for side in ("opweave", "PyTensor"):
        try:
            sides[side] = measure(side)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
            return f"## PyMC\n\nnot measured: {side} failed ({error})"
    lines = [
        "## PyMC (linear regression, 100 observations)",
        "",
        "| step | opweave | PyTensor | ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, key, run in ROWS:
        ours, theirs = sides["opweave"][run][key], sides["PyTensor"][run][key]
        lines.append(f"| {label} | {cell(ours, key)} | {cell(theirs, key)} | {ours / theirs:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    print(section())
