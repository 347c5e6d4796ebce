"""Lowerings of the matrix equations of :mod:`opweave.tensor.linalg.solvers`:
``SolveSylvester`` (``jax.scipy.linalg.solve_sylvester``) and ``SolveDiscreteARE`` (the
structure-preserving doubling algorithm the ``py`` backend runs, as a ``jax.lax.while_loop``).

Both are solved in double precision, matrix by matrix over the (broadcast) batch, and cast
to the output dtype; a singular equation, or a Riccati equation whose iteration does not
converge, gives NaN for that matrix, as on the ``py`` backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.solvers.linear_control import SolveSylvester
from opweave.tensor.linalg.solvers.riccati import SolveDiscreteARE
from opweave_jax.lowerings.linalg import check_square, lu_solve
from opweave_jax.lowerings.scalar import out_dtype

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]

#: The most doubling steps before giving up (as on the ``py`` backend).
MAX_DOUBLINGS = 100


def _work(node: Apply) -> tuple[np.dtype[Any], type]:
    dtype = out_dtype(node)
    return dtype, np.complex128 if dtype.kind == "c" else np.float64


def _batched(fn: Fn, batch_ndim: int) -> Fn:
    for _ in range(batch_ndim):
        fn = jax.vmap(fn)
    return fn


def solve_sylvester(op: SolveSylvester, node: Apply) -> Fn:
    """``jax.scipy.linalg.solve_sylvester`` (Bartels-Stewart through the Schur form: on the
    CPU only), in double precision, matrix by matrix; NaN where the equation is singular
    (an eigenvalue of ``A`` is minus one of ``B``) or not finite."""
    dtype, work = _work(node)

    def one(a: Any, b: Any, q: Any) -> Any:
        if q.size == 0:
            return q
        ok = jnp.all(jnp.isfinite(a)) & jnp.all(jnp.isfinite(b)) & jnp.all(jnp.isfinite(q))
        safe = [jnp.where(ok, v, jnp.zeros((), v.dtype)) for v in (a, b, q)]
        x = jax.scipy.linalg.solve_sylvester(*safe, tol=0.0)
        wa, wb = jnp.linalg.eigvals(safe[0]), jnp.linalg.eigvals(safe[1])
        singular = jnp.any(wa[:, None] + wb[None, :] == 0)
        return jnp.where(ok & ~singular & jnp.all(jnp.isfinite(x)), x, jnp.nan)

    def run(a: Any, b: Any, q: Any) -> Any:
        a, b, q = (jnp.asarray(v).astype(work) for v in (a, b, q))
        check_square(op, a, "A")
        check_square(op, b, "B")
        if q.ndim < 2 or q.shape[-2:] != (a.shape[-1], b.shape[-1]):
            raise ValueError(
                f"{op}: A has shape {a.shape} and B {b.shape}, so Q must end in "
                f"({a.shape[-1]}, {b.shape[-1]}), got {q.shape}"
            )
        batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2])
        a, b, q = (jnp.broadcast_to(v, batch + v.shape[-2:]) for v in (a, b, q))
        result = _batched(one, len(batch))(a, b, q)
        return (result if dtype.kind == "c" else jnp.real(result)).astype(dtype)

    return run


def _mm(x: Any, y: Any) -> Any:
    return jnp.matmul(x, y, precision=jax.lax.Precision.HIGHEST)


def _adj(x: Any) -> Any:
    return jnp.conj(x).T


def _norm1(x: Any) -> Any:
    return jnp.max(jnp.sum(jnp.abs(x), axis=0))


def _doubling(a: Any, b: Any, q: Any, r: Any) -> Any:
    """The stabilising solution of one quadruple of matrices: the limit of
    ``H_{k+1} = H_k + A_k^H H_k W_k^-1 A_k`` (``W_k = I + G_k H_k``), NaN if ``R`` or a
    ``W_k`` is singular or the iteration does not converge in :data:`MAX_DOUBLINGS` steps."""
    m = a.shape[0]
    eye = jnp.eye(m, dtype=a.dtype)
    r_b, r_singular = lu_solve(r, _adj(b))
    g = _mm(b, r_b)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        k, ak, gk, hk, scale, _, failed = state
        w = eye + _mm(gk, hk)
        both, singular = lu_solve(w, jnp.concatenate([ak, gk], axis=1))
        w_a, w_g = both[:, :m], both[:, m:]
        h_new = hk + _mm(_mm(_adj(ak), hk), w_a)
        g_new = gk + _mm(_mm(ak, w_g), _adj(ak))
        h_new = 0.5 * (h_new + _adj(h_new))
        g_new = 0.5 * (g_new + _adj(g_new))
        failed = failed | singular | ~jnp.all(jnp.isfinite(h_new))
        change = _norm1(h_new - hk)
        scale = jnp.maximum(scale, _norm1(h_new))
        return k + 1, _mm(ak, w_a), g_new, h_new, scale, change <= 1e-15 * scale, failed

    def going(state: tuple[Any, ...]) -> Any:
        k, *_, converged, failed = state
        return (k < MAX_DOUBLINGS) & ~converged & ~failed

    scale = jnp.maximum(_norm1(q), 1e-300)
    state = (0, a, 0.5 * (g + _adj(g)), q, scale, jnp.array(False), r_singular)
    _, _, _, x, _, converged, failed = jax.lax.while_loop(going, step, state)
    return jnp.where(converged & ~failed, x, jnp.full((), jnp.nan, x.dtype))


def solve_discrete_are(op: SolveDiscreteARE, node: Apply) -> Fn:
    """:func:`_doubling` for each matrix of the (broadcast) batch."""
    dtype, work = _work(node)

    def run(a: Any, b: Any, q: Any, r: Any) -> Any:
        a, b, q, r = (jnp.asarray(v).astype(work) for v in (a, b, q, r))
        for x, name in ((a, "A"), (q, "Q"), (r, "R")):
            check_square(op, x, name)
        m, n = a.shape[-1], r.shape[-1]
        if b.shape[-2:] != (m, n) or q.shape[-1] != m:
            raise ValueError(
                f"{op}: A {a.shape}, B {b.shape}, Q {q.shape} and R {r.shape} must end in "
                f"({m}, {m}), ({m}, {n}), ({m}, {m}) and ({n}, {n})"
            )
        if op.enforce_Q_symmetric:
            q = 0.5 * (q + jnp.conj(jnp.swapaxes(q, -1, -2)))
        batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2], q.shape[:-2], r.shape[:-2])
        a, b, q, r = (jnp.broadcast_to(v, batch + v.shape[-2:]) for v in (a, b, q, r))
        if m == 0:
            return jnp.zeros((*batch, 0, 0), dtype)
        return _batched(_doubling, len(batch))(a, b, q, r).astype(dtype)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    SolveSylvester: solve_sylvester,
    SolveDiscreteARE: solve_discrete_are,
}
