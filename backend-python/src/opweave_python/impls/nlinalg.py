"""NumPy implementations of :mod:`opweave.tensor.nlinalg`.

Inputs are converted to the output's working dtype first (``numpy.linalg`` has no
``float16``) and whole batches go to NumPy's batched routines: ``inv``, ``det``,
``slogdet``, ``eig``, ``eigh``, ``svd``, ``qr`` and ``pinv`` all loop over leading axes.
``lstsq``, ``tensorinv`` and ``tensorsolve`` take single arrays, as in NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.nlinalg import (
    QR,
    SVD,
    Det,
    Eig,
    Eigh,
    Lstsq,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    TensorInv,
    TensorSolve,
)
from opweave_python.impls.slinalg import check_square, triangular_solve

__all__ = [
    "PERFORMS",
    "det_perform",
    "eig_perform",
    "eigh_perform",
    "lstsq_perform",
    "matrix_inverse_perform",
    "pinv_perform",
    "qr_perform",
    "slogdet_perform",
    "svd_perform",
    "tensorinv_perform",
    "tensorsolve_perform",
]

LinAlgError = np.linalg.LinAlgError


def _dtype(node: Apply, i: int = 0) -> np.dtype[Any]:
    return np.dtype(node.outputs[i].type.dtype)


def _input(node: Apply, inputs: Sequence[Any], i: int = 0) -> np.ndarray:
    """Input ``i`` in the working dtype of the outputs (the first output's, made complex
    when the input is)."""
    value = np.asarray(inputs[i])
    dtype = _dtype(node)
    if value.dtype.kind == "c" and dtype.kind != "c":
        dtype = np.result_type(dtype, np.complex64)
    return np.asarray(value, dtype=dtype)


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def _where(idx: tuple[int, ...]) -> str:
    return f" at batch index {idx}" if idx else ""


def _singular(x: np.ndarray) -> bool:
    try:
        np.linalg.inv(x)
    except LinAlgError:
        return True
    return False


def matrix_inverse_perform(
    op: MatrixInverse, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.linalg.inv``; a singular matrix raises ``LinAlgError`` naming its batch index."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    try:
        out[0][0] = np.linalg.inv(x)
    except LinAlgError:
        idx = next((i for i in np.ndindex(*x.shape[:-2]) if _singular(x[i])), ())
        raise LinAlgError(
            f"{op}: the matrix{_where(idx)} is singular and has no inverse (input shape {x.shape})"
        ) from None


def det_perform(op: Det, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.det``."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    out[0][0] = np.asarray(np.linalg.det(x), dtype=_dtype(node))


def slogdet_perform(op: SLogDet, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.slogdet``: the sign and the log of the absolute determinant."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    sign, logabsdet = np.linalg.slogdet(x)
    out[0][0] = np.asarray(sign, dtype=_dtype(node, 0))
    out[1][0] = np.asarray(logabsdet, dtype=_dtype(node, 1))


def eig_perform(op: Eig, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.eig``, made complex even where the eigenvalues are real."""
    x = np.asarray(inputs[0])
    complex_dtype = _dtype(node)
    x = np.asarray(x, dtype=complex_dtype if x.dtype.kind == "c" else np.finfo(complex_dtype).dtype)
    check_square(op, x, "x")
    w, v = np.linalg.eig(x)
    out[0][0] = np.asarray(w, dtype=_dtype(node, 0))
    out[1][0] = np.asarray(v, dtype=_dtype(node, 1))


