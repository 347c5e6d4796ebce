"""Lowerings of the linear algebra of :mod:`opweave.tensor.nlinalg`,
:mod:`opweave.tensor.slinalg` and :mod:`opweave.tensor.linalg` through ``jax.numpy.linalg``,
``jax.scipy.linalg`` and ``jax.lax.linalg``.

Every Op takes batches of matrices (leading axes) as the ``py`` backend's kernels do, and
computes in its output dtype. Failures follow the ``py`` backend:

- a matrix whose solve fails (exactly singular, a Cholesky factor that fails) gives NaN for
  that matrix of the batch (``Solve``, ``SolveTriangular``, ``CholeskySolve``, ``Cholesky``
  with ``on_error="nan"``, ``LUFactor``);
- where the ``py`` kernel raises (``MatrixInverse`` and ``TensorInv`` of a singular matrix,
  ``TensorSolve`` with a singular system, ``Cholesky`` with ``on_error="raise"``, ``Eigh`` and
  ``Eigvalsh`` with a ``b`` that is not positive definite), the condition is checked after
  the call (:func:`opweave_jax.context.defer_check`) and the same exception type is raised
  then: the outputs are computed first.

The decompositions (``SVD``, ``QR``, ``LU``, ``Schur``, ...) are in
:mod:`opweave_jax.lowerings.linalg_decompositions`, the matrix equations (Sylvester,
Riccati) in :mod:`opweave_jax.lowerings.linalg_solvers`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.constructors import BlockDiagonal
from opweave.tensor.linalg.products import Expm
from opweave.tensor.nlinalg import (
    Det,
    Lstsq,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    TensorInv,
    TensorSolve,
)
from opweave.tensor.slinalg import Cholesky, CholeskySolve, SolveBase, SolveTriangular
from opweave_jax.context import defer_check
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import is_static

__all__ = ["LOWERINGS", "check_square", "cholesky_factor", "lu_solve", "require", "swap"]

Fn = Callable[..., Any]
LinAlgError = np.linalg.LinAlgError
_lax = jax.lax.linalg


def require(condition: Any, exc_type: type[Exception], msg: str) -> None:
    """Raise ``exc_type(msg)`` now if ``condition`` is known and false, else after the call
    when it turns out false (:func:`~opweave_jax.context.defer_check`)."""
    if is_static(condition):
        if not bool(np.all(np.asarray(condition))):
            raise exc_type(msg)
    else:
        defer_check(jnp.all(condition), exc_type, msg)


def swap(x: Any) -> Any:
    """``x`` with its last two axes exchanged."""
    return jnp.swapaxes(x, -1, -2)


def check_square(op: Any, x: Any, name: str) -> None:
    """``ValueError`` unless the last two axes of ``x`` have equal lengths."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{op}: the input {name} must hold square matrices, got shape {x.shape}")


def _diagonal(x: Any) -> Any:
    return jnp.diagonal(x, axis1=-2, axis2=-1)


