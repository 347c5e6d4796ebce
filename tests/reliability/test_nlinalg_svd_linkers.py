"""``svd`` and ``pinv`` on edge matrices, on every linker, against NumPy.

Each matrix of the grid (singular, signed zeros, +-inf, huge and tiny entries, rank
deficient, wide and tall, empty) is evaluated alone and stacked into batches, contiguous,
strided and transposed, in float32 and float64, by one compiled function per linker
(``py``, ``vm``, ``c``, ``cvm``). All linkers must give the same bits (NaN at the same
places, zeros of the same sign), the same dtype and shape, or the same error; and the
values must be NumPy's: NaN exactly where NumPy gives NaN, zeros of the same sign, finite
values within rounding. Singular vectors (defined up to sign) are compared by
``U diag(s) VT`` (within rounding, the sign of its zeros left aside); a matrix holding NaN
raises NumPy's ``LinAlgError`` everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from nlinalg_cases import DTYPES, LINKERS, close_to, empty_batches, layouts, run, same_bits, stacked

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.type import TensorType

NAN, INF = np.nan, np.inf

#: The 2 x 3 matrices of the grid.
MATRICES: dict[str, list[list[float]]] = {
    "general": [[0.3, -1.7, 2.0], [2.2, 0.9, -0.4]],
    "rank-one": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]],
    "zero": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0, -0.0], [-0.0, -0.0, -0.0]],
    "zero-row": [[1.0, 2.0, 0.5], [0.0, -0.0, 0.0]],
    "permutation": [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
    "negative": [[-2.0, 0.0, 0.0], [0.0, -3.0, 0.0]],
    "huge": [[1e30, 0.0, 1e29], [0.0, 1e30, 0.0]],
    "tiny": [[1e-30, 0.0, 0.0], [0.0, -1e-30, 1e-31]],
    "ill-conditioned": [[1.0, 1.0, 1.0], [1.0, 1.0 + 1e-7, 1.0]],
}

#: Matrices holding infinities (NumPy gives NaN singular values, no error).
INFINITE: dict[str, list[list[float]]] = {
    "inf": [[INF, 1.0, 0.0], [2.0, 3.0, 1.0]],
    "-inf": [[-INF, 1.0, 0.0], [2.0, 3.0, 1.0]],
}


def _functions(dtype: str, ndim: int) -> dict[str, Callable[..., list[Any]]]:
    x = TensorType(dtype, shape=(None,) * ndim)("x")
    outputs = [
        *nl.SVD(full_matrices=False).make_node(x).outputs,
        nl.SVD(compute_uv=False).make_node(x).outputs[0],
        nl.MatrixPinv().make_node(x).outputs[0],
    ]
    return {k: opweave.function([x], outputs, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}


def _numpy(a: np.ndarray) -> list[np.ndarray]:
    """The singular values computed with the thin vectors (``jobz='S'``) and alone
    (``jobz='N'``: the last bits, and the sign of zeros, may differ), and the
    pseudo-inverse."""
    with np.errstate(all="ignore"):
        thin = np.linalg.svd(a, full_matrices=False)[1]
        return [thin, np.linalg.svd(a, compute_uv=False), np.linalg.pinv(a)]


def _check(fns: dict[str, Callable[..., Any]], a: np.ndarray, where: str) -> None:
    want_s, want_s_only, want_pinv = _numpy(a)
    for layout in layouts(a):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            u, s, vt, s_only, pinv = got = run(f, layout)
            for r, g in zip(ref, got, strict=True):
                same_bits(r, g, f"{where} {k}")
            close_to(s_only, want_s_only, f"{where} {k} s alone", exact_dtype=True)
            close_to(s, want_s, f"{where} {k} s", exact_dtype=True)
            close_to(pinv, want_pinv, f"{where} {k} pinv", exact_dtype=True)
            if np.isfinite(a).all():
                with np.errstate(all="ignore"):
                    rebuilt = (u * s[..., None, :]) @ vt
                rtol = 2e-5 if a.dtype == np.float32 else 1e-9
                scale = float(np.max(np.abs(a), initial=0.0))
                np.testing.assert_allclose(rebuilt, a, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES) + list(INFINITE))
def test_one_matrix_and_its_transpose(name: str, dtype: str) -> None:
    fns = _functions(dtype, 2)
    a = np.array({**MATRICES, **INFINITE}[name], dtype=dtype)
    _check(fns, a, f"{name} {dtype}")
    _check(fns, np.ascontiguousarray(a.T), f"{name}.T {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_batch_of_every_matrix(dtype: str) -> None:
    for b in stacked(MATRICES, dtype, (2, len(MATRICES) // 2)):
        _check(_functions(dtype, b.ndim), b, f"batch {b.shape} {dtype}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_matrices(dtype: str) -> None:
    fns = _functions(dtype, 3)
    for a in empty_batches(dtype):
        u, s, vt = np.linalg.svd(a, full_matrices=False)
        for k in LINKERS:
            got = fns[k](a)
            for g, w in zip(got, [u, s, vt, s, np.linalg.pinv(a)], strict=True):
                assert g.shape == w.shape and g.dtype == np.dtype(dtype), (a.shape, k)
    x = TensorType(dtype, shape=(None, None))("x")
    outs = list(nl.SVD(full_matrices=True).make_node(x).outputs)
    for k in LINKERS:
        f = opweave.function([x], outs, mode=Mode(linker=k, optimizer=None))
        for empty in ((0, 3), (2, 0)):
            z = np.zeros(empty, dtype=dtype)
            for g, w in zip(f(z), np.linalg.svd(z), strict=True):
                same_bits(np.asarray(w, dtype=dtype), g, f"{empty} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", [(0, 0), (1, 2)])
def test_nan_raises_everywhere(where: tuple[int, int], dtype: str) -> None:
    batch = np.array([MATRICES["general"], MATRICES["general"]], dtype=dtype)
    batch[(1, *where)] = NAN
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        np.linalg.svd(batch)
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        np.linalg.pinv(batch)
    x = TensorType(dtype, shape=(None, None, None))("x")
    for op in (nl.SVD(), nl.SVD(compute_uv=False), nl.MatrixPinv()):
        outs = list(op.make_node(x).outputs)
        for k in LINKERS:
            f = opweave.function([x], outs, mode=Mode(linker=k, optimizer=None))
            with pytest.raises(np.linalg.LinAlgError, match=r"^SVD did not converge"):
                f(batch)


#: Symmetric 3 x 3 matrices for ``pinv(hermitian=True)`` (the lower triangle is read).
SYMMETRIC: dict[str, list[list[float]]] = {
    "identity": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "repeated": [[2.0, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, 2.0]],
    "zeros": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0, -0.0], [-0.0, -0.0, -0.0], [-0.0, -0.0, -0.0]],
    "rank-one": [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]],
    "general": [[0.3, -1.7, 2.0], [-1.7, 0.9, 0.1], [2.0, 0.1, -4.0]],
    "huge": [[1e30, 1e29, 0.0], [1e29, 1e30, 0.0], [0.0, 0.0, 1.0]],
    "tiny": [[1e-30, 0.0, 0.0], [0.0, -1e-30, 0.0], [0.0, 0.0, 1.0]],
}

#: Symmetric matrices holding NaN or infinities: the linkers agree with one another.
NONFINITE_SYMMETRIC: dict[str, list[list[float]]] = {
    "nan": [[NAN, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    "nan-middle": [[1.0, 0.0, 0.0], [0.0, NAN, 0.0], [0.0, 0.0, 1.0]],
    "inf": [[INF, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
}


@pytest.mark.parametrize("dtype", DTYPES)
def test_hermitian_pinv_of_every_symmetric_matrix(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    out = nl.MatrixPinv(hermitian=True).make_node(x).outputs[0]
    fns = {k: opweave.function([x], out, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}
    a = np.array(list(SYMMETRIC.values()), dtype=dtype)
    want = np.linalg.pinv(a, hermitian=True)
    for layout in layouts(a):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            got = run(f, layout)
            same_bits(ref, got, f"{dtype} {k}")
            close_to(got, want, f"{dtype} {k}", exact_dtype=True)
    b = np.array(list(NONFINITE_SYMMETRIC.values()), dtype=dtype)
    for layout in layouts(b):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            same_bits(ref, run(f, layout), f"{dtype} {k} non-finite")
