"""Allocation on the GPU."""

from __future__ import annotations

from opweave.tensor.basic import Alloc
from opweave_cuda.ops.base import GpuOp

__all__ = ["GpuAlloc"]


class GpuAlloc(GpuOp):
    """``Alloc(value, *shape)``: a new GPU array of that shape filled with ``value``.

    ``value`` lives on the GPU; the lengths are host integer scalars.
    """

    __props__ = ()
    device_inputs = (0,)

    def host_op(self) -> Alloc:
        """``Alloc()``."""
        return Alloc()

    def __str__(self) -> str:
        return "GpuAlloc"
