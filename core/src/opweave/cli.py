"""The ``opweave`` command: ``demo``, ``info`` and ``matrix``."""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import opweave
import opweave.tensor as ot
from opweave.graph.utils import NoImplementationError
from opweave.link.capabilities import (
    FALLBACK,
    IMPLEMENTED,
    MISSING,
    PARTIAL,
    capability_matrix,
    coverage,
    op_class_name,
)
from opweave.link.lookup import available_linkers, unusable_linkers
from opweave.plugins import discovery


def info(out: TextIO, ops: bool = False) -> int:
    """Print the plugins found, the backends and linkers, and the configuration.

    With ``ops``, also each backend's coverage of the Ops it means to implement.
    """
    pm = opweave.get_plugin_manager()
    print(f"opweave {opweave.__version__}", file=out)
    print("versions:", file=out)
    for what, version in versions(pm):
        print(f"  {what}: {version}", file=out)
    print("plugins (entry points 'opweave.plugins'):", file=out)
    if not pm.records:
        print("  none", file=out)
    for rec in pm.records:
        where = f" [{rec.distribution} {rec.version}]" if rec.distribution else ""
        state = "loaded" if rec.loaded else f"SKIPPED: {rec.error}"
        print(f"  {rec.name} = {rec.value}{where}: {state}", file=out)
    print("backends:", file=out)
    for backend in pm.hook.opweave_backend_info():
        status = (
            "available" if backend.get("available") else f"unavailable ({backend.get('reason')})"
        )
        print(f"  {backend['name']}: linkers {', '.join(backend['linkers'])}; {status}", file=out)
        if backend.get("available") and callable(backend.get("hardware")):
            print(f"    runs on: {'; '.join(_hardware(backend))}", file=out)
    linkers = available_linkers(pm)
    unusable = unusable_linkers(pm)
    usable = sorted(name for name in linkers if name not in unusable)
    print(f"linkers: {', '.join(usable) or 'none'}", file=out)
    for name, reason in sorted(unusable.items()):
        print(f"  linker {name}: {reason}", file=out)
    for failure in pm.failures:
        print(f"  skipped: {failure.describe()}", file=out)
    if ops:
        print_ops(pm, out)
    print("config:", file=out)
    for name, value, _doc in opweave.config.flags():
        print(f"  {name} = {value!r}  ({opweave.config.source(name)})", file=out)
    return 0


def _hardware(backend: dict[str, Any]) -> list[str]:
    """A backend's ``hardware`` answer, or why there is none (a plugin's failure is
    reported, never raised)."""
    try:
        return [str(what) for what in backend["hardware"]()]
    except Exception as exc:
        return [f"{backend['name']} failed to list its hardware: {type(exc).__name__}: {exc}"]


def versions(pm: opweave.plugins.OpweavePluginManager) -> list[tuple[str, str]]:
    """``(what, version)`` of everything a bug report needs: Python and the platform, NumPy,
    SciPy, opweave, each plugin's distribution, and what each backend relies on (its
    ``opweave_backend_info`` ``versions``, e.g. the C compiler)."""
    found = [
        (
            "python",
            f"{platform.python_version()} ({platform.python_implementation()}, "
            f"{platform.platform(terse=True)}, {platform.machine()})",
        ),
        ("numpy", np.__version__),
        ("scipy", _distribution_version("scipy")),
        ("opweave", opweave.__version__),
    ]
    seen = {"opweave"}
    for rec in pm.records:
        if rec.distribution and rec.distribution not in seen:
            seen.add(rec.distribution)
            found.append((rec.distribution, rec.version or _distribution_version(rec.distribution)))
    for backend in pm.hook.opweave_backend_info():
        for what, version in (backend.get("versions") or {}).items():
            found.append((f"{what} ({backend['name']})", version))
    return found


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def print_matrix(pm: opweave.plugins.OpweavePluginManager, out: TextIO, as_json: bool) -> int:
    """Print the capability matrix (:mod:`opweave.link.capabilities`), as JSON or as a table
    with one column per backend (``+`` implemented, ``~`` partly, ``.`` another
    implementation runs it, ``-`` nothing runs it)."""
    matrix = capability_matrix(pm.hook.opweave_backend_info())
    if as_json:
        json.dump(matrix, out, indent=2, sort_keys=True)
        print(file=out)
        return 0
    backends = sorted({name for row in matrix.values() for name in row})
    marks = {IMPLEMENTED: "+", PARTIAL: "~", FALLBACK: ".", MISSING: "-"}
    legend = "(+ implemented, ~ partly, . fallback to another implementation, - missing)"
    print("  ".join(backends) + f"  Op class  {legend}", file=out)
    for cls, row in matrix.items():
        cells = "  ".join(marks[row[name]].center(len(name)) for name in backends)
        print(f"{cells}  {cls}", file=out)
    return 0


