"""NumPy implementation of :mod:`opweave.tensor.linalg.solvers.linear_control`: the Sylvester
equation ``A @ X + X @ B = Q`` (no SciPy, hence no Schur form and no Bartels-Stewart).

Each matrix of the batch is solved in double precision, then cast to the output dtype:

- up to :data:`KRONECKER_LIMIT` unknowns (``m * n``), the equivalent linear system
  ``(kron(A, I_n) + kron(I_m, B.T)) vec(X) = vec(Q)`` (row-major ``vec``) with
  ``numpy.linalg.solve``: ``O((m n)**3)`` time and ``O((m n)**2)`` memory, exact up to
  rounding for any ``A`` and ``B``;
- above it, through the eigendecompositions ``A = V_A diag(a) V_A^-1`` and
  ``B = V_B diag(b) V_B^-1``: ``X = V_A ((V_A^-1 Q V_B) / (a_i + b_j)) V_B^-1``, in
  ``O(m**3 + n**3)``. When the eigenvector bases are ill-conditioned (the product of
  their condition numbers above :data:`EIGEN_CONDITION_LIMIT`: nearly defective
  matrices) it falls back to the linear system whatever its size.

A singular equation (``a_i + b_j == 0``) gives NaN for that matrix, as PyTensor does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.solvers.linear_control import SolveSylvester
from opweave_python.impls.slinalg import batch_check, check_square

__all__ = [
    "EIGEN_CONDITION_LIMIT",
    "KRONECKER_LIMIT",
    "PERFORMS",
    "solve_sylvester_perform",
    "sylvester",
    "sylvester_eigen",
    "sylvester_kronecker",
]

#: The most unknowns (``m * n``) solved as one dense linear system.
KRONECKER_LIMIT = 400
#: The largest ``cond(V_A) * cond(V_B)`` for which the eigendecomposition is used.
EIGEN_CONDITION_LIMIT = 1e8

LinAlgError = np.linalg.LinAlgError


def sylvester_kronecker(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``X`` from the ``(m n) x (m n)`` linear system; raises ``LinAlgError`` if singular."""
    m, n = q.shape
    system = np.kron(a, np.eye(n)) + np.kron(np.eye(m), b.T)
    return np.linalg.solve(system, q.reshape(m * n)).reshape(m, n)


def sylvester_eigen(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray | None:
    """``X`` through the eigendecompositions, or ``None`` when they are ill-conditioned.

    Raises
    ------
    numpy.linalg.LinAlgError
        If an eigenvalue of ``a`` is minus one of ``b`` (the equation is singular).
    """
    wa, va = np.linalg.eig(a)
    wb, vb = np.linalg.eig(b)
    if np.linalg.cond(va) * np.linalg.cond(vb) > EIGEN_CONDITION_LIMIT:
        return None
    denominators = wa[:, None] + wb[None, :]
    if np.any(denominators == 0):
        raise LinAlgError("the Sylvester equation is singular")
    y = np.linalg.solve(va, q @ vb) / denominators
    x = np.linalg.solve(vb.T, (va @ y).T).T
    return x if np.iscomplexobj(a) or np.iscomplexobj(b) or np.iscomplexobj(q) else x.real


def sylvester(a: np.ndarray, b: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``X`` with ``a @ X + X @ b == q`` for one triple of matrices (see the module)."""
    if q.size == 0:
        return np.zeros(q.shape, dtype=np.result_type(a, b, q))
    if q.size > KRONECKER_LIMIT:
        x = sylvester_eigen(a, b, q)
        if x is not None:
            return x
    return sylvester_kronecker(a, b, q)


def solve_sylvester_perform(
    op: SolveSylvester, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """:func:`sylvester` for each matrix of the (broadcast) batch; NaN where singular."""
    dtype = np.dtype(node.outputs[0].type.dtype)
    work = np.complex128 if dtype.kind == "c" else np.float64
    a, b, q = (np.asarray(x, dtype=work) for x in inputs)
    check_square(op, a, "A")
    check_square(op, b, "B")
    if q.ndim < 2 or q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ValueError(
            f"{op}: A has shape {a.shape} and B {b.shape}, so Q must end in "
            f"({a.shape[-1]}, {b.shape[-1]}), got {q.shape}"
        )
    batch_check(op, node, [a, b, q], [2, 2, 2])
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    q = np.broadcast_to(q, batch + q.shape[-2:])
    result = np.empty(batch + q.shape[-2:], dtype=work)
    for idx in np.ndindex(*batch):
        try:
            result[idx] = sylvester(a[idx], b[idx], q[idx])
        except LinAlgError:
            result[idx] = np.nan
    out[0][0] = result.astype(dtype, copy=False)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {SolveSylvester: solve_sylvester_perform}
)
