"""Small ``pymc.dims`` models, printed as JSON for the parity test.

Run with PyMC on PyTensor or through ``python -m opweave.compat``. Each step builds one
model with named dimensions and reports its initial point, the model's log density and
gradient there and at a shifted point, the dims of its variables and prior draws taken with
a fixed random generator, so both runs must print the same values. A step that raises
reports its error instead of values.
"""

from __future__ import annotations

import json
import traceback
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pymc as pm  # type: ignore[import-not-found]

warnings.filterwarnings("ignore")

import pymc.dims as pmd  # type: ignore[import-not-found]  # noqa: E402  (after the filter)

DRAWS = 3
RANDOM_STATE = 20251208


def listed(value: Any) -> Any:
    """``value`` as nested lists of floats (JSON)."""
    return np.asarray(value, dtype="float64").tolist()


def model_report(model: Any) -> dict[str, Any]:
    """Initial point, logp and dlogp at it and at a shifted point, dims and prior draws."""
    point = model.initial_point()
    shifted = {
        name: value + 0.1 * np.arange(1, np.size(value) + 1).reshape(np.shape(value)) / 7
        for name, value in point.items()
    }
    logp = model.compile_logp()
    dlogp = model.compile_dlogp()
    variables = model.free_RVs + model.deterministics + model.observed_RVs
    draws = pm.draw(variables, DRAWS, RANDOM_STATE)  # draws, then the random state
    return {
        "initial_point": {name: listed(value) for name, value in point.items()},
        "initial_point_order": list(point),
        "logp": listed(logp(point)),
        "dlogp": listed(dlogp(point)),
        "logp_shifted": listed(logp(shifted)),
        "dlogp_shifted": listed(dlogp(shifted)),
        "dims": {var.name: list(getattr(var.type, "dims", ())) for var in variables},
        "draws": {var.name: listed(draw) for var, draw in zip(variables, draws, strict=True)},
    }


def scalar_distributions() -> dict[str, Any]:
    """Scalar distributions with dims, an implied transpose and xtensor math."""
    coords = {"a": range(3), "b": range(4)}
    with pm.Model(coords=coords) as model:
        x = pmd.Normal("x", mu=1, dims=("a", "b"))
        sigma = pmd.HalfNormal("sigma", sigma=2, dims=("a",))
        rate = pmd.Gamma("rate", alpha=2, beta=3)
        w = pmd.Beta("w", alpha=2, beta=5, dims=("b",))
        pmd.Normal("y", mu=x * 2 + w, sigma=sigma * rate, dims=("b", "a"))
        pmd.Deterministic("x_total", pmd.math.exp(x / 3).sum("b") + pmd.math.log(sigma))
        pmd.Deterministic("x_std", x.std("a") * w)
        upper = pmd.math.as_xtensor(np.array([1.0, 2.0, 3.0]), dims=("a",))
        pmd.Uniform("u", lower=-1, upper=upper)
        pmd.TruncatedNormal("tn", mu=0.5, sigma=2, lower=-1, upper=2, dims=("b",))
        pmd.StudentT("st", nu=4, mu=x.mean("b"), sigma=1)
        pmd.Laplace("lp", mu=0, b=2, dims=("b", "a"))
    return model_report(model)


def zero_sum_normal() -> dict[str, Any]:
    """``ZeroSumNormal`` with one and with two core dims, and a batched sigma."""
    coords = {"time": range(5), "item": range(3)}
    with pm.Model(coords=coords) as model:
        scale = pmd.HalfNormal("scale", dims=("time",))
        pmd.ZeroSumNormal("zsn_item", sigma=scale, core_dims="item", dims=("time", "item"))
        pmd.ZeroSumNormal("zsn_time", core_dims="time", dims=("time", "item"))
        pmd.ZeroSumNormal("zsn_both", sigma=2.0, core_dims=("item", "time"))
    return model_report(model)


def mv_normal() -> dict[str, Any]:
    """``MvNormal`` with a Cholesky factor from ``LKJCholeskyCov`` and core dims, a
    ``Dirichlet`` and a ``Categorical`` over core dims."""
    coords = {"batch": range(2), "core1": range(3), "core2": range(3)}
    with pm.Model(coords=coords) as model:
        mu = pmd.Normal("mu", dims=("batch", "core1"))
        chol, _, _ = pm.LKJCholeskyCov("chol", eta=2, n=3, sd_dist=pm.Exponential.dist(1))
        chol_x = pmd.math.as_xtensor(chol, dims=("core1", "core2"))
        x = pmd.MvNormal("x", mu, chol=chol_x, core_dims=("core1", "core2"))
        pmd.MvNormal("x_t", mu, chol=chol_x, core_dims=("core1", "core2"), dims=("core1", ...))
        pmd.Deterministic("x_dot", pmd.dot(x, chol_x, dim="core1"))
        alpha = pmd.math.as_xtensor(np.array([1.0, 2.0, 3.0]), dims=("core1",))
        weights = pmd.Dirichlet("weights", a=alpha, core_dims="core1", dims=("batch", "core1"))
        pmd.Categorical("label", p=weights, core_dims="core1")
    return model_report(model)


def observed_spline() -> dict[str, Any]:
    """A piecewise-linear regression on ``pmd.Data`` with softmax, cumsum, concat, diff and
    integer-array ``isel``."""
    rng = np.random.default_rng(4)
    n_obs, n_knots = 40, 6
    x_np = np.linspace(0, 10, n_obs)
    y_np = np.sin(x_np / 3) + rng.normal(0, 0.2, size=n_obs)
    group_np = rng.choice(3, size=n_obs)
    coords = {"group": range(3), "knot": range(n_knots), "obs": range(n_obs)}
    with pm.Model(coords=coords) as model:
        x = pmd.Data("x", x_np, dims="obs")
        y = pmd.Data("y", y_np, dims="obs")
        knots = pmd.Data("knots", np.linspace(0, 10, n_knots), dims=("knot",))
        group = pmd.math.as_xtensor(group_np, dims=("obs",))
        sigma = pmd.HalfCauchy("sigma", beta=1)
        beta0 = pmd.HalfNormal("beta_0", sigma=2, dims=("group",))
        z = pmd.Normal("z", dims=("group", "knot"))
        delta = pmd.math.softmax(z, dim="knot")
        slopes = 1 - delta.isel(knot=slice(None, -1)).cumsum("knot")
        spline = pmd.concat([beta0, beta0 * slopes], dim="knot")
        beta = pm.Deterministic("beta", pmd.concat([beta0, spline.diff("knot")], dim="knot"))
        design = pmd.math.maximum(0, x - knots)
        mu = (design * beta.isel(group=group)).sum("knot")
        pmd.Normal("y_obs", mu=mu, sigma=sigma, observed=y)
    return model_report(model)


STEPS: dict[str, Callable[[], dict[str, Any]]] = {
    "scalar_distributions": scalar_distributions,
    "zero_sum_normal": zero_sum_normal,
    "mv_normal": mv_normal,
    "observed_spline": observed_spline,
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
