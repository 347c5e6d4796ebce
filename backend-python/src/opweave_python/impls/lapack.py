"""The LAPACK routines the kernels of :mod:`opweave_python.impls.slinalg` factor and solve
with: ``potrf('L')`` (Cholesky) and ``gesv`` (LU with partial pivoting).

Two sources give them, with the same interface (:class:`Routines`):

- :data:`NUMPY`: ``numpy.linalg.cholesky`` and ``numpy.linalg.solve`` (NumPy's LAPACK),
  on whole batches at once;
- :func:`scipy_routines`: the same routines from the LAPACK SciPy ships
  (``scipy.linalg.lapack``), one matrix at a time, for float32 and float64, when SciPy is
  installed. The C backend calls that build too (``scipy.linalg.cython_lapack``), so both
  backends give the same numbers bit for bit; NumPy's build rounds differently.

SciPy is imported when a node first asks for the routines, never when this module is.

:func:`syevd_values`, :func:`sygvd`, :func:`gesdd`, :func:`geqrf_orgqr` and
:func:`gelsd` run NumPy's (and SciPy's) algorithms on SciPy's LAPACK, matrix by matrix
in double (:func:`work_copies`), as the C backend does with the same routines
(:mod:`opweave_python.impls.eigen`, :mod:`opweave_python.impls.nlinalg`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "LSTSQ_FAILED",
    "NOT_CONVERGED",
    "NUMPY",
    "SVD_FAILED",
    "Routines",
    "gelsd",
    "geqrf_orgqr",
    "gesdd",
    "numpy_lwork",
    "routines",
    "scipy_lapack",
    "scipy_routines",
    "svd_shapes",
    "syevd_values",
    "sygvd",
    "work_copies",
]

LinAlgError = np.linalg.LinAlgError

#: NumPy's messages for a failed factorization or solve.
NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"
SINGULAR = "Singular matrix"
NOT_CONVERGED = "Eigenvalues did not converge"


@dataclass(frozen=True)
class Routines:
    """A Cholesky factorization and a linear solve from one LAPACK build.

    Attributes
    ----------
    cholesky
        ``a -> L``: the lower Cholesky factor, read from the lower triangle of ``a``
        (zeros above the diagonal); ``numpy.linalg.LinAlgError`` if ``a`` is not
        positive definite.
    solve
        ``(a, b) -> x`` with ``a @ x = b`` (``b`` holding matrices);
        ``numpy.linalg.LinAlgError`` if ``a`` is exactly singular.
    batched
        Whether both take whole batches (``True``) or one matrix at a time.
    """

    cholesky: Callable[[np.ndarray], np.ndarray]
    solve: Callable[[np.ndarray, np.ndarray], np.ndarray]
    batched: bool


#: NumPy's ``linalg``, batched.
NUMPY = Routines(cholesky=np.linalg.cholesky, solve=np.linalg.solve, batched=True)


@cache
def scipy_lapack() -> ModuleType | None:
    """``scipy.linalg.lapack``, or ``None`` when SciPy is not installed.

    Returns
    -------
    module or None
        The module, imported on the first call.
    """
    try:
        return importlib.import_module("scipy.linalg.lapack")
    except ImportError:
        return None


def required_scipy(module: str, needed_by: str) -> ModuleType:
    """The SciPy module ``module``, imported now, for kernels that have no NumPy route.

    Raises
    ------
    ImportError
        If SciPy is not installed, naming ``needed_by`` (what is computed with it).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{needed_by} computed with SciPy, which is not installed: pip install scipy"
        ) from exc


def _checked(routine: str, info: int, failure: str) -> None:
    """``LinAlgError(failure)`` when LAPACK's ``info`` reports a failure (> 0)."""
    if info > 0:
        raise LinAlgError(failure)
    if info < 0:
        raise RuntimeError(f"LAPACK's {routine} rejected argument {-info}")


def _potrf(fn: Any, dtype: np.dtype[Any]) -> Callable[[np.ndarray], np.ndarray]:
    def cholesky(a: np.ndarray) -> np.ndarray:
        if a.shape[-1] == 0:
            return np.empty(a.shape, dtype=dtype)
        work = np.array(a, dtype=dtype, order="F")  # private: LAPACK overwrites it
        factor, info = fn(work, lower=1, clean=1, overwrite_a=1)
        _checked("potrf", info, NOT_POSITIVE_DEFINITE)
        return np.asarray(factor)

    return cholesky


