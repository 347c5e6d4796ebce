"""Reading what opweave itself wrote under ``config.compiledir``, and nothing else.

Compiled modules and cached graphs are code: loading a file another user could have
written would run their code. A file is read only when it is a regular file (never
through a symbolic link, never a FIFO) owned by you or by root that neither group nor
others can write to, in a directory no other user could have replaced: every directory
above it must be yours or root's, and writable by group or others only with the sticky
bit (``/tmp``), which keeps them from renaming what is yours (:func:`unsafe_ancestry`).
The C backend's module cache, the cache of rewritten graphs
(:mod:`opweave.compile.rewrite_cache`) and the plugins found
(:mod:`opweave.plugins.discovery`) all apply this rule.

The folders of kept files those caches write share the helpers below: a file is written
whole or not at all (:func:`write_whole`), into a folder only you can enter, and a folder
keeps its most recently modified files (:func:`files_by_age`, :func:`remove_quietly`).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "OPEN_FLAGS",
    "files_by_age",
    "keep_newest",
    "open_trusted",
    "read_trusted",
    "remove_quietly",
    "trusted_uids",
    "unsafe_ancestry",
    "unsafe_reason",
    "write_whole",
]

#: How cached files are opened: never through a symbolic link, never blocking on a FIFO.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def trusted_uids() -> frozenset[int] | None:
    """Who may own what opweave loads: you (the effective uid) and root, as ssh decides;
    ``None`` where the platform has no uids."""
    if not hasattr(os, "geteuid"):
        return None
    return frozenset({os.geteuid(), 0})


def unsafe_reason(info: os.stat_result, trusted: frozenset[int] | None, kind: int) -> str | None:
    """Why a file or directory with ``info`` could have been written by another user.

    Parameters
    ----------
    info
        Its ``lstat`` (or ``fstat``) result.
    trusted
        The uids allowed to own it (see :func:`trusted_uids`); ``None`` skips the owner test.
    kind
        ``stat.S_IFDIR`` or ``stat.S_IFREG``: what it must be (a symbolic link never is).

    Returns
    -------
    str or None
        What is wrong with it, or ``None`` when it is safe.
    """
    if stat.S_IFMT(info.st_mode) != kind:
        want = "a directory" if kind == stat.S_IFDIR else "a regular file"
        return f"is not {want} (mode {stat.filemode(info.st_mode)})"
    if trusted is not None and info.st_uid not in trusted:
        return (
            f"belongs to uid {info.st_uid}, not to you (uid {os.geteuid()}) or root"
            if hasattr(os, "geteuid")
            else f"belongs to uid {info.st_uid}"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.filemode(info.st_mode)})"
    return None


def _unsafe_ancestor(info: os.stat_result, trusted: frozenset[int] | None) -> str | None:
    """Why a directory (or symbolic link) above a trusted one lets another user replace
    what lies below it; ``None`` when it does not."""
    if trusted is not None and info.st_uid not in trusted:
        return unsafe_reason(info, trusted, stat.S_IFMT(info.st_mode))
    if stat.S_ISLNK(info.st_mode):
        return None  # its own mode means nothing; its folder and its target are checked
    if not stat.S_ISDIR(info.st_mode):
        return unsafe_reason(info, trusted, stat.S_IFDIR)
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not info.st_mode & stat.S_ISVTX:
        return unsafe_reason(info, trusted, stat.S_IFDIR)
    return None


def unsafe_ancestry(path: Path, trusted: frozenset[int] | None = None) -> str | None:
    """Why another user could replace the directory ``path`` through a directory above
    it (rename it away and put one of theirs in its place), or ``None`` when none can.

    Every directory above ``path``, both on the path as written and on the path with its
    symbolic links resolved, and every symbolic link on the way (``path`` itself
    included), must belong to you or root; a directory above may be writable by group or
    others only with the sticky bit set. ``path`` itself is not judged (its callers hold
    it to the stricter :func:`unsafe_reason`). Missing directories are skipped: whoever
    creates them must be able to write to the one above, which is checked.

    Parameters
    ----------
    path
        The directory.
    trusted
        The uids allowed to own what is above it; by default :func:`trusted_uids`.

    Returns
    -------
    str or None
        The first unsafe directory and what is wrong with it, or ``None``.
    """
    trusted = trusted_uids() if trusted is None else trusted
    written = Path(os.path.abspath(path))
    resolved = Path(os.path.realpath(written))
    chain = [*reversed(written.parents), written, *reversed(resolved.parents)]
    for folder in dict.fromkeys(chain):
        try:
            info = os.lstat(folder)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"{folder} (above {path}) cannot be checked: {exc.strerror or exc}"
        if folder in (written, resolved) and not stat.S_ISLNK(info.st_mode):
            continue  # the directory itself: judged by the caller
        problem = _unsafe_ancestor(info, trusted)
        if problem is not None:
            return f"{folder} (above {path}) {problem}"
    return None


def open_trusted(
    path: Path, trusted: frozenset[int] | None
) -> tuple[BinaryIO | None, os.stat_result | None, str | None]:
    """Open a file for reading after checking, on the open descriptor, that it is a regular
    file no other user could have written (so the file read is the file checked).

    Parameters
    ----------
    path
        The file.
    trusted
        The uids allowed to own it (see :func:`trusted_uids`).

    Returns
    -------
    tuple
        ``(open binary file, its fstat, None)``, or ``(None, None, problem)`` when it is a
        symbolic link or unsafe.

    Raises
    ------
    OSError
        When it cannot be opened (``FileNotFoundError`` when there is none).
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, None, f"{path} is a symbolic link"
        raise
    fh = open(fd, "rb")
    info = os.fstat(fd)
    problem = unsafe_reason(info, trusted, stat.S_IFREG)
    if problem is not None:
        fh.close()
        return None, None, f"{path} {problem}"
    return fh, info, None


