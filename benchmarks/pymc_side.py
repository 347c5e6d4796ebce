"""One PyMC measurement, run in a PyMC venv (on PyTensor, or on opweave through the alias).

Usage: ``python pymc_side.py`` (or ``python -m opweave.compat pymc_side.py``) with the
compile directory set by the caller (``PYTENSOR_FLAGS``/``OPWEAVE_FLAGS``). Prints one JSON
line: the seconds to import PyMC, to build the linear-regression model of ``pymc_bench.py``
and compile its logp and dlogp (with their first calls), the median time of one logp and of
one dlogp call, and the wall time of a NUTS run (one chain, 500 tuning and 500 draws).
"""

from __future__ import annotations

import json
import time
import timeit
import warnings

import numpy as np

start = time.perf_counter()
import pymc as pm  # noqa: E402 - the import is part of what is measured

import_seconds = time.perf_counter() - start


def regression_model() -> pm.Model:
    rng = np.random.default_rng(42)
    x = rng.normal(size=100)
    y = 1.5 + 2.0 * x + rng.normal(scale=0.5, size=100)
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0.0, 10.0)
        slope = pm.Normal("slope", 0.0, 10.0)
        sigma = pm.HalfNormal("sigma", 1.0)
        pm.Normal("y", intercept + slope * x, sigma, observed=y)
    return model


def per_call(function: object, point: dict, repeat: int = 7) -> float:
    timer = timeit.Timer(lambda: function(point))
    number, _ = timer.autorange()
    return min(timer.repeat(repeat=repeat, number=number)) / number


def main() -> None:
    warnings.simplefilter("ignore")
    model = regression_model()
    point = model.initial_point()
    start = time.perf_counter()
    logp = model.compile_logp()
    dlogp = model.compile_dlogp()
    logp(point)
    dlogp(point)
    compile_seconds = time.perf_counter() - start
    result = {
        "import": import_seconds,
        "compile": compile_seconds,
        "logp": per_call(logp, point),
        "dlogp": per_call(dlogp, point),
    }
    start = time.perf_counter()
    with model:
        pm.sample(
            draws=500,
            tune=500,
            chains=1,
            cores=1,
            random_seed=1,
            progressbar=False,
            compute_convergence_checks=False,
        )
    result["nuts"] = time.perf_counter() - start
    print(json.dumps(result))


if __name__ == "__main__":
    main()
