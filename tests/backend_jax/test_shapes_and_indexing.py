"""Shape, constructor, product and indexing lowerings against the ``py`` linker (exact,
except products, which XLA may sum in another order)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt

from .conftest import compile_both


def test_dimshuffle_reshape_shape(same_as_py: Any) -> None:
    x = pt.dtensor3("x")
    outs = [x.dimshuffle(2, "x", 0, 1), x.T, x.reshape((x.shape[0], -1)), x.shape, x.shape[1]]
    outs += [x.flatten(), pt.specify_shape(x, (3, None, 2)).sum()]
    same_as_py([x], outs, [np.arange(24.0).reshape(3, 4, 2)[:, ::-1]])


def test_specify_shape_refuses_other_lengths() -> None:
    x = pt.dmatrix("x")
    f, _ = compile_both([x], [pt.specify_shape(x, (2, 3)) * 2], None)
    with pytest.raises(AssertionError, match="dimension 0 of the input has length 4"):
        f(np.ones((4, 3)))


def test_constructors(same_as_py: Any) -> None:
    x, n = pt.dvector("x"), pt.lscalar("n")
    outs = [pt.zeros_like(x), pt.alloc(x, 2, x.shape[0]), pt.concatenate([x, x[::-1]])]
    outs += [pt.stack([x[0], x[1], x.sum()]), pt.arange(x.shape[0] * 2), pt.eye(3, 4, 1)]
    outs += [pt.ones((x.shape[0], 2)), pt.stack([x, x], axis=1)]
    same_as_py([x], outs, [np.array([1.0, -0.0, np.nan, 4.0])])
    del n


def test_join_of_empty_pieces(same_as_py: Any) -> None:
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    same_as_py([x, y], [pt.concatenate([x, y], axis=0)], [np.zeros((0, 2)), np.ones((3, 2))])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dot_and_matmul(same_as_py: Any, dtype: str) -> None:
    a, b, v = pt.matrix("a", dtype=dtype), pt.matrix("b", dtype=dtype), pt.vector("v", dtype=dtype)
    rng = np.random.default_rng(0)
    av = rng.normal(size=(6, 4)).astype(dtype)
    bv = rng.normal(size=(5, 4)).astype(dtype).T  # not contiguous
    vv = rng.normal(size=4).astype(dtype)
    rtol = 1e-14 if dtype == "float64" else 1e-5
    outs = [pt.dot(a, b), a @ v, pt.dot(v, v), pt.matmul(a, b)]
    same_as_py([a, b, v], outs, [av, bv, vv], rtol=rtol)


def test_basic_indexing(same_as_py: Any) -> None:
    x, i = pt.dmatrix("x"), pt.lscalar("i")
    outs = [x[1:], x[::-1, 1], x[-1], x[:, -2:0:-1], x[i], x[1:3, i]]
    same_as_py([x, i], outs, [np.arange(20.0).reshape(4, 5), np.int64(-2)])


def test_static_index_out_of_bounds_raises_index_error() -> None:
    x = pt.dvector("x")
    f, _ = compile_both([x], [x[5]], None)
    with pytest.raises(IndexError, match="out of bounds"):
        f(np.ones(3))


def test_set_and_inc_subtensor(same_as_py: Any) -> None:
    x, y, i = pt.dmatrix("x"), pt.dvector("y"), pt.lscalar("i")
    outs = [pt.set_subtensor(x[1:3, 0], y[:2]), pt.inc_subtensor(x[i], y)]
    outs += [pt.inc_subtensor(x[::2, 1:], 1.5), pt.set_subtensor(x[-1, -1], -0.0)]
    same_as_py([x, y, i], outs, [np.arange(12.0).reshape(3, 4), np.arange(4.0), np.int64(1)])


def test_advanced_indexing(same_as_py: Any) -> None:
    x, idx = pt.dmatrix("x"), pt.lvector("idx")
    outs = [x[idx], pt.inc_subtensor(x[idx], 1.0), pt.set_subtensor(x[idx], -x[idx])]
    outs += [x[idx, 1:], x[idx, idx]]
    same_as_py([x, idx], outs, [np.arange(12.0).reshape(4, 3), np.array([2, 0, 1, 2])])


def test_repeated_indices_accumulate_when_incrementing(same_as_py: Any) -> None:
    x, idx = pt.dvector("x"), pt.lvector("idx")
    same_as_py([x, idx], [pt.inc_subtensor(x[idx], 1.0)], [np.zeros(4), np.array([1, 1, 3, 1])])


def test_shape_from_values_is_refused_with_a_clear_message() -> None:
    # A length computed from floats (no integer input to make static).
    v = pt.dvector("v")
    length = pt.cast(v.sum(), "int64")
    f = opweave.function([v], pt.zeros((length,)), mode=opweave.Mode(linker="jax", optimizer=None))
    with pytest.raises(NotImplementedError, match="must be known when the graph is compiled"):
        f(np.array([1.0, 2.0]))
