"""The ``cuda`` linker: the ``vm`` thunk loop over a graph moved to the GPU."""

from __future__ import annotations

from typing import ClassVar

from opweave_cuda.availability import require_cuda
from opweave_python.linkers.vm import VMLinker

__all__ = ["CudaLinker"]


class CudaLinker(VMLinker):
    """``linker='cuda'``: the GPU rewrites (tag ``cuda``) run, then the ``vm`` loop.

    The GPU Ops' thunks come from the backend's ``opweave_perform`` implementations;
    host nodes left on the CPU use the Python backend's. ``priority`` is negative so
    that ``linker='auto'`` never picks it.

    Raises
    ------
    CudaUnavailableError
        On construction (at compile time) when pycuda or a CUDA device is missing.
    """

    name = "cuda"
    priority = -10
    #: Rewrite tags a compilation with this linker includes (read by the core).
    rewrite_tags: ClassVar[tuple[str, ...]] = ("cuda",)

    def __init__(self, allow_gc: bool | None = None) -> None:
        require_cuda("linker='cuda'")
        super().__init__(allow_gc=allow_gc)