def _gesv(fn: Any, dtype: np.dtype[Any]) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.shape[-1] == 0 or b.shape[-1] == 0:
            return np.empty(b.shape, dtype=dtype)
        lu = np.array(a, dtype=dtype, order="F")  # private copies: LAPACK overwrites them
        rhs = np.array(b, dtype=dtype, order="F")
        _, _, x, info = fn(lu, rhs, overwrite_a=1, overwrite_b=1)
        _checked("gesv", info, SINGULAR)
        return np.asarray(x)

    return solve


#: Output dtype -> the prefix of its LAPACK routines (SciPy's C backend runs these two).
_PREFIXES = {"float32": "s", "float64": "d"}


def scipy_routines(dtype: Any) -> Routines | None:
    """SciPy's ``?potrf`` and ``?gesv`` for ``dtype``, one matrix at a time.

    Parameters
    ----------
    dtype
        The dtype computed in.

    Returns
    -------
    Routines or None
        ``None`` for dtypes other than float32 and float64, or when SciPy is missing.
    """
    dt = np.dtype(dtype)
    prefix = _PREFIXES.get(dt.name)
    module = scipy_lapack() if prefix else None
    if module is None:
        return None
    return Routines(
        cholesky=_potrf(getattr(module, f"{prefix}potrf"), dt),
        solve=_gesv(getattr(module, f"{prefix}gesv"), dt),
        batched=False,
    )


def routines(dtype: Any) -> Routines:
    """SciPy's LAPACK for ``dtype`` when :func:`scipy_routines` has it, else NumPy's.

    Parameters
    ----------
    dtype
        The dtype computed in.

    Returns
    -------
    Routines
        The routines to factor and solve with.
    """
    return scipy_routines(dtype) or NUMPY


def work_copies(x: np.ndarray) -> np.ndarray:
    """Private float64 copies of the matrices of ``x`` (LAPACK overwrites them), one per
    batch entry in C order: entry ``i`` holds the transpose of a matrix, so that its view
    ``[i].T`` is that matrix, Fortran-ordered (SciPy hands it to LAPACK without a copy).

    Parameters
    ----------
    x
        ``(..., m, n)``.

    Returns
    -------
    numpy.ndarray
        ``(count, n, m)`` float64.
    """
    m, n = x.shape[-2:]
    return np.array(np.swapaxes(x, -1, -2), dtype=np.float64, order="C").reshape(-1, n, m)


def syevd_values(lapack: ModuleType, a: np.ndarray, lower: bool) -> np.ndarray:
    """NumPy's ``eigvalsh`` of a batch, in float64, matrix by matrix: ``dsyevd``
    (``jobz='N'``) with the workspace its query asks for.

    Parameters
    ----------
    lapack
        ``scipy.linalg.lapack``.
    a
        ``(..., n, n)``; the triangle ``lower`` names is read.
    lower
        Read the lower or the upper triangle.

    Returns
    -------
    numpy.ndarray
        ``(..., n)``: the ascending eigenvalues.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``"Eigenvalues did not converge"`` (NumPy's message).
    """
    batch, n = a.shape[:-2], a.shape[-1]
    w = np.empty((*batch, n))
    if n == 0:
        return w
    work, iwork, info = lapack.dsyevd_lwork(n, compute_v=0, lower=int(lower))
    if info != 0:
        raise RuntimeError(f"LAPACK's syevd rejected argument {-info}")
    sizes = {"lwork": int(work), "liwork": int(iwork)}
    flat = w.reshape(-1, n)
    for i, m in enumerate(work_copies(a)):
        flat[i], _, info = lapack.dsyevd(m.T, compute_v=0, lower=int(lower), overwrite_a=1, **sizes)
        _checked("syevd", info, NOT_CONVERGED)
    return w


def sygvd(
    lapack: ModuleType, a: np.ndarray, b: np.ndarray, lower: bool, compute_v: bool, who: Any
) -> tuple[np.ndarray, np.ndarray | None]:
    """``scipy.linalg.eigh(a, b)`` of a batch (``driver='gvd'``, ``type=1``), in float64,
    matrix by matrix: ``dsygvd`` with the workspace SciPy's wrapper sizes by default.

    Parameters
    ----------
    lapack
        ``scipy.linalg.lapack``.
    a, b
        ``(..., n, n)`` of one shape; the triangle ``lower`` names is read from both.
    lower
        Read the lower or the upper triangles.
    compute_v
        Compute the eigenvectors (``jobz='V'``) too.
    who
        The Op, for messages.

    Returns
    -------
    tuple
        ``(..., n)`` ascending eigenvalues and the ``(..., n, n)`` eigenvectors
        (``V.T @ b @ V == I``), or ``None`` without ``compute_v``.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``"<who>: b is not positive definite"``, or ``"Eigenvalues did not converge"``.
    """
    batch, n = a.shape[:-2], a.shape[-1]
    w = np.empty((*batch, n))
    v = np.empty(a.shape) if compute_v else None
    if n == 0:
        return w, v
    if compute_v:
        sizes = {"lwork": 1 + 6 * n + 2 * n * n, "liwork": 5 * n + 3}
    else:
        sizes = {"lwork": 2 * n + 1, "liwork": 1}
    flags = {"itype": 1, "jobz": "V" if compute_v else "N", "uplo": "L" if lower else "U"}
    w_flat = w.reshape(-1, n)
    for i, (ma, mb) in enumerate(zip(work_copies(a), work_copies(b), strict=True)):
        w_flat[i], vi, info = lapack.dsygvd(
            ma.T, mb.T, overwrite_a=1, overwrite_b=1, **flags, **sizes
        )
        if info > n:
            raise LinAlgError(f"{who}: b is not positive definite")
        _checked("sygvd", info, NOT_CONVERGED)
        if v is not None:
            v.reshape(-1, n, n)[i] = vi
    return w, v


