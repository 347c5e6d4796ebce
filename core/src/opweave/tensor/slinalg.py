"""Linear algebra after ``scipy.linalg`` (PyTensor's ``pytensor.tensor.slinalg`` names):
:func:`cholesky`, :func:`solve`, :func:`solve_triangular`, :func:`cho_solve`,
:func:`cho_factor`, and their Ops :class:`Cholesky`, :class:`SolveBase`, :class:`Solve`,
:class:`SolveTriangular`, :class:`CholeskySolve`.

Every Op takes a batch of matrices, ``(..., m, m)``, directly (where PyTensor wraps the
Op in a ``Blockwise``); a right-hand side ``b`` is a batch of vectors (``b_ndim=1``) or
of matrices (``b_ndim=2``), and the batch axes of ``a`` and ``b`` broadcast where their
static length is 1. The kernels live in the backends and use NumPy only (SciPy is not
needed): ``numpy.linalg.cholesky``, ``numpy.linalg.solve`` (LU with partial pivoting)
and, for triangular systems, ``numpy.linalg.solve`` on the referenced triangle, which is
backward stable like LAPACK's ``trtrs`` (the results agree with SciPy's to rounding,
not bit for bit).

As in PyTensor, a failed factorization or solve (a matrix that is not positive
definite, an exactly singular system) gives NaN for that matrix of the batch instead of
raising; ``cholesky(..., on_error="raise")`` raises ``numpy.linalg.LinAlgError``
instead. Gradients follow the standard matrix-calculus results: Giles (2008) for the
solves, Murray (2016) for the Cholesky factor; an Op that reads only one triangle of
``a`` gets a gradient on that triangle only.

PyTensor's ``schur``, ``qz``, ``ordqz`` and their Ops :class:`Schur`, :class:`QZ` are
given here too; they live in :mod:`opweave.tensor.linalg.decomposition.schur`, which
builds on this module, and the package :mod:`opweave.tensor.linalg` sets them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import (
    batch_shape_of,
    broadcast_batch,
    complex_nulls,
    diag_embed,
    linalg_output_dtype,
    matrix_input,
    mT,
    square_matrix_apply,
    symmetrized_grad,
    tril,
    triu,
)
from opweave.tensor.basic import diagonal
from opweave.tensor.blas import matmul
from opweave.tensor.elemwise import sum_to_broadcast
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

if TYPE_CHECKING:
    # PyTensor's names of this module that :mod:`opweave.tensor.linalg.decomposition.schur`
    # defines (which builds on this module): the package :mod:`opweave.tensor.linalg`,
    # which sits above both, sets them here (the same objects).
    from opweave.tensor.linalg.decomposition.schur import QZ as QZ
    from opweave.tensor.linalg.decomposition.schur import Schur as Schur
    from opweave.tensor.linalg.decomposition.schur import ordqz as ordqz
    from opweave.tensor.linalg.decomposition.schur import qz as qz
    from opweave.tensor.linalg.decomposition.schur import schur as schur

__all__ = [
    "QZ",
    "Cholesky",
    "CholeskySolve",
    "Schur",
    "Solve",
    "SolveBase",
    "SolveTriangular",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "ordqz",
    "qz",
    "schur",
    "solve",
    "solve_triangular",
]

ON_ERROR = ("nan", "raise")


# ====================================================================== Cholesky


class Cholesky(Op):
    """The Cholesky factor of each symmetric positive-definite matrix of a batch.

    ``lower=True`` gives ``L`` with ``L @ L.T == a``, reading the lower triangle of ``a``;
    ``lower=False`` gives ``U`` with ``U.T @ U == a``, reading the upper triangle.

    Parameters
    ----------
    lower
        Which factor to compute (and which triangle of ``a`` to read).
    on_error
        ``"nan"`` (PyTensor's default): a matrix that is not positive definite gives a
        factor full of NaN; ``"raise"``: ``numpy.linalg.LinAlgError`` is raised.
    """

    __props__ = ("lower", "on_error")

    def __init__(self, *, lower: bool = True, on_error: Literal["nan", "raise"] = "nan") -> None:
        if on_error not in ON_ERROR:
            raise ValueError(f"Cholesky: on_error must be one of {ON_ERROR}, got {on_error!r}")
        self.lower = bool(lower)
        self.on_error = on_error

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix; the factor has its shape and the working dtype.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input.
        """
        return square_matrix_apply(self, x, "x")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Murray's (2016) reverse-mode formula, on the triangle the Op reads.

        With ``L`` the lower factor and ``dL`` its gradient: ``P = Phi(L.T @ dL)`` (the
        lower triangle with its diagonal halved), ``S = L^-T @ P @ L^-1`` and the
        gradient ``tril(S + S.T) - diag(S)``; the upper case is the transpose.
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (chol,) = outputs
        (dz,) = output_grads
        if not self.lower:
            chol, dz = mT(chol), mT(dz)
        inner = matmul(mT(chol), dz)
        phi = tm.sub(tril(inner), diag_embed(tm.true_div(diagonal(inner, 0, -2, -1), 2)))
        solve_upper = SolveTriangular(lower=False, b_ndim=2)
        # L^-T @ phi @ L^-1 as two triangular solves with L^T.
        s = solve_upper(mT(chol), mT(solve_upper(mT(chol), mT(phi))))
        both = tm.add(s, mT(s))
        half = tril(both) if self.lower else triu(both)
        return [tm.sub(half, diag_embed(diagonal(s, 0, -2, -1)))]


def cholesky(
    x: Any,
    lower: bool = True,
    *,
    check_finite: bool = True,
    overwrite_a: bool = False,
    on_error: Literal["raise", "nan"] = "nan",
) -> TensorVariable:
    """The Cholesky factor of a symmetric positive-definite matrix (or a batch of them).

    ``L = cholesky(x)`` gives ``L @ L.T == x``.

    Parameters
    ----------
    x
        A ``(..., m, m)`` tensor; only the triangle named by ``lower`` is read.
    lower
        Return the lower factor (default) or the upper one.
    check_finite, overwrite_a
        Accepted for SciPy's signature; unused.
    on_error
        ``"nan"`` (default, as PyTensor): a matrix that is not positive definite gives
        NaN; ``"raise"``: ``numpy.linalg.LinAlgError`` is raised when the function runs.

    Returns
    -------
    TensorVariable
        The factor, of ``x``'s shape.
    """
    return Cholesky(lower=lower, on_error=on_error)(x)


# ====================================================================== solves


class SolveBase(Op):
    """The solvers of ``a @ x = b``: inputs, shapes and gradient, and the general solve.

    Inputs: ``a`` (``(..., m, m)``) and ``b`` (``(..., m)`` for ``b_ndim=1``,
    ``(..., m, n)`` for ``b_ndim=2``); the output ``x`` has ``b``'s core shape and the
    broadcast batch shape. This class itself solves with all of ``a`` (LU with partial
    pivoting, as :class:`Solve` with ``assume_a="gen"``); subclasses read parts of ``a``
    and say which (:meth:`project`). The gradient solves the adjoint system with the
    same Op on ``a.T`` (reading the other triangle).

    Parameters
    ----------
    lower
        Which triangle of ``a`` the solver reads, where it reads only one (unused here).
    b_ndim
        The number of core dimensions of ``b``: 1 (vectors) or 2 (matrices).
    """

    __props__: tuple[str, ...] = ("lower", "b_ndim")

    def __init__(self, *, lower: bool = False, b_ndim: int) -> None:
        if b_ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: b_ndim must be 1 or 2, got {b_ndim!r}")
        self.lower = bool(lower)
        self.b_ndim = int(b_ndim)

    def make_node(self, a: Any, b: Any) -> Apply:
        """Check and batch-broadcast ``a`` and ``b``.

        Raises
        ------
        TypeError
            If ``a`` is not a numeric tensor of at least 2 dimensions, or ``b`` of at
            least ``b_ndim``.
        ValueError
            If ``a`` is statically non-square, or the static lengths of ``a`` and ``b``
            (or of their batch axes) do not match.
        """
        who = type(self).__name__
        a = matrix_input(a, who, "a", square=True)
        b = matrix_input(b, who, "b", min_ndim=self.b_ndim)
        (a, b), batch = broadcast_batch([a, b], [2, self.b_ndim], who)
        rows = b.type.shape[-self.b_ndim]
        m = next((n for n in (*a.type.shape[-2:], rows) if n is not None), None)
        if rows is not None and m is not None and rows != m:
            raise ValueError(
                f"{who}: a has static shape {a.type.shape} but b has {b.type.shape}: "
                f"b must have {m} rows"
            )
        core = (m,) if self.b_ndim == 1 else (m, b.type.shape[-1])
        dtype = linalg_output_dtype(a.type.dtype, b.type.dtype)
        return Apply(self, [a, b], [TensorType(dtype, shape=(*batch, *core))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast batch shape, then ``a``'s order and ``b``'s columns."""
        a_shape, b_shape = shapes
        batch = batch_shape_of(node, shapes, len(a_shape) - 2)
        core = [a_shape[-1]] if self.b_ndim == 1 else [a_shape[-1], b_shape[-1]]
        return [(*batch, *core)]

    def solve_adjoint(self, a: Variable, g: Variable) -> Variable:
        """``a^-T @ g``: this solve with ``a.T``, reading the other triangle."""
        props = self._props_dict()
        props["lower"] = not self.lower
        return type(self)(**props)(mT(a), g)

    def project(self, a_bar: Variable, a: Variable) -> Variable:
        """The gradient with respect to the input ``a`` from the one with respect to the
        matrix solved with (default: the same)."""
        return a_bar

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Giles (2008): ``b_bar = a^-T @ x_bar`` and ``a_bar = -b_bar @ x.T``."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        a, b = inputs
        (x,) = outputs
        (x_bar,) = output_grads
        b_bar = self.solve_adjoint(a, x_bar)
        if self.b_ndim == 1:
            nd = x.ndim
            column = b_bar.dimshuffle(*range(nd), "x")
            outer = tm.mul(column, x.dimshuffle(*range(nd - 1), "x", nd - 1))
        else:
            outer = matmul(b_bar, mT(x))
        a_bar = self.project(tm.neg(outer), a)
        batch = x.type.shape[: x.ndim - self.b_ndim]
        a_bar = sum_to_broadcast(a_bar, a, (*batch, *a.type.shape[-2:]))
        b_bar = sum_to_broadcast(b_bar, b, (*batch, *b.type.shape[x.ndim - self.b_ndim :]))
        return [a_bar, b_bar]


#: ``assume_a`` values of :class:`Solve`, and the long names :func:`solve` also accepts.
ASSUME_A = ("gen", "sym", "her", "pos", "tridiagonal", "banded")
_LONG_NAMES = {
    "general": "gen",
    "symmetric": "sym",
    "hermitian": "her",
    "positive definite": "pos",
}


def _assume_a(value: Any, who: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{who}: assume_a must be a string, got {value!r}")
    name = value.lower()
    name = _LONG_NAMES.get(name, name)
    if name not in ASSUME_A:
        raise ValueError(
            f"{who}: invalid assume_a {value!r}; expected one of {list(ASSUME_A)} or "
            f"{list(_LONG_NAMES)}"
        )
    return name


class Solve(SolveBase):
    """Solve ``a @ x = b`` for square ``a`` (``scipy.linalg.solve``).

    Parameters
    ----------
    assume_a
        ``"gen"`` (LU with partial pivoting), ``"sym"``/``"her"`` (``a`` symmetric or
        Hermitian: only the triangle named by ``lower`` is read), ``"pos"`` (symmetric
        positive definite, through its Cholesky factor; a matrix that is not positive
        definite gives NaN), ``"tridiagonal"`` (only the three central diagonals are
        read) or ``"banded"`` (solved as ``"gen"``).
    lower
        For ``"sym"``, ``"her"`` and ``"pos"``: read the lower triangle (else the upper).
    b_ndim
        1 if ``b`` holds vectors, 2 if it holds matrices.
    """

    __props__ = ("assume_a", "lower", "b_ndim")

    def __init__(self, *, assume_a: str = "gen", lower: bool = False, b_ndim: int) -> None:
        super().__init__(lower=lower, b_ndim=b_ndim)
        self.assume_a = _assume_a(assume_a, "Solve")

    def project(self, a_bar: Variable, a: Variable) -> Variable:
        """Onto the entries of ``a`` the solver reads."""
        if self.assume_a in ("sym", "her", "pos"):
            return symmetrized_grad(a_bar, self.lower)
        if self.assume_a == "tridiagonal":
            return tril(triu(a_bar, -1), 1)
        return a_bar


class SolveTriangular(SolveBase):
    """Solve ``a @ x = b`` for triangular ``a`` (``scipy.linalg.solve_triangular``).

    Only the triangle named by ``lower`` is read; with ``unit_diagonal`` the diagonal is
    taken as ones and not read. A zero on the diagonal gives NaN.

    Parameters
    ----------
    unit_diagonal
        Whether the diagonal is all ones.
    lower
        Whether ``a`` is lower (else upper) triangular.
    b_ndim
        1 if ``b`` holds vectors, 2 if it holds matrices.
    """

    __props__ = ("unit_diagonal", "lower", "b_ndim")

    def __init__(self, *, unit_diagonal: bool = False, lower: bool = False, b_ndim: int) -> None:
        super().__init__(lower=lower, b_ndim=b_ndim)
        self.unit_diagonal = bool(unit_diagonal)

    def project(self, a_bar: Variable, a: Variable) -> Variable:
        """Onto the triangle read (without the diagonal for ``unit_diagonal``)."""
        k = 1 if self.unit_diagonal else 0
        return tril(a_bar, -k) if self.lower else triu(a_bar, k)


class CholeskySolve(SolveBase):
    """Solve ``a @ x = b`` given the Cholesky factor ``c`` of ``a`` (``scipy.linalg.cho_solve``).

    Inputs: ``c`` (``a = c @ c.T`` for ``lower``, else ``a = c.T @ c``; only that
    triangle of ``c`` is read) and ``b``.

    Parameters
    ----------
    lower
        Whether ``c`` is the lower factor.
    b_ndim
        1 if ``b`` holds vectors, 2 if it holds matrices.
    """

    __props__ = ("lower", "b_ndim")

    def project(self, a_bar: Variable, a: Variable) -> Variable:
        """From the gradient with respect to ``c @ c.T`` to the one with respect to ``c``:
        ``tril((A_bar + A_bar.T) @ c)`` (``triu(c @ (A_bar + A_bar.T))`` for the upper)."""
        both = tm.add(a_bar, mT(a_bar))
        if self.lower:
            return tril(matmul(both, a))
        return triu(matmul(a, both))


def _default_b_ndim(b: Any, b_ndim: int | None, who: str) -> int:
    """``b_ndim``, or PyTensor's default: 2 for ``b`` of 2 or more dimensions, else 1."""
    if b_ndim is not None:
        if b_ndim not in (1, 2):
            raise ValueError(f"{who}: b_ndim must be 1 or 2 (or None), got {b_ndim!r}")
        return int(b_ndim)
    b = matrix_input(b, who, "b", min_ndim=1)
    return min(b.ndim, 2)


def solve(
    a: Any,
    b: Any,
    *,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
    transposed: bool = False,
    b_ndim: int | None = None,
) -> TensorVariable:
    """Solve ``a @ x = b`` for ``x`` (``scipy.linalg.solve``, batched).

    Parameters
    ----------
    a
        ``(..., m, m)``: the square matrices.
    b
        ``(..., m)`` or ``(..., m, n)``: the right-hand sides.
    lower
        For ``"sym"``, ``"her"`` and ``"pos"``: read the lower triangle of ``a`` (default:
        the upper one).
    overwrite_a, overwrite_b, check_finite
        Accepted for SciPy's signature; unused.
    assume_a
        The structure of ``a``: ``"gen"``/``"general"`` (default), ``"sym"``/
        ``"symmetric"``, ``"her"``/``"hermitian"``, ``"pos"``/``"positive definite"``,
        ``"tridiagonal"``, ``"banded"``, ``"diagonal"``, ``"lower triangular"`` or
        ``"upper triangular"``.
    transposed
        Solve ``a.T @ x = b`` instead.
    b_ndim
        1 if the core of ``b`` is a vector, 2 if a matrix (default: 2 when ``b`` has 2
        or more dimensions, so pass ``b_ndim=1`` for a batch of vectors).

    Returns
    -------
    TensorVariable
        ``x``, shaped like ``b`` (with the broadcast batch axes). An exactly singular
        ``a`` (or one that is not positive definite, for ``"pos"``) gives NaN, as in
        PyTensor.
    """
    if not isinstance(assume_a, str):
        raise TypeError(f"solve: assume_a must be a string, got {assume_a!r}")
    structure = assume_a.lower()
    if structure in ("lower triangular", "upper triangular"):
        return solve_triangular(
            a, b, lower=structure == "lower triangular", trans=int(transposed), b_ndim=b_ndim
        )
    b_ndim = _default_b_ndim(b, b_ndim, "solve")
    if structure == "diagonal":
        a = matrix_input(a, "solve", "a", square=True)
        b = matrix_input(b, "solve", "b", min_ndim=b_ndim)
        d = diagonal(a, 0, -2, -1)
        if b_ndim == 2:
            d = d.dimshuffle(*range(d.ndim), "x")
        x = tm.true_div(b, d)
        return tm.cast(x, linalg_output_dtype(a.dtype, b.dtype))
    op = Solve(assume_a=structure, lower=lower, b_ndim=b_ndim)
    if transposed:
        a = mT(matrix_input(a, "solve", "a", square=True))
        op = Solve(assume_a=structure, lower=not lower, b_ndim=b_ndim)
    return op(a, b)


#: ``trans`` of :func:`solve_triangular` -> 0 (none), 1 (transpose), 2 (conjugate transpose);
#: ``False``/``True`` are the ints 0 and 1.
_TRANS = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}


def solve_triangular(
    a: Any,
    b: Any,
    *,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    check_finite: bool = True,
    b_ndim: int | None = None,
) -> TensorVariable:
    """Solve ``a @ x = b`` for triangular ``a`` (``scipy.linalg.solve_triangular``, batched).

    Parameters
    ----------
    a
        ``(..., m, m)``: only the triangle named by ``lower`` is read.
    b
        ``(..., m)`` or ``(..., m, n)``.
    trans
        ``0``/``"N"``: ``a @ x = b``; ``1``/``"T"``: ``a.T @ x = b``; ``2``/``"C"``:
        ``a.conj().T @ x = b``.
    lower
        Whether ``a`` is lower triangular (default: upper).
    unit_diagonal
        Take the diagonal of ``a`` as ones (it is not read).
    check_finite
        Accepted for SciPy's signature; unused.
    b_ndim
        1 if the core of ``b`` is a vector, 2 if a matrix (default as for :func:`solve`).

    Returns
    -------
    TensorVariable
        ``x``; a zero on the diagonal of ``a`` gives NaN, as in PyTensor.
    """
    b_ndim = _default_b_ndim(b, b_ndim, "solve_triangular")
    try:
        mode = _TRANS[trans]
    except (KeyError, TypeError):
        raise ValueError(
            f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}"
        ) from None
    if mode:
        a = matrix_input(a, "solve_triangular", "a", square=True)
        a = mT(tm.conj(a) if mode == 2 else a)
        lower = not lower
    op = SolveTriangular(unit_diagonal=unit_diagonal, lower=lower, b_ndim=b_ndim)
    return op(a, b)


def cho_solve(
    c_and_lower: tuple[Any, bool], b: Any, *, b_ndim: int | None = None
) -> TensorVariable:
    """Solve ``a @ x = b`` given the Cholesky factorization of ``a`` (``scipy.linalg.cho_solve``).

    Parameters
    ----------
    c_and_lower
        ``(c, lower)``: the factor (as from :func:`cho_factor` or :func:`cholesky`) and
        whether it is the lower one.
    b
        ``(..., m)`` or ``(..., m, n)``.
    b_ndim
        1 if the core of ``b`` is a vector, 2 if a matrix (default as for :func:`solve`).
    """
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError(
            f"cho_solve: c_and_lower must be a pair (c, lower), got {c_and_lower!r}"
        ) from None
    b_ndim = _default_b_ndim(b, b_ndim, "cho_solve")
    return CholeskySolve(lower=bool(lower), b_ndim=b_ndim)(c, b)


def cho_factor(
    a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
) -> tuple[TensorVariable, bool]:
    """The Cholesky factorization of ``a`` for :func:`cho_solve` (``scipy.linalg.cho_factor``).

    Parameters
    ----------
    a
        ``(..., m, m)``, symmetric positive definite.
    lower
        Compute the lower factor (default, as in SciPy: the upper one).
    overwrite_a, check_finite
        Accepted for SciPy's signature; unused.

    Returns
    -------
    tuple
        ``(c, lower)``. Unlike SciPy's, ``c`` holds zeros (not leftovers of ``a``) in
        the triangle it does not use.
    """
    return cholesky(a, lower=lower), bool(lower)