def print_ops(pm: opweave.plugins.OpweavePluginManager, out: TextIO) -> None:
    """For each backend publishing an implementation table: which Op classes its own
    implementation runs, which another one runs (a fallback), and which nothing runs."""
    infos = pm.hook.opweave_backend_info()
    matrix = capability_matrix(infos)
    print("implementations:", file=out)
    for backend in infos:
        table = backend.get("implementations")
        if table is None:
            continue
        scope = {op_class_name(cls) for cls in table.scope()}
        if backend.get("fallback") is False:
            scope = set(matrix)  # what it does not implement, it refuses
        found = coverage({cls: matrix[cls] for cls in sorted(scope)}, backend["name"])
        implemented = len(found[IMPLEMENTED])
        print(
            f"  {backend['name']} ({table.backend}): {implemented} of {len(scope)} Op classes",
            file=out,
        )
        if implemented < len(scope):
            print(
                f"    the others: {len(found[PARTIAL])} partly, {len(found[FALLBACK])} by "
                f"another implementation (fallback), {len(found[MISSING])} missing",
                file=out,
            )
        for status in (PARTIAL, FALLBACK, MISSING):
            for cls in found[status]:
                print(f"    {status}: {cls}", file=out)


def demo(out: TextIO) -> int:
    """Run the demo graph an installed plugin provides (``opweave_demo``) with every
    installed linker, then train a logistic regression."""
    info(out)
    answers = [a for a in opweave.get_plugin_manager().hook.opweave_demo() if a]
    if not answers:
        print(
            "\nthe demo needs a plugin that provides a demo graph (the opweave_demo hook), "
            "such as the Double plugin of the tutorial (see opweave's documentation)",
            file=out,
        )
        return 1
    graph = answers[0]
    inputs, expr, values = graph["inputs"], graph["output"], tuple(graph["values"])
    expected = graph["expected"]
    print(f"\nexample: {graph['title']}", file=out)
    opweave.dprint(expr, file=out)
    failures = 0
    unusable = unusable_linkers()
    for name in sorted(available_linkers()):
        if name in unusable:
            print(f"  linker {name:>4}: skipped: {unusable[name]}", file=out)
            continue
        try:
            f = opweave.function(inputs, expr, mode=opweave.Mode(linker=name))
        except NoImplementationError as exc:
            # a linker with no Python fallback (jax) refuses what it cannot lower: it says so
            print(f"  linker {name:>4}: refused: {exc}", file=out)
            continue
        except Exception as exc:
            print(f"  linker {name:>4}: FAILED {type(exc).__name__}: {exc}", file=out)
            failures += 1
            continue
        try:
            result = f(*values)
        except Exception as exc:
            print(f"  linker {name:>4}: FAILED {type(exc).__name__}: {exc}", file=out)
            failures += 1
            continue
        shown = ", ".join(repr(v) for v in values)
        print(f"  linker {name:>4}: f({shown}) = {result!r}", file=out)
        failures += result != expected
    refused = graph.get("refused")
    if refused is not None:
        try:
            opweave.function(inputs, expr)(*refused)
        except TypeError as exc:
            print(f"\nbad input is refused by name: TypeError: {exc}", file=out)
    losses = logistic_regression(out)
    failures += not losses[-1] < 0.5 * losses[0]
    return 1 if failures else 0


