"""Matrix products on the GPU."""

from __future__ import annotations

from opweave.tensor.blas import Dot
from opweave_cuda.ops.base import GpuOp

__all__ = ["GpuDot"]


class GpuDot(GpuOp):
    """``dot``/``matmul`` of vectors and matrices of one floating dtype (cuBLAS ``gemm``).

    Vector operands are viewed as one-row or one-column matrices.
    """

    __props__ = ()

    def host_op(self) -> Dot:
        """``Dot()``."""
        return Dot()

    def __str__(self) -> str:
        return "GpuDot"
