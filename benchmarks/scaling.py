"""The compile-scaling table: opweave, PyTensor and JAX compiling a graph of N blocks.

``run.py`` prints it after its main table; ``python benchmarks/run.py --only scaling``
prints it alone (the options are ``run.py``'s: ``--scaling-blocks 30,120,500``,
``--scaling-timeout 300``, ``--scaling-repeat 1``, ``--jax-venv PATH`` / ``--no-jax``,
``--pytensor-venv PATH`` / ``--no-pytensor``, ``--linkers``).

The workload (:func:`workloads.blocks`) is N blocks ``e = tanh(e * c_i + 0.1) + mean(e) *
0.01``, each with its own constant, from a float64 vector ``x``; it is compiled and called
once on 10 elements, and the result checked against NumPy. For each N and each column,
two new processes share one fresh temporary compile directory: the first finds it empty
(cold), the second finds what the first left there (warm). Each process
(``scaling_probe.py``) reports the seconds from building the graph to the end of the
first call, the import time of the library apart, the rewriting time (building the
``FunctionMaker``) and the number of nodes after rewriting. One measurement runs at a
time. A process that runs longer than the timeout is killed with the compilers it started,
shows ``> T s``, and the larger N of its column are ``skipped``.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jax_env import JaxSide, clean_env
from pytensor_env import PyTensorSide, last_line, log
from report import NotAvailable, escape, fmt_ratio, fmt_time

PROBE = Path(__file__).with_name("scaling_probe.py")
#: opweave's linkers with a column (when ``--linkers`` keeps them), then its default mode.
OPWEAVE_LINKERS = ("vm", "cvm", "c", "jax")
DEFAULT_BLOCKS = (30, 120, 500)
DEFAULT_TIMEOUT_S = 300.0
#: The column the targets judge, and the columns they compare it with.
JUDGED = "default"
JAX_COLUMN = "JAX jit"
PYTENSOR_DEFAULT = "PyTensor default"
#: The targets: at ``TARGET_BLOCKS``, cold ≤ 0.5x JAX and ≤ 0.1x PyTensor's default, warm
#: under 0.3 s; from ``TARGET_BLOCKS`` to ``GROWTH_BLOCKS``, cold grows at most 5x.
TARGET_BLOCKS = 120
GROWTH_BLOCKS = 500
MAX_VS_JAX = 0.5
MAX_VS_PYTENSOR = 0.1
MAX_WARM_S = 0.3
MAX_GROWTH = 5.0
LIBRARY_NAMES = {"opweave": "opweave", "pytensor": "PyTensor", "jax": "JAX"}


@dataclass(frozen=True)
class Column:
    """A column: its header, the library and what the probe compiles with (``column``)."""

    name: str
    library: str
    variant: str


@dataclass(frozen=True)
class Probe:
    """One process's answer (see ``scaling_probe.py``)."""

    seconds: float
    rewrite_seconds: float | None
    nodes: int | None
    import_seconds: float
    linker: str


@dataclass(frozen=True)
class TimedOut:
    """A process killed after ``limit`` seconds."""

    limit: float


Result = Probe | TimedOut | NotAvailable
#: The cells of a column after one of its measurements timed out.
SKIPPED = NotAvailable("skipped")


@dataclass
class Runner:
    """How to start a library's probe: its Python, and its environment for a compile dir."""

    python: Path
    env: Callable[[Path], dict[str, str]]


@dataclass
class Cell:
    """A column at one N: the cold and warm results, and every process's answer."""

    cold: Result
    warm: Result
    probes: list[Probe] = field(default_factory=list)


@dataclass
class Scaling:
    """Everything the table shows: the settings and one :class:`Cell` per column and N."""

    blocks: list[int]
    columns: list[Column]
    timeout: float
    repeat: int
    cells: dict[tuple[str, int], Cell] = field(default_factory=dict)

    def cell(self, column: str, blocks: int) -> Cell | None:
        """The cell of ``column`` at ``blocks``, ``None`` when it has none."""
        return self.cells.get((column, blocks))


