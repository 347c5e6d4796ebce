"""One measurement of the compile-scaling table, in this (fresh) process, for ``scaling.py``.

Usage::

    python benchmarks/scaling_probe.py '{"library": "opweave", "column": "cvm", "blocks": 120}'
    python benchmarks/scaling_probe.py '{"library": "jax", "case": "info"}'

Runs with the Python of the library's venv: the project's venv for ``opweave``, the
benchmark venvs for ``pytensor`` and ``jax``. At module level it imports only the standard
library, NumPy and ``workloads``; then it times importing the library alone
(``import opweave, opweave.tensor``; ``import pytensor, pytensor.tensor``;
``import jax, jax.numpy``), builds the graph of ``blocks`` blocks of
:func:`workloads.blocks`, compiles it, calls it once on :func:`workloads.blocks_input` and
checks the result against NumPy (outside the timed part). The caller picks the compile
directory through the environment (``OPWEAVE_FLAGS``, ``PYTENSOR_FLAGS``,
``JAX_COMPILATION_CACHE_DIR``).

``column`` is, for opweave, a linker name or ``default`` (``mode=None``: ``config.mode``);
for PyTensor ``default`` (``mode=None``) or ``cvm`` (``Mode(linker="cvm")``); for JAX
``jit``. opweave and PyTensor compile through their ``FunctionMaker``: building it is
the rewriting (``rewrite_seconds``), ``create`` then links (and compiles C or Numba code).

Prints one JSON object: ``{"seconds", "rewrite_seconds", "nodes", "import_seconds",
"linker"}`` (``seconds``: building the graph, compiling and the first call; ``nodes``: the
rewritten graph's nodes; ``linker``: what ran it), ``{"error": "..."}``, or ``{"info":
{...}}`` for ``"case": "info"``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import workloads

#: What a compile step returns: the result of the first call, the rewriting time, the
#: number of nodes after rewriting and the name of what ran the graph.
Compiled = tuple[Any, float | None, int | None, str]


def import_library(library: str) -> float:
    """Import ``library`` (and its tensor module) and return the seconds it took."""
    start = time.perf_counter()
    if library == "opweave":
        import opweave
        import opweave.tensor  # noqa: F401
    elif library == "pytensor":
        import pytensor
        import pytensor.tensor  # noqa: F401
    elif library == "jax":
        import jax
        import jax.numpy  # noqa: F401
    else:
        raise ValueError(f"library must be 'opweave', 'pytensor' or 'jax', got {library!r}")
    return time.perf_counter() - start


def compile_opweave(column: str, blocks: int, x: np.ndarray) -> Compiled:
    """Build, rewrite (``FunctionMaker``), link and call the workload with opweave."""
    import opweave.tensor as ot
    from opweave.compile import FunctionMaker, In, Mode, Out

    v = ot.dvector("x")
    out = workloads.blocks(ot.tanh, ot.mean, v, blocks)
    mode = None if column == "default" else Mode(linker=column)
    start = time.perf_counter()
    maker = FunctionMaker([In(v)], [Out(out)], mode=mode)
    rewrite = time.perf_counter() - start
    fn = maker.create(unpack_single=True)
    linker = getattr(type(maker.linker), "name", type(maker.linker).__name__)
    return fn(x), rewrite, len(maker.fgraph.apply_nodes), linker


def compile_pytensor(column: str, blocks: int, x: np.ndarray) -> Compiled:
    """Build, rewrite (``FunctionMaker``), link and call the workload with PyTensor."""
    import pytensor.tensor as pt
    from pytensor.compile.io import In
    from pytensor.compile.mode import Mode

    try:
        from pytensor.compile.maker import FunctionMaker
    except ImportError:  # PyTensor before 3.0
        from pytensor.compile.function.types import FunctionMaker

    v = pt.dvector("x")
    out = workloads.blocks(pt.tanh, pt.mean, v, blocks)
    if column not in ("default", "cvm"):
        raise ValueError(f"PyTensor column must be 'default' or 'cvm', got {column!r}")
    mode = None if column == "default" else Mode(linker="cvm")
    start = time.perf_counter()
    maker = FunctionMaker([In(v)], out, mode=mode)
    rewrite = time.perf_counter() - start
    fn = maker.create()
    return fn(x), rewrite, len(maker.fgraph.apply_nodes), type(maker.linker).__name__


def compile_jax(column: str, blocks: int, x: np.ndarray) -> Compiled:
    """Trace, compile (``jax.jit``) and call the workload with JAX; no rewriting figure."""
    import jax
    import jax.numpy as jnp

    if column != "jit":
        raise ValueError(f"JAX column must be 'jit', got {column!r}")
    fn = jax.jit(lambda v: workloads.blocks(jnp.tanh, jnp.mean, v, blocks))
    result = jax.block_until_ready(fn(x))
    return np.asarray(result), None, None, f"XLA on {jax.default_backend()}"


COMPILERS: dict[str, Callable[[str, int, np.ndarray], Compiled]] = {
    "opweave": compile_opweave,
    "pytensor": compile_pytensor,
    "jax": compile_jax,
}


def prepare(library: str) -> None:
    """Library settings that are not part of the timed work (JAX: float64 on)."""
    if library == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)


def describe(library: str, exc: BaseException) -> str:
    """Why the measurement failed, in one short line (``no C for <Op>`` for opweave)."""
    if library == "opweave":
        from opweave_side import why_not

        return why_not(exc)
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:80] if lines else ''}".rstrip(": ")


def check(result: Any, blocks: int, x: np.ndarray) -> str | None:
    """``None`` when ``result`` matches NumPy's value of the workload, else why not."""
    expected = workloads.blocks(np.tanh, np.mean, x, blocks)
    got = np.asarray(result)
    if got.shape != expected.shape:
        return f"wrong result: shape {got.shape}, NumPy gives {expected.shape}"
    if not np.allclose(got, expected, rtol=1e-9, atol=1e-12):
        return f"wrong result: max abs error {np.max(np.abs(got - expected)):.3g} against NumPy"
    return None


def info(library: str) -> dict[str, Any]:
    """The library's versions (and JAX's backend)."""
    from importlib import metadata

    names = {"opweave": ["opweave"], "pytensor": ["pytensor"], "jax": ["jax", "jaxlib"]}
    found = {name: metadata.version(name) for name in names[library]}
    found["numpy"] = np.__version__
    if library == "jax":
        import jax

        found["backend"] = jax.default_backend()
    return found


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Import the library, then compile and call the workload once; the JSON answer."""
    library = spec["library"]
    imported = import_library(library)
    if library == "opweave" and spec.get("column") == "jax":
        # The jax linker imports JAX when it links; the JAX column imports it before its
        # clock starts, so this column does too (the import counts as the library's).
        imported += import_library("jax")
    if spec.get("case") == "info":
        return {"info": info(library), "import_seconds": imported}
    prepare(library)
    blocks = int(spec["blocks"])
    x = workloads.blocks_input()
    try:
        start = time.perf_counter()
        result, rewrite, nodes, linker = COMPILERS[library](spec["column"], blocks, x)
        seconds = time.perf_counter() - start
    except Exception as exc:
        return {"error": describe(library, exc)}
    if (wrong := check(result, blocks, x)) is not None:
        return {"error": wrong}
    return {
        "seconds": seconds,
        "rewrite_seconds": rewrite,
        "nodes": nodes,
        "import_seconds": imported,
        "linker": linker,
    }


def main(argv: list[str]) -> int:
    """Run the measurement described by the JSON in ``argv[0]`` and print its JSON result."""
    print(json.dumps(measure(json.loads(argv[0]))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
