"""A typical PyMC workload, step by step, printed as JSON (one run per environment).

Run with PyMC on PyTensor (``python pymc_workload.py``) and with PyMC on opweave
(``python -m opweave.compat pymc_workload.py``); ``test_pymc_on_opweave.py`` compares the
two reports. Every step is independent: one that fails is reported with its error and the
others still run. Values are plain lists of floats so the JSON carries them exactly
(``repr`` of a float round-trips).
"""

from __future__ import annotations

import json
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

STEPS: dict[str, Callable[[], dict[str, Any]]] = {}


def step(function: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """Register ``function`` as a step of the workload, under its name."""
    STEPS[function.__name__] = function
    return function


def floats(value: Any) -> list[float]:
    """``value`` flattened to a list of Python floats."""
    return [float(v) for v in np.asarray(value, dtype="float64").ravel()]


def point_values(point: dict[str, Any]) -> dict[str, list[float]]:
    return {name: floats(value) for name, value in sorted(point.items())}


def regression_model() -> Any:
    import pymc as pm

    rng = np.random.default_rng(42)
    x = rng.normal(size=50)
    y = 1.5 + 2.0 * x + rng.normal(scale=0.5, size=50)
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0.0, 10.0)
        slope = pm.Normal("slope", 0.0, 10.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", intercept + slope * x, sigma, observed=y)
    return model


def eight_schools() -> Any:
    import pymc as pm

    effects = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sigmas = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta_raw = pm.Normal("theta_raw", 0.0, 1.0, shape=8)
        theta = pm.Deterministic("theta", mu + tau * theta_raw)
        pm.Normal("obs", theta, sigmas, observed=effects)
    return model


def one_chain(draws: int, seed: int) -> Any:
    """NUTS in the model of the context: one chain, as many tuning steps as draws."""
    import pymc as pm

    return pm.sample(
        draws=draws,
        tune=draws,
        chains=1,
        cores=1,
        random_seed=seed,
        progressbar=False,
        compute_convergence_checks=False,
    )


def logp_dlogp(model: Any) -> dict[str, Any]:
    point = model.initial_point()
    logp = model.compile_logp()
    dlogp = model.compile_dlogp()
    shifted = {name: value + 0.25 for name, value in point.items()}
    return {
        "logp": floats(logp(point)),
        "dlogp": floats(dlogp(point)),
        "logp_shifted": floats(logp(shifted)),
        "dlogp_shifted": floats(dlogp(shifted)),
        "point_logps": {k: floats(v) for k, v in model.point_logps(point).items()},
    }


@step
def import_pymc() -> dict[str, Any]:
    import pymc

    return {"version": pymc.__version__}


@step
def regression_logp() -> dict[str, Any]:
    return logp_dlogp(regression_model())


@step
def find_map() -> dict[str, Any]:
    import pymc as pm

    with regression_model():
        estimate = pm.find_MAP(progressbar=False)
    return {"map": point_values(estimate)}


@step
def nuts() -> dict[str, Any]:

    with regression_model():
        trace = one_chain(draws=300, seed=7)
    posterior = trace.posterior
    return {
        "mean": {name: floats(posterior[name].mean()) for name in ("intercept", "slope", "sigma")},
        "sd": {name: floats(posterior[name].std()) for name in ("intercept", "slope", "sigma")},
        "divergences": int(trace.sample_stats["diverging"].sum()),
        "first_draws": floats(posterior["slope"].values[0, :5]),
    }


@step
def eight_schools_logp() -> dict[str, Any]:
    return logp_dlogp(eight_schools())


@step
def eight_schools_nuts() -> dict[str, Any]:

    with eight_schools():
        trace = one_chain(draws=200, seed=3)
    return {
        "mu_mean": floats(trace.posterior["mu"].mean()),
        "tau_mean": floats(trace.posterior["tau"].mean()),
        "divergences": int(trace.sample_stats["diverging"].sum()),
    }


@step
def prior_predictive() -> dict[str, Any]:
    import pymc as pm

    with regression_model():
        prior = pm.sample_prior_predictive(draws=20, random_seed=11)
    return {
        name: floats(prior.prior[name].values[0, :5]) for name in ("intercept", "slope", "sigma")
    } | {"y": floats(prior.prior_predictive["y"].values[0, :3, :4])}


@step
def posterior_predictive() -> dict[str, Any]:
    import pymc as pm

    with regression_model():
        trace = one_chain(draws=50, seed=5)
        predictive = pm.sample_posterior_predictive(trace, random_seed=13, progressbar=False)
    y = predictive.posterior_predictive["y"]
    return {"y_first": floats(y.values[0, :3, :4]), "y_mean": floats(y.mean())}


@step
def gaussian_random_walk() -> dict[str, Any]:
    import pymc as pm

    with pm.Model() as model:
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.GaussianRandomWalk(
            "walk", mu=0.1, sigma=sigma, init_dist=pm.Normal.dist(0.0, 1.0), steps=20
        )
    values = logp_dlogp(model)
    draws = pm.draw(model["walk"], draws=3, random_seed=17)
    return values | {"draws": floats(draws[:, :6])}


@step
def custom_dist_scan_ar1() -> dict[str, Any]:
    import pymc as pm
    import pytensor
    from pymc.pytensorf import collect_default_updates

    def ar1_dist(init: Any, rho: Any, sigma: Any, size: Any) -> Any:
        def transition(previous: Any, rho: Any, sigma: Any) -> Any:
            following = rho * previous + pm.Normal.dist(0.0, sigma)
            return following, collect_default_updates([following])

        walk, _ = pytensor.scan(
            transition,
            outputs_info=[init],
            non_sequences=[rho, sigma],
            n_steps=15,
            strict=True,
        )
        return walk

    observed = np.linspace(-1.0, 1.0, 15)
    with pm.Model() as model:
        rho = pm.Uniform("rho", -1.0, 1.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.CustomDist("ar1", np.float64(0.5), rho, sigma, dist=ar1_dist, observed=observed)
    return logp_dlogp(model)


@step
def mixture_with_math() -> dict[str, Any]:
    import pymc as pm

    data = np.array([-2.1, -1.9, 0.1, 2.2, 1.8, 2.5, -2.4])
    with pm.Model() as model:
        weights = pm.Dirichlet("w", a=np.ones(2))
        means = pm.Normal("means", mu=[-2.0, 2.0], sigma=1.0, shape=2)
        pm.NormalMixture("y", w=weights, mu=means, sigma=0.5, observed=data)
        pm.Deterministic("soft", pm.math.logsumexp(means) + pm.math.sigmoid(means[0]))
        pm.Potential("pot", pm.math.log1mexp(-pm.math.exp(means[1]) - 1.0))
    return logp_dlogp(model)


@step
def lkj_mvnormal() -> dict[str, Any]:
    import pymc as pm

    observed = np.array([[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [0.0, 0.0, 2.0]])
    with pm.Model() as model:
        # A scalar size reaches the random variables of the LKJ distribution.
        chol, _, _ = pm.LKJCholeskyCov(
            "chol", n=3, eta=2.0, sd_dist=pm.Exponential.dist(1.0, shape=3), compute_corr=True
        )
        mu = pm.Normal("mu", 0.0, 1.0, shape=3)
        pm.MvNormal("y", mu=mu, chol=chol, observed=observed)
    return logp_dlogp(model)


@step
def gp_marginal() -> dict[str, Any]:
    import pymc as pm

    x = np.linspace(0.0, 1.0, 10)[:, None]
    with pm.Model() as model:
        ell = pm.Gamma("ell", 2.0, 4.0)
        eta = pm.HalfNormal("eta", 1.0)
        # A tensor times a covariance function: the tensor defers to it.
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ell) + pm.gp.cov.Matern52(1, ell)
        gp = pm.gp.Marginal(cov_func=cov)
        sigma = pm.HalfNormal("sigma", 0.5)
        gp.marginal_likelihood("y", X=x, y=np.sin(6.0 * x).ravel(), sigma=sigma)
    return logp_dlogp(model)


@step
def advi_fit() -> dict[str, Any]:
    import pymc as pm

    with pm.Model():
        mu = pm.Normal("mu", 0.0, 10.0)
        sigma = pm.HalfNormal("sigma", 5.0)
        pm.Normal("y", mu, sigma, observed=np.array([1.2, 0.8, 1.9, 1.4, 0.3]))
        approx = pm.fit(n=300, random_seed=3, progressbar=False)
    return {"mean": floats(approx.mean.eval()), "std": floats(approx.std.eval())}


@step
def log_likelihood() -> dict[str, Any]:
    import arviz as az
    import pymc as pm

    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=np.array([1.2, 0.8, 1.9]))
    posterior = az.from_dict(posterior={"mu": np.linspace(-1.0, 2.0, 8)[None, :]})
    # Rebuilds the model's graph around deep copies of its shared variables.
    pm.compute_log_likelihood(posterior, model=model, progressbar=False)
    return {"y": floats(posterior.log_likelihood["y"].values)}


@step
def smc() -> dict[str, Any]:
    import pymc as pm

    with pm.Model():
        mu = pm.Normal("mu", 0.0, 3.0)
        pm.Normal("y", mu, 1.0, observed=np.array([0.5, 1.2, 0.9]))
        trace = pm.sample_smc(
            draws=300, chains=1, cores=1, random_seed=5, progressbar=False,
            compute_convergence_checks=False,
        )  # fmt: skip
    return {"mu_mean": floats(trace.posterior["mu"].mean())}


def main(names: list[str]) -> None:
    warnings.simplefilter("ignore")
    report: dict[str, Any] = {}
    for name in names or list(STEPS):
        start = time.perf_counter()
        try:
            report[name] = {"ok": True, "values": STEPS[name]()}
        except BaseException as error:  # every failure is part of the report
            report[name] = {
                "ok": False,
                "error": f"{type(error).__name__}: {error}",
                "traceback": traceback.format_exc(limit=-6),
            }
        report[name]["seconds"] = time.perf_counter() - start
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
