"""The ``jax`` lowerings of ``j0``, ``j1``, ``gammaincinv`` and the shape derivatives of
``gammainc``/``gammaincc`` against the ``py`` linker, edges included.

XLA on the CPU flushes subnormal numbers to zero, so no argument or value here is
subnormal. Near the zeros of ``j0``/``j1`` only the absolute error is small: the relative
tolerance below covers the arguments used.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.scalar.shape_gradients import gammainc_der, gammaincc_der
from opweave.tensor.elemwise import Elemwise

from .conftest import compile_both

#: Relative tolerance against the ``py`` kernels in float64.
RTOL = 2e-12
#: ``gammaincinv(a, y)`` for a small shape ``a`` multiplies the relative error of
#: ``gammainc`` by ``1 / a`` (``x ~ (y gamma(a + 1)) ** (1 / a)``): 3e-12 at ``a = 1e-3``.
RTOL_INVERSE = 5e-12

BESSEL_X = np.concatenate(
    [
        np.linspace(-40.0, 40.0, 161),
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-300, 1e-10, 2.0, 2.0000001],
        [24.9999, 25.0, 25.0001, -25.0001, 1e3, 1e10, 1e300, -1e300, 1.7e308],
    ]
)

SHAPES = [1e-300, 1e-20, 1e-3, 0.1, 0.5, 1.0, 2.5, 30.0, 300.0, 3e3, 9999.0, 1e4, 1e5]
SHAPES += [1e6, 1e8, 0.0, np.inf, -1.0, np.nan]
PROBABILITIES = [2.3e-308, 1e-300, 1e-100, 1e-10, 0.01, 0.3, 0.5, 0.9, 0.999999, 1 - 1e-16]
PROBABILITIES += [0.0, 1.0, -0.1, 1.5, np.nan]


def _grid(first: list[float], second: list[float]) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.meshgrid(np.array(first), np.array(second))
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("name", ["j0", "j1"])
def test_bessel_functions_of_integer_order(same_as_py: Any, name: str) -> None:
    x = pt.dvector("x")
    got = same_as_py([x], [getattr(pt, name)(x)], [BESSEL_X], rtol=RTOL)[0]
    assert np.isnan(got[np.isinf(BESSEL_X) | np.isnan(BESSEL_X)]).all()


def test_gammaincinv_on_a_grid_with_edges(same_as_py: Any) -> None:
    a, y = pt.dvector("a"), pt.dvector("y")
    shapes, probabilities = _grid(SHAPES, PROBABILITIES)
    got = same_as_py([a, y], [pt.gammaincinv(a, y)], [shapes, probabilities], rtol=RTOL_INVERSE)[0]
    assert np.isnan(got[(probabilities < 0) | (probabilities > 1)]).all()
    inside = (shapes >= 0) & ((probabilities == 0) | (probabilities == 1))
    assert (got[inside] == np.where(probabilities[inside] == 0, 0.0, np.inf)).all()


@pytest.mark.parametrize("der", [gammainc_der, gammaincc_der], ids=["lower", "upper"])
def test_gammainc_derivatives_in_the_shape(same_as_py: Any, der: Any) -> None:
    k, x = pt.dvector("k"), pt.dvector("x")
    shapes = [0.0, 1e-20, 4.5e-5, 0.1, 1.0, 2.5, 20.0, 300.0, 1e3, np.inf, -1.0, np.nan]
    args = [0.0, 1e-300, 1e-5, 0.5, 1.0, 3.0, 30.0, 400.0, 1e4, np.inf, -1.0, np.nan]
    ks, xs = _grid(shapes, args)
    got = same_as_py([k, x], [Elemwise(der)(k, x)], [ks, xs], rtol=RTOL)[0]
    assert (got[(xs == 0) & (ks >= 0) & np.isfinite(ks)] == 0).all()


def test_gradient_of_gammainc_in_the_shape(same_as_py: Any) -> None:
    k, x = pt.dvector("k"), pt.dvector("x")
    value: Any = pt.gammainc(k, x)
    cost = value.sum()
    same_as_py(
        [k, x],
        [opweave.grad(cost, k)],
        [np.array([0.5, 2.0, 9.0]), np.array([0.3, 2.0, 7.0])],
        rtol=RTOL,
    )


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8"])
@pytest.mark.parametrize("name", ["j0", "j1"])
def test_output_dtype_follows_the_py_kernel(dtype: str, name: str) -> None:
    x = pt.vector("x", dtype=dtype)
    f, g = compile_both([x], [getattr(pt, name)(x)])
    values = np.array([-7, -2, 0, 1, 3, 30, 100], dtype=dtype)
    got, want = f(values)[0], g(values)[0]
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else RTOL)


def test_float32_gammaincinv_rounds_the_float64_value() -> None:
    a, y = pt.fvector("a"), pt.fvector("y")
    f, g = compile_both([a, y], [pt.gammaincinv(a, y)])
    shapes = np.array([0.5, 2.0, 50.0, 1e5], dtype="float32")
    probabilities = np.array([1e-30, 0.25, 0.5, 0.99], dtype="float32")
    got, want = f(shapes, probabilities)[0], g(shapes, probabilities)[0]
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
