"""Block-diagonal sparse matrices (PyTensor's ``pytensor.sparse.linalg`` names); defined in
:mod:`opweave.sparse.basic`, where ``block_diag`` is also found."""

from __future__ import annotations

from opweave.sparse.basic import SparseBlockDiagonal, block_diag

__all__ = ["SparseBlockDiagonal", "block_diag"]
