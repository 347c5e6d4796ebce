"""LU factorization with partial pivoting, with PyTensor's ``pytensor.tensor.linalg`` names:
:func:`lu`, :func:`lu_factor`, :func:`lu_solve`, :func:`pivot_to_permutation`, and the Ops
:class:`LU`, :class:`LUFactor`, :class:`PivotToPermutations`.

SciPy's conventions: ``P, L, U = lu(A)`` gives ``A == P @ L @ U`` with ``L`` unit lower
triangular; ``p, L, U = lu(A, p_indices=True)`` gives ``A == L[p] @ U``;
``lu_factor(A)`` gives LAPACK's packed ``LU`` and 0-based ``pivots`` (row ``i`` was
exchanged with row ``pivots[i]`` at step ``i``). Every Op takes a batch of matrices
``(..., m, m)`` directly. The Python backend factors with NumPy only (one vectorised
elimination step per column, over the whole batch).

The gradients of :class:`LU` and :class:`LUFactor` are those of De Hoog, Anderssen and
Lukas (2011), "Differentiation of matrix functionals using triangular factorization".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import disconnected_type
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import (
    complex_nulls,
    linalg_output_dtype,
    linalg_real_output_dtype,
    matrix_input,
    mT,
    square_shape,
    tril,
    triu,
    zero_disconnected,
)
from opweave.tensor.basic import arange, as_tensor_variable, cast, eye
from opweave.tensor.blas import matmul
from opweave.tensor.slinalg import _default_b_ndim, solve_triangular
from opweave.tensor.type import TensorType, integer_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "LU",
    "LUFactor",
    "PivotToPermutations",
    "lu",
    "lu_factor",
    "lu_solve",
    "pivot_to_permutation",
]


def permutation_matrix(p: Variable, dtype: str) -> TensorVariable:
    """The permutation matrices ``P`` with ``P[..., i, j] = (j == p[..., i])`` (so that
    ``P @ X == X[p]``) for a batch of index vectors ``p``."""
    p = as_tensor_variable(p)
    columns = arange(p.shape[-1]).dimshuffle(*["x"] * p.ndim, 0)
    return cast(tm.eq(p.dimshuffle(*range(p.ndim), "x"), columns), dtype)


def _grad_from_factors(
    L: Variable, U: Variable, L_bar: Variable, U_bar: Variable
) -> TensorVariable:
    """The gradient with respect to ``B = L @ U`` from those with respect to its factors."""
    x = tm.add(tril(matmul(mT(L), L_bar), -1), triu(matmul(U_bar, mT(U))))
    lt_inv_x = solve_triangular(mT(L), x, lower=False, unit_diagonal=True, b_ndim=2)
    return mT(solve_triangular(U, mT(lt_inv_x), lower=False, b_ndim=2))


class LU(Op):
    """The LU factorization with partial pivoting of each square matrix of a batch
    (``scipy.linalg.lu``).

    Outputs ``P, L, U`` (``A == P @ L @ U``; ``P`` in the real working dtype); with
    ``p_indices``, ``p, L, U`` (``A == L[p] @ U``; ``p`` int32); with ``permute_l``,
    ``PL, U`` (``PL == P @ L``).

    Parameters
    ----------
    permute_l
        Return ``P @ L`` and ``U`` only.
    p_indices
        Return the permutation as row indices (exclusive with ``permute_l``).
    """

    __props__ = ("permute_l", "p_indices")

    def __init__(self, *, permute_l: bool = False, p_indices: bool = False) -> None:
        if permute_l and p_indices:
            raise ValueError("LU: only one of permute_l and p_indices can be True")
        self.permute_l = bool(permute_l)
        self.p_indices = bool(p_indices)

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input.
        """
        x = matrix_input(x, "LU", "x", square=True)
        shape = square_shape(x)
        dtype = linalg_output_dtype(x.dtype)
        L, U = TensorType(dtype, shape=shape)(), TensorType(dtype, shape=shape)()
        if self.permute_l:
            return Apply(self, [x], [L, U])
        if self.p_indices:
            p = TensorType("int32", shape=shape[:-1])()
        else:
            p = TensorType(linalg_real_output_dtype(x.dtype), shape=shape)()
        return Apply(self, [x], [p, L, U])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape for the matrices, without its last axis for ``p``."""
        s = tuple(shapes[0])
        if self.permute_l:
            return [s, s]
        return [s[:-1] if self.p_indices else s, s, s]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """De Hoog, Anderssen and Lukas (2011), with ``B = P.T @ A = L @ U``.

        The permutation is locally constant: it carries no gradient. For
        ``permute_l`` the factors are recomputed without it.
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (a,) = inputs
        if self.permute_l:
            L_bar, U_bar = zero_disconnected(outputs, output_grads)
            p, L, U = LU()(a)
            # PL_bar is P.T-free here: d(P @ L) = P @ dL, so L_bar = P.T @ PL_bar.
            L_bar = matmul(mT(p), L_bar)
        else:
            p, L, U = outputs
            _, L_bar, U_bar = zero_disconnected(outputs, output_grads)
        b_bar = _grad_from_factors(L, U, L_bar, U_bar)
        if self.p_indices:
            p = permutation_matrix(p, b_bar.dtype)
        return [matmul(p, b_bar)]


