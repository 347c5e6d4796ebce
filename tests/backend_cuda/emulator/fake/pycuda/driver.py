"""``pycuda.driver`` on the emulated device: errors, the device, memory and copies, kernels."""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from pycuda import _emulator
from pycuda._emulator import EmulatorError, context

#: Name the emulated device reports (never mistaken for a GPU's).
DEVICE_NAME = "EMULATED CUDA device (host CPU, no GPU)"


class Error(EmulatorError):
    """Every error of the emulated driver."""


class LogicError(Error):
    """A call with invalid arguments (``cuMemcpy*`` out of bounds, unknown kernel...)."""


class LaunchError(Error):
    """A kernel failed: an out-of-bounds access, a shared-memory race or read of unwritten
    shared memory, two threads writing one global element, barrier or shuffle divergence."""


class MemoryError(Error):
    """An allocation failed."""


class RuntimeError(Error):
    """Other driver failures."""


class CompileError(Error):
    """The kernel source did not compile (``stderr`` holds the compiler's messages)."""

    def __init__(self, msg: str, command_line: str = "", stdout: str = "", stderr: str = ""):
        super().__init__(msg)
        self.command_line, self.stdout, self.stderr = command_line, stdout, stderr


def init(flags: int = 0) -> None:
    """Initialise the emulated driver (nothing to do)."""
    context()


def get_version() -> tuple[int, int, int]:
    return (12, 0, 0)


def get_driver_version() -> int:
    return 12000


#: Environment variable: how many devices the emulated driver reports (default 1).
DEVICES_VARIABLE = "OPWEAVE_CUDA_EMULATOR_DEVICES"


def _device_count() -> int:
    text = os.environ.get(DEVICES_VARIABLE, "1").strip() or "1"
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{DEVICES_VARIABLE}={text!r}: expected a positive number of devices")
    return count


class Device:
    """An emulated device (``$OPWEAVE_CUDA_EMULATOR_DEVICES`` of them, 1 by default; they
    share the host's memory and differ only by their number)."""

    def __init__(self, number: int = 0) -> None:
        if not 0 <= int(number) < _device_count():
            raise LogicError(f"cuDeviceGet failed: invalid device ordinal {number}")
        self.number = int(number)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.number == self.number

    def __hash__(self) -> int:
        return hash(("emulated device", self.number))

    @staticmethod
    def count() -> int:
        return _device_count()

    def name(self) -> str:
        return DEVICE_NAME if self.number == 0 else f"{DEVICE_NAME} #{self.number}"

    def compute_capability(self) -> tuple[int, int]:
        return (9, 0)

    def total_memory(self) -> int:
        return 1 << 34

    def pci_bus_id(self) -> str:
        return f"0000:{self.number:02x}:00.0"

    def retain_primary_context(self) -> Context:
        return Context(self.number)

    def make_context(self, flags: int = 0) -> Context:
        context = Context(self.number)
        context.push()
        return context


class Context:
    """An emulated context: the device it belongs to (launches run synchronously; a stack of
    current contexts per process says which device :meth:`get_device` reports)."""

    def __init__(self, device: int | None = None) -> None:
        self.device = _current()[-1] if device is None else int(device)

    @staticmethod
    def synchronize() -> None:
        """Every launch has already finished; raises the fault a launch deferred."""
        context().raise_pending()

    @staticmethod
    def get_current() -> Context:
        return Context(_current()[-1])

    @staticmethod
    def get_device() -> Device:
        return Device(_current()[-1])

    @staticmethod
    def pop() -> None:
        """Make the previous context current."""
        stack = _current()
        if len(stack) > 1:
            stack.pop()

    def push(self) -> None:
        """Make this context current."""
        _current().append(self.device)

    def detach(self) -> None:
        """Nothing to detach."""


def _current() -> list[int]:
    """The stack of current contexts' device numbers (device 0 at the bottom)."""
    return context().current_devices


class DeviceAllocation:
    """A block of emulated device memory (``int()`` gives its address)."""

    def __init__(self, nbytes: int) -> None:
        self.size = int(nbytes)
        self.address, self.number = context().allocate(self.size)
        self._freed = False
        _emulator.finalize_release(self, self.address)

    def __int__(self) -> int:
        return self.address

    __index__ = __int__

    def free(self) -> None:
        if not self._freed:
            self._freed = True
            context().release(self.address)

    def __repr__(self) -> str:
        return f"<emulated allocation {self.number}: {self.size} bytes at {self.address:#x}>"


