"""Softmax, cumulative, split, diagonal, sort, search, repeat, index-conversion, permutation
and ``Unique``/``Nonzero`` lowerings against the ``py`` linker."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.utils import NoImplementationError
from opweave.tensor.special import log_softmax, softmax

from .conftest import assert_same, compile_both


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the py side, on inf
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax_log_softmax_and_their_gradient(same_as_py: Any, axis: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[1.0, -2.0, 3.0], [np.inf, 0.0, -np.inf], [-700.0, 700.0, 0.0]])
    cost = (softmax(x, axis=axis) * np.arange(9.0).reshape(3, 3)).sum()
    outs = [softmax(x, axis=axis), log_softmax(x, axis=axis)]
    same_as_py([x], outs, [value], rtol=1e-15)
    finite = np.linspace(-3, 3, 9).reshape(3, 3)
    same_as_py([x], [opweave.grad(cost, x)], [finite], rtol=1e-14)


def test_cumulative_split_diagonal(same_as_py: Any) -> None:
    x, m = pt.lvector("x"), pt.dmatrix("m")
    outs = [pt.cumsum(x), pt.cumprod(x), *pt.split(x, [1, 3], 2), pt.diagonal(m, 1)]
    same_as_py([x, m], outs, [np.array([3, -1, 2, 5]), np.arange(12.0).reshape(3, 4)])


def test_sorts_put_nan_last(same_as_py: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[3.0, np.nan, -0.0, 1.0], [2.0, 2.0, -np.inf, 0.0]])
    same_as_py([x], [pt.sort(x), pt.sort(x, axis=0), pt.argsort(x, kind="stable")], [value])


def test_searchsorted_repeat_fill_diagonal(same_as_py: Any) -> None:
    x, v, m = pt.dvector("x"), pt.dvector("v"), pt.dmatrix("m")
    sorter = pt.lvector("s")
    off = pt.lscalar("off")
    outs = [
        pt.searchsorted(x, v),
        pt.searchsorted(x, v, side="right"),
        pt.searchsorted(x, v, sorter=sorter),
        pt.repeat(x, 2),
        pt.repeat(m, np.array([1, 0, 3]), axis=0),
        pt.fill_diagonal(m, 7.5),
        pt.fill_diagonal_offset(m, -1.0, off),
    ]
    args = [
        np.array([-np.inf, 0.0, 1.0, 1.0, 3.0, np.nan]),
        np.array([1.0, -0.0, np.nan, np.inf, 2.0]),
        np.arange(12.0).reshape(3, 4),
        np.array([5, 4, 3, 2, 1, 0]),
        2,
    ]
    same_as_py([x, v, m, sorter, off], outs, args)
    args[-1] = -5  # an offset past the matrix: nothing changes
    same_as_py([x, v, m, sorter, off], outs, args)


def test_index_conversions_and_their_range_checks(same_as_py: Any) -> None:
    i, r, c = pt.lvector("i"), pt.lvector("r"), pt.lvector("c")
    outs = [
        *pt.unravel_index(i, (3, 4)),
        *pt.unravel_index(i, (3, 4), order="F"),
        pt.ravel_multi_index([r, c], (3, 4)),
        pt.ravel_multi_index([r, c], (3, 4), mode="wrap", order="F"),
        pt.ravel_multi_index([r, c], (3, 4), mode="clip"),
    ]
    same_as_py([i, r, c], outs, [np.array([0, 5, 11]), np.array([0, 2, 1]), np.array([3, 0, 2])])
    jax_fn, py_fn = compile_both([i, r, c], outs)
    for fn, args in (
        (jax_fn, [np.array([12, 0, 0]), np.zeros(3, "int64"), np.zeros(3, "int64")]),
        (py_fn, [np.array([12, 0, 0]), np.zeros(3, "int64"), np.zeros(3, "int64")]),
        (jax_fn, [np.zeros(3, "int64"), np.array([0, 3, 0]), np.zeros(3, "int64")]),
        (py_fn, [np.zeros(3, "int64"), np.array([0, 3, 0]), np.zeros(3, "int64")]),
    ):
        with pytest.raises(ValueError):
            fn(*args)


def test_diagonals_permutations_choose(same_as_py: Any) -> None:
    v, m, a = pt.dvector("v"), pt.dmatrix("m"), pt.lmatrix("a")
    p, q = pt.lvector("p"), pt.lmatrix("q")
    outs = [
        pt.alloc_diag(v, offset=1),
        pt.alloc_diag(v, offset=-2),
        opweave.grad((pt.diagonal(m, 1) * v[:2]).sum(), m),  # DiagGrad
        pt.permute_row_elements(m, p),
        pt.permute_row_elements(m, q, inverse=True),
        pt.choose(a, [m, 2 * m, -m]),
        pt.choose(a, [m, 2 * m], mode="wrap"),
        pt.choose(a, [m, 2 * m], mode="clip"),
    ]
    args = [
        np.array([1.0, -2.0, np.nan]),
        np.arange(9.0).reshape(3, 3),
        np.array([[0, 1, 2], [2, 1, 0], [1, 1, 1]]),
        np.array([2, 0, 1]),
        np.array([[1, 2, 0], [0, 1, 2], [2, 1, 0]]),
    ]
    same_as_py([v, m, a, p, q], outs, args)
    jax_fn, py_fn = compile_both([m, a], [pt.choose(a, [m, 2 * m])])
    for fn in (jax_fn, py_fn):
        with pytest.raises(ValueError, match="invalid entry"):
            fn(args[1], args[2])


def test_unique_and_nonzero_of_constants_only() -> None:
    value = np.array([3.0, 1.0, 3.0, np.nan, 0.0, 1.0])
    const = pt.as_tensor_variable(value)
    outs = [*pt.unique(const, return_index=True, return_inverse=True, return_counts=True)]
    outs += [pt.nonzero(const)[0], pt.unique(const.reshape((2, 3)), axis=1)]
    jax_fn, py_fn = compile_both([], outs, optimizer=None)
    for i, (got, want) in enumerate(zip(jax_fn(), py_fn(), strict=True)):
        assert_same(got, want, what=f"output {i}")
    x = pt.dvector("x")
    for out in (pt.unique(x), pt.nonzero(x)[0]):
        with pytest.raises(NoImplementationError, match="depends on the values"):
            compile_both([x], [out], optimizer=None)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the py side, outside the domain
@pytest.mark.parametrize("dtype,tol", [("float64", 2e-14), ("float32", 1e-6)])
def test_erfcinv_and_ndtri_exp(same_as_py: Any, dtype: str, tol: float) -> None:
    """``erfcinv`` within 8e-16 and ``ndtri_exp`` within 1.5e-14 of the ``py`` kernels
    (float64, measured on these values, the underflowing tail of ``exp`` included); the
    edges (0, 2, outside the domain, NaN, infinities) exactly."""
    y = pt.vector("y", dtype=dtype)
    outs = [pt.erfcinv(y), pt.ndtri_exp(-y * 400), pt.ndtri_exp(-(y**2) * 1e5)]
    y_values = np.concatenate(
        [np.linspace(0.0, 2.0, 41), [-0.0, 1e-30, 2 - 1e-7, -1.0, 3.0, np.nan, np.inf]]
    )
    same_as_py([y], outs, [y_values.astype(dtype)], rtol=tol)


def test_owens_t() -> None:
    """Within 5e-15 (relative) of the ``py`` kernel for ``|h| <= 5``; beyond, where the
    values fall below 1e-20, within 1e-16 (absolute): XLA's relative error there reaches
    4e-7. ``T(0, +-inf) = +-1/4``, NaN and infinities as the ``py`` kernel gives them."""
    h, a = pt.dvector("h"), pt.dvector("a")
    hs, as_ = (
        g.ravel()
        for g in np.meshgrid(
            [0.0, -0.0, 0.5, -1.0, 3.0, -5.0, 10.0, -12.0, np.inf, -np.inf, np.nan],
            [0.0, 0.2, -0.7, 1.0, 2.0, 50.0, np.inf, -np.inf, np.nan],
        )
    )
    jax_fn, py_fn = compile_both([h, a], [pt.owens_t(h, a)])
    got, want = jax_fn(hs, as_)[0], py_fn(hs, as_)[0]
    assert got.dtype == want.dtype
    near = np.abs(hs) <= 5
    np.testing.assert_allclose(got[near], want[near], rtol=5e-15, atol=0, equal_nan=True)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-16, equal_nan=True)
