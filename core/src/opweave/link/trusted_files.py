"""Reading what opweave itself wrote under ``config.compiledir``, and nothing else.

Compiled modules and cached graphs are code: loading a file another user could have
written would run their code. A file is read only when it is a regular file (never
through a symbolic link, never a FIFO) owned by you or by root that neither group nor
others can write to. The C backend's module cache and the cache of rewritten graphs
(:mod:`opweave.compile.rewrite_cache`) both apply this rule.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["OPEN_FLAGS", "read_trusted", "trusted_uids", "unsafe_reason"]

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


def read_trusted(path: Path) -> tuple[bytes | None, str | None]:
    """Read a file after checking it, and the directory holding it, with :func:`unsafe_reason`.

    The file's test runs on the open descriptor, so the file read is the file checked.

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
    try:
        fd = os.open(path, OPEN_FLAGS)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None, f"{path} is a symbolic link"
        raise
    with open(fd, "rb") as fh:
        problem = unsafe_reason(os.fstat(fd), trusted, stat.S_IFREG)
        if problem is not None:
            return None, f"{path} {problem}"
        return fh.read(), None