def logistic_regression(out: TextIO, steps: int = 200, seed: int = 0) -> list[float]:
    """Train a logistic regression with symbolic gradients and shared weights.

    The data (400 points in 5 dimensions, labels from a hidden linear rule plus noise)
    are generated; returns the loss after each training step.
    """
    rng = np.random.default_rng(seed)
    n, d = 400, 5
    data = rng.normal(size=(n, d))
    hidden = rng.normal(size=d)
    labels = (data @ hidden + 0.3 * rng.normal(size=n) > 0).astype("float64")

    x, t = ot.dmatrix("x"), ot.dvector("t")
    w = opweave.shared(np.zeros(d), name="w")
    b = opweave.shared(0.0, name="b")
    logits = ot.dot(x, w) + b
    # -log(sigmoid(z)) = softplus(-z) and -log(1 - sigmoid(z)) = softplus(z): stable forms.
    loss = ot.mean(t * ot.softplus(-logits) + (1 - t) * ot.softplus(logits))
    gw, gb = opweave.grad(loss, [w, b])
    lr = 0.5
    train = opweave.function([x, t], loss, updates=[(w, w - lr * gw), (b, b - lr * gb)])
    predict = opweave.function([x], ot.gt(logits, 0))

    losses = [float(train(data, labels)) for _ in range(steps)]
    accuracy = float(np.mean(predict(data) == labels.astype(bool)))
    print("\nlogistic regression: symbolic grad, shared weights, updates", file=out)
    for i in (0, 1, 10, 50, steps - 1):
        print(f"  step {i + 1:>4}: loss {losses[i]:.4f}", file=out)
    print(f"  training accuracy {accuracy:.3f}; learned w = {np.round(w.get_value(), 2)}", file=out)
    return losses


def rewritten_cache_command(action: str, out: TextIO) -> int:
    """``opweave cache list|clear``: the cache of rewritten graphs
    (:mod:`opweave.compile.rewrite_cache`); ``clear`` also forgets the plugins found
    (:mod:`opweave.plugins.discovery`). Compiled modules belong to their backend."""
    from opweave.compile import rewrite_cache  # late: only this command needs it

    folder = Path(opweave.config.compiledir) / "rewritten"
    if action == "clear":
        print(f"removed {rewrite_cache.clear_rewritten()} rewritten graphs from {folder}", file=out)
        kept = discovery.kept_folder()
        print(f"removed {discovery.clear_kept()} kept plugin lists from {kept}", file=out)
        return 0
    found = rewrite_cache.cached_entries()
    size = sum(path.stat().st_size for path in found)
    print(f"{len(found)} rewritten graphs ({size / 1024:.0f} KiB) in {folder}", file=out)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``opweave`` command."""
    parser = argparse.ArgumentParser(prog="opweave", description=__doc__)
    parser.add_argument("--version", action="version", version=f"opweave {opweave.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="run the (x + y) * z example with every installed linker")
    info_parser = sub.add_parser("info", help="list plugins, backends, linkers and configuration")
    info_parser.add_argument(
        "--ops", action="store_true", help="also each backend's implemented and missing Ops"
    )
    matrix_parser = sub.add_parser(
        "matrix", help="every Op class known against every installed backend"
    )
    matrix_parser.add_argument("--json", action="store_true", help="as JSON, for tools")
    info_parser.add_argument(
        "--json",
        action="store_true",
        help="only the capability matrix (Op class -> backend -> status), as JSON",
    )
    cache_parser = sub.add_parser(
        "cache", help="list or clear the rewritten graphs (and plugins found) kept in compiledir"
    )
    cache_parser.add_argument("action", choices=["list", "clear"])
    args = parser.parse_args(argv)
    try:
        opweave.get_plugin_manager()  # reads and checks the configuration flags
    except ValueError as exc:  # an unknown flag, or a flag's bad value: said in one line
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    if args.command == "cache":
        return rewritten_cache_command(args.action, sys.stdout)
    if args.command == "demo":
        return demo(sys.stdout)
    if args.command == "matrix":
        return print_matrix(opweave.get_plugin_manager(), sys.stdout, args.json)
    if args.json:
        return print_matrix(opweave.get_plugin_manager(), sys.stdout, True)
    return info(sys.stdout, ops=args.ops)
