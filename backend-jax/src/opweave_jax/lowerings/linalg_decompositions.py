"""Lowerings of the matrix decompositions: ``Eig``, ``Eigh``, ``Eigvalsh``, ``SVD``, ``QR``,
``LU``, ``LUFactor``, ``PivotToPermutations`` and ``Schur``, through ``jax.numpy.linalg``,
``jax.scipy.linalg`` and ``jax.lax.linalg``, on batches of matrices, in the output dtype.

On the CPU, jaxlib calls the LAPACK routines NumPy and SciPy call (``geev``, ``syevd``,
``gesdd``, ``geqrf``, ``getrf``, ``gees``); the results agree with the ``py`` backend's to
rounding. Eigenvectors and singular vectors are defined up to a sign (a phase when complex):
the tests compare products that do not depend on it. ``Schur`` lowers on the CPU only
(JAX has no GPU or TPU kernel for it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.link.implementations import CAPABILITY_ATTRIBUTE, PARTIAL
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from opweave.tensor.linalg.decomposition.schur import Schur
from opweave.tensor.nlinalg import QR, SVD, Eig, Eigh
from opweave_jax.lowerings.linalg import cholesky_factor, require, swap
from opweave_jax.lowerings.scalar import out_dtype

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]
LinAlgError = np.linalg.LinAlgError
_lax = jax.lax.linalg


def _work_dtype(node: Apply, i: int) -> np.dtype[Any]:
    """Output ``i``'s dtype, made complex when an input is complex."""
    dtype = out_dtype(node, i)
    kinds = {np.dtype(v.type.dtype).kind for v in node.inputs}  # type: ignore[attr-defined]
    if "c" in kinds and dtype.kind != "c":
        return np.result_type(dtype, np.complex64)
    return dtype


def _hermitian(a: Any, lower: bool) -> Any:
    """The Hermitian matrices one triangle of ``a`` describes."""
    part = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    return (jnp.tril(a) if lower else jnp.triu(a)) + swap(part).conj()


def _eigh(op: Any, a: Any, b: Any | None, vectors: bool) -> tuple[Any, Any]:
    """``(w, v)`` of the standard problem of ``a`` (one triangle read) or, with ``b``, of
    ``L^-1 a L^-H`` for ``b = L L^H`` (``v`` mapped back; ``None`` if not ``vectors``);
    ``b`` not positive definite raises ``LinAlgError`` after the call."""
    if a.shape[-1] == 0:
        return jnp.zeros(a.shape[:-1], a.real.dtype), a
    if b is None:
        v, w = _lax.eigh(a, lower=op.lower, symmetrize_input=False)
        return w, v
    if a.shape != b.shape:
        raise ValueError(f"{op}: a has shape {a.shape} but b has {b.shape}")
    factor = cholesky_factor(_hermitian(b, op.lower))
    require(~jnp.any(jnp.isnan(factor)), LinAlgError, f"{op}: b is not positive definite")
    full = _hermitian(a, op.lower)

    def solve(m: Any) -> Any:
        return _lax.triangular_solve(factor, m, left_side=True, lower=True)

    c = swap(solve(swap(solve(full)).conj())).conj()
    y, w = _lax.eigh(c, lower=True, symmetrize_input=False)
    if not vectors:
        return w, None
    v = _lax.triangular_solve(swap(factor).conj(), y, left_side=True, lower=False)
    return w, v


def eigh(op: Eigh, node: Apply) -> Fn:
    """``syevd`` of the triangle ``op.lower`` names; with ``b``, the generalized problem."""
    dtype = _work_dtype(node, 1)

    def run(a: Any, b: Any = None) -> Any:
        a = jnp.asarray(a).astype(dtype)
        b = None if b is None else jnp.asarray(b).astype(dtype)
        return _eigh(op, a, b, vectors=True)

    return run


def eigvalsh(op: Eigvalsh, node: Apply) -> Fn:
    """The eigenvalues of :func:`eigh`."""
    dtype = _work_dtype(node, 0)

    def run(a: Any, b: Any = None) -> Any:
        a = jnp.asarray(a).astype(dtype)
        b = None if b is None else jnp.asarray(b).astype(dtype)
        return _eigh(op, a, b, vectors=False)[0]

    return run


def eig(op: Eig, node: Apply) -> Fn:
    """``jnp.linalg.eig`` (LAPACK ``geev`` on the CPU)."""
    dtype = out_dtype(node)
    real = np.finfo(dtype).dtype

    def run(x: Any) -> Any:
        x = jnp.asarray(x)
        x = x.astype(dtype if x.dtype.kind == "c" else real)
        if x.shape[-1] == 0:
            return jnp.zeros(x.shape[:-1], dtype), x.astype(dtype)
        w, v = jnp.linalg.eig(x)
        return w, v

    return run


def svd(op: SVD, node: Apply) -> Fn:
    """``jnp.linalg.svd`` (``gesdd``)."""
    dtype = _work_dtype(node, 0)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        if op.compute_uv:
            u, s, vt = jnp.linalg.svd(x, full_matrices=op.full_matrices)
            return u, s, vt
        return jnp.linalg.svd(x, compute_uv=False)

    return run


