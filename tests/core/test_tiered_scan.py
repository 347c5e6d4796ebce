"""A ``Scan``'s inner function compiled with tiering (:mod:`opweave.compile.tiered`) starts
on the Python kernels, like any function, and runs on its final linker from the first
call of the outer function after its background link is done: the loop runs the inner
graph through its cells, not through calls, so it switches it itself."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave import scan
from opweave.compile.mode import Mode
from opweave.link.lookup import available_linkers

pytestmark = pytest.mark.skipif(
    "cvm" not in available_linkers(), reason="needs a linker that compiles (opweave-c's cvm)"
)


def _inner_function(f: opweave.compile.Function) -> opweave.compile.Function:
    (node,) = [n for n in f.maker.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]
    found = node.op.__dict__.get("_inner_function")
    assert found is not None, "the inner function is compiled at the loop's first run"
    return found


def test_the_inner_function_switches_at_the_next_outer_call(tmp_path: Path) -> None:
    with opweave.config.change_flags(compiledir=str(tmp_path), compile__tiered=True):
        x0 = ot.dscalar("x0")
        out = scan(lambda x: x * 0.5 + 1.0, outputs_info=[x0], n_steps=20, return_updates=False)
        f = opweave.function([x0], out, mode=Mode(linker="cvm"))
        expected = [1.0]
        for _ in range(20):
            expected.append(expected[-1] * 0.5 + 1.0)
        np.testing.assert_array_equal(f(1.0), expected[1:])
        inner = _inner_function(f)
        deadline = time.monotonic() + 60
        while inner.compiling:
            assert time.monotonic() < deadline, "the inner function's link did not end"
            time.sleep(0.01)
        np.testing.assert_array_equal(f(1.0), expected[1:])
        assert inner.tier == "cvm"
        np.testing.assert_array_equal(f(1.0), expected[1:])
