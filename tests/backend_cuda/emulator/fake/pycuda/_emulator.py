"""The emulated device's context: memory registry, bounds and guard checks, kernel builds.

One :class:`EmulatedContext` exists per process (:func:`context`); it owns every device
allocation (a NumPy byte buffer with a guard zone on each side), the compile cache and the
launch lock. Kernels dereference raw host addresses, so an allocation's address is the
address of its buffer's first usable byte. Sources are compiled with the memory checks of
``_instrument.py``: each launch passes, per pointer parameter, the allocation it points into.
"""

from __future__ import annotations

import bisect
import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pycuda._instrument import instrument, pointee

#: Directory of the emulation header (first on the compiler's include path).
INCLUDE_DIR = Path(__file__).resolve().parents[2] / "include"
#: Flags of every kernel build (``-ffp-contract=off``: as ``nvcc --fmad=false``).
CXX_FLAGS = ("-O1", "-std=c++17", "-fPIC", "-shared", "-ffp-contract=off", "-Wno-unknown-pragmas")
#: Byte that fills new allocations (float data reads as NaN, integers as -1).
POISON = 0xFF
#: Byte of the guard zones around each allocation; a changed byte is an out-of-bounds write.
GUARD_BYTE = 0xFD
#: Size of each guard zone, in bytes.
GUARD = 256
#: Alignment of allocations (CUDA's is at least 256 bytes).
ALIGN = 256
#: Environment variable choosing the order in which a block's threads are resumed.
ORDER_VARIABLE = "OPWEAVE_CUDA_EMULATOR_ORDER"
#: Environment variable naming the only blocks of each launch to run (see :func:`launch_blocks`).
BLOCKS_VARIABLE = "OPWEAVE_CUDA_EMULATOR_BLOCKS"
#: Environment variable choosing when a launch's fault is raised (see :func:`fault_mode`).
FAULTS_VARIABLE = "OPWEAVE_CUDA_EMULATOR_FAULTS"
#: Allocations of at least this many bytes are not poisoned: their pages stay unmapped until a
#: kernel or a copy touches them, so that a huge launch can run on a few selected blocks.
LAZY_BYTES = 1 << 30

_KERNEL_RE = re.compile(r"__global__\s+void\s+(\w+)\s*\(([^)]*)\)", re.S)
_PARAM_RE = re.compile(r"^(.*?)\b(\w+)\s*$", re.S)


class EmulatorError(Exception):
    """Base of the stand-in's ``pycuda.driver.Error``."""