def _from_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrices that one triangle of ``a`` describes."""
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    return (np.tril(a) if lower else np.triu(a)) + _swap(part).conj()


def eigh_perform(op: Eigh, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.eigh`` of the triangle ``op.lower`` names; with ``b``, the standard
    problem ``L^-1 a L^-H`` for ``b = L L^H`` (``b`` not positive definite raises)."""
    a = _input(node, inputs, 0)
    check_square(op, a, "a")
    uplo = "L" if op.lower else "U"
    if len(inputs) == 1:
        w, v = np.linalg.eigh(a, UPLO=uplo)
    else:
        b = _input(node, inputs, 1)
        check_square(op, b, "b")
        if a.shape != b.shape:
            raise ValueError(f"{op}: a has shape {a.shape} but b has {b.shape}")
        try:
            factor = np.linalg.cholesky(_from_triangle(b, op.lower))
        except LinAlgError:
            raise LinAlgError(f"{op}: b is not positive definite") from None
        left = triangular_solve(factor, _from_triangle(a, op.lower), lower=True)
        c = _swap(triangular_solve(factor, _swap(left).conj(), lower=True)).conj()
        w, y = np.linalg.eigh(c, UPLO="L")
        v = triangular_solve(_swap(factor).conj(), y, lower=False)
    out[0][0] = np.asarray(w, dtype=_dtype(node, 0))
    out[1][0] = np.asarray(v, dtype=_dtype(node, 1))


def svd_perform(op: SVD, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.svd``."""
    x = _input(node, inputs)
    if op.compute_uv:
        u, s, vt = np.linalg.svd(x, full_matrices=op.full_matrices, compute_uv=True)
        for i, value in enumerate((u, s, vt)):
            out[i][0] = np.asarray(value, dtype=_dtype(node, i))
    else:
        s = np.linalg.svd(x, compute_uv=False)
        out[0][0] = np.asarray(s, dtype=_dtype(node))


def qr_perform(op: QR, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.qr`` with SciPy's modes (``"r"`` padded to ``(m, n)``, ``"raw"`` in
    LAPACK's layout)."""
    x = _input(node, inputs)
    m, n = x.shape[-2:]
    k = min(m, n)
    dtype = _dtype(node)
    if op.mode in ("full", "economic"):
        q, r = np.linalg.qr(x, mode="complete" if op.mode == "full" else "reduced")
        values: tuple[np.ndarray, ...] = (q, r)
    elif op.mode == "r":
        r = np.linalg.qr(x, mode="r")
        padded = np.zeros(x.shape, dtype=r.dtype)
        padded[..., :k, :] = r
        values = (padded,)
    else:
        h, tau = np.linalg.qr(x, mode="raw")
        h = _swap(h)
        values = (h, tau, np.triu(h[..., :k, :]))
    for i, value in enumerate(values):
        out[i][0] = np.asarray(value, dtype=dtype)


def pinv_perform(op: MatrixPinv, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.pinv``."""
    x = _input(node, inputs)
    out[0][0] = np.asarray(np.linalg.pinv(x, hermitian=op.hermitian), dtype=_dtype(node))


def lstsq_perform(op: Lstsq, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.lstsq``."""
    a = _input(node, inputs, 0)
    b = _input(node, inputs, 1)
    rcond = None if len(inputs) == 2 else float(inputs[2])
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=rcond)
    out[0][0] = np.asarray(x, dtype=_dtype(node, 0))
    out[1][0] = np.asarray(residuals, dtype=_dtype(node, 1))
    out[2][0] = np.asarray(rank, dtype="int32")
    out[3][0] = np.asarray(s, dtype=_dtype(node, 3))


def tensorinv_perform(
    op: TensorInv, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.linalg.tensorinv``."""
    a = _input(node, inputs)
    try:
        out[0][0] = np.linalg.tensorinv(a, ind=op.ind)
    except LinAlgError as exc:
        raise LinAlgError(f"{op}: the tensor of shape {a.shape} has no inverse ({exc})") from None


def tensorsolve_perform(
    op: TensorSolve, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.linalg.tensorsolve``."""
    a = _input(node, inputs, 0)
    b = _input(node, inputs, 1)
    out[0][0] = np.asarray(np.linalg.tensorsolve(a, b, axes=op.axes), dtype=_dtype(node))


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        MatrixInverse: matrix_inverse_perform,
        Det: det_perform,
        SLogDet: slogdet_perform,
        Eig: eig_perform,
        Eigh: eigh_perform,
        SVD: svd_perform,
        QR: qr_perform,
        MatrixPinv: pinv_perform,
        Lstsq: lstsq_perform,
        TensorInv: tensorinv_perform,
        TensorSolve: tensorsolve_perform,
    }
)
