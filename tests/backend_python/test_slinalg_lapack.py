"""The Python kernels of ``opweave.tensor.slinalg`` factor and solve with SciPy's LAPACK
(``?potrf('L')``, ``?gesv``, matrix by matrix) when SciPy is installed, the build the C
backend calls, and with ``numpy.linalg`` when it is not or for complex values."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import opweave
from opweave.compile import Mode
from opweave.tensor import slinalg as sl
from opweave.tensor.type import TensorType
from opweave_python.impls import lapack as py_lapack

scipy_lapack = pytest.importorskip("scipy.linalg.lapack")

RNG = np.random.default_rng(7)
PY = Mode(linker="py", optimizer=None)


class _Failed(Exception):
    pass


def _gesv(m: np.ndarray, b: np.ndarray) -> np.ndarray:
    _, _, x, info = scipy_lapack.get_lapack_funcs("gesv", dtype=m.dtype)(m, b)
    if info > 0:
        raise _Failed
    return np.asarray(x)


def _potrf(m: np.ndarray) -> np.ndarray:
    c, info = scipy_lapack.get_lapack_funcs("potrf", dtype=m.dtype)(m, lower=1, clean=1)
    if info > 0:
        raise _Failed
    return np.asarray(c)


def _mirror(a: np.ndarray, lower: bool) -> np.ndarray:
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    full: np.ndarray = (np.tril(a) if lower else np.triu(a)) + part.T
    return full


def _unit(t: np.ndarray) -> np.ndarray:
    np.fill_diagonal(t, 1)
    return t


#: id -> (Op, the reference for one matrix ``a`` and matrix ``b`` with SciPy's routines).
ROUTES: dict[str, tuple[Any, Any]] = {
    "gen": (sl.Solve(assume_a="gen", b_ndim=2), _gesv),
    "base": (sl.SolveBase(b_ndim=2), _gesv),
    "sym-upper": (
        sl.Solve(assume_a="sym", lower=False, b_ndim=2),
        lambda a, b: _gesv(_mirror(a, False), b),
    ),
    "pos-lower": (
        sl.Solve(assume_a="pos", lower=True, b_ndim=2),
        lambda a, b: (lambda f: _gesv(np.triu(f.T), _gesv(np.tril(f), b)))(
            _potrf(_mirror(a, True))
        ),
    ),
    "tridiagonal": (
        sl.Solve(assume_a="tridiagonal", b_ndim=2),
        lambda a, b: _gesv(np.triu(np.tril(a, 1), -1), b),
    ),
    "triangular-unit": (
        sl.SolveTriangular(lower=True, unit_diagonal=True, b_ndim=2),
        lambda a, b: _gesv(_unit(np.tril(a)), b),
    ),
    "cho_solve-upper": (
        sl.CholeskySolve(lower=False, b_ndim=2),
        lambda c, b: _gesv(np.triu(c), _gesv(np.tril(c.T), b)),
    ),
}


def _batch_reference(route: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x = np.empty(b.shape, dtype=b.dtype)
    for i in range(a.shape[0]):
        try:
            x[i] = route(a[i], b[i])
        except _Failed:
            x[i] = np.nan
    return x


def _same_bits(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype.kind == "c":
        _same_bits(got.real, expected.real)
        _same_bits(got.imag, expected.imag)
        return
    np.testing.assert_array_equal(got, expected)
    numbers = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(expected[numbers]))


def _spd(n: int, batch: int) -> np.ndarray:
    x = RNG.normal(size=(batch, n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def _function(op: Any, dtype: str, b_dtype: str | None = None) -> Any:
    a = TensorType(dtype, shape=(None, None, None))("a")
    b = TensorType(b_dtype or dtype, shape=(None, None, None))("b")
    return opweave.function([a, b], op(a, b), mode=PY)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("route", list(ROUTES))
def test_solvers_equal_scipys_lapack_bit_for_bit(route: str, dtype: str) -> None:
    op, reference = ROUTES[route]
    a = _spd(6, 4)
    if route.startswith("cho_solve"):
        a = np.swapaxes(np.linalg.cholesky(a), -1, -2)
    a[2] = 0.0  # exactly singular (not positive definite): NaN for that matrix only
    a, b = a.astype(dtype), RNG.normal(size=(4, 6, 3)).astype(dtype)
    got = _function(op, dtype)(a, b)
    expected = _batch_reference(reference, a, b)
    failing = route != "triangular-unit"  # a unit triangle is never singular
    assert np.isnan(expected[2]).all() == failing
    assert np.isfinite(np.delete(expected, 2, 0)).all()
    _same_bits(got, expected)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_equals_potrf_and_keeps_its_errors(dtype: str, lower: bool) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    a = _spd(5, 3).astype(dtype)
    a[1, 4, 4] = -1.0  # not positive definite
    f = opweave.function([x], sl.Cholesky(lower=lower)(x), mode=PY)
    got = f(a)
    for i in (0, 2):
        factor = _potrf(a[i] if lower else a[i].T)
        _same_bits(got[i], factor if lower else factor.T)
    assert np.isnan(got[1]).all()
    raising = opweave.function([x], sl.Cholesky(lower=lower, on_error="raise")(x), mode=PY)
    with pytest.raises(
        np.linalg.LinAlgError, match=r"at batch index \(1,\) is not positive definite"
    ):
        raising(a)


def test_float16_and_integer_inputs_are_solved_in_float32_with_sgesv() -> None:
    op, reference = ROUTES["gen"]
    a = (_spd(4, 2) * 8).astype(np.float16)
    b = RNG.integers(-5, 5, size=(2, 4, 2)).astype(np.int16)
    got = _function(op, "float16", "int16")(a, b)
    assert got.dtype == np.float32
    _same_bits(got, _batch_reference(reference, a.astype("float32"), b.astype("float32")))


def test_complex_values_use_numpy() -> None:
    op = sl.Solve(assume_a="gen", b_ndim=2)
    a = _spd(3, 2) + 1j * RNG.normal(size=(2, 3, 3))
    b = RNG.normal(size=(2, 3, 1)) + 0j
    assert py_lapack.routines("complex128") is py_lapack.NUMPY
    _same_bits(_function(op, "complex128")(a, b), np.linalg.solve(a, b))


def test_the_routines_come_from_scipy_for_real_floats() -> None:
    for dtype in ("float32", "float64"):
        found = py_lapack.routines(dtype)
        assert found is not py_lapack.NUMPY and not found.batched
    m = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(np.linalg.LinAlgError, match=r"^Singular matrix$"):
        py_lapack.routines("float64").solve(m, np.ones((2, 1)))
    with pytest.raises(np.linalg.LinAlgError, match=r"^Matrix is not positive definite$"):
        py_lapack.routines("float64").cholesky(-np.eye(2))


@pytest.fixture
def no_scipy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``scipy.linalg.lapack`` fails to import (as without SciPy) while the test runs."""
    py_lapack.scipy_lapack.cache_clear()
    monkeypatch.setitem(sys.modules, "scipy.linalg.lapack", None)
    yield
    monkeypatch.undo()
    py_lapack.scipy_lapack.cache_clear()


@pytest.mark.usefixtures("no_scipy")
def test_without_scipy_the_kernels_use_numpy() -> None:
    assert py_lapack.scipy_lapack() is None
    assert py_lapack.routines("float64") is py_lapack.NUMPY
    a, b = _spd(5, 3), RNG.normal(size=(3, 5, 2))
    a[1] = 0.0
    got = _function(sl.Solve(assume_a="gen", b_ndim=2), "float64")(a, b)
    expected = np.stack([np.linalg.solve(a[i], b[i]) for i in (0, 2)])
    _same_bits(got[[0, 2]], expected)
    assert np.isnan(got[1]).all()
    x = TensorType("float64", shape=(None, None, None))("x")
    raising = opweave.function([x], sl.Cholesky(on_error="raise")(x), mode=PY)
    with pytest.raises(np.linalg.LinAlgError, match=r"at batch index \(1,\) is not positive"):
        raising(a)
