"""The ``dask`` linker on chains of nodes run on one worker whose output lengths are unknown
(``unique``) or come from an input's value (``rfft``/``irfft``): values equal to NumPy's,
output lengths known where the inputs tell them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import opweave  # noqa: E402
import opweave.tensor as ot  # noqa: E402
from opweave.tensor.extra_ops import unique  # noqa: E402
from opweave.tensor.fft import irfft, rfft  # noqa: E402
from opweave.tensor.sort import sort  # noqa: E402

RNG = np.random.default_rng(7)
M = RNG.normal(size=(6, 10))
V = np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0, 5.0, 7.0, 7.0, 0.0, 4.0, 4.0])
W = np.array([2.0, 9.0, 2.0, 6.0, 9.0])


def lazy(
    mode: opweave.Mode, inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any]
) -> list[Any]:
    """The outputs of the dask function of ``inputs`` -> ``outputs`` on ``args``, each
    asserted to be a Dask array."""
    got = opweave.function(list(inputs), list(outputs), mode=mode)(*args)
    for i, value in enumerate(got):
        assert isinstance(value, da.Array), f"output {i} is a {type(value).__name__}"
    return list(got)


def chunked(value: np.ndarray, size: int = 4) -> Any:
    """``value`` as a Dask array of several chunks along each axis."""
    return da.from_array(value, chunks=size)


# ---------------------------------------------------------------------- FFT


@pytest.mark.parametrize("given", [M, chunked(M)], ids=["numpy", "dask"])
def test_irfft_of_rfft_equals_numpy_with_known_lengths(dask_mode: opweave.Mode, given: Any) -> None:
    m = ot.dmatrix("m")
    spectrum, back = lazy(dask_mode, [m], [rfft(m), irfft(rfft(m))], [given])
    # The transform lengths are a value computed from the input's shape: no length unknown.
    assert spectrum.shape == (6, 6, 2)
    assert back.shape == M.shape
    want = np.fft.rfft(M)
    np.testing.assert_allclose(spectrum.compute(), np.stack([want.real, want.imag], axis=-1))
    np.testing.assert_allclose(back.compute(), np.fft.irfft(np.fft.rfft(M)), rtol=1e-12)


def test_three_transforms_and_a_reduction_equal_numpy(dask_mode: opweave.Mode) -> None:
    m = ot.dmatrix("m")
    out = irfft(rfft(irfft(rfft(m)) * 2)).sum(axis=1)
    (got,) = lazy(dask_mode, [m], [out], [chunked(M)])
    twice = np.fft.irfft(np.fft.rfft(np.fft.irfft(np.fft.rfft(M)) * 2))
    np.testing.assert_allclose(got.compute(), twice.sum(axis=1), rtol=1e-12)


def test_irfft_of_rfft_of_unique_values_equals_numpy(dask_mode: opweave.Mode) -> None:
    x = ot.dvector("x")
    (got,) = lazy(dask_mode, [x], [irfft(rfft(unique(x)[None, :]))], [chunked(V)])
    want = np.fft.irfft(np.fft.rfft(np.unique(V)[None, :]))
    np.testing.assert_allclose(got.compute(), want, rtol=1e-12)


# ---------------------------------------------------------------------- unique chains


@pytest.mark.parametrize("given", [V, chunked(V)], ids=["numpy", "dask"])
def test_unique_of_unique_equals_numpy(dask_mode: opweave.Mode, given: Any) -> None:
    x = ot.dvector("x")
    (got,) = lazy(dask_mode, [x], [unique(unique(x) * 2)], [given])
    assert math.isnan(got.shape[0])  # the count of unique values is known once computed
    np.testing.assert_array_equal(got.compute(), np.unique(np.unique(V) * 2))


def test_sort_of_unique_equals_numpy(dask_mode: opweave.Mode) -> None:
    x = ot.dvector("x")
    (got,) = lazy(dask_mode, [x], [sort(unique(x) * -1)], [chunked(V)])
    np.testing.assert_array_equal(got.compute(), np.sort(-np.unique(V)))


def test_chain_of_three_one_worker_nodes_equals_numpy(dask_mode: opweave.Mode) -> None:
    x = ot.dvector("x")
    out = unique(sort(unique(x) * -2) ** 2)
    (got, total) = lazy(dask_mode, [x], [out, out.sum()], [chunked(V)])
    want = np.unique(np.sort(np.unique(V) * -2) ** 2)
    np.testing.assert_array_equal(got.compute(), want)
    np.testing.assert_allclose(total.compute(), want.sum())


def test_unique_then_reductions_elementwise_and_products_equal_numpy(
    dask_mode: opweave.Mode,
) -> None:
    x = ot.dvector("x")
    u = unique(x)
    outs = [
        u.sum(),
        u.mean(),
        u.max(),
        (u * 2 + 1) ** 2 - u,
        ot.dot(u, u),
        ot.matmul(u[:, None], u[None, :]),
        unique(ot.matmul(u[:, None], u[None, :])),
    ]
    got = [g.compute() for g in lazy(dask_mode, [x], outs, [chunked(V)])]
    uv = np.unique(V)
    wants = [
        uv.sum(),
        uv.mean(),
        uv.max(),
        (uv * 2 + 1) ** 2 - uv,
        uv @ uv,
        np.outer(uv, uv),
        np.unique(np.outer(uv, uv)),
    ]
    for i, (g, w) in enumerate(zip(got, wants, strict=True)):
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"output {i}")


def test_unique_of_a_join_of_unknown_lengths_equals_numpy(dask_mode: opweave.Mode) -> None:
    # The join has one chunk per input, each of unknown length: joined in one task.
    x, y = ot.dvector("x"), ot.dvector("y")
    joined = ot.concatenate([unique(x), unique(y) * 3])
    (got,) = lazy(dask_mode, [x, y], [unique(joined)], [chunked(V), W])
    want = np.unique(np.concatenate([np.unique(V), np.unique(W) * 3]))
    np.testing.assert_array_equal(got.compute(), want)


def test_indexing_and_joining_columns_of_unknown_length_equal_numpy(
    dask_mode: opweave.Mode,
) -> None:
    x = ot.dvector("x")
    u = unique(x)
    columns = ot.concatenate([u[:, None], u[:, None] * 2], axis=1)
    outs = [u[1:], u[-1] + u[1:3].sum(), u[::-1], columns, columns[:, 1], columns[1:, :1]]
    got = [g.compute() for g in lazy(dask_mode, [x], outs, [chunked(V)])]
    uv = np.unique(V)
    cols = np.stack([uv, uv * 2], axis=1)
    wants = [uv[1:], uv[-1] + uv[1:3].sum(), uv[::-1], cols, cols[:, 1], cols[1:, :1]]
    for i, (g, w) in enumerate(zip(got, wants, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


def test_unique_counts_feed_later_nodes_equal_numpy(dask_mode: opweave.Mode) -> None:
    x = ot.dvector("x")
    values, counts = cast(list[Any], unique(x, return_counts=True))
    outs = [unique(counts), values * counts, (values * counts).sum()]
    got = [g.compute() for g in lazy(dask_mode, [x], outs, [chunked(V)])]
    uv, uc = np.unique(V, return_counts=True)
    wants = [np.unique(uc), uv * uc, (uv * uc).sum()]
    for i, (g, w) in enumerate(zip(got, wants, strict=True)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {i}")


# ---------------------------------------------------------------------- lengths


def test_lengths_not_computed_from_unknown_ones_stay_known(dask_mode: opweave.Mode) -> None:
    m, y = ot.dmatrix("m"), ot.dvector("y")
    a = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 0.0, 1.0]])
    b = np.arange(4.0)
    rows = unique(m, axis=0)
    (sorted_rows, shifted) = lazy(
        dask_mode, [m, y], [sort(rows, axis=1), sort(rows, axis=1) + y], [a, chunked(b, 2)]
    )
    # The rows left are counted by the computation; the row length is the input's.
    assert math.isnan(sorted_rows.shape[0])
    assert sorted_rows.shape[1] == 4
    want = np.sort(np.unique(a, axis=0), axis=1)
    np.testing.assert_array_equal(sorted_rows.compute(), want)
    np.testing.assert_array_equal(shifted.compute(), want + b)


@pytest.mark.parametrize(
    "other", [np.arange(7.0), chunked(np.arange(7.0), 3)], ids=["numpy", "dask"]
)
def test_unknown_length_beside_a_chunked_operand_equals_numpy(
    dask_mode: opweave.Mode, other: Any
) -> None:
    # Dask cannot line up an unknown-length array with a chunked one: one worker runs it.
    x, y = ot.dvector("x"), ot.dvector("y")
    (got,) = lazy(dask_mode, [x, y], [unique(x) + y], [chunked(V), other])
    np.testing.assert_array_equal(got.compute(), np.unique(V) + np.arange(7.0))


@pytest.mark.parametrize("reduce", [ot.argmax, ot.argmin], ids=["argmax", "argmin"])
def test_arg_reductions_over_an_unknown_length_equal_numpy(
    dask_mode: opweave.Mode, reduce: Any
) -> None:
    x = ot.dvector("x")
    got = opweave.function([x], reduce(unique(x) * -1), mode=dask_mode)(chunked(V))
    want = getattr(np, reduce.__name__)(np.unique(V) * -1)
    assert int(np.asarray(got.compute() if hasattr(got, "compute") else got)) == want
