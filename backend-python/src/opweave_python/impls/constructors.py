"""NumPy implementation of :mod:`opweave.tensor.linalg.constructors`: block-diagonal
matrices, batched (the inputs' batch axes broadcast)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.constructors import BlockDiagonal
from opweave_python.impls.slinalg import batch_check

__all__ = ["PERFORMS", "block_diagonal_perform"]


def block_diagonal_perform(
    op: BlockDiagonal, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Zeros of the total shape, each input written into its diagonal block."""
    dtype = np.dtype(node.outputs[0].type.dtype)
    mats = [np.asarray(x) for x in inputs]
    for i, m in enumerate(mats):
        if m.ndim != node.inputs[i].type.ndim:
            raise ValueError(
                f"{op}: the input matrices[{i}] has {m.ndim} dimensions, expected "
                f"{node.inputs[i].type.ndim}"
            )
    batch_check(op, node, mats, [2] * len(mats))
    batch = np.broadcast_shapes(*(m.shape[:-2] for m in mats))
    rows = sum(m.shape[-2] for m in mats)
    cols = sum(m.shape[-1] for m in mats)
    result = np.zeros((*batch, rows, cols), dtype=dtype)
    r = c = 0
    for m in mats:
        result[..., r : r + m.shape[-2], c : c + m.shape[-1]] = m
        r += m.shape[-2]
        c += m.shape[-1]
    out[0][0] = result


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {BlockDiagonal: block_diagonal_perform}
)
