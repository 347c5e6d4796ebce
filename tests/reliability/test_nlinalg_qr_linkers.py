"""``qr`` on edge matrices, in every mode, on every linker, against NumPy.

Each matrix of the grid (singular, signed zeros, NaN, +-inf, huge and tiny entries, wide
and tall, empty) is evaluated alone and stacked into batches, contiguous, strided and
Fortran-ordered, in float32 and float64, by one compiled function per linker (``py``,
``vm``, ``c``, ``cvm``). All linkers must give the same bits (NaN at the same places, zeros
of the same sign), dtype and shape; and the values must be NumPy's: NaN exactly where
NumPy gives NaN, finite values within rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from nlinalg_cases import (
    DTYPES,
    INF,
    LINKERS,
    NAN,
    TALL,
    close_to,
    empty_batches,
    layouts,
    run,
    same_bits,
    stacked,
)

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.type import TensorType

QR_MODES = ("full", "economic", "r", "raw")

#: The 3 x 2 matrices of the grid.
MATRICES: dict[str, list[list[float]]] = {
    **TALL,
    "permutation": [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]],
    "nan": [[NAN, 1.0], [2.0, 3.0], [0.0, 1.0]],
    "-inf": [[1.0, -INF], [2.0, 3.0], [0.0, 1.0]],
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


def _check(fns: dict[str, Callable[..., Any]], a: np.ndarray, where: str) -> None:
    want = _numpy(a.astype(np.float64))
    for layout in layouts(a):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            got = run(f, layout)
            for i, (r, g, w) in enumerate(zip(ref, got, want, strict=True)):
                same_bits(r, g, f"{where} {k} output {i}")
                close_to(g, w, f"{where} {k} output {i}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES))
def test_one_matrix_and_its_transpose(name: str, dtype: str) -> None:
    fns = _functions(dtype, 2)
    a = np.array(MATRICES[name], dtype=dtype)
    _check(fns, a, f"{name} {dtype}")
    _check(fns, np.ascontiguousarray(a.T), f"{name}.T {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_of_every_matrix(dtype: str) -> None:
    for b in stacked(MATRICES, dtype, (1, len(MATRICES))):
        _check(_functions(dtype, b.ndim), b, f"batch {b.shape} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_matrices(dtype: str) -> None:
    fns = _functions(dtype, 3)
    for a in empty_batches(dtype):
        want = _numpy(a.astype(np.float64))
        ref = fns["py"](a)
        for k in LINKERS:
            for i, (r, g, w) in enumerate(zip(ref, fns[k](a), want, strict=True)):
                same_bits(r, g, f"{a.shape} {k} output {i}")
                if i != 4:  # "r" is padded to (m, n); NumPy gives (k, n)
                    same_bits(np.asarray(w, dtype=dtype), g, f"{a.shape} {k} output {i}")
