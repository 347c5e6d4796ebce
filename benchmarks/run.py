"""opweave's benchmarks: every installed linker against NumPy (and PyTensor when importable).

Usage::

    python benchmarks/run.py [--quick] [--linkers py,vm]

Prints one table of median times and ratios (opweave / reference; lower is better). The
cases are those of DESIGN.md section 6. Columns for linkers that are not installed (``c``,
``cvm`` before opweave-c exists) and for PyTensor when it cannot be imported are shown as
``n/a``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.link.lookup import available_linkers


@dataclass
class Row:
    """One benchmark case: a reference time and one time per linker."""

    case: str
    reference: str
    ref_seconds: float
    seconds: dict[str, float | None]
    extra: str = ""


def median_time(fn: Callable[[], object], repeat: int, number: int) -> float:
    """Median over ``repeat`` runs of the mean time of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return statistics.median(times)


def pytensor_or_none():
    try:
        import pytensor  # noqa: F401
        import pytensor.tensor as pt
    except ImportError:
        return None
    return pt


def copy_bandwidth(n: int) -> float:
    """Bytes per second of ``np.copyto`` on ``n`` float64s (read + write)."""
    src, dst = np.ones(n), np.empty(n)
    t = median_time(lambda: np.copyto(dst, src), 5, 3)
    return 2 * src.nbytes / t


def case_overhead(linkers: list[str], repeat: int) -> Row:
    a, b, c = ot.dscalars("a", "b", "c")
    expr = (a + b) * c
    times: dict[str, float | None] = {}
    for name in linkers:
        f = opweave.function([a, b, c], expr, mode=Mode(linker=name))
        times[name] = median_time(lambda f=f: f(1.0, 2.0, 3.0), repeat, 2000)
    ref = median_time(lambda: (1.0 + 2.0) * 3.0, repeat, 20000)
    return Row("(x + y) * z, Python floats", "Python", ref, times, "call overhead")


