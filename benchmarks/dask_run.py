"""Time the ``dask`` linker against the same computation written in plain ``dask.array``
and against opweave's ``c`` linker on the whole arrays in memory.

Run: ``python benchmarks/dask_run.py [--size 20000000] [--chunk 1000000] [--repeat 3]``.
Two graphs: ``sum(exp(x) * y + z)`` and a chain of 200 elementwise operations on ``x``
(``sum`` of it, so that every variant computes a scalar). Dask runs on its threaded
scheduler. Times are the best of ``--repeat`` runs (the first call of each compiled
function, which compiles, is not timed); ns/elem is per element of ``x``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import dask
import dask.array as da
import numpy as np

import opweave
import opweave.tensor as ot


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


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=2e7)
    parser.add_argument("--chunk", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ops", type=int, default=200)
    args = parser.parse_args()
    n, chunk = int(args.size), int(args.chunk)
    rng = np.random.default_rng(0)
    xv, yv, zv = (rng.random(n) for _ in range(3))
    dx, dy, dz = (da.from_array(v, chunks=chunk) for v in (xv, yv, zv))

    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    graphs = {
        "sum(exp(x)*y+z)": (
            [x, y, z],
            ot.sum(ot.exp(x) * y + z),
            lambda a, b, c: da.sum(da.exp(a) * b + c),
            (dx, dy, dz),
            (xv, yv, zv),
        ),
        f"{args.ops}-op chain": (
            [x],
            ot.sum(chain(x, args.ops, ot.exp, ot.tanh)),
            lambda a: da.sum(chain(a, args.ops, da.exp, da.tanh)),
            (dx,),
            (xv,),
        ),
    }
    print(f"n = {n:.0e} float64, chunks of {chunk:.0e}, threaded scheduler, best of {args.repeat}")
    print(f"{'graph':<18} {'variant':<22} {'seconds':>9} {'ns/elem':>9}")
    with dask.config.set(scheduler="threads"):
        for label, (ins, out, plain, dask_args, np_args) in graphs.items():
            on_dask = opweave.function(ins, out, mode=opweave.Mode(linker="dask"))
            on_c = opweave.function(ins, out, mode=opweave.Mode(linker="c"))
            expected = on_c(*np_args)
            got = on_dask(*dask_args).compute()
            ref = plain(*dask_args).compute()
            assert np.allclose(got, expected, rtol=1e-9), (got, expected)
            assert np.allclose(ref, expected, rtol=1e-9), (ref, expected)
            rows = {
                "opweave dask linker": lambda: on_dask(*dask_args).compute(),  # noqa: B023
                "plain dask.array": lambda: plain(*dask_args).compute(),  # noqa: B023
                "opweave c (in memory)": lambda: on_c(*np_args),  # noqa: B023
            }
            for variant, fn in rows.items():
                seconds = best(fn, args.repeat)
                print(f"{label:<18} {variant:<22} {seconds:>9.3f} {seconds / n * 1e9:>9.2f}")


if __name__ == "__main__":
    main()
