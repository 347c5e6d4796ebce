"""opweave's benchmarks: every linker against NumPy and PyTensor, in one run.

Usage::

    python benchmarks/run.py [--quick] [--linkers py,vm,cvm,c] [--no-pytensor]
                             [--pytensor-venv PATH] [--pytensor-modes CVM,C,NUMBA]
                             [--only main|scaling|pymc] [--scaling-blocks 30,120,500]
                             [--scaling-timeout 300] [--scaling-repeat 1]
                             [--jax-venv PATH] [--no-jax] [--busy]

Prints (stdout) a markdown report: the machine and versions, then one table of median
times per call with their ratio to the row's reference (lower is better) and whether the
row's target is reached. Progress and failures go to stderr. The cases are those of
DESIGN.md section 6. A linker that cannot compile a case (``c`` on an Op without C code)
shows ``n/a (no C for <Op>)`` in its cell.

PyTensor runs in its own venv (``--pytensor-venv``, created with ``pip install pytensor``
on first use), one subprocess per case, so both sides are measured in the same run. A
``JAX jit`` column (``jax_side.py``: ``jax.jit`` of the same workload, float64 rows with
``jax_enable_x64``; the MLP rows with ``jax.value_and_grad``, the RNN row over
``jax.lax.scan``) is measured in JAX's venv (see below) the same way, unless ``--no-jax``;
the compile rows show ``n/a`` there (JAX's compile times are the scaling table's).

The MLP SGD step has three rows: float64 (judged), float32, and a busy machine: the
float64 step again, every column of it measured while one busy process per CPU
(``busy.py``) spins beside it, started before the row and killed after it, even on
Ctrl-C. A full run has the busy row; ``--quick`` leaves it out unless ``--busy``.

A second table, the compile scaling (``scaling.py``), follows: the cold and warm compile
time, rewriting time and node count of a graph of N blocks (``--scaling-blocks``) for
opweave's ``vm``, ``cvm``, ``c``, ``jax`` and default mode, PyTensor's default mode and ``cvm``, and
``jax.jit``, one new process per measurement, each killed after ``--scaling-timeout``
seconds (larger N of that column are then skipped). JAX runs in its own venv
(``--jax-venv``, created with ``pip install jax jaxlib`` on first use; ``--no-jax`` leaves
its columns out). ``--only main`` prints the first table alone, ``--only scaling`` the
second alone; ``--pytensor-modes`` and ``--quick`` concern only the first. A third table
(``pymc_bench.py``, ``--only pymc``) runs PyMC's linear regression on opweave through the
pytensor alias and on PyTensor, each in its own PyMC venv (compile cold and warm, logp and
dlogp per call, NUTS); ``--no-pytensor`` leaves it out.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

import busy
import jax_env
import numpy as np
import opweave_side as ows
import pymc_bench
import scaling
import workloads
from pytensor_env import MODE_COLUMNS, PyTensorSide, log, prepare
from report import AllTargets, NotAvailable, Outcome, Row, Target, markdown_table, seconds_of
from timing import Settings, median_time

from opweave.link.lookup import available_linkers, unusable_linkers

REPO = Path(__file__).resolve().parent.parent
LINKER_ORDER = ["py", "vm", "cvm", "c"]
#: Linkers that run graphs on a GPU: not in this CPU report.
GPU_LINKERS = frozenset({"cuda"})
#: Linkers whose functions return lazy values (``dask``: a Dask graph, computed later):
#: timing a call would time building the graph, so they have their own benchmark
#: (``benchmarks/dask_run.py``) and are left out unless ``--linkers`` names them.
LAZY_LINKERS = frozenset({"dask"})
DISTRIBUTIONS = ["opweave", "opweave-python", "opweave-c", "opweave-double"]
#: The JAX side with ``--no-jax``: no JAX column at all.
NO_JAX = NotAvailable("--no-jax")


@dataclass
class Context:
    """What every case needs: the settings, the linkers, the PyTensor side, the JAX side
    and whether to measure the busy-machine MLP row."""

    settings: Settings
    linkers: list[str]
    modes: list[str]
    pytensor: PyTensorSide | NotAvailable
    jax: jax_env.JaxSide | NotAvailable = NO_JAX
    busy: bool = False

    def columns(self) -> list[str]:
        """The table's time columns: opweave's linkers, then PyTensor's modes."""
        return self.linkers + [MODE_COLUMNS[m] for m in self.modes]

    def pytensor_times(self, case: str, **params: object) -> dict[str, Outcome]:
        """PyTensor's time for ``case`` per mode column (``n/a`` when it is not run)."""
        if isinstance(self.pytensor, NotAvailable):
            why = "skipped" if self.pytensor.reason == "--no-pytensor" else "not available"
            return {MODE_COLUMNS[m]: NotAvailable(why) for m in self.modes}
        return self.pytensor.time_case(case, self.settings, **params)

    def other_times(self, case: str, **params: object) -> dict[str, Outcome]:
        """PyTensor's and JAX's times for ``case``, per column (see ``pytensor_times``
        and ``jax_times``)."""
        return {**self.pytensor_times(case, **params), **self.jax_times(case, **params)}

    def jax_times(self, case: str, **params: object) -> dict[str, Outcome]:
        """JAX's time for ``case`` in the ``JAX jit`` column (``n/a`` when it is not run;
        nothing with ``--no-jax``)."""
        if isinstance(self.jax, NotAvailable):
            return self.jax_none("not available")
        return {scaling.JAX_COLUMN: self.jax.time_case(case, self.settings, **params)}

    def jax_none(self, why: str) -> dict[str, Outcome]:
        """The ``JAX jit`` cell of a row JAX has no time for: ``n/a (why)``, nothing with
        ``--no-jax``."""
        return {} if self.jax == NO_JAX else {scaling.JAX_COLUMN: NotAvailable(why)}

    def time(self, fn: Callable[..., object], *args: object) -> float:
        """Median seconds per call of ``fn(*args)`` (the references)."""
        s = self.settings
        return median_time(fn, *args, repeat=s.repeat, min_run_seconds=s.min_run_seconds)


