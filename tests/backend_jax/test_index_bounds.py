"""Indices out of bounds under the ``jax`` linker: NumPy's ``IndexError`` (XLA would clamp
them into bounds and return a wrong value), for indices known when compiling and for those
computed from the input values (raised after the call)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt

JAX = opweave.Mode(linker="jax")
PY = opweave.Mode(linker="py")


def _graphs() -> tuple[list[Any], list[Any]]:
    x, i, j = pt.dvector("x"), pt.lvector("i"), pt.lscalar("j")
    m = pt.dmatrix("m")
    outs = [
        x[i],
        x[j],
        pt.inc_subtensor(x[i], 1.0),
        pt.set_subtensor(x[j], 5.0),
        m[i, 1:],
        m[1:, i],
        m[i, i],
        pt.inc_subtensor(m[i, j], 2.0),
    ]
    return [x, i, j, m], outs


@pytest.mark.parametrize("k", range(8))
def test_indices_in_bounds_give_the_py_values(k: int) -> None:
    inputs, outs = _graphs()
    args = (np.arange(3.0), np.array([2, -3, 0]), -1, np.arange(9.0).reshape(3, 3))
    got = opweave.function(inputs, outs[k], mode=JAX, on_unused_input="ignore")(*args)
    want = opweave.function(inputs, outs[k], mode=PY, on_unused_input="ignore")(*args)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("k", range(8))
@pytest.mark.parametrize(("i", "j"), [([0, 3], 0), ([-4], 0), ([0], 3), ([0], -4)])
def test_indices_out_of_bounds_raise_as_on_the_py_linker(k: int, i: list[int], j: int) -> None:
    inputs, outs = _graphs()
    args = (np.arange(3.0), np.array(i), j, np.arange(9.0).reshape(3, 3))
    py_fn = opweave.function(inputs, outs[k], mode=PY, on_unused_input="ignore")
    jax_fn = opweave.function(inputs, outs[k], mode=JAX, on_unused_input="ignore")
    try:
        want = py_fn(*args)
    except IndexError:
        with pytest.raises(IndexError, match="out of bounds"):
            jax_fn(*args)
    else:
        np.testing.assert_array_equal(jax_fn(*args), want)


def test_constant_indices_out_of_bounds_raise_when_compiling_the_call() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], x[np.array([0, 5])], mode=JAX)
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        f(np.arange(3.0))


def test_an_index_inside_a_scan_step_is_checked() -> None:
    from opweave.scan import scan

    x, i = pt.dvector("x"), pt.lvector("i")
    ys = scan(lambda k, v: v[k], sequences=[i], non_sequences=[x], return_updates=False)
    f = opweave.function([x, i], ys, mode=JAX)
    np.testing.assert_array_equal(f(np.arange(3.0), np.array([2, 0])), [2.0, 0.0])
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.arange(3.0), np.array([2, 3]))


def test_jax_funcify_skips_the_bounds_checks_quietly_under_jit() -> None:
    import jax

    from opweave.graph.fg import FunctionGraph
    from opweave_jax.pytensor_link_jax.dispatch import jax_funcify

    x, i = pt.dvector("x"), pt.lvector("i")
    fn = jax_funcify(FunctionGraph([x, i], [x[i] * 2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (out,) = jax.jit(fn)(np.arange(3.0), np.array([1, 2]))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0])
    with pytest.raises(IndexError, match="out of bounds"):
        fn(np.arange(3.0), np.array([3]))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_positions_out_of_range_raise_as_on_the_py_linker(fmt: str) -> None:
    import scipy.sparse as sp

    import opweave.sparse as ps

    m: Any = ps.matrix(fmt, "m", dtype="float64")
    rows, j = pt.lvector("rows"), pt.lscalar("j")
    value = sp.random(3, 4, density=0.5, format=fmt, random_state=0)
    for out, args in [(m[rows], (np.array([0, 5]),)), (m[j, 1], (7,)), (m[j, 1], (-4,))]:
        inputs = [m, rows] if out.owner.inputs[1] is rows else [m, j]
        for linker in ("py", "jax"):
            fn = opweave.function(inputs, out, mode=opweave.Mode(linker=linker))
            with pytest.raises(IndexError, match="out of range"):
                fn(value, *args)
    fn = opweave.function([m, rows], m[rows], mode=JAX)
    np.testing.assert_array_equal(fn(value, np.array([2, -1])).toarray(), value[[2, -1]].toarray())
