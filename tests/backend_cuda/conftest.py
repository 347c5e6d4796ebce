"""Shared fixtures of the CUDA backend's tests.

* ``nvcc``: the CUDA compiler (tests using it skip, with a reason, where it is missing);
  the ``compile_ptx`` fixture compiles generated kernels to PTX, many kernels per ``nvcc`` call,
  and ``assemble`` runs ``ptxas`` on that PTX (what the driver does when it loads a module).
* ``@pytest.mark.cuda`` tests run only where ``pycuda`` imports and sees a GPU (checked once,
  lazily); elsewhere they skip with the reason "needs an NVIDIA GPU and pycuda".
* Without a GPU, when a C++ compiler is found and ``OPWEAVE_CUDA_EMULATOR`` is not ``"0"``,
  the ``cuda`` tests run on the emulated device (``emulator/``: a pycuda stand-in put first on
  ``sys.path``); the session header says which. A real GPU always wins. The stand-in is in
  place only while this directory's tests run (from its first test's setup to its last
  test's teardown): the rest of the suite sees the machine as it is, without pycuda.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

#: Architectures every generated kernel is compiled for.
ARCHS = ("sm_80", "sm_90")

#: The pycuda stand-in of the emulated device.
EMULATOR_PATH = Path(__file__).parent / "emulator" / "fake"


def _real_gpu_name() -> str | None:
    """The name of the GPU the real pycuda sees, or ``None``."""
    try:
        import pycuda
        import pycuda.driver as drv

        if getattr(pycuda, "EMULATED", False):  # the stand-in, inherited through PYTHONPATH
            return None
        drv.init()
        if drv.Device.count() > 0:
            return str(drv.Device(0).name())
    except Exception:
        pass
    return None


def _select_cuda_device() -> tuple[str, bool]:
    """Choose the device of the ``cuda`` tests, once, before any test imports pycuda: the
    real GPU, else the emulated device (when allowed and a C++ compiler exists). Returns the
    session header's line and whether the emulated device is used."""
    name = _real_gpu_name()
    if name is not None:
        return f"cuda tests: real GPU {name}", False
    if os.environ.get("OPWEAVE_CUDA_EMULATOR", "1") == "0":
        line = "cuda tests: skipped (no GPU; emulator turned off by OPWEAVE_CUDA_EMULATOR=0)"
        return line, False
    if not any(shutil.which(c) for c in (os.environ.get("CXX") or "g++", "g++", "c++")):
        return "cuda tests: skipped (no GPU, no C++ compiler for the emulated device)", False
    return "cuda tests: EMULATED device (no GPU)", True


CUDA_DEVICE_LINE, EMULATED = _select_cuda_device()
#: ``PYTHONPATH`` as the session found it (restored when the stand-in is removed).
_PYTHONPATH = os.environ.get("PYTHONPATH")
HERE = Path(__file__).parent


def _forget_pycuda() -> None:
    """Drop the imported pycuda modules and every cache holding what they gave."""
    for module in [m for m in sys.modules if m == "pycuda" or m.startswith("pycuda.")]:
        del sys.modules[module]
    availability = sys.modules.get("opweave_cuda.availability")
    if availability is not None:
        for name in ("cuda_problem", "_process_device", "memory_pool"):
            _clear(getattr(availability, name, None))
    runtime = sys.modules.get("opweave_cuda.kernels.runtime")
    if runtime is not None:
        _clear(runtime.compile_module)
        _clear(runtime.prepared_function)
    gpu_unavailable_reason.cache_clear()


def _clear(fn: object) -> None:
    """Empty ``fn``'s cache (a test may have replaced it by a function without one)."""
    clear = getattr(fn, "cache_clear", None)
    if clear is not None:
        clear()


def _use_emulator(on: bool) -> None:
    """Put the pycuda stand-in first on ``sys.path`` (and ``PYTHONPATH``, for the
    subprocesses tests start), or take it away; idempotent."""
    path = str(EMULATOR_PATH)
    if on == (path in sys.path):
        return
    _forget_pycuda()
    if on:
        sys.path.insert(0, path)
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (path, _PYTHONPATH) if p)
        return
    sys.path.remove(path)
    if _PYTHONPATH is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = _PYTHONPATH


def _in_this_directory(item: pytest.Item | None) -> bool:
    return item is not None and HERE in Path(str(item.path)).parents


def pytest_report_header(config: pytest.Config) -> str:
    """Say where the ``cuda`` tests run: a real GPU or the emulated device."""
    return CUDA_DEVICE_LINE


def find_nvcc() -> str | None:
    """The ``nvcc`` executable, or ``None``."""
    found = shutil.which("nvcc")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / "nvcc").is_file():
            return str(Path(root) / "bin" / "nvcc")
    return None


