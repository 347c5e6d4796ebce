"""``lstsq`` on edge problems, on every linker, against NumPy.

Each matrix of the grid (full rank, rank deficient, signed zeros, +-inf, huge and tiny
entries, wide and tall, empty) is solved against a vector and a matrix of right-hand
sides, contiguous, strided and Fortran-ordered, in float32 and float64, by one compiled
function per linker (``py``, ``vm``, ``c``, ``cvm``). All linkers must give the same bits
(zeros of the same sign), dtypes and shapes, or the same error; and the values must be
NumPy's: NaN exactly where NumPy gives NaN, finite values within rounding, the same rank
and the same (possibly empty) residuals.
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
INF = np.inf

#: The 3 x 2 matrices ``a`` of the grid.
MATRICES: dict[str, list[list[float]]] = {
    "general": [[0.3, -1.7], [2.2, 0.9], [-0.4, 1.1]],
    "rank-one": [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]],
    "zero": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0]],
    "zero-column": [[1.0, 0.0], [2.0, -0.0], [0.5, 0.0]],
    "inf": [[INF, 1.0], [2.0, 3.0], [0.0, 1.0]],
    "huge": [[1e30, 0.0], [0.0, 1e30], [1e29, 0.0]],
    "tiny": [[1e-30, 0.0], [0.0, -1e-30], [0.0, 1e-31]],
    "exact": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]],
}

#: Right-hand sides for the 3 rows.
RHS: dict[str, list[float]] = {
    "ones": [1.0, 1.0, 1.0],
    "in-range": [1.0, 2.0, 3.0],
    "zeros": [-0.0, 0.0, -0.0],
}


def _functions(dtype: str, b_ndim: int) -> dict[str, Callable[..., list[Any]]]:
    a = TensorType(dtype, shape=(None, None))("a")
    b = TensorType(dtype, shape=(None,) * b_ndim)("b")
    outs = list(nl.Lstsq().make_node(a, b).outputs)
    mode = {k: Mode(linker=k, optimizer=None) for k in LINKERS}
    return {k: opweave.function([a, b], outs, mode=mode[k]) for k in LINKERS}


def _outcome(f: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return "ok", f(*args)
        except Exception as exc:
            return "error", (type(exc), str(exc).split("\n")[0])


def _same(ref: tuple[str, Any], got: tuple[str, Any], where: str) -> None:
    assert ref[0] == got[0], f"{where}: {ref} != {got}"
    if ref[0] == "error":
        assert ref[1] == got[1], where
        return
    for r, g in zip(ref[1], got[1], strict=True):
        assert r.dtype == g.dtype and r.shape == g.shape, where
        np.testing.assert_array_equal(r, g, err_msg=where)
        numbers = ~np.isnan(r)
        np.testing.assert_array_equal(np.signbit(r[numbers]), np.signbit(g[numbers]), where)


def _like_numpy(got: list[np.ndarray], want: tuple[Any, ...], where: str) -> None:
    x, residuals, rank, s = got
    assert int(rank) == int(want[2]), where
    for g, w in ((x, want[0]), (residuals, want[1]), (s, want[3])):
        w = np.asarray(w, dtype=g.dtype)
        assert g.shape == w.shape, where
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=where)
        finite = np.isfinite(w)
        rtol = 1e-4 if g.dtype == np.float32 else 1e-9
        scale = float(np.max(np.abs(w[finite]), initial=1.0))
        np.testing.assert_allclose(
            g[finite], w[finite], rtol=rtol, atol=rtol * scale, err_msg=where
        )


def _layouts(a: np.ndarray) -> list[np.ndarray]:
    wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
    wide[..., ::2] = a
    return [a, wide[..., ::2], np.asfortranarray(a)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_every_problem(b_ndim: int, name: str, dtype: str) -> None:
    fns = _functions(dtype, b_ndim)
    a = np.array(MATRICES[name], dtype=dtype)
    rhs = np.array(list(RHS.values()), dtype=dtype).T
    for b in [rhs[:, i] for i in range(rhs.shape[1])] if b_ndim == 1 else [rhs]:
        want = _outcome(np.linalg.lstsq, a.astype(np.float64), b.astype(np.float64))
        for la in _layouts(a):
            ref = _outcome(fns["py"], la, b)
            assert ref[0] == want[0], (ref, want)
            if ref[0] == "error":
                assert ref[1] == want[1]
            else:
                _like_numpy(ref[1], want[1], f"{name} {dtype}")
            for k, f in fns.items():
                _same(ref, _outcome(f, la, b), f"{name} {dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_wide_and_empty_problems(dtype: str) -> None:
    fns = _functions(dtype, 2)
    for a_shape, b_shape in (
        ((2, 3), (2, 2)),
        ((3, 0), (3, 2)),
        ((0, 2), (0, 1)),
        ((3, 2), (3, 0)),
    ):
        a = np.arange(np.prod(a_shape), dtype=dtype).reshape(a_shape) / 7 + np.eye(
            *a_shape, dtype=dtype
        )
        b = np.ones(b_shape, dtype=dtype)
        want = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64))
        ref = _outcome(fns["py"], a, b)
        _like_numpy(ref[1], want, f"{a_shape} {dtype}")
        for k, f in fns.items():
            _same(ref, _outcome(f, a, b), f"{a_shape} {dtype} {k}")
