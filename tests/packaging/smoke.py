"""What one install combination of the built wheels promises, run inside its own venv.

``python smoke.py COMBINATION`` with COMBINATION one of ``core``, ``python``, ``c``,
``all``, ``dask``. It is run by ``test_installed_wheels.py`` with the interpreter of a fresh venv
into which only the built wheels (never the source tree) were installed, from a working
directory outside the repository. It prints what it checked and exits non-zero on the
first broken promise.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import numpy as np

import opweave
import opweave.tensor as ot
from opweave.cli import info
from opweave.link.lookup import LinkerFallbackWarning, LinkerNotFoundError, LinkerUnavailableError

#: The plugins (entry-point names) each combination installs, exactly.
PLUGINS = {
    "core": [],
    "python": ["python"],
    "c": ["c", "python"],
    "all": ["c", "cuda", "double", "python"],
    "dask": ["dask", "python"],
    "jax": ["jax"],
}
#: The linkers each combination can run here (the build machine has a C compiler, no GPU).
RUNNABLE = {
    "core": [],
    "python": ["py", "vm"],
    "c": ["c", "cvm", "py", "vm"],
    "all": ["c", "cvm", "py", "vm"],
    "dask": ["py", "vm"],
    "jax": ["jax"],
}


def check(condition: bool, what: str) -> None:
    """Stop with ``what`` when ``condition`` is false."""
    if not condition:
        print(f"FAILED: {what}", flush=True)
        raise SystemExit(1)
    print(f"ok: {what}", flush=True)


def check_installed_not_source() -> None:
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    where = Path(opweave.__file__).resolve()
    check(site in where.parents, f"opweave is imported from the venv ({where})")


def check_info(combination: str) -> str:
    out = io.StringIO()
    check(info(out) == 0, "opweave info exits 0")
    text = out.getvalue()
    loaded = sorted(r.name for r in opweave.get_plugin_manager().records if r.loaded)
    check(loaded == PLUGINS[combination], f"plugins loaded are exactly {PLUGINS[combination]}")
    check("SKIPPED" not in text, "no plugin was skipped")
    cli = subprocess.run(
        [sys.executable, "-m", "opweave", "info"], capture_output=True, text=True, check=False
    )
    check(cli.returncode == 0, "python -m opweave info runs")
    return text


def run_everywhere(combination: str) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    expr = ot.exp(x) * y + 1
    a, b = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    expected = np.exp(a) * b + 1
    for linker in RUNNABLE[combination]:
        f = opweave.function([x, y], expr, mode=opweave.Mode(linker=linker))
        check(np.allclose(f(a, b), expected), f"linker {linker} computes exp(x) * y + 1")


def check_core_alone() -> None:
    x = ot.dvector("x")
    cost = ot.sum(x**2)
    g = opweave.grad(cost, x)
    check(g.type == x.type, "graphs and gradients build with the core alone")
    try:
        opweave.function([x], g)
    except LinkerNotFoundError as exc:
        check("pip install opweave-python" in str(exc), f"compiling names what to install: {exc}")
    else:
        check(False, "compiling with the core alone raises LinkerNotFoundError")


def check_missing_c(combination: str) -> None:
    x = ot.dvector("x")
    try:
        opweave.function([x], x + 1, mode=opweave.Mode(linker="c"))
    except LinkerNotFoundError as exc:
        check(
            "not installed" in str(exc) and "pip install opweave-c" in str(exc),
            f"linker='c' without opweave-c says to install it: {exc}",
        )
    else:
        check(False, "linker='c' without opweave-c raises LinkerNotFoundError")
    f = opweave.function([x], x + 1)
    check(type(f.maker.linker).__name__ == "VMLinker", "auto picks vm with opweave-python alone")


def check_jax_alone() -> None:
    """opweave-jax alone: ``auto`` and PyTensor's ``JAX`` mode compile with the jax linker;
    linker 'c' says what to install."""
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2)
    check(type(f.maker.linker).__name__ == "JAXLinker", "auto picks jax with opweave-jax alone")
    g = opweave.function([x], ot.sum(x**2), mode="JAX")
    check(float(g(np.array([1.0, 2.0]))) == 5.0, "mode='JAX' computes sum(x**2)")
    from opweave.link.jax import JAXLinker
    from opweave.link.jax.dispatch import jax_funcify

    graph_fn = jax_funcify(g.maker.fgraph)
    check(
        float(graph_fn(np.array([3.0, 4.0]))[0]) == 25.0,
        "opweave.link.jax.dispatch.jax_funcify(fgraph) computes the graph",
    )
    check(JAXLinker.name == "jax", "opweave.link.jax.JAXLinker is the jax linker")
    try:
        opweave.function([x], x + 1, mode=opweave.Mode(linker="c"))
    except LinkerNotFoundError as exc:
        check("pip install opweave-c" in str(exc), f"linker='c' says to install it: {exc}")
    else:
        check(False, "linker='c' without opweave-c raises LinkerNotFoundError")


def check_c(combination: str) -> None:
    import opweave_c

    csrc = Path(opweave_c.__file__).parent / "csrc"
    headers = ("runtime.h", "runtime_functions.h", "tensor.h", "reduce_plan.h")
    check(all((csrc / name).is_file() for name in headers), "csrc/*.h shipped")
    x = ot.dvector("x")
    f = opweave.function([x], ot.tanh(x) * 2)
    check(type(f.maker.linker).__name__ == "CVMLinker", "auto picks cvm where C compiles")
    check(np.allclose(f(np.ones(3)), np.tanh(1.0) * 2), "auto-linked function computes")
    check_runtime_object(x)
    # The same install on a machine without a C compiler: auto falls back, c says why.
    env = dict(os.environ, PATH=str(Path(sys.executable).parent))
    env.pop("CC", None)
    probe = subprocess.run(
        [sys.executable, __file__, "no-compiler"], capture_output=True, text=True, env=env
    )
    print(probe.stdout, end="")
    check(probe.returncode == 0, f"without a compiler: {probe.stderr[-2000:]}")


def check_runtime_object(x: ot.TensorVariable) -> None:
    """The runtime's object, built in the background as a large graph's compile starts it,
    links into the modules of the installed wheel."""
    import time

    from opweave_c.module import start_runtime_prelude

    start_runtime_prelude()
    root = Path(opweave.config.compiledir) / "prelude"
    deadline = time.monotonic() + 60
    while not list(root.glob("*/opw_runtime.o")) or list(root.glob("*/.building")):
        check(time.monotonic() < deadline, "the runtime's object is built in the background")
        time.sleep(0.05)
    import opweave_c.compiler as compiler_module

    linked: list[list[str]] = []
    real = compiler_module.CCompiler.build

    def build(self: object, *args: object, **kwargs: list[str]) -> None:
        linked.append(list(kwargs.get("objects") or []))
        real(self, *args, **kwargs)  # type: ignore[arg-type]

    compiler_module.CCompiler.build = build  # type: ignore[method-assign]
    try:
        g = opweave.function([x], ot.arctan(x) * 3 + ot.mean(x))
    finally:
        compiler_module.CCompiler.build = real  # type: ignore[method-assign]
    check(bool(linked) and all(len(objects) == 1 for objects in linked), f"linked: {linked}")
    value = np.linspace(-1.0, 1.0, 5)
    check(np.allclose(g(value), np.arctan(value) * 3 + value.mean()), "linked with the object")


def check_without_compiler() -> None:
    x = ot.dvector("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = opweave.function([x], x * 3)
    check(type(f.maker.linker).__name__ == "VMLinker", "auto falls to vm without a C compiler")
    said = [str(w.message) for w in caught if issubclass(w.category, LinkerFallbackWarning)]
    check(
        any("skips 'cvm'" in m and "C compiler 'cc' not found" in m for m in said),
        f"auto warns why it skipped cvm: {said}",
    )
    check(np.allclose(f(np.ones(2)), 3.0), "the fallback computes")
    try:
        opweave.function([x], x * 3, mode=opweave.Mode(linker="c"))
    except LinkerUnavailableError as exc:
        text = str(exc)
        check(
            "opweave-c is installed but unavailable" in text and "not installed (" not in text,
            f"linker='c' says it is installed and why it cannot be used: {text}",
        )
    else:
        check(False, "linker='c' without a compiler raises LinkerUnavailableError")


def check_all() -> None:
    import opweave_cuda  # noqa: F401  (imports without pycuda)
    from opweave.link.lookup import unusable_linkers
    from opweave_double import add, double, mul

    check("cuda" in unusable_linkers(), "cuda is listed as installed but unavailable")
    a, b, c = double("a"), double("b"), double("c")
    for linker in RUNNABLE["all"]:
        f = opweave.function([a, b, c], mul(add(a, b), c), mode=opweave.Mode(linker=linker))
        check(f(1.0, 2.0, 3.0) == 9.0, f"the double plugin runs on {linker}")


def check_dask() -> None:
    """The plugins loaded without importing Dask; the dask linker computes over one."""
    loaded = sorted(name for name in sys.modules if name == "dask" or name.startswith("dask."))
    check(loaded == [], f"loading the plugins and compiling imported no Dask module: {loaded}")
    import dask.array as da

    x = ot.dvector("x")
    f = opweave.function([x], ot.sum(ot.exp(x) * 2), mode=opweave.Mode(linker="dask"))
    out = f(da.ones(10, chunks=3))
    check(isinstance(out, da.Array), "the dask linker returns a lazy Dask array")
    check(np.allclose(out.compute(), np.exp(1.0) * 20), "the dask linker computes over chunks")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def check_progress_bar() -> None:
    """The progress bar of long compiles needs tqdm, which the core must install."""
    from opweave.link.progress import compile_progress

    stream = Terminal()
    with compile_progress("compiling", enabled=True, delay=0, stream=stream) as progress:
        with progress.steps("compiling C modules", 2) as steps:
            steps.advance()
    check("| 0/2 [" in stream.getvalue(), "a long compile shows a progress bar (tqdm)")


def check_blas_threads() -> None:
    """``blas__threads`` reaches NumPy's BLAS through threadpoolctl, which the core must
    install."""
    from threadpoolctl import threadpool_info

    x = ot.dmatrix("x")
    with opweave.config.change_flags(blas__threads=1):
        opweave.function([x], ot.dot(x, x))
    threads = {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}
    check(threads == {1}, f"blas__threads=1 gives NumPy's BLAS one thread: {threads}")


def main(combination: str) -> None:
    if combination == "no-compiler":
        check_without_compiler()
        return
    check_installed_not_source()
    check_info(combination)
    check_progress_bar()
    if combination == "core":
        check_core_alone()
        return
    run_everywhere(combination)
    check_blas_threads()
    if combination == "jax":
        check_jax_alone()
        return
    if combination in ("python", "dask"):
        check_missing_c(combination)
    else:
        check_c(combination)
    if combination == "all":
        check_all()
    if combination == "dask":
        check_dask()


if __name__ == "__main__":
    main(sys.argv[1])
