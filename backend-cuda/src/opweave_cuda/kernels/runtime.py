"""Compiling and launching generated kernels (``pycuda`` is imported here, lazily)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.kernels.source import NVCC_OPTIONS, KernelSource

__all__ = ["compile_module", "device_pointer", "launch", "pack_args"]


@functools.cache
def compile_module(source: str) -> Any:
    """Compile a CUDA translation unit into a loaded module, once per process.

    Parameters
    ----------
    source
        A complete CUDA C++ translation unit whose kernels are ``extern "C"``.

    Returns
    -------
    pycuda.driver.Module
        The module, in the current CUDA context. ``pycuda.compiler.SourceModule`` also
        caches the binary on disk, keyed on the source, the options and the ``nvcc`` version.
    """
    from pycuda.compiler import SourceModule

    return SourceModule(source, no_extern_c=True, options=list(NVCC_OPTIONS))


def device_pointer(value: Any) -> int:
    """The device address of a ``GPUArray`` (its ``gpudata``), an allocation or an int."""
    data = getattr(value, "gpudata", value)
    return int(data)


def pack_args(kernel: KernelSource, values: Sequence[Any]) -> list[Any]:
    """The kernel's arguments as the NumPy scalars ``pycuda`` passes by value.

    Raises
    ------
    TypeError
        If the number of values does not match the kernel's parameters.
    """
    kinds = kernel.arg_kinds()
    if len(values) != len(kinds):
        raise TypeError(f"kernel {kernel.name} takes {len(kinds)} arguments, got {len(values)}")
    packed: list[Any] = []
    for kind, value in zip(kinds, values, strict=True):
        if kind == "ptr":
            packed.append(np.uintp(device_pointer(value)))
        elif kind == "i64":
            packed.append(np.int64(value))
        else:
            packed.append(np.int32(value))
    return packed


def launch(
    kernel: KernelSource,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    values: Sequence[Any],
) -> None:
    """Compile (once) and launch ``kernel`` with ``values`` on the default stream."""
    if grid[0] * grid[1] * grid[2] == 0:
        return
    function = compile_module(kernel.source).get_function(kernel.name)
    function(*pack_args(kernel, values), grid=grid, block=block)
