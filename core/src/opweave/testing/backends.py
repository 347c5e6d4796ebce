"""``check_backend``: a linker against the ``py`` linker on the standard conformance graphs."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from opweave.compile.debug.debugmode.checks import copy_value, values_match
from opweave.compile.function import function
from opweave.compile.mode import Mode
from opweave.link.lookup import resolve_linker
from opweave.testing.errors import CheckReport, ContractViolation, describe
from opweave.testing.graphs import STANDARD_GRAPHS, Case

__all__ = ["check_backend"]


def _compile(case: Case, linker: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(case.inputs, case.outputs, updates=case.updates, mode=Mode(linker=linker))


def _run(case: Case, linker: Any, fn: Any = None) -> list[list[Any]]:
    """The outputs (then the shared values) after each call of ``case`` on ``linker``."""
    fn = fn or _compile(case, linker)
    results = []
    for args in case.calls:
        outs = fn(*[copy_value(a) for a in args])
        outs = outs if isinstance(outs, list) else [outs]
        host = fn.maker.linker.host_values([*outs, *(s.get_value() for s in case.shared)])
        results.append([copy_value(v) for v in host])
    return results


def _generator_of(linker: Any) -> str:
    """The ``random_generator`` of ``linker`` (a name or a Linker instance)."""
    found = resolve_linker(linker) if isinstance(linker, str) else linker
    return str(getattr(found, "random_generator", "numpy"))


def _draws_difference(want: list[list[Any]], have: list[list[Any]]) -> str | None:
    """Draws from another generator: the same shapes and dtypes, finite values, and new
    draws at each call where the reference's change."""
    for call, (w_row, h_row) in enumerate(zip(want, have, strict=True)):
        for k, (w, h) in enumerate(zip(w_row, h_row, strict=True)):
            w, h = np.asarray(w), np.asarray(h)
            if w.shape != h.shape or w.dtype != h.dtype:
                expected = f"the shape and dtype of {describe(w)}"
                return f"call {call}, output {k}: {describe(h)}, expected {expected}"
            if not np.all(np.isfinite(h)):
                return f"call {call}, output {k}: non-finite draws {describe(h)}"
    for k in range(len(want[0])):
        changes = [not np.array_equal(row[k], want[0][k]) for row in want[1:]]
        repeats = [np.array_equal(row[k], have[0][k]) for row in have[1:]]
        if any(c and r for c, r in zip(changes, repeats, strict=True)):
            return f"output {k}: the same draws at every call, where the reference's change"
    return None


def _difference(case: Case, want: list[list[Any]], have: list[list[Any]]) -> str | None:
    variables = [*case.outputs, *case.shared]
    for call, (w_row, h_row) in enumerate(zip(want, have, strict=True)):
        for k, (var, w, h) in enumerate(zip(variables, w_row, h_row, strict=True)):
            if not values_match(var, w, h):
                what = f"output {k}" if k < len(case.outputs) else f"shared variable {var}"
                return f"call {call}, {what}: {describe(h)}, expected {describe(w)}"
    return None


def check_backend(
    linker: str | Any,
    *,
    reference: str | Any = "py",
    graphs: Mapping[str, Callable[[], Case]] | None = None,
    only: Sequence[str] | None = None,
) -> CheckReport:
    """Run the standard conformance graphs on ``linker`` and compare with ``reference``.

    The graphs (:data:`opweave.testing.graphs.STANDARD_GRAPHS`) cover elementwise
    arithmetic over dtypes and memory layouts, reductions, ``dot``, indexing, shape Ops,
    random variables, updates of shared variables, a lazy ``ifelse`` and a gradient. Each
    is compiled in the default rewrites with ``Mode(linker=...)`` for both linkers and
    called twice (the second call reuses the storage of the first).

    Parameters
    ----------
    linker
        A linker name (``"cvm"``) or a Linker instance.
    reference
        The linker whose values are right (``"py"``).
    graphs
        ``{name: builder}`` to run instead of the standard graphs.
    only
        Run only these graph names.

    A graph the linker declines at compile time with ``NotImplementedError`` (``c`` has
    no C code for a random variable or ``ifelse``, and says so) is skipped, not failed.
    The random draws of a linker whose ``random_generator`` is not the reference's (the
    ``jax`` linker draws from JAX's generator) are compared on their shapes, dtypes and
    finiteness, and on changing from call to call where the reference's do.

    Returns
    -------
    CheckReport
        One checked rule per graph (``graph_<name>``), the declined ones in ``skipped``.

    Raises
    ------
    ContractViolation
        Rule ``backend_values``, listing every graph that differs or fails, not only the
        first.
    ValueError
        For a name in ``only`` that is not a graph.
    """
    graphs = dict(STANDARD_GRAPHS if graphs is None else graphs)
    if only is not None:
        unknown = sorted(set(only) - set(graphs))
        if unknown:
            raise ValueError(
                f"unknown conformance graphs {unknown}; expected some of {sorted(graphs)}"
            )
        graphs = {name: graphs[name] for name in only}
    report = CheckReport(linker)
    problems = []
    for name, build in graphs.items():
        want = _run(build(), reference)
        case = build()
        try:
            fn = _compile(case, linker)
        except NotImplementedError as exc:  # the linker declines the graph: documented
            report.skip(f"graph_{name}", f"the linker declines it: {exc}")
            continue
        try:
            have = _run(case, linker, fn)
        except Exception as exc:
            problems.append(f"{name}: failed with {type(exc).__name__}: {exc}")
            continue
        if case.draws and _generator_of(linker) != _generator_of(reference):
            diff = _draws_difference(want, have)
        else:
            diff = _difference(case, want, have)
        if diff is not None:
            problems.append(f"{name}: {diff}")
            continue
        report.ok(f"graph_{name}")
    if problems:
        raise ContractViolation(
            "backend_values",
            f"linker {linker!r}",
            f"{len(problems)} of {len(graphs)} conformance graphs differ from linker "
            f"{reference!r}:\n    " + "\n    ".join(problems),
            "a backend computes what the reference linker computes on every graph",
        )
    return report
