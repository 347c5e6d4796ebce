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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opweave_cuda.kernels.launch import check_launch
from opweave_cuda.kernels.source import NVCC_OPTIONS, KernelSource

__all__ = [
    "BoundLaunch",
    "KernelLaunchError",
    "LaunchMemo",
    "arg_types",
    "bind",
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


#: The range of each integer parameter kind.
_INT_RANGE = {k: (int(np.iinfo(t).min), int(np.iinfo(t).max)) for k, t in _ARG_TYPES.items()}


def _packed_int(kernel: KernelSource, kind: str, value: Any) -> int:
    """``value`` as a Python int that fits a ``kind`` parameter of ``kernel``."""
    number = int(value)
    low, high = _INT_RANGE[kind]
    if not low <= number <= high:
        raise OverflowError(f"kernel {kernel.name}: {number} does not fit a {kind} parameter")
    return number


def _checked_kinds(kernel: KernelSource, values: Sequence[Any]) -> tuple[str, ...]:
    kinds = kernel.arg_kinds()
    if len(values) != len(kinds):
        raise TypeError(f"kernel {kernel.name} takes {len(kinds)} arguments, got {len(values)}")
    return kinds


def pack_args(kernel: KernelSource, values: Sequence[Any]) -> list[Any]:
    """The kernel's arguments as NumPy scalars of the parameters' widths.

    Raises
    ------
    TypeError
        If the number of values does not match the kernel's parameters.
    OverflowError
        If an integer does not fit its parameter.
    """
    kinds = _checked_kinds(kernel, values)
    return [
        _ARG_TYPES[kind](device_pointer(v) if kind == "ptr" else _packed_int(kernel, kind, v))
        for kind, v in zip(kinds, values, strict=True)
    ]


@dataclass(frozen=True)
class BoundLaunch:
    """A launch whose kernel, grid, block and integer arguments are fixed, and whose array
    arguments are read from the operands of each call (:func:`bind` makes one).

    Attributes
    ----------
    name
        The kernel's name.
    function
        The compiled kernel, prepared for its parameter types.
    grid, block
        The launch's extents.
    args
        The packed arguments (``0`` where an operand's address goes).
    slots
        ``(argument position, operand index)`` of every array argument.
    """

    name: str
    function: Any
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    args: tuple[int, ...]
    slots: tuple[tuple[int, int], ...]

    def __call__(self, operands: Sequence[Any]) -> None:
        """Launch on the default stream with the addresses of ``operands`` (arrays of the
        layouts this launch was bound for)."""
        args = list(self.args)
        for position, k in self.slots:
            args[position] = device_pointer(operands[k])
        self.function.prepared_call(self.grid, self.block, *args)
        if _check_launches():
            synchronize_after(self.name)


def bind(
    kernel: KernelSource,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    values: Sequence[Any],
    operands: Sequence[Any],
) -> BoundLaunch | None:
    """Check, compile (once) and pack a launch whose array arguments are all among
    ``operands`` (matched by identity, the first occurrence of an array that is passed
    twice; an address given as an int is packed as it is); ``None`` when the grid is empty.

    Raises
    ------
    ValueError
        If the grid or block is outside CUDA's limits, the block is not the size the kernel
        is written for (:attr:`KernelSource.block`, along ``x``), or an array argument is
        not one of ``operands``.
    TypeError, OverflowError
        As :func:`pack_args`.
    """
    grid, block = check_launch(grid, block)
    if kernel.block and block[0] != kernel.block:
        raise ValueError(
            f"kernel {kernel.name} is written for blocks of {kernel.block} threads along x, "
            f"launched with {block}"
        )
    kinds = _checked_kinds(kernel, values)
    if grid[0] * grid[1] * grid[2] == 0:
        return None
    args: list[int] = []
    slots: list[tuple[int, int]] = []
    for position, (kind, value) in enumerate(zip(kinds, values, strict=True)):
        if kind != "ptr":
            args.append(_packed_int(kernel, kind, value))
            continue
        if isinstance(value, int | np.integer):  # an address
            args.append(_packed_int(kernel, kind, value))
            continue
        index = next((k for k, a in enumerate(operands) if a is value), None)
        if index is None:
            raise ValueError(
                f"kernel {kernel.name}: array argument {position} is not one of the operands"
            )
        slots.append((position, index))
        args.append(0)
    function = prepared_function(kernel.source, kernel.name, arg_types(kernel))
    return BoundLaunch(kernel.name, function, grid, block, tuple(args), tuple(slots))


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
        As :func:`bind`.
    """
    bound = bind(kernel, grid, block, values, values)
    if bound is not None:
        bound(values)


class LaunchMemo:
    """The launches a kernel chose, remembered per operand layout, so that a call with
    arrays of a layout seen before skips choosing, checking and packing.

    A layout is every operand's shape, byte strides and dtype, and which operands are one
    array (:meth:`key`). At most ``size`` layouts are kept; the memo starts afresh when full.
    """

    #: What :meth:`get` gives for a layout not remembered.
    UNSEEN: Any = object()

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._made: dict[tuple[Any, ...], Any] = {}

    @staticmethod
    def key(operands: Sequence[Any]) -> tuple[Any, ...]:
        """The layout of ``operands`` (arrays with ``shape``, ``strides`` and ``dtype``)."""
        ids = [id(a) for a in operands]
        layouts = tuple((a.shape, a.strides, a.dtype) for a in operands)
        return layouts, tuple(ids.index(i) for i in ids)

    def get(self, key: tuple[Any, ...]) -> Any:
        """What :meth:`put` remembered for ``key``, else :attr:`UNSEEN`."""
        return self._made.get(key, self.UNSEEN)

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        """Remember ``value`` for ``key``."""
        if len(self._made) >= self.size:
            self._made.clear()
        self._made[key] = value

    def remembered(self, operands: Sequence[Any], make: Callable[[], Any]) -> Any:
        """What was remembered for the layout of ``operands``, or ``make()``, remembered."""
        key = self.key(operands)
        value = self.get(key)
        if value is self.UNSEEN:
            value = make()
            self.put(key, value)
        return value

    def __len__(self) -> int:
        return len(self._made)


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
