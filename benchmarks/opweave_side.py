"""The opweave side of the benchmarks: the graphs, compiled and timed with each linker.

A linker that cannot compile a graph gives a :class:`~report.NotAvailable` cell instead
of stopping the run: ``no C for <Op>`` when the ``c`` linker meets an Op without C code
(``MissingCCodeError``), the exception's name and message otherwise.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import workloads
from report import NotAvailable, Outcome
from timing import Settings, median_time

import opweave
import opweave.tensor as ot
from opweave.compile import Mode

try:
    from opweave_c.contract import NoCCode
except ImportError:  # opweave-c not installed: no linker can raise it

    class NoCCode(Exception):  # type: ignore[no-redef]
        """Stand-in for ``opweave_c.contract.NoCCode``."""


@dataclass
class Graph:
    """What ``opweave.function`` compiles: inputs, outputs and shared-variable updates."""

    inputs: list[Any]
    outputs: Any
    updates: list[tuple[Any, Any]] = field(default_factory=list)


#: Suffix of a column name that compiles with ``config.openmp`` on (``c+openmp``).
OPENMP = "+openmp"
#: Suffix of a column name that compiles with ``config.blas__follow_load`` on (``c+load``).
FOLLOW_LOAD = "+load"


def compile_graph(graph: Graph, linker: str) -> Any:
    """``opweave.function`` of ``graph`` with ``linker`` (``<linker>+openmp``: with
    ``config.openmp`` on; ``<linker>+load``: with ``config.blas__follow_load`` on)."""
    follow = linker.endswith(FOLLOW_LOAD)
    linker = linker.removesuffix(FOLLOW_LOAD)
    threads = linker.endswith(OPENMP)
    with opweave.config.change_flags(openmp=threads, blas__follow_load=follow):
        return opweave.function(
            graph.inputs,
            graph.outputs,
            updates=graph.updates,
            mode=Mode(linker=linker.removesuffix(OPENMP)),
        )


def short_op_name(name: str, limit: int = 48) -> str:
    """``Elemwise{Composite{...}}`` for ``Elemwise{Composite{((i0 + i1) * i2)}}``.

    Keeps two levels of braces, so long fused expressions do not flood the table.
    """
    out, depth = [], 0
    for char in name:
        if char == "}":
            depth -= 1
        if depth < 2:
            out.append(char)
        elif out[-1] != "…":
            out.append("…")
        if char == "{":
            depth += 1
    short = "".join(out)
    return short if len(short) <= limit else short[: limit - 1] + "…"


def why_not(exc: BaseException) -> str:
    """The short reason a cell has no time: ``no C for <Op>`` or ``<Error>: <message>``.

    For missing C code the innermost ``NoCCode`` of the exception chain names the Op.
    """
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None:
        chain.append(cause)
        cause = cause.__cause__
    missing = [e for e in chain if isinstance(e, NoCCode)]
    if missing:
        found = re.search(r"(?:.*\bbut )?(.+?) has no C implementation", str(missing[-1]))
        return f"no C for {short_op_name(found.group(1))}" if found else "no C code"
    lines = str(exc).strip().splitlines()
    message = lines[0] if lines else ""
    return f"{type(exc).__name__}: {message[:80]}"


def nodes_in_c(fn: Any) -> str | None:
    """``k/n nodes in C`` for a ``cvm``-compiled function, ``None`` for other linkers."""
    c_nodes = getattr(getattr(fn, "fn", None), "c_nodes", None)
    if c_nodes is None:
        return None
    return f"{len(c_nodes)}/{len(fn.maker.fgraph.apply_nodes)} nodes in C"


def on_device(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args``' arrays on JAX's default device (``jax.device_put``), as the `JAX jit`
    column passes them: the ``jax`` linker's column then times the same work, not a copy
    of NumPy's arrays to the device at each call. Python scalars stay as they are."""
    import jax  # only where the jax linker is timed (opweave-jax installed)

    return tuple(jax.device_put(a) if isinstance(a, np.ndarray) else a for a in args)


