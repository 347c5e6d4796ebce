"""``sum(x[mask])`` under the ``jax`` linker: a masked sum XLA compiles (``x[mask]`` alone
has no length to compile for), the ``py`` linker's values and errors."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.tensor.subtensor import AdvancedSubtensor

JAX = opweave.Mode(linker="jax")
PY = opweave.Mode(linker="py")


def _served_rewrites() -> Any:
    """``opweave.tensor.rewriting.jax`` (PyTensor's ``pytensor.tensor.rewriting.jax``),
    which opweave-jax serves: its own rewrites module."""
    import opweave_jax.rewrites

    served = importlib.import_module("opweave.tensor.rewriting.jax")
    assert served is opweave_jax.rewrites
    return served


def _both(inputs: list[Any], outputs: list[Any], *args: Any) -> tuple[list[Any], list[Any]]:
    jax_fn = opweave.function(inputs, outputs, mode=JAX)
    py_fn = opweave.function(inputs, outputs, mode=PY)
    assert not any(
        isinstance(node.op, AdvancedSubtensor) for node in jax_fn.maker.fgraph.apply_nodes
    ), "the masked read is still in the jax graph"
    return jax_fn(*args), py_fn(*args)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int32"])
def test_sums_of_masked_reads_match_the_py_linker(dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    outs = [
        pt.sum(x[x > 0]),
        pt.sum(x[x > 0] * 2),
        pt.mean(x[x > 0]),
        pt.sum(x[x[:, 0] > 0]),
    ]
    value = np.array([[1, -2, 3], [0, -1, 2], [4, 5, -6]], dtype=dtype)
    got, want = _both([x], outs, value)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_elementwise_functions_of_the_masked_values_are_summed_where_the_mask_holds() -> None:
    x = pt.dvector("x")
    # log of the masked-out values is NaN: the masked sum must not see them.
    outs = [pt.sum(pt.log(x[x > 0])), pt.sum(x[x > 0] ** 2 + 1.0)]
    value = np.array([2.0, -1.0, 0.5, np.inf, -np.inf])
    got, want = _both([x], outs, value)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-15)


def test_an_empty_selection_sums_to_zero() -> None:
    x, m = pt.dvector("x"), pt.vector("m", dtype="bool")
    got, want = _both([x, m], [pt.sum(x[m])], np.arange(3.0), np.zeros(3, dtype=bool))
    np.testing.assert_array_equal(got[0], want[0])
    assert float(got[0]) == 0.0


def test_a_mask_of_the_wrong_length_raises_as_numpy_does() -> None:
    x, m = pt.dvector("x"), pt.vector("m", dtype="bool")
    f = opweave.function([x, m], pt.sum(x[m]), mode=JAX)
    np.testing.assert_array_equal(f(np.arange(3.0), np.array([True, False, True])), 2.0)
    for bad in (np.array([True]), np.array([True, False])):
        with pytest.raises(IndexError, match="boolean index did not match"):
            f(np.arange(3.0), bad)
        with pytest.raises(IndexError):
            np.arange(3.0)[bad]


def test_other_linkers_keep_the_masked_read() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], pt.sum(x[x > 0]), mode=PY)
    assert any(isinstance(node.op, AdvancedSubtensor) for node in f.maker.fgraph.apply_nodes)


def test_a_masked_read_that_is_not_summed_whole_is_left() -> None:
    x = pt.dmatrix("x")
    f = opweave.function([x], pt.sum(x[x[:, 0] > 0], axis=0), mode=JAX)
    assert any(isinstance(node.op, AdvancedSubtensor) for node in f.maker.fgraph.apply_nodes)


@pytest.mark.parametrize("mask_ndim", [1, 2])
def test_set_and_inc_of_masked_values_by_a_scalar(mask_ndim: int) -> None:
    x, y = pt.dmatrix("x"), pt.dscalar("y")
    mask = x > 0 if mask_ndim == 2 else x[:, 0] > 0
    outs = [pt.set_subtensor(x[mask], y), pt.inc_subtensor(x[mask], y)]
    value = np.array([[1.0, -2.0, 3.0], [-0.5, -1.0, 2.0], [4.0, 5.0, -6.0]])
    got, want = _both([x, y], outs, value, 10.0)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


def test_set_by_a_vector_is_left_to_the_lowering() -> None:
    from opweave.graph.fg import FunctionGraph

    served = _served_rewrites()
    boolean_indexing_set_or_inc = served.boolean_indexing_set_or_inc
    boolean_indexing_sum = served.boolean_indexing_sum

    x = pt.dvector("x")
    out = pt.set_subtensor(x[x > 0], [0.0, 1.0, 2.0])
    fg = FunctionGraph([x], [out])
    assert boolean_indexing_set_or_inc.transform(fg, fg.outputs[0].owner) is None
    m = pt.dmatrix("m")
    partial = m[m[:, 0] < 0, :].sum(axis=-1)
    fg = FunctionGraph([m], [partial])
    assert boolean_indexing_sum.transform(fg, fg.outputs[0].owner) is None


def test_the_phase_runs_on_a_query_of_the_jax_tag_alone() -> None:
    from opweave.graph.rewriting.db import RewriteDatabaseQuery

    x = pt.dmatrix("x")
    mode = opweave.Mode(linker="jax", optimizer=RewriteDatabaseQuery(include=["jax"]))
    f = opweave.function([x], x[x < 0].sum(), mode=mode)
    value = np.arange(25.0).reshape(5, 5) - 12.0
    np.testing.assert_array_equal(f(value), value[value < 0].sum())


def test_masks_with_other_indices_are_summed_as_the_py_linker_does() -> None:
    x, y = pt.dmatrix("x"), pt.dscalar("y")
    outs = [
        x[x[:, 0] < 0, 0].sum(),
        x[:, x[0] > 0].sum(),
        pt.set_subtensor(x[:, x[0] > 0], y),
        pt.inc_subtensor(x[x[:, 0] < 0, 1], y),
    ]
    value = np.array([[1.0, -2.0, 3.0], [-0.5, -1.0, 2.0], [-4.0, 5.0, -6.0]])
    jax_fn = opweave.function([x], outs[:2], mode=JAX)
    py_fn = opweave.function([x, y], outs, mode=PY)
    want = py_fn(value, 10.0)
    np.testing.assert_array_equal(want[0], value[value[:, 0] < 0, 0].sum())
    np.testing.assert_array_equal(want[1], value[:, value[0] > 0].sum())
    from opweave.graph.fg import FunctionGraph

    served = _served_rewrites()
    boolean_indexing_set_or_inc = served.boolean_indexing_set_or_inc
    boolean_indexing_sum = served.boolean_indexing_sum

    for out in outs:
        fg = FunctionGraph([x, y], [out])
        rewriter = boolean_indexing_sum if out.ndim == 0 else boolean_indexing_set_or_inc
        assert rewriter.transform(fg, fg.outputs[0].owner) is None
    # Left whole, the reads of a mask computed from the values cannot compile in XLA.
    with pytest.raises(Exception, match=r"(?i)boolean ind"):
        jax_fn(value)
