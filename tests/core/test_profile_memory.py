"""The profiler's memory side: shapes and sizes of each node's values, flops, and peak
memory estimates with and without garbage collection."""

from __future__ import annotations

import io

import numpy as np
import pytest

import opweave
import opweave.tensor as ot


def _profiled(outputs, inputs, linker: str = "vm"):
    return opweave.function(inputs, outputs, profile=True, mode=opweave.Mode(linker=linker))


@pytest.mark.parametrize("linker", ["py", "vm", "cvm"])
def test_output_shapes_sizes_and_flops_are_recorded(linker: str) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = _profiled(ot.dot(x, y), [x, y], linker)
    f(np.ones((30, 4)), np.ones((4, 7)))
    (key,) = [k for k in f.profile.output_size if type(k[1].op).__name__ == "Dot"]
    assert f.profile.output_size[key] == [30 * 7 * 8]
    assert f.profile.variable_shape[key[1].outputs[0]] == (30, 7)
    assert f.profile.apply_flops[key] == 2 * 30 * 7 * 4
    f(np.ones((3, 4)), np.ones((4, 2)))  # the last call's sizes are kept
    assert f.profile.output_size[key] == [3 * 2 * 8]


def test_peak_memory_with_and_without_garbage_collection() -> None:
    """A chain of three float64 vectors of n elements, none in place: with garbage
    collection at most two live at once; without, all three."""
    x = ot.dvector("x")
    a = ot.exp(x)
    b = ot.log(a + 1)  # its own node: exp's result is read twice below
    c = ot.sqrt(a * b)
    with opweave.config.change_flags(optimizer_excluding="fusion:inplace"):
        f = _profiled(c.sum(), [x])
    n = 1000
    f(np.ones(n))
    est = f.profile.memory_estimates(f.maker.fgraph)
    nodes = len(f.maker.fgraph.apply_nodes)
    assert est["without_gc"] == 8 * n * (nodes - 1) + 8  # every vector, and the scalar sum
    assert est["outputs"] == 8
    assert est["with_gc"] < est["without_gc"]
    assert est["with_gc"] >= 2 * 8 * n  # a node's input and output are live together


def test_views_and_in_place_outputs_take_no_new_memory() -> None:
    x = ot.dmatrix("x")
    f = _profiled((x.T * 2).sum(), [x])
    f(np.ones((50, 40)))
    est = f.profile.memory_estimates(f.maker.fgraph)
    assert est["without_gc"] <= 8 * 50 * 40 + 8  # the transpose is a view


def test_summary_prints_the_memory_profile() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    f = _profiled(ot.tanh(ot.dot(x, y)), [x, y], "cvm")
    f(np.ones((10, 4)), np.ones((4, 5)))
    out = io.StringIO()
    f.profile.summary(file=out)
    text = out.getvalue()
    assert "Memory profile" in text and "Peak memory" in text
    assert "(10, 5)" in text and "400" in text  # Dot's 10x5 float64 output, with its flops


def test_the_lazy_loop_records_sizes_of_what_ran_only() -> None:
    from opweave.ifelse import ifelse

    c, x = ot.dscalar("c"), ot.dvector("x")
    out = ifelse(c > 0, ot.exp(x) * 2, ot.log(x) * 3)
    f = _profiled(out, [c, x])
    f(1.0, np.ones(6))
    ran = {
        type(k[1].op.scalar_op).__name__
        for k in f.profile.output_size
        if hasattr(k[1].op, "scalar_op")
    }
    recorded = {str(k[1].op) for k in f.profile.output_size}
    assert any("exp" in r.lower() for r in recorded | ran)
    assert not any("log" in r.lower() for r in recorded)  # the branch not taken
    assert all(sum(sizes) >= 0 for sizes in f.profile.output_size.values())
