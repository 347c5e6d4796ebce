"""Values of ``opweave.tensor`` functions that PyTensor's tensor tests reach, against NumPy.

``interp`` follows ``numpy.interp``: a query on a data point takes that point's value (the
last of several points at one coordinate), a NaN query gives NaN, infinite data values
are read from whichever neighbour gives a number, and the pads apply strictly outside the
data's range. One function per linker (``py``, ``vm``, ``c``, ``cvm``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt
from opweave.tensor.interpolate import interp, interpolate1d

QUERIES = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, np.inf, -np.inf])


def _interp_function(linker: str, left: float | None = None, right: float | None = None) -> Any:
    x, xp, fp = pt.dvector("x"), pt.dvector("xp"), pt.dvector("fp")
    out = interp(x, xp, fp, left=left, right=right)
    return opweave.function([x, xp, fp], out, mode=opweave.Mode(linker=linker))


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize("pads", [{}, {"left": -10.0, "right": 10.0}], ids=["default", "given"])
def test_interp_of_distinct_points_and_a_nan_query(linker: str, pads: dict[str, float]) -> None:
    xp, fp = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, -1.0, 5.0, 2.0])
    x = np.append(QUERIES, np.nan)
    got = _interp_function(linker, **pads)(x, xp, fp)
    np.testing.assert_allclose(got, np.interp(x, xp, fp, **pads), rtol=1e-14)
    assert np.isnan(got[-1])


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize(
    "xp", [[0.0, 1.0, 1.0, 3.0], [0.0, 0.0, 1.0, 3.0], [0.0, 1.0, 3.0, 3.0]], ids=str
)
def test_interp_with_repeated_coordinates(linker: str, xp: list[float]) -> None:
    fp = np.array([1.0, -1.0, 5.0, 2.0])
    got = _interp_function(linker)(QUERIES, np.array(xp), fp)
    np.testing.assert_allclose(got, np.interp(QUERIES, xp, fp), rtol=1e-14)


@pytest.mark.parametrize("linker", usable_linkers())
def test_interp_of_one_data_point(linker: str) -> None:
    x = np.array([0.0, 1.0, 2.0, np.nan])
    got = _interp_function(linker)(x, np.array([1.0]), np.array([7.0]))
    np.testing.assert_array_equal(got, np.interp(x, [1.0], [7.0]))


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize(
    "fp",
    [[np.inf, 1.0, -np.inf], [-np.inf, np.inf, 0.0], [2.0, 2.0, np.nan], [np.inf, np.inf, 1.0]],
    ids=str,
)
def test_interp_of_infinite_and_nan_values(linker: str, fp: list[float]) -> None:
    xp = np.array([0.0, 1.0, 2.0])
    x = np.array([-0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5])
    with np.errstate(invalid="ignore"):
        expected = np.interp(x, xp, fp)
    got = _interp_function(linker)(x, xp, np.array(fp))
    np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("linker", usable_linkers())
def test_interp_matches_numpy_on_random_data(linker: str) -> None:
    fn = _interp_function(linker)
    rng = np.random.default_rng(3)
    for _ in range(40):
        xp = np.sort(rng.integers(0, 5, size=int(rng.integers(1, 7))).astype(float))
        fp = rng.normal(size=xp.size)
        x = np.concatenate([rng.uniform(-1.0, 6.0, size=6), xp])
        np.testing.assert_allclose(fn(x, xp, fp), np.interp(x, xp, fp), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("linker", usable_linkers())
def test_interpolate1d_keeps_the_order_of_points_at_one_coordinate(linker: str) -> None:
    # unsorted, with many points at each coordinate: an unstable sort would mix them up
    xp = np.random.default_rng(0).integers(0, 5, size=60).astype("float64")
    fp = np.arange(xp.size, dtype="float64")
    x_hat = pt.dvector("x_hat")
    f = interpolate1d(xp, fp, method="last", extrapolate=False)
    queries = np.arange(5.0)
    got = opweave.function([x_hat], f(x_hat), mode=opweave.Mode(linker=linker))(queries)
    # "last" at a data coordinate: the value of the first point given there
    np.testing.assert_array_equal(got, [fp[np.argmax(xp == q)] for q in queries])


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize(
    "xp", [[0.0, 1.0, 2.5, 4.0], [0.0, 1.0, 1.0], [0.0, 0.0, 2.0], [1.0]], ids=str
)
def test_interp_gradients_match_numpy(linker: str, xp: list[float]) -> None:
    xp_v = np.array(xp)
    x, fp = pt.dvector("x"), pt.dvector("fp")
    weights = np.array([0.5, -1.0, 2.0, 1.5, -0.25, 3.0, 0.75])
    cost = (interp(x, xp_v, fp) * weights).sum()
    fn = opweave.function([x, fp], opweave.grad(cost, [x, fp]), mode=opweave.Mode(linker=linker))
    # on, between, below and above the data points
    x_v = np.array([0.0, 0.3, 1.0, 1.7, 4.0, -1.0, 5.0])
    fp_v = np.linspace(-1.0, 2.0, xp_v.size) ** 2
    grad_x, grad_fp = fn(x_v, fp_v)
    # interp is linear in fp: its gradient is the interpolation of unit vectors
    unit = np.eye(xp_v.size)
    expected_fp = [np.sum(weights * np.interp(x_v, xp_v, unit[k])) for k in range(xp_v.size)]
    np.testing.assert_allclose(grad_fp, expected_fp, rtol=1e-12)
    # in x: the slope of the interval a point lies in (finite differences off the points)
    between = np.array([False, True, False, True, False, True, True])
    step = 1e-6
    slopes = (np.interp(x_v + step, xp_v, fp_v) - np.interp(x_v - step, xp_v, fp_v)) / (2 * step)
    np.testing.assert_allclose(grad_x[between], (weights * slopes)[between], rtol=1e-6, atol=1e-9)
    assert np.all(np.isfinite(grad_x))