def fmt_n(n: int) -> str:
    """``1e7`` for a power of ten, else the number."""
    digits = str(n)
    if digits.startswith("1") and set(digits[1:]) <= {"0"} and n >= 10:
        return f"1e{len(digits) - 1}"
    return digits


def overhead_rows(ctx: Context) -> list[Row]:
    """Call overhead of ``(x + y) * z`` on Python floats: ``Double`` and ``dscalars``."""
    floats = (1.0, 2.0, 3.0)
    ref = ctx.time(workloads.python_overhead, *floats)
    others = ctx.other_times("overhead")
    target = Target(
        "c ≤ 1/12 PyTensor c and < 1 µs",
        1 / 12,
        against="PyTensor c",
        linkers=("c",),
        max_seconds=1e-6,
    )
    rows = []
    for label, build in (
        ("Double plugin Type", ows.overhead_double_graph),
        ("dscalars", ows.overhead_dscalar_graph),
    ):
        log(f"call overhead, {label}")
        times, notes = ows.time_linkers(build, floats, ctx.linkers, ctx.settings)
        case = f"(x + y) * z, {label}, Python floats"
        rows.append(Row(case, "Python", ref, {**times, **others}, target, notes))
    rows[0].notes.append("PyTensor and JAX: the dscalars graph")
    return rows


def copy_bandwidth(ctx: Context, n: int) -> float:
    """Bytes per second of ``np.copyto`` on ``n`` float64s (read + write)."""
    src, dst = np.ones(n), np.empty(n)
    return 2 * src.nbytes / ctx.time(np.copyto, dst, src)


def bandwidth_note(n: int, copy: float, ref: Outcome, times: dict[str, Outcome]) -> str:
    """GB/s of NumPy and of the fastest opweave linker, against the copy bandwidth."""
    moved = 4 * 8 * n  # read x, y, z; write the result
    parts = [f"copy {copy / 1e9:.1f} GB/s"]
    if (ref_s := seconds_of(ref)) is not None:
        parts.append(f"NumPy {moved / ref_s / 1e9:.1f} GB/s")
    timed = {k: t for k, v in times.items() if (t := seconds_of(v)) is not None}
    if timed:
        name, best = min(timed.items(), key=lambda item: item[1])
        gbs = moved / best
        parts.append(f"best {name} {gbs / 1e9:.1f} GB/s ({100 * gbs / copy:.0f}% of copy)")
    return ", ".join(parts)


