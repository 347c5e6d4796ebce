"""The C compiler: its identity (part of every cache key) and one call to build a module.

A compiler run lives no longer than the process that started it: where there is a POSIX
shell, it runs in a process group of its own under a small shell script that watches a
pipe only this process writes to, and kills the whole group (the compiler driver and the
programs it starts: ``cc1``, ``as``, ``ld``) when the pipe closes, which the kernel does
when this process dies, even by ``SIGKILL``. An exception while waiting (``Ctrl-C``)
kills the group too.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from opweave_c.errors import CompilationError

#: Flags every module is built with. No ``-ffast-math``: IEEE semantics (NaN, inf,
#: signed zeros) must match NumPy's.
BASE_FLAGS = ("-O3", "-fPIC", "-shared", "-fno-strict-aliasing", "-fno-math-errno", "-w")
#: cffi defaults to the limited API; the generated code needs all of CPython's and NumPy's.
DEFINES = ("-D_CFFI_NO_LIMITED_API", "-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION")


@dataclass(frozen=True)
class CCompiler:
    """A C compiler command and the flags the user added.

    Parameters
    ----------
    command
        The compiler executable (``config.cxx``).
    extra_flags
        Extra flags from ``config.gcc__cxxflags``.
    """

    command: str
    extra_flags: tuple[str, ...] = ()

    @classmethod
    def from_config(cls) -> CCompiler:
        """The compiler named by ``config.cxx`` with ``config.gcc__cxxflags``."""
        from opweave import config

        return cls(config.cxx, tuple(shlex.split(config.gcc__cxxflags)))

    @property
    def identity(self) -> str:
        """The compiler's path and first ``--version`` line (part of the cache key)."""
        return _identity(self.command)

    @property
    def is_gcc(self) -> bool:
        """Whether the compiler is GCC (whose ``optimize`` attribute the fast build of
        opweave's own modules relies on; clang ignores it)."""
        version = self.identity.split(": ", 1)[-1]
        return re.match(r"\S*(gcc|cc|g\+\+|c\+\+)(-[\d.]+)? \(", version) is not None

    def include_dirs(self) -> list[str]:
        """Python's and NumPy's header directories."""
        return [sysconfig.get_paths()["include"], np.get_include()]

    def command_line(
        self,
        source: str,
        target: str,
        compile_args: list[str],
        include_dirs: list[str],
        lib_dirs: list[str],
        libraries: list[str],
        no_compile_args: list[str],
        objects: list[str] | None = None,
        compile_only: bool = False,
    ) -> list[str]:
        """The full command that builds ``source`` (linked with the object files
        ``objects``) into the shared object ``target``; with ``compile_only``, that
        compiles it into the object file ``target`` (``-c``: ``objects`` and the libraries
        are then for the link, :meth:`link_line`)."""
        flags = [*BASE_FLAGS, *DEFINES, *compile_args, *self.extra_flags]
        flags = [f for f in dict.fromkeys(flags) if f not in set(no_compile_args)]
        incs = [f"-I{d}" for d in dict.fromkeys([*self.include_dirs(), *include_dirs])]
        if compile_only:
            flags = [f for f in flags if f != "-shared"]
            return [self.command, *flags, *incs, "-c", source, "-o", target]
        libs = [f"-L{d}" for d in lib_dirs] + [f"-l{lib}" for lib in libraries]
        return [self.command, *flags, *incs, source, *(objects or ()), "-o", target, *libs]

    def link_line(
        self,
        objects: list[str],
        target: str,
        compile_args: list[str],
        lib_dirs: list[str],
        libraries: list[str],
        no_compile_args: list[str],
    ) -> list[str]:
        """The command that links the object files ``objects`` into the shared object
        ``target``, with the flags a build of their source would have (those that matter
        to the link: ``-shared``, ``-fPIC``, ``-fopenmp`` ...) and the libraries."""
        flags = [*BASE_FLAGS, *DEFINES, *compile_args, *self.extra_flags]
        flags = [f for f in dict.fromkeys(flags) if f not in set(no_compile_args)]
        libs = [f"-L{d}" for d in lib_dirs] + [f"-l{lib}" for lib in libraries]
        return [self.command, *flags, *objects, "-o", target, *libs]

    def build(self, source: str, target: str, what: str, **kwargs: list[str] | bool) -> None:
        """Compile ``source`` into ``target`` (keyword arguments: those of
        :meth:`command_line`).

        Raises
        ------
        CompilationError
            With the compiler's output, ``what`` was compiled, and the kept source.
        """
        self.run(self.command_line(source, target, **kwargs), source, what)  # type: ignore[arg-type]

    def link(
        self, objects: list[str], target: str, source: str, what: str, **kwargs: list[str]
    ) -> None:
        """Link ``objects`` into the shared object ``target`` (keyword arguments: those
        of :meth:`link_line`); ``source`` is the C source an error names.

        Raises
        ------
        CompilationError
            With the linker's output.
        """
        self.run(self.link_line(objects, target, **kwargs), source, what)

    def run(self, cmd: list[str], source: str, what: str) -> None:
        """Run the compiler command ``cmd`` for ``what`` (built from ``source``).

        Raises
        ------
        CompilationError
            With the compiler's output, ``what`` was compiled, and the kept source.
        """
        try:
            if shutil_which(self.command) is None:
                raise FileNotFoundError(errno.ENOENT, "not found", self.command)
            proc = run_tied(cmd)
        except OSError as exc:
            raise CompilationError(
                f"cannot run the C compiler {self.command!r} ({exc}); set config.cxx "
                "(OPWEAVE_FLAGS=cxx=...) to a working compiler",
                source,
                what,
            ) from exc
        if proc.returncode != 0:
            output = (proc.stderr or proc.stdout).strip()
            raise CompilationError(
                f"compiling {what} failed (exit {proc.returncode}).\n"
                f"Source kept at: {source}\nCommand: {shlex.join(cmd)}\n{output}",
                source,
                what,
            )


