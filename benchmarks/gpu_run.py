"""opweave's GPU benchmarks (issue 6): the CUDA backend against the device, CuPy and PyTorch.

Usage::

    python benchmarks/gpu_run.py [--quick] [--n N] [--no-cupy] [--no-torch]

Prints (stdout) a markdown report like ``run.py``'s: the device and versions, then one
table of median times per call with their ratio to the row's reference (lower is better)
and whether the row's target is reached. Progress goes to stderr. The cases:

* fused ``exp(x) * y + z`` on ``N`` float32 (default 1e8) through opweave (``linker='cuda'``,
  the three inputs GPU shared variables, the result left on the device), as a fraction of
  the device's copy bandwidth measured with a device-to-device copy (target: at least
  80 %), and against CuPy's ``ElementwiseKernel`` on the same data (target: no slower);
* ``sum(x ** 2)`` on ``N`` float32, against CuPy and PyTorch;
* the layout cases of ``gpu_layouts.py`` (bias rows and columns, transposed and strided
  inputs, reductions over either axis of a matrix), against the copy-bound time, CuPy and
  PyTorch;
* one SGD step of the 784-256-10 MLP of ``run.py`` (batch 256, tanh, log-softmax cross
  entropy, ``grad``, shared weights updated on the device) in float32, against PyTorch.

Every time is taken with the device synchronised before the clock is read (each timed
call ends with a device synchronisation). CuPy and PyTorch columns show ``n/a (why)``
when they do not import. Without a usable GPU (no pycuda, no driver, no device) the script
says why on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from importlib import metadata
from pathlib import Path
from typing import Any

import gpu_layouts
import numpy as np
import workloads
from report import NotAvailable, Outcome, Row, Target, markdown_table, seconds_of
from timing import Settings, median_time

REPO = Path(__file__).resolve().parent.parent
OPWEAVE = "opweave cuda"
CUPY = "CuPy"
TORCH = "PyTorch"
COLUMNS = [OPWEAVE, CUPY, TORCH]
#: Exit status when no GPU benchmark can run on this machine.
NO_GPU = 2


def log(message: str) -> None:
    """Progress, on stderr."""
    print(f"[gpu_run] {message}", file=sys.stderr, flush=True)


def fmt_n(n: int) -> str:
    """``1e8`` for a power of ten, else the number."""
    digits = str(n)
    if digits.startswith("1") and set(digits[1:]) <= {"0"} and n >= 10:
        return f"1e{len(digits) - 1}"
    return digits


@dataclass
class Bench:
    """What every case needs: the settings, the element count and the other libraries."""

    settings: Settings
    n: int
    cupy: Any
    torch: Any
    sync: Callable[[], None]

    def time(self, fn: Callable[[], object], sync: Callable[[], None] | None = None) -> float:
        """Median seconds per call of ``fn()``, each call followed by a device sync."""
        finish = sync or self.sync

        def call() -> None:
            fn()
            finish()

        s = self.settings
        return median_time(call, repeat=s.repeat, min_run_seconds=s.min_run_seconds)

    def cupy_sync(self) -> None:
        """Wait for CuPy's work."""
        self.cupy.cuda.runtime.deviceSynchronize()

    def torch_sync(self) -> None:
        """Wait for PyTorch's work."""
        self.torch.cuda.synchronize()


def optional(name: str, enabled: bool) -> Any:
    """The module ``name`` (``cupy``/``torch``) when enabled, importable and seeing a GPU,
    else a :class:`NotAvailable` saying why."""
    if not enabled:
        return NotAvailable(f"--no-{name}")
    try:
        module = __import__(name)
    except Exception as exc:  # ImportError, or a broken CUDA install
        return NotAvailable(f"{name} does not import: {type(exc).__name__}")
    try:
        ok = module.cuda.is_available() if name == "torch" else module.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return NotAvailable(f"{name} sees no GPU: {type(exc).__name__}: {exc}")
    return module if ok else NotAvailable(f"{name} sees no GPU")


def attempt(what: str, fn: Callable[[], Outcome]) -> Outcome:
    """``fn()``, or ``n/a`` with the error (also logged) when it raises."""
    try:
        return fn()
    except Exception as exc:
        log(f"{what} failed: {type(exc).__name__}: {exc}")
        return NotAvailable(f"{type(exc).__name__}: {str(exc)[:80]}")