def fused_row(ctx: Context, n: int, target: Target | None) -> Row:
    """``exp(x) * y + z`` on ``n`` float64s, with GB/s against the copy bandwidth."""
    log(f"exp(x) * y + z, n={fmt_n(n)}")
    args = workloads.fused_inputs(n)
    times, notes = ows.time_linkers(ows.fused_graph, args, ctx.linkers, ctx.settings)
    ref = ctx.time(workloads.fused, np.exp, *args)
    notes.insert(0, bandwidth_note(n, copy_bandwidth(ctx, n), ref, times))
    others = ctx.other_times("fused", n=n)
    return Row(f"exp(x) * y + z, n={fmt_n(n)}", "NumPy", ref, {**times, **others}, target, notes)


def fused_rows(ctx: Context) -> list[Row]:
    """The fused case at 1e3, 1e5 and the large size, with their targets."""
    return [
        fused_row(ctx, 10**3, Target("≤ 1.0x NumPy", 1.0)),
        fused_row(ctx, 10**5, None),
        fused_row(ctx, ctx.settings.big_n, Target("≤ 0.6x NumPy (at 1e7)", 0.6)),
    ]


def sum_squares_row(ctx: Context) -> Row:
    """``sum(x ** 2)`` on the large size against ``np.dot(x, x)``."""
    n = ctx.settings.big_n
    log(f"sum(x ** 2), n={fmt_n(n)}")
    x = workloads.sum_squares_input(n)
    times, notes = ows.time_linkers(ows.sum_squares_graph, (x,), ctx.linkers, ctx.settings)
    ref = ctx.time(np.dot, x, x)
    others = ctx.other_times("sum_squares", n=n)
    target = Target("≤ 1.5x np.dot (at 1e7)", 1.5)
    return Row(
        f"sum(x ** 2), n={fmt_n(n)}", "np.dot(x, x)", ref, {**times, **others}, target, notes
    )


def chain_row(ctx: Context) -> Row:
    """The chain of ``CHAIN_LENGTH`` elementwise Ops."""
    log("elementwise chain")
    x = workloads.chain_input()
    times, notes = ows.time_linkers(ows.chain_graph, (x,), ctx.linkers, ctx.settings)
    ref = ctx.time(workloads.chain, np.tanh, x)
    others = ctx.other_times("chain")
    case = f"{workloads.CHAIN_LENGTH} elementwise ops, n={fmt_n(workloads.CHAIN_N)}"
    return Row(case, "NumPy", ref, {**times, **others}, Target("≤ 0.5x NumPy", 0.5), notes)


def mlp_row(ctx: Context, dtype: str = "float64") -> Row:
    """One SGD step of the 784-256-10 MLP in ``dtype`` against hand-written NumPy.

    Every opweave linker's first loss is checked against the reference's (value and
    dtype, ``workloads.compare_mlp_loss``) before timing; PyTensor and JAX check theirs.
    """
    log(f"MLP step, {dtype}")
    data = workloads.mlp_data(dtype)
    args = (data.x, data.onehot)
    check = partial(
        workloads.compare_mlp_loss, expected=workloads.numpy_mlp_step(data)(*args), dtype=dtype
    )
    build = partial(ows.mlp_graph, data)
    times, notes = ows.time_linkers(build, args, ctx.linkers, ctx.settings, check)
    ref = ctx.time(workloads.numpy_mlp_step(data), *args)
    others = ctx.other_times("mlp", dtype=dtype)
    case = (
        f"MLP SGD step {workloads.MLP_IN}-{workloads.MLP_HIDDEN}-{workloads.MLP_OUT}, "
        f"batch {workloads.MLP_BATCH}"
    )
    if dtype != "float64":
        case += f", {dtype}"
    target = Target("≤ 1.0x NumPy", 1.0)
    return Row(case, "NumPy by hand", ref, {**times, **others}, target, notes)


