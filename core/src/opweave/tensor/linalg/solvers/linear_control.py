"""Sylvester and Lyapunov equations, with PyTensor's ``pytensor.tensor.linalg`` names:
:func:`solve_sylvester`, :func:`solve_continuous_lyapunov`, :func:`solve_discrete_lyapunov`,
and the Op :class:`SolveSylvester`.

With SciPy's conventions (which PyTensor's functions follow):

- ``solve_sylvester(A, B, Q)`` solves ``A @ X + X @ B = Q``;
- ``solve_continuous_lyapunov(A, Q)`` solves ``A @ X + X @ A^H = Q``;
- ``solve_discrete_lyapunov(A, Q)`` solves ``A @ X @ A^H - X + Q = 0``.

Batched over leading axes (broadcast where their static length is 1). The Lyapunov
solvers are graphs built on :class:`SolveSylvester` and
:func:`~opweave.tensor.slinalg.solve`, so their gradients follow from those; the
gradient of :class:`SolveSylvester` is itself the solution of a Sylvester equation
(Kao and Hennequin 2020).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import (
    batch_shape_of,
    broadcast_batch,
    complex_nulls,
    linalg_output_dtype,
    matrix_input,
    mT,
)
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_vars
from opweave.tensor.basic import cast, eye
from opweave.tensor.blas import matmul
from opweave.tensor.elemwise import sum_to_broadcast
from opweave.tensor.shape import reshape
from opweave.tensor.slinalg import solve
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = [
    "SolveSylvester",
    "solve_continuous_lyapunov",
    "solve_discrete_lyapunov",
    "solve_sylvester",
]


def _first_known(*lengths: int | None) -> int | None:
    return next((n for n in lengths if n is not None), None)


def _adjoint(x: Variable) -> TensorVariable:
    return mT(tm.conj(x)) if tensor_type_of(x).dtype.startswith("complex") else mT(x)


class SolveSylvester(Op):
    """Solve ``A @ X + X @ B = Q`` for ``X`` (``scipy.linalg.solve_sylvester``), batched.

    Inputs ``A`` ``(..., m, m)``, ``B`` ``(..., n, n)`` and ``Q`` ``(..., m, n)``; the
    output ``X`` is ``(..., m, n)``. A singular equation (an eigenvalue of ``A`` equal
    to minus one of ``B``) gives NaN for that matrix of the batch.
    """

    __props__ = ()

    def make_node(self, A: Any, B: Any, Q: Any) -> Apply:
        """Check the three inputs and broadcast their batch axes.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square ``A`` or ``B``, or static lengths of ``Q`` that
            do not match them.
        """
        who = "SolveSylvester"
        A = matrix_input(A, who, "A", square=True)
        B = matrix_input(B, who, "B", square=True)
        Q = matrix_input(Q, who, "Q")
        (A, B, Q), batch = broadcast_batch([A, B, Q], [2, 2, 2], who)
        m = _first_known(*A.type.shape[-2:])
        n = _first_known(*B.type.shape[-2:])
        qm, qn = Q.type.shape[-2:]
        if (m is not None and qm is not None and m != qm) or (
            n is not None and qn is not None and n != qn
        ):
            raise ValueError(
                f"{who}: A has static shape {A.type.shape} and B {B.type.shape}, so Q must "
                f"be ({m}, {n}) in its last two axes, got {Q.type.shape}"
            )
        dtype = linalg_output_dtype(A.dtype, B.dtype, Q.dtype)
        shape = (*batch, _first_known(m, qm), _first_known(n, qn))
        return Apply(self, [A, B, Q], [TensorType(dtype, shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast batch shape, then ``A``'s order and ``B``'s order."""
        a_shape, b_shape, _ = shapes
        batch = batch_shape_of(node, shapes, len(a_shape) - 2)
        return [(*batch, a_shape[-1], b_shape[-1])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """With ``S`` solving ``A.T @ S + S @ B.T = X_bar``: ``Q_bar = S``,
        ``A_bar = -S @ X.T`` and ``B_bar = -X.T @ S``."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        a, b, _ = inputs
        (x,) = tensor_vars(outputs)
        (x_bar,) = output_grads
        s = self(mT(a), mT(b), x_bar)
        grads = [tm.neg(matmul(s, mT(x))), tm.neg(matmul(mT(x), s)), s]
        batch = x.type.shape[:-2]
        return [
            sum_to_broadcast(tensor_out(g), v, (*batch, *v.type.shape[-2:]))
            for g, v in zip(grads, tensor_vars(inputs), strict=True)
        ]


def solve_sylvester(A: Any, B: Any, Q: Any) -> TensorVariable:
    """Solve the Sylvester equation ``A @ X + X @ B = Q`` for ``X``.

    Parameters
    ----------
    A
        ``(..., m, m)``.
    B
        ``(..., n, n)``.
    Q
        ``(..., m, n)``.

    Returns
    -------
    TensorVariable
        ``X``, ``(..., m, n)``; NaN where the equation is singular.
    """
    return tensor_out(SolveSylvester()(A, B, Q))


def solve_continuous_lyapunov(A: Any, Q: Any) -> TensorVariable:
    """Solve the continuous Lyapunov equation ``A @ X + X @ A^H = Q`` for ``X``.

    The Sylvester equation with ``B = A^H``, as in SciPy (and PyTensor).

    Parameters
    ----------
    A, Q
        ``(..., n, n)``.

    Returns
    -------
    TensorVariable
        ``X``, ``(..., n, n)``.
    """
    A = matrix_input(A, "solve_continuous_lyapunov", "A", square=True)
    return solve_sylvester(A, _adjoint(A), Q)


def _batched_kron(a: TensorVariable, b: TensorVariable) -> TensorVariable:
    """``kron(a, b)`` of the last two axes of batches of square matrices of one order."""
    nd = a.ndim
    n = a.shape[-1]
    spread_a = a.dimshuffle(*range(nd - 2), nd - 2, "x", nd - 1, "x")
    spread_b = b.dimshuffle(*range(nd - 2), "x", nd - 2, "x", nd - 1)
    product = tensor_out(tm.mul(spread_a, spread_b))
    shape = [product.shape[i] for i in range(nd - 2)] + [tm.mul(n, n), tm.mul(n, n)]
    return reshape(product, shape)


def solve_discrete_lyapunov(
    A: Any, Q: Any, method: Literal["direct", "bilinear"] = "bilinear"
) -> TensorVariable:
    """Solve the discrete Lyapunov equation ``A @ X @ A^H - X + Q = 0`` for ``X``.

    Parameters
    ----------
    A, Q
        ``(..., n, n)``.
    method
        ``"bilinear"`` (default): the bilinear transformation to a continuous Lyapunov
        equation, solved with :class:`SolveSylvester`. ``"direct"``: the linear system
        ``(I - kron(A, conj(A))) vec(X) = vec(Q)`` of order ``n**2``, which costs
        ``O(n**6)`` and is meant for small ``n`` (up to a few tens); it is a graph of
        standard Ops only.

    Returns
    -------
    TensorVariable
        ``X``, ``(..., n, n)``.

    Raises
    ------
    ValueError
        For a ``method`` other than ``"direct"`` and ``"bilinear"``.
    """
    if method not in ("direct", "bilinear"):
        raise ValueError(
            f"solve_discrete_lyapunov: method must be 'direct' or 'bilinear', got {method!r}"
        )
    who = "solve_discrete_lyapunov"
    A = matrix_input(A, who, "A", square=True)
    Q = matrix_input(Q, who, "Q", square=True)
    dtype = linalg_output_dtype(A.dtype, Q.dtype)
    A, Q = cast(A, dtype), cast(Q, dtype)
    n = A.shape[-1]
    if method == "direct":
        conj_a = tm.conj(A) if A.dtype.startswith("complex") else A
        system = tm.sub(eye(tm.mul(n, n), dtype=dtype), _batched_kron(A, conj_a))
        vec_q = reshape(Q, [Q.shape[i] for i in range(Q.ndim - 2)] + [tm.mul(n, n)])
        vec_x = solve(system, vec_q, b_ndim=1)
        return reshape(vec_x, [vec_x.shape[i] for i in range(vec_x.ndim - 1)] + [n, n])
    identity = eye(n, dtype=dtype)
    a_h = _adjoint(A)
    b1 = tm.add(a_h, identity)
    b2 = tm.sub(a_h, identity)
    b = mT(solve(mT(b1), mT(b2), b_ndim=2))
    ai_inv_q = solve(tm.add(A, identity), Q, b_ndim=2)
    c = tm.mul(2, mT(solve(mT(b1), mT(ai_inv_q), b_ndim=2)))
    return solve_continuous_lyapunov(_adjoint(b), tm.neg(c))