def lu(
    a: Any,
    permute_l: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
    overwrite_a: bool = False,
) -> tuple[TensorVariable, ...]:
    """The LU factorization with partial pivoting ``A = P @ L @ U`` (``scipy.linalg.lu``).

    Parameters
    ----------
    a
        ``(..., m, m)``: the matrices to factor.
    permute_l
        Return ``(P @ L, U)`` only.
    check_finite, overwrite_a
        Accepted for SciPy's signature; unused (a non-finite input gives NaN factors).
    p_indices
        Return the permutation as int32 row indices ``p`` (``A == L[p] @ U``).

    Returns
    -------
    tuple of TensorVariable
        ``(P, L, U)``, ``(p, L, U)`` or ``(PL, U)``; ``L`` has a unit diagonal.
    """
    return tuple(LU(permute_l=permute_l, p_indices=p_indices)(a))


class PivotToPermutations(Op):
    """The permutation that LAPACK-style row interchanges (``pivots``) describe.

    For pivots of :class:`LUFactor` of ``A``, ``inverse=True`` gives ``q`` with
    ``A[q] == L @ U`` and ``inverse=False`` gives ``p = argsort(q)``, with
    ``A == L[p] @ U`` (``lu``'s ``p_indices``). Batched over leading axes; int64 output.

    Parameters
    ----------
    inverse
        Which of the two permutations to return.
    """

    __props__ = ("inverse",)

    def __init__(self, inverse: bool = True) -> None:
        self.inverse = bool(inverse)

    def make_node(self, pivots: Any) -> Apply:
        """A (batch of) integer vector.

        Raises
        ------
        TypeError
            For an input that is not an integer tensor of at least 1 dimension.
        """
        pivots = as_tensor_variable(pivots)
        if pivots.dtype not in integer_dtypes or pivots.ndim < 1:
            raise TypeError(
                f"PivotToPermutations: the input pivots ({pivots}) has Type {pivots.type}; "
                "expected an integer TensorType of at least 1 dimension"
            )
        return Apply(self, [pivots], [TensorType("int64", shape=pivots.type.shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Integer indices in, integer indices out: no gradient flows."""
        return [[False]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Disconnected: the output is a permutation of integers."""
        return [disconnected_type()]


def pivot_to_permutation(p: Any, inverse: bool = False) -> TensorVariable:
    """The permutation described by LAPACK-style pivots (see :class:`PivotToPermutations`).

    Parameters
    ----------
    p
        ``(..., m)`` integer pivots, as from :func:`lu_factor`.
    inverse
        ``False`` (default): ``p_out`` with ``A == L[p_out] @ U``; ``True``: its
        inverse, with ``A[p_out] == L @ U``.
    """
    return PivotToPermutations(inverse=inverse)(p)


class LUFactor(Op):
    """LAPACK's packed LU factorization with partial pivoting (``scipy.linalg.lu_factor``).

    Outputs ``LU`` (``U`` on and above the diagonal, the multipliers of the unit lower
    factor below it) and the int32 0-based ``pivots``. A singular matrix gives an ``LU``
    full of NaN (as in PyTensor).
    """

    __props__ = ()

    def make_node(self, A: Any) -> Apply:
        """A (batch of) square matrix.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input.
        """
        A = matrix_input(A, "LUFactor", "A", square=True)
        shape = square_shape(A)
        lu_ = TensorType(linalg_output_dtype(A.dtype), shape=shape)()
        return Apply(self, [A], [lu_, TensorType("int32", shape=shape[:-1])()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape, and without its last axis for the pivots."""
        s = tuple(shapes[0])
        return [s, s[:-1]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The integer pivots carry no gradient."""
        return [[True, False]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """As for :class:`LU`, with ``L_bar`` and ``U_bar`` the two triangles of ``LU_bar``."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        packed, pivots = outputs
        (g,) = zero_disconnected(outputs[:1], output_grads[:1])
        L = tm.add(tril(packed, -1), eye(packed.shape[-1], dtype=packed.dtype))
        U = triu(packed)
        b_bar = _grad_from_factors(L, U, tril(g, -1), triu(g))
        p = permutation_matrix(pivot_to_permutation(pivots), b_bar.dtype)
        return [matmul(p, b_bar)]


def lu_factor(
    a: Any, *, check_finite: bool = True, overwrite_a: bool = False
) -> tuple[TensorVariable, TensorVariable]:
    """LAPACK's packed LU factorization with partial pivoting (``scipy.linalg.lu_factor``).

    Parameters
    ----------
    a
        ``(..., m, m)``: the matrices to factor.
    check_finite, overwrite_a
        Accepted for SciPy's signature; unused (a singular matrix gives NaN).

    Returns
    -------
    tuple of TensorVariable
        ``(LU, pivots)``: the packed factors and the int32 0-based row interchanges.
    """
    packed, pivots = LUFactor()(a)
    return packed, pivots


#: ``trans`` of :func:`lu_solve` -> 0 (none), 1 (transpose), 2 (conjugate transpose).
_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def lu_solve(
    LU_and_pivots: tuple[Any, Any],
    b: Any,
    trans: int | bool | str = 0,
    b_ndim: int | None = None,
    check_finite: bool = True,
    overwrite_b: bool = False,
) -> TensorVariable:
    """Solve ``a @ x = b`` given the factorization of :func:`lu_factor` (``scipy.linalg.lu_solve``).

    Built from two triangular solves and a row permutation, so it is differentiable with
    respect to ``LU`` and ``b``.

    Parameters
    ----------
    LU_and_pivots
        ``(LU, pivots)`` as returned by :func:`lu_factor`.
    b
        ``(..., m)`` or ``(..., m, n)``: the right-hand sides.
    trans
        ``0``/``False``/``"N"``: ``a @ x = b``; ``1``/``True``/``"T"``: ``a.T @ x = b``;
        ``2``/``"C"``: ``a.conj().T @ x = b``.
    b_ndim
        1 if the core of ``b`` is a vector, 2 if a matrix (default: 2 when ``b`` has 2 or
        more dimensions).
    check_finite, overwrite_b
        Accepted for SciPy's signature; unused.

    Raises
    ------
    TypeError
        If ``LU_and_pivots`` is not a pair.
    ValueError
        For a ``trans`` or ``b_ndim`` that is not one of those listed.
    """
    try:
        packed, pivots = LU_and_pivots
    except (TypeError, ValueError):
        raise TypeError(
            f"lu_solve: LU_and_pivots must be a pair (LU, pivots), got {LU_and_pivots!r}"
        ) from None
    try:
        mode = _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(
            f"lu_solve: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"
        ) from None
    b_ndim = _default_b_ndim(b, b_ndim, "lu_solve")
    packed = matrix_input(packed, "lu_solve", "LU", square=True)
    b = matrix_input(b, "lu_solve", "b", min_ndim=b_ndim)
    dtype = linalg_output_dtype(packed.dtype, b.dtype)
    # a == P @ L @ U with P @ X == X[p].
    p = permutation_matrix(pivot_to_permutation(pivots), dtype)
    column = b_ndim == 1
    x = b.dimshuffle(*range(b.ndim), "x") if column else b
    if mode == 0:
        x = matmul(mT(p), x)
        x = solve_triangular(packed, x, lower=True, unit_diagonal=True, b_ndim=2)
        x = solve_triangular(packed, x, lower=False, b_ndim=2)
    else:
        x = solve_triangular(packed, x, trans=mode, lower=False, b_ndim=2)
        x = solve_triangular(packed, x, trans=mode, lower=True, unit_diagonal=True, b_ndim=2)
        x = matmul(p, x)
    return x[..., 0] if column else x
