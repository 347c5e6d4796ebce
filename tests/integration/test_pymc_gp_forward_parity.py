"""PyMC's forward sampling and Gaussian processes draw PyTensor's values on opweave.

``pymc_gp_forward_workload.py`` runs in the two venvs of ``pymc_envs.py`` (PyMC through
opweave's pytensor alias, and PyMC on PyTensor); with the same random generators, prior and
posterior predictive draws must be equal, and GP predictions equal to rounding. The
zero-inflated step samples mixture weights with a negative entry, which PyTensor's
``categorical`` accepts (opweave used to raise for them); the HSGP step goes through the
Matern power spectral densities, which take ``pt.power`` of Python numbers (opweave used to
compute it in ``float32``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pymc_envs import OPWEAVE_VENV, PYTENSOR_VENV, clean_environment, ensure_venv

pytestmark = pytest.mark.slow

WORKLOAD = Path(__file__).with_name("pymc_gp_forward_workload.py")
TIMEOUT_S = 900
STEPS = (
    "zero_inflated_prior",
    "gp_latent_prior",
    "hsgp_matern_prior",
    "gp_marginal_predict",
    "posterior_predictive",
)


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
    return run_workload([str(ensure_venv(PYTENSOR_VENV)), str(WORKLOAD)])


@pytest.fixture(scope="module")
def opweave_report() -> dict[str, Any]:
    return run_workload([str(ensure_venv(OPWEAVE_VENV)), "-m", "opweave.compat", str(WORKLOAD)])


def step_values(report: dict[str, Any], name: str, side: str) -> dict[str, Any]:
    outcome = report[name]
    assert outcome["ok"], f"{name} failed on {side}: {outcome['error']}\n{outcome['traceback']}"
    values: dict[str, Any] = outcome["values"]
    return values


@pytest.mark.parametrize("step", STEPS)
def test_values_equal_pytensors(
    step: str, opweave_report: dict[str, Any], pytensor_report: dict[str, Any]
) -> None:
    theirs = step_values(pytensor_report, step, "PyTensor")
    ours = step_values(opweave_report, step, "opweave")
    assert sorted(ours) == sorted(theirs)
    for name, expected in theirs.items():
        np.testing.assert_allclose(ours[name], expected, rtol=1e-9, atol=1e-12, err_msg=name)


def test_zero_inflated_weights_above_one_are_drawn(pytensor_report: dict[str, Any]) -> None:
    values = step_values(pytensor_report, "zero_inflated_prior", "PyTensor")
    assert max(values["psi"]) > 1  # the prior reaches weights that are not probabilities
