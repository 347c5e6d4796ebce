"""``qr`` on edge matrices, in every mode, on every linker, against NumPy.

Each matrix of the grid (singular, signed zeros, NaN, +-inf, huge and tiny entries, wide
and tall, empty) is evaluated alone and stacked into batches, contiguous, strided and
Fortran-ordered, in float32 and float64, by one compiled function per linker (``py``,
``vm``, ``c``, ``cvm``). All linkers must give the same bits (NaN at the same places, zeros
of the same sign), dtype and shape; and the values must be NumPy's: NaN exactly where
NumPy gives NaN, finite values within rounding.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.type import TensorType

LINKERS = ("py", "vm", "c", "cvm")
DTYPES = ("float32", "float64")
QR_MODES = ("full", "economic", "r", "raw")
NAN, INF = np.nan, np.inf

#: The 3 x 2 matrices of the grid.
MATRICES: dict[str, list[list[float]]] = {
    "general": [[0.3, -1.7], [2.2, 0.9], [-0.4, 1.1]],
    "rank-one": [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]],
    "zero": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0]],
    "zero-column": [[1.0, 0.0], [2.0, -0.0], [0.5, 0.0]],
    "permutation": [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
    "nan": [[NAN, 1.0], [2.0, 3.0], [0.0, 1.0]],
    "inf": [[INF, 1.0], [2.0, 3.0], [0.0, 1.0]],
    "-inf": [[1.0, -INF], [2.0, 3.0], [0.0, 1.0]],
    "huge": [[1e30, 0.0], [0.0, 1e30], [1e29, 0.0]],
    "tiny": [[1e-30, 0.0], [0.0, -1e-30], [0.0, 1e-31]],
}


def _functions(dtype: str, ndim: int) -> dict[str, Callable[..., list[Any]]]:
    x = TensorType(dtype, shape=(None,) * ndim)("x")
    outs = [o for mode in QR_MODES for o in nl.QR(mode).make_node(x).outputs]
    return {k: opweave.function([x], outs, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}


def _numpy(a: np.ndarray) -> list[np.ndarray]:
    """NumPy's results in the Op's layout, every mode."""
    k = min(a.shape[-2:])
    with np.errstate(all="ignore"):
        q_full, r_full = np.linalg.qr(a, mode="complete")
        q, r = np.linalg.qr(a, mode="reduced")
        padded = np.zeros(a.shape, dtype=a.dtype)
        padded[..., :k, :] = np.linalg.qr(a, mode="r")
        h, tau = np.linalg.qr(a, mode="raw")
    h = np.swapaxes(h, -1, -2)
    return [q_full, r_full, q, r, padded, h, tau, np.triu(h[..., :k, :])]


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
    wide[..., ::2] = a
    fortran = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)
    return [a, wide[..., ::2], fortran]


def _same_bits(ref: np.ndarray, got: np.ndarray, where: str) -> None:
    """The same values, NaN at the same places and every other value of the same sign
    (zeros included); the sign of a NaN is not a value (x86 picks it by operand order)."""
    assert got.dtype == ref.dtype and got.shape == ref.shape, where
    np.testing.assert_array_equal(got, ref, err_msg=where)
    numbers = ~np.isnan(ref)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(ref[numbers]), where)


def _like_numpy(got: np.ndarray, want: np.ndarray, where: str) -> None:
    want = np.asarray(want, dtype=got.dtype)
    assert got.shape == want.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    finite = np.isfinite(want)
    rtol = 2e-5 if got.dtype == np.float32 else 1e-9
    scale = float(np.max(np.abs(want[finite]), initial=0.0))
    np.testing.assert_allclose(
        got[finite], want[finite], rtol=rtol, atol=rtol * scale, err_msg=where
    )


def _run(f: Callable[..., Any], a: np.ndarray) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(a)


def _check(fns: dict[str, Callable[..., Any]], a: np.ndarray, where: str) -> None:
    want = _numpy(a.astype(np.float64))
    for layout in _layouts(a):
        ref = _run(fns["py"], layout)
        for k, f in fns.items():
            got = _run(f, layout)
            for i, (r, g, w) in enumerate(zip(ref, got, want, strict=True)):
                _same_bits(r, g, f"{where} {k} output {i}")
                _like_numpy(g, w, f"{where} {k} output {i}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES))
def test_one_matrix_and_its_transpose(name: str, dtype: str) -> None:
    fns = _functions(dtype, 2)
    a = np.array(MATRICES[name], dtype=dtype)
    _check(fns, a, f"{name} {dtype}")
    _check(fns, np.ascontiguousarray(a.T), f"{name}.T {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_of_every_matrix(dtype: str) -> None:
    a = np.array(list(MATRICES.values()), dtype=dtype)
    for b in (a, a.reshape(1, len(MATRICES), 3, 2), np.zeros((0, 3, 2), dtype=dtype)):
        _check(_functions(dtype, b.ndim), b, f"batch {b.shape} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_matrices(dtype: str) -> None:
    fns = _functions(dtype, 3)
    for shape in ((2, 0, 3), (2, 3, 0), (1, 0, 0)):
        a = np.zeros(shape, dtype=dtype)
        want = _numpy(a.astype(np.float64))
        ref = fns["py"](a)
        for k in LINKERS:
            for i, (r, g, w) in enumerate(zip(ref, fns[k](a), want, strict=True)):
                _same_bits(r, g, f"{shape} {k} output {i}")
                if i != 4:  # "r" is padded to (m, n); NumPy gives (k, n)
                    _same_bits(np.asarray(w, dtype=dtype), g, f"{shape} {k} output {i}")