def find_compiler() -> str | None:
    """The host C++ compiler (``$CXX``, ``g++``, ``c++`` or ``clang++``), or ``None``."""
    for name in (os.environ.get("CXX"), "g++", "c++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def launch_order() -> tuple[int, int]:
    """``(kind, state)`` from ``$OPWEAVE_CUDA_EMULATOR_ORDER``: ``forward`` (0, default),
    ``reverse`` (1) or ``random[:N]`` (2, with the integer ``N`` starting the generator)."""
    text = os.environ.get(ORDER_VARIABLE, "forward").strip().lower()
    if text in ("", "forward"):
        return 0, 0
    if text == "reverse":
        return 1, 0
    if text == "random" or text.startswith("random:"):
        _, _, number = text.partition(":")
        try:
            return 2, int(number or "1")
        except ValueError:
            pass
    raise ValueError(
        f"{ORDER_VARIABLE}={text!r}: expected 'forward', 'reverse', 'random' or 'random:<int>'"
    )


def fault_mode() -> str:
    """When a kernel's fault is raised, from ``$OPWEAVE_CUDA_EMULATOR_FAULTS``:
    ``immediate`` (the default: by the launch itself) or ``deferred`` (as on a GPU, where
    launches are asynchronous: the launch returns, and the next operation that waits for the
    device, a synchronisation, a copy or another launch, raises it)."""
    text = os.environ.get(FAULTS_VARIABLE, "immediate").strip().lower() or "immediate"
    if text not in ("immediate", "deferred"):
        raise ValueError(f"{FAULTS_VARIABLE}={text!r}: expected 'immediate' or 'deferred'")
    return text


def launch_blocks(total: int) -> list[int] | None:
    """The linear indices of the blocks a launch of ``total`` blocks runs, from
    ``$OPWEAVE_CUDA_EMULATOR_BLOCKS`` (comma-separated integers, negative ones counting from
    the end; out-of-range ones are dropped), or ``None`` (unset: every block)."""
    text = os.environ.get(BLOCKS_VARIABLE, "").strip()
    if not text:
        return None
    chosen = []
    for item in text.split(","):
        try:
            number = int(item)
        except ValueError:
            raise ValueError(
                f"{BLOCKS_VARIABLE}={text!r}: expected comma-separated block numbers"
            ) from None
        number = number + total if number < 0 else number
        if 0 <= number < total and number not in chosen:
            chosen.append(number)
    return chosen


@dataclass
class _Block:
    """One registered allocation: ``size`` usable bytes at ``start`` inside ``buffer``."""

    number: int
    start: int
    size: int
    buffer: np.ndarray
    offset: int  # index of the first usable byte in ``buffer``

    def guards(self) -> tuple[np.ndarray, np.ndarray]:
        lo = self.buffer[self.offset - GUARD : self.offset]
        hi = self.buffer[self.offset + self.size : self.offset + self.size + GUARD]
        return lo, hi


@dataclass(frozen=True)
class KernelInfo:
    """A ``__global__`` function of a module: its parameter declarations."""

    name: str
    params: tuple[str, ...]

    def pointer_params(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.params) if "*" in p)


