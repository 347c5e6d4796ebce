"""The eigenvalues of symmetric/Hermitian matrices alone (PyTensor's ``pytensor.tensor.linalg``
name :func:`eigvalsh`, and its Op :class:`Eigvalsh`).

The Op takes a batch of matrices ``(..., m, m)`` directly, reads one triangle, and
solves the standard problem or, given ``b`` (symmetric positive definite), the
generalized one ``a @ v = w * b @ v``. Its gradient uses the eigenvectors of
:class:`~opweave.tensor.nlinalg.Eigh`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import (
    complex_nulls,
    linalg_real_output_dtype,
    matrix_input,
    mT,
    square_shape,
    symmetrized_grad,
)
from opweave.tensor._typing import tensor_out, tensor_outs, tensor_vars
from opweave.tensor.blas import matmul
from opweave.tensor.nlinalg import Eigh
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["Eigvalsh", "eigvalsh"]


class Eigvalsh(Op):
    """The eigenvalues (ascending) of each symmetric/Hermitian matrix of a batch
    (``scipy.linalg.eigvalsh``), optionally of the generalized problem with ``b``.

    The output is real (``float32`` for ``float32``/``complex64`` inputs).

    Parameters
    ----------
    lower
        Read the lower (default) or the upper triangle of the inputs.
    """

    __props__ = ("lower",)

    def __init__(self, lower: bool = True) -> None:
        if lower not in (True, False):
            raise TypeError(f"Eigvalsh: lower must be True or False, got {lower!r}")
        self.lower = bool(lower)

    def make_node(self, a: Any, b: Any = None) -> Apply:
        """One or two (batches of) square matrices of the same shape.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a statically non-square input, or ``a`` and ``b`` of different ranks or
            static shapes.
        """
        a = matrix_input(a, "Eigvalsh", "a", square=True)
        inputs = [a]
        if b is not None:
            b = matrix_input(b, "Eigvalsh", "b", square=True)
            clash = any(
                m is not None and n is not None and m != n
                for m, n in zip(a.type.shape, b.type.shape, strict=False)
            )
            if b.ndim != a.ndim or clash:
                raise ValueError(
                    f"Eigvalsh: a ({a.type}) and b ({b.type}) must have the same shape"
                )
            inputs.append(b)
        dtype = linalg_real_output_dtype(*(x.dtype for x in inputs))
        return Apply(self, inputs, [TensorType(dtype, shape=square_shape(a)[:-1])()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``a``'s shape without its last axis."""
        return [tuple(shapes[0][:-1])]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """With the eigenvectors ``V`` (``V.T @ b @ V == I``): ``gA = V @ diag(gw) @ V.T``
        and ``gB = -V @ diag(gw * w) @ V.T``, moved onto the triangle read."""
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (gw,) = tensor_vars(output_grads)
        w, v = tensor_outs(Eigh(lower=self.lower)(*inputs))
        nd = gw.ndim

        def sandwich(d: TensorVariable) -> TensorVariable:
            return matmul(tm.mul(v, d.dimshuffle(*range(nd - 1), "x", nd - 1)), mT(v))

        ga = symmetrized_grad(sandwich(gw), self.lower)
        if len(inputs) == 1:
            return [ga]
        gb = symmetrized_grad(tm.neg(sandwich(tensor_out(tm.mul(gw, w)))), self.lower)
        return [ga, gb]


def eigvalsh(a: Any, b: Any = None, lower: bool = True) -> TensorVariable:
    """The eigenvalues of a symmetric/Hermitian matrix (or a batch), in ascending order.

    The same as ``eigh(a, b, lower)[0]`` without computing the eigenvectors.

    Parameters
    ----------
    a
        ``(..., m, m)``; only the triangle named by ``lower`` is read.
    b
        ``None`` (default), or ``(..., m, m)`` symmetric positive definite for the
        generalized problem ``a @ v = w * b @ v`` (``b`` not positive definite raises
        ``numpy.linalg.LinAlgError`` when the function runs).
    lower
        Read the lower (default) or the upper triangle.

    Returns
    -------
    TensorVariable
        ``(..., m)``: the real eigenvalues.
    """
    return tensor_out(Eigvalsh(lower=lower)(a) if b is None else Eigvalsh(lower=lower)(a, b))