def checked(name: str, got: np.ndarray, expected: np.ndarray, notes: list[str]) -> None:
    """Note a result that differs from NumPy's (the timing is still reported)."""
    if not np.allclose(got, expected, rtol=1e-4, atol=1e-4):
        notes.append(f"{name}: WRONG RESULT (max error {np.abs(got - expected).max():.3g})")


# ---------------------------------------------------------------------- opweave


def gpu_function(outputs: Any, updates: list[tuple[Any, Any]] | None = None) -> Any:
    """``opweave.function([], outputs)`` with the ``cuda`` linker."""
    import opweave

    return opweave.function([], outputs, updates=updates or [], mode=opweave.Mode(linker="cuda"))


def placement(fn: Any) -> str:
    """``12 GPU nodes, 1 host node (LogSoftmax), 2 transfers`` for a compiled function."""
    from opweave_cuda import GpuFromHost, HostFromGpu
    from opweave_cuda.ops import GpuOp

    nodes = list(fn.maker.fgraph.apply_nodes)
    gpu = [n for n in nodes if isinstance(n.op, GpuOp)]
    moves = [n for n in nodes if isinstance(n.op, GpuFromHost | HostFromGpu)]
    host = sorted({type(n.op).__name__ for n in nodes if n not in gpu and n not in moves})
    text = f"{len(gpu)} GPU nodes, {len(nodes) - len(gpu) - len(moves)} host nodes"
    text += f" ({', '.join(host)})" if host else ""
    return f"{text}, {len(moves)} transfers"


def on_device(*arrays: np.ndarray) -> list[Any]:
    """GPU shared variables holding ``arrays`` (uploaded once)."""
    import opweave

    return [opweave.shared(a, target="cuda") for a in arrays]


def opweave_fused(data: list[np.ndarray], bench: Bench, notes: list[str]) -> Outcome:
    """``exp(x) * y + z`` with the inputs and the result on the device."""
    import opweave.tensor as ot
    from opweave_cuda.device_copy import to_host

    x, y, z = (v.transfer("cpu") for v in on_device(*data))
    f = gpu_function((ot.exp(x) * y + z).transfer("cuda"))
    notes.append(f"opweave: {placement(f)}")
    k = min(bench.n, 10**6)
    checked("opweave", to_host(f())[:k], np.exp(data[0][:k]) * data[1][:k] + data[2][:k], notes)
    return bench.time(f)


def opweave_sum_squares(x: np.ndarray, bench: Bench, notes: list[str]) -> Outcome:
    """``sum(x ** 2)`` with the input and the result on the device."""
    import opweave.tensor as ot
    from opweave_cuda.device_copy import to_host

    (gx,) = on_device(x)
    f = gpu_function(ot.sum(gx.transfer("cpu") ** 2).transfer("cuda"))
    notes.append(f"opweave: {placement(f)}")
    expected = np.dot(x.astype("float64"), x.astype("float64"))
    got = float(to_host(f()))
    if not np.isclose(got, expected, rtol=1e-3):
        notes.append(f"opweave: WRONG RESULT ({got} instead of {expected})")
    return bench.time(f)


def mlp_params() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The MLP case's weights, batch and one-hot labels of ``run.py``, as float32."""
    data = workloads.mlp_data("float32")
    return data.params(), data.x, data.onehot


def opweave_mlp(by_hand: bool, bench: Bench, notes: list[str]) -> tuple[Outcome, float]:
    """One SGD step on the device: weights, batch and labels are GPU shared variables.

    ``by_hand`` writes the log-softmax with ``max``/``exp``/``sum``/``log`` (all moved to
    the GPU) instead of ``ot.log_softmax``. Returns the time and the first step's loss.
    """
    import opweave
    import opweave.tensor as ot
    from opweave_cuda.device_copy import to_host

    params, xb, tb = mlp_params()
    shared = on_device(*params, xb, tb)
    w1, b1, w2, b2, x, t = (v.transfer("cpu") for v in shared)
    z = ot.dot(ot.tanh(ot.dot(x, w1) + b1), w2) + b2
    if by_hand:
        z = z - ot.max(z, axis=1, keepdims=True)
        logp = z - ot.log(ot.sum(ot.exp(z), axis=1, keepdims=True))
    else:
        logp = ot.log_softmax(z, axis=-1)
    loss = -ot.mean(ot.sum(t * logp, axis=1))
    grads = opweave.grad(loss, [w1, b1, w2, b2])
    lr = np.float32(workloads.LEARNING_RATE)
    params_on_host = (w1, b1, w2, b2)
    updates = [(s, p - lr * g) for s, p, g in zip(shared[:4], params_on_host, grads, strict=True)]
    step = gpu_function(loss.transfer("cuda"), updates)
    notes.append(f"opweave{' (by hand)' if by_hand else ''}: {placement(step)}")
    first = float(to_host(step()))
    return bench.time(step), first


