"""Whether the CUDA backend can run here, and the lazy import of pycuda.

Nothing here imports pycuda at module import time: the distribution installs and imports
on machines with no pycuda and no CUDA driver. :func:`cuda_problem` says, cheaply and
without raising, why the GPU cannot be used (``None`` when it can).
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import re
import threading
from types import ModuleType
from typing import Any

__all__ = [
    "PYCUDA_HINT",
    "CudaUnavailableError",
    "cuda_problem",
    "device_ordinal",
    "import_gpuarray",
    "memory_pool",
    "require_cuda",
    "select_device",
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


def device_ordinal(device: str) -> int | None:
    """The device number ``config.device`` names: ``None`` for ``"cuda"`` (the process's
    device), ``N`` for ``"cuda<N>"``, ``None`` for any other value (not a CUDA device)."""
    match = re.fullmatch(r"cuda(\d+)", str(device).strip())
    return int(match.group(1)) if match else None


class _ProcessDevice:
    """The CUDA device this process computes on, chosen at its first use.

    GPU values, compiled kernels, the memory pool and the cuBLAS handle belong to one
    context, so a process uses one device: the one the first use names (``"cuda<N>"``), else
    the default one (device 0, or pycuda's ``CUDA_DEVICE``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ordinal: int | None = None
        self.module: ModuleType | None = None

    def activate(self, ordinal: int | None, device: str) -> ModuleType:
        """Make the chosen device's primary context current (at the first call) and return
        :mod:`pycuda.gpuarray`; ``ordinal`` (``None``: any) must be the chosen device."""
        module = self.module
        if module is not None and ordinal in (None, self.ordinal):
            return module
        with self._lock:
            if self.module is None:
                self.module = _primary_context(ordinal, device)
                self.ordinal = _current_ordinal() if ordinal is None else ordinal
            elif ordinal is not None and ordinal != self.ordinal:
                used = f"cuda{self.ordinal}"
                raise ValueError(
                    f"config.device={device!r}: this process already computes on {used} "
                    f"({_device_name(self.ordinal)}); the GPU values of a process live on one "
                    f"device: use device={used!r} (or 'cuda'), or another process for "
                    f"cuda{ordinal}"
                )
            return self.module


def _device_name(ordinal: int | None) -> str:
    import pycuda.driver as drv

    return str(drv.Device(int(ordinal or 0)).name())


def _available_devices() -> str:
    """``cuda0 (<name>), cuda1 (<name>)...``: the devices the driver reports."""
    import pycuda.driver as drv

    return ", ".join(f"cuda{i} ({drv.Device(i).name()})" for i in range(drv.Device.count()))


def _current_ordinal() -> int:
    """The number of the current context's device."""
    import pycuda.driver as drv

    current = drv.Context.get_device()
    for i in range(drv.Device.count()):
        if drv.Device(i) == current:
            return i
    return 0


def _primary_context(ordinal: int | None, device: str) -> ModuleType:
    """Retain and push the primary context of device ``ordinal`` (``None``: the default
    device) and return :mod:`pycuda.gpuarray`.

    The *primary* context is the one the CUDA runtime uses: cuBLAS (bound here without
    pycuda), CuPy and PyTorch then share the context, the memory and the default stream of
    opweave's arrays. ``pycuda.autoinit`` would create a second, private context whose
    pointers the runtime's libraries cannot use; it is imported only by pycuda versions
    without ``autoprimaryctx`` (before 2021.1), for the default device.

    Raises
    ------
    ValueError
        If the driver reports no device ``ordinal`` (the message lists those it reports).
    """
    if ordinal is None:
        try:
            import pycuda.autoprimaryctx  # retains and pushes the primary context
        except ImportError:
            import pycuda.autoinit  # noqa: F401  (creates and pushes a context)
        return importlib.import_module("pycuda.gpuarray")
    import pycuda.driver as drv

    drv.init()
    if not 0 <= ordinal < drv.Device.count():
        raise ValueError(
            f"config.device={device!r}: there is no CUDA device {ordinal} on this machine; "
            f"the driver reports {_available_devices()}"
        )
    context = drv.Device(ordinal).retain_primary_context()
    context.push()
    atexit.register(_release_context, context)
    return importlib.import_module("pycuda.gpuarray")


def _release_context(context: Any) -> None:
    """At exit: pop the context pushed by :func:`_primary_context` (as ``autoprimaryctx``)."""
    try:
        context.pop()
        from pycuda.tools import clear_context_caches

        clear_context_caches()
    except Exception:  # a context already gone at exit has nothing left to release
        pass


@functools.cache
def _process_device() -> _ProcessDevice:
    """The process's :class:`_ProcessDevice` (created once)."""
    return _ProcessDevice()


def _context_module() -> ModuleType:
    """:mod:`pycuda.gpuarray` with the process's device context current (made at the first
    call, on the default device unless :func:`select_device` chose one before)."""
    return _process_device().activate(None, "cuda")


def select_device(device: str) -> None:
    """Make ``device`` (a ``config.device`` value) the process's CUDA device.

    ``"cuda"`` accepts the process's device, whichever it is; ``"cuda<N>"`` chooses device
    ``N`` when the process has not used the GPU yet, and must be that device afterwards.
    Other values do nothing. Called when a function with GPU nodes is compiled.

    Raises
    ------
    CudaUnavailableError
        When pycuda or a CUDA device is missing.
    ValueError
        If the driver reports no device ``N`` (the message lists the devices), or the process
        already computes on another device.
    """
    ordinal = device_ordinal(device)
    if ordinal is None:
        return
    require_cuda(f"config.device={device!r}")
    _process_device().activate(ordinal, device)


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