def _broadcast_batch(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` (both stacks of matrices) with their batch axes broadcast."""
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (
        jnp.broadcast_to(a, batch + a.shape[-2:]),
        jnp.broadcast_to(b, batch + b.shape[-2:]),
    )


def _nan_where(bad: Any, x: Any) -> Any:
    """``x`` with the matrices where ``bad`` (one flag per matrix) replaced by NaN."""
    return jnp.where(bad[..., None, None], jnp.full((), jnp.nan, x.dtype), x)


def lu_solve(a: Any, b: Any) -> tuple[Any, Any]:
    """``(x, singular)``: ``a @ x = b`` by LU with partial pivoting (LAPACK ``getrf`` and
    two triangular solves), and which matrices of the batch are exactly singular."""
    a, b = _broadcast_batch(a, b)
    if a.shape[-1] == 0:
        return b, jnp.zeros(a.shape[:-2], bool)
    lu, _, perm = _lax.lu(a)
    pb = jnp.take_along_axis(b, perm[..., :, None], axis=-2)
    y = _lax.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    x = _lax.triangular_solve(lu, y, left_side=True, lower=False)
    return x, jnp.any(_diagonal(lu) == 0, axis=-1)


def _triangular_solve(a: Any, b: Any, lower: bool, unit_diagonal: bool = False) -> Any:
    """``a @ x = b`` reading one triangle of ``a``; NaN for a zero on the diagonal."""
    a, b = _broadcast_batch(a, b)
    if a.shape[-1] == 0:
        return b
    x = _lax.triangular_solve(a, b, left_side=True, lower=lower, unit_diagonal=unit_diagonal)
    if unit_diagonal:
        return x
    return _nan_where(jnp.any(_diagonal(a) == 0, axis=-1), x)


def _from_triangle(a: Any, lower: bool, hermitian: bool) -> Any:
    """The symmetric (or Hermitian) matrices one triangle of ``a`` describes."""
    part = jnp.tril(a, -1) if lower else jnp.triu(a, 1)
    mirrored = swap(jnp.conj(part) if hermitian else part)
    return (jnp.tril(a) if lower else jnp.triu(a)) + mirrored


def cholesky_factor(x: Any) -> Any:
    """The lower Cholesky factor read from the lower triangle of ``x`` (NaN for a matrix
    that is not positive definite)."""
    if x.shape[-1] == 0:
        return x
    return _lax.cholesky(x, symmetrize_input=False)


# ====================================================================== slinalg


def cholesky(op: Cholesky, node: Apply) -> Fn:
    """The factor of the triangle ``op.lower`` names; NaN, or ``LinAlgError`` after the
    call (``op.on_error``), for a matrix that is not positive definite."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        check_square(op, x, "x")
        src = x if op.lower else swap(x)
        factor = cholesky_factor(src)
        # A factorization that fails on finite values (LAPACK's failure) gives a matrix
        # full of NaN; NaN in the input propagates through the lower triangle only.
        finite = jnp.all(jnp.isfinite(jnp.tril(src)), axis=(-2, -1))
        failed = jnp.any(jnp.isnan(factor), axis=(-2, -1)) & finite
        if op.on_error == "raise":
            require(~failed, LinAlgError, f"{op}: a matrix is not positive definite")
        factor = _nan_where(failed, factor)
        return factor if op.lower else swap(factor)

    return run


def _solver(op: SolveBase) -> Callable[[Any, Any], Any]:
    """``(a, b) -> x`` for the Op's kind and props (``b`` holding matrices)."""

    def general(a: Any, b: Any) -> Any:
        x, singular = lu_solve(a, b)
        return _nan_where(singular, x)

    def positive(a: Any, b: Any) -> Any:
        factor = cholesky_factor(a)
        y = _triangular_solve(factor, b, lower=True)
        return _triangular_solve(swap(factor).conj(), y, lower=False)

    if isinstance(op, SolveTriangular):
        return lambda a, b: _triangular_solve(a, b, op.lower, op.unit_diagonal)
    if isinstance(op, CholeskySolve):

        def with_factor(c: Any, b: Any) -> Any:
            first, second = (c, swap(c).conj()) if op.lower else (swap(c).conj(), c)
            y = _triangular_solve(first, b, lower=True)
            return _triangular_solve(second, y, lower=False)

        return with_factor
    kind = getattr(op, "assume_a", "gen")
    if kind in ("sym", "her"):
        return lambda a, b: general(_from_triangle(a, op.lower, kind == "her"), b)
    if kind == "pos":
        return lambda a, b: positive(_from_triangle(a, op.lower, True), b)
    if kind == "tridiagonal":
        return lambda a, b: general(jnp.triu(jnp.tril(a, 1), -1), b)
    return general  # "gen" and "banded"


def solve(op: SolveBase, node: Apply) -> Fn:
    """The solve of ``op``'s kind; NaN for a matrix whose factorization or solve fails."""
    dtype = out_dtype(node)
    fn = _solver(op)

    def run(a: Any, b: Any) -> Any:
        a, b = jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)
        check_square(op, a, "a")
        rows = b.shape[b.ndim - op.b_ndim]
        if rows != a.shape[-1]:
            raise ValueError(
                f"{op}: a has shape {a.shape} but b has {b.shape}: b must have {a.shape[-1]} rows"
            )
        rhs = b[..., None] if op.b_ndim == 1 else b
        x = fn(a, rhs)
        return x[..., 0] if op.b_ndim == 1 else x

    return run


# ====================================================================== nlinalg


def _inverse(op: Any, x: Any) -> Any:
    """The inverses of ``x``'s matrices; ``LinAlgError`` after the call if one is singular."""
    check_square(op, x, "x")
    eye = jnp.broadcast_to(jnp.eye(x.shape[-1], dtype=x.dtype), x.shape)
    inv, singular = lu_solve(x, eye)
    require(~singular, LinAlgError, f"{op}: a matrix is singular and has no inverse")
    return inv


def matrix_inverse(op: MatrixInverse, node: Apply) -> Fn:
    """LU with partial pivoting (``numpy.linalg.inv``'s ``gesv``)."""
    dtype = out_dtype(node)
    return lambda x: _inverse(op, jnp.asarray(x).astype(dtype))


def det(op: Det, node: Apply) -> Fn:
    """``jnp.linalg.det``."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        check_square(op, x, "x")
        return jnp.linalg.det(x)

    return run


def slogdet(op: SLogDet, node: Apply) -> Fn:
    """``jnp.linalg.slogdet``: the sign and the log of the absolute determinant."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        check_square(op, x, "x")
        sign, logabsdet = jnp.linalg.slogdet(x)
        return sign, logabsdet

    return run


def matrix_pinv(op: MatrixPinv, node: Apply) -> Fn:
    """``jnp.linalg.pinv`` with NumPy's default cutoff (``1e-15`` times the largest
    singular value)."""
    dtype = out_dtype(node)

    def run(x: Any) -> Any:
        x = jnp.asarray(x).astype(dtype)
        return jnp.linalg.pinv(x, rtol=1e-15, hermitian=op.hermitian)

    return run


def lstsq(op: Lstsq, node: Apply) -> Fn:
    """``jnp.linalg.lstsq``. NumPy's residuals are empty where ``a`` is not tall (known
    when compiling) or rank deficient (known only after the call): the latter, a length
    that depends on the values, raises ``NotImplementedError`` after the call."""
    dtype = out_dtype(node)

    def run(a: Any, b: Any, rcond: Any = None) -> Any:
        a, b = jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)
        m, n = a.shape
        if rcond is not None:
            rcond = jnp.asarray(rcond).astype(np.finfo(dtype).dtype)
        x, resid, rank, s = jnp.linalg.lstsq(a, b, rcond=rcond)
        if m <= n or a.size == 0:
            return x, jnp.zeros((0,), resid.dtype), rank, s
        require(
            rank == n,
            NotImplementedError,
            f"jax linker: {op} of a rank-deficient matrix has residuals of a length that "
            "depends on the values (NumPy's are then empty); XLA compiles for fixed shapes",
        )
        return x, resid, rank, s

    return run


def tensor_inv(op: TensorInv, node: Apply) -> Fn:
    """``numpy.linalg.tensorinv``: the inverse of ``a`` as a square matrix."""
    dtype = out_dtype(node)

    def run(a: Any) -> Any:
        a = jnp.asarray(a).astype(dtype)
        left, right = a.shape[: op.ind], a.shape[op.ind :]
        rows, cols = int(np.prod(left)), int(np.prod(right))
        if rows != cols:
            raise LinAlgError(
                f"{op}: the tensor of shape {a.shape} has no inverse (its first {op.ind} axes "
                "and the others do not have the same size)"
            )
        return _inverse(op, a.reshape(rows, cols)).reshape(*right, *left)

    return run


def tensor_solve(op: TensorSolve, node: Apply) -> Fn:
    """``numpy.linalg.tensorsolve``; a singular system raises ``LinAlgError`` after the call."""
    dtype = out_dtype(node)

    def run(a: Any, b: Any) -> Any:
        a, b = jnp.asarray(a).astype(dtype), jnp.asarray(b).astype(dtype)
        if op.axes is not None:
            axes = [ax % a.ndim for ax in op.axes]
            a = jnp.moveaxis(a, axes, list(range(a.ndim - len(axes), a.ndim)))
        rest = a.shape[b.ndim :]
        rows, cols = int(np.prod(a.shape[: b.ndim])), int(np.prod(rest))
        if rows != cols or a.shape[: b.ndim] != b.shape:
            raise LinAlgError(
                f"{op}: a of shape {a.shape} and b of shape {b.shape} do not make a square system"
            )
        x, singular = lu_solve(a.reshape(rows, cols), b.reshape(rows, 1))
        require(~singular, LinAlgError, f"{op}: the system is singular")
        return x.reshape(rest)

    return run


# ====================================================================== linalg package


def block_diagonal(op: BlockDiagonal, node: Apply) -> Fn:
    """Zeros of the total shape with each input in its diagonal block (batches broadcast)."""
    dtype = out_dtype(node)

    def run(*mats: Any) -> Any:
        mats = tuple(jnp.asarray(m).astype(dtype) for m in mats)
        batch = jnp.broadcast_shapes(*(m.shape[:-2] for m in mats))
        rows = sum(m.shape[-2] for m in mats)
        cols = sum(m.shape[-1] for m in mats)
        result = jnp.zeros((*batch, rows, cols), dtype)
        r = c = 0
        for m in mats:
            result = result.at[..., r : r + m.shape[-2], c : c + m.shape[-1]].set(m)
            r, c = r + m.shape[-2], c + m.shape[-1]
        return result

    return run


def expm(op: Expm, node: Apply) -> Fn:
    """``jax.scipy.linalg.expm`` (scaling and squaring with Padé approximants) in double
    precision, cast to the output dtype, as the ``py`` kernel computes."""
    dtype = out_dtype(node)
    work = np.complex128 if dtype.kind == "c" else np.float64

    def run(a: Any) -> Any:
        a = jnp.asarray(a).astype(work)
        check_square(op, a, "A")
        if a.shape[-1] == 0:
            return a.astype(dtype)
        return jax.scipy.linalg.expm(a).astype(dtype)

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Cholesky: cholesky,
    SolveBase: solve,
    MatrixInverse: matrix_inverse,
    Det: det,
    SLogDet: slogdet,
    MatrixPinv: matrix_pinv,
    Lstsq: lstsq,
    TensorInv: tensor_inv,
    TensorSolve: tensor_solve,
    BlockDiagonal: block_diagonal,
    Expm: expm,
}