def case_fused(linkers: list[str], n: int, repeat: int, bandwidth: float) -> Row:
    x, y, z = ot.dvectors("x", "y", "z")
    expr = ot.exp(x) * y + z
    rng = np.random.default_rng(0)
    xv, yv, zv = (rng.normal(size=n) for _ in range(3))
    number = max(1, int(2e6 // n))
    times: dict[str, float | None] = {}
    for name in linkers:
        f = opweave.function([x, y, z], expr, mode=Mode(linker=name))
        times[name] = median_time(lambda f=f: f(xv, yv, zv), repeat, number)
    ref = median_time(lambda: np.exp(xv) * yv + zv, repeat, number)
    best = min(t for t in times.values() if t)
    gbs = 4 * 8 * n / best / 1e9
    extra = f"best {gbs:.1f} GB/s ({100 * gbs * 1e9 / bandwidth:.0f}% of copy bandwidth)"
    return Row(f"exp(x) * y + z, n={n:.0e}", "NumPy", ref, times, extra)


def case_sum_squares(linkers: list[str], n: int, repeat: int) -> Row:
    x = ot.dvector("x")
    xv = np.random.default_rng(1).normal(size=n)
    times: dict[str, float | None] = {}
    for name in linkers:
        f = opweave.function([x], ot.sum(x**2), mode=Mode(linker=name))
        times[name] = median_time(lambda f=f: f(xv), repeat, 3)
    ref = median_time(lambda: np.dot(xv, xv), repeat, 3)
    return Row(f"sum(x ** 2), n={n:.0e}", "np.dot(x, x)", ref, times)


def case_chain(linkers: list[str], n: int, repeat: int) -> Row:
    x = ot.dvector("x")
    expr = x
    for k in range(200):
        expr = ot.tanh(expr) * 0.5 + 0.1 if k % 2 else expr * 1.01 - 0.01
    xv = np.random.default_rng(2).normal(size=n)

    def numpy_chain() -> np.ndarray:
        r = xv
        for k in range(200):
            r = np.tanh(r) * 0.5 + 0.1 if k % 2 else r * 1.01 - 0.01
        return r

    times: dict[str, float | None] = {}
    for name in linkers:
        f = opweave.function([x], expr, mode=Mode(linker=name))
        times[name] = median_time(lambda f=f: f(xv), repeat, 5)
    ref = median_time(numpy_chain, repeat, 5)
    return Row(f"200 elementwise ops, n={n:.0e}", "NumPy", ref, times)


def case_mlp(linkers: list[str], repeat: int) -> Row:
    rng = np.random.default_rng(3)
    batch, n_in, n_hid, n_out, lr = 256, 784, 256, 10, 0.01
    xv = rng.normal(size=(batch, n_in))
    labels = rng.integers(0, n_out, size=batch)
    onehot = np.eye(n_out)[labels]
    w1_0 = rng.normal(scale=0.05, size=(n_in, n_hid))
    w2_0 = rng.normal(scale=0.05, size=(n_hid, n_out))

    x, t = ot.dmatrix("x"), ot.dmatrix("t")
    times: dict[str, float | None] = {}
    for name in linkers:
        w1, w2 = opweave.shared(w1_0.copy()), opweave.shared(w2_0.copy())
        b1, b2 = opweave.shared(np.zeros(n_hid)), opweave.shared(np.zeros(n_out))
        h = ot.tanh(ot.dot(x, w1) + b1)
        loss = -ot.mean(ot.sum(t * ot.log_softmax(ot.dot(h, w2) + b2, axis=-1), axis=1))
        params = [w1, b1, w2, b2]
        grads = opweave.grad(loss, params)
        step = opweave.function(
            [x, t],
            loss,
            updates=[(p, p - lr * g) for p, g in zip(params, grads, strict=True)],
            mode=Mode(linker=name),
        )
        times[name] = median_time(lambda s=step: s(xv, onehot), repeat, 3)

    w1, w2 = w1_0.copy(), w2_0.copy()
    b1, b2 = np.zeros(n_hid), np.zeros(n_out)

    def numpy_step() -> float:
        nonlocal w1, w2, b1, b2
        a1 = xv @ w1 + b1
        h = np.tanh(a1)
        z = h @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        loss = -np.mean(np.sum(onehot * logp, axis=1))
        dz = (np.exp(logp) - onehot) / batch
        gw2, gb2 = h.T @ dz, dz.sum(axis=0)
        da1 = (dz @ w2.T) * (1 - h**2)
        gw1, gb1 = xv.T @ da1, da1.sum(axis=0)
        w1, b1, w2, b2 = w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2
        return loss

    ref = median_time(numpy_step, repeat, 3)
    return Row("MLP SGD step 784-256-10, batch 256", "NumPy by hand", ref, times)


COMPILE_SCRIPT = textwrap.dedent(
    """
    import time, sys
    start = time.perf_counter()
    import opweave, opweave.tensor as ot
    from opweave.compile import Mode
    x, y, z = ot.dvectors("x", "y", "z")
    t0 = time.perf_counter()
    opweave.function([x, y, z], ot.exp(x) * y + z, mode=Mode(linker=sys.argv[1]))
    print(time.perf_counter() - t0)
    """
)


def case_compile(linkers: list[str]) -> tuple[Row, Row]:
    """Compile time of the small elementwise graph in a fresh process, twice."""
    cold: dict[str, float | None] = {}
    warm: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as compiledir:
        for name in linkers:
            runs = []
            for _ in range(2):
                out = subprocess.run(
                    [sys.executable, "-c", COMPILE_SCRIPT, name],
                    capture_output=True,
                    text=True,
                    check=True,
                    env={"OPWEAVE_FLAGS": f"compiledir={compiledir}", "PATH": ""},
                )
                runs.append(float(out.stdout.strip()))
            cold[name], warm[name] = runs
    return (
        Row("compile exp(x) * y + z, cold", "-", float("nan"), cold, "fresh compiledir"),
        Row("compile exp(x) * y + z, warm", "-", float("nan"), warm, "same compiledir"),
    )


def fmt_time(seconds: float | None) -> str:
    if seconds is None or seconds != seconds:
        return "n/a"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def print_table(rows: list[Row], linkers: list[str]) -> None:
    header = ["case", "reference"] + [f"{name}" for name in linkers] + ["ratios", "notes"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for row in rows:
        cells = [row.case, f"{row.reference} {fmt_time(row.ref_seconds)}"]
        cells += [fmt_time(row.seconds.get(name)) for name in linkers]
        ratios = []
        for name in linkers:
            t = row.seconds.get(name)
            if t and row.ref_seconds == row.ref_seconds:
                ratios.append(f"{name} {t / row.ref_seconds:.2f}x")
        cells += [", ".join(ratios) or "-", row.extra]
        print(" | ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, no 1e7 cases")
    parser.add_argument("--linkers", help="comma-separated linkers (default: all installed)")
    args = parser.parse_args(argv)
    installed = sorted(available_linkers())
    linkers = args.linkers.split(",") if args.linkers else installed
    repeat = 3 if args.quick else 7
    big = 10**6 if args.quick else 10**7
    print(f"opweave {opweave.__version__}; linkers installed: {', '.join(installed)}")
    print(f"NumPy {np.__version__}; PyTensor: {'yes' if pytensor_or_none() else 'not importable'}")
    bandwidth = copy_bandwidth(big)
    print(f"measured copy bandwidth: {bandwidth / 1e9:.1f} GB/s\n")
    rows = [case_overhead(linkers, repeat)]
    rows += [case_fused(linkers, n, repeat, bandwidth) for n in (10**3, 10**5, big)]
    rows.append(case_sum_squares(linkers, big, repeat))
    rows.append(case_chain(linkers, 10**4, repeat))
    rows.append(case_mlp(linkers, repeat))
    rows.extend(case_compile(linkers))
    print_table(rows, linkers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
