"""PyMC's JAX path on opweave: run with ``python -m opweave.compat pymc_jax_workload.py`` in
``.pymc-venv``; prints a JSON report that ``test_pymc_jax.py`` checks.

A linear regression: its log density from ``pymc.sampling.jax.get_jaxified_graph`` (opweave's
``jax_funcify``) and from ``model.compile_logp()`` at a few points, its posterior sampled by
numpyro's NUTS (``nuts_sampler="numpyro"``), by blackjax's (``nuts_sampler="blackjax"``) and
by PyMC's default sampler, and a
``CheckParameterValue`` whose lowering PyMC overrides with ``jax_funcify.register``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import jax
import numpy as np
import pymc as pm  # type: ignore[import-not-found]
import pytensor.tensor as pt  # type: ignore[import-not-found]
from pymc.logprob.utils import CheckParameterValue  # type: ignore[import-not-found]
from pymc.sampling.jax import get_jaxified_graph  # type: ignore[import-not-found]
from pytensor.link.jax.dispatch import jax_funcify  # type: ignore[import-not-found]

SAMPLING = {"chains": 1, "draws": 200, "tune": 200, "random_seed": 11, "progressbar": False}


def regression() -> pm.Model:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 2))
    y = 1.0 + x @ np.array([2.0, -1.0]) + rng.normal(scale=0.5, size=50)
    with pm.Model() as model:
        a = pm.Normal("a", 0, 10)
        b = pm.Normal("b", 0, 10, shape=2)
        s = pm.HalfNormal("s", 1)
        pm.Normal("y", a + pm.math.dot(x, b), s, observed=y)
    return model


def logp_values(model: pm.Model) -> dict[str, list[float]]:
    logp = model.compile_logp()
    jaxified = get_jaxified_graph(inputs=model.value_vars, outputs=[model.logp()])
    rng = np.random.default_rng(2)
    points = [model.initial_point()]
    for _ in range(3):
        points.append({k: v + rng.normal(size=np.shape(v)) for k, v in points[0].items()})
    jitted = jax.jit(jaxified)
    return {
        "compile_logp": [float(logp(p)) for p in points],
        "jaxified": [float(jaxified(*[p[v.name] for v in model.value_vars])[0]) for p in points],
        "jitted": [float(jitted(*[p[v.name] for v in model.value_vars])[0]) for p in points],
    }


def posterior(model: pm.Model, **kwargs: Any) -> dict[str, Any]:
    with model:
        idata = pm.sample(**SAMPLING, **kwargs)
    post = idata.posterior
    return {
        "mean": {k: np.atleast_1d(post[k].mean(("chain", "draw")).values).tolist() for k in "abs"},
        "sd": {k: np.atleast_1d(post[k].std(("chain", "draw")).values).tolist() for k in "abs"},
        "divergences": int(idata.sample_stats["diverging"].sum()),
    }


def override() -> dict[str, Any]:
    """A run-time parameter check under ``jax.jit``: PyMC's override passes the value on."""
    x = pt.dscalar("x")
    checked = CheckParameterValue("x > 0")(x, pt.gt(x, 0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn = get_jaxified_graph(inputs=[x], outputs=[checked * 2])
        value = float(jax.jit(fn)(-1.5)[0])
    return {"value": value, "warnings": [str(w.message) for w in caught]}


def main() -> None:
    model = regression()
    report = {
        "jax_funcify_module": type(jax_funcify).__module__,
        "logp": logp_values(model),
        "override": override(),
        "numpyro": posterior(model, nuts_sampler="numpyro"),
        "blackjax": posterior(model, nuts_sampler="blackjax"),
        "default": posterior(model),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
