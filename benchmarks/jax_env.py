"""JAX in its own venv, for the compile-scaling table and the main table's JAX column.

Like PyTensor (``pytensor_env.py``), JAX never enters the project's venv. The benchmark
venv (``.bench-jax-venv`` by default, git-ignored) is created on first use with
``python -m venv`` and ``pip install jax jaxlib``; each JAX measurement is one subprocess
of that venv's Python running ``scaling_probe.py`` (compile scaling) or ``jax_side.py``
(the main table).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytensor_env import CASE_TIMEOUT_S, install, last_line, log, venv_python
from report import NotAvailable, Outcome
from timing import Settings

PROBE = Path(__file__).with_name("scaling_probe.py")
#: Runs the main table's JAX measurements (``case`` as JSON, answer as JSON).
SIDE = Path(__file__).with_name("jax_side.py")
PACKAGES = ("jax", "jaxlib")
INFO_TIMEOUT_S = 300


@dataclass
class JaxSide:
    """A JAX venv ready to run the scaling probe; ``info`` holds its versions."""

    python: Path
    info: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``jax 0.7.1, jaxlib 0.7.1, numpy 2.3.2, backend cpu; venv <path>``."""
        versions = ", ".join(f"{k} {v}" for k, v in self.info.items())
        return f"{versions}; venv {self.python.parent.parent}"

    def time_case(self, case: str, settings: Settings, **params: Any) -> Outcome:
        """Median time per call of ``case`` (``jax_side.py``, given ``params`` such as
        ``n`` or ``dtype``) in this venv, or why not."""
        spec = json.dumps({"case": case, **settings.as_dict(), **params})
        try:
            done = subprocess.run(
                [str(self.python), str(SIDE), spec],
                capture_output=True,
                text=True,
                env=clean_env(),
                timeout=CASE_TIMEOUT_S,
            )
            answer = json.loads(last_line(done.stdout))
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
            log(f"  JAX: {exc}")
            return NotAvailable(f"{type(exc).__name__}: {str(exc)[:60]}")
        if "error" in answer:
            log(f"  JAX: {answer['error']}")
            return NotAvailable(answer["error"][:80])
        return float(answer["seconds"])


def probe(python: Path) -> dict[str, Any] | None:
    """JAX's versions in the venv of ``python``, or ``None`` when it does not run there."""
    if not python.exists():
        return None
    spec = json.dumps({"library": "jax", "case": "info"})
    try:
        done = subprocess.run(
            [str(python), str(PROBE), spec],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=INFO_TIMEOUT_S,
        )
        return json.loads(last_line(done.stdout))["info"]
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError, KeyError):
        return None


def clean_env() -> dict[str, str]:
    """The environment for the JAX venv's Python: no project paths, JAX on the CPU."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["JAX_PLATFORMS"] = "cpu"
    return env


def prepare(venv: Path) -> JaxSide | NotAvailable:
    """A ready :class:`JaxSide` in ``venv`` (installing JAX once), or why not."""
    python = venv_python(venv)
    info = probe(python)
    if info is None:
        if (why := install(venv, PACKAGES, "JAX")) is not None:
            return NotAvailable(why)
        info = probe(python)
        if info is None:
            return NotAvailable("installed, but JAX does not run")
    return JaxSide(python, info)