@functools.lru_cache(maxsize=1)
def gpu_unavailable_reason() -> str | None:
    """Why GPU tests cannot run here (``None``: they can). Checked once per session."""
    try:
        import pycuda
        import pycuda.driver as drv

        if getattr(pycuda, "EMULATED", False):  # the stand-in, inherited through PYTHONPATH
            return None
        drv.init()
        if drv.Device.count() > 0:
            return None
    except Exception:
        pass
    return "needs an NVIDIA GPU and pycuda"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Put the emulated device in place (when it is used), and skip ``cuda``-marked tests
    where no GPU is usable."""
    if EMULATED:
        _use_emulator(True)
    if item.get_closest_marker("cuda") is not None:
        reason = gpu_unavailable_reason()
        if reason is not None:
            pytest.skip(reason)


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Take the emulated device away after this directory's last test (once its fixtures,
    and what they patched, are gone)."""
    if EMULATED and not _in_this_directory(nextitem):
        _use_emulator(False)


@pytest.fixture
def machine_without_pycuda() -> Iterator[None]:
    """The test sees the machine as it is: the emulated device is taken away for it (the
    next test's setup puts it back)."""
    if EMULATED:
        _use_emulator(False)
    yield


@pytest.fixture
def fresh_pycuda() -> Iterator[None]:
    """The test starts as a new process would: pycuda not imported, no device chosen, every
    cache of the backend that holds what pycuda gave emptied (so that it can change the
    emulated driver's settings first); the next test starts afresh too."""
    _forget_pycuda()
    yield
    _forget_pycuda()


@pytest.fixture(scope="session")
def nvcc() -> str:
    """The path of ``nvcc`` (skips the test where it is missing)."""
    path = find_nvcc()
    if path is None:
        pytest.skip("nvcc (the CUDA toolkit) is not installed")
    return path


def _compile_ptx(nvcc: str, sources: Iterable[str], directory: Path) -> dict[str, str]:
    """Compile the concatenation of ``sources`` to PTX for every arch of :data:`ARCHS`.

    Returns
    -------
    dict
        arch -> PTX text. A failed compile fails the test with ``nvcc``'s messages.
    """
    from opweave_cuda.kernels.source import NVCC_OPTIONS

    cu = directory / "kernels.cu"
    cu.write_text("\n".join(sources))
    out: dict[str, str] = {}
    for arch in ARCHS:
        ptx = directory / f"kernels_{arch}.ptx"
        cmd = [nvcc, "--ptx", f"-arch={arch}", *NVCC_OPTIONS, "-o", str(ptx), str(cu)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.fail(f"nvcc failed for {arch}:\n{proc.stderr[-6000:]}")
        out[arch] = ptx.read_text()
    return out


def _ptx_entry(ptx: str, name: str) -> str:
    """The PTX text of the kernel ``name`` (from its ``.entry`` to the next one)."""
    start = ptx.index(f".entry {name}(")
    end = ptx.find(".entry ", start + 1)
    return ptx[start : end if end != -1 else len(ptx)]


@pytest.fixture(scope="session")
def compile_ptx(nvcc: str) -> Callable[[Iterable[str], Path], dict[str, str]]:
    """``compile_ptx(sources, directory)``: the concatenated sources compiled to PTX for
    every arch of :data:`ARCHS` (arch -> PTX text; a failed compile fails the test)."""
    return functools.partial(_compile_ptx, nvcc)


def _assemble(ptxas: str, ptx: dict[str, str], directory: Path) -> dict[str, Path]:
    """Assemble each arch's PTX with ``ptxas`` (register allocation, parameter space,
    shared memory: what a driver's JIT would check). A failure fails the test."""
    out: dict[str, Path] = {}
    for arch, text in ptx.items():
        src = directory / f"assemble_{arch}.ptx"
        src.write_text(text)
        cubin = directory / f"assemble_{arch}.cubin"
        cmd = [ptxas, f"-arch={arch}", "-o", str(cubin), str(src)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.fail(f"ptxas failed for {arch}:\n{proc.stderr[-6000:]}")
        out[arch] = cubin
    return out


@pytest.fixture(scope="session")
def assemble(nvcc: str) -> Callable[[dict[str, str], Path], dict[str, Path]]:
    """``assemble(ptx, directory)``: each arch's PTX assembled by ``ptxas`` (arch -> cubin
    path; a failed assembly fails the test; skips where ``ptxas`` is missing)."""
    ptxas = shutil.which("ptxas") or str(Path(nvcc).parent / "ptxas")
    if not Path(ptxas).is_file():
        pytest.skip("ptxas (the CUDA toolkit's assembler) is not installed")
    return functools.partial(_assemble, ptxas)


@pytest.fixture(scope="session")
def ptx_entry() -> Callable[[str, str], str]:
    """``ptx_entry(ptx, name)``: the PTX of one kernel, from its ``.entry`` to the next."""
    return _ptx_entry