class EmulatedContext:
    """The process's emulated device: allocations, compile cache, launch lock."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._blocks: dict[int, _Block] = {}
        self._count = 0
        self._lock = threading.RLock()
        self.launch_lock = threading.Lock()
        self.launches = 0
        #: A deferred fault (its exception) not yet raised.
        self.pending: Exception | None = None
        #: Device numbers of the current contexts, innermost last (``pycuda.driver.Context``).
        self.current_devices: list[int] = [0]

    # -- deferred faults ---------------------------------------------------------------------
    def fault(self, error: Exception) -> None:
        """A launch faulted: raise ``error`` now, or keep it for the next operation that
        waits for the device (:func:`fault_mode`)."""
        if fault_mode() == "deferred":
            with self._lock:
                if self.pending is None:
                    self.pending = error
            return
        raise error

    def raise_pending(self) -> None:
        """Raise (once) the deferred fault of an earlier launch, if any."""
        with self._lock:
            error, self.pending = self.pending, None
        if error is not None:
            raise error

    # -- memory ------------------------------------------------------------------------------
    def allocate(self, nbytes: int) -> tuple[int, int]:
        """Register a new poisoned allocation of ``nbytes``; returns ``(address, number)``."""
        nbytes = int(nbytes)
        if nbytes < 0:
            raise ValueError(f"cannot allocate {nbytes} bytes")
        buffer = np.empty(nbytes + 2 * GUARD + ALIGN, dtype=np.uint8)
        base = buffer.ctypes.data
        offset = GUARD + (-(base + GUARD) % ALIGN)
        buffer[:offset] = GUARD_BYTE
        if nbytes < LAZY_BYTES:
            buffer[offset : offset + nbytes] = POISON
        buffer[offset + nbytes :] = GUARD_BYTE
        with self._lock:
            self._count += 1
            block = _Block(self._count, base + offset, nbytes, buffer, offset)
            bisect.insort(self._starts, block.start)
            self._blocks[block.start] = block
        return block.start, block.number

    def release(self, start: int) -> None:
        """Forget the allocation at ``start`` (its memory goes back to the host)."""
        with self._lock:
            if self._blocks.pop(start, None) is not None:
                i = bisect.bisect_left(self._starts, start)
                if i < len(self._starts) and self._starts[i] == start:
                    del self._starts[i]

    def regions(self, pointers: list[int]) -> list[int]:
        """``(start, size, number)`` of the allocation each of ``pointers`` points into
        (``(0, 0, 2**64 - 1)``: none), flattened, for the kernels' pointer checks."""
        out: list[int] = []
        for pointer in pointers:
            block = self.find(pointer) if pointer else None
            out += [0, 0, 2**64 - 1] if block is None else [block.start, block.size, block.number]
        return out

    def find(self, address: int) -> _Block | None:
        """The allocation whose usable bytes (or one-past-the-end) hold ``address``."""
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i < 0:
                return None
            block = self._blocks[self._starts[i]]
        return block if address <= block.start + block.size else None

    def check_range(
        self, address: int, nbytes: int, what: str, error: type[Exception] = EmulatorError
    ) -> None:
        """Raise ``error`` unless ``[address, address + nbytes)`` lies inside
        one allocation."""
        block = self.find(address)
        if block is None or address + nbytes > block.start + block.size:
            where = (
                "no allocation"
                if block is None
                else f"allocation {block.number} of {block.size} bytes at {block.start:#x}"
            )
            raise error(
                f"{what}: an illegal address (emulated device): {nbytes} byte(s) at "
                f"{address:#x} are not inside one allocation ({where})"
            )

    def check_guards(self, addresses: list[int], kernel: str) -> None:
        """Raise :class:`EmulatorError` if a guard zone of an allocation holding one of
        ``addresses`` was overwritten (and restore it)."""
        seen: set[int] = set()
        problems = []
        for address in addresses:
            block = self.find(address)
            if block is None or block.number in seen:
                continue
            seen.add(block.number)
            lo, hi = block.guards()
            for zone, side in ((hi, "past"), (lo, "before")):
                bad = np.flatnonzero(zone != GUARD_BYTE)
                if bad.size:
                    first = int(bad[0] if side == "past" else GUARD - bad[-1])
                    problems.append(
                        f"out-of-bounds write {side} allocation {block.number} "
                        f"({block.size} bytes): {bad.size} guard byte(s) changed, the "
                        f"{'first' if side == 'past' else 'nearest'} {first} byte(s) "
                        f"{'after its end' if side == 'past' else 'before its start'}"
                    )
                    zone[:] = GUARD_BYTE
        if problems:
            raise EmulatorError(f"kernel {kernel}: " + "; ".join(problems))

    def view(self, address: int, nbytes: int) -> np.ndarray:
        """A writable uint8 view of ``nbytes`` device bytes at ``address`` (bounds-checked
        by the caller)."""
        block = self.find(address)
        assert block is not None
        i = block.offset + (address - block.start)
        return block.buffer[i : i + nbytes]

    # -- kernels -----------------------------------------------------------------------------
    def build(self, source: str) -> tuple[ctypes.CDLL, dict[str, KernelInfo]]:
        """Compile ``source`` (plus a launcher per kernel) into a loaded shared library,
        through the on-disk cache."""
        kernels = {}
        for name, params in _KERNEL_RE.findall(_strip_comments(source)):
            decls = tuple(p.strip() for p in params.split(",") if p.strip() and p.strip() != "void")
            kernels[name] = KernelInfo(name, decls)
        full = instrument(source) + "\n" + "".join(_launcher(k) for k in kernels.values())
        return _load(full), kernels


