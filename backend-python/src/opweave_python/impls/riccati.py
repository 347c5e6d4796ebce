"""NumPy implementation of :mod:`opweave.tensor.linalg.solvers.riccati`: the discrete algebraic
Riccati equation ``A^H X A - X - A^H X B (R + B^H X B)^-1 B^H X A + Q = 0``, without SciPy.

The equation is ``X = A^H X (I + G X)^-1 A + Q`` with ``G = B R^-1 B^H``. Its stabilising
solution is the limit of the structure-preserving doubling algorithm (Chu, Fan and Lin
2005), which converges quadratically::

    W_k = I + G_k H_k
    A_{k+1} = A_k W_k^-1 A_k
    G_{k+1} = G_k + A_k W_k^-1 G_k A_k^H
    H_{k+1} = H_k + A_k^H H_k W_k^-1 A_k

from ``A_0 = A``, ``G_0 = G``, ``H_0 = Q``; ``H_k -> X``. Each matrix of the batch is
solved in double precision; the result is made exactly Hermitian, ``(X + X^H) / 2``. A
singular ``R`` or ``W_k``, or no convergence within :data:`MAX_DOUBLINGS` steps (no
stabilising solution), gives NaN for that matrix, as PyTensor does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.solvers.riccati import SolveDiscreteARE
from opweave_python.impls.slinalg import batch_check, check_square

__all__ = ["MAX_DOUBLINGS", "PERFORMS", "discrete_are", "solve_discrete_are_perform"]

#: The most doubling steps before giving up (each squares the convergence factor).
MAX_DOUBLINGS = 100


def _adj(x: np.ndarray) -> np.ndarray:
    return x.conj().T


def _doubling(a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray) -> np.ndarray | None:
    """The limit of the doubling iteration, or ``None`` if it does not converge.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``R`` or some ``W_k`` is singular.
    """
    eye = np.eye(a.shape[0])
    g = b @ np.linalg.solve(r, _adj(b))
    gk, hk, ak = 0.5 * (g + _adj(g)), q, a
    scale = max(float(np.linalg.norm(q, 1)), 1e-300)
    for _ in range(MAX_DOUBLINGS):
        w = eye + gk @ hk
        w_a = np.linalg.solve(w, ak)  # W^-1 A
        w_g = np.linalg.solve(w, gk)  # W^-1 G
        h_new = hk + _adj(ak) @ hk @ w_a
        gk = gk + ak @ w_g @ _adj(ak)
        ak = ak @ w_a
        h_new = 0.5 * (h_new + _adj(h_new))
        gk = 0.5 * (gk + _adj(gk))
        if not np.all(np.isfinite(h_new)):
            return None
        change = float(np.linalg.norm(h_new - hk, 1))
        hk = h_new
        scale = max(scale, float(np.linalg.norm(hk, 1)))
        if change <= 1e-15 * scale:
            return hk
    return None


def discrete_are(a: np.ndarray, b: np.ndarray, q: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The stabilising solution for one quadruple of matrices (NaN if none is found)."""
    m = a.shape[0]
    dtype = np.result_type(a, b, q, r)
    if m == 0:
        return np.zeros((0, 0), dtype=dtype)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            x = _doubling(a, b, q, r)
    except np.linalg.LinAlgError:
        x = None
    return np.full((m, m), np.nan, dtype=dtype) if x is None else x


def solve_discrete_are_perform(
    op: SolveDiscreteARE, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """:func:`discrete_are` for each matrix of the (broadcast) batch."""
    dtype = np.dtype(node.outputs[0].type.dtype)
    work = np.complex128 if dtype.kind == "c" else np.float64
    a, b, q, r = (np.asarray(x, dtype=work) for x in inputs)
    for x, name in ((a, "A"), (q, "Q"), (r, "R")):
        check_square(op, x, name)
    m, n = a.shape[-1], r.shape[-1]
    if b.shape[-2:] != (m, n) or q.shape[-1] != m:
        raise ValueError(
            f"{op}: A {a.shape}, B {b.shape}, Q {q.shape} and R {r.shape} must end in "
            f"({m}, {m}), ({m}, {n}), ({m}, {m}) and ({n}, {n})"
        )
    batch_check(op, node, [a, b, q, r], [2, 2, 2, 2])
    if op.enforce_Q_symmetric:
        q = 0.5 * (q + np.swapaxes(q, -1, -2).conj())
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2], r.shape[:-2])
    a, b, q, r = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (a, b, q, r))
    result = np.empty((*batch, m, m), dtype=work)
    for idx in np.ndindex(*batch):
        result[idx] = discrete_are(a[idx], b[idx], q[idx], r[idx])
    out[0][0] = result.astype(dtype, copy=False)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {SolveDiscreteARE: solve_discrete_are_perform}
)
