"""Time the ``dask`` linker against the same computation written in plain ``dask.array``
and against opweave's ``c`` linker on whole arrays in memory.

Run: ``python benchmarks/dask_run.py [--size 2e7] [--chunk 1e6] [--repeat 3] [--ops 200]
[--out-of-core [--memory-size 2e7]] [--cluster] [--graphs sum,chain]
[--variants dask,plain,c,inputs]``.

Two graphs, each summed so that every variant computes a scalar: ``sum(exp(x) * y + z)``
and a chain of ``--ops`` elementwise operations on ``x``. The variants (rows):

``dask``
    opweave's ``dask`` linker.
``plain``
    The same computation written with ``dask.array`` operations.
``c``
    opweave's ``c`` linker on NumPy arrays in memory (one thread).
``inputs``
    Plain ``dask.array`` summing the inputs only: the cost of producing the inputs'
    chunks, which the two Dask rows include (only printed with ``--out-of-core``).

By default the inputs are NumPy arrays of ``--size`` elements wrapped with
``dask.array.from_array``. With ``--out-of-core`` they are generated lazily, chunk by chunk,
by ``dask.array.random.default_rng(...).random`` and never held whole (so ``--size`` may
exceed the memory); the ``c`` row then runs on ``--memory-size`` elements in memory. Dask
runs on its threaded scheduler, or with ``--cluster`` on a ``distributed.LocalCluster`` of
two worker processes of one thread each.

Times are the best of ``--repeat`` runs, after one untimed run that compiles (and checks
that the variants agree; ``--no-warmup`` times that run too); ns/elem is per element of
``x``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import dask
import dask.array as da
import numpy as np

import opweave
import opweave.tensor as ot

#: Recursion limit for pickling a fused node of a few hundred operations to worker processes.
DEEP_PICKLE_LIMIT = 50_000


def chain(v: Any, n: int, exp: Callable[[Any], Any], tanh: Callable[[Any], Any]) -> Any:
    """``n`` elementwise operations on ``v``: a repeating cheap/expensive pattern."""
    for i in range(n):
        k = i % 4
        if k == 0:
            v = v * 0.999 + 0.001
        elif k == 1:
            v = tanh(v)
        elif k == 2:
            v = v - 0.5
        else:
            v = exp(v * 0.01)
    return v


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The best time of ``repeat`` calls of ``fn`` and the last call's value."""
    times = []
    value = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


@contextlib.contextmanager
def scheduler(cluster: bool) -> Iterator[str]:
    """Dask's threaded scheduler, or a two-process ``LocalCluster`` (yields its name)."""
    if not cluster:
        with dask.config.set(scheduler="threads"):
            yield f"threaded scheduler ({os.cpu_count()} threads)"
        return
    import distributed

    sys.setrecursionlimit(DEEP_PICKLE_LIMIT)
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as lc,
        distributed.Client(lc) as client,
    ):
        client.run(sys.setrecursionlimit, DEEP_PICKLE_LIMIT)
        yield "LocalCluster (2 worker processes x 1 thread)"


def lazy_inputs(count: int, n: int, chunk: int) -> list[da.Array]:
    """``count`` lazy uniform [0, 1) vectors of ``n`` elements, generated chunk by chunk."""
    return [da.random.default_rng(k).random(n, chunks=chunk) for k in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=2e7, help="elements of each input")
    parser.add_argument("--chunk", type=float, default=1e6, help="elements of each chunk")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ops", type=int, default=200, help="length of the chain")
    parser.add_argument("--out-of-core", action="store_true", help="generate inputs lazily")
    parser.add_argument("--memory-size", type=float, default=2e7, help="size of the c row")
    parser.add_argument("--cluster", action="store_true", help="two-process LocalCluster")
    parser.add_argument("--graphs", default="sum,chain")
    parser.add_argument("--variants", default="dask,plain,c,inputs")
    parser.add_argument(
        "--no-warmup", action="store_true", help="time the first run too (for very long runs)"
    )
    args = parser.parse_args()
    n, chunk = int(args.size), int(args.chunk)
    m = min(n, int(args.memory_size)) if args.out_of_core else n
    graphs = set(args.graphs.split(","))
    variants = set(args.variants.split(","))
    if not args.out_of_core:
        variants.discard("inputs")

    rng = np.random.default_rng(0)
    np_args3 = [rng.random(m) for _ in range(3)] if "c" in variants else []
    if args.out_of_core:
        dask_args3 = lazy_inputs(3, n, chunk)
    else:
        dask_args3 = [da.from_array(v, chunks=chunk) for v in np_args3] or [
            da.from_array(rng.random(n), chunks=chunk) for _ in range(3)
        ]

    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    cases = {
        "sum": (
            "sum(exp(x)*y+z)",
            [x, y, z],
            ot.sum(ot.exp(x) * y + z),
            lambda a, b, c: da.sum(da.exp(a) * b + c),
            3,
        ),
        "chain": (
            f"{args.ops}-op chain",
            [x],
            ot.sum(chain(x, args.ops, ot.exp, ot.tanh)),
            lambda a: da.sum(chain(a, args.ops, da.exp, da.tanh)),
            1,
        ),
    }
    inputs_how = "generated lazily per chunk" if args.out_of_core else "from_array"
    with scheduler(args.cluster) as where:
        print(
            f"n = {n:.2e} float64 ({inputs_how}), chunks of {chunk:.0e}, {where}, "
            f"best of {args.repeat}; c row on {m:.2e} elements in memory"
        )
        print(f"{'graph':<18} {'variant':<24} {'elements':>9} {'seconds':>9} {'ns/elem':>9}")
        for key, (label, ins, out, plain, arity) in cases.items():
            if key not in graphs:
                continue
            on_dask = opweave.function(ins, out, mode=opweave.Mode(linker="dask"))
            on_c = opweave.function(ins, out, mode=opweave.Mode(linker="c"))
            dask_args, np_args = dask_args3[:arity], np_args3[:arity]
            rows: dict[str, tuple[int, Callable[[], Any]]] = {
                "dask": (n, lambda: on_dask(*dask_args).compute()),  # noqa: B023
                "plain": (n, lambda: plain(*dask_args).compute()),  # noqa: B023
                "c": (m, lambda: on_c(*np_args)),  # noqa: B023
                "inputs": (n, lambda: sum(da.sum(a) for a in dask_args).compute()),  # noqa: B023
            }
            names = {
                "dask": "opweave dask linker",
                "plain": "plain dask.array",
                "c": "opweave c (in memory)",
                "inputs": "inputs only (sum)",
            }
            values: dict[str, Any] = {}
            for variant, (size, fn) in rows.items():
                if variant not in variants:
                    continue
                if args.no_warmup:
                    seconds, values[variant] = timed(fn, args.repeat)
                else:
                    values[variant] = fn()  # untimed: compiles, and checked below
                    seconds, _ = timed(fn, args.repeat)
                print(
                    f"{label:<18} {names[variant]:<24} {size:>9.2e} {seconds:>9.3f}"
                    f" {seconds / size * 1e9:>9.2f}",
                    flush=True,
                )
            if "dask" in values and "plain" in values:
                assert np.allclose(values["dask"], values["plain"], rtol=1e-9), values
            if "c" in values and "dask" in variants:
                # The dask linker on the c row's arrays (those of the timed run when m == n).
                same = values["dask"] if m == n else on_dask(*np_args).compute()
                assert np.allclose(same, values["c"], rtol=1e-9), (same, values["c"])


if __name__ == "__main__":
    main()
