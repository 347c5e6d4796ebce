"""A stand-in for pycuda on the emulated CUDA device (test infrastructure, not shipped).

It implements the part of pycuda that opweave_cuda uses: device memory is host memory
(NumPy buffers registered with the emulator's context), kernels are compiled with the host
C++ compiler against the emulation header ``include/cuda_fp16.h`` and launched in-process.
Results obtained here are labelled *emulated*: they are not GPU figures.
"""

from __future__ import annotations

VERSION = (2024, 1, 0)
VERSION_STATUS = "emulated"
VERSION_TEXT = "2024.1 (opweave emulated device)"
#: Marks this package as the emulator (the real pycuda has no such attribute).
EMULATED = True
