"""Compiling and launching generated kernels (``pycuda`` is imported here, lazily).

Launches go through pycuda's *prepared* interface (``Function.prepare`` once, then
``Function.prepared_call``): the arguments are packed with the kernel's own parameter
format, so pointers travel as ``uintptr_t``, ``long long`` parameters as 64-bit integers
and ``int`` ones as 32-bit integers whatever Python object carries the value. (The
unprepared ``Function.__call__`` infers each width from the argument's type, and some
pycuda versions memoize its argument buffers on the argument tuple.)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.kernels.launch import check_launch
from opweave_cuda.kernels.source import NVCC_OPTIONS, KernelSource

__all__ = [
    "KernelLaunchError",
    "arg_types",
    "compile_module",
    "device_pointer",
    "launch",
    "pack_args",
    "prepared_function",
    "synchronize_after",
]

#: How each parameter kind of :meth:`KernelSource.arg_kinds` is passed (its NumPy type).
_ARG_TYPES = {"ptr": np.uintp, "i64": np.int64, "i32": np.int32}


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
        The module, in the CUDA context of :func:`~opweave_cuda.availability.import_gpuarray`
        (the device's primary context). ``pycuda.compiler.SourceModule`` compiles for the
        current device's architecture and caches the binary on disk, keyed on the source,
        the options and the ``nvcc`` version.
    """
    from pycuda.compiler import SourceModule

    return SourceModule(source, no_extern_c=True, options=list(NVCC_OPTIONS))


def arg_types(kernel: KernelSource) -> tuple[type, ...]:
    """The NumPy types of the kernel's parameters, for ``Function.prepare``."""
    return tuple(_ARG_TYPES[kind] for kind in kernel.arg_kinds())


@functools.cache
def prepared_function(source: str, name: str, types: tuple[type, ...]) -> Any:
    """The kernel ``name`` of the module compiled from ``source``, prepared for ``types``."""
    function = compile_module(source).get_function(name)
    function.prepare(list(types))
    return function


def device_pointer(value: Any) -> int:
    """The device address of a ``GPUArray`` (its ``gpudata``), an allocation or an int.

    A ``GPUArray`` without elements has no allocation (pycuda sets its ``gpudata`` to
    ``None``): its address is ``0``, which kernels never dereference.
    """
    data = getattr(value, "gpudata", value)
    return 0 if data is None else int(data)


def pack_args(kernel: KernelSource, values: Sequence[Any]) -> list[Any]:
    """The kernel's arguments as NumPy scalars of the parameters' widths.

    Raises
    ------
    TypeError
        If the number of values does not match the kernel's parameters.
    OverflowError
        If an integer does not fit its parameter.
    """
    kinds = kernel.arg_kinds()
    if len(values) != len(kinds):
        raise TypeError(f"kernel {kernel.name} takes {len(kinds)} arguments, got {len(values)}")
    packed: list[Any] = []
    for kind, value in zip(kinds, values, strict=True):
        if kind == "ptr":
            packed.append(np.uintp(device_pointer(value)))
            continue
        number = int(value)
        info = np.iinfo(_ARG_TYPES[kind])
        if not info.min <= number <= info.max:
            raise OverflowError(f"kernel {kernel.name}: {number} does not fit a {kind} parameter")
        packed.append(_ARG_TYPES[kind](number))
    return packed


def launch(
    kernel: KernelSource,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    values: Sequence[Any],
) -> None:
    """Compile (once) and launch ``kernel`` with ``values`` on the default stream.

    The launch is asynchronous; downloads (``GPUArray.get``, ``memcpy_dtoh``) run on the
    same (legacy default) stream and wait for it. With ``config.cuda__check_launches`` it
    waits at once, and a failure raises :class:`KernelLaunchError` naming the kernel.

    Raises
    ------
    ValueError
        If the grid or block is outside CUDA's limits, or the block is not the size the
        kernel is written for (:attr:`KernelSource.block`, along ``x``).
    """
    grid, block = check_launch(grid, block)
    if kernel.block and block[0] != kernel.block:
        raise ValueError(
            f"kernel {kernel.name} is written for blocks of {kernel.block} threads along x, "
            f"launched with {block}"
        )
    if grid[0] * grid[1] * grid[2] == 0:
        return
    args = pack_args(kernel, values)
    function = prepared_function(kernel.source, kernel.name, arg_types(kernel))
    function.prepared_call(grid, block, *args)
    if _check_launches():
        synchronize_after(kernel.name)


def _check_launches() -> bool:
    from opweave import config

    return bool(getattr(config, "cuda__check_launches", False))


class KernelLaunchError(RuntimeError):
    """A kernel failed on the device (an illegal address, a trap, a launch failure)."""


def synchronize_after(name: str) -> None:
    """Wait for the device and raise :class:`KernelLaunchError` naming kernel ``name`` if
    it (or anything before it on the stream) failed."""
    import pycuda.driver as drv

    try:
        drv.Context.synchronize()
    except drv.Error as exc:
        raise KernelLaunchError(f"kernel {name} failed on the device: {exc}") from exc