# ---------------------------------------------------------------------- CuPy and PyTorch


def cupy_fused(data: list[np.ndarray], bench: Bench, notes: list[str]) -> Outcome:
    """CuPy's ``ElementwiseKernel`` computing ``exp(x) * y + z`` in one pass."""
    cp = bench.cupy
    kernel = cp.ElementwiseKernel(
        "float32 x, float32 y, float32 z", "float32 out", "out = expf(x) * y + z", "opw_fused"
    )
    xs = [cp.asarray(a) for a in data]
    k = min(bench.n, 10**6)
    got = cp.asnumpy(kernel(*xs)[:k])
    checked("CuPy", got, np.exp(data[0][:k]) * data[1][:k] + data[2][:k], notes)
    return bench.time(lambda: kernel(*xs), bench.cupy_sync)


def torch_fused(data: list[np.ndarray], bench: Bench) -> Outcome:
    """PyTorch eager ``torch.exp(x) * y + z`` (three kernels)."""
    torch = bench.torch
    x, y, z = (torch.from_numpy(a).cuda() for a in data)
    return bench.time(lambda: torch.exp(x) * y + z, bench.torch_sync)


def cupy_sum_squares(x: np.ndarray, bench: Bench) -> Outcome:
    """CuPy ``(x * x).sum()``."""
    gx = bench.cupy.asarray(x)
    return bench.time(lambda: (gx * gx).sum(), bench.cupy_sync)


def torch_sum_squares(x: np.ndarray, bench: Bench) -> Outcome:
    """PyTorch ``(x * x).sum()``."""
    gx = bench.torch.from_numpy(x).cuda()
    return bench.time(lambda: (gx * gx).sum(), bench.torch_sync)


def torch_mlp(bench: Bench, notes: list[str], first_loss: float | None) -> Outcome:
    """The same SGD step with PyTorch autograd, on the device."""
    torch = bench.torch
    params, xb, tb = mlp_params()
    w1, b1, w2, b2 = ps = [torch.from_numpy(p).cuda().requires_grad_() for p in params]
    x, t = torch.from_numpy(xb).cuda(), torch.from_numpy(tb).cuda()
    lr = workloads.LEARNING_RATE

    def step() -> Any:
        logp = torch.log_softmax(torch.tanh(x @ w1 + b1) @ w2 + b2, dim=1)
        loss = -(t * logp).sum(dim=1).mean()
        grads = torch.autograd.grad(loss, ps)
        with torch.no_grad():
            for p, g in zip(ps, grads, strict=True):
                p -= lr * g
        return loss

    first = float(step())
    if first_loss is not None and not np.isclose(first, first_loss, rtol=1e-3):
        notes.append(f"first-step losses differ: opweave {first_loss:.6g}, PyTorch {first:.6g}")
    return bench.time(step, bench.torch_sync)


# ---------------------------------------------------------------------- rows


def other(bench: Bench, module: str, fn: Callable[[], Outcome]) -> Outcome:
    """``fn()`` when ``module`` (``cupy``/``torch``) is there, else why not."""
    lib = getattr(bench, module)
    return lib if isinstance(lib, NotAvailable) else attempt(module, fn)


def copy_bandwidth(bench: Bench, nbytes: int) -> float:
    """Bytes per second (read + write) of a device-to-device copy of ``nbytes``."""
    import pycuda.driver as drv

    from opweave_cuda.device_copy import empty

    src, dst = empty((nbytes,), "uint8"), empty((nbytes,), "uint8")
    return (
        2 * nbytes / bench.time(lambda: drv.memcpy_dtod(int(dst.gpudata), int(src.gpudata), nbytes))
    )