def read_trusted(path: Path) -> tuple[bytes | None, str | None]:
    """Read a file after checking it (:func:`open_trusted`), the directory holding it
    with :func:`unsafe_reason` and the directories above that with
    :func:`unsafe_ancestry`.

    Returns
    -------
    tuple
        ``(contents, None)``; ``(None, None)`` when there is no such file;
        ``(None, problem)`` when it, or its directory, is unsafe.
    """
    trusted = trusted_uids()
    try:
        folder = os.lstat(path.parent)
    except FileNotFoundError:
        return None, None
    problem = unsafe_reason(folder, trusted, stat.S_IFDIR)
    if problem is not None:
        return None, f"{path.parent} {problem}"
    problem = unsafe_ancestry(path.parent, trusted)
    if problem is not None:
        return None, problem
    try:
        fh, _, problem = open_trusted(path, trusted)
    except FileNotFoundError:
        return None, None
    if fh is None:
        return None, problem
    with fh:
        return fh.read(), None


def write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file beside it,
    renamed into place, so a reader never sees a part. The folder is made (only you may
    enter it) when missing.

    Raises
    ------
    OSError
        When the folder or the file cannot be written.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        remove_quietly(Path(tmp))
        raise


def files_by_age(folder: Path, suffix: str) -> list[Path]:
    """The files of ``folder`` whose names end with ``suffix``, least recently modified
    first (``[]`` when the folder cannot be read)."""
    try:
        found = [entry for entry in os.scandir(folder) if entry.name.endswith(suffix)]
    except OSError:
        return []

    def modified(entry: os.DirEntry[str]) -> int:
        try:
            return entry.stat().st_mtime_ns
        except OSError:  # removed meanwhile: first to go
            return 0

    return [Path(entry.path) for entry in sorted(found, key=modified)]


def remove_quietly(path: Path) -> bool:
    """Remove the file at ``path``; whether it was removed (no error when it cannot be)."""
    try:
        path.unlink()
    except OSError:
        return False
    return True


def keep_newest(folder: Path, suffix: str, count: int) -> None:
    """Remove the least recently modified files of :func:`files_by_age` beyond ``count``."""
    found = files_by_age(folder, suffix)
    for path in found[: max(0, len(found) - count)]:
        remove_quietly(path)