def parse_blocks(text: str) -> list[int]:
    """``"30,120,500"`` as ``[30, 120, 500]``: positive, sorted, without repeats.

    Raises
    ------
    ValueError
        When an item is not a positive integer.
    """
    try:
        values = [int(item) for item in text.split(",") if item.strip()]
    except ValueError:
        raise ValueError(
            f"--scaling-blocks: expected comma-separated positive integers, got {text!r}"
        ) from None
    if not values or min(values) < 1:
        raise ValueError(
            f"--scaling-blocks: expected comma-separated positive integers, got {text!r}"
        )
    return sorted(set(values))


def columns_for(linkers: list[str]) -> list[Column]:
    """opweave's ``vm``, ``cvm``, ``c``, ``jax`` (those in ``linkers``) and default mode,
    PyTensor's default mode and ``cvm``, JAX's ``jit``."""
    return [
        *(Column(n, "opweave", n) for n in OPWEAVE_LINKERS if n in linkers),
        Column(JUDGED, "opweave", "default"),
        Column(PYTENSOR_DEFAULT, "pytensor", "default"),
        Column("PyTensor cvm", "pytensor", "cvm"),
        Column(JAX_COLUMN, "jax", "jit"),
    ]


def opweave_env(compiledir: Path) -> dict[str, str]:
    """The environment of an opweave probe: ``compiledir`` added to ``OPWEAVE_FLAGS``."""
    flags = [os.environ.get("OPWEAVE_FLAGS", ""), f"compiledir={compiledir}"]
    env = {**os.environ, "OPWEAVE_FLAGS": ",".join(f for f in flags if f)}
    # Python's bytecode cache stays on, as for an installed package (see opweave_side).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def pytensor_env(compiledir: Path) -> dict[str, str]:
    """The environment of a PyTensor probe: ``base_compiledir`` (its C and Numba caches)."""
    flags = [os.environ.get("PYTENSOR_FLAGS", ""), f"base_compiledir={compiledir}"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PYTENSOR_FLAGS"] = ",".join(f for f in flags if f)
    return env


def jax_env(compiledir: Path) -> dict[str, str]:
    """The environment of a JAX probe: its persistent compilation cache in ``compiledir``,
    keeping every compiled program (JAX keeps none by default)."""
    return {
        **clean_env(),
        "JAX_COMPILATION_CACHE_DIR": str(compiledir),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


def runners(
    pytensor: PyTensorSide | NotAvailable, jax: JaxSide | NotAvailable
) -> dict[str, Runner | NotAvailable]:
    """How to start each library's probe, or why it cannot run."""
    return {
        "opweave": Runner(Path(sys.executable), opweave_env),
        "pytensor": pytensor
        if isinstance(pytensor, NotAvailable)
        else Runner(pytensor.python, pytensor_env),
        "jax": jax if isinstance(jax, NotAvailable) else Runner(jax.python, jax_env),
    }


def kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill ``proc`` and the processes it started (its session: compilers, workers)."""
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except ProcessLookupError:
        pass
    proc.communicate()


def run_probe(
    runner: Runner, column: Column, blocks: int, compiledir: Path, timeout: float
) -> Result:
    """One measurement in a new process using ``compiledir``; killed after ``timeout`` s."""
    spec = {"library": column.library, "column": column.variant, "blocks": blocks}
    command = [str(runner.python), str(PROBE), json.dumps(spec)]
    try:
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=runner.env(compiledir),
            start_new_session=True,
        )
    except OSError as exc:
        return NotAvailable(f"cannot start {runner.python}: {exc}")
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return TimedOut(timeout)
    try:
        answer = json.loads(last_line(stdout))
    except json.JSONDecodeError:
        return NotAvailable(f"probe failed (exit {proc.returncode}): {last_line(stderr)[:80]}")
    if "error" in answer:
        return NotAvailable(answer["error"])
    return Probe(
        float(answer["seconds"]),
        answer["rewrite_seconds"],
        answer["nodes"],
        float(answer["import_seconds"]),
        answer["linker"],
    )


def median_probe(probes: list[Probe]) -> Probe:
    """The median of each figure of ``probes`` (nodes and linker: the first's)."""
    rewrites = [p.rewrite_seconds for p in probes if p.rewrite_seconds is not None]
    return Probe(
        statistics.median(p.seconds for p in probes),
        statistics.median(rewrites) if rewrites else None,
        probes[0].nodes,
        statistics.median(p.import_seconds for p in probes),
        probes[0].linker,
    )


def combine(results: list[Result]) -> Result:
    """The median of the results, or the first that is not a time."""
    for result in results:
        if not isinstance(result, Probe):
            return result
    return median_probe(results)  # type: ignore[arg-type]


def describe(result: Result) -> str:
    """A result as a table cell: ``1.23 s``, ``> 300 s``, ``skipped``, ``n/a (why)``."""
    if isinstance(result, Probe):
        return fmt_time(result.seconds)
    if isinstance(result, TimedOut):
        return f"> {result.limit:g} s"
    return "skipped" if result == SKIPPED else f"n/a ({result.reason})"


def measure_at(runner: Runner, column: Column, blocks: int, repeat: int, timeout: float) -> Cell:
    """Cold and warm results of ``column`` at ``blocks``, over ``repeat`` compile dirs."""
    colds: list[Result] = []
    warms: list[Result] = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="opweave-scaling-") as tmp:
            cold = run_probe(runner, column, blocks, Path(tmp), timeout)
            if isinstance(cold, Probe):
                warm = run_probe(runner, column, blocks, Path(tmp), timeout)
            else:
                warm = SKIPPED if isinstance(cold, TimedOut) else cold
        colds.append(cold)
        warms.append(warm)
        if not (isinstance(cold, Probe) and isinstance(warm, Probe)):
            break
    probes = [r for r in colds + warms if isinstance(r, Probe)]
    return Cell(combine(colds), combine(warms), probes)


def measure_column(column: Column, runner: Runner | NotAvailable, scaling: Scaling) -> None:
    """Fill ``scaling``'s cells of ``column``, N by N; after a timeout, the rest is skipped."""
    stopped = False
    for n in scaling.blocks:
        if isinstance(runner, NotAvailable):
            scaling.cells[column.name, n] = Cell(runner, runner)
            continue
        if stopped:
            scaling.cells[column.name, n] = Cell(SKIPPED, SKIPPED)
            continue
        log(f"compile scaling, {column.name}, {n} blocks")
        cell = measure_at(runner, column, n, scaling.repeat, scaling.timeout)
        rewrite = rewrite_text(cell)
        log(f"  cold {describe(cell.cold)}, warm {describe(cell.warm)}, rewriting {rewrite}")
        scaling.cells[column.name, n] = cell
        stopped = isinstance(cell.cold, TimedOut) or isinstance(cell.warm, TimedOut)


def run_scaling(
    columns: list[Column],
    available: dict[str, Runner | NotAvailable],
    blocks: list[int],
    timeout: float = DEFAULT_TIMEOUT_S,
    repeat: int = 1,
) -> Scaling:
    """Measure every column at every N, one process at a time."""
    scaling = Scaling(blocks, columns, timeout, repeat)
    for column in columns:
        measure_column(column, available[column.library], scaling)
    return scaling


def rewrite_text(cell: Cell) -> str:
    """``231 ms, 121 nodes``: the median rewriting time over the cell's processes."""
    rewrites = [p.rewrite_seconds for p in cell.probes if p.rewrite_seconds is not None]
    if rewrites:
        return f"{fmt_time(statistics.median(rewrites))}, {cell.probes[0].nodes} nodes"
    if cell.probes:
        return "n/a (inside jit)"
    return describe(cell.cold)


def growth_text(cell: Cell | None, before: Cell | None) -> str:
    """The cold time of ``cell`` over that of ``before`` (``-`` without both times)."""
    if cell is None or before is None:
        return "-"
    if isinstance(cell.cold, Probe) and isinstance(before.cold, Probe):
        return fmt_ratio(cell.cold.seconds / before.cold.seconds)
    return "-"


def judge_against(mine: Result | None, theirs: Result | None, limit: float, other: str) -> str:
    """``yes (default 0.31x JAX jit; target ≤ 0.5x JAX jit)`` and the other answers."""
    target = f"target ≤ {limit:g}x {other}"
    if not isinstance(mine, Probe):
        if isinstance(mine, TimedOut):
            return f"no ({JUDGED} {describe(mine)}; {target})"
        return f"n/a (no {JUDGED} time; {target})"
    if isinstance(theirs, Probe):
        ratio = mine.seconds / theirs.seconds
        answer = "yes" if ratio <= limit else "no"
        return f"{answer} ({JUDGED} {fmt_ratio(ratio)}; {target})"
    if isinstance(theirs, TimedOut) and mine.seconds / theirs.limit <= limit:
        bound = fmt_ratio(mine.seconds / theirs.limit)
        return f"yes ({JUDGED} < {bound}, {other} {describe(theirs)}; {target})"
    return f"n/a (no {other} time; {target})"


def judge_warm(warm: Result | None) -> str:
    """``yes (default 0.21 s; target < 0.3 s)`` and the other answers."""
    target = f"target < {MAX_WARM_S:g} s"
    if isinstance(warm, Probe):
        answer = "yes" if warm.seconds < MAX_WARM_S else "no"
        return f"{answer} ({JUDGED} {fmt_time(warm.seconds)}; {target})"
    if isinstance(warm, TimedOut):
        return f"no ({JUDGED} {describe(warm)}; {target})"
    return f"n/a (no {JUDGED} time; {target})"


def judge_growth(cell: Cell | None, base: Cell | None) -> str:
    """Growth of the judged column's cold time from ``TARGET_BLOCKS`` to ``GROWTH_BLOCKS``."""
    target = f"target ≤ {MAX_GROWTH:g}x from {TARGET_BLOCKS} to {GROWTH_BLOCKS} blocks"
    if cell is None or base is None or not isinstance(base.cold, Probe):
        return f"n/a (no {JUDGED} time at {TARGET_BLOCKS} blocks; {target})"
    if isinstance(cell.cold, Probe):
        ratio = cell.cold.seconds / base.cold.seconds
        answer = "yes" if ratio <= MAX_GROWTH else "no"
        return f"{answer} ({JUDGED} {fmt_ratio(ratio)}; {target})"
    if isinstance(cell.cold, TimedOut) or cell.cold == SKIPPED:
        return f"no ({JUDGED} {describe(cell.cold)} at {GROWTH_BLOCKS} blocks; {target})"
    return f"n/a (no {JUDGED} time at {GROWTH_BLOCKS} blocks; {target})"


def targets(scaling: Scaling, blocks: int, kind: str) -> str:
    """The ``target reached`` cell of the row ``kind`` (cold, warm...) at ``blocks``."""
    mine = scaling.cell(JUDGED, blocks)
    if mine is None:
        return "-"
    if kind == "cold" and blocks == TARGET_BLOCKS:
        jax, pytensor = scaling.cell(JAX_COLUMN, blocks), scaling.cell(PYTENSOR_DEFAULT, blocks)
        return "; ".join(
            [
                judge_against(mine.cold, jax and jax.cold, MAX_VS_JAX, JAX_COLUMN),
                judge_against(
                    mine.cold, pytensor and pytensor.cold, MAX_VS_PYTENSOR, PYTENSOR_DEFAULT
                ),
            ]
        )
    if kind == "warm" and blocks == TARGET_BLOCKS:
        return judge_warm(mine.warm)
    if kind == "cold" and blocks == GROWTH_BLOCKS:
        return judge_growth(mine, scaling.cell(JUDGED, TARGET_BLOCKS))
    return "-"


def table(scaling: Scaling) -> str:
    """The markdown table: per N, cold, warm, rewriting and growth rows."""
    names = [c.name for c in scaling.columns]
    header = ["blocks", "measure", *names, "target reached"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def add(blocks: str, measure: str, cells: list[str], target: str = "-") -> None:
        lines.append("| " + " | ".join(escape(c) for c in [blocks, measure, *cells, target]) + " |")

    previous: int | None = None
    for n in scaling.blocks:
        cells = [scaling.cell(name, n) for name in names]
        add(
            str(n),
            "cold",
            [describe(c.cold) if c else "-" for c in cells],
            targets(scaling, n, "cold"),
        )
        add(
            str(n),
            "warm",
            [describe(c.warm) if c else "-" for c in cells],
            targets(scaling, n, "warm"),
        )
        add(str(n), "rewriting, nodes after", [rewrite_text(c) if c else "-" for c in cells])
        if previous is not None:
            before = [scaling.cell(name, previous) for name in names]
            growth = [growth_text(c, b) for c, b in zip(cells, before, strict=True)]
            add(f"{previous} → {n}", "cold growth", growth)
        previous = n
    return "\n".join(lines)


def import_times(scaling: Scaling) -> str:
    """``opweave 0.30 s, PyTensor 0.20 s, ...``: median import time over the processes."""
    found: dict[str, list[float]] = {}
    for (name, _), cell in scaling.cells.items():
        library = next(c.library for c in scaling.columns if c.name == name)
        found.setdefault(library, []).extend(p.import_seconds for p in cell.probes)
    parts = [
        f"{LIBRARY_NAMES[lib]} {statistics.median(times):.2f} s ({len(times)} processes)"
        for lib, times in found.items()
        if times
    ]
    return ", ".join(parts) or "none measured"


def linkers_used(scaling: Scaling) -> str:
    """What ran each library's default column: ``default: cvm, PyTensor default: ...``."""
    parts = []
    for column in scaling.columns:
        linkers = {
            p.linker
            for (name, _), cell in scaling.cells.items()
            if name == column.name
            for p in cell.probes
        }
        if linkers and column.variant in ("default", "jit"):
            parts.append(f"`{column.name}` ran with {', '.join(sorted(linkers))}")
    return "; ".join(parts)


def unjudged(scaling: Scaling) -> list[str]:
    """A line naming the targets whose number of blocks was not measured (or none)."""
    if TARGET_BLOCKS not in scaling.blocks:
        return [f"Not judged: every target ({TARGET_BLOCKS} blocks are not in `--scaling-blocks`)."]
    if GROWTH_BLOCKS not in scaling.blocks:
        return [
            f"Not judged: the growth from {TARGET_BLOCKS} to {GROWTH_BLOCKS} blocks "
            f"({GROWTH_BLOCKS} blocks are not in `--scaling-blocks`)."
        ]
    return []


LEGEND = (
    "Cells: seconds from building the graph to the end of the first call, in a new process\n"
    "(import apart); cold: empty compile directory, warm: a second process on the same one.\n"
    "`rewriting`: building the `FunctionMaker` (rewriting the graph), median over the cell's\n"
    "processes, and the rewritten graph's node count. `cold growth`: ratio of cold times.\n"
    "`> T s`: killed after the timeout; `skipped`: not run after a timeout at a smaller N.\n"
    f"Targets judge opweave's default mode (`{JUDGED}`): at {TARGET_BLOCKS} blocks, cold\n"
    f"≤ {MAX_VS_JAX:g}x `{JAX_COLUMN}` and ≤ {MAX_VS_PYTENSOR:g}x `{PYTENSOR_DEFAULT}`, "
    f"warm < {MAX_WARM_S:g} s;\n"
    f"cold growth from {TARGET_BLOCKS} to {GROWTH_BLOCKS} blocks ≤ {MAX_GROWTH:g}x."
)


def section(scaling: Scaling, jax: JaxSide | NotAvailable) -> str:
    """The report's compile-scaling section: settings, table, legend and notes."""
    jax_line = f"n/a ({jax.reason})" if isinstance(jax, NotAvailable) else jax.describe()
    settings = (
        f"blocks {', '.join(map(str, scaling.blocks))}; timeout {scaling.timeout:g} s per "
        f"measurement; {scaling.repeat} compile director"
        f"{'y' if scaling.repeat == 1 else 'ies'} per cell (median)"
    )
    notes = [
        f"- import time (median over the processes, after NumPy): {import_times(scaling)}",
    ]
    if used := linkers_used(scaling):
        notes.append(f"- {used}")
    return "\n".join(
        [
            "## Compile scaling",
            "",
            "- workload: N blocks `e = tanh(e * c_i + 0.1) + mean(e) * 0.01`, "
            "`c_i = 1 + i / 1000`, float64 vector of 10 elements, checked against NumPy",
            f"- JAX: {jax_line}",
            f"- settings: {settings}",
            *notes,
            "",
            table(scaling),
            "",
            LEGEND,
            *(["", *unjudged(scaling)] if unjudged(scaling) else []),
        ]
    )
