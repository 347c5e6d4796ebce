"""Helpers the C-backend tests share: compile a graph on ``py``, ``c`` and ``cvm`` and
check that the C linkers give the Python backend's values, dtypes, shapes and errors.

Importable from the test modules of this folder (``pythonpath`` in the root
``pyproject.toml``); it holds no tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

import opweave
from opweave.compile import Mode
from opweave.graph.fg import FunctionGraph

MODES = {
    "py": Mode(linker="py", optimizer=None),
    "c": Mode(linker="c", optimizer=None),
    "cvm": Mode(linker="cvm", optimizer=None),
}
DTYPES = ["bool", "int8", "uint16", "int32", "int64", "uint64", "float32", "float64"]


def outcome(f: Callable[..., Any], args: Sequence[Any]) -> tuple[str, Any]:
    """``("ok", results)`` or ``("error", (exception type, message))``."""
    try:
        return "ok", f(*args)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def same(ref: tuple[str, Any], got: tuple[str, Any], where: str) -> None:
    """The two outcomes agree: the same error, or values of one type, dtype and shape."""
    assert ref[0] == got[0], f"{where}: {ref} != {got}"
    if ref[0] == "error":
        assert ref[1] == got[1], where
        return
    for r, g in zip(ref[1], got[1], strict=True):
        assert type(r) is type(g), where
        assert r.dtype == g.dtype and np.shape(r) == np.shape(g), where
        np.testing.assert_array_equal(r, g, err_msg=where)


def compiled(inputs: Sequence[Any], outputs: Any) -> dict[str, Any]:
    """The function on each linker; checks that ``cvm`` ran every node in C."""
    fns = {name: opweave.function(inputs, outputs, mode=mode) for name, mode in MODES.items()}
    n_nodes = len(fns["cvm"].maker.fgraph.toposort())
    assert fns["cvm"].fn.c_nodes == list(range(n_nodes))
    return fns


def check(fns: dict[str, Any], cases: Iterable[Sequence[Any]]) -> None:
    """Every case gives the same values (dtype, shape) or error (type, message) everywhere."""
    for args in cases:
        ref = outcome(fns["py"], args)
        for name in ("c", "cvm"):
            same(ref, outcome(fns[name], args), f"{name} on {args!r}")


def linked(linker_cls: type, inputs: Sequence[Any], outputs: Any) -> Callable[..., list[Any]]:
    """Run a graph through the linker alone, so outputs that alias inputs are not copied."""
    fg = FunctionGraph(inputs, outputs, clone=False)
    fn, ins, outs, _, _ = linker_cls().accept(fg).make_all()

    def run(*values: Any) -> list[Any]:
        for cell, v in zip(ins, values, strict=True):
            cell[0] = v
        fn()
        return [cell[0] for cell in outs]

    return run


def strided(a: np.ndarray) -> np.ndarray:
    """``a`` as a non-contiguous view (every other element of a bigger array, reversed)."""
    big = np.zeros(tuple(2 * n for n in a.shape), dtype=a.dtype)
    idx = tuple(slice(None, None, 2) for _ in a.shape)
    big[idx] = a[tuple(slice(None, None, -1) for _ in a.shape)]
    return big[idx][tuple(slice(None, None, -1) for _ in a.shape)]