#: NumPy's message for a failed SVD (``gesdd``'s ``info`` not 0: no convergence, or NaN).
SVD_FAILED = "SVD did not converge"


def svd_shapes(m: int, n: int, full: bool) -> tuple[tuple[int, int], tuple[int, int]]:
    """The core shapes of ``U`` and ``VT``.

    Parameters
    ----------
    m, n
        The shape of the matrices.
    full
        ``full_matrices``.

    Returns
    -------
    tuple
        ``U``'s and ``VT``'s shapes.
    """
    k = min(m, n)
    return ((m, m), (n, n)) if full else ((m, k), (k, n))


def gesdd(
    lapack: ModuleType, x: np.ndarray, compute_uv: bool, full: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NumPy's ``svd`` of a batch, in float64, matrix by matrix: ``dgesdd`` (``jobz`` ``'A'``,
    ``'S'`` or ``'N'``) with the workspace its query asks for.

    Parameters
    ----------
    lapack
        ``scipy.linalg.lapack``.
    x
        ``(..., m, n)``.
    compute_uv
        Compute ``U`` and ``VT`` (else they are left empty).
    full
        ``full_matrices``.

    Returns
    -------
    tuple
        ``U``, ``s`` and ``VT`` in float64. A matrix without entries has the identities as
        ``U`` and ``VT`` (``full_matrices``), as in NumPy.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``"SVD did not converge"`` where ``info`` is not 0 (NaN entries included).
    """
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    u_shape, vt_shape = svd_shapes(m, n, full)
    s = np.empty((*batch, k))
    u = np.empty((*batch, *u_shape)) if compute_uv else np.empty(0)
    vt = np.empty((*batch, *vt_shape)) if compute_uv else np.empty(0)
    if k == 0:
        if compute_uv:
            u[...] = np.eye(*u_shape)
            vt[...] = np.eye(*vt_shape)
        return u, s, vt
    flags = {"compute_uv": int(compute_uv), "full_matrices": int(full)}
    work, info = lapack.dgesdd_lwork(m, n, **flags)
    if info != 0:
        raise RuntimeError(f"LAPACK's gesdd rejected argument {-info}")
    s_flat = s.reshape(-1, k)
    for i, a in enumerate(work_copies(x)):
        ui, s_flat[i], vti, info = lapack.dgesdd(a.T, lwork=int(work), overwrite_a=1, **flags)
        if info != 0:
            raise LinAlgError(SVD_FAILED)
        if compute_uv:
            u.reshape(-1, *u_shape)[i] = ui
            vt.reshape(-1, *vt_shape)[i] = vti
    return u, s, vt


def numpy_lwork(query: float, n: int) -> int:
    """NumPy's workspace from a query: at least ``max(1, n)``.

    Parameters
    ----------
    query
        The size a workspace query gave.
    n
        The number of columns.

    Returns
    -------
    int
        The workspace size.
    """
    return max(1, n, int(query))


def geqrf_orgqr(lapack: ModuleType, x: np.ndarray, mode: str) -> tuple[np.ndarray, ...]:
    """NumPy's ``qr`` of a batch, in float64, matrix by matrix, in ``QR``'s modes:
    ``dgeqrf``, then (``"full"``, ``"economic"``) ``dorgqr`` on the reflectors for the
    ``m`` or ``k`` columns of ``Q``, each with NumPy's workspace (:func:`numpy_lwork`).

    Parameters
    ----------
    lapack
        ``scipy.linalg.lapack``.
    x
        ``(..., m, n)``.
    mode
        ``"full"``, ``"economic"``, ``"r"`` or ``"raw"``.

    Returns
    -------
    tuple
        ``(Q, R)``, ``(R,)`` (all ``m`` rows) or ``(H, tau, R)``, in float64; ``R`` is the
        upper triangle of ``dgeqrf``'s result. A matrix without entries has the identity
        as ``Q`` (``"full"``).
    """
    batch, (m, n) = x.shape[:-2], x.shape[-2:]
    k = min(m, n)
    mc = m if mode == "full" else k
    h = np.empty((*batch, m, n))
    tau = np.empty((*batch, k))
    q = np.empty((*batch, m, mc))
    if k == 0:
        q[...] = np.eye(m, mc)
    else:
        query, info = lapack.dgeqrf_lwork(m, n)
        if info != 0:
            raise RuntimeError(f"LAPACK's geqrf rejected argument {-info}")
        geqrf_lwork, orgqr_lwork = numpy_lwork(query, n), 0
        h_flat, tau_flat, q_flat = h.reshape(-1, m, n), tau.reshape(-1, k), q.reshape(-1, m, mc)
        for i, a in enumerate(work_copies(x)):
            h_flat[i], tau_flat[i], _, info = lapack.dgeqrf(a.T, lwork=geqrf_lwork, overwrite_a=1)
            if info != 0:
                raise RuntimeError(f"LAPACK's geqrf rejected argument {-info}")
            if mode not in ("full", "economic"):
                continue
            reflectors = np.zeros((m, mc), order="F")
            reflectors[:, :k] = h_flat[i][:, :k]
            if not orgqr_lwork:
                _, query_work, info = lapack.dorgqr(reflectors, tau_flat[i], lwork=-1)
                orgqr_lwork = numpy_lwork(query_work[0], n)
            q_flat[i], _, info = lapack.dorgqr(
                reflectors, tau_flat[i], lwork=orgqr_lwork, overwrite_a=1
            )
            if info != 0:
                raise RuntimeError(f"LAPACK's orgqr rejected argument {-info}")
    if mode in ("full", "economic"):
        return q, np.triu(h[..., :mc, :])
    if mode == "r":
        return (np.triu(h),)
    return h, tau, np.triu(h[..., :k, :])


#: NumPy's message for a failed least-squares solve (``gelsd``'s ``info`` not 0).
LSTSQ_FAILED = "SVD did not converge in Linear Least Squares"


def gelsd(
    lapack: ModuleType, a: np.ndarray, b: np.ndarray, rcond: float | None
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """NumPy's ``lstsq`` in float64: ``dgelsd`` with the workspace its query asks for, on
    ``b`` (one zero column when it has none) in ``max(m, n)`` rows.

    Parameters
    ----------
    lapack
        ``scipy.linalg.lapack``.
    a
        ``(m, n)``.
    b
        ``(m,)`` or ``(m, k)``.
    rcond
        Singular values below ``rcond`` times the largest count as zero; ``None`` is
        NumPy's default, float64's machine precision times ``max(m, n)``.

    Returns
    -------
    tuple
        The solution, the residuals (the sums of the squares of the rows beyond ``n`` of
        each column, in order; empty unless ``a`` is tall and of full rank), the rank and
        the singular values.

    Raises
    ------
    numpy.linalg.LinAlgError
        ``"Incompatible dimensions"`` for ``b`` of another number of rows, ``"SVD did not
        converge in Linear Least Squares"`` where ``info`` is not 0.
    """
    m, n = a.shape
    vector = b.ndim == 1
    rhs_in = b[:, None] if vector else b
    if rhs_in.shape[0] != m:
        raise LinAlgError("Incompatible dimensions")
    nrhs = rhs_in.shape[1]
    cond = np.finfo(np.float64).eps * max(m, n) if rcond is None else float(rcond)
    rhs = np.zeros((max(1, m, n), max(1, nrhs)), order="F")
    rhs[:m, :nrhs] = rhs_in
    s, rank = np.empty(min(m, n)), 0
    if min(m, n) > 0:
        work, iwork, info = lapack.dgelsd_lwork(m, n, rhs.shape[1], cond)
        if info != 0:
            raise RuntimeError(f"LAPACK's gelsd rejected argument {-info}")
        rhs, s, rank, info = lapack.dgelsd(
            np.array(a, dtype=np.float64, order="F"),
            rhs,
            int(work),
            int(iwork),
            cond=cond,
            overwrite_a=1,
            overwrite_b=1,
        )
        if info != 0:
            raise LinAlgError(LSTSQ_FAILED)
    x = np.zeros((n, nrhs)) if m == 0 else np.array(rhs[:n, :nrhs])
    residuals = np.empty(0)
    if rank == n and m > n:
        residuals = np.array([np.cumsum(rhs[n:m, i] * rhs[n:m, i])[-1] for i in range(nrhs)])
    return (x[:, 0] if vector else x), residuals, int(rank), s
