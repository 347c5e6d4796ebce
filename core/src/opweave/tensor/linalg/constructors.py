"""Block-diagonal matrices (PyTensor's ``pytensor.tensor.linalg`` name :func:`block_diag`,
and its Op :class:`BlockDiagonal`).

The Op takes batches of matrices, ``(..., m_i, n_i)``, directly; the batch axes broadcast
where their static length is 1, as for the solvers of :mod:`opweave.tensor.slinalg`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor import math as tm
from opweave.tensor._linalg_support import batch_shape_of, broadcast_batch, matrix_input
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_vars
from opweave.tensor.basic import as_tensor_variable
from opweave.tensor.elemwise import sum_to_broadcast
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["BlockDiagonal", "block_diag"]


def _total(lengths: Sequence[int | None]) -> int | None:
    known = [n for n in lengths if n is not None]
    return None if len(known) != len(lengths) else int(sum(known))


class BlockDiagonal(Op):
    """The block-diagonal matrix of ``n_inputs`` matrices (``scipy.linalg.block_diag``).

    Inputs ``(..., m_i, n_i)``; the output ``(..., sum m_i, sum n_i)`` holds them on its
    diagonal and zeros elsewhere, in the inputs' promoted dtype.

    Parameters
    ----------
    n_inputs
        The number of matrices, 2 or more.
    """

    __props__ = ("n_inputs",)

    def __init__(self, n_inputs: int) -> None:
        if isinstance(n_inputs, bool) or not isinstance(n_inputs, int | np.integer):
            raise TypeError(f"BlockDiagonal: n_inputs must be an int, got {n_inputs!r}")
        if n_inputs <= 1:
            raise ValueError(f"BlockDiagonal: n_inputs must be greater than 1, got {n_inputs}")
        self.n_inputs = int(n_inputs)

    def make_node(self, *matrices: Any) -> Apply:
        """``n_inputs`` (batches of) matrices, their batch axes broadcast.

        Raises
        ------
        TypeError
            For an input that is not a numeric tensor of at least 2 dimensions.
        ValueError
            For a count of inputs other than ``n_inputs``, or static batch lengths that
            do not broadcast.
        """
        if len(matrices) != self.n_inputs:
            raise ValueError(
                f"BlockDiagonal: expected {self.n_inputs} matrices, got {len(matrices)}"
            )
        tensors = [
            matrix_input(m, "BlockDiagonal", f"matrices[{i}]") for i, m in enumerate(matrices)
        ]
        padded, batch = broadcast_batch(tensors, [2] * len(tensors), "BlockDiagonal")
        dtype = np.result_type(*(t.dtype for t in tensors)).name
        rows = _total([t.type.shape[-2] for t in tensors])
        cols = _total([t.type.shape[-1] for t in tensors])
        return Apply(self, padded, [TensorType(dtype, shape=(*batch, rows, cols))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast batch shape, then the sums of the rows and of the columns."""
        batch = batch_shape_of(node, shapes, len(shapes[0]) - 2)
        rows = tm.add(*(s[-2] for s in shapes))
        cols = tm.add(*(s[-1] for s in shapes))
        return [(*batch, rows, cols)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Each input's block of the output gradient (summed over broadcast batch axes)."""
        (g,) = tensor_vars(output_grads)
        batch = tensor_type_of(outputs[0]).shape[:-2]
        grads: list[Variable] = []
        row: Any = 0
        col: Any = 0
        for x in tensor_vars(inputs):
            rows, cols = x.shape[-2], x.shape[-1]
            end_row, end_col = tm.add(row, rows), tm.add(col, cols)
            block = g[..., row:end_row, col:end_col]
            grads.append(sum_to_broadcast(block, x, (*batch, *x.type.shape[-2:])))
            row, col = end_row, end_col
        return grads


def block_diag(*matrices: Any) -> TensorVariable:
    """The block-diagonal matrix of the given matrices (``scipy.linalg.block_diag``, batched).

    Given ``A``, ``B`` and ``C``, the result is ``[[A, 0, 0], [0, B, 0], [0, 0, C]]``.

    Parameters
    ----------
    *matrices
        Tensors of at least 2 dimensions: the last two are the blocks, the leading ones
        a batch (broadcast where their static length is 1).

    Returns
    -------
    TensorVariable
        The block-diagonal matrix; a single input is returned as it is.

    Raises
    ------
    ValueError
        If no matrix is given.
    """
    if not matrices:
        raise ValueError("block_diag: expected at least one matrix, got none")
    if len(matrices) == 1:
        return as_tensor_variable(matrices[0])
    return tensor_out(BlockDiagonal(n_inputs=len(matrices))(*matrices))
