"""The runtime that every module of opweave-c's own starts with, compiled once per compile
directory: a precompiled header and an object file.

GCC parses Python's and NumPy's headers and the runtime's header (``csrc/runtime.h``)
again for every module, and compiles the runtime's functions (``csrc/runtime_functions.h``
and the TensorType helpers of ``csrc/tensor.h``) again: together about half of a small
module's build (the functions alone, about four fifths of it). As soon as a compile has
chosen a C linker for a graph, while the graph is still being rewritten, or else
when the first module of opweave-c's own is about to build, :func:`start_precompiling`
starts GCC in the background, for the flags modules of opweave-c's own are built with
(:func:`own_module_flags`), on

- the runtime's functions, into an object file (``-DOPW_RUNTIME_OBJECT``), then
- when the caller asks for it (:mod:`opweave_c.module` does with enough cores to spare),
  the header, into its precompiled form, at the lowest priority.

The object comes first: it saves a module more than the header does.

Both live in the compile directory (``prelude/<key>/``, the key a hash of the compiler,
the flags and the runtime's text), so later compiles find them built. A module built with
those same flags includes the header (``-include``) once its precompiled form exists
(:func:`include_args`), and is linked with the object once it exists
(:func:`runtime_object`), compiled with ``-DOPW_RUNTIME_LINKED`` so that it sees the
functions' declarations only. A module build that starts while the object is being built
compiles its own code meanwhile, on another core, and waits for the object before its
link (:func:`object_pending`, :func:`wait_for_object`); one that starts while the header
is being built waits for it only when it is nearly done, and stops it otherwise, since it
would slow the module down (:func:`settle_build`).

GCC checks a precompiled header against the compiler and flags of every use and falls
back to the header's text when it does not fit; the runtime's include guard makes the
module's own copy of the runtime text a no-op after it. The object holds the code a module
would otherwise compile from the same text with the same flags, and a module that fails
to build with it is built again without it (:mod:`opweave_c.module`). So neither changes
what a module computes or its cache key, only how fast it builds. All files are used only
when no other user could have written them (:mod:`opweave.link.trusted_files`, the rule
of the module cache).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

from opweave.link.trusted_files import open_trusted, trusted_uids, unsafe_reason
from opweave_c.compiler import CCompiler

__all__ = [
    "HEADER_NAME",
    "NEARLY_DONE",
    "OBJECT_NAME",
    "OBJECT_SOURCE_NAME",
    "STALE_SECONDS",
    "WAIT_SECONDS",
    "include_args",
    "object_pending",
    "own_module_flags",
    "prelude_dir",
    "runtime_object",
    "settle_build",
    "start_precompiling",
    "wait_for_object",
]

#: The header's file name; its precompiled form is ``HEADER_NAME + ".gch"`` beside it.
HEADER_NAME = "opw_prelude.h"
#: The runtime object's source file name; the object is ``OBJECT_SOURCE_NAME`` with ``.o``.
OBJECT_SOURCE_NAME = "opw_runtime.c"
OBJECT_NAME = "opw_runtime.o"
#: A marker of a build in progress older than this (seconds) is from a build that died.
STALE_SECONDS = 120
#: The header's step running for this long (seconds) is nearly done, and a module build
#: waits for it (:func:`settle_build`): the precompiled header takes about 0.22 s after
#: the object, and saves a module about 0.05 s. (A module waits for the object's step
#: whenever it runs, :func:`wait_for_object`.)
NEARLY_DONE = {"header": 0.2}
#: How long a module build waits at most for a nearly done header (seconds): less than it
#: saves the modules building side by side.
WAIT_SECONDS = {"header": 0.04}
#: Starts, in the background, with the command that follows ``$9``: when ``$8`` is 1,
#: compiling the runtime's source ``$5`` into the object ``$7`` through the partial file
#: ``$6``; then, when ``$9`` is 1, precompiling header ``$1`` into ``$2``, renamed to
#: ``$3`` (a reader never sees a partial file). It writes its process group into the
#: build marker ``$4`` first (:func:`settle_build` may stop the header's step), touches
#: the marker when the header's step starts, removes the partial file of a failed step
#: and, at the end, the marker. The object's step runs at the caller's priority (module
#: builds wait for it, :func:`wait_for_object`), the header's at the lowest. The shell
#: itself returns at once.
_SCRIPT = (
    'h=$1; p=$2; f=$3; m=$4; s=$5; q=$6; o=$7; wo=$8; wh=$9; shift 9; echo $$ > "$m"; ( '
    'if [ "$wo" = 1 ]; then "$@" -DOPW_RUNTIME_OBJECT -c "$s" -o "$q" && chmod 600 "$q" '
    '&& mv -f "$q" "$o"; fi; rm -f "$q"; if [ "$wh" = 1 ]; then touch "$m"; n=; '
    'command -v nice >/dev/null 2>&1 && n="nice -n 19"; '
    '$n "$@" -x c-header "$h" -o "$p" && chmod 600 "$p" && mv -f "$p" "$f"; fi; '
    'rm -f "$p" "$m" ) </dev/null >/dev/null 2>&1 &'
)


def own_module_flags() -> list[str]:
    """The compile arguments of every module holding only opweave-c's own C (the fast
    build, the scalar code's and the vector math's flags, in the order a module with
    elementwise loops gathers them), which modules without such loops get too."""
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
    """Where the header and object for these flags and runtime ``text`` live under
    compile directory ``root``."""
    return root / "prelude" / _prelude_key(compiler, tuple(compile_args), tuple(include_dirs), text)


@functools.lru_cache(maxsize=32)
def _prelude_key(
    compiler: CCompiler, compile_args: tuple[str, ...], include_dirs: tuple[str, ...], text: str
) -> str:
    """The hash naming :func:`prelude_dir`: of the compiler, the flags and the runtime's
    text (computed once per process for each, as every compile asks for it)."""
    h = hashlib.sha256()
    flags = _flags(compiler, list(compile_args), list(include_dirs))
    for part in (compiler.identity, repr(flags), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _trusted(path: Path, kind: int) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return unsafe_reason(info, trusted_uids(), kind) is None


def _all_trusted(folder: Path, *files: str) -> bool:
    """Are ``folder``, its parent and ``files`` in it there and safe to use?"""
    return all(
        _trusted(path, kind)
        for path, kind in (
            (folder.parent, stat.S_IFDIR),
            (folder, stat.S_IFDIR),
            *((folder / name, stat.S_IFREG) for name in files),
        )
    )


def settle_build(folder: Path) -> None:
    """Before a module builds: wait for the header's step of the build in ``folder``
    when it has run for at least :data:`NEARLY_DONE` seconds, for at most
    :data:`WAIT_SECONDS` (it is then about to end, and waiting costs less than building
    without it); then stop it if it still runs, since it would only slow the module builds
    down (the next large compile starts it again).

    An object's step is not waited for here: a module compiles beside it and waits for it
    before its link (:func:`object_pending`, :func:`wait_for_object`). Nothing to do for a
    build that has died, or none at all."""
    building = folder / ".building"
    deadline: float | None = None
    while not (folder / (HEADER_NAME + ".gch")).exists():
        try:
            began = building.stat().st_mtime  # touched when the header's step starts
        except OSError:
            return
        if time.time() - began >= STALE_SECONDS or not (folder / OBJECT_NAME).exists():
            return
        deadline = deadline or time.monotonic() + WAIT_SECONDS["header"]
        if time.monotonic() >= deadline or time.time() - began < NEARLY_DONE["header"]:
            _stop_build(folder)
            return
        time.sleep(0.005)


def object_pending(folder: Path) -> bool:
    """Is the runtime's object of ``folder`` being built (a live build, its object not
    there yet)?"""
    try:
        began = (folder / ".building").stat().st_mtime
    except OSError:
        return False
    return time.time() - began < STALE_SECONDS and runtime_object(folder) is None


def wait_for_object(folder: Path, seconds: float) -> Path | None:
    """The runtime's object of ``folder`` (:func:`runtime_object`) once the build in
    progress has made it, waiting for at most ``seconds``; ``None`` when that build ends
    without it (it failed, or was stopped) or takes longer."""
    deadline = time.monotonic() + seconds
    while True:
        found = runtime_object(folder)
        if found is not None or not object_pending(folder) or time.monotonic() >= deadline:
            return found or runtime_object(folder)
        time.sleep(0.002)


def _stop_build(folder: Path) -> None:
    """Stop the build running in ``folder`` (its process group, from its marker) and
    remove its marker and partial files.

    Only a group that is provably this folder's build is signalled
    (:func:`_is_our_build`): the marker must be a file no other user could have written,
    and the group must hold a process of ours running this folder's build. Anything else
    (a marker planted to name another process, a group whose build has ended and whose
    number was reused) is left alone."""
    building = folder / ".building"
    if not _all_trusted(folder):
        return
    try:
        fh, _, _ = open_trusted(building, trusted_uids())
    except OSError:
        return
    if fh is None:
        return
    with fh:
        try:
            group = int(fh.read(64).decode().strip() or "0")
        except (OSError, ValueError):
            return
    if group <= 1 or not hasattr(os, "killpg") or not _is_our_build(group, building):
        return
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGTERM)
    building.unlink(missing_ok=True)
    for pattern in (".gch-*", ".obj-*"):
        for partial_file in folder.glob(pattern):
            partial_file.unlink(missing_ok=True)


def _is_our_build(group: int, marker: Path) -> bool:
    """Does process group ``group`` hold a process of this user (the effective uid) whose
    command line names ``marker`` (the build script, :data:`_SCRIPT`, gets it as an
    argument)? No other user can start a process of ours, so such a group is a build
    this user started for this folder.

    Read from ``/proc``; ``False`` where there is none (nothing is signalled there)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists() or not hasattr(os, "geteuid"):
        return False
    wanted = str(marker).encode()
    me = os.geteuid()
    try:
        listing = os.listdir(proc)
    except OSError:
        return False
    for name in listing:
        if not name.isdigit():
            continue
        try:
            stat_line = (proc / name / "stat").read_bytes()
            # ``pid (comm) state ppid pgrp ...``: comm may hold spaces and parentheses.
            fields = stat_line[stat_line.rindex(b")") + 2 :].split()
            if int(fields[2]) != group or os.stat(proc / name).st_uid != me:
                continue
            command_line = (proc / name / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if wanted in command_line:
            return True
    return False


def include_args(folder: Path) -> list[str]:
    """``["-include", header]`` when the header in ``folder`` and its precompiled form are
    built and trusted, else nothing (the module then parses the runtime as before)."""
    if _all_trusted(folder, HEADER_NAME, HEADER_NAME + ".gch"):
        return ["-include", str(folder / HEADER_NAME)]
    return []


def runtime_object(folder: Path) -> Path | None:
    """The runtime's object file in ``folder`` when it is built and trusted, else
    ``None`` (the module then compiles the runtime's functions itself)."""
    if _all_trusted(folder, OBJECT_NAME):
        return folder / OBJECT_NAME
    return None


def _write_if_missing(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed into place."""
    if path.exists():
        return
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".text-")
    with os.fdopen(handle, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def start_precompiling(
    folder: Path,
    compiler: CCompiler,
    compile_args: list[str],
    include_dirs: list[str],
    header: str,
    object_source: str,
    with_header: bool = True,
) -> bool:
    """Write the runtime's ``header`` and ``object_source`` into ``folder`` and start GCC
    compiling them (object first, precompiled header second; the header only
    ``with_header``) in the background, unless they are built or being built already.

    The compiler writes hidden files in ``folder`` that are renamed into place when
    complete (the partial files of a build that died go when the next build takes over
    its marker). Returns whether a build started: not when there is nothing to do or it
    cannot be done (not GCC, a directory that cannot be written); the modules then build
    without them.
    """
    want_object = runtime_object(folder) is None
    want_header = with_header and not include_args(folder)
    if not compiler.is_gcc or not (want_object or want_header):
        return False
    header_path = folder / HEADER_NAME
    source_path = folder / OBJECT_SOURCE_NAME
    building = folder / ".building"
    try:
        folder.parent.mkdir(mode=0o700, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        if not (_trusted(folder.parent, stat.S_IFDIR) and _trusted(folder, stat.S_IFDIR)):
            return False
        for path in (header_path, source_path):
            if path.exists() and not _trusted(path, stat.S_IFREG):
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
            for pattern in (".gch-*", ".obj-*"):
                for partial_file in folder.glob(pattern):
                    partial_file.unlink(missing_ok=True)
        _write_if_missing(header_path, header)
        _write_if_missing(source_path, object_source)
        partials = []
        for prefix in (".gch-", ".obj-"):  # in the order of the script's arguments
            handle, partial = tempfile.mkstemp(dir=folder, prefix=prefix)
            os.close(handle)
            partials.append(partial)
        command = [compiler.command, *_flags(compiler, compile_args, include_dirs)]
        arguments = [
            str(header_path),
            partials[0],
            str(header_path) + ".gch",
            str(building),
            str(source_path),
            partials[1],
            str(folder / OBJECT_NAME),
            "1" if want_object else "0",
            "1" if want_header else "0",
        ]
        try:
            subprocess.run(
                ["sh", "-c", _SCRIPT, "sh", *arguments, *command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
                timeout=10,
                start_new_session=True,  # a process group of its own, to stop it whole
            )
        except (OSError, subprocess.SubprocessError):
            building.unlink(missing_ok=True)  # nothing started: the next compile may try
            for partial in partials:
                Path(partial).unlink(missing_ok=True)
            raise
        return True
    except (OSError, subprocess.SubprocessError):
        return False
