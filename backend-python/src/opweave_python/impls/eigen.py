"""NumPy implementation of :mod:`opweave.tensor.linalg.decomposition.eigen`: eigenvalues of
symmetric/Hermitian matrices, ``numpy.linalg.eigvalsh`` of the triangle read; with ``b``,
``scipy.linalg.eigh(a, b, eigvals_only=True)``.

Real values (float32 and float64 outputs) run on SciPy's LAPACK when SciPy is installed,
matrix by matrix and in double, as the C backend does with the same routines (so both
give the same bits): ``dsyevd`` (``jobz='N'``, the workspace its query asks for, as NumPy
sizes it) and, with ``b``, ``dsygvd`` (``jobz='N'``, SciPy's default workspace). Otherwise
NumPy's LAPACK runs, with ``b`` through the standard problem ``L^-1 a L^-H`` for
``b = L L^H`` (LAPACK ``sygv``'s reduction).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave_python.impls.lapack import scipy_lapack, syevd_values, sygvd
from opweave_python.impls.slinalg import check_square, triangular_solve

__all__ = ["PERFORMS", "eigvalsh_perform"]


def _from_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrices that one triangle of ``a`` describes."""
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    return np.asarray((np.tril(a) if lower else np.triu(a)) + np.swapaxes(part, -1, -2).conj())


def _numpy_values(op: Eigvalsh, a: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """The eigenvalues with NumPy's LAPACK."""
    if b is None:
        return np.linalg.eigvalsh(a, UPLO="L" if op.lower else "U")
    try:
        factor = np.linalg.cholesky(_from_triangle(b, op.lower))
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(f"{op}: b is not positive definite") from None
    left = triangular_solve(factor, _from_triangle(a, op.lower), lower=True)
    right = triangular_solve(factor, np.swapaxes(left, -1, -2).conj(), lower=True)
    return np.linalg.eigvalsh(np.swapaxes(right, -1, -2).conj(), UPLO="L")


def eigvalsh_perform(
    op: Eigvalsh, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """The ascending eigenvalues; ``b`` not positive definite raises ``LinAlgError``."""
    real = np.dtype(tensor_type_of(node.outputs[0]).dtype)
    work = np.result_type(real, *(np.asarray(x).dtype for x in inputs))
    if work.kind not in "fc":
        work = real
    a = np.asarray(inputs[0], dtype=work)
    check_square(op, a, "a")
    b = None
    if len(inputs) > 1:
        b = np.asarray(inputs[1], dtype=work)
        check_square(op, b, "b")
        if a.shape != b.shape:
            raise ValueError(f"{op}: a has shape {a.shape} but b has {b.shape}")
    lapack = scipy_lapack() if work.kind == "f" and real.name in ("float32", "float64") else None
    if lapack is None:
        w = _numpy_values(op, a, b)
    elif b is None:
        w = syevd_values(lapack, a, op.lower)
    else:
        w, _ = sygvd(lapack, a, b, op.lower, compute_v=False, who=op)
    out[0][0] = np.asarray(w, dtype=real)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Eigvalsh: eigvalsh_perform}
)
