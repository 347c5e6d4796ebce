"""Kernels of :mod:`opweave.tensor.slinalg`: ``Cholesky`` and the solvers.

Everything is computed in the output's dtype (``float32``/``float64``, or complex) with
LAPACK's ``potrf('L')`` (Cholesky) and ``gesv`` (LU with partial pivoting), taken from
:func:`opweave_python.impls.lapack.routines`: for float32 and float64, the LAPACK SciPy
ships (``scipy.linalg.lapack``), matrix by matrix, when SciPy is installed (the C backend
calls that build, so both give the same numbers bit for bit); otherwise, and for complex
values, ``numpy.linalg.cholesky``/``numpy.linalg.solve`` on whole batches.

- ``Cholesky``: the factor of ``a`` (lower) or of ``a``'s transpose (upper), so that only
  the named triangle is read.
- ``Solve``: ``gesv`` on the matrix the assumption describes (the symmetric/Hermitian
  matrix of one triangle, the tridiagonal band; ``"banded"`` is solved as ``"gen"``);
  ``"pos"`` factors that matrix with ``potrf`` and solves the two triangular systems.
- Triangular systems (``SolveTriangular``, ``CholeskySolve``, ``"pos"``): ``gesv`` on the
  triangle with the other entries zeroed. LU with partial pivoting is backward stable,
  like the substitution of LAPACK's ``trtrs`` that SciPy's ``solve_triangular`` uses, so
  the results agree with SciPy's to rounding (not bit for bit); it costs ``O(m^3)``
  instead of ``O(m^2)`` per right-hand side.

A matrix whose factorization or solve fails (not positive definite, exactly singular)
gives NaN for that matrix of the batch, as in PyTensor; ``Cholesky(on_error="raise")``
raises ``numpy.linalg.LinAlgError`` naming the matrix instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.slinalg import Cholesky, CholeskySolve, Solve, SolveBase, SolveTriangular
from opweave_python.impls.lapack import NUMPY, Routines, routines

__all__ = [
    "PERFORMS",
    "cholesky_perform",
    "cholesky_solve_perform",
    "solve_base_perform",
    "solve_perform",
    "solve_triangular_perform",
]

LinAlgError = np.linalg.LinAlgError


def _dtype(node: Apply, i: int = 0) -> np.dtype[Any]:
    return np.dtype(tensor_type_of(node.outputs[i]).dtype)


def check_square(who: Any, x: np.ndarray, name: str) -> None:
    """``ValueError`` unless the last two axes of ``x`` have equal lengths."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{who}: the input {name} must hold square matrices, got shape {x.shape}")


def batch_check(
    who: Any, node: Apply, arrays: Sequence[np.ndarray], core_ndims: Sequence[int]
) -> None:
    """``ValueError`` if batch axes of ``arrays`` (of one batch rank) would broadcast where
    their static shape does not say so (only a static length of 1 broadcasts)."""
    batch_ndim = arrays[0].ndim - core_ndims[0]
    for axis in range(batch_ndim):
        if len({a.shape[axis] for a in arrays}) == 1:
            continue
        for ipt, a in zip(node.inputs, arrays, strict=True):
            if a.shape[axis] == 1 and tensor_type_of(ipt).shape[axis] != 1:
                shapes = [x.shape[:batch_ndim] for x in arrays]
                raise ValueError(
                    f"{who}: the batch shapes {shapes} do not match on axis {axis}; a length-1 "
                    "batch axis broadcasts only when its static shape says so"
                )


def _swap(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2)


def per_matrix(
    fn: Callable[..., np.ndarray],
    arrays: Sequence[np.ndarray],
    core_ndims: Sequence[int],
    on_failure: Callable[[tuple[int, ...]], None] | None = None,
    batched: bool = True,
) -> np.ndarray:
    """``fn(*arrays)`` on the whole batch (when ``batched``); if it raises ``LinAlgError``,
    or if ``fn`` takes one matrix at a time, matrix by matrix in C order, with NaN for each
    matrix that fails (after calling ``on_failure(index)``, which may raise instead)."""
    if batched:
        try:
            return fn(*arrays)
        except LinAlgError:
            pass
    batch = np.broadcast_shapes(
        *(a.shape[: a.ndim - k] for a, k in zip(arrays, core_ndims, strict=True))
    )
    arrays = [
        np.broadcast_to(a, batch + a.shape[a.ndim - k :])
        for a, k in zip(arrays, core_ndims, strict=True)
    ]
    out: np.ndarray | None = None
    failed = []
    for idx in np.ndindex(*batch):
        try:
            value = fn(*(a[idx] for a in arrays))
        except LinAlgError:
            if on_failure is not None:
                on_failure(idx)
            failed.append(idx)
            continue
        if out is None:
            out = np.empty(batch + value.shape, dtype=value.dtype)
        out[idx] = value
    if out is None:  # every matrix failed: the shape of one result from the inputs
        return np.full(
            batch + _result_core_shape(arrays, core_ndims), np.nan, dtype=arrays[-1].dtype
        )
    for idx in failed:
        out[idx] = np.nan
    return out


def _result_core_shape(arrays: Sequence[np.ndarray], core_ndims: Sequence[int]) -> tuple[int, ...]:
    """The core shape of the result: the last input's (the right-hand side, or the matrix)."""
    last, k = arrays[-1], core_ndims[-1]
    return tuple(last.shape[last.ndim - k :])


# ====================================================================== Cholesky


