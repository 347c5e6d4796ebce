"""Forward sampling and Gaussian processes in PyMC, printed as JSON for the parity test.

Run with PyMC on PyTensor or through ``python -m opweave.compat``; every step fixes its
random generator, so both runs must print the same draws and values. A step that raises
reports its error instead of values.
"""

from __future__ import annotations

import json
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import arviz as az  # type: ignore[import-not-found]
import numpy as np
import pymc as pm  # type: ignore[import-not-found]

warnings.filterwarnings("ignore")


def zero_inflated_prior() -> dict[str, Any]:
    """A ``HalfNormal`` prior on ``psi`` gives mixture weights ``[1 - psi, psi]`` below 0."""
    with pm.Model() as model:
        mu = pm.Beta("mu", alpha=1, beta=1)
        psi = pm.HalfNormal("psi", sigma=1)
        pm.ZeroInflatedPoisson("suppliers", psi=psi, mu=mu, size=20)
        pm.HurdlePoisson("hurdle", psi=psi, mu=3.0, size=5)
    prior = pm.sample_prior_predictive(
        draws=200, random_seed=3, model=model, return_inferencedata=False
    )
    return {name: np.asarray(value).tolist() for name, value in prior.items()}


def gp_latent_prior() -> dict[str, Any]:
    x = np.linspace(0, 5, 12)[:, None]
    with pm.Model() as model:
        ls = pm.Gamma("ls", 2, 1)
        gp = pm.gp.Latent(cov_func=pm.gp.cov.Matern52(1, ls=ls))
        gp.prior("f", x)
        gp.conditional("fnew", np.linspace(0, 6, 5)[:, None])
    prior = pm.sample_prior_predictive(
        draws=4, random_seed=7, model=model, return_inferencedata=False
    )
    return {name: np.asarray(value).tolist() for name, value in prior.items()}


def hsgp_matern_prior() -> dict[str, Any]:
    """The Matern power spectral densities multiply ``pt.power`` of Python numbers."""
    x = np.linspace(0, 10, 20)[:, None]
    with pm.Model() as model:
        gp32 = pm.gp.HSGP(m=[8], c=1.5, cov_func=pm.gp.cov.Matern32(1, ls=2.0))
        gp32.prior("f32", X=x)
        gp52 = pm.gp.HSGP(m=[8], c=1.5, cov_func=pm.gp.cov.Matern52(1, ls=2.0))
        gp52.prior("f52", X=x)
    prior = pm.sample_prior_predictive(
        draws=3, random_seed=5, model=model, return_inferencedata=False
    )
    values = {name: np.asarray(value).tolist() for name, value in prior.items()}
    omega = np.linspace(0.1, 3.0, 7)[:, None]
    for name, cov in (("psd32", pm.gp.cov.Matern32), ("psd52", pm.gp.cov.Matern52)):
        values[name] = cov(1, ls=0.7).power_spectral_density(omega).eval().tolist()
    return values


def gp_marginal_predict() -> dict[str, Any]:
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 5, size=(15, 2))
    y = np.sin(x[:, 0]) + rng.normal(0, 0.1, 15)
    xnew = rng.uniform(0, 5, size=(6, 2))
    with pm.Model():
        cov = 1.5**2 * pm.gp.cov.ExpQuad(2, ls=[1.0, 2.0]) + pm.gp.cov.Linear(2, c=1.0) * 0.1
        gp = pm.gp.Marginal(cov_func=cov)
        gp.marginal_likelihood("y", x, y, sigma=0.3)
        mu, cov_new = gp.predict(xnew, pred_noise=True)
    return {"mu": mu.tolist(), "cov": cov_new.tolist()}


def posterior_predictive() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(3))
        pm.Categorical("c", p=w, shape=5)
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu, 1, observed=np.zeros(4))
    posterior = {
        "w": rng.dirichlet(np.ones(3), size=(2, 4)),
        "mu": rng.normal(size=(2, 4)),
    }
    draws = pm.sample_posterior_predictive(
        az.from_dict(posterior=posterior),
        model=model,
        var_names=["c", "y"],
        random_seed=9,
        return_inferencedata=False,
    )
    return {name: np.asarray(value).tolist() for name, value in draws.items()}


STEPS: dict[str, Callable[[], dict[str, Any]]] = {
    "zero_inflated_prior": zero_inflated_prior,
    "gp_latent_prior": gp_latent_prior,
    "hsgp_matern_prior": hsgp_matern_prior,
    "gp_marginal_predict": gp_marginal_predict,
    "posterior_predictive": posterior_predictive,
}


def main() -> None:
    report: dict[str, Any] = {}
    for name, step in STEPS.items():
        try:
            report[name] = {"ok": True, "values": step()}
        except Exception as error:  # reported, so that the test shows it
            report[name] = {"ok": False, "error": repr(error), "traceback": traceback.format_exc()}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
