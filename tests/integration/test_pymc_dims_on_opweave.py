"""``pymc.dims`` models, unmodified PyMC, on opweave's xtensor against PyMC on PyTensor.

``pymc_dims_workload.py`` builds small models with named dimensions (scalar distributions
with dims and an implied transpose, ``ZeroSumNormal`` and ``MvNormal`` with core dims,
``Deterministic`` of xtensor math, observed ``pmd.Data`` with ``isel``/``concat``/``diff``)
once in each venv of ``pymc_envs.py``. Initial points, log densities and gradients must agree
to rounding, dims exactly, and prior draws taken with the same random generator must be
equal.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pymc_envs import OPWEAVE_VENV, PYTENSOR_VENV, clean_environment, ensure_venv

pytestmark = pytest.mark.slow

WORKLOAD = Path(__file__).with_name("pymc_dims_workload.py")
TIMEOUT_S = 1200
STEPS = ("scalar_distributions", "zero_sum_normal", "mv_normal", "observed_spline")
# Equal to rounding.
RTOL, ATOL = 1e-9, 1e-12
DENSITIES = ("logp", "dlogp", "logp_shifted", "dlogp_shifted")


def run_workload(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=clean_environment(),
        timeout=TIMEOUT_S,
        cwd=WORKLOAD.parent,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="module")
def pytensor_report() -> dict[str, Any]:
    python = ensure_venv(PYTENSOR_VENV)
    digest = hashlib.sha256(WORKLOAD.read_bytes()).hexdigest()[:16]
    cached = PYTENSOR_VENV / f"dims-workload-{digest}.json"
    if not cached.exists():
        cached.write_text(json.dumps(run_workload([str(python), str(WORKLOAD)])))
    report: dict[str, Any] = json.loads(cached.read_text())
    return report


@pytest.fixture(scope="module")
def opweave_report() -> dict[str, Any]:
    python = ensure_venv(OPWEAVE_VENV)
    return run_workload([str(python), "-m", "opweave.compat", str(WORKLOAD)])


def step_values(report: dict[str, Any], name: str, side: str) -> dict[str, Any]:
    outcome = report[name]
    assert outcome["ok"], f"{name} failed on {side}: {outcome['error']}\n{outcome['traceback']}"
    values: dict[str, Any] = outcome["values"]
    return values


@pytest.fixture(params=STEPS)
def both(
    request: pytest.FixtureRequest,
    opweave_report: dict[str, Any],
    pytensor_report: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The opweave and PyTensor values of one step."""
    step = request.param
    return (
        step_values(opweave_report, step, "opweave"),
        step_values(pytensor_report, step, "PyTensor"),
    )


def test_initial_point_equals_pytensors(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = both
    assert ours["initial_point_order"] == theirs["initial_point_order"]
    for name, expected in theirs["initial_point"].items():
        np.testing.assert_allclose(
            ours["initial_point"][name], expected, err_msg=name, rtol=RTOL, atol=ATOL
        )


def test_dims_equal_pytensors(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = both
    assert ours["dims"] == theirs["dims"]


@pytest.mark.parametrize("density", DENSITIES)
def test_log_density_equals_pytensors(
    density: str, both: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    ours, theirs = both
    np.testing.assert_allclose(
        ours[density], theirs[density], err_msg=density, rtol=RTOL, atol=ATOL
    )


def test_prior_draws_equal_pytensors(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    ours, theirs = both
    assert sorted(ours["draws"]) == sorted(theirs["draws"])
    for name, expected in theirs["draws"].items():
        assert np.shape(ours["draws"][name]) == np.shape(expected), name
        np.testing.assert_allclose(
            ours["draws"][name], expected, err_msg=name, rtol=RTOL, atol=ATOL
        )


def test_prior_draws_differ_between_draws(pytensor_report: dict[str, Any]) -> None:
    """The draws are random: the comparison above is not between constants."""
    values = step_values(pytensor_report, "scalar_distributions", "PyTensor")
    first, second = np.asarray(values["draws"]["y"])[:2]
    assert not np.allclose(first, second)
