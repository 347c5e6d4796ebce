"""Whether the CUDA backend can run here, and the lazy import of pycuda.

Nothing here imports pycuda at module import time: the distribution installs and imports
on machines with no pycuda and no CUDA driver. :func:`cuda_problem` says, cheaply and
without raising, why the GPU cannot be used (``None`` when it can).
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
from types import ModuleType
from typing import Any

__all__ = [
    "PYCUDA_HINT",
    "CudaUnavailableError",
    "cuda_problem",
    "import_gpuarray",
    "memory_pool",
    "require_cuda",
]

#: How to get pycuda, quoted in every message about it.
PYCUDA_HINT = "pip install 'opweave-cuda[pycuda]'"


class CudaUnavailableError(RuntimeError):
    """The GPU was asked for but pycuda or a CUDA device is missing (the message says which)."""


@functools.cache
def cuda_problem() -> str | None:
    """Return why the CUDA backend cannot run on this machine, or ``None`` when it can.

    The answer is computed once per process: first whether pycuda is installed (without
    importing it), then whether the driver initialises and reports at least one device.
    It never raises.

    Returns
    -------
    str or None
        ``"pycuda is not installed (pip install 'opweave-cuda[pycuda]')"``,
        ``"no CUDA driver/device: <error>"``, or ``None``.
    """
    try:
        found = importlib.util.find_spec("pycuda") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return f"pycuda is not installed ({PYCUDA_HINT})"
    try:
        import pycuda.driver as drv

        drv.init()
        count = drv.Device.count()
    except Exception as exc:  # ImportError of the compiled part, driver errors, ...
        return f"no CUDA driver/device: {type(exc).__name__}: {exc}"
    if count < 1:
        return "no CUDA driver/device: the driver reports 0 devices"
    return None


def require_cuda(what: str) -> None:
    """Raise :class:`CudaUnavailableError` naming ``what`` when the GPU cannot be used.

    Parameters
    ----------
    what
        What needed the GPU, e.g. ``"linker='cuda'"``; it starts the message.
    """
    problem = cuda_problem()
    if problem is not None:
        raise CudaUnavailableError(
            f"{what} needs the CUDA backend, which is unavailable: {problem}"
        )


@functools.cache
def _context_module() -> ModuleType:
    """Make the device's primary context current (once) and return :mod:`pycuda.gpuarray`.

    ``pycuda.autoprimaryctx`` retains the *primary* context, the one the CUDA runtime
    uses: cuBLAS (bound here without pycuda), CuPy and PyTorch then share the context,
    the memory and the default stream of opweave's arrays. ``pycuda.autoinit`` would
    create a second, private context whose pointers the runtime's libraries cannot use;
    it is imported only by pycuda versions without ``autoprimaryctx`` (before 2021.1).
    """
    try:
        import pycuda.autoprimaryctx  # retains and pushes the primary context
    except ImportError:
        import pycuda.autoinit  # noqa: F401  (creates and pushes a context)

    return importlib.import_module("pycuda.gpuarray")


def import_gpuarray() -> ModuleType:
    """Return :mod:`pycuda.gpuarray` with a CUDA context active.

    Raises
    ------
    CudaUnavailableError
        When pycuda is not installed or no CUDA device can be used; the message names
        pycuda and the ``opweave-cuda[pycuda]`` extra.
    """
    require_cuda("handling GPU values")
    return _context_module()


@functools.cache
def memory_pool() -> Any:
    """The process's ``pycuda.tools.DeviceMemoryPool`` (created in the context above).

    Device arrays allocated from it go back to it when freed, without ``cuMemFree`` (which
    synchronises the whole device) and without a driver call on the next allocation.
    """
    import_gpuarray()
    from pycuda.tools import DeviceMemoryPool

    pool = DeviceMemoryPool()
    # At exit, while the context is still current (atexit runs this before the context's own
    # handler, registered earlier by the context module's import), give the held blocks back
    # and stop holding: arrays that die later, in the interpreter's teardown, then free their
    # memory directly. A pool that went on holding would need a current context to take the
    # first block back, and pycuda aborts the process when a freed array finds none.
    atexit.register(pool.stop_holding)
    return pool
