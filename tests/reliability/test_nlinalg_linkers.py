"""``det``, ``slogdet``, ``inv`` and ``eigh`` on edge matrices, on every linker, against NumPy.

Each matrix of the grid (singular, with NaN, +-inf, signed zeros, huge and tiny entries,
permutations, empty) is evaluated alone and stacked into batches, contiguous, strided and
transposed, in float32 and float64, by one compiled function per linker (``py``, ``vm``,
``c``, ``cvm``). All linkers must give the same bits (NaN at the same places, zeros of the
same sign), the same dtype and shape, or the same error; and the values must be NumPy's:
NaN exactly where NumPy gives NaN, infinities and zeros of the same sign, finite values
within rounding (NumPy's own LAPACK build may round the last bits differently). For
``eigh`` the eigenvalues are compared so, the eigenvectors (defined up to sign) by their NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from nlinalg_cases import DTYPES, INF, LINKERS, NAN, layouts, run, same_bits
from nlinalg_cases import SYMMETRIC as FINITE_SYMMETRIC

import opweave
from opweave.compile import Mode
from opweave.tensor import nlinalg as nl
from opweave.tensor.type import TensorType

#: The 2 x 2 matrices of the grid.
MATRICES: dict[str, list[list[float]]] = {
    "identity": [[1.0, 0.0], [0.0, 1.0]],
    "swap": [[0.0, 1.0], [1.0, 0.0]],
    "negative-diagonal": [[-2.0, 0.0], [0.0, -3.0]],
    "one-negative": [[-2.0, 1.0], [0.5, 3.0]],
    "general": [[0.3, -1.7], [2.2, 0.9]],
    "singular": [[1.0, 2.0], [2.0, 4.0]],
    "zero": [[0.0, 0.0], [0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0], [-0.0, -0.0]],
    "zero-row": [[1.0, 2.0], [0.0, -0.0]],
    "nan": [[NAN, 1.0], [2.0, 3.0]],
    "all-nan": [[NAN, NAN], [NAN, NAN]],
    "inf": [[INF, 1.0], [2.0, 3.0]],
    "-inf": [[-INF, 1.0], [2.0, 3.0]],
    "inf-inf": [[INF, INF], [INF, INF]],
    "huge": [[1e30, 0.0], [0.0, 1e30]],
    "tiny": [[1e-30, 0.0], [0.0, -1e-30]],
    "ill-conditioned": [[1.0, 1.0], [1.0, 1.0 + 1e-7]],
}

#: Matrices NumPy inverts without an error.
INVERTIBLE = [k for k in MATRICES if k not in ("singular", "zero", "negative-zeros", "zero-row")]


def _outs(op: Any, x: Any) -> list[Any]:
    """The outputs of ``op``'s node on ``x``."""
    return list(op.make_node(x).outputs)


def _functions(dtype: str, ndim: int) -> dict[str, Callable[..., list[Any]]]:
    x = TensorType(dtype, shape=(None,) * ndim)("x")
    outputs = [_outs(nl.Det(), x)[0], *_outs(nl.SLogDet(), x)]
    return {k: opweave.function([x], outputs, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}


def _inverse(dtype: str, ndim: int) -> dict[str, Callable[..., Any]]:
    x = TensorType(dtype, shape=(None,) * ndim)("x")
    out = _outs(nl.MatrixInverse(), x)[0]
    return {k: opweave.function([x], out, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}


def _like_numpy(got: np.ndarray, want: np.ndarray, where: str) -> None:
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=where)
    rtol = 1e-5 if got.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=0, err_msg=where)


def _numpy_det(a: np.ndarray) -> list[np.ndarray]:
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        sign, logdet = np.linalg.slogdet(a)
        return [np.asarray(np.linalg.det(a)), np.asarray(sign), np.asarray(logdet)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MATRICES))
