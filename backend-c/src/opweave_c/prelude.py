"""A precompiled header of the runtime that every module of opweave-c's own starts with.

GCC parses Python's and NumPy's headers and the runtime (``csrc/runtime.h``) again for
every module: about a sixth of a small module's build. As soon as a compile has chosen a C
linker, and while its graph is still being rewritten, :func:`start_precompiling` starts GCC
in the background on a header holding the runtime, for the flags modules of opweave-c's
own are built with (:func:`own_module_flags`). The result lives in the compile directory
(``prelude/<key>/``, the key a hash of the compiler, the flags and the runtime), so later
compiles find it built. A module built with those same flags includes the header
(``-include``) once its precompiled form exists (:func:`include_args`); a build starting
before then waits for it only when it is nearly done, and otherwise parses the text as
before.

GCC checks a precompiled header against the compiler and flags of every use and falls
back to the header's text when it does not fit; the runtime's include guard makes the
module's own copy of the runtime text a no-op after it. So the header changes how fast a
module builds, never what it computes. Both files are used only when no other user could
have written them (:mod:`opweave.link.trusted_files`, the rule of the module cache).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from opweave.link.trusted_files import trusted_uids, unsafe_reason
from opweave_c.compiler import CCompiler

__all__ = [
    "HEADER_NAME",
    "NEARLY_DONE",
    "STALE_SECONDS",
    "WAIT_SECONDS",
    "include_args",
    "own_module_flags",
    "prelude_dir",
    "start_precompiling",
]

#: The header's file name; its precompiled form is ``HEADER_NAME + ".gch"`` beside it.
HEADER_NAME = "opw_prelude.h"
#: A marker of a build in progress older than this (seconds) is from a build that died.
STALE_SECONDS = 120
#: A build of the precompiled form running for this long (seconds) is nearly done (it
#: takes about 0.25 s): a module build waits for it (:func:`include_args`).
NEARLY_DONE = 0.1
#: How long a module build waits at most for a nearly done precompiled form (seconds).
WAIT_SECONDS = 0.15
#: Starts, in the background, precompiling header ``$1`` into ``$2`` with the command that
#: follows ``$4``, renaming the complete file to ``$3`` (a reader never sees a partial one)
#: and removing the partial file of a failed build and the build marker ``$4``; the shell
#: itself returns at once.
_SCRIPT = (
    'h=$1; p=$2; f=$3; m=$4; shift 4; ( "$@" -x c-header "$h" -o "$p" && chmod 600 "$p" '
    '&& mv -f "$p" "$f"; rm -f "$p" "$m" ) </dev/null >/dev/null 2>&1 &'
)


def own_module_flags() -> list[str]:
    """The compile arguments of a module holding only opweave-c's own C with elementwise
    loops (the fast build, the scalar code's and the vector math's flags), in the order a
    module gathers them."""
    from opweave_c.impls.scalar_basic import COMPILE_ARGS
    from opweave_c.module import FAST_BUILD_ARGS
    from opweave_c.vector_math import vector_math_code

    vec = vector_math_code()
    args = [*FAST_BUILD_ARGS, *COMPILE_ARGS, *(vec.compile_args if vec else ())]
    return list(dict.fromkeys(args))


def _flags(compiler: CCompiler, compile_args: list[str], include_dirs: list[str]) -> list[str]:
    """The command line of a build without its source and output."""
    line = compiler.command_line("@SRC@", "@OUT@", compile_args, include_dirs, [], [], [])
    return [f for f in line[1:] if f not in ("@SRC@", "-o", "@OUT@", "-shared")]


def prelude_dir(
    root: Path, compiler: CCompiler, compile_args: list[str], include_dirs: list[str], text: str
) -> Path:
    """Where the header for these flags and runtime ``text`` lives under compile
    directory ``root``."""
    h = hashlib.sha256()
    for part in (compiler.identity, repr(_flags(compiler, compile_args, include_dirs)), text):
        h.update(part.encode())
        h.update(b"\0")
    return root / "prelude" / h.hexdigest()[:32]


def _trusted(path: Path, kind: int) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return unsafe_reason(info, trusted_uids(), kind) is None


def include_args(folder: Path, wait: float = 0.0) -> list[str]:
    """``["-include", header]`` when the header in ``folder`` and its precompiled form are
    built and trusted, else nothing (the module then parses the runtime as before).

    With ``wait`` (seconds), a build of the precompiled form that has run for at least
    :data:`NEARLY_DONE` seconds is waited for, up to ``wait``: it is then about to end,
    and waiting costs less than parsing the text.
    """
    header = folder / HEADER_NAME
    building = folder / ".building"
    deadline = time.monotonic() + wait
    while not (folder / (HEADER_NAME + ".gch")).exists() and time.monotonic() < deadline:
        try:
            age = time.time() - building.stat().st_mtime
        except OSError:
            break
        if not NEARLY_DONE <= age < STALE_SECONDS:
            break
        time.sleep(0.005)
    if all(
        _trusted(p, k)
        for p, k in (
            (folder.parent, stat.S_IFDIR),
            (folder, stat.S_IFDIR),
            (header, stat.S_IFREG),
            (folder / (HEADER_NAME + ".gch"), stat.S_IFREG),
        )
    ):
        return ["-include", str(header)]
    return []


def start_precompiling(
    folder: Path,
    compiler: CCompiler,
    compile_args: list[str],
    include_dirs: list[str],
    text: str,
) -> bool:
    """Write the header (``text``) into ``folder`` and start GCC precompiling it in the
    background, unless it is built or being built already.

    The compiler writes a hidden file in ``folder`` that is renamed into place when
    complete (the partial file of a build that died goes when the next build takes over
    its marker). Returns whether a build started: not when there is nothing to do or it
    cannot be done (not GCC, a directory that cannot be written); the modules then build
    without it.
    """
    if not compiler.is_gcc or include_args(folder):
        return False
    header = folder / HEADER_NAME
    building = folder / ".building"
    try:
        folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        if not (_trusted(folder.parent, stat.S_IFDIR) and _trusted(folder, stat.S_IFDIR)):
            return False
        if header.exists() and not _trusted(header, stat.S_IFREG):
            return False
        try:  # one build at a time: the marker is created by exactly one starter
            os.close(os.open(building, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            try:
                age = time.time() - building.stat().st_mtime
            except FileNotFoundError:  # a build just ended
                return False
            if age < STALE_SECONDS:
                return False
            building.touch()  # the marker of a build that died: take it over
            for partial_file in folder.glob(".gch-*"):
                partial_file.unlink(missing_ok=True)
        if not header.exists():
            handle, tmp = tempfile.mkstemp(dir=folder, prefix=".header-")
            with os.fdopen(handle, "w") as fh:
                fh.write(text)
            os.replace(tmp, header)
        handle, partial = tempfile.mkstemp(dir=folder, prefix=".gch-")
        os.close(handle)
        command = [compiler.command, *_flags(compiler, compile_args, include_dirs)]
        final = str(header) + ".gch"
        try:
            subprocess.run(
                ["sh", "-c", _SCRIPT, "sh", str(header), partial, final, str(building), *command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            building.unlink(missing_ok=True)  # nothing started: the next compile may try
            Path(partial).unlink(missing_ok=True)
            raise
        return True
    except (OSError, subprocess.SubprocessError):
        return False
