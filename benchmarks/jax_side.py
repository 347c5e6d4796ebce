"""The JAX side of the main table, run by ``run.py`` with the JAX venv's Python.

Usage::

    python benchmarks/jax_side.py '{"case": "rnn", "repeat": 3, "min_run_seconds": 0.05}'

The cases are those of ``BUILDERS``; ``fused`` and ``sum_squares`` also take ``"n"``,
``mlp`` takes ``"dtype"`` (``"float64"`` by default). Prints one JSON object:
``{"seconds": s}`` or ``{"error": "..."}``. Imports only JAX, NumPy and the sibling
modules ``timing`` and ``workloads`` (never opweave). JAX runs on the CPU (the caller sets
``JAX_PLATFORMS=cpu``) with ``jax_enable_x64``, so the float64 cases run in float64 and
the float32 MLP in float32. Every case is ``jax.jit`` of the workload's code, its arrays
put on the device once; the timed call waits for the result (``jax.block_until_ready``),
and its first result is checked against NumPy's before timing (``wrong result: ...``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import workloads
from timing import median_time

jax.config.update("jax_enable_x64", True)

#: A case's timed function and the arguments to call it with.
Built = tuple[Callable[..., Any], tuple[Any, ...]]


def jitted_and_checked(fn: Callable[..., Any], reference: Callable[..., Any], args: tuple) -> Built:
    """``jax.jit(fn)`` waiting for its result, called with ``args`` put on the device;
    ``ValueError`` when its result is not ``allclose`` to ``reference(*args)`` (NumPy)."""
    jitted = jax.jit(fn)

    def call(*args: Any) -> Any:
        return jax.block_until_ready(jitted(*args))

    on_device = tuple(jax.device_put(a) for a in args)
    got, expected = np.asarray(call(*on_device)), np.asarray(reference(*args))
    if got.dtype != expected.dtype or not np.allclose(got, expected, rtol=1e-10, atol=1e-12):
        raise ValueError(
            f"wrong result: {got.dtype} {got.ravel()[:2]}, expected {expected.ravel()[:2]}"
        )
    return call, on_device


def build_overhead(spec: dict[str, Any]) -> Built:
    """``(a + b) * c`` jitted, called with Python floats (JAX's dispatch overhead)."""
    jitted = jax.jit(workloads.python_overhead)

    def call(*args: float) -> Any:
        return jax.block_until_ready(jitted(*args))

    floats = (1.0, 2.0, 3.0)
    if float(call(*floats)) != workloads.python_overhead(*floats):
        raise ValueError("wrong result: (1 + 2) * 3 is not 9")
    return call, floats


def build_fused(spec: dict[str, Any]) -> Built:
    """``exp(x) * y + z`` on float64 vectors of length ``spec["n"]``."""
    fn = partial(workloads.fused, jnp.exp)
    return jitted_and_checked(
        fn, partial(workloads.fused, np.exp), workloads.fused_inputs(spec["n"])
    )


def build_sum_squares(spec: dict[str, Any]) -> Built:
    """``sum(x ** 2)`` on a float64 vector of length ``spec["n"]``."""
    x = workloads.sum_squares_input(spec["n"])
    return jitted_and_checked(lambda v: jnp.sum(v**2), lambda v: np.sum(v**2), (x,))


def build_chain(spec: dict[str, Any]) -> Built:
    """The chain of elementwise Ops, in one ``jit``."""
    fn, reference = partial(workloads.chain, jnp.tanh), partial(workloads.chain, np.tanh)
    return jitted_and_checked(fn, reference, (workloads.chain_input(),))


def build_mlp(spec: dict[str, Any]) -> Built:
    """One SGD step of the MLP in ``spec["dtype"]``: ``jax.jit`` of ``jax.value_and_grad``
    of :func:`workloads.mlp_loss` and the update, the parameters donated and replaced at
    each call (as opweave's and PyTensor's shared variables are updated in place). The
    first loss is checked against the hand-written NumPy step's (``ValueError``)."""
    dtype = spec.get("dtype", "float64")
    data = workloads.mlp_data(dtype)
    loss_fn = partial(workloads.mlp_loss, jax.nn.log_softmax, jnp)

    @partial(jax.jit, donate_argnums=0)
    def step(params: list[Any], x: Any, t: Any) -> tuple[Any, list[Any]]:
        loss, grads = jax.value_and_grad(lambda p: loss_fn(x, t, *p))(params)
        lr = workloads.LEARNING_RATE
        return loss, [p - lr * g for p, g in zip(params, grads, strict=True)]

    params = [jax.device_put(p) for p in data.params()]

    def call(x: Any, t: Any) -> Any:
        loss, params[:] = step(params, x, t)
        return jax.block_until_ready(loss)

    args = tuple(jax.device_put(a) for a in (data.x, data.onehot))
    expected = workloads.numpy_mlp_step(data)(data.x, data.onehot)
    if (wrong := workloads.compare_mlp_loss(call(*args), expected, dtype)) is not None:
        raise ValueError(wrong)
    return call, args


def rnn_loss(w_x: Any, w_h: Any, b: Any, x: Any, h0: Any) -> Any:
    """The RNN case's loss, with ``jax.lax.scan`` over the steps."""
    cell = partial(workloads.rnn_cell, jnp.tanh, jnp.dot)

    def step(h: Any, x_t: Any) -> tuple[Any, Any]:
        h = cell(x_t, h, w_x, w_h, b)
        return h, h

    _, hs = jax.lax.scan(step, h0, x)
    return workloads.rnn_loss(jnp.sum, hs)


def build_rnn(spec: dict[str, Any]) -> Built:
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


BUILDERS: dict[str, Callable[[dict[str, Any]], Built]] = {
    "overhead": build_overhead,
    "fused": build_fused,
    "sum_squares": build_sum_squares,
    "chain": build_chain,
    "mlp": build_mlp,
    "rnn": build_rnn,
}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Build, check and time the case; the JSON answer."""
    try:
        fn, args = BUILDERS[spec["case"]](spec)
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