def test_det_and_slogdet_of_one_matrix(name: str, dtype: str) -> None:
    fns = _functions(dtype, 2)
    a = np.array(MATRICES[name], dtype=dtype)
    want = _numpy_det(a)
    for layout in layouts(a):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            got = run(f, layout)
            for r, g, w in zip(ref, got, want, strict=True):
                same_bits(r, g, f"{name} {dtype} {k}", nan_signs=True)
                _like_numpy(g, w, f"{name} {dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_and_slogdet_of_a_batch_of_every_matrix(dtype: str) -> None:
    a = np.array(list(MATRICES.values()), dtype=dtype)
    batches = [a, a.reshape(len(MATRICES), 1, 2, 2), np.zeros((0, 2, 2), dtype=dtype)]
    for b in batches:
        fns = _functions(dtype, b.ndim)
        want = _numpy_det(b)
        for layout in layouts(b):
            ref = run(fns["py"], layout)
            for k, f in fns.items():
                for r, g, w in zip(ref, run(f, layout), want, strict=True):
                    same_bits(r, g, f"batch {b.shape} {dtype} {k}", nan_signs=True)
                    _like_numpy(g, w, f"batch {b.shape} {dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_empty_matrices(dtype: str) -> None:
    for shape in ((0, 0), (3, 0, 0)):
        a = np.zeros(shape, dtype=dtype)
        fns, inv = _functions(dtype, len(shape)), _inverse(dtype, len(shape))
        for k in LINKERS:
            for g, w in zip(fns[k](a), _numpy_det(a), strict=True):
                same_bits(np.asarray(w, dtype=dtype), g, f"{shape} {k}", nan_signs=True)
            result = inv[k](a)
            assert result.shape == shape and result.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inverse_of_every_invertible_matrix(dtype: str) -> None:
    a = np.array([MATRICES[k] for k in INVERTIBLE], dtype=dtype)
    inv = _inverse(dtype, 3)
    with np.errstate(all="ignore"):
        want = np.linalg.inv(a)
    for layout in layouts(a):
        ref = run(inv["py"], layout)
        for k, f in inv.items():
            got = run(f, layout)
            same_bits(ref, got, f"{dtype} {k}", nan_signs=True)
            _like_numpy(got, want, f"{dtype} {k}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [k for k in MATRICES if k not in INVERTIBLE])
def test_inverse_of_a_singular_matrix_raises_everywhere(name: str, dtype: str) -> None:
    batch = np.array([MATRICES["general"], MATRICES[name], MATRICES["singular"]], dtype=dtype)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(batch)
    inv = _inverse(dtype, 3)
    for k, f in inv.items():
        with pytest.raises(np.linalg.LinAlgError) as info:
            f(batch)
        assert str(info.value) == (
            "MatrixInverse: the matrix at batch index (1,) is singular and has no inverse "
            "(input shape (3, 2, 2))"
        ), k


#: Symmetric 3 x 3 matrices for ``eigh`` (one triangle is read).
SYMMETRIC: dict[str, list[list[float]]] = {
    **FINITE_SYMMETRIC,
    "nan": [[NAN, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
    "inf": [[INF, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_of_edge_matrices(lower: bool, dtype: str) -> None:
    a = np.array(list(SYMMETRIC.values()), dtype=dtype)
    x = TensorType(dtype, shape=(None, None, None))("x")
    outputs = list(nl.Eigh(lower=lower).make_node(x).outputs)
    fns = {k: opweave.function([x], outputs, mode=Mode(linker=k, optimizer=None)) for k in LINKERS}
    with np.errstate(all="ignore"):
        want_w, want_v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    for layout in layouts(a):
        ref = run(fns["py"], layout)
        for k, f in fns.items():
            w, v = run(f, layout)
            same_bits(ref[0], w, f"w {dtype} {k}", nan_signs=True)
            same_bits(ref[1], v, f"v {dtype} {k}", nan_signs=True)
            _like_numpy(w, want_w, f"w {dtype} {k}")
            assert v.dtype == want_v.dtype and v.shape == want_v.shape
            np.testing.assert_array_equal(np.isnan(v), np.isnan(want_v))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_of_empty_matrices(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    outputs = list(nl.Eigh().make_node(x).outputs)
    for k in LINKERS:
        f = opweave.function([x], outputs, mode=Mode(linker=k, optimizer=None))
        for shape in ((2, 0, 0), (0, 3, 3)):
            w, v = f(np.zeros(shape, dtype=dtype))
            assert w.shape == shape[:-1] and v.shape == shape, k
            assert w.dtype == v.dtype == np.dtype(dtype), k
