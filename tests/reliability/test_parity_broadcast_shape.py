"""``broadcast_shape`` and ``broadcast_arrays`` check lengths the types do not know, on
every linker, against NumPy.

Lengths that do not broadcast (differ, and none is 1) must raise, as ``np.broadcast_shapes``
and ``np.broadcast_arrays`` do, instead of giving a shape or arrays of the wrong lengths.
As in PyTensor, only a length known to be 1 when the graph is built broadcasts: a symbolic
length that is 1 only when the function runs is checked like any other. One function per
linker (``py``, ``vm``, ``c``, ``cvm``).
"""

from __future__ import annotations

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt
from opweave.tensor.extra_ops import broadcast_shape

LINKERS = usable_linkers()


@pytest.mark.parametrize("linker", LINKERS)
def test_symbolic_shapes(linker: str) -> None:
    s1, s2 = pt.lscalars(2), pt.lscalars(2)
    out = pt.as_tensor(broadcast_shape(s1, s2, arrays_are_shapes=True))
    fn = opweave.function([*s1, *s2], out, mode=opweave.Mode(linker=linker))
    np.testing.assert_array_equal(fn(2, 3, 2, 3), np.broadcast_shapes((2, 3), (2, 3)))
    with pytest.raises(ValueError):
        np.broadcast_shapes((2, 2), (3, 2))
    with pytest.raises(AssertionError):
        fn(2, 2, 3, 2)
    with pytest.raises(AssertionError):  # a run-time 1 is not a broadcast dimension
        fn(2, 2, 1, 2)


@pytest.mark.parametrize("linker", LINKERS)
def test_constant_and_symbolic_lengths(linker: str) -> None:
    n = pt.lscalar("n")
    out = pt.as_tensor(broadcast_shape((1, 4), (n, 1), (5, 4), arrays_are_shapes=True))
    fn = opweave.function([n], out, mode=opweave.Mode(linker=linker))
    with pytest.raises(AssertionError):
        fn(4)
    np.testing.assert_array_equal(fn(5), np.broadcast_shapes((1, 4), (5, 1), (5, 4)))
    with pytest.raises(ValueError, match="Could not broadcast"):
        broadcast_shape((2, 3), (4, 3), arrays_are_shapes=True)


@pytest.mark.parametrize("linker", LINKERS)
def test_shape_of_tensors(linker: str) -> None:
    x, y = pt.matrix("x"), pt.tensor("y", shape=(1, None))
    out = pt.as_tensor(broadcast_shape(x, y))
    fn = opweave.function([x, y], out, mode=opweave.Mode(linker=linker))
    xv, yv = np.zeros((3, 4), dtype=x.dtype), np.zeros((1, 4), dtype=y.dtype)
    np.testing.assert_array_equal(fn(xv, yv), np.broadcast_shapes(xv.shape, yv.shape))
    with pytest.raises(AssertionError):
        fn(xv, np.zeros((1, 5), dtype=y.dtype))


@pytest.mark.parametrize("linker", LINKERS)
def test_broadcast_arrays(linker: str) -> None:
    x, y = pt.vector("x"), pt.vector("y")
    fn = opweave.function([x, y], pt.broadcast_arrays(x, y), mode=opweave.Mode(linker=linker))
    xv, yv = np.arange(3.0).astype(x.dtype), np.ones(3, dtype=y.dtype)
    for got, expected in zip(fn(xv, yv), np.broadcast_arrays(xv, yv), strict=True):
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError):
        np.broadcast_arrays(xv, np.ones(2))
    with pytest.raises(AssertionError):
        fn(xv, np.ones(2, dtype=y.dtype))
    col = pt.tensor("col", shape=(None, 1))
    fn2 = opweave.function([col, y], pt.broadcast_arrays(col, y), mode=opweave.Mode(linker=linker))
    cv = np.array([[1.0], [2.0]], dtype=col.dtype)
    for got, expected in zip(fn2(cv, yv), np.broadcast_arrays(cv, yv), strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("linker", LINKERS)
def test_allow_runtime_broadcast(linker: str) -> None:
    s1, s2 = pt.lscalars(2), pt.lscalars(2)
    out = pt.as_tensor(
        broadcast_shape(s1, s2, arrays_are_shapes=True, allow_runtime_broadcast=True)
    )
    fn = opweave.function([*s1, *s2], out, mode=opweave.Mode(linker=linker))
    for a, b in [((2, 2), (1, 2)), ((1, 1), (1, 1)), ((0, 3), (1, 3)), ((4, 1), (1, 5))]:
        np.testing.assert_array_equal(fn(*a, *b), np.broadcast_shapes(a, b))
    with pytest.raises(AssertionError):
        fn(2, 2, 3, 2)