def fused_rows(bench: Bench) -> list[Row]:
    """The fused case against the copy bandwidth, and against CuPy."""
    n = bench.n
    log(f"exp(x) * y + z, n={fmt_n(n)}")
    rng = np.random.default_rng(0)
    data = [rng.standard_normal(n, dtype=np.float32) for _ in range(3)]
    copy = copy_bandwidth(bench, 4 * n)
    moved = 4 * 4 * n  # read x, y, z; write the result
    notes: list[str] = []
    times: dict[str, Outcome] = {
        OPWEAVE: attempt("opweave", lambda: opweave_fused(data, bench, notes))
    }
    times[CUPY] = other(bench, "cupy", lambda: cupy_fused(data, bench, notes))
    times[TORCH] = other(bench, "torch", lambda: torch_fused(data, bench))
    parts = [f"copy {copy / 1e9:.0f} GB/s (memcpy_dtod of {4 * n / 1e6:.0f} MB)"]
    for name, outcome in times.items():
        if (t := seconds_of(outcome)) is not None:
            parts.append(
                f"{name} {moved / t / 1e9:.0f} GB/s ({100 * moved / t / copy:.0f}% of copy)"
            )
    notes.insert(0, ", ".join(parts))
    case = f"exp(x) * y + z, n={fmt_n(n)} float32"
    against_copy = Row(
        case,
        "copy-bound",
        moved / copy,
        times,
        Target("≥ 80% of copy bandwidth", 1 / 0.8, linkers=(OPWEAVE,)),
        notes,
    )
    against_cupy = Row(
        f"{case}, against CuPy",
        "CuPy ElementwiseKernel",
        times[CUPY],
        times,
        Target("≤ 1.0x CuPy", 1.0, linkers=(OPWEAVE,)),
        ["PyTorch: eager, three kernels"],
    )
    return [against_copy, against_cupy]


def sum_squares_row(bench: Bench) -> Row:
    """``sum(x ** 2)`` against CuPy and PyTorch (reference: the copy-bound read time)."""
    n = bench.n
    log(f"sum(x ** 2), n={fmt_n(n)}")
    x = np.random.default_rng(1).standard_normal(n, dtype=np.float32)
    notes: list[str] = []
    times = {
        OPWEAVE: attempt("opweave", lambda: opweave_sum_squares(x, bench, notes)),
        CUPY: other(bench, "cupy", lambda: cupy_sum_squares(x, bench)),
        TORCH: other(bench, "torch", lambda: torch_sum_squares(x, bench)),
    }
    copy = copy_bandwidth(bench, 4 * n)
    notes.insert(0, "reference: reading x once at the copy bandwidth")
    return Row(f"sum(x ** 2), n={fmt_n(n)} float32", "copy-bound", 4 * n / copy, times, None, notes)


def opweave_layout(
    case: gpu_layouts.LayoutCase, data: list[np.ndarray], bench: Bench, notes: list[str]
) -> Outcome:
    """A layout case compiled with the ``cuda`` linker, inputs and result on the device."""
    import opweave.tensor as ot
    from opweave_cuda.device_copy import to_host

    inputs = [v.transfer("cpu") for v in on_device(*data)]
    f = gpu_function(case.expr(ot, *inputs).transfer("cuda"))
    notes.append(f"opweave: {placement(f)}")
    checked("opweave", to_host(f()), case.numpy(*data), notes)
    return bench.time(f)


def layout_row(case: gpu_layouts.LayoutCase, bench: Bench, copy: float) -> Row:
    """One layout case against the copy-bound time, CuPy and PyTorch."""
    log(f"layout: {case.name}")
    data = case.data(bench.n)
    notes = [" x ".join(str(s) for s in data[0].shape) + " float32"]
    times: dict[str, Outcome] = {
        OPWEAVE: attempt(f"opweave {case.name}", lambda: opweave_layout(case, data, bench, notes)),
        CUPY: other(bench, "cupy", lambda: gpu_layouts.cupy_case(case, data, bench)),
        TORCH: other(bench, "torch", lambda: gpu_layouts.torch_case(case, data, bench)),
    }
    ref = gpu_layouts.moved_bytes(case, data) / copy
    return Row(case.name, "copy-bound", ref, times, None, notes)


def mlp_row(bench: Bench, by_hand: bool) -> Row:
    """The MLP step with ``ot.log_softmax``, or with the log-softmax written out."""
    shape = f"{workloads.MLP_IN}-{workloads.MLP_HIDDEN}-{workloads.MLP_OUT}"
    notes: list[str] = []
    first: list[float] = []

    def run() -> Outcome:
        seconds, loss = opweave_mlp(by_hand, bench, notes)
        first.append(loss)
        return seconds

    times: dict[str, Outcome] = {
        OPWEAVE: attempt("opweave MLP", run),
        CUPY: NotAvailable("not run"),
    }
    times[TORCH] = other(bench, "torch", lambda: torch_mlp(bench, notes, next(iter(first), None)))
    label = "log-softmax by hand" if by_hand else "ot.log_softmax"
    case = f"MLP SGD step {shape}, batch {workloads.MLP_BATCH}, float32 ({label})"
    return Row(case, TORCH, times[TORCH], times, None, notes)