def busy_mlp_row(ctx: Context) -> Row:
    """The float64 MLP row again, every column measured beside one busy process per CPU
    (``busy.busy_machine``), which are stopped when the row is done, however it ends; with
    ``c+load`` and ``cvm+load`` columns (``config.blas__follow_load`` on)."""
    following = [name + ows.FOLLOW_LOAD for name in ("c", "cvm") if name in ctx.linkers]
    with busy.busy_machine() as n:
        log(f"{n} busy processes started")
        row = mlp_row(replace(ctx, linkers=[*ctx.linkers, *following]))
    row.case += f", busy machine ({n} busy processes)"
    row.notes.insert(0, f"every column measured beside {n} busy-looping processes, one per CPU")
    return row


def fastest(times: dict[str, Outcome], columns: list[str]) -> str | None:
    """The column among ``columns`` with the smallest time in ``times`` (``None``: none)."""
    timed = {c: t for c in columns if (t := seconds_of(times.get(c))) is not None}
    return min(timed, key=timed.__getitem__) if timed else None


def rnn_row(ctx: Context) -> Row:
    """The tanh RNN's loss and gradients through ``scan`` against a hand-written NumPy loop.

    Before timing, the reference's hand-written backward is checked by finite differences
    (``AssertionError`` when wrong), and every implementation's result against the
    reference's: a linker or mode that disagrees shows ``n/a (wrong result: ...)``; when no
    opweave linker agrees the run stops (``RuntimeError``).
    """
    log("RNN forward+backward step")
    data = workloads.rnn_data()
    args = data.args()
    workloads.check_rnn_by_finite_differences(data)
    check = partial(workloads.compare_rnn, expected=workloads.numpy_rnn(*args))
    times, notes = ows.time_linkers(ows.rnn_graph, args, ctx.linkers, ctx.settings, check)
    wrong = {k: v.reason for k, v in times.items() if isinstance(v, NotAvailable)}
    wrong = {k: why for k, why in wrong.items() if why.startswith("wrong result")}
    if wrong and not any(isinstance(v, float) for v in times.values()):
        raise RuntimeError(f"RNN row: no opweave linker agrees with the NumPy reference: {wrong}")
    ref = ctx.time(workloads.numpy_rnn, *args)
    others = ctx.other_times("rnn")
    pytensor_columns = [MODE_COLUMNS[m] for m in ctx.modes]
    best = fastest(others, pytensor_columns) or MODE_COLUMNS[ctx.modes[0] if ctx.modes else "C"]
    target = AllTargets(
        (
            Target("≤ 1.0x NumPy", 1.0),
            Target(f"< {best}, PyTensor's fastest scan", 1.0, against=best),
        )
    )
    notes.insert(0, "loss: mean over t of sum(h_t ** 2); outputs: loss and 3 gradients")
    case = (
        f"RNN forward+backward step, hidden {workloads.RNN_HIDDEN}, input {workloads.RNN_IN}, "
        f"{workloads.RNN_STEPS} steps, batch {workloads.RNN_BATCH}"
    )
    return Row(case, "NumPy loop by hand", ref, {**times, **others}, target, notes)


CompileOnce = Callable[[Path], tuple[Outcome, float | None]]


def cold_and_warm(compile_once: CompileOnce, repeat: int) -> tuple[Outcome, Outcome, float | None]:
    """Median cold (fresh directory) and warm (same directory again) compile times.

    Also returns the median import time of the processes.
    """
    cold: list[float] = []
    warm: list[float] = []
    imports: list[float | None] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="opweave-bench-") as tmp:
            for times in (cold, warm):
                outcome, imported = compile_once(Path(tmp))
                if isinstance(outcome, NotAvailable):
                    return outcome, outcome, None
                times.append(outcome)
                imports.append(imported)
    known = [t for t in imports if t is not None]
    median_import = statistics.median(known) if known else None
    return statistics.median(cold), statistics.median(warm), median_import


