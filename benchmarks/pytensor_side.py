"""The PyTensor side of the benchmarks, run by ``run.py`` with the PyTensor venv's Python.

Usage::

    python benchmarks/pytensor_side.py '{"case": "fused", "n": 1000, "modes": ["C"], ...}'

Prints one JSON object: ``{"seconds": {mode: seconds}, "errors": {mode: message}}``, or
``{"info": {...}}`` for ``"case": "info"``. Imports only PyTensor, NumPy and the sibling
modules ``timing`` and ``workloads`` (never opweave). The modes are PyTensor's predefined
mode names: ``CVM`` and ``C`` (its C backend) and ``NUMBA`` (its default since 3.0).
"""

from __future__ import annotations

import json
import platform
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

_START = time.perf_counter()
warnings.filterwarnings("ignore", message=".*BLAS.*")

import numpy as np  # noqa: E402
import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
import workloads  # noqa: E402
from pytensor.tensor.special import log_softmax  # noqa: E402
from timing import median_time  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - _START

# A case builds, for one mode, the compiled function and the arguments to time it with.
Builder = Callable[[dict[str, Any], str], tuple[Callable[..., Any], tuple[Any, ...]]]


def build_overhead(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """``(a + b) * c`` on dscalars, called with Python floats."""
    a, b, c = pt.dscalars("a", "b", "c")
    return pytensor.function([a, b, c], (a + b) * c, mode=mode), (1.0, 2.0, 3.0)


def build_fused(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """``exp(x) * y + z`` on float64 vectors of length ``spec["n"]``."""
    x, y, z = pt.dvectors("x", "y", "z")
    f = pytensor.function([x, y, z], workloads.fused(pt.exp, x, y, z), mode=mode)
    return f, workloads.fused_inputs(spec["n"])


def build_sum_squares(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """``sum(x ** 2)`` on a float64 vector of length ``spec["n"]``."""
    x = pt.dvector("x")
    f = pytensor.function([x], pt.sum(x**2), mode=mode)
    return f, (workloads.sum_squares_input(spec["n"]),)


def build_chain(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """The chain of elementwise Ops."""
    x = pt.dvector("x")
    f = pytensor.function([x], workloads.chain(pt.tanh, x), mode=mode)
    return f, (workloads.chain_input(),)


def build_mlp(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """One SGD step of the MLP in ``spec["dtype"]`` (float64 by default), parameters as
    shared variables updated in place; the first step's loss is checked against the
    hand-written NumPy one before timing (``ValueError`` when wrong)."""
    dtype = spec.get("dtype", "float64")
    data = workloads.mlp_data(dtype)
    params = [pytensor.shared(p) for p in data.params()]
    x, t = pt.matrix("x", dtype=dtype), pt.matrix("t", dtype=dtype)
    loss = workloads.mlp_loss(log_softmax, pt, x, t, *params)
    grads = pytensor.grad(loss, params)
    lr = np.asarray(workloads.LEARNING_RATE, dtype=dtype)
    updates = [(p, p - lr * g) for p, g in zip(params, grads, strict=True)]
    f = pytensor.function([x, t], loss, updates=updates, mode=mode)
    args = (data.x, data.onehot)
    expected = workloads.numpy_mlp_step(data)(*args)
    if (wrong := workloads.compare_mlp_loss(f(*args), expected, dtype)) is not None:
        raise ValueError(wrong)
    return f, args


def build_rnn(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """The RNN case with ``pytensor.scan`` and ``pytensor.grad``; its result is checked
    against the hand-written NumPy one before timing (``ValueError`` when wrong)."""
    x = pt.dtensor3("x")
    w_x, w_h = pt.dmatrices("w_x", "w_h")
    b, h0 = pt.dvector("b"), pt.dmatrix("h0")
    hs = pytensor.scan(
        partial(workloads.rnn_cell, pt.tanh, pt.dot),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w_x, w_h, b],
        return_updates=False,
    )
    loss = workloads.rnn_loss(pt.sum, hs)
    grads = pytensor.grad(loss, [w_x, w_h, b])
    f = pytensor.function([x, w_x, w_h, b, h0], [loss, *grads], mode=mode)
    args = workloads.rnn_data().args()
    if (wrong := workloads.compare_rnn(f(*args), workloads.numpy_rnn(*args))) is not None:
        raise ValueError(wrong)
    return f, args


def build_compile_graph(spec: dict[str, Any], mode: str) -> tuple[Callable[..., Any], tuple]:
    """The small elementwise graph of the compile-time case, with tiny inputs."""
    x, y, z = pt.dvectors("x", "y", "z")
    f = pytensor.function([x, y, z], workloads.fused(pt.exp, x, y, z), mode=mode)
    return f, (np.ones(3), np.ones(3), np.ones(3))


BUILDERS: dict[str, Builder] = {
    "overhead": build_overhead,
    "fused": build_fused,
    "sum_squares": build_sum_squares,
    "chain": build_chain,
    "mlp": build_mlp,
    "rnn": build_rnn,
}


def describe(exc: BaseException) -> str:
    """``Type: first line of the message``, or where it was raised when it has none.

    PyTensor's C linker raises a bare ``NotImplementedError`` from an Op's ``c_code``
    (``Dot22`` without BLAS): the innermost frame then names the Op and the method.
    """
    lines = str(exc).strip().splitlines()
    if lines:
        return f"{type(exc).__name__}: {lines[0]}"
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return type(exc).__name__
    frame = tb.tb_frame
    owner = frame.f_locals.get("self")
    where = f"{type(owner).__name__}.{frame.f_code.co_name}" if owner else frame.f_code.co_name
    return f"{type(exc).__name__} in {where}"


def time_modes(spec: dict[str, Any]) -> dict[str, Any]:
    """Compile the case in each mode and time it; failures are reported per mode."""
    seconds: dict[str, float] = {}
    errors: dict[str, str] = {}
    for mode in spec["modes"]:
        try:
            fn, args = BUILDERS[spec["case"]](spec, mode)
            seconds[mode] = median_time(
                fn, *args, repeat=spec["repeat"], min_run_seconds=spec["min_run_seconds"]
            )
        except Exception as exc:
            errors[mode] = describe(exc)
    return {"seconds": seconds, "errors": errors}


def compile_once(spec: dict[str, Any]) -> dict[str, Any]:
    """Seconds to compile the small graph in ``spec["modes"][0]`` and call it once.

    Meant for a fresh process: ``run.py`` chooses the ``base_compiledir``. The time to
    import PyTensor is reported apart (``import_seconds``), measured by ``main``.
    """
    (mode,) = spec["modes"]
    try:
        start = time.perf_counter()
        fn, args = build_compile_graph(spec, mode)
        fn(*args)
        return {"seconds": {mode: time.perf_counter() - start}, "errors": {}}
    except Exception as exc:
        return {"seconds": {}, "errors": {mode: describe(exc)}}


def info() -> dict[str, Any]:
    """Versions and the configuration that matters for the numbers."""
    import numba

    config = pytensor.config
    return {
        "info": {
            "pytensor": pytensor.__version__,
            "numpy": np.__version__,
            "numba": numba.__version__,
            "python": platform.python_version(),
            "cxx": config.cxx,
            "blas__ldflags": config.blas__ldflags,
            "default linker": config.linker,
        }
    }


def main(argv: list[str]) -> int:
    """Run the case described by the JSON in ``argv[0]`` and print its JSON result."""
    spec = json.loads(argv[0])
    if spec["case"] == "info":
        result = info()
    elif spec["case"] == "compile":
        result = compile_once(spec)
    else:
        result = time_modes(spec)
    result["import_seconds"] = IMPORT_SECONDS
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
