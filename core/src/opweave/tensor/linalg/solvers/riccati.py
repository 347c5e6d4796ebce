"""The discrete algebraic Riccati equation, with PyTensor's name
(``pytensor.tensor.linalg.solve_discrete_are``): :func:`solve_discrete_are` and its Op
:class:`SolveDiscreteARE`.

``solve_discrete_are(A, B, Q, R)`` returns the stabilising solution ``X`` of

    ``A^H X A - X - A^H X B (R + B^H X B)^-1 B^H X A + Q = 0``

(SciPy's convention), Hermitian, batched over leading axes. Where the iteration that
computes it does not converge (no stabilising solution, a singular ``R``) the matrix of the
batch is NaN, as in PyTensor. The gradient is the closed form of Kao and Hennequin (2020)
through a discrete Lyapunov equation, for real inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
from opweave.tensor._typing import tensor_out, tensor_vars
from opweave.tensor.blas import matmul
from opweave.tensor.elemwise import sum_to_broadcast
from opweave.tensor.linalg.solvers.linear_control import solve_discrete_lyapunov
from opweave.tensor.slinalg import solve
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["SolveDiscreteARE", "solve_discrete_are"]


def _first_known(*lengths: int | None) -> int | None:
    return next((n for n in lengths if n is not None), None)


class SolveDiscreteARE(Op):
    """Solve the discrete algebraic Riccati equation for its stabilising solution ``X``.

    Inputs ``A`` ``(..., m, m)``, ``B`` ``(..., m, n)``, ``Q`` ``(..., m, m)`` and ``R``
    ``(..., n, n)``; the output ``X`` is ``(..., m, m)``.

    Parameters
    ----------
    enforce_Q_symmetric
        Replace ``Q`` by ``(Q + Q^H) / 2`` before solving.
    """

    __props__ = ("enforce_Q_symmetric",)

    def __init__(self, enforce_Q_symmetric: bool = False) -> None:
        if not isinstance(enforce_Q_symmetric, bool):
            raise TypeError(
                f"SolveDiscreteARE: enforce_Q_symmetric must be a bool, got {enforce_Q_symmetric!r}"
            )
        self.enforce_Q_symmetric = enforce_Q_symmetric

    def make_node(self, A: Any, B: Any, Q: Any, R: Any) -> Apply:
        """Check the four inputs and broadcast their batch axes.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square ``A``, ``Q`` or ``R``, or static lengths that do
            not fit ``A (m, m)``, ``B (m, n)``, ``Q (m, m)``, ``R (n, n)``.
        """
        who = "SolveDiscreteARE"
        A = matrix_input(A, who, "A", square=True)
        B = matrix_input(B, who, "B")
        Q = matrix_input(Q, who, "Q", square=True)
        R = matrix_input(R, who, "R", square=True)
        (A, B, Q, R), batch = broadcast_batch([A, B, Q, R], [2, 2, 2, 2], who)
        m_lengths = [*A.type.shape[-2:], B.type.shape[-2], *Q.type.shape[-2:]]
        n_lengths = [B.type.shape[-1], *R.type.shape[-2:]]
        for what, lengths in (("m", m_lengths), ("n", n_lengths)):
            known = {n for n in lengths if n is not None}
            if len(known) > 1:
                raise ValueError(
                    f"{who}: A {A.type.shape}, B {B.type.shape}, Q {Q.type.shape} and R "
                    f"{R.type.shape} must be (m, m), (m, n), (m, m) and (n, n); the static "
                    f"lengths of {what} disagree: {sorted(known)}"
                )
        m = _first_known(*m_lengths)
        dtype = linalg_output_dtype(A.dtype, B.dtype, Q.dtype, R.dtype)
        return Apply(self, [A, B, Q, R], [TensorType(dtype, shape=(*batch, m, m))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast batch shape, then ``A``'s order twice."""
        a_shape = shapes[0]
        batch = batch_shape_of(node, shapes, len(a_shape) - 2)
        return [(*batch, a_shape[-1], a_shape[-1])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Kao and Hennequin (2020): with ``K = (R + B^T X B)^-1 B^T X A``,
        ``A_t = A - B K`` and ``S`` solving ``A_t S A_t^T - S + (X_bar + X_bar^T) / 2 = 0``:
        ``A_bar = 2 X A_t S``, ``B_bar = -2 X A_t S K^T``, ``Q_bar = S``,
        ``R_bar = K S K^T``."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        a, b, _, r = inputs
        (x,) = tensor_vars(outputs)
        (x_bar,) = output_grads
        inner = tm.add(r, matmul(matmul(mT(b), x), b))
        k = solve(inner, matmul(matmul(mT(b), x), a))
        a_t = tm.sub(a, matmul(b, k))
        sym = tm.mul(tm.add(x_bar, mT(x_bar)), 0.5)
        s = solve_discrete_lyapunov(a_t, sym)
        xas = matmul(matmul(x, a_t), s)
        grads = [
            tm.mul(xas, 2.0),
            tm.mul(matmul(xas, mT(k)), -2.0),
            s,
            matmul(matmul(k, s), mT(k)),
        ]
        batch = x.type.shape[:-2]
        return [
            sum_to_broadcast(tensor_out(g), v, (*batch, *v.type.shape[-2:]))
            for g, v in zip(grads, tensor_vars(inputs), strict=True)
        ]


def solve_discrete_are(
    A: Any, B: Any, Q: Any, R: Any, enforce_Q_symmetric: bool = False
) -> TensorVariable:
    """Solve ``A^H X A - X - A^H X B (R + B^H X B)^-1 B^H X A + Q = 0`` for the stabilising
    ``X``.

    Parameters
    ----------
    A
        ``(..., m, m)``.
    B
        ``(..., m, n)``.
    Q
        ``(..., m, m)``, Hermitian.
    R
        ``(..., n, n)``, Hermitian and invertible.
    enforce_Q_symmetric
        Use ``(Q + Q^H) / 2`` in place of ``Q``.

    Returns
    -------
    TensorVariable
        ``X``, ``(..., m, m)``, Hermitian; NaN where no stabilising solution was found.
    """
    return tensor_out(SolveDiscreteARE(enforce_Q_symmetric=enforce_Q_symmetric)(A, B, Q, R))
