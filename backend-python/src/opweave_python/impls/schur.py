"""Implementation of :mod:`opweave.tensor.linalg.decomposition.schur` with SciPy's LAPACK wrappers.

NumPy has no Schur decomposition, so these two Ops need SciPy. It is imported only when
such a node runs (:func:`scipy_linalg`), never when opweave or this backend is imported,
and its absence raises an ``ImportError`` saying so.

- ``Schur``: ``scipy.linalg.schur`` (LAPACK ``gees``), matrix by matrix.
- ``QZ``: LAPACK ``gges`` (what ``scipy.linalg.qz`` calls), then, for ``sort``, ``tgsen``
  to reorder (what ``scipy.linalg.ordqz`` does), with the same selections as
  ``scipy.linalg.ordqz``.

Each matrix (pair) is decomposed in the output's dtype. One with a non-finite entry, or
whose decomposition or reordering fails, gives NaN in all its outputs, as in PyTensor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.linalg.decomposition.schur import QZ, Schur
from opweave_python.impls.lapack import required_scipy
from opweave_python.impls.slinalg import batch_check, check_square

__all__ = ["PERFORMS", "qz_perform", "schur_perform", "scipy_linalg"]


def scipy_linalg() -> ModuleType:
    """``scipy.linalg``, imported now (:func:`~opweave_python.impls.lapack.required_scipy`)."""
    return required_scipy(
        "scipy.linalg",
        "the Schur and QZ decompositions (opweave.tensor.linalg.schur, qz, ordqz) are",
    )


# ====================================================================== Schur


def _schur_one(
    sla: ModuleType, op: Schur, a: np.ndarray, complex_form: bool
) -> tuple[np.ndarray, np.ndarray]:
    """``(T, Z)`` of one matrix (NaN if it is not finite or LAPACK fails)."""
    if a.size == 0:
        return np.empty_like(a), np.empty_like(a)
    nan = np.full(a.shape, np.nan, dtype=a.dtype)
    if not np.isfinite(a).all():
        return nan, nan.copy()
    try:
        result = sla.schur(
            a,
            output="complex" if complex_form else "real",
            sort=op.sort,
            overwrite_a=op.overwrite_a,
            check_finite=False,
        )
    except sla.LinAlgError:
        return nan, nan.copy()
    return result[0], result[1]


def schur_perform(op: Schur, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``T`` and ``Z`` for each matrix of the batch."""
    sla = scipy_linalg()
    dtype = np.dtype(tensor_type_of(node.outputs[0]).dtype)
    a = np.asarray(inputs[0], dtype=dtype)
    check_square(op, a, "A")
    t = np.empty(a.shape, dtype=dtype)
    z = np.empty(a.shape, dtype=dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        t[idx], z[idx] = _schur_one(sla, op, a[idx], dtype.kind == "c")
    out[0][0], out[1][0] = t, z


# ====================================================================== QZ


def _lhp(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    finite = beta != 0
    return np.asarray(finite & (np.real(alpha / np.where(finite, beta, 1)) < 0.0))


def _rhp(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    finite = beta != 0
    return np.asarray(finite & (np.real(alpha / np.where(finite, beta, 1)) > 0.0))


def _iuc(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    finite = beta != 0
    return np.asarray(finite & (np.abs(alpha / np.where(finite, beta, 1)) < 1.0))


def _ouc(alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    finite = beta != 0
    infinite = ~finite & (alpha != 0)
    return np.asarray(infinite | (finite & (np.abs(alpha / np.where(finite, beta, 1)) > 1.0)))


#: ``sort`` -> which generalized eigenvalues ``alpha / beta`` go first (``scipy.linalg.ordqz``).
SELECTIONS: MappingProxyType[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = (
    MappingProxyType({"lhp": _lhp, "rhp": _rhp, "iuc": _iuc, "ouc": _ouc})
)


def _eigenvalues(ab: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, beta)`` from LAPACK's ``(alphar, alphai, beta)`` or ``(alpha, beta)``."""
    if len(ab) == 3:
        alphar, alphai, beta = ab
        return alphar + alphai * np.asarray(1j, dtype=np.result_type(alphar, np.complex64)), beta
    return ab[0], ab[1]


def _qz_one(sla: ModuleType, op: QZ, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """``(AA, BB, alpha, beta, Q, Z)`` of one pair, or ``None`` where it fails."""
    if a.size == 0:
        empty = np.empty((0,), dtype=np.result_type(a.dtype, np.complex64))
        return a, b, empty, np.empty((0,), dtype=a.dtype), a.copy(), b.copy()
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return None
    (gges,) = sla.get_lapack_funcs(("gges",), (a, b))
    query = gges(lambda x: None, a, b, lwork=-1)
    lwork = int(np.real(query[-2][0]))
    aa, bb, _sdim, *ab, q, z, _work, info = gges(
        lambda x: None,
        a,
        b,
        lwork=max(lwork, 1),
        overwrite_a=op.overwrite_a,
        overwrite_b=op.overwrite_b,
        sort_t=0,
    )
    if info != 0:
        return None
    alpha, beta = _eigenvalues(ab)
    if op.sort is not None:
        select = SELECTIONS[op.sort](alpha, beta)
        tgsen = sla.get_lapack_funcs("tgsen", (aa, bb))
        lwork = 4 * aa.shape[0] + 16 if aa.dtype.kind == "f" else 1
        aa, bb, *ab, q, z, _m, _pl, _pr, _dif, info = tgsen(
            select, aa, bb, q, z, ijob=0, lwork=lwork, liwork=1
        )
        if info != 0:
            return None
        alpha, beta = _eigenvalues(ab)
    return aa, bb, alpha, beta, q, z


def qz_perform(op: QZ, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``AA, BB, Q, Z`` (and ``alpha, beta``) for each pair of the (broadcast) batch."""
    sla = scipy_linalg()
    dtype = np.dtype(tensor_type_of(node.outputs[0]).dtype)
    a, b = (np.asarray(x, dtype=dtype) for x in inputs)
    check_square(op, a, "A")
    check_square(op, b, "B")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(
            f"{op}: A and B must be square matrices of the same order, got shapes "
            f"{a.shape} and {b.shape}"
        )
    batch_check(op, node, [a, b], [2, 2])
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m = a.shape[-1]
    a, b = (np.broadcast_to(x, (*batch, m, m)) for x in (a, b))
    # alpha is complex, beta has the matrices' dtype
    results = [np.empty((*batch, m, m), dtype=dtype) for _ in range(4)]
    alpha = np.empty((*batch, m), dtype=np.result_type(dtype, np.complex64))
    beta = np.empty((*batch, m), dtype=dtype)
    for idx in np.ndindex(*batch):
        # copies: LAPACK may overwrite them, and a broadcast view is read-only
        one = _qz_one(sla, op, np.array(a[idx], order="F"), np.array(b[idx], order="F"))
        if one is None:
            for r in (*results, alpha, beta):
                r[idx] = np.nan
            continue
        aa, bb, al, be, q, z = one
        results[0][idx], results[1][idx], results[2][idx], results[3][idx] = aa, bb, q, z
        alpha[idx], beta[idx] = al, be
    aa_out, bb_out, q_out, z_out = results
    values = (
        [aa_out, bb_out, alpha, beta, q_out, z_out]
        if op.return_eigenvalues
        else [aa_out, bb_out, q_out, z_out]
    )
    for cell, value in zip(out, values, strict=True):
        cell[0] = value


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Schur: schur_perform, QZ: qz_perform}
)
