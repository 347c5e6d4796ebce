"""``Join()(axis, *tensors)`` on the ``dask`` linker: constant (negative) and symbolic
axes, mixed dtypes and empty pieces, equal to the ``vm`` linker and to NumPy."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.tensor.basic import Join  # noqa: E402

RNG = np.random.default_rng(8)
X = RNG.normal(size=(6, 4))
CHUNKS = ((2, 4), (3, 1))


def test_constant_and_symbolic_axes_keep_the_chunks(same_as_vm) -> None:
    x, i, b, ax = ot.dmatrix("x"), ot.lmatrix("i"), ot.bmatrix("b"), ot.lscalar("ax")
    ints = RNG.integers(-9, 9, size=(6, 4))
    small = RNG.integers(-9, 9, size=(6, 4)).astype("int8")
    outs = [Join()(-1, x, i), ot.concatenate([i, b], axis=-2), Join()(ax, x, i, b)]
    for axis in (0, 1, -1, -2):
        got = same_as_vm(
            [x, i, b, ax], outs, [da.from_array(X, chunks=CHUNKS), ints, small, np.int64(axis)]
        )
        np.testing.assert_array_equal(got[0].compute(), np.concatenate([X, ints], axis=-1))
        np.testing.assert_array_equal(got[1].compute(), np.concatenate([ints, small], axis=-2))
        want = np.concatenate([X, ints, small], axis=axis)
        np.testing.assert_array_equal(got[2].compute(), want)
        # Dask's concatenate keeps the first piece's chunks along the axis.
        assert got[2].chunks[axis][:2] == CHUNKS[axis]


def test_empty_pieces(same_as_vm) -> None:
    x, y, ax = ot.dmatrix("x"), ot.dmatrix("y"), ot.lscalar("ax")
    empty = np.zeros((0, 4))
    got = same_as_vm(
        [x, y, ax],
        [Join()(0, x, y), Join()(ax, y, x)],
        [da.from_array(empty, chunks=(0, 2)), X, np.int64(-2)],
    )
    np.testing.assert_array_equal(got[1].compute(), X)


def test_a_symbolic_axis_out_of_range_is_the_python_error() -> None:
    x, ax = ot.dmatrix("x"), ot.lscalar("ax")
    f = opweave.function([x, ax], Join()(ax, x, x), mode=opweave.Mode(linker="dask"))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        out = f(da.from_array(X, chunks=CHUNKS), np.int64(2))
        out.compute()
