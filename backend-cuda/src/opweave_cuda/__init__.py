"""opweave-cuda: the CUDA backend of opweave (GPU arrays, transfers, kernels, rewrites).

Importing it never imports pycuda; only handling GPU values does.
"""

from opweave_cuda.availability import CudaUnavailableError, cuda_problem
from opweave_cuda.sharedvar import GpuArraySharedVariable
from opweave_cuda.transfer_ops import GpuFromHost, HostFromGpu, gpu_from_host, host_from_gpu
from opweave_cuda.type import GpuArrayType
from opweave_cuda.variable import GpuArrayConstant, GpuArrayVariable

__all__ = [
    "CudaUnavailableError",
    "GpuArrayConstant",
    "GpuArraySharedVariable",
    "GpuArrayType",
    "GpuArrayVariable",
    "GpuFromHost",
    "HostFromGpu",
    "cuda_problem",
    "gpu_from_host",
    "host_from_gpu",
]
