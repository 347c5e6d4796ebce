"""NumPy implementations of :mod:`opweave.tensor.nlinalg`.

Inputs are converted to the output's working dtype first (``numpy.linalg`` has no
``float16``) and whole batches go to NumPy's batched routines: ``inv``, ``det``,
``slogdet``, ``eig``, ``eigh``, ``svd``, ``qr`` and ``pinv`` all loop over leading axes.
``lstsq``, ``tensorinv`` and ``tensorsolve`` take single arrays, as in NumPy.

``inv``, ``det``, ``slogdet``, ``eigh``, ``svd``, ``pinv``, ``qr`` and ``lstsq`` of
float32/float64 values run NumPy's algorithm with SciPy's LAPACK instead, matrix by matrix,
when SciPy is installed, and ``eigh`` with ``b`` runs ``scipy.linalg.eigh``'s ``dsygvd``:
the C backend calls those routines too, so both backends give the same values bit for bit
(NumPy's own LAPACK build may round differently).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import MappingProxyType, ModuleType
from typing import Any, Literal

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor._typing import tensor_type_of
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
from opweave_python.impls.lapack import (
    NOT_CONVERGED,
    gelsd,
    geqrf_orgqr,
    gesdd,
    scipy_lapack,
    sygvd,
    work_copies,
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
    return np.dtype(tensor_type_of(node.outputs[i]).dtype)


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


# ---------------------------------------------------------------- SciPy's LAPACK
#
# For float32 and float64, MatrixInverse, Det, SLogDet and Eigh call SciPy's LAPACK (the C backend
# calls the same routines through ``scipy.linalg.cython_lapack``, so both give the same bits)
# and follow NumPy's gufuncs step by step: every matrix is computed in double (NumPy widens
# float32 too, then rounds the results), the inverse with ``dgesv`` on the identity, the
# sign and the log of the absolute determinant from ``dgetrf``'s pivots and diagonal, and
# the determinant as ``sign * exp(logdet)``, with the C library's ``log`` and ``exp``
# (``math``, not NumPy's vectorised loops), the eigenproblem with ``dsyevd``. Without SciPy,
# ``numpy.linalg`` runs.


def _lapack(x: np.ndarray) -> ModuleType | None:
    """``scipy.linalg.lapack`` for float32/float64 values when SciPy is installed."""
    return scipy_lapack() if x.dtype.name in ("float32", "float64") else None


def _exp(x: float) -> float:
    """The C library's ``exp``: ``inf`` where the result overflows."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _slogdet_one(lapack: ModuleType, matrix: np.ndarray) -> tuple[float, float]:
    """NumPy's ``slogdet`` of one Fortran-ordered float64 matrix (overwritten) of order
    > 0: ``(0, -inf)`` when ``dgetrf`` finds it singular."""
    lu, piv, info = lapack.dgetrf(matrix, overwrite_a=1)
    if info < 0:
        raise RuntimeError(f"LAPACK's getrf rejected argument {-info}")
    if info > 0:
        return 0.0, -math.inf
    sign = 1.0
    for i, p in enumerate(piv.tolist()):  # SciPy's pivots count from 0
        if p != i:
            sign = -sign
    logdet = 0.0
    for d in lu.diagonal().tolist():
        if d < 0.0:
            sign, d = -sign, -d
        logdet += math.log(d)
    return sign, logdet


