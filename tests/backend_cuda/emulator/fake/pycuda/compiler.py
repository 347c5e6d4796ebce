"""``pycuda.compiler`` on the emulated device: :class:`SourceModule` builds with the host
C++ compiler against the emulation header (cached on disk)."""

from __future__ import annotations

from collections.abc import Sequence

from pycuda import driver
from pycuda._emulator import CompileFailure


def SourceModule(
    source: str,
    nvcc: str = "nvcc",
    options: Sequence[str] | None = None,
    keep: bool = False,
    no_extern_c: bool = False,
    arch: str | None = None,
    code: str | None = None,
    cache_dir: str | None = None,
    include_dirs: Sequence[str] = (),
) -> driver.Module:
    """Compile ``source`` into an emulated module (``options`` for ``nvcc`` are ignored:
    the host build never contracts multiply-adds, as ``--fmad=false``)."""
    if not no_extern_c:
        source = 'extern "C" {\n' + source + "\n}\n"
    try:
        return driver.Module(source)
    except CompileFailure as exc:
        raise driver.CompileError(str(exc), exc.command_line, "", exc.stderr) from None