def mem_alloc(nbytes: int) -> DeviceAllocation:
    """A new allocation of ``nbytes`` (filled with the poison byte)."""
    return DeviceAllocation(nbytes)


def mem_get_info() -> tuple[int, int]:
    return (1 << 34, 1 << 34)


def _host_bytes(host: Any, writable: bool) -> np.ndarray:
    array = host if isinstance(host, np.ndarray) else np.frombuffer(host, dtype=np.uint8)
    if not array.flags.c_contiguous:
        raise LogicError("emulated memcpy: the host buffer is not contiguous")
    if writable and not array.flags.writeable:
        raise LogicError("emulated memcpy: the host buffer is read-only")
    return array.reshape(-1).view(np.uint8)


def memcpy_htod(dest: Any, src: Any) -> None:
    """Copy the host buffer ``src`` to the device address ``dest`` (bounds-checked)."""
    context().raise_pending()
    data = _host_bytes(np.asarray(src) if not isinstance(src, bytes) else src, False)
    address = int(dest)
    context().check_range(address, data.size, "cuMemcpyHtoD failed", LogicError)
    if data.size:
        context().view(address, data.size)[:] = data


def memcpy_dtoh(dest: Any, src: Any) -> None:
    """Copy device bytes at ``src`` into the host buffer ``dest`` (bounds-checked)."""
    context().raise_pending()
    data = _host_bytes(dest, True)
    address = int(src)
    context().check_range(address, data.size, "cuMemcpyDtoH failed", LogicError)
    if data.size:
        data[:] = context().view(address, data.size)


def memcpy_dtod(dest: Any, src: Any, size: int) -> None:
    """Copy ``size`` bytes between device addresses (both bounds-checked)."""
    context().raise_pending()
    size = int(size)
    context().check_range(int(src), size, "cuMemcpyDtoD failed (source)", LogicError)
    context().check_range(int(dest), size, "cuMemcpyDtoD failed (destination)", LogicError)
    if size:
        ctypes.memmove(int(dest), int(src), size)


def memset_d8(dest: Any, data: int, count: int) -> None:
    context().check_range(int(dest), int(count), "cuMemsetD8 failed", LogicError)
    if count:
        context().view(int(dest), int(count))[:] = data


