"""The two venvs the PyMC tests run in, built on first use (git-ignored, at the repo root).

- ``.pymc-venv``: PyMC without PyTensor, and opweave's distributions (editable, as in the dev
  venv) with JAX, numpyro and blackjax, for PyMC's JAX samplers; ``python -m opweave.compat``
  runs PyMC there through the pytensor alias.
- ``.pymc-pytensor-venv``: PyMC with the PyTensor it requires, for reference values.

PyMC requires ``pytensor<2.39``; the first venv installs it with ``--no-deps`` and then its
other requirements, read from its own metadata, so nothing pulls PyTensor in. Its ready
marker records what it was built with (:func:`opweave_recipe`): a venv built before a
distribution or package was added here gets the missing ones installed on next use.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock

PYMC_VERSION = "5.28.5"
ROOT = Path(__file__).resolve().parents[2]
OPWEAVE_VENV = ROOT / ".pymc-venv"
PYTENSOR_VENV = ROOT / ".pymc-pytensor-venv"
# opweave's distributions that a PyMC user installs (the GPU backend needs a driver).
DISTRIBUTIONS = ("core", "backend-python", "backend-c", "backend-dask", "backend-jax")
# What PyMC's JAX samplers need besides (opweave-jax brings JAX).
# blackjax 1.2: PyMC 5.28.5 passes ``progress_bar`` to ``window_adaptation``, which later
# blackjax releases no longer take.
EXTRA_PACKAGES = ("numpyro", "blackjax==1.2.5")
READY = ".ready"


def opweave_recipe() -> str:
    """What ``.pymc-venv`` is built with, as its ready marker records it."""
    return f"pymc=={PYMC_VERSION}; {' '.join(DISTRIBUTIONS)}; {' '.join(EXTRA_PACKAGES)}"


def python_of(venv: Path) -> Path:
    """The Python executable of ``venv``."""
    return venv / "bin" / "python"


def clean_environment() -> dict[str, str]:
    """The environment for a venv's Python: none of the dev venv's paths leak in."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=clean_environment())
    if done.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )


def _pymc_requirements(python: Path) -> list[str]:
    """PyMC's requirements from its installed metadata, without PyTensor."""
    code = "import json, importlib.metadata as m; print(json.dumps(m.requires('pymc')))"
    done = subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, env=clean_environment()
    )
    requirements = json.loads(done.stdout)
    return [r for r in requirements if "extra ==" not in r and not r.startswith("pytensor")]


def _install_opweave(python: Path) -> None:
    """opweave's distributions (editable) and :data:`EXTRA_PACKAGES`."""
    editable = [arg for d in DISTRIBUTIONS for arg in ("-e", str(ROOT / d))]
    _run(
        [str(python), "-m", "pip", "install", "-q", *editable, *EXTRA_PACKAGES],
        "installing opweave",
    )


def _build_opweave_venv(venv: Path) -> None:
    python = python_of(venv)
    _run([sys.executable, "-m", "venv", str(venv)], "python -m venv")
    _run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip>=25.1"], "pip upgrade")
    _install_opweave(python)
    _run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", f"pymc=={PYMC_VERSION}"],
        "installing PyMC without PyTensor",
    )
    _run(
        [str(python), "-m", "pip", "install", "-q", *_pymc_requirements(python)],
        "installing PyMC's other requirements",
    )


def _build_pytensor_venv(venv: Path) -> None:
    python = python_of(venv)
    _run([sys.executable, "-m", "venv", str(venv)], "python -m venv")
    _run(
        [str(python), "-m", "pip", "install", "-q", f"pymc=={PYMC_VERSION}"],
        "installing PyMC with PyTensor",
    )


def ensure_venv(venv: Path) -> Path:
    """Build ``venv`` unless it is complete (for ``.pymc-venv``: install what its recipe
    gained since it was built); its Python. Safe from several processes."""
    recipe = opweave_recipe() if venv == OPWEAVE_VENV else PYMC_VERSION
    marker = venv / READY
    with FileLock(str(venv) + ".lock"):
        if not marker.exists():
            build = _build_opweave_venv if venv == OPWEAVE_VENV else _build_pytensor_venv
            build(venv)
            marker.write_text(recipe)
        elif venv == OPWEAVE_VENV and marker.read_text() != recipe:
            _install_opweave(python_of(venv))
            marker.write_text(recipe)
    return python_of(venv)
