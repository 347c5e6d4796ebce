"""The ``cuda`` linker: the core's thunk loop over a graph moved to the GPU."""

from __future__ import annotations

from typing import ClassVar

from opweave.link.loop import LoopLinker
from opweave_cuda.availability import require_cuda

__all__ = ["CudaLinker"]


class CudaLinker(LoopLinker):
    """``linker='cuda'``: the GPU rewrites (tag ``cuda``) run, then the core's thunk loop.

    The GPU Ops' thunks come from this backend's implementations; host nodes left on
    the CPU use the Python backend's. ``priority`` is negative so that
    ``linker='auto'`` never picks it.

    Raises
    ------
    CudaUnavailableError
        On construction (at compile time) when pycuda or a CUDA device is missing.
    """

    name: ClassVar[str] = "cuda"
    priority: ClassVar[int] = -10
    impls: ClassVar[tuple[str | None, ...]] = ("cuda", "py")
    #: Rewrite tags a compilation with this linker includes (read by the core).
    rewrite_tags: ClassVar[tuple[str, ...]] = ("cuda",)

    def __init__(self, allow_gc: bool | None = None) -> None:
        require_cuda("linker='cuda'")
        super().__init__(allow_gc=allow_gc)