def _slogdet(lapack: ModuleType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The signs and logs of a batch, in float64, matrix by matrix (an empty matrix has
    ``(1, 0)``)."""
    batch = x.shape[:-2]
    if x.shape[-1] == 0:
        return np.ones(batch), np.zeros(batch)
    work = work_copies(x)
    pairs = [_slogdet_one(lapack, m.T) for m in work]
    sign = np.array([p[0] for p in pairs], dtype=np.float64).reshape(batch)
    logdet = np.array([p[1] for p in pairs], dtype=np.float64).reshape(batch)
    return sign, logdet


def _inverse(op: MatrixInverse, lapack: ModuleType, x: np.ndarray) -> np.ndarray:
    """The inverses of a batch, in float64, matrix by matrix (``dgesv`` on the identity)."""
    n = x.shape[-1]
    out = np.empty(x.shape)
    if n == 0:
        return out
    flat = out.reshape(-1, n, n)
    for i, m in enumerate(work_copies(x)):
        _, _, inverse, info = lapack.dgesv(m.T, np.eye(n, order="F"), overwrite_a=1, overwrite_b=1)
        if info < 0:
            raise RuntimeError(f"LAPACK's gesv rejected argument {-info}")
        if info > 0:
            idx = tuple(int(k) for k in np.unravel_index(i, x.shape[:-2]))
            raise LinAlgError(_singular_message(op, idx, x.shape))
        flat[i] = inverse
    return out


def _singular_message(op: MatrixInverse, idx: tuple[int, ...], shape: tuple[int, ...]) -> str:
    return f"{op}: the matrix{_where(idx)} is singular and has no inverse (input shape {shape})"


def matrix_inverse_perform(
    op: MatrixInverse, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``numpy.linalg.inv`` (SciPy's ``dgesv`` for float32/float64); a singular matrix raises
    ``LinAlgError`` naming its batch index."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    lapack = _lapack(x)
    if lapack is not None:
        out[0][0] = np.asarray(_inverse(op, lapack, x), dtype=_dtype(node))
        return
    try:
        out[0][0] = np.linalg.inv(x)
    except LinAlgError:
        idx = next((i for i in np.ndindex(*x.shape[:-2]) if _singular(x[i])), ())
        raise LinAlgError(_singular_message(op, idx, x.shape)) from None


def det_perform(op: Det, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.det``: ``sign * exp(logdet)`` of SciPy's ``dgetrf`` for
    float32/float64."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    lapack = _lapack(x)
    if lapack is None:
        out[0][0] = np.asarray(np.linalg.det(x), dtype=_dtype(node))
        return
    sign, logdet = _slogdet(lapack, x)
    det = np.empty(sign.shape)
    for idx in np.ndindex(*sign.shape):
        det[idx] = float(sign[idx]) * _exp(float(logdet[idx]))
    out[0][0] = np.asarray(det, dtype=_dtype(node))


def slogdet_perform(op: SLogDet, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.slogdet``: the sign and the log of the absolute determinant (SciPy's
    ``dgetrf`` for float32/float64)."""
    x = _input(node, inputs)
    check_square(op, x, "x")
    lapack = _lapack(x)
    if lapack is None:
        sign, logabsdet = np.linalg.slogdet(x)
    else:
        sign, logabsdet = _slogdet(lapack, x)
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
    return np.asarray((np.tril(a) if lower else np.triu(a)) + _swap(part).conj())


def _eigh(lapack: ModuleType, a: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """NumPy's ``eigh`` of a batch, in float64, matrix by matrix: ``dsyevd`` (``jobz='V'``)
    with the workspace its query asks for, as NumPy sizes it."""
    batch, n = a.shape[:-2], a.shape[-1]
    w, v = np.empty((*batch, n)), np.empty(a.shape)
    if n == 0:
        return w, v
    work, iwork, info = lapack.dsyevd_lwork(n, compute_v=1, lower=int(lower))
    if info != 0:
        raise RuntimeError(f"LAPACK's syevd rejected argument {-info}")
    sizes = {"lwork": int(work), "liwork": int(iwork)}
    w_flat, v_flat = w.reshape(-1, n), v.reshape(-1, n, n)
    for i, m in enumerate(work_copies(a)):
        w_flat[i], v_flat[i], info = lapack.dsyevd(
            m.T, compute_v=1, lower=int(lower), overwrite_a=1, **sizes
        )
        if info > 0:
            raise LinAlgError(NOT_CONVERGED)
        if info < 0:
            raise RuntimeError(f"LAPACK's syevd rejected argument {-info}")
    return w, v


def eigh_perform(op: Eigh, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.eigh`` of the triangle ``op.lower`` names (SciPy's ``dsyevd`` for
    float32/float64); with ``b``, ``scipy.linalg.eigh(a, b)`` (SciPy's ``dsygvd`` for
    float32/float64, else the standard problem ``L^-1 a L^-H`` for ``b = L L^H``); ``b``
    not positive definite raises."""
    a = _input(node, inputs, 0)
    check_square(op, a, "a")
    uplo: Literal["L", "U"] = "L" if op.lower else "U"
    lapack = _lapack(a)
    if len(inputs) == 1 and lapack is not None:
        w, v = _eigh(lapack, a, op.lower)
    elif len(inputs) == 1:
        w, v = np.linalg.eigh(a, UPLO=uplo)
    else:
        b = _input(node, inputs, 1)
        check_square(op, b, "b")
        if a.shape != b.shape:
            raise ValueError(f"{op}: a has shape {a.shape} but b has {b.shape}")
        if lapack is not None:
            w, vectors = sygvd(lapack, a, b, op.lower, compute_v=True, who=op)
            assert vectors is not None
            v = vectors
        else:
            w, v = _generalized_eigh(op, a, b)
    out[0][0] = np.asarray(w, dtype=_dtype(node, 0))
    out[1][0] = np.asarray(v, dtype=_dtype(node, 1))


def _generalized_eigh(op: Eigh, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The generalized problem through the standard one ``L^-1 a L^-H`` (``b = L L^H``)
    with NumPy's LAPACK (complex values, or no SciPy)."""
    try:
        factor = np.linalg.cholesky(_from_triangle(b, op.lower))
    except LinAlgError:
        raise LinAlgError(f"{op}: b is not positive definite") from None
    left = triangular_solve(factor, _from_triangle(a, op.lower), lower=True)
    c = _swap(triangular_solve(factor, _swap(left).conj(), lower=True)).conj()
    w, y = np.linalg.eigh(c, UPLO="L")
    return w, triangular_solve(_swap(factor).conj(), y, lower=False)


def svd_perform(op: SVD, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.svd`` (SciPy's ``dgesdd`` for float32/float64)."""
    x = _input(node, inputs)
    lapack = _lapack(x)
    values: tuple[np.ndarray, ...]
    if lapack is not None:
        u, s, vt = gesdd(lapack, x, op.compute_uv, op.full_matrices)
        values = (u, s, vt) if op.compute_uv else (s,)
    elif op.compute_uv:
        values = tuple(np.linalg.svd(x, full_matrices=op.full_matrices, compute_uv=True))
    else:
        values = (np.linalg.svd(x, compute_uv=False),)
    for i, value in enumerate(values):
        out[i][0] = np.asarray(value, dtype=_dtype(node, i))


#: ``numpy.linalg.pinv``'s default ``rcond``: singular values up to ``rcond * max(s)`` count
#: as 0.
PINV_RCOND = 1e-15


def _hermitian_svd(lapack: ModuleType, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy's ``svd(hermitian=True)`` of a batch in the dtype of ``x``: ``eigh`` of the
    lower triangle (``dsyevd``, in float64) rounded to that dtype, the absolute eigenvalues
    in descending order (a stable ascending sort, NaN last, reversed) with their
    eigenvectors as ``U``, and ``VT`` the transpose of ``U`` times the signs."""
    w64, v64 = _eigh(lapack, x, lower=True)
    w, v = np.asarray(w64, dtype=x.dtype), np.asarray(v64, dtype=x.dtype)
    order = np.argsort(np.abs(w), axis=-1, kind="stable")[..., ::-1]
    signs = np.take_along_axis(np.sign(w), order, axis=-1)
    s = np.take_along_axis(np.abs(w), order, axis=-1)
    u = np.take_along_axis(v, order[..., None, :], axis=-1)
    return u, s, _swap(u * signs[..., None, :])


def _pinv(lapack: ModuleType, x: np.ndarray, hermitian: bool) -> np.ndarray:
    """NumPy's ``pinv`` of a batch in the dtype of ``x`` (float32 or float64): the thin SVD
    (``dgesdd``, in float64; :func:`_hermitian_svd` for ``hermitian``) rounded to that
    dtype, the singular values above ``1e-15 * max(s)`` (in float64; NaN keeps none)
    inverted, the others 0, then ``VT.T @ (s_inv[:, None] * U.T)`` in the dtype, with each
    entry summed over ``k`` in order from ``+0``."""
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    dtype = x.dtype
    out = np.zeros((*batch, n, m), dtype=dtype)
    if out.size == 0:
        return out
    if hermitian:
        u, s, vt = _hermitian_svd(lapack, x)
    else:
        u, s, vt = (np.asarray(v, dtype=dtype) for v in gesdd(lapack, x, True, False))
    cutoff = PINV_RCOND * np.max(s.astype(np.float64), axis=-1, keepdims=True)
    large = s > cutoff
    with np.errstate(all="ignore"):
        s_inv = np.where(large, np.divide(np.asarray(1, dtype=dtype), s), np.asarray(0, dtype))
        scaled = s_inv[..., :, None] * _swap(u)
        for k in range(s.shape[-1]):
            out = out + vt[..., k, :, None] * scaled[..., k, None, :]
    return out


def pinv_perform(op: MatrixPinv, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.pinv`` (SciPy's ``dgesdd``, or ``dsyevd`` for ``hermitian``, for
    float32/float64)."""
    x = _input(node, inputs)
    lapack = _lapack(x)
    if lapack is not None:
        if op.hermitian:
            check_square(op, x, "x")
        out[0][0] = _pinv(lapack, x, op.hermitian)
        return
    out[0][0] = np.asarray(np.linalg.pinv(x, hermitian=op.hermitian), dtype=_dtype(node))


def qr_perform(op: QR, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.qr`` with SciPy's modes (``"r"`` padded to ``(m, n)``, ``"raw"`` in
    LAPACK's layout); SciPy's ``dgeqrf`` and ``dorgqr`` for float32/float64."""
    x = _input(node, inputs)
    m, n = x.shape[-2:]
    k = min(m, n)
    dtype = _dtype(node)
    lapack = _lapack(x)
    values: tuple[np.ndarray, ...]
    if lapack is not None:
        values = geqrf_orgqr(lapack, x, op.mode)
    elif op.mode in ("full", "economic"):
        q, r = np.linalg.qr(x, mode="complete" if op.mode == "full" else "reduced")
        values = (q, r)
    elif op.mode == "r":
        r_only = np.asarray(np.linalg.qr(x, mode="r"))
        padded = np.zeros(x.shape, dtype=r_only.dtype)
        padded[..., :k, :] = r_only
        values = (padded,)
    else:
        h, tau = np.linalg.qr(x, mode="raw")
        h = _swap(h)
        values = (h, tau, np.triu(h[..., :k, :]))
    for i, value in enumerate(values):
        out[i][0] = np.asarray(value, dtype=dtype)


def lstsq_perform(op: Lstsq, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``numpy.linalg.lstsq`` (SciPy's ``dgelsd`` for float32/float64)."""
    a = _input(node, inputs, 0)
    b = _input(node, inputs, 1)
    rcond = None if len(inputs) == 2 else float(inputs[2])
    lapack = _lapack(a)
    if lapack is not None:
        x, residuals, rank, s = gelsd(lapack, a, b, rcond)
    else:
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