# ---------------------------------------------------------------------- report


def versions(bench: Bench) -> str:
    """pycuda, CuPy, PyTorch and opweave-cuda versions."""
    found = []
    for name in ("opweave", "opweave-cuda", "pycuda"):
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    for name, lib in (("CuPy", bench.cupy), ("PyTorch", bench.torch)):
        found.append(
            f"{name} n/a ({lib.reason})"
            if isinstance(lib, NotAvailable)
            else f"{name} {lib.__version__}"
        )
    return ", ".join(found)


def tree_state() -> str:
    """The measured tree's commit, ``+ uncommitted changes`` when dirty."""
    try:
        git = ["git", "-C", str(REPO)]
        commit = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return commit.stdout.strip() + (" + uncommitted changes" if dirty.stdout.strip() else "")


def device_line() -> str:
    """``NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB), driver CUDA 12.8, pycuda built for 12.4``."""
    import pycuda.driver as drv

    dev = drv.Context.get_device()
    major, minor = dev.compute_capability()
    memory = dev.total_memory() / 2**30

    def cuda(v: int) -> str:
        return f"{v // 1000}.{v % 1000 // 10}"

    built = ".".join(str(v) for v in drv.get_version()[:2])
    return (
        f"{dev.name()} (sm_{major}{minor}, {memory:.1f} GiB), driver supports CUDA "
        f"{cuda(drv.get_driver_version())}, pycuda built for CUDA {built}"
    )


def header(bench: Bench) -> str:
    """The report's first lines: date, device, versions, settings."""
    s = bench.settings
    return "\n".join(
        [
            "# opweave GPU benchmarks",
            "",
            f"- date: {date.today().isoformat()}",
            f"- device: {device_line()}",
            f"- host: {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, "
            f"Python {platform.python_version()}, NumPy {np.__version__}",
            f"- versions: {versions(bench)}",
            f"- opweave tree: {tree_state()}",
            f"- settings: n = {fmt_n(bench.n)}; median of {s.repeat} runs of at least "
            f"{s.min_run_seconds} s each; every call ends with a device synchronisation",
        ]
    )


LEGEND = """\
Cells: median time per call, the device synchronised before the clock is read (ratio to
the row's reference; lower is better). `copy-bound`: the bytes the case must move at the
bandwidth of a device-to-device copy. Targets (issue 6) are judged on `opweave cuda`."""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats, n = 1e7")
    parser.add_argument("--n", type=int, help="elements of the fused and sum cases (default 1e8)")
    parser.add_argument("--no-cupy", action="store_true", help="do not run CuPy")
    parser.add_argument("--no-torch", action="store_true", help="do not run PyTorch")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run every case and print the report; ``NO_GPU`` (2) when there is no GPU."""
    args = parse_args(argv)
    from opweave_cuda import cuda_problem

    problem = cuda_problem()
    if problem is not None:
        print(f"gpu_run.py: no GPU benchmark on this machine: {problem}", file=sys.stderr)
        return NO_GPU
    import pycuda.driver as drv

    from opweave_cuda.availability import import_gpuarray

    import_gpuarray()  # the device's primary context, shared with CuPy and PyTorch
    settings = Settings.choose(args.quick)
    n = args.n or (10**7 if args.quick else 10**8)
    bench = Bench(
        settings,
        n,
        optional("cupy", not args.no_cupy),
        optional("torch", not args.no_torch),
        drv.Context.synchronize,
    )
    started = time.perf_counter()
    log("MLP step")
    rows = [*fused_rows(bench), sum_squares_row(bench)]
    copy = copy_bandwidth(bench, 4 * n)
    rows += [layout_row(case, bench, copy) for case in gpu_layouts.CASES]
    rows += [mlp_row(bench, False), mlp_row(bench, True)]
    log(f"done in {time.perf_counter() - started:.0f} s")
    print(header(bench), "", markdown_table(rows, COLUMNS), "", LEGEND, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