#: Runs ``"$@"`` in the background, stdin from /dev/null, and waits for it; meanwhile a
#: second background job reads the shell's stdin (the pipe :func:`run_tied` holds open)
#: and, at its end, kills the shell's process group. The shell exits with the command's
#: status, after stopping the watcher.
_TIED_SCRIPT = (
    "exec 3<&0; "
    '"$@" </dev/null 3<&- & c=$!; '
    "{ read _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & w=$!; "
    "exec 3<&-; "
    'wait "$c"; rc=$?; kill "$w" 2>/dev/null; exit "$rc"'
)


def run_tied(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` to its end, its output captured (as text), and kill it with every
    process it started should this process die or the wait be interrupted.

    Without a POSIX shell, a plain :func:`subprocess.run`.

    Raises
    ------
    OSError
        When the command (or the shell) cannot be started.
    """
    shell = shutil.which("sh") if os.name == "posix" else None
    if shell is None:
        return subprocess.run(cmd, capture_output=True, text=True, check=False)
    watched, held = os.pipe()
    try:
        proc = subprocess.Popen(
            [shell, "-c", _TIED_SCRIPT, "sh", *cmd],
            stdin=watched,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # a process group of its own, killed whole
        )
    except BaseException:
        os.close(held)
        raise
    finally:
        os.close(watched)
    try:
        out, err = proc.communicate()
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        os.close(held)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@functools.cache
def _identity(command: str) -> str:
    """``"<path>: <first line of --version>"``, remembered on disk per compiler binary (its
    real path, inode, size and modification time) so that a process loading cached modules
    does not start the compiler."""
    resolved = shutil_which(command)
    if resolved is None:
        return f"{command}: unavailable (not found)"
    try:
        real = os.path.realpath(resolved)
        info = os.stat(real)
    except OSError as exc:
        return f"{command}: unavailable ({exc})"
    stamp = f"{real}|{info.st_ino}|{info.st_size}|{info.st_mtime_ns}"
    memo = _identity_memo(stamp)
    if memo is not None:
        try:
            head, _, text = memo.read_text().partition("\n")
            if head == stamp and text:
                return text
        except OSError:
            pass
    try:
        proc = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{command}: unavailable ({exc})"
    first = (proc.stdout or proc.stderr).splitlines()[:1]
    identity = f"{resolved}: {first[0] if first else 'unknown'}"
    if memo is not None and proc.returncode == 0:
        try:
            tmp = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
            tmp.write_text(f"{stamp}\n{identity}")
            os.replace(tmp, memo)
        except OSError:
            pass
    return identity


def _identity_memo(stamp: str) -> Path | None:
    """Where the identity of the compiler ``stamp`` describes is remembered (in the private
    compile directory), or ``None`` when there is no usable one."""
    from opweave import config
    from opweave_c.cache import ensure_private_dir
    from opweave_c.errors import CacheDirError

    try:
        root = ensure_private_dir(Path(config.compiledir))
        folder = ensure_private_dir(root / "compilers")
    except (OSError, CacheDirError):
        return None
    return folder / hashlib.sha256(stamp.encode()).hexdigest()[:32]


def shutil_which(command: str) -> str | None:
    """``shutil.which`` that also accepts paths."""
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    return shutil.which(command)


def compiler_problem(command: str) -> str | None:
    """Why ``command`` cannot compile C here, or ``None`` when it can."""
    if shutil_which(command) is None:
        return f"C compiler {command!r} not found (set config.cxx or the CC variable)"
    if "unavailable" in _identity(command):
        return _identity(command)
    return None
