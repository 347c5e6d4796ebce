"""PyMC, unmodified, on opweave through the pytensor alias, against PyMC on PyTensor.

``pymc_workload.py`` runs a typical workload (model building, logp/dlogp, ``find_MAP``,
NUTS, eight schools, prior and posterior predictive sampling, a Gaussian random walk, a
``CustomDist`` built on ``scan``, a mixture with ``pm.math`` functions, an LKJ-Cholesky
``MvNormal``, a Gaussian process, ADVI, the pointwise log-likelihood and SMC) once in each of
the two venvs of ``pymc_envs.py``. Deterministic values must agree to rounding; sampled
summaries within Monte Carlo error. PyTensor's report is computed once per version of the
workload and kept in its venv.
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

WORKLOAD = Path(__file__).with_name("pymc_workload.py")
STEP_TIMEOUT_S = 1200
# Steps whose every value is deterministic: equal to PyTensor's up to rounding.
DETERMINISTIC = (
    "regression_logp",
    "eight_schools_logp",
    "gaussian_random_walk",
    "custom_dist_scan_ar1",
    "mixture_with_math",
    "prior_predictive",
    "lkj_mvnormal",
    "gp_marginal",
    "log_likelihood",
)
ROUNDING = {"rtol": 1e-9, "atol": 1e-12}


def run_workload(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=clean_environment(),
        timeout=STEP_TIMEOUT_S,
        cwd=WORKLOAD.parent,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def pytensor_report() -> dict[str, Any]:
    python = ensure_venv(PYTENSOR_VENV)
    digest = hashlib.sha256(WORKLOAD.read_bytes()).hexdigest()[:16]
    cached = PYTENSOR_VENV / f"workload-{digest}.json"
    if not cached.exists():
        report = run_workload([str(python), str(WORKLOAD)])
        cached.write_text(json.dumps(report))
    return json.loads(cached.read_text())


@pytest.fixture(scope="module")
def opweave_report() -> dict[str, Any]:
    python = ensure_venv(OPWEAVE_VENV)
    return run_workload([str(python), "-m", "opweave.compat", str(WORKLOAD)])


def step_values(report: dict[str, Any], name: str, side: str) -> dict[str, Any]:
    outcome = report[name]
    assert outcome["ok"], f"{name} failed on {side}: {outcome['error']}\n{outcome['traceback']}"
    return outcome["values"]


def assert_same_values(ours: Any, theirs: Any, where: str, **tolerance: float) -> None:
    """``ours`` equals ``theirs`` (nested dicts of float lists) within ``tolerance``."""
    if isinstance(theirs, dict):
        assert sorted(ours) == sorted(theirs), where
        for key in theirs:
            assert_same_values(ours[key], theirs[key], f"{where}.{key}", **tolerance)
    elif isinstance(theirs, list):
        np.testing.assert_allclose(ours, theirs, err_msg=where, **tolerance)
    else:
        assert ours == theirs, where


def test_pymc_imports_through_the_alias(opweave_report: dict[str, Any]) -> None:
    values = step_values(opweave_report, "import_pymc", "opweave")
    assert values["version"] == "5.28.5"


@pytest.mark.parametrize("step", DETERMINISTIC)
def test_deterministic_values_equal_pytensors(
    step: str, opweave_report: dict[str, Any], pytensor_report: dict[str, Any]
) -> None:
    theirs = step_values(pytensor_report, step, "PyTensor")
    ours = step_values(opweave_report, step, "opweave")
    assert_same_values(ours, theirs, step, **ROUNDING)


def test_find_map_agrees(opweave_report: dict[str, Any], pytensor_report: dict[str, Any]) -> None:
    theirs = step_values(pytensor_report, "find_map", "PyTensor")
    ours = step_values(opweave_report, "find_map", "opweave")
    assert_same_values(ours, theirs, "find_map", rtol=1e-6, atol=1e-8)


def test_nuts_agrees_within_monte_carlo_error(
    opweave_report: dict[str, Any], pytensor_report: dict[str, Any]
) -> None:
    theirs = step_values(pytensor_report, "nuts", "PyTensor")
    ours = step_values(opweave_report, "nuts", "opweave")
    assert ours["divergences"] == 0
    for name, (sd,) in theirs["sd"].items():
        # 300 draws: the difference of two chains' means is within about a fifth of a
        # posterior standard deviation; 0.6 sd is several standard errors.
        assert abs(ours["mean"][name][0] - theirs["mean"][name][0]) < 0.6 * sd, name


def test_eight_schools_nuts_agrees(
    opweave_report: dict[str, Any], pytensor_report: dict[str, Any]
) -> None:
    theirs = step_values(pytensor_report, "eight_schools_nuts", "PyTensor")
    ours = step_values(opweave_report, "eight_schools_nuts", "opweave")
    assert ours["divergences"] <= max(5, 2 * theirs["divergences"])
    assert abs(ours["mu_mean"][0] - theirs["mu_mean"][0]) < 2.0
    assert abs(ours["tau_mean"][0] - theirs["tau_mean"][0]) < 2.0


def test_posterior_predictive_agrees(
    opweave_report: dict[str, Any], pytensor_report: dict[str, Any]
) -> None:
    theirs = step_values(pytensor_report, "posterior_predictive", "PyTensor")
    ours = step_values(opweave_report, "posterior_predictive", "opweave")
    # The data's mean is about 1.5; the predictive mean is within its standard error.
    assert abs(ours["y_mean"][0] - theirs["y_mean"][0]) < 0.3


def test_advi_agrees(opweave_report: dict[str, Any], pytensor_report: dict[str, Any]) -> None:
    theirs = step_values(pytensor_report, "advi_fit", "PyTensor")
    ours = step_values(opweave_report, "advi_fit", "opweave")
    # The same random draws and the same gradients: the fits agree beyond rounding noise
    # accumulated over 300 steps.
    assert_same_values(ours, theirs, "advi_fit", rtol=1e-6, atol=1e-8)


def test_smc_agrees(opweave_report: dict[str, Any], pytensor_report: dict[str, Any]) -> None:
    theirs = step_values(pytensor_report, "smc", "PyTensor")
    ours = step_values(opweave_report, "smc", "opweave")
    # The posterior sd is about 0.57; 300 particles put the mean within 0.1 of it.
    assert abs(ours["mu_mean"][0] - theirs["mu_mean"][0]) < 0.2
