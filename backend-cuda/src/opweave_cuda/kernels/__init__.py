"""GPU kernel generation: elementwise, reduction and matrix-product kernels as CUDA C++.

Kernels are generated (and can be compiled to PTX with ``nvcc``) without a GPU; launching
them needs ``pycuda`` and a device, and imports ``pycuda`` only then.
"""

from opweave_cuda.kernels.elemwise import ElemwiseKernel, elemwise_kernel
from opweave_cuda.kernels.gemm import gemm, gemm_kernel
from opweave_cuda.kernels.launch import MAX_NDIM, launch_config
from opweave_cuda.kernels.reduction import ReductionKernel, reduction_kernel
from opweave_cuda.kernels.runtime import compile_module
from opweave_cuda.kernels.source import NVCC_OPTIONS, KernelSource

__all__ = [
    "MAX_NDIM",
    "NVCC_OPTIONS",
    "ElemwiseKernel",
    "KernelSource",
    "ReductionKernel",
    "compile_module",
    "elemwise_kernel",
    "gemm",
    "gemm_kernel",
    "launch_config",
    "reduction_kernel",
]
