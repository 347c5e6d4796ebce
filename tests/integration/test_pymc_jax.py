"""PyMC's JAX path (``pymc.sampling.jax``, ``nuts_sampler="numpyro"`` and ``"blackjax"``) on
opweave-jax, unmodified, through the pytensor alias in ``.pymc-venv`` (``pymc_envs.py``).

``pymc_jax_workload.py`` reports a regression's log density from
``get_jaxified_graph`` (opweave's ``jax_funcify``) and from ``model.compile_logp()``, its
posterior from numpyro's NUTS, blackjax's NUTS and PyMC's default sampler (200 draws each),
and the
effect of PyMC's ``jax_funcify.register`` override of ``CheckParameterValue``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pymc_envs import OPWEAVE_VENV, clean_environment, ensure_venv

pytestmark = pytest.mark.slow

WORKLOAD = Path(__file__).with_name("pymc_jax_workload.py")
TIMEOUT_S = 600


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    python = ensure_venv(OPWEAVE_VENV)
    done = subprocess.run(
        [str(python), "-m", "opweave.compat", str(WORKLOAD)],
        capture_output=True,
        text=True,
        env=clean_environment(),
        timeout=TIMEOUT_S,
        cwd=WORKLOAD.parent,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_pymc_gets_opweaves_jax_funcify(report: dict[str, Any]) -> None:
    assert report["jax_funcify_module"] == "opweave_jax.pytensor_link_jax.dispatch.basic"


def test_jaxified_logp_equals_compile_logp(report: dict[str, Any]) -> None:
    logp = report["logp"]
    assert len(set(logp["compile_logp"])) == 4  # four different points
    np.testing.assert_allclose(logp["jaxified"], logp["compile_logp"], rtol=1e-12)
    np.testing.assert_allclose(logp["jitted"], logp["compile_logp"], rtol=1e-12)


def test_pymcs_override_replaces_the_check(report: dict[str, Any]) -> None:
    # Without PyMC's override the check would be skipped with a warning under jax.jit.
    assert report["override"] == {"value": -3.0, "warnings": []}


@pytest.mark.parametrize("sampler", ["numpyro", "blackjax"])
def test_jax_sampler_posterior_agrees_with_the_default_sampler(
    sampler: str, report: dict[str, Any]
) -> None:
    ours, theirs = report[sampler], report["default"]
    assert ours["divergences"] == 0
    for name, sds in theirs["sd"].items():
        for i, sd in enumerate(sds):
            # 200 draws each: the two means differ by about 0.1 sd; 0.6 sd is many errors.
            diff = abs(ours["mean"][name][i] - theirs["mean"][name][i])
            assert diff < 0.6 * sd, (name, i, diff, sd)
            assert 0.5 * sd < ours["sd"][name][i] < 2.0 * sd, (name, i)