def cholesky_perform(
    op: Cholesky, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``potrf('L')`` of the triangle ``op.lower`` names; NaN or ``LinAlgError``
    (``op.on_error``) for a matrix that is not positive definite."""
    x = np.asarray(inputs[0], dtype=_dtype(node))
    lapack = routines(x.dtype)
    check_square(op, x, "x")
    src = x if op.lower else _swap(x)

    def fail(idx: tuple[int, ...]) -> None:
        if op.on_error == "raise":
            where = f" at batch index {idx}" if idx else ""
            raise LinAlgError(f"{op}: the matrix{where} is not positive definite")

    factor = per_matrix(lapack.cholesky, [src], [2], fail, batched=lapack.batched)
    out[0][0] = factor if op.lower else _swap(factor)


# ====================================================================== solves


def _triangle(a: np.ndarray, lower: bool, unit_diagonal: bool = False) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def triangular_solve(
    a: np.ndarray,
    b: np.ndarray,
    lower: bool,
    unit_diagonal: bool = False,
    lapack: Routines = NUMPY,
) -> np.ndarray:
    """``a @ x = b`` reading one triangle of ``a`` (``b`` matrices), with ``lapack``'s
    ``gesv`` on the triangle (ones on the diagonal if ``unit_diagonal``)."""
    return lapack.solve(_triangle(a, lower, unit_diagonal), b)


def _from_triangle(a: np.ndarray, lower: bool, hermitian: bool) -> np.ndarray:
    """The symmetric (or Hermitian) matrices that one triangle of ``a`` describes."""
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    mirrored = _swap(part.conj() if hermitian else part)
    full: np.ndarray = (np.tril(a) if lower else np.triu(a)) + mirrored
    return full


def _tridiagonal(a: np.ndarray) -> np.ndarray:
    return np.triu(np.tril(a, 1), -1)


def _solver(op: Solve, lapack: Routines) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``(a, b) -> x`` for ``op.assume_a`` (``b`` matrices)."""
    kind, lower, solve = op.assume_a, op.lower, lapack.solve
    if kind in ("sym", "her"):
        return lambda a, b: solve(_from_triangle(a, lower, kind == "her"), b)
    if kind == "pos":

        def positive(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            factor = lapack.cholesky(_from_triangle(a, lower, hermitian=True))
            y = triangular_solve(factor, b, lower=True, lapack=lapack)
            return triangular_solve(_swap(factor).conj(), y, lower=False, lapack=lapack)

        return positive
    if kind == "tridiagonal":
        return lambda a, b: solve(_tridiagonal(a), b)
    return solve  # "gen" and "banded"


def _run_solve(
    op: SolveBase,
    node: Apply,
    inputs: Sequence[Any],
    out: list[list[Any]],
    solver: Callable[[Routines], Callable[[np.ndarray, np.ndarray], np.ndarray]],
) -> None:
    """Check shapes, give vectors a column axis, solve with ``solver(routines)`` (NaN for
    failing matrices)."""
    dtype = _dtype(node)
    a = np.asarray(inputs[0], dtype=dtype)
    b = np.asarray(inputs[1], dtype=dtype)
    check_square(op, a, "a")
    batch_check(op, node, [a, b], [2, op.b_ndim])
    rows = b.shape[b.ndim - op.b_ndim]
    if rows != a.shape[-1]:
        raise ValueError(
            f"{op}: a has shape {a.shape} but b has {b.shape}: b must have {a.shape[-1]} rows"
        )
    rhs = b[..., None] if op.b_ndim == 1 else b
    lapack = routines(dtype)
    if not lapack.batched and not _broadcasts(a.shape[:-2], rhs.shape[:-2]):
        lapack = NUMPY  # which raises NumPy's error for these batch shapes
    x = per_matrix(solver(lapack), [a, rhs], [2, 2], batched=lapack.batched)
    if op.b_ndim == 1:
        x = x[..., 0]
    out[0][0] = np.asarray(x, dtype=dtype)


def _broadcasts(*shapes: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


def solve_base_perform(
    op: SolveBase, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """``gesv`` with all of ``a``."""
    _run_solve(op, node, inputs, out, lambda lapack: lapack.solve)


def solve_perform(op: Solve, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``gesv`` on the matrix ``op.assume_a`` describes."""
    _run_solve(op, node, inputs, out, lambda lapack: _solver(op, lapack))


def solve_triangular_perform(
    op: SolveTriangular, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """A solve with the triangle ``op.lower`` names (ones on the diagonal if ``unit_diagonal``)."""
    lower, unit = op.lower, op.unit_diagonal

    def solver(lapack: Routines) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        return lambda a, b: triangular_solve(a, b, lower, unit, lapack)

    _run_solve(op, node, inputs, out, solver)


def cholesky_solve_perform(
    op: CholeskySolve, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Two triangular solves with the factor ``c`` (``c @ c^H`` or ``c^H @ c``)."""
    lower = op.lower

    def solver(lapack: Routines) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        def fn(c: np.ndarray, b: np.ndarray) -> np.ndarray:
            first, second = (c, _swap(c).conj()) if lower else (_swap(c).conj(), c)
            y = triangular_solve(first, b, lower=True, lapack=lapack)
            return triangular_solve(second, y, lower=False, lapack=lapack)

        return fn

    _run_solve(op, node, inputs, out, solver)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Cholesky: cholesky_perform,
        SolveBase: solve_base_perform,
        Solve: solve_perform,
        SolveTriangular: solve_triangular_perform,
        CholeskySolve: cholesky_solve_perform,
    }
)
