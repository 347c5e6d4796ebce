"""PyTensor in its own venv: creating it, and running ``pytensor_side.py`` there.

PyTensor never enters the project's venv (it would pull its own NumPy and friends). The
benchmark venv (``.bench-pytensor-venv`` by default, git-ignored) is created on first use
with ``python -m venv`` and ``pip install pytensor``; each PyTensor measurement is one
subprocess of that venv's Python, given its case as JSON and answering in JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from report import NotAvailable, Outcome
from timing import Settings

HELPER = Path(__file__).with_name("pytensor_side.py")
# PyTensor's predefined mode names, and the table column each one fills.
MODE_COLUMNS = {"CVM": "PyTensor cvm", "C": "PyTensor c", "NUMBA": "PyTensor numba"}
CASE_TIMEOUT_S = 1800


def log(message: str) -> None:
    """Progress and problems go to stderr; stdout carries only the report."""
    print(message, file=sys.stderr, flush=True)


def last_line(text: str) -> str:
    """The last non-empty line of ``text`` (``""`` when none)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def venv_python(venv: Path) -> Path:
    """The Python executable of ``venv``."""
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


@dataclass
class PyTensorSide:
    """A PyTensor venv ready to run cases; ``info`` holds its versions and configuration."""

    python: Path
    compiledir: Path
    modes: list[str]
    info: dict[str, Any] = field(default_factory=dict)

    def call(self, spec: dict[str, Any], compiledir: Path | None = None) -> dict[str, Any]:
        """Run the helper on ``spec`` with ``base_compiledir`` set; its JSON answer.

        Raises ``RuntimeError`` with the helper's last line of stderr when it fails.
        """
        flags = [
            os.environ.get("PYTENSOR_FLAGS", ""),
            f"base_compiledir={compiledir or self.compiledir}",
        ]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PYTENSOR_FLAGS"] = ",".join(f for f in flags if f)
        done = subprocess.run(
            [str(self.python), str(HELPER), json.dumps(spec)],
            capture_output=True,
            text=True,
            env=env,
            timeout=CASE_TIMEOUT_S,
        )
        try:
            return json.loads(last_line(done.stdout))
        except json.JSONDecodeError:
            raise RuntimeError(
                f"PyTensor helper failed (exit {done.returncode}): {last_line(done.stderr)}"
            ) from None

    def time_case(self, case: str, settings: Settings, **params: Any) -> dict[str, Outcome]:
        """Median time per call of ``case`` in each mode, keyed by table column."""
        spec = {"case": case, "modes": self.modes, **settings.as_dict(), **params}
        try:
            answer = self.call(spec)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            log(f"  PyTensor: {exc}")
            return {MODE_COLUMNS[m]: NotAvailable(str(exc)[:80]) for m in self.modes}
        return self._outcomes(answer, self.modes)

    def compile_time(self, mode: str, compiledir: Path) -> tuple[Outcome, float | None]:
        """Seconds to compile and first call the small graph in a fresh process.

        Returns that outcome and the time the process took to import PyTensor.
        """
        try:
            answer = self.call({"case": "compile", "modes": [mode]}, compiledir)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            return NotAvailable(str(exc)[:80]), None
        outcome = self._outcomes(answer, [mode])[MODE_COLUMNS[mode]]
        return outcome, answer.get("import_seconds")

    @staticmethod
    def _outcomes(answer: dict[str, Any], modes: list[str]) -> dict[str, Outcome]:
        """The helper's answer as one outcome per mode column; errors are logged."""
        outcomes: dict[str, Outcome] = {}
        for mode in modes:
            if mode in answer["seconds"]:
                outcomes[MODE_COLUMNS[mode]] = float(answer["seconds"][mode])
            else:
                error = answer["errors"].get(mode, "no result")
                log(f"  PyTensor {mode}: {error}")
                outcomes[MODE_COLUMNS[mode]] = NotAvailable(error[:80])
        return outcomes


def install(
    venv: Path, packages: tuple[str, ...] = ("pytensor",), label: str = "PyTensor"
) -> str | None:
    """Create ``venv`` if needed and ``pip install`` ``packages`` into it.

    Returns ``None``, or why it failed. ``label`` names the venv in the progress lines.
    """
    python = venv_python(venv)
    steps = []
    if not python.exists():
        steps.append(("python -m venv", [sys.executable, "-m", "venv", str(venv)]))
    pip = [str(python), "-m", "pip", "install", *packages]
    steps.append((f"pip install {' '.join(packages)}", pip))
    for what, command in steps:
        log(f"{label} venv {venv}: {what} ...")
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            log(done.stdout[-2000:] + done.stderr[-2000:])
            return f"{what} failed (exit {done.returncode}): {last_line(done.stderr)}"
    return None


def probe(side: PyTensorSide) -> dict[str, Any] | None:
    """PyTensor's versions and configuration in ``side``'s venv, or ``None`` when absent."""
    if not side.python.exists():
        return None
    try:
        return side.call({"case": "info"})["info"]
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        return None


def prepare(venv: Path, modes: list[str]) -> PyTensorSide | NotAvailable:
    """A ready :class:`PyTensorSide` in ``venv`` (installing PyTensor once), or why not."""
    side = PyTensorSide(venv_python(venv), venv / "compiledir", modes)
    info = probe(side)
    if info is None:
        if (why := install(venv)) is not None:
            return NotAvailable(why)
        try:
            info = side.call({"case": "info"})["info"]
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            return NotAvailable(f"installed, but PyTensor does not run: {exc}")
    side.info = info
    return side
