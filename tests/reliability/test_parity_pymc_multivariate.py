"""Reductions of a 0-d tensor over axis ``0`` or ``-1``, as PyTensor takes them.

PyTensor reads the axes of a 0-d input as those of a vector: ``sum``, ``prod``, ``max``,
``min``, ``any``, ``all`` and ``logsumexp`` over axis ``0`` or ``-1`` reduce nothing and
give the value back (in the reduction's dtype); other axes are out of range. PyMC's
``CAR`` log-density sums ``log(tau)`` over axis ``-1`` for a scalar ``tau``, and its
mixtures take ``logsumexp`` over the last axis. Each test runs on every linker (``py``,
``vm``, ``c``, ``cvm``) and compares with NumPy and SciPy.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

REDUCTIONS = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "any": np.any,
    "all": np.all,
}


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize("axis", [-1, 0, (-1,), [0]], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_a_scalar_over_its_vector_axis(linker: str, axis: object, name: str) -> None:
    x = pt.dscalar("x")
    out = getattr(pt, name)(x, axis=axis)
    assert out.type.ndim == 0
    fn = opweave.function([x], out, mode=opweave.Mode(linker=linker))
    for value in (2.5, -0.0, 0.0, -3.25):
        expected = REDUCTIONS[name](np.atleast_1d(value), axis=-1)
        got = fn(value)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("linker", usable_linkers())
def test_integer_scalar_sum_takes_numpys_dtype(linker: str) -> None:
    i = pt.iscalar("i")
    out = pt.sum(i, axis=-1, keepdims=True)
    fn = opweave.function([i], out, mode=opweave.Mode(linker=linker))
    expected = np.sum(np.atleast_1d(np.int32(7)), axis=-1)
    got = fn(np.int32(7))
    assert got.shape == () and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_of_a_scalar_over_the_last_axis(linker: str, keepdims: bool) -> None:
    x = pt.dscalar("x")
    out = pt.logsumexp(x, axis=-1, keepdims=keepdims)
    assert out.type.ndim == 0
    fn = opweave.function([x], out, mode=opweave.Mode(linker=linker))
    for value in (2.5, -700.0, 0.0, -np.inf):
        np.testing.assert_array_equal(fn(value), sp.logsumexp(np.atleast_1d(value), axis=-1))


@pytest.mark.parametrize("linker", usable_linkers())
def test_car_log_precision_term_with_a_scalar_tau(linker: str) -> None:
    # PyMC's CAR: ``d * log(tau).sum(axis=-1)`` with d the number of sites.
    tau = pt.dscalar("tau")
    out = 4 * pt.log(tau).sum(axis=-1) / 2.0
    fn = opweave.function([tau], out, mode=opweave.Mode(linker=linker))
    np.testing.assert_allclose(fn(2.0), 4 * np.log(2.0) / 2.0, rtol=1e-15)


@pytest.mark.parametrize("axis", [1, -2, (0, -1)], ids=str)
def test_other_axes_of_a_scalar_are_refused(axis: object) -> None:
    x = pt.dscalar("x")
    for name in ("sum", "max", "logsumexp"):
        with pytest.raises(ValueError, match="out of range for an input with 0 dimensions"):
            getattr(pt, name)(x, axis=axis)