def qr(op: QR, node: Apply) -> Fn:
    """``jnp.linalg.qr`` with SciPy's modes (``"r"`` padded to ``(m, n)``, ``"raw"`` in
    LAPACK's layout, with ``R``)."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        m, n = x.shape[-2:]
        k = min(m, n)
        if op.mode in ("full", "economic"):
            q, r = jnp.linalg.qr(x, mode="complete" if op.mode == "full" else "reduced")
            return q, r
        if op.mode == "r":
            r = jnp.linalg.qr(x, mode="r")
            return jnp.zeros(x.shape, dtype).at[..., :k, :].set(r[..., :k, :])
        h, tau = jnp.linalg.qr(x, mode="raw")
        h = swap(h)
        return h, tau, jnp.triu(h[..., :k, :])

    return run


def _getrf(a: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, order)`` of LAPACK's ``getrf`` (``a[order] == L @ U``)."""
    if a.shape[-1] == 0:
        empty = jnp.zeros(a.shape[:-1], np.int32)
        return a, empty, empty
    return _lax.lu(a)


def lu(op: LU, node: Apply) -> Fn:
    """``P, L, U`` (or ``p, L, U``, or ``P @ L, U``) with ``A == P @ L @ U``."""
    dtype = out_dtype(node, len(node.outputs) - 1)

    def run(x: Any) -> Any:
        a = jnp.asarray(x).astype(dtype)
        m = a.shape[-1]
        packed, _, order = _getrf(a)
        lower = jnp.tril(packed, -1) + jnp.eye(m, dtype=dtype)
        upper = jnp.triu(packed)
        p = jnp.argsort(order, axis=-1)  # A == L[p] @ U
        if op.p_indices:
            return p.astype(np.int32), lower, upper
        perm = (p[..., :, None] == jnp.arange(m)).astype(out_dtype(node, 0))
        if op.permute_l:
            return perm.astype(dtype) @ lower, upper
        return perm, lower, upper

    return run


def lu_factor(op: LUFactor, node: Apply) -> Fn:
    """``getrf``'s packed factors and 0-based pivots; NaN factors for a singular matrix."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        a = jnp.asarray(x).astype(dtype)
        packed, pivots, _ = _getrf(a)
        singular = jnp.any(jnp.diagonal(packed, axis1=-2, axis2=-1) == 0, axis=-1)
        packed = jnp.where(singular[..., None, None], jnp.full((), jnp.nan, dtype), packed)
        return packed, pivots.astype(np.int32)

    return run


def pivot_to_permutations(op: PivotToPermutations, node: Apply) -> Fn:
    """The row order of the interchanges (or its inverse); pivots out of range raise
    ``ValueError`` (after the call when they depend on the values)."""

    def run(pivots: Any) -> Any:
        pivots = jnp.asarray(pivots)
        m = pivots.shape[-1]
        if m == 0:
            return jnp.zeros(pivots.shape, np.int64)
        require(
            jnp.all((pivots >= 0) & (pivots < m)),
            ValueError,
            f"{op}: pivots must lie in [0, {m})",
        )
        order = _lax.lu_pivots_to_permutation(pivots.astype(np.int32), m).astype(np.int64)
        return order if op.inverse else jnp.argsort(order, axis=-1).astype(np.int64)

    return run


def schur(op: Schur, node: Apply) -> Fn:
    """``jax.scipy.linalg.schur`` (LAPACK ``gees``, on the CPU); NaN for a matrix that is
    not finite. ``sort`` has no JAX equivalent: refused when compiling."""
    if op.sort is not None:
        raise NoImplementationError(
            f"jax linker: no lowering implements {op} (node {node}) with sort={op.sort!r} for "
            "backend 'jax': jax.scipy.linalg.schur does not reorder eigenvalues"
        )
    dtype = out_dtype(node)
    output = "complex" if dtype.kind == "c" else "real"

    def one(a: Any) -> Any:
        ok = jnp.all(jnp.isfinite(a))
        t, z = jax.scipy.linalg.schur(jnp.where(ok, a, jnp.zeros((), a.dtype)), output=output)
        nan = jnp.full((), jnp.nan, t.dtype)
        return jnp.where(ok, t, nan).astype(dtype), jnp.where(ok, z, nan).astype(dtype)

    def run(x: Any) -> Any:
        a = jnp.asarray(x).astype(dtype)
        if a.shape[-1] == 0:
            return a, a
        fn = one
        for _ in a.shape[:-2]:
            fn = jax.vmap(fn)
        return fn(a)

    return run


# Lowered without ``sort`` only: ``info --ops`` says "partly".
setattr(schur, CAPABILITY_ATTRIBUTE, PARTIAL)

#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Eig: eig,
    Eigh: eigh,
    Eigvalsh: eigvalsh,
    SVD: svd,
    QR: qr,
    LU: lu,
    LUFactor: lu_factor,
    PivotToPermutations: pivot_to_permutations,
    Schur: schur,
}