def time_linkers(
    build: Callable[[], Graph],
    args: tuple[Any, ...],
    linkers: list[str],
    settings: Settings,
    check: Callable[[Any], str | None] | None = None,
) -> tuple[dict[str, Outcome], list[str]]:
    """Compile ``build()`` with each linker and time calls with ``args``.

    With ``check``, the result of a first call is given to it before timing: a linker
    for which it answers a reason (``wrong result: ...``) is not timed and shows ``n/a``
    with that reason. Returns the outcome per linker and notes (how much of ``cvm`` runs
    in C). Failures are printed in full on stderr and shown as ``n/a`` in the table.
    """
    outcomes: dict[str, Outcome] = {}
    notes: list[str] = []
    for name in linkers:
        try:
            fn = compile_graph(build(), name)
            call_args = on_device(args) if name == "jax" else args
            if check is not None and (wrong := check(fn(*call_args))) is not None:
                outcomes[name] = NotAvailable(wrong)
                print(f"  {name}: {wrong}", file=sys.stderr)
                continue
            outcomes[name] = median_time(
                fn, *call_args, repeat=settings.repeat, min_run_seconds=settings.min_run_seconds
            )
        except Exception as exc:
            outcomes[name] = NotAvailable(why_not(exc))
            print(f"  {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if (note := nodes_in_c(fn)) is not None:
            notes.append(f"{name}: {note}")
    return outcomes, notes


def overhead_double_graph() -> Graph:
    """The tutorial's ``mul(add(x, y), z)`` on the ``Double`` type of ``opweave_double``."""
    from opweave_double import add, double, mul

    x, y, z = double("x"), double("y"), double("z")
    return Graph([x, y, z], mul(add(x, y), z))


def overhead_dscalar_graph() -> Graph:
    """``(a + b) * c`` on float64 scalars."""
    a, b, c = ot.dscalars("a", "b", "c")
    return Graph([a, b, c], (a + b) * c)


def fused_graph() -> Graph:
    """``exp(x) * y + z`` on float64 vectors."""
    x, y, z = ot.dvectors("x", "y", "z")
    return Graph([x, y, z], workloads.fused(ot.exp, x, y, z))


def sum_squares_graph() -> Graph:
    """``sum(x ** 2)`` on a float64 vector."""
    x = ot.dvector("x")
    return Graph([x], ot.sum(x**2))


def chain_graph() -> Graph:
    """The chain of elementwise Ops."""
    x = ot.dvector("x")
    return Graph([x], workloads.chain(ot.tanh, x))


def mlp_graph(data: workloads.MLPData) -> Graph:
    """One SGD step of the MLP in the dtype of ``data``; the parameters are fresh shared
    variables, updated."""
    params = [opweave.shared(p) for p in data.params()]
    dtype = data.x.dtype
    x, t = ot.matrix("x", dtype=dtype), ot.matrix("t", dtype=dtype)
    loss = workloads.mlp_loss(ot.log_softmax, ot, x, t, *params)
    grads = opweave.grad(loss, params)
    lr = np.asarray(workloads.LEARNING_RATE, dtype=dtype)
    return Graph([x, t], loss, [(p, p - lr * g) for p, g in zip(params, grads, strict=True)])


def rnn_graph() -> Graph:
    """The RNN case: ``scan`` over the steps of :func:`workloads.rnn_cell`, the loss
    :func:`workloads.rnn_loss` and its gradients (``grad``: backpropagation through the
    loop); outputs ``[loss, g_w_x, g_w_h, g_b]``."""
    x = ot.dtensor3("x")
    w_x, w_h = ot.dmatrices("w_x", "w_h")
    b, h0 = ot.dvector("b"), ot.dmatrix("h0")
    hs, _ = opweave.scan(
        partial(workloads.rnn_cell, ot.tanh, ot.dot),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w_x, w_h, b],
    )
    loss = workloads.rnn_loss(ot.sum, hs)
    return Graph([x, w_x, w_h, b, h0], [loss, *opweave.grad(loss, [w_x, w_h, b])])


def compile_and_call_once(linker: str) -> None:
    """Compile the small elementwise graph with ``linker`` and call it on tiny vectors."""
    fn = compile_graph(fused_graph(), linker)
    fn(np.ones(3), np.ones(3), np.ones(3))


PROBE = Path(__file__).with_name("compile_probe.py")


def byte_compile_opweave() -> None:
    """Write the bytecode of every installed opweave distribution's modules, as ``pip
    install`` does, so that compile-time probes measure compiling graphs, not Python
    sources (an editable install under ``PYTHONDONTWRITEBYTECODE`` has none)."""
    import compileall
    import importlib.util

    for name in ("opweave", "opweave_python", "opweave_c", "opweave_cuda", "opweave_double"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                compileall.compile_dir(folder, quiet=1)


def compile_in_fresh_process(linker: str, compiledir: Path) -> tuple[Outcome, float | None]:
    """Seconds to compile and first call the small graph in a new Python process.

    The process uses ``compiledir`` as opweave's ``compiledir``. Returns that outcome and
    the time the process took to import opweave.
    """
    flags = [os.environ.get("OPWEAVE_FLAGS", ""), f"compiledir={compiledir}"]
    env = {**os.environ, "OPWEAVE_FLAGS": ",".join(f for f in flags if f)}
    # Python's own bytecode cache stays on, as in an installed package (PyTensor's venv has
    # it): ``PYTHONDONTWRITEBYTECODE`` would make every probe recompile opweave's sources.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run(
        [sys.executable, str(PROBE), linker], capture_output=True, text=True, env=env
    )
    lines = done.stdout.strip().splitlines()
    try:
        answer = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        stderr = done.stderr.strip().splitlines()
        return NotAvailable(f"probe failed: {stderr[-1] if stderr else done.returncode}"), None
    if "error" in answer:
        return NotAvailable(answer["error"]), None
    return float(answer["seconds"]), answer["import_seconds"]