def compile_rows(ctx: Context) -> list[Row]:
    """Cold and warm compile time of ``exp(x) * y + z``, each in a fresh process."""
    repeat = ctx.settings.compile_repeat
    ows.byte_compile_opweave()
    cold: dict[str, Outcome] = {}
    warm: dict[str, Outcome] = {}
    imports: dict[str, float | None] = {}
    for name in ctx.linkers:
        log(f"compile time, {name}")
        once = partial(ows.compile_in_fresh_process, name)
        cold[name], warm[name], imported = cold_and_warm(once, repeat)
        imports["opweave"] = imported or imports.get("opweave")
    for mode in ctx.modes:
        column = MODE_COLUMNS[mode]
        if isinstance(ctx.pytensor, NotAvailable):
            cold[column] = warm[column] = ctx.pytensor_times("compile")[column]
            continue
        log(f"compile time, {column}")
        once = partial(ctx.pytensor.compile_time, mode)
        cold[column], warm[column], imported = cold_and_warm(once, repeat)
        imports["PyTensor"] = imported or imports.get("PyTensor")
    import_times = ", ".join(f"import {k} {t:.2f} s" for k, t in imports.items() if t is not None)
    reference = MODE_COLUMNS["CVM"]
    return [
        Row(
            f"compile exp(x) * y + z, {kind}",
            reference,
            times.get(reference, NotAvailable("not run")),
            {**times, **ctx.jax_none("see the compile-scaling table")},
            Target(f"≤ {limit}x {reference}", limit),
            [f"{what}; compile + first call, in a new process; {import_times}"],
        )
        for kind, times, limit, what in (
            ("cold", cold, 0.25, "fresh compiledir"),
            ("warm", warm, 0.1, "second process, same compiledir"),
        )
    ]


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (or ``platform.processor()``)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions() -> str:
    """``opweave 0.1.0, opweave-c 0.1.0, ...`` for the installed distributions."""
    found = []
    for name in DISTRIBUTIONS:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found)


def blas_threads() -> str:
    """The BLAS/OpenMP thread variables set in the environment, or the default."""
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    found = [f"{name}={os.environ[name]}" for name in names if name in os.environ]
    return ", ".join(found) or "library default (one per CPU)"


def load_average() -> str:
    """The one-minute load average, ``n/a`` where the OS has none."""
    return f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "n/a"


def source_state() -> str:
    """``git`` commit of the measured tree, ``+ uncommitted changes`` when dirty."""
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit} + uncommitted changes" if dirty else commit


def header(ctx: Context, load_before: str, main_table: bool = True) -> str:
    """The report's first lines: date, machine and its load, versions, and the settings of
    the main table (when ``main_table``)."""
    nproc = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if isinstance(ctx.pytensor, NotAvailable):
        pytensor = f"n/a ({ctx.pytensor.reason})"
    else:
        info = ", ".join(
            f"{k} {v!r}" if k == "blas__ldflags" else f"{k} {v}"
            for k, v in ctx.pytensor.info.items()
        )
        pytensor = f"{info}; venv {ctx.pytensor.python.parent.parent}"
    s = ctx.settings
    settings = (
        f"- settings: median of {s.repeat} runs of at least {s.min_run_seconds} s each; "
        f"compile times: median of {s.compile_repeat} fresh compile directories"
    )
    return "\n".join(
        [
            "# opweave benchmarks",
            "",
            f"- date: {date.today().isoformat()}",
            f"- machine: {nproc} CPUs ({cpu_model()}), {platform.system()} {platform.release()}; "
            f"load average {load_before} before the run, {load_average()} after",
            f"- BLAS threads: {blas_threads()}",
            f"- opweave tree: {source_state()}",
            f"- Python {platform.python_version()}, NumPy {np.__version__}; {versions()}",
            f"- opweave linkers installed: {', '.join(installed_linkers())}",
            f"- PyTensor: {pytensor}",
            *([settings] if main_table else []),
        ]
    )