_STRUCT = {("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q", ("u", 1): "B"}
_STRUCT.update({("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("f", 4): "f", ("f", 8): "d"})


def _struct_char(kind: Any) -> str:
    if isinstance(kind, str) and len(kind) == 1 and kind in "bBhHiIlLqQfdP":
        return kind
    dtype = np.dtype(kind)
    try:
        return _STRUCT[(dtype.kind, dtype.itemsize)]
    except KeyError:
        raise LogicError(f"prepare: unsupported argument type {kind!r}") from None


class Function:
    """A kernel of an emulated module."""

    def __init__(self, module: Any, info: _emulator.KernelInfo) -> None:
        self.module = module
        self.info = info
        self._launch = getattr(module.library, f"opw_launch_{info.name}")
        self._launch.restype = ctypes.c_int
        self._launch.argtypes = [
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_uint),
            ctypes.c_int,
            ctypes.c_ulonglong,
            ctypes.POINTER(ctypes.c_ulonglong),
            ctypes.POINTER(ctypes.c_longlong),
            ctypes.c_longlong,
            ctypes.c_char_p,
            ctypes.c_int,
        ]
        argsize = getattr(module.library, f"opw_argsize_{info.name}")
        argsize.restype = ctypes.c_size_t
        self.arg_size = int(argsize())
        self.arg_format: str | None = None

    def prepare(self, arg_types: Sequence[Any], *args: Any, **kwargs: Any) -> Function:
        """Fix the argument types (pycuda's struct packing: native sizes and alignment)."""
        self.arg_format = "".join(_struct_char(t) for t in arg_types)
        size = struct.calcsize("@" + self.arg_format)
        if size != self.arg_size:
            raise LogicError(
                f"prepare: kernel {self.info.name} takes {self.arg_size} bytes of parameters, "
                f"the argument types {self.arg_format!r} pack {size}"
            )
        return self

    def prepared_call(self, grid: Sequence[int], block: Sequence[int], *args: Any, **kw: Any):
        """Launch on ``grid`` x ``block`` with ``args`` packed by the prepared types; runs to
        completion and raises :class:`LaunchError` on a detected fault (or, with deferred
        faults, leaves it to the next operation that waits for the device)."""
        if self.arg_format is None:
            raise LogicError(f"kernel {self.info.name}: prepared_call before prepare")
        buffer = struct.pack("@" + self.arg_format, *args)
        self._run(grid, block, buffer, self.arg_format)

    def __call__(
        self, *args: Any, grid: Sequence[int] = (1, 1), block: Sequence[int] = (1, 1, 1), **kw: Any
    ) -> None:
        """Unprepared call: each argument is a NumPy scalar or an allocation (a pointer)."""
        fmt = "".join("Q" if not isinstance(a, np.generic) else _struct_char(a.dtype) for a in args)
        values = [int(a) if not isinstance(a, np.generic) else a for a in args]
        self._run(grid, block, struct.pack("@" + fmt, *values), fmt)

    def _run(self, grid: Sequence[int], block: Sequence[int], buffer: bytes, fmt: str) -> None:
        name = self.info.name
        g = [int(v) for v in grid] + [1] * (3 - len(grid))
        b = [int(v) for v in block] + [1] * (3 - len(block))
        if len(g) != 3 or len(b) != 3 or min(g + b) < 1:
            raise LogicError(
                f"kernel {name}: invalid launch grid {tuple(grid)} block {tuple(block)}"
            )
        if b[0] * b[1] * b[2] > 1024 or b[0] > 1024 or b[1] > 1024 or b[2] > 64:
            raise LogicError(f"kernel {name}: invalid block {tuple(block)} (cuLaunchKernel failed)")
        if g[0] > 2**31 - 1 or g[1] > 65535 or g[2] > 65535:
            raise LogicError(f"kernel {name}: invalid grid {tuple(grid)} (cuLaunchKernel failed)")
        if len(buffer) != self.arg_size:
            raise LogicError(
                f"kernel {name}: {len(buffer)} bytes of arguments, the kernel takes {self.arg_size}"
            )
        ctx = context()
        ctx.raise_pending()  # a fault of an earlier launch fails this one, as on a GPU
        order, state = _emulator.launch_order()
        chosen = _emulator.launch_blocks(g[0] * g[1] * g[2])
        blocks = (ctypes.c_longlong * max(len(chosen or ()), 1))(*(chosen or ()))
        dims = (ctypes.c_uint * 6)(*g, *b)
        err = ctypes.create_string_buffer(1024)
        pointers = [self._pointer(fmt, buffer, i) for i in self.info.pointer_params()]
        info = ctx.regions(pointers)
        regions = (ctypes.c_ulonglong * max(len(info), 1))(*info)
        with ctx.launch_lock:
            ctx.launches += 1
            status = self._launch(
                buffer,
                dims,
                order,
                state + ctx.launches,
                regions,
                blocks,
                -1 if chosen is None else len(chosen),
                err,
                len(err),
            )
        if status:
            ctx.fault(LaunchError(f"emulated device: {err.value.decode(errors='replace')}"))
            return
        try:
            ctx.check_guards([p for p in pointers if p], name)
        except EmulatorError as exc:
            ctx.fault(LaunchError(f"emulated device: {exc}"))

    @staticmethod
    def _pointer(fmt: str, buffer: bytes, index: int) -> int:
        """Parameter ``index`` (a pointer) of the packed ``buffer`` of format ``fmt``."""
        offset = struct.calcsize("@" + fmt[:index] + "0Q")
        return struct.unpack_from("@Q", buffer, offset)[0]


class Module:
    """A compiled module (a shared library of kernels and their launchers)."""

    def __init__(self, source: str) -> None:
        self.library, self.kernels = context().build(source)

    def get_function(self, name: str) -> Function:
        info = self.kernels.get(name)
        if info is None:
            raise LogicError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        return Function(self, info)