@functools.cache
def context() -> EmulatedContext:
    """The process's emulated device context (created once)."""
    return EmulatedContext()


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def _launcher(kernel: KernelInfo) -> str:
    """C++ that unpacks a pycuda-style argument buffer and runs ``kernel`` on the fibers,
    each pointer parameter wrapped in a checked ``opw_emu::gptr`` (its allocation's
    ``(start, size, number)`` come from the stand-in in ``regions``)."""
    name = kernel.name
    members, names = [], []
    n_regions = 0
    for i, decl in enumerate(kernel.params):
        match = _PARAM_RE.match(decl)
        if match is None or not match.group(1).strip():
            raise EmulatorError(f"kernel {name}: cannot read parameter {decl!r}")
        members.append(f"    {match.group(1).strip()} p{i};\n")
        found = pointee(decl)
        if found is None:
            names.append(f"c->a.p{i}")
            continue
        kind, param = found
        names.append(f'opw_emu::gptr<{kind}>{{c->a.p{i}, &c->regs[{n_regions}], "{param}"}}')
        n_regions += 1
    last = len(kernel.params) - 1
    size = (
        f"offsetof(opw_args_{name}, p{last}) + sizeof(((opw_args_{name}*)0)->p{last})"
        if kernel.params
        else "0"
    )
    body = "".join(members) or "    char unused;\n"
    regs = max(n_regions, 1)
    return (
        f"struct opw_args_{name} {{\n{body}}};\n"
        f"struct opw_call_{name} {{ opw_args_{name} a; opw_emu::Region regs[{regs}]; }};\n"
        f'extern "C" size_t opw_argsize_{name}(void) {{ return {size}; }}\n'
        f"static void opw_body_{name}(void* p) {{\n"
        f"    opw_call_{name}* c = (opw_call_{name}*)p; (void)c;\n"
        f"    {name}({', '.join(names)});\n}}\n"
        f'extern "C" int opw_launch_{name}(const void* buf, const unsigned int* dims, '
        f"int order, unsigned long long state, const unsigned long long* regions, "
        f"const long long* blocks, long long nblocks, char* err, int errlen) {{\n"
        f"    opw_call_{name} c;\n"
        f"    std::memcpy((void*)&c.a, buf, opw_argsize_{name}());\n"
        f"    opw_emu::set_regions(c.regs, {n_regions}, regions);\n"
        f"    const int status = opw_emu::launch(opw_body_{name}, &c, dims, order, state, "
        f'blocks, nblocks, "{name}", err, errlen);\n'
        f"    opw_emu::free_regions(c.regs, {n_regions});\n"
        f"    return status;\n}}\n"
    )


@functools.cache
def _compiler_identity() -> tuple[str, str]:
    compiler = find_compiler()
    if compiler is None:
        raise EmulatorError("the emulated device needs a C++ compiler (g++, c++ or clang++)")
    proc = subprocess.run([compiler, "--version"], capture_output=True, text=True, check=False)
    return compiler, proc.stdout


def cache_dir() -> Path:
    """Where built kernels are kept: ``$OPWEAVE_CUDA_EMULATOR_CACHE``, else
    ``$XDG_CACHE_HOME/opweave-cuda-emulator`` (``~/.cache`` by default)."""
    explicit = os.environ.get("OPWEAVE_CUDA_EMULATOR_CACHE")
    if explicit:
        return Path(explicit)
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "opweave-cuda-emulator"


def _load(full: str) -> ctypes.CDLL:
    compiler, version = _compiler_identity()
    header = b"".join(p.read_bytes() for p in sorted(INCLUDE_DIR.glob("*.h")))
    key = hashlib.sha256(
        b"\0".join([full.encode(), header, " ".join(CXX_FLAGS).encode(), version.encode()])
    ).hexdigest()[:32]
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    library = directory / f"k_{key}.so"
    if not library.is_file():
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = Path(tmp) / "module.cpp"
            src.write_text(full)
            out = Path(tmp) / "module.so"
            cmd = [compiler, *CXX_FLAGS, f"-I{INCLUDE_DIR}", "-o", str(out), str(src)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise CompileFailure(proc.stderr[-8000:], cmd)
            os.replace(out, library)
    return ctypes.CDLL(str(library))


class CompileFailure(EmulatorError):
    """The host compiler refused a module (its messages are in the text)."""

    def __init__(self, stderr: str, cmd: list[str]) -> None:
        super().__init__(f"emulated device: compiling the module failed:\n{stderr}")
        self.stderr = stderr
        self.command_line = " ".join(cmd)


def finalize_release(owner: object, start: int) -> None:
    """Release the allocation at ``start`` when ``owner`` is garbage-collected."""
    weakref.finalize(owner, context().release, start)
