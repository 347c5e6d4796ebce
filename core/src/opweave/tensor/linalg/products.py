"""The matrix exponential (PyTensor's ``pytensor.tensor.linalg`` name :func:`expm`, and
its Op :class:`Expm`).

The Op takes a batch of square matrices, ``(..., m, m)``, directly. The Python backend
computes it with NumPy only, by scaling and squaring with a Padé approximant (Higham
2005, degrees 3 to 13 with the standard thresholds). The gradient is the adjoint of the
Fréchet derivative, read from one exponential of a ``2m x 2m`` block matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor._linalg_support import (
    complex_nulls,
    mT,
    square_matrix_apply,
)
from opweave.tensor._typing import tensor_out, tensor_var, tensor_vars
from opweave.tensor.basic import cast, join, zeros_like
from opweave.tensor.variable import TensorVariable

__all__ = ["Expm", "expm"]


class Expm(Op):
    """The matrix exponential of each square matrix of a batch (``scipy.linalg.expm``).

    The output has the input's shape and the working dtype of :func:`linalg_output_dtype`
    (``float32`` for ``float32`` and small integers, ``float64`` otherwise, complex for
    complex inputs).
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
        return square_matrix_apply(self, A, "A")

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The adjoint of the Fréchet derivative ``L(A, E)`` of ``expm`` at ``A``.

        ``expm([[A, E], [0, A]])`` has ``L(A, E)`` as its upper-right block (Mathias
        1996), and the adjoint of ``E -> L(A, E)`` is ``G -> L(A.T, G)``: the gradient
        is the upper-right block of ``expm([[A.T, G], [0, A.T]])``.
        """
        nulls = complex_nulls(self, inputs)
        if nulls is not None:
            return nulls
        (a,) = tensor_vars(inputs)
        (g,) = output_grads
        at = cast(mT(a), tensor_var(outputs[0]).dtype)
        n = a.shape[-1]
        top = join(-1, at, g)
        bottom = join(-1, zeros_like(at), at)
        augmented = join(-2, top, bottom)
        return [expm(augmented)[..., :n, n:]]


def expm(A: Any) -> TensorVariable:
    """The matrix exponential ``exp(A) = sum_k A**k / k!`` of a square matrix (or a batch).

    Parameters
    ----------
    A
        A ``(..., m, m)`` tensor.

    Returns
    -------
    TensorVariable
        ``exp(A)``, of ``A``'s shape; a matrix with a non-finite entry gives NaN.
    """
    return tensor_out(Expm()(A))
