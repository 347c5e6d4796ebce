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

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from nlinalg_cases import DTYPES, LINKERS, TALL, close_to, layouts, outcome, same_outcome

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.type import TensorType

#: The 3 x 2 matrices ``a`` of the grid.
MATRICES: dict[str, list[list[float]]] = {
    **TALL,
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


def _like_numpy(got: list[np.ndarray], want: tuple[Any, ...], where: str) -> None:
    x, residuals, rank, s = got
    assert int(rank) == int(want[2]), where
    for g, w in ((x, want[0]), (residuals, want[1]), (s, want[3])):
        close_to(g, w, where, rtol32=1e-4, floor=1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_every_problem(b_ndim: int, name: str, dtype: str) -> None:
    fns = _functions(dtype, b_ndim)
    a = np.array(MATRICES[name], dtype=dtype)
    rhs = np.array(list(RHS.values()), dtype=dtype).T
    for b in [rhs[:, i] for i in range(rhs.shape[1])] if b_ndim == 1 else [rhs]:
        want = outcome(np.linalg.lstsq, a.astype(np.float64), b.astype(np.float64))
        for la in layouts(a):
            ref = outcome(fns["py"], la, b)
            assert ref[0] == want[0], (ref, want)
            if ref[0] == "error":
                assert ref[1] == want[1]
            else:
                _like_numpy(ref[1], want[1], f"{name} {dtype}")
            for k, f in fns.items():
                same_outcome(ref, outcome(f, la, b), f"{name} {dtype} {k}", signs=True)


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
        ref = outcome(fns["py"], a, b)
        _like_numpy(ref[1], want, f"{a_shape} {dtype}")
        for k, f in fns.items():
            same_outcome(ref, outcome(f, a, b), f"{a_shape} {dtype} {k}", signs=True)
