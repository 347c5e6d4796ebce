"""GPU kernel generation: elementwise, reduction and matrix-product kernels as CUDA C++.

Kernels are generated (and can be compiled to PTX with ``nvcc``) without a GPU; launching
them needs ``pycuda`` and a device, and imports ``pycuda`` only then.

The names below are imported from their modules when first used, so that loading the
plugin (which every process using opweave does) does not import the kernel generators.
The matrix product itself is :func:`opweave_cuda.kernels.gemm.gemm`: here ``gemm`` names
its module (importing a submodule binds its name in the package).
"""

from __future__ import annotations

import importlib
from typing import Any

#: Where each public name lives (a module of this package).
_HOME = {
    "ElemwiseKernel": "elemwise",
    "elemwise_kernel": "elemwise",
    "gemm_kernel": "gemm",
    "MAX_NDIM": "launch",
    "launch_config": "launch",
    "ReductionKernel": "reduction",
    "reduction_kernel": "reduction",
    "compile_module": "runtime",
    "NVCC_OPTIONS": "source",
    "KernelSource": "source",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
