"""The JAX side of the main table, run by ``run.py`` with the JAX venv's Python.

Usage::

    python benchmarks/jax_side.py '{"case": "rnn", "repeat": 3, "min_run_seconds": 0.05}'

Prints one JSON object: ``{"seconds": s}`` or ``{"error": "..."}``. Imports only JAX,
NumPy and the sibling modules ``timing`` and ``workloads`` (never opweave). JAX runs on
the CPU in float64 (``jax_enable_x64``); the caller sets ``JAX_PLATFORMS=cpu``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import workloads
from timing import median_time

jax.config.update("jax_enable_x64", True)


def rnn_loss(w_x: Any, w_h: Any, b: Any, x: Any, h0: Any) -> Any:
    """The RNN case's loss, with ``jax.lax.scan`` over the steps."""
    cell = partial(workloads.rnn_cell, jnp.tanh, jnp.dot)

    def step(h: Any, x_t: Any) -> tuple[Any, Any]:
        h = cell(x_t, h, w_x, w_h, b)
        return h, h

    _, hs = jax.lax.scan(step, h0, x)
    return workloads.rnn_loss(jnp.sum, hs)


def build_rnn() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``jax.jit`` of the loss and its gradients with respect to ``w_x``, ``w_h``, ``b``
    (``jax.value_and_grad``), called with the case's data already on the device. The
    timed function waits for the result (``jax.block_until_ready``)."""
    value_and_grad = jax.jit(jax.value_and_grad(rnn_loss, argnums=(0, 1, 2)))
    data = workloads.rnn_data()
    args = tuple(jax.device_put(a) for a in (data.w_x, data.w_h, data.b, data.x, data.h0))

    def call(*args: Any) -> tuple[Any, ...]:
        loss, grads = jax.block_until_ready(value_and_grad(*args))
        return (loss, *grads)

    expected = workloads.numpy_rnn(*data.args())
    if (wrong := workloads.compare_rnn(call(*args), expected)) is not None:
        raise ValueError(wrong)
    return call, args


BUILDERS: dict[str, Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]] = {
    "rnn": build_rnn,
}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Build, check and time the case; the JSON answer."""
    try:
        fn, args = BUILDERS[spec["case"]]()
        seconds = median_time(
            fn, *args, repeat=spec["repeat"], min_run_seconds=spec["min_run_seconds"]
        )
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        return {"error": f"{type(exc).__name__}: {lines[0][:80] if lines else ''}"}
    return {"seconds": seconds}


def main(argv: list[str]) -> int:
    """Run the case described by the JSON in ``argv[0]`` and print its JSON result."""
    print(json.dumps(measure(json.loads(argv[0]))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