LEGEND = """\
Cells: median time per call (ratio to the row's reference; lower is better). Targets are
judged on the faster of opweave's `cvm` and `c` (on `c` alone for the call overhead);
a `c+openmp` column (`--openmp`: `config.openmp` on) is shown, not judged.
PyTensor columns: its C backend (`CVM` and `C` modes) and its default since 3.0 (`NUMBA`).
`JAX jit`: `jax.jit` of the same workload (float64 with `jax_enable_x64`; the MLP rows
with `jax.value_and_grad`, the RNN row over `jax.lax.scan`), not judged."""
BUSY_LEGEND = """\
The busy-machine MLP row: every column measured beside one busy process per CPU; `c+load`
and `cvm+load` are `c` and `cvm` with `config.blas__follow_load` on (OpenBLAS's threads
follow the machine's load; off by default, as the last bits of large products then vary)."""


def installed_linkers() -> list[str]:
    """opweave's installed linkers, in the order of the table."""
    names = set(available_linkers())
    return [n for n in LINKER_ORDER if n in names] + sorted(names - set(LINKER_ORDER))


def default_linkers() -> list[str]:
    """The installed linkers that can run here and compute on the CPU when called (the GPU
    cases are ``benchmarks/gpu_run.py``'s, the lazy ``dask`` linker's
    ``benchmarks/dask_run.py``'s): ``py``, ``vm``, ``cvm``, ``c`` and those plugins add."""
    unusable = unusable_linkers()
    skipped = GPU_LINKERS | LAZY_LINKERS
    return [n for n in installed_linkers() if n not in unusable and n not in skipped]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 1e6 instead of 1e7")
    parser.add_argument(
        "--linkers",
        help="comma-separated linkers (default: the installed CPU linkers that can run here)",
    )
    parser.add_argument(
        "--pytensor-venv",
        default=str(REPO / ".bench-pytensor-venv"),
        help="venv for PyTensor, created (pip install pytensor) when missing",
    )
    parser.add_argument("--no-pytensor", action="store_true", help="do not run PyTensor")
    parser.add_argument(
        "--openmp",
        action="store_true",
        help="add a column: the c linker with config.openmp on (informational, not judged)",
    )
    parser.add_argument(
        "--pytensor-modes",
        default="CVM,C,NUMBA",
        help="comma-separated PyTensor modes among CVM, C, NUMBA (default: all)",
    )
    parser.add_argument(
        "--only",
        choices=("main", "scaling", "pymc"),
        help="print only the main, the compile-scaling or the PyMC table (default: all)",
    )
    parser.add_argument(
        "--scaling-blocks",
        default=",".join(map(str, scaling.DEFAULT_BLOCKS)),
        help="comma-separated numbers of blocks of the compile-scaling workload",
    )
    parser.add_argument(
        "--scaling-timeout",
        type=float,
        default=scaling.DEFAULT_TIMEOUT_S,
        help="seconds after which a compile-scaling measurement is killed (default 300)",
    )
    parser.add_argument(
        "--scaling-repeat",
        type=int,
        default=1,
        help="fresh compile directories per compile-scaling cell, median (default 1)",
    )
    parser.add_argument(
        "--jax-venv",
        default=str(REPO / ".bench-jax-venv"),
        help="venv for JAX, created (pip install jax jaxlib) when missing",
    )
    parser.add_argument("--no-jax", action="store_true", help="do not run JAX")
    parser.add_argument(
        "--busy",
        action="store_true",
        help="measure the busy-machine MLP row (one busy process per CPU beside every "
        "column); always in a full run, left out under --quick unless given",
    )
    args = parser.parse_args(argv)
    try:
        args.scaling_blocks = scaling.parse_blocks(args.scaling_blocks)
    except ValueError as exc:
        parser.error(str(exc))
    if args.scaling_timeout <= 0:
        parser.error(f"--scaling-timeout must be positive, got {args.scaling_timeout}")
    if args.scaling_repeat < 1:
        parser.error(f"--scaling-repeat must be at least 1, got {args.scaling_repeat}")
    args.modes = [m.strip().upper() for m in args.pytensor_modes.split(",") if m.strip()]
    if unknown := [m for m in args.modes if m not in MODE_COLUMNS]:
        parser.error(f"unknown PyTensor mode(s) {unknown}; choose among {list(MODE_COLUMNS)}")
    installed = installed_linkers()
    chosen = [n.strip() for n in args.linkers.split(",")] if args.linkers else default_linkers()
    args.linkers = chosen
    if unknown := [n for n in args.linkers if n not in installed]:
        parser.error(f"linker(s) {unknown} not installed; installed: {installed}")
    if args.openmp:
        if "c" not in installed:
            parser.error("--openmp needs the c linker (opweave-c)")
        args.linkers.append("c" + ows.OPENMP)
    return args


