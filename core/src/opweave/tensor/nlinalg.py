"""Linear algebra after ``numpy.linalg`` (PyTensor's ``pytensor.tensor.nlinalg`` names).

Ops: :class:`MatrixInverse`, :class:`Det`, :class:`SLogDet`, :class:`Eig`, :class:`Eigh`,
:class:`SVD`, :class:`QR`, :class:`MatrixPinv`, :class:`Lstsq`, :class:`TensorInv`,
:class:`TensorSolve`; functions :func:`matrix_inverse` (:data:`inv`), :data:`det`,
:func:`slogdet`, :func:`eig`, :func:`eigh`, :func:`svd`, :func:`qr`, :func:`pinv`,
:func:`trace`, :func:`matrix_dot`, :func:`norm`, :func:`matrix_power`, :func:`kron`,
:data:`lstsq`, :func:`tensorinv`, :func:`tensorsolve`.

The matrix Ops take a batch of matrices, ``(..., m, n)``, directly (where PyTensor wraps
them in a ``Blockwise``) and compute with NumPy's batched routines; their gradients are
batched too. They compute in the dtype PyTensor picks (``float32`` for ``float16``,
``float32`` and small integers, ``float64`` for ``float64`` and wider integers, complex
for complex inputs). The kernels live in the backends. Gradients follow the standard
matrix-calculus results (see each Op's ``L_op``); they are implemented for real inputs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from opweave.gradient import grad_not_implemented
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import (
    complex_nulls,
    diag_embed,
    is_complex,
    linalg_output_dtype,
    linalg_real_output_dtype,
    matrix_input,
    mT,
    square_matrix_apply,
    square_shape,
    symmetrized_grad,
    trace,  # re-exported here (PyTensor's path); tensor variables' .trace() uses it
    tril,
    zero_disconnected,
)
from opweave.tensor.basic import (
    as_tensor_variable,
    concatenate,
    diagonal,
    eye,
    transpose,
    where,
    zeros_like,
)
from opweave.tensor.blas import dot, matmul
from opweave.tensor.elemwise import zeros_like_float
from opweave.tensor.shape import reshape
from opweave.tensor.slinalg import SolveTriangular
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = [
    "QR",
    "SVD",
    "Det",
    "Eig",
    "Eigh",
    "Lstsq",
    "MatrixInverse",
    "MatrixPinv",
    "SLogDet",
    "TensorInv",
    "TensorSolve",
    "det",
    "eig",
    "eigh",
    "inv",
    "kron",
    "lstsq",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "svd",
    "tensorinv",
    "tensorsolve",
    "trace",
]


def _pad_matrix(v: Variable) -> TensorVariable:
    """A batch of scalars ``(...)`` as ``(..., 1, 1)``."""
    nd = v.type.ndim
    return v.dimshuffle(*range(nd), "x", "x")


def _row(v: Variable) -> TensorVariable:
    """A batch of vectors ``(..., k)`` as rows ``(..., 1, k)``."""
    nd = v.type.ndim
    return v.dimshuffle(*range(nd - 1), "x", nd - 1)


def _column(v: Variable) -> TensorVariable:
    """A batch of vectors ``(..., k)`` as columns ``(..., k, 1)``."""
    nd = v.type.ndim
    return v.dimshuffle(*range(nd), "x")


# ====================================================================== inverse and determinant


class MatrixInverse(Op):
    """The inverse of each square matrix of a batch (``numpy.linalg.inv``).

    A singular matrix raises ``numpy.linalg.LinAlgError`` when the function runs.
    """

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix; the output has its shape.

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
        """``-X^-T @ G @ X^-T`` (the matrix cookbook)."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        xi_t = mT(outputs[0])
        return [tm.neg(matmul(matmul(xi_t, output_grads[0]), xi_t))]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``-X^-1 @ V @ X^-1``."""
        (ev,) = eval_points
        if ev is None:
            return [None]
        xi = self(inputs[0])
        return [tm.neg(matmul(matmul(xi, ev), xi))]


#: ``numpy.linalg.inv`` of a batch of matrices (an instance of :class:`MatrixInverse`).
matrix_inverse = MatrixInverse()
#: Alias of :data:`matrix_inverse`.
inv = matrix_inverse


class Det(Op):
    """The determinant of each square matrix of a batch (``numpy.linalg.det``)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix; the output has the batch shape (errors as for
        :class:`MatrixInverse`)."""
        x = matrix_input(x, "Det", "x", square=True)
        dtype = linalg_output_dtype(x.dtype)
        return Apply(self, [x], [TensorType(dtype, shape=x.type.shape[:-2])()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The batch shape."""
        return [tuple(shapes[0][:-2])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``g * det(X) * X^-T`` (Jacobi's formula; needs an invertible ``X``)."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        scale = tm.mul(_pad_matrix(output_grads[0]), _pad_matrix(outputs[0]))
        return [tm.mul(scale, mT(matrix_inverse(inputs[0])))]

    def __str__(self) -> str:
        return "Det"


#: ``numpy.linalg.det`` of a batch of matrices (an instance of :class:`Det`).
det = Det()


class SLogDet(Op):
    """The sign and the log of the absolute value of the determinant
    (``numpy.linalg.slogdet``): two outputs of the batch shape.

    A singular matrix gives the sign 0 and the log ``-inf``.
    """

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix (errors as for :class:`MatrixInverse`)."""
        x = matrix_input(x, "SLogDet", "x", square=True)
        batch = x.type.shape[:-2]
        sign = TensorType(linalg_output_dtype(x.dtype), shape=batch)()
        logabsdet = TensorType(linalg_real_output_dtype(x.dtype), shape=batch)()
        return Apply(self, [x], [sign, logabsdet])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The batch shape, twice."""
        batch = tuple(shapes[0][:-2])
        return [batch, batch]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``g * X^-T`` for the log; the sign is locally constant."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (x,) = inputs
        g_log = output_grads[1]
        if isinstance(g_log.type, DisconnectedType):
            return [zeros_like_float(x)]
        return [tm.mul(_pad_matrix(g_log), mT(matrix_inverse(x)))]

    def __str__(self) -> str:
        return "SLogDet"


def slogdet(x: Any) -> tuple[TensorVariable, TensorVariable]:
    """The sign and the natural log of the absolute value of the determinant.

    Parameters
    ----------
    x
        ``(..., m, m)``: square matrices.

    Returns
    -------
    tuple of TensorVariable
        ``(sign, logabsdet)``, each of the batch shape: the determinant is
        ``sign * exp(logabsdet)``, computed without overflow (a singular matrix gives
        ``sign`` 0 and ``logabsdet`` ``-inf``).
    """
    sign, logabsdet = SLogDet()(x)
    return sign, logabsdet


# ====================================================================== eigenvalues


class Eig(Op):
    """The eigenvalues and right eigenvectors of each square matrix of a batch
    (``numpy.linalg.eig``), always complex (``complex64`` for ``float32`` inputs,
    ``complex128`` for ``float64``). Not differentiable (use :class:`Eigh` for
    symmetric matrices)."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """A (batch of) square matrix; outputs ``w`` (``(..., m)``) and ``v`` (``(..., m, m)``)."""
        x = matrix_input(x, "Eig", "x", square=True)
        dtype = np.promote_types(linalg_output_dtype(x.dtype), np.complex64).name
        shape = square_shape(x)
        return Apply(
            self, [x], [TensorType(dtype, shape=shape[:-1])(), TensorType(dtype, shape=shape)()]
        )

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(..., m)`` and ``(..., m, m)``."""
        (s,) = shapes
        return [tuple(s[:-1]), tuple(s)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented (the outputs are complex): a NullType gradient."""
        return [
            grad_not_implemented(
                self, 0, inputs[0], "eig's outputs are complex; use eigh for symmetric matrices"
            )
        ]


def eig(x: Any) -> list[TensorVariable]:
    """The eigenvalues and right eigenvectors of a square matrix (or a batch).

    Parameters
    ----------
    x
        ``(..., m, m)``.

    Returns
    -------
    list of TensorVariable
        ``[w, v]``, complex: ``x @ v[..., :, i] == w[..., i] * v[..., :, i]``.
    """
    return Eig()(x)


class Eigh(Op):
    """The eigenvalues (ascending) and orthonormal eigenvectors of each symmetric (or
    Hermitian) matrix of a batch (``numpy.linalg.eigh``), reading one triangle.

    With a second input ``b`` (symmetric positive definite), the generalized problem
    ``a @ v = w * b @ v`` with ``v.T @ b @ v == I``, reduced to a standard one through
    the Cholesky factor of ``b`` (as LAPACK's ``sygv`` does).

    Parameters
    ----------
    lower
        Read the lower (default) or the upper triangle of the inputs.
    """

    __props__ = ("lower",)

    def __init__(self, lower: bool = True) -> None:
        self.lower = bool(lower)

    def make_node(self, a: Any, b: Any = None) -> Apply:
        """One or two (batches of) square matrices; outputs ``w`` and ``v``.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input, or ``a`` and ``b`` of different shapes.
        """
        a = matrix_input(a, "Eigh", "a", square=True)
        inputs = [a]
        if b is not None:
            b = matrix_input(b, "Eigh", "b", square=True)
            if b.ndim != a.ndim:
                raise ValueError(
                    f"Eigh: a ({a.type}) and b ({b.type}) must have the same number of dimensions"
                )
            inputs.append(b)
        dtypes = [x.dtype for x in inputs]
        shape = square_shape(a)
        w = TensorType(linalg_real_output_dtype(*dtypes), shape=shape[:-1])()
        v = TensorType(linalg_output_dtype(*dtypes), shape=shape)()
        return Apply(self, inputs, [w, v])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(..., m)`` and ``(..., m, m)``."""
        s = shapes[0]
        return [tuple(s[:-1]), tuple(s)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """With ``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal (0 on it),
        ``C = V.T @ gV`` and ``M = diag(gw) + F * C``: ``gA = V @ M @ V.T``; for the
        generalized problem also ``gB = -V @ (M * w) @ V.T - V @ diag(diag(C)) @ V.T / 2``.
        Both are moved onto the triangle read. Eigenvalues must be distinct.
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        w, v = outputs
        gw, gv = zero_disconnected(outputs, output_grads)
        on_diagonal = eye(w.shape[-1], dtype="bool")
        gaps = tm.sub(_row(w), _column(w))
        f = where(on_diagonal, 0, tm.reciprocal(where(on_diagonal, 1, gaps)))
        c = matmul(mT(v), gv)
        inner = tm.add(diag_embed(gw), tm.mul(f, c))
        ga = symmetrized_grad(matmul(matmul(v, inner), mT(v)), self.lower)
        if len(inputs) == 1:
            return [ga]
        gb = tm.neg(matmul(matmul(v, tm.mul(inner, _row(w))), mT(v)))
        half = tm.mul(0.5, matmul(matmul(v, diag_embed(diagonal(c, 0, -2, -1))), mT(v)))
        return [ga, symmetrized_grad(tm.sub(gb, half), self.lower)]


def eigh(
    a: Any,
    b: Any = None,
    lower: bool = True,
    UPLO: str | None = None,
    driver: str = "evr",
) -> list[TensorVariable]:
    """The eigenvalues and eigenvectors of a symmetric/Hermitian matrix (or a batch).

    Parameters
    ----------
    a
        ``(..., m, m)``; only the triangle named by ``lower`` is read.
    b
        ``None``, or ``(..., m, m)`` symmetric positive definite for the generalized
        problem ``a @ v = w * b @ v``. A string here is PyTensor 2's positional ``UPLO``
        (``eigh(a, "U")``).
    lower
        Read the lower (default) or the upper triangle.
    UPLO
        Deprecated spelling of ``lower``: ``"L"`` or ``"U"``.
    driver
        ``"evr"`` or ``"evd"``; accepted for PyTensor's signature. The Python backend
        always uses ``numpy.linalg.eigh`` (LAPACK's divide and conquer, ``"evd"``), so
        eigenvectors may differ in sign from SciPy's ``"evr"``.

    Returns
    -------
    list of TensorVariable
        ``[w, v]``: the eigenvalues in ascending order and the eigenvectors as columns.
    """
    if isinstance(b, str):  # PyTensor 2's eigh(a, UPLO)
        UPLO, b = b, None
    if UPLO is not None:
        warnings.warn(
            "eigh: UPLO is deprecated, use lower=True (for 'L') or lower=False (for 'U')",
            DeprecationWarning,
            stacklevel=2,
        )
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        lower = UPLO == "L"
    if driver not in ("evr", "evd"):
        raise ValueError(f"eigh: invalid driver {driver!r}; expected 'evr' or 'evd'")
    return Eigh(lower=lower)(a, b)


# ====================================================================== SVD, QR, pseudo-inverse


def _svd_shapes(m: Any, n: Any, full_matrices: bool, compute_uv: bool, k: Any) -> list[Any]:
    if not compute_uv:
        return [(k,)]
    if full_matrices:
        return [(m, m), (k,), (n, n)]
    return [(m, k), (k,), (k, n)]


class SVD(Op):
    """The singular value decomposition ``a = U @ diag(s) @ VT`` of each matrix of a batch
    (``numpy.linalg.svd``).

    Parameters
    ----------
    full_matrices
        ``U`` and ``VT`` of shapes ``(m, m)`` and ``(n, n)`` (default), or ``(m, k)``
        and ``(k, n)`` with ``k = min(m, n)``.
    compute_uv
        Output ``[U, s, VT]`` (default) or only ``s``.
    """

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True) -> None:
        self.full_matrices = bool(full_matrices)
        self.compute_uv = bool(compute_uv)

    def make_node(self, x: Any) -> Apply:
        """A (batch of) matrix; outputs as the parameters say (``s`` real)."""
        x = matrix_input(x, "SVD", "x")
        *batch, m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        if k is None and 0 in (m, n):
            k = 0
        shapes = _svd_shapes(m, n, self.full_matrices, self.compute_uv, k)
        dtype, s_dtype = linalg_output_dtype(x.dtype), linalg_real_output_dtype(x.dtype)
        dtypes = [dtype, s_dtype, dtype] if self.compute_uv else [s_dtype]
        outputs = [TensorType(d, shape=(*batch, *s))() for d, s in zip(dtypes, shapes, strict=True)]
        return Apply(self, [x], outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """From ``m``, ``n`` and ``k = min(m, n)``."""
        *batch, m, n = shapes[0]
        k = tm.minimum(m, n)
        return [(*batch, *s) for s in _svd_shapes(m, n, self.full_matrices, self.compute_uv, k)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Reverse mode after Seeger et al. (2017) (as autograd and PyTensor compute it).

        Only ``s``: ``U @ diag(gs) @ VT`` (from the thin decomposition). Thin ``U`` and
        ``VT``: the full formula, with ``1 / (s_j^2 - s_i^2)`` kept finite for repeated
        singular values. The gradient of the extra columns of ``full_matrices=True``
        is not defined (a NullType gradient) unless only ``s`` is used.
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (a,) = inputs
        if not self.compute_uv:
            return [_svd_s_grad(a, output_grads[0])]
        connected = [not isinstance(g.type, DisconnectedType) for g in output_grads]
        if connected == [False, True, False]:
            return [_svd_s_grad(a, output_grads[1])]
        if self.full_matrices:
            return [
                grad_not_implemented(
                    self,
                    0,
                    a,
                    "the gradient through U or VT of svd(full_matrices=True) is not "
                    "defined; use full_matrices=False",
                )
            ]
        u, s, vt = outputs
        du, ds, dvt = zero_disconnected(outputs, output_grads)
        return [_svd_thin_grad(a, u, s, vt, du, ds, dvt)]


def _svd_s_grad(a: Variable, ds: Variable) -> Variable:
    u, _, vt = SVD(full_matrices=False, compute_uv=True)(a)
    return matmul(tm.mul(u, _row(ds)), vt)


def _safe(t: Variable, eps: float) -> Variable:
    """``t`` with its magnitude kept at least ``eps`` (and the sign of 0 taken as +)."""
    sign = where(tm.eq(t, 0), 1, tm.sign(t))
    return tm.mul(tm.maximum(tm.abs(t), eps), sign)


def _svd_thin_grad(
    a: Variable,
    u: Variable,
    s: Variable,
    vt: Variable,
    du: Variable,
    ds: Variable,
    dvt: Variable,
) -> Variable:
    """The gradient of the thin SVD with respect to ``a``."""
    m, n = a.shape[-2], a.shape[-1]
    k = s.shape[-1]
    eye_k = eye(k, dtype=s.dtype)
    eps = 1e-8 if s.dtype == "float64" else 1e-4
    s_row, s_col = _row(s), _column(s)
    denom = tm.mul(_safe(tm.sub(s_row, s_col), eps), _safe(tm.add(s_row, s_col), eps))
    e = tm.true_div(tm.sub(1, eye_k), denom)
    utgu = matmul(mT(u), du)
    vtgv = matmul(vt, mT(dvt))
    core = tm.mul(tm.mul(e, tm.sub(utgu, mT(utgu))), s_row)
    core = tm.add(core, tm.mul(eye_k, _column(ds)))
    core = tm.add(core, tm.mul(s_col, tm.mul(e, tm.sub(vtgv, mT(vtgv)))))
    a_bar = matmul(matmul(u, core), vt)
    v = mT(vt)
    wide = matmul(
        matmul(tm.true_div(u, s_row), dvt), tm.sub(eye(n, dtype=a_bar.dtype), matmul(v, vt))
    )
    tall = mT(
        matmul(
            matmul(tm.true_div(v, s_row), mT(du)),
            tm.sub(eye(m, dtype=a_bar.dtype), matmul(u, mT(u))),
        )
    )
    rows, cols = a.type.shape[-2:]
    if rows is not None and cols is not None:
        if rows == cols:
            return a_bar
        return tm.add(a_bar, wide if rows < cols else tall)
    correction = where(tm.lt(m, n), wide, tall)
    return tm.add(a_bar, where(tm.eq(m, n), zeros_like(a_bar), correction))


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """The singular value decomposition of a matrix (or a batch).

    Parameters
    ----------
    a
        ``(..., m, n)``.
    full_matrices
        Square ``U`` and ``VT`` (default), or thin ones (``k = min(m, n)`` columns/rows).
    compute_uv
        Return ``[U, s, VT]`` (default) or only ``s``.

    Returns
    -------
    list of TensorVariable or TensorVariable
        ``[U, s, VT]`` with ``a == U[..., :, :k] @ diag(s) @ VT[..., :k, :]``, or ``s``
        (descending).
    """
    return SVD(full_matrices, compute_uv)(a)


#: Modes of :class:`QR`; :func:`qr` also takes NumPy's ``"complete"`` and ``"reduced"``.
QR_MODES = ("full", "economic", "r", "raw")


def _qr_shapes(mode: str, m: Any, n: Any, k: Any) -> list[Any]:
    if mode == "full":
        return [(m, m), (m, n)]
    if mode == "economic":
        return [(m, k), (k, n)]
    if mode == "r":
        return [(m, n)]
    return [(m, n), (k,), (k, n)]  # raw: Householder reflectors, their scales, R


class QR(Op):
    """The QR decomposition ``a = Q @ R`` of each matrix of a batch (``scipy.linalg.qr``'s
    modes, computed with ``numpy.linalg.qr``).

    Parameters
    ----------
    mode
        ``"full"``: ``Q`` ``(m, m)`` and ``R`` ``(m, n)``; ``"economic"``: ``(m, k)`` and
        ``(k, n)`` with ``k = min(m, n)``; ``"r"``: only ``R``, ``(m, n)``; ``"raw"``:
        LAPACK's Householder form ``H`` ``(m, n)`` with the scales ``tau`` ``(k,)``, and
        ``R`` ``(k, n)``.
    """

    __props__ = ("mode",)

    def __init__(self, mode: str = "full") -> None:
        if mode not in QR_MODES:
            raise ValueError(f"QR: invalid mode {mode!r}; expected one of {QR_MODES}")
        self.mode = mode

    def make_node(self, x: Any) -> Apply:
        """A (batch of) matrix; outputs as the mode says."""
        x = matrix_input(x, "QR", "x")
        *batch, m, n = x.type.shape
        k = None if m is None or n is None else min(m, n)
        dtype = linalg_output_dtype(x.dtype)
        outputs = [TensorType(dtype, shape=(*batch, *s))() for s in _qr_shapes(self.mode, m, n, k)]
        return Apply(self, [x], outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """From ``m``, ``n`` and ``k = min(m, n)``."""
        *batch, m, n = shapes[0]
        return [(*batch, *s) for s in _qr_shapes(self.mode, m, n, tm.minimum(m, n))]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Reverse mode after Liao et al. (2019), one formula for ``m >= n`` and ``m < n``.

        With ``k = min(m, n)``, ``U = R[:, :k]``, ``Y = A[:, k:]``, ``dU``/``dV`` the
        matching blocks of ``dR``, ``D = dQ + Y @ dV.T`` and ``M = U @ dU.T - D.T @ Q``:
        ``dA = [U^-1 (D + Q copyltu(M)).T].T`` joined with ``Q @ dV``. For ``"full"``
        with ``m > n`` the extra columns of ``Q`` (any basis of the complement of the
        column space) have no defined gradient: with static shapes saying so, a
        gradient through ``Q`` is a NullType; with unknown shapes, the gradient of those
        columns is taken as zero. ``"raw"`` has no gradient (NullType).
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (a,) = inputs
        rows, cols = a.type.shape[-2:]
        if self.mode == "raw":
            return [grad_not_implemented(self, 0, a, "qr(mode='raw') has no gradient")]
        if self.mode == "r":
            q, r = QR("economic")(a)
            k = tm.minimum(a.shape[-2], a.shape[-1])
            dr = output_grads[0][..., :k, :]
            dq = zeros_like(q)
        else:
            q, r = outputs
            dq, dr = zero_disconnected(outputs, output_grads)
            if self.mode == "full":
                tall = rows is not None and cols is not None and rows > cols
                if tall and not isinstance(output_grads[0].type, DisconnectedType):
                    return [
                        grad_not_implemented(
                            self,
                            0,
                            a,
                            "the gradient through Q of qr(mode='full') of a tall matrix is "
                            "not defined; use mode='economic'",
                        )
                    ]
                # The thin factors: the same for a wide or square matrix.
                k = tm.minimum(a.shape[-2], a.shape[-1])
                q, dq = q[..., :, :k], dq[..., :, :k]
                r, dr = r[..., :k, :], dr[..., :k, :]
        return [_qr_grad(a, q, r, dq, dr)]


def _copyltu(x: Variable) -> Variable:
    return tm.add(tril(x), mT(tril(x, -1)))


def _qr_grad(a: Variable, q: Variable, r: Variable, dq: Variable, dr: Variable) -> Variable:
    k = tm.minimum(a.shape[-2], a.shape[-1])
    y = a[..., :, k:]
    u = r[..., :, :k]
    du, dv = dr[..., :, :k], dr[..., :, k:]
    d = tm.add(dq, matmul(y, mT(dv)))
    m = tm.sub(matmul(u, mT(du)), matmul(mT(d), q))
    rhs = mT(tm.add(d, matmul(q, _copyltu(m))))
    x_bar = mT(SolveTriangular(lower=False, b_ndim=2)(u, rhs))
    y_bar = matmul(q, dv)
    return concatenate([x_bar, y_bar], axis=-1)


def qr(
    A: Any,
    mode: Literal["full", "r", "economic", "raw", "complete", "reduced"] = "full",
    overwrite_a: bool = False,
    pivoting: bool = False,
    lwork: int | None = None,
) -> Any:
    """The QR decomposition of a matrix (or a batch), with ``scipy.linalg.qr``'s modes.

    Parameters
    ----------
    A
        ``(..., m, n)``.
    mode
        ``"full"`` (or ``"complete"``, default), ``"economic"`` (or ``"reduced"``),
        ``"r"`` or ``"raw"`` (see :class:`QR`).
    overwrite_a, lwork
        Accepted for SciPy's signature; unused.
    pivoting
        Must be ``False``: column pivoting needs LAPACK's ``geqp3``, which NumPy does not
        offer.

    Returns
    -------
    list of TensorVariable or TensorVariable
        ``[Q, R]``, ``R`` or ``[H, tau, R]``.

    Raises
    ------
    ValueError
        For an unknown mode, or ``pivoting=True``.
    """
    if pivoting:
        raise ValueError(
            "qr: pivoting=True is not supported (NumPy has no column-pivoted QR); call "
            "qr without pivoting"
        )
    mode = {"complete": "full", "reduced": "economic"}.get(mode, mode)
    return QR(mode)(A)


class MatrixPinv(Op):
    """The Moore-Penrose pseudo-inverse of each matrix of a batch (``numpy.linalg.pinv``).

    Parameters
    ----------
    hermitian
        Whether the matrices are symmetric/Hermitian (then only the lower triangle is
        read, through an eigendecomposition).
    """

    __props__ = ("hermitian",)

    def __init__(self, hermitian: bool = False) -> None:
        self.hermitian = bool(hermitian)

    def make_node(self, x: Any) -> Apply:
        """A (batch of) ``(m, n)`` matrix; the output is ``(n, m)``."""
        x = matrix_input(x, "MatrixPinv", "x", square=self.hermitian)
        *batch, m, n = x.type.shape
        dtype = linalg_output_dtype(x.dtype)
        return Apply(self, [x], [TensorType(dtype, shape=(*batch, n, m))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape with the last two lengths exchanged."""
        *batch, m, n = shapes[0]
        return [(*batch, n, m)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """``(-Z G.T Z + Z Z.T G (I - X Z) + (I - Z X) G Z.T Z).T`` for ``Z = pinv(X)``
        (Golub and Pereyra, 1973), valid where the rank is locally constant."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (x,) = inputs
        (z,) = outputs
        (gz,) = output_grads
        m, n = x.shape[-2], x.shape[-1]
        dtype = z.dtype
        left = tm.sub(eye(m, dtype=dtype), matmul(x, z))
        right = tm.sub(eye(n, dtype=dtype), matmul(z, x))
        total = tm.neg(matmul(matmul(z, mT(gz)), z))
        total = tm.add(total, matmul(matmul(matmul(z, mT(z)), gz), left))
        total = tm.add(total, matmul(matmul(matmul(right, gz), mT(z)), z))
        grad = mT(total)
        return [symmetrized_grad(grad, lower=True) if self.hermitian else grad]


def pinv(x: Any, hermitian: bool = False) -> TensorVariable:
    """The Moore-Penrose pseudo-inverse of a matrix (or a batch).

    Parameters
    ----------
    x
        ``(..., m, n)``.
    hermitian
        Whether ``x`` is symmetric/Hermitian (its lower triangle is read).
    """
    return MatrixPinv(hermitian=hermitian)(x)


# ====================================================================== least squares, tensors


class Lstsq(Op):
    """The least-squares solution of ``a @ x = b`` (``numpy.linalg.lstsq``) for one
    matrix ``a`` ``(m, n)`` and ``b`` ``(m,)`` or ``(m, k)``.

    Inputs: ``a``, ``b`` and optionally ``rcond`` (a 0-d float: singular values below
    ``rcond`` times the largest count as zero; without it NumPy's default, machine
    precision times ``max(m, n)``). Outputs: the solution (``(n,)`` or ``(n, k)``), the
    sums of squared residuals (``(1,)`` or ``(k,)``, empty when ``a`` is rank deficient
    or not tall), the rank (int32) and the singular values of ``a``. Not differentiable.
    """

    __props__ = ()

    def make_node(self, x: Any, y: Any, rcond: Any = None) -> Apply:
        """Check ranks and static lengths.

        Raises
        ------
        TypeError
            If ``x`` is not a matrix, ``y`` not a vector or a matrix, or ``rcond`` not a
            0-d real number.
        ValueError
            If the static row counts of ``x`` and ``y`` differ.
        """
        x = matrix_input(x, "Lstsq", "a")
        y = matrix_input(y, "Lstsq", "b", min_ndim=1)
        for name, v, ndims in (("a", x, (2,)), ("b", y, (1, 2))):
            if v.ndim not in ndims:
                raise TypeError(
                    f"Lstsq: the input {name} ({v}) has Type {v.type}; expected a TensorType "
                    f"of {' or '.join(map(str, ndims))} dimensions (Lstsq does not batch)"
                )
        m, n = x.type.shape
        if m is not None and y.type.shape[0] is not None and m != y.type.shape[0]:
            raise ValueError(
                f"Lstsq: a has static shape {x.type.shape} but b has {y.type.shape}: they "
                "must have the same number of rows"
            )
        inputs = [x, y]
        if rcond is not None:
            rcond = as_tensor_variable(rcond)
            if rcond.ndim != 0 or rcond.dtype not in ("float16", "float32", "float64"):
                rcond_real = rcond.ndim == 0 and np.dtype(rcond.dtype).kind in "iu"
                if not rcond_real:
                    raise TypeError(
                        f"Lstsq: rcond ({rcond}) has Type {rcond.type}; expected a 0-d real number"
                    )
            inputs.append(rcond)
        dtype = linalg_output_dtype(x.dtype, y.dtype)
        real = linalg_real_output_dtype(x.dtype, y.dtype)
        k = min(m, n) if m is not None and n is not None else None
        solution = TensorType(dtype, shape=(n, *y.type.shape[1:]))()
        outputs = [
            solution,
            TensorType(real, shape=(None,))(),
            TensorType("int32", shape=())(),
            TensorType(real, shape=(k,))(),
        ]
        return Apply(self, inputs, outputs)

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented (use ``solve`` or ``pinv`` in a differentiable graph)."""
        comment = "lstsq is not differentiable in opweave; use pinv(a) @ b or solve"
        return [grad_not_implemented(self, i, x, comment) for i, x in enumerate(inputs)]


#: ``numpy.linalg.lstsq`` (an instance of :class:`Lstsq`): ``lstsq(a, b, rcond=None)``.
lstsq = Lstsq()


class TensorInv(Op):
    """The inverse of a tensor with respect to ``tensordot`` (``numpy.linalg.tensorinv``).

    Parameters
    ----------
    ind
        How many leading axes take part in the inverse sum (a positive int).
    """

    __props__ = ("ind",)

    def __init__(self, ind: int = 2) -> None:
        if isinstance(ind, bool) or not isinstance(ind, int | np.integer) or ind <= 0:
            raise ValueError(f"TensorInv: ind must be a positive int, got {ind!r}")
        self.ind = int(ind)

    def make_node(self, a: Any) -> Apply:
        """A tensor of more than ``ind`` dimensions; the output's shape is
        ``a.shape[ind:] + a.shape[:ind]``."""
        a = matrix_input(a, "TensorInv", "a", min_ndim=self.ind + 1)
        shape = a.type.shape[self.ind :] + a.type.shape[: self.ind]
        return Apply(self, [a], [TensorType(linalg_output_dtype(a.dtype), shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape rotated by ``ind``."""
        s = tuple(shapes[0])
        return [s[self.ind :] + s[: self.ind]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The gradient of the inverse of the matrix ``a`` reshaped, reshaped back."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (a,) = inputs
        (out,) = outputs
        (g,) = output_grads
        shape = [a.shape[i] for i in range(a.ndim)]
        rows = tm.prod(a.shape[: self.ind])
        cols = tm.prod(a.shape[self.ind :])
        xi_t = mT(reshape(out, (cols, rows)))
        g_mat = reshape(g, (cols, rows))
        return [reshape(tm.neg(matmul(matmul(xi_t, g_mat), xi_t)), shape)]


def tensorinv(a: Any, ind: int = 2) -> TensorVariable:
    """``numpy.linalg.tensorinv``: the inverse of ``a`` for ``tensordot(.., .., ind)``.

    Parameters
    ----------
    a
        A tensor with ``prod(a.shape[:ind]) == prod(a.shape[ind:])``.
    ind
        The number of leading axes in the inverse sum.

    Returns
    -------
    TensorVariable
        Of shape ``a.shape[ind:] + a.shape[:ind]``; a singular ``a`` raises
        ``numpy.linalg.LinAlgError`` when the function runs.
    """
    return TensorInv(ind)(a)


class TensorSolve(Op):
    """Solve the tensor equation ``tensordot(a, x, x.ndim) == b`` (``numpy.linalg.tensorsolve``).

    Parameters
    ----------
    axes
        Axes of ``a`` moved to the end before solving (``None``: none).
    """

    __props__ = ("axes",)

    def __init__(self, axes: Sequence[int] | None = None) -> None:
        self.axes = None if axes is None else tuple(int(i) for i in axes)

    def make_node(self, a: Any, b: Any) -> Apply:
        """``a`` of more dimensions than ``b``; the output has ``a.ndim - b.ndim``."""
        a = as_tensor_variable(a)
        b = as_tensor_variable(b)
        if a.ndim <= b.ndim:
            raise TypeError(
                f"TensorSolve: a ({a.type}) must have more dimensions than b ({b.type})"
            )
        if self.axes is not None and any(not -a.ndim <= i < a.ndim for i in self.axes):
            raise ValueError(f"TensorSolve: axes {self.axes} are out of range for the {a.ndim}-d a")
        shape = self._moved(list(a.type.shape))
        dtype = linalg_output_dtype(a.dtype, b.dtype)
        return Apply(self, [a, b], [TensorType(dtype, shape=tuple(shape[b.ndim :]))()])

    def _moved(self, shape: list[Any]) -> list[Any]:
        """``shape`` with the entries of ``axes`` moved to the end (as NumPy moves them)."""
        if self.axes is None:
            return shape
        nd = len(shape)
        order = list(range(nd))
        for i in self.axes:
            order.remove(i % nd)
            order.append(i % nd)
        return [shape[i] for i in order]

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The trailing lengths of ``a`` (axes moved) after ``b``'s rank."""
        a_shape, b_shape = shapes
        return [tuple(self._moved(list(a_shape))[len(b_shape) :])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented (reshape to a matrix and use ``solve`` to differentiate)."""
        comment = "reshape to a matrix and use solve for a differentiable graph"
        return [grad_not_implemented(self, i, x, comment) for i, x in enumerate(inputs)]


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> TensorVariable:
    """``numpy.linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) == b``.

    Parameters
    ----------
    a
        Of shape ``b.shape + Q`` with ``prod(Q) == prod(b.shape)``.
    b
        The right-hand side.
    axes
        Axes of ``a`` moved to the end first.
    """
    return TensorSolve(axes)(a, b)


# ====================================================================== graph-building functions


def matrix_dot(*args: Any) -> TensorVariable:
    """``args[0] . args[1] . ...``: the product of several matrices, left to right (``dot``)."""
    if not args:
        raise TypeError("matrix_dot: give at least one matrix")
    result = as_tensor_variable(args[0])
    for a in args[1:]:
        result = dot(result, a)
    return result


def matrix_power(M: Any, n: int) -> TensorVariable:
    """``M`` raised to the integer power ``n`` by repeated squaring (batched over leading axes).

    A negative ``n`` raises the pseudo-inverse (as PyTensor does; it is the inverse for
    invertible ``M``), and ``n == 0`` gives identity matrices.

    Raises
    ------
    TypeError
        If ``n`` is not an int.
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"matrix_power: n must be an int, got {n!r}")
    M = matrix_input(M, "matrix_power", "M", square=True)
    n = int(n)
    if n < 0:
        M, n = pinv(M), -n
    if n == 0:
        return tm.add(zeros_like(M), eye(M.shape[-1], dtype=M.dtype))
    result: TensorVariable | None = None
    power = M
    while True:
        n, bit = divmod(n, 2)
        if bit:
            result = power if result is None else matmul(result, power)
        if not n:
            return result
        power = matmul(power, power)


def kron(a: Any, b: Any) -> TensorVariable:
    """The Kronecker product ``numpy.kron(a, b)`` (the ranks must sum to 3 or more).

    Raises
    ------
    TypeError
        If ``a.ndim + b.ndim < 3``, as in PyTensor.
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim + b.ndim <= 2:
        raise TypeError(
            f"kron: the inputs' dimensions must sum to 3 or more, got {a.ndim} ({a}) and "
            f"{b.ndim} ({b})"
        )
    nd = max(a.ndim, b.ndim)
    a = a.dimshuffle(*["x"] * (nd - a.ndim), *range(a.ndim))
    b = b.dimshuffle(*["x"] * (nd - b.ndim), *range(b.ndim))
    spread_a = a.dimshuffle(*[p for i in range(nd) for p in (i, "x")])
    spread_b = b.dimshuffle(*[p for i in range(nd) for p in ("x", i)])
    shape = [tm.mul(a.shape[i], b.shape[i]) for i in range(nd)]
    return reshape(tm.mul(spread_a, spread_b), shape)


# ---------------------------------------------------------------------- norm


def _squares(x: TensorVariable) -> Any:
    """``|x|**2`` elementwise (real for complex ``x``)."""
    return tm.sqr(tm.abs(x)) if is_complex(x) else tm.sqr(x)


def _core_axis(axis: Any, core_ndim: int, x: TensorVariable) -> int:
    """``axis`` (an int in ``[-core_ndim, core_ndim)``) made non-negative."""
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"norm: axis entries must be ints, got {axis!r}")
    if not -core_ndim <= axis < core_ndim:
        raise ValueError(f"norm: axis {axis} is out of range for the matrices of {x}")
    return int(axis) % core_ndim


def _svd_norm(x: TensorVariable, row: int, col: int, reduce: Any) -> TensorVariable:
    """``reduce`` of the singular values of the matrices in axes ``row`` and ``col``."""
    rest = [i for i in range(x.ndim) if i not in (row, col)]
    moved = transpose(x, [*rest, row, col])
    return reduce(svd(moved, compute_uv=False), axis=-1)


def _vector_norm(x: TensorVariable, ord: Any, axis: int, keepdims: bool, matrix_like: bool) -> Any:
    if ord is None or (ord in ("fro", "f") and matrix_like):
        return tm.sqrt(tm.sum(_squares(x), axis=axis, keepdims=keepdims))
    if ord == "inf" or ord == np.inf:
        return tm.max(tm.abs(x), axis=axis, keepdims=keepdims)
    if ord == "-inf" or ord == -np.inf:
        return tm.min(tm.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return tm.sum(tm.neq(x, 0), axis=axis, keepdims=keepdims)
    if ord == 1:
        return tm.sum(tm.abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid norm order {ord!r} for vectors")
    total = tm.sum(tm.pow(tm.abs(x), ord), axis=axis, keepdims=keepdims)
    return tm.pow(total, 1.0 / ord)


def _matrix_norm(x: TensorVariable, ord: Any, row: int, col: int) -> Any:
    if ord in (None, "fro", "f"):
        return tm.sqrt(tm.sum(_squares(x), axis=(row, col)))
    if ord in ("inf", np.inf, "-inf", -np.inf):
        reduce = tm.max if ord in ("inf", np.inf) else tm.min
        return reduce(tm.sum(tm.abs(x), axis=col), axis=row - (row > col))
    if ord in (1, -1):
        reduce = tm.max if ord == 1 else tm.min
        return reduce(tm.sum(tm.abs(x), axis=row), axis=col - (col > row))
    if ord in (2, -2):
        return _svd_norm(x, row, col, tm.max if ord == 2 else tm.min)
    if ord == "nuc":
        return _svd_norm(x, row, col, tm.sum)
    raise ValueError(f"norm: invalid norm order {ord!r} for matrices")


def norm(
    x: Any,
    ord: float | str | None = None,
    axis: int | tuple[int, ...] | None = None,
    keepdims: bool = False,
) -> TensorVariable:
    """A matrix or vector norm (PyTensor's ``norm``).

    Parameters
    ----------
    x
        The tensor, real or complex (whose norms are real, from the moduli, as NumPy's).
    ord
        The order: ``None`` (2-norm of vectors, Frobenius of matrices), ``"fro"``/
        ``"f"``, ``"nuc"``, ``"inf"``/``inf``, ``"-inf"``/``-inf``, an int (``0``, ``1``,
        ``-1``, ``2``, ``-2`` for matrices) or, for vectors, any float.
    axis
        ``None``: the norm of the vector (for 1-d ``x``) or of each matrix in the last
        two axes (for 2-d and more: leading axes are a batch, as in PyTensor, not
        flattened as in NumPy). An int: vector norms along that axis. A pair: matrix
        norms over those axes, counted within the last two axes when ``x`` has more
        than 2 (PyTensor's rule).
    keepdims
        Keep the reduced axes with length 1.

    Raises
    ------
    TypeError
        For an ``axis`` that is not an int, a tuple of ints or ``None``.
    ValueError
        For an invalid ``ord`` or an ``axis`` of more than two entries.
    """
    x = as_tensor_variable(x)
    core_ndim = min(2, x.ndim)
    batch_ndim = x.ndim - core_ndim
    if x.ndim == 0:
        return tm.abs(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and core_ndim == 2) or (ord == 2 and core_ndim == 1):
            axes = tuple(range(batch_ndim, x.ndim))
            return tm.sqrt(tm.sum(_squares(x), axis=axes, keepdims=keepdims))
        axis = tuple(range(core_ndim))
    elif not isinstance(axis, tuple):
        if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
            raise TypeError(f"norm: axis must be None, an int or a tuple of ints, got {axis!r}")
        axis = (int(axis),)
    if len(axis) == 1:
        (ax,) = axis
        if not -x.ndim <= ax < x.ndim:
            raise ValueError(f"norm: axis {ax} is out of range for the {x.ndim}-d {x}")
        return _vector_norm(x, ord, ax % x.ndim, keepdims, core_ndim == 2)
    if len(axis) == 2:
        row, col = (batch_ndim + _core_axis(a, core_ndim, x) for a in axis)
        if row == col:
            raise ValueError(f"norm: the two axes {axis} are the same axis")
        result = _matrix_norm(x, ord, row, col)
        if keepdims:
            pattern: list[Any] = list(range(x.ndim - 2))
            for position in sorted((row, col)):
                pattern.insert(position, "x")
            result = result.dimshuffle(*pattern)
        return result
    raise ValueError(f"norm: axis must name one or two axes, got {axis!r}")
