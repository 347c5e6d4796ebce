"""GPU Ops: device mirrors of the core's tensor Ops (values are ``GPUArray``)."""

from opweave_cuda.ops.base import GpuOp, as_gpuarray_variable
from opweave_cuda.ops.basic import GpuAlloc
from opweave_cuda.ops.blas import GpuDot
from opweave_cuda.ops.elemwise import GpuCAReduce, GpuElemwise
from opweave_cuda.ops.shape import GpuDimShuffle, GpuReshape
from opweave_cuda.ops.subtensor import GpuSubtensor

__all__ = [
    "GpuAlloc",
    "GpuCAReduce",
    "GpuDimShuffle",
    "GpuDot",
    "GpuElemwise",
    "GpuOp",
    "GpuReshape",
    "GpuSubtensor",
    "as_gpuarray_variable",
]