def compiled_to_the_final_tier(compile_graph: Callable[..., Any]) -> Callable[..., Any]:
    """``compile_graph`` whose function is on its final linker before it is timed: a
    tiered compile (``config.compile__tiered``) answers its first calls on the Python
    kernels while C compiles (``Function.wait_compiled``)."""

    def compile_and_wait(*args: Any, **kwargs: Any) -> Any:
        fn = compile_graph(*args, **kwargs)
        fn.wait_compiled()
        return fn

    return compile_and_wait


def main_table(ctx: Context) -> str:
    """Every case of the main table, measured, with its legend."""
    rows = overhead_rows(ctx) + fused_rows(ctx)
    rows += [sum_squares_row(ctx), chain_row(ctx), mlp_row(ctx), mlp_row(ctx, "float32")]
    rows += [busy_mlp_row(ctx)] if ctx.busy else []
    rows.append(rnn_row(ctx))
    rows += compile_rows(ctx)
    columns = ctx.columns()
    # The busy row's columns with the load followed (``c+load``...), after the linkers.
    extra = [c for row in rows for c in row.seconds if c.endswith(ows.FOLLOW_LOAD)]
    columns += [c for c in dict.fromkeys(extra) if c not in columns]
    if any(scaling.JAX_COLUMN in row.seconds for row in rows):
        columns.append(scaling.JAX_COLUMN)
    legend = [LEGEND, BUSY_LEGEND] if ctx.busy else [LEGEND]
    return "\n".join([markdown_table(rows, columns), "", *legend])


def scaling_section(ctx: Context, args: argparse.Namespace) -> str:
    """The compile-scaling table (``scaling.py``), measured, as a report section."""
    jax = ctx.jax
    ows.byte_compile_opweave()
    measured = scaling.run_scaling(
        scaling.columns_for(ctx.linkers),
        scaling.runners(ctx.pytensor, jax),
        args.scaling_blocks,
        args.scaling_timeout,
        args.scaling_repeat,
    )
    return scaling.section(measured, jax)


def main(argv: list[str] | None = None) -> int:
    """Run every case and print the report."""
    args = parse_args(argv)
    if args.no_pytensor:
        pytensor: PyTensorSide | NotAvailable = NotAvailable("--no-pytensor")
    else:
        pytensor = prepare(Path(args.pytensor_venv), args.modes)
        if isinstance(pytensor, NotAvailable):
            log(f"PyTensor not available: {pytensor.reason}")
    if args.no_jax:
        jax: jax_env.JaxSide | NotAvailable = NO_JAX
    else:
        jax = jax_env.prepare(Path(args.jax_venv))
        if isinstance(jax, NotAvailable):
            log(f"JAX not available: {jax.reason}")
    settings = Settings.choose(args.quick)
    busy_row = args.busy or not args.quick
    ctx = Context(settings, args.linkers, args.modes, pytensor, jax, busy_row)
    load_before = load_average()
    # Steady state is timed on the linker of each column, not on the Python tier.
    ows.compile_graph = compiled_to_the_final_tier(ows.compile_graph)
    parts = []
    if args.only in (None, "main"):
        parts.append(main_table(ctx))
    if args.only in (None, "scaling"):
        parts.append(scaling_section(ctx, args))
    if args.only in (None, "pymc") and not args.no_pytensor:
        parts.append(pymc_bench.section())
    print(header(ctx, load_before, args.only in (None, "main")), *parts, sep="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
