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
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["NUMPY", "Routines", "routines", "scipy_lapack", "scipy_routines"]

LinAlgError = np.linalg.LinAlgError

#: NumPy's messages for a failed factorization or solve.
NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"
SINGULAR = "Singular matrix"


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
