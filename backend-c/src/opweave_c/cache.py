"""The on-disk module cache under ``config.compiledir``.

Layout::

    <compiledir>/
        c/<key[:2]>/<key>/      one entry: mod.c (kept source), <mod>.so, meta.json
        locks/<key>.lock        filelock taken while an entry is being built
        tmp/                    builds in progress, renamed into place when complete

An entry is written under ``tmp/`` and renamed into place, so readers never see a half
entry; ``meta.json`` records the shared object's sha256, so a truncated or corrupt entry
is detected, reported and rebuilt. Code with an unversioned part is built in a private
temporary directory and never reused by another process.

Nothing another user could have written is loaded: the compile directory, ``c/``,
``locks/``, ``tmp/`` and every ``c/<xx>/`` shard must be directories owned by you (or by
root) that neither group nor others can write to, or the cache is refused
(:class:`~opweave_c.errors.CacheDirError`); an entry directory, shared object or
``meta.json`` that fails the same test is reported (:class:`UnsafeEntryWarning`),
discarded and rebuilt, never loaded. A compile directory that cannot be written (a
read-only shared cache) is still read; what must be built is built in a private
temporary directory (:class:`ReadOnlyCacheWarning`, once per process and directory).
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import struct
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opweave.link.trusted_files import open_trusted, unsafe_ancestry, unsafe_reason
from opweave.link.trusted_files import trusted_uids as _trusted_uids
from opweave.plugins import get_plugin_manager
from opweave_c.errors import CacheDirError

log = logging.getLogger("opweave_c.cache")

#: Builds slower than this are logged at INFO level while they happen.
SLOW_BUILD_SECONDS = 2.0
#: Abandoned ``tmp/`` builds older than this are removed when a cache is opened.
STALE_TMP_SECONDS = 3600.0
#: ``errno`` values that say a directory cannot be written (as opposed to a real failure).
READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


class CorruptEntryWarning(UserWarning):
    """A cache entry failed its integrity check (or could not be loaded) and was rebuilt."""


class UnsafeEntryWarning(CorruptEntryWarning):
    """A cache entry another user could have written was discarded, never loaded, and rebuilt."""


class ReadOnlyCacheWarning(UserWarning):
    """The compile directory cannot be written: modules are built in a private directory."""


@dataclass(frozen=True)
class Entry:
    """One cached module.

    Attributes
    ----------
    key
        The cache key (empty for private builds).
    path
        The entry's directory.
    meta
        The contents of its ``meta.json``.
    ino
        The inode of ``path`` when it was checked (tells a replaced entry from this one).
    fresh
        True when this process has just built it.
    private
        True when it lives in a private directory its user removes after loading it.
    """

    key: str
    path: Path
    meta: dict[str, Any]
    ino: int = 0
    fresh: bool = False
    private: bool = False

    @property
    def library(self) -> Path:
        """The shared object."""
        return self.path / self.meta["library"]


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def elf_problem(head: bytes, size: int) -> str | None:
    """What shows a 64-bit ELF file to be cut short, from its first bytes and its size.

    A truncated shared object whose sha256 was recorded after the damage passes the hash
    check, and the dynamic loader maps it anyway: the process then dies of SIGBUS on the
    first page past the end. Its header tables and loadable segments must lie within it.

    Parameters
    ----------
    head
        The file's first bytes (its first megabyte).
    size
        Its size in bytes.

    Returns
    -------
    str or None
        The problem, or ``None`` (also for a file that is not 64-bit ELF: loading it then
        fails cleanly, with ``ImportError``).
    """
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2:
        return None
    order = "<" if head[5] == 1 else ">"
    phoff, shoff = struct.unpack_from(f"{order}QQ", head, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from(f"{order}HHHH", head, 54)
    ends = [phoff + phentsize * phnum, shoff + shentsize * shnum]
    for i in range(phnum):
        at = phoff + i * phentsize
        if at + 40 > len(head):
            break
        p_type, _flags, p_offset = struct.unpack_from(f"{order}IIQ", head, at)
        if p_type == 1:  # PT_LOAD
            ends.append(p_offset + struct.unpack_from(f"{order}Q", head, at + 32)[0])
    if max(ends) > size:
        return f"is cut short (its ELF headers reach byte {max(ends)} of {size})"
    return None


def _refuse(what: str, path: Path, problem: str) -> CacheDirError:
    """The error refusing the directory ``path`` for ``problem``."""
    if "(above " in problem:
        hint = "Choose a config.compiledir in directories only you (or root) can change"
    elif "writable by group" in problem:
        hint = "Run `chmod go-w` on it or choose another config.compiledir"
    else:
        hint = "Remove it or choose another config.compiledir"
    return CacheDirError(
        f"{what} {path} {problem}: another user could plant code there, so opweave will not load "
        f"compiled code from it. {hint}"
    )


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) or check an existing one is safe to load code from.

    Parameters
    ----------
    path
        The directory.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    CacheDirError
        If the directory belongs to another user (root excepted), group or others can
        write to it, or another user could replace it through a directory above it
        (:func:`opweave.link.trusted_files.unsafe_ancestry`).
    OSError
        If it is missing and cannot be created.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    trusted = _trusted_uids()
    problem = unsafe_reason(path.stat(), trusted, stat.S_IFDIR)
    if problem is not None:
        raise _refuse("compiledir", path, problem)
    problem = unsafe_ancestry(path, trusted)
    if problem is not None:
        problem = f"is below a directory another user can change: {problem}"
        raise _refuse("compiledir", path, problem)
    return path


class ModuleCache:
    """The compiled modules under one compile directory.

    Parameters
    ----------
    root
        The compile directory; created private to the user when missing.

    Raises
    ------
    CacheDirError
        If the directory, or one of ``c/``, ``locks/`` and ``tmp/``, is not safe to load
        code from.

    Attributes
    ----------
    root
        The compile directory.
    read_only
        Why nothing can be written to it (an ``OSError``), or ``None`` when it is writable
        as far as this process has found.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser()
        self.read_only: OSError | None = None
        self._trusted = _trusted_uids()
        self._reported: set[tuple[Path, int]] = set()
        try:
            ensure_private_dir(self.root)
        except CacheDirError:
            raise
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS or self.root.is_dir():
                raise
            self.read_only = exc  # missing and impossible to create: nothing to read either
            return
        for sub in ("c", "locks", "tmp"):
            path = self.root / sub
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                try:
                    path.mkdir(mode=0o700)
                except FileExistsError:  # another process or thread made it meanwhile
                    pass
                except OSError as exc:
                    if exc.errno not in READ_ONLY_ERRNOS:
                        raise
                    self.read_only = exc
                    continue
                try:
                    info = os.lstat(path)
                except OSError as exc:
                    if exc.errno not in READ_ONLY_ERRNOS:
                        raise
                    self.read_only = exc
                    continue
            problem = unsafe_reason(info, self._trusted, stat.S_IFDIR)
            if problem is not None:
                raise _refuse("C cache directory", path, problem)
        if self.read_only is None:
            self._remove_stale_builds()

    # ------------------------------------------------------------------ lookup

    def entry_dir(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.root / "c" / key[:2] / key

    def lookup(self, key: str) -> Entry | None:
        """The valid entry for ``key``; ``None`` if missing.

        A corrupt entry, or one whose directory or files another user could have written,
        is reported (:class:`CorruptEntryWarning`, :class:`UnsafeEntryWarning`) and removed.

        Raises
        ------
        CacheDirError
            If the entry's shard directory (``c/<key[:2]>``) is not safe to load code from.
        """
        path = self.entry_dir(key)
        try:
            shard = os.lstat(path.parent)
        except OSError:
            return None  # missing, or unreadable for us: a miss either way
        problem = unsafe_reason(shard, self._trusted, stat.S_IFDIR)
        if problem is not None:
            raise _refuse("C cache directory", path.parent, problem)
        try:
            info = os.lstat(path)
        except OSError:
            return None
        meta, problem, unsafe = self._check(path, info)
        if problem is None:
            return Entry(key, path, meta, ino=info.st_ino)
        if (path, info.st_ino) not in self._reported:
            self._reported.add((path, info.st_ino))
            if unsafe:
                message = (
                    f"opweave: refusing C cache entry {problem}: another user could have "
                    "written it; discarding it (never loaded) and rebuilding it"
                )
            else:
                message = f"opweave: corrupt C cache entry {path} ({problem}); rebuilding it"
            warnings.warn(
                message, UnsafeEntryWarning if unsafe else CorruptEntryWarning, stacklevel=3
            )
        self._discard(path)
        return None

    def _check(self, path: Path, info: os.stat_result) -> tuple[dict, str | None, bool]:
        """``(meta, problem, unsafe)`` for the entry at ``path`` (``lstat`` ``info``)."""
        problem = unsafe_reason(info, self._trusted, stat.S_IFDIR)
        if problem is not None:
            return {}, f"{path} {problem}", True
        meta_path = path / "meta.json"
        try:
            data, problem = self._read_trusted(meta_path, None)
            if problem is not None:
                return {}, problem, True
            meta = json.loads(data)
            library = meta["library"]
            if not isinstance(library, str) or library in ("", ".", "..") or "/" in library:
                return meta, f"meta.json names no file of the entry ({library!r})", False
            found, problem = self._read_trusted(path / library, hashlib.sha256())
            if problem is not None:
                return meta, problem, True
            digest, head, size = found
            if digest != meta["sha256"]:
                return meta, "the shared object does not match its recorded sha256", False
            problem = elf_problem(head, size)
            if problem is not None:
                return meta, f"the shared object {problem}", False
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return {}, f"{type(exc).__name__}: {exc}", False
        return meta, None, False

    def _read_trusted(self, path: Path, digest: Any) -> tuple[Any, str | None]:
        """Read a file of an entry after checking (on the open descriptor) that it is a
        regular file no other user could have written.

        Returns ``(contents, None)``, or with a ``digest`` to update, ``((hex digest, first
        chunk, size), None)``; ``(None, problem)`` for an unsafe file.
        """
        fh, info, problem = open_trusted(path, self._trusted)
        if fh is None or info is None:
            return None, problem
        with fh:
            if digest is None:
                return fh.read(), None
            head = fh.read(1 << 20)
            digest.update(head)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
            return (digest.hexdigest(), head, info.st_size), None

    # ------------------------------------------------------------------ build

    def get_or_build(
        self,
        key: str,
        build: Callable[[Path], dict[str, Any]],
        what: str,
        *,
        failed: Entry | None = None,
    ) -> Entry:
        """Return the entry for ``key``, building it with ``build(tmpdir)`` if needed.

        ``build`` writes the source and shared object into the directory it is given
        and returns the metadata (at least ``library``, the shared object's file name).
        Concurrent callers with the same key produce one build: the others wait on the
        entry's lock and then load what the first wrote. When the compile directory
        cannot be written, the module is built in a private temporary directory
        (``Entry.private``), with one :class:`ReadOnlyCacheWarning`.

        Parameters
        ----------
        key
            The cache key.
        build
            Writes the module into the directory it is given; returns its metadata.
        what
            What is compiled (for the log and error messages).
        failed
            An entry for ``key`` that passed its checks but could not be loaded: it is
            discarded (if still in place) and never returned.

        Returns
        -------
        Entry
            The cached, freshly built or private entry.
        """
        if failed is not None and not failed.private:
            self._discard_if_same(failed)
        found = self._lookup_other(key, failed)
        if found is not None:
            return found
        if self.read_only is not None:
            return self._build_elsewhere(build, what, self.read_only)
        from filelock import FileLock  # only builds need it (its import is slow)

        lock = FileLock(str(self.root / "locks" / f"{key}.lock"))
        try:
            lock.acquire()
        except OSError as exc:
            if exc.errno not in READ_ONLY_ERRNOS:
                raise
            self.read_only = exc
            return self._build_elsewhere(build, what, exc)
        try:
            found = self._lookup_other(key, failed)
            if found is not None:
                return found
            return self._build_entry(key, build, what)
        finally:
            lock.release()

    def _lookup_other(self, key: str, failed: Entry | None) -> Entry | None:
        found = self.lookup(key)
        if found is not None and failed is not None and _same_entry(found, failed):
            return None
        return found

    def _build_entry(self, key: str, build: Callable[[Path], dict[str, Any]], what: str) -> Entry:
        tmp = Path(tempfile.mkdtemp(prefix=f"{key[:16]}-", dir=self.root / "tmp"))
        keep = False
        try:
            meta = self._timed_build(build, tmp, what)
            meta["sha256"] = sha256_file(tmp / meta["library"])
            meta["key"] = key
            meta["created"] = time.time()
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            final = self.entry_dir(key)
            final.parent.mkdir(mode=0o700, exist_ok=True)
            problem = unsafe_reason(os.lstat(final.parent), self._trusted, stat.S_IFDIR)
            if problem is not None:
                raise _refuse("C cache directory", final.parent, problem)
            try:
                os.replace(tmp, final)
            except OSError as exc:
                # Something we could not remove sits in the way (another user's entry in a
                # directory we cannot write, say): use the module without caching it.
                keep = True
                self._warn_read_only(exc, f"cannot store the module at {final}")
                return Entry(key, tmp, meta, fresh=True, private=True)
            return Entry(key, final, meta, ino=os.lstat(final).st_ino, fresh=True)
        finally:
            if not keep:
                shutil.rmtree(tmp, ignore_errors=True)

    def build_private(self, build: Callable[[Path], dict[str, Any]], what: str) -> Entry:
        """Build unversioned code in a fresh directory no other process will look at.

        The caller removes ``Entry.path`` once it has loaded the module.
        """
        tmp = None
        if self.read_only is None:
            try:
                tmp = Path(tempfile.mkdtemp(prefix="unversioned-", dir=self.root / "tmp"))
            except OSError as exc:
                if exc.errno not in READ_ONLY_ERRNOS:
                    raise
                self.read_only = exc
        if tmp is None:
            tmp = Path(tempfile.mkdtemp(prefix="opweave-c-unversioned-"))
        meta = self._timed_build(build, tmp, what)
        return Entry("", tmp, meta, fresh=True, private=True)

    def _build_elsewhere(
        self, build: Callable[[Path], dict[str, Any]], what: str, reason: OSError
    ) -> Entry:
        """Build in a private temporary directory outside the (read-only) cache."""
        self._warn_read_only(reason, "it is read-only")
        tmp = Path(tempfile.mkdtemp(prefix="opweave-c-"))
        try:
            meta = self._timed_build(build, tmp, what)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Entry("", tmp, meta, fresh=True, private=True)

    def _warn_read_only(self, reason: OSError, what: str) -> None:
        """Say once per directory (and plugin manager) that the cache cannot be written."""
        get_plugin_manager().warn_once(
            f"opweave: the C cache in {self.root} cannot be written ({what}: "
            f"{reason.strerror or reason}); modules it lacks are built in a private temporary "
            "directory and not cached. Set config.compiledir to a writable directory to "
            "cache them",
            ReadOnlyCacheWarning,
            stacklevel=4,
            key=("read-only C cache", self.root),
        )

    @staticmethod
    def _timed_build(build: Callable[[Path], dict[str, Any]], tmp: Path, what: str) -> dict:
        start = time.perf_counter()
        log.debug("compiling %s in %s", what, tmp)
        meta = build(tmp)
        elapsed = time.perf_counter() - start
        level = logging.INFO if elapsed > SLOW_BUILD_SECONDS else logging.DEBUG
        log.log(level, "compiled %s in %.2f s", what, elapsed)
        return meta

    # ------------------------------------------------------------------ management

    def entries(self) -> list[Entry]:
        """Every entry on disk (corrupt ones included, with ``meta`` empty)."""
        found = []
        for path in sorted((self.root / "c").glob("*/*")):
            try:
                meta = json.loads((path / "meta.json").read_text())
            except (OSError, ValueError):
                meta = {}
            found.append(Entry(path.name, path, meta))
        return found

    def clear(self) -> int:
        """Remove every entry, abandoned build and the runtime compiled for the compile
        directory (its header and object, :mod:`opweave_c.prelude`); return how many
        entries went."""
        entries = self.entries()
        for entry in entries:
            self._discard(entry.path)
        if (self.root / "prelude").is_dir():
            self._discard(self.root / "prelude")
        for path in (self.root / "tmp").iterdir():
            shutil.rmtree(path, ignore_errors=True)
        return len(entries)

    def _discard_if_same(self, entry: Entry) -> None:
        """Discard ``entry`` unless another process has already replaced it."""
        try:
            if os.lstat(entry.path).st_ino != entry.ino:
                return
        except OSError:
            return
        self._discard(entry.path)

    def _discard(self, path: Path) -> None:
        # Rename first so that a concurrent reader never sees a half-deleted entry.
        try:
            doomed = Path(tempfile.mkdtemp(prefix="discard-", dir=self.root / "tmp"))
        except OSError:
            return  # a read-only cache: the entry stays, unused
        try:
            os.replace(path, doomed / "entry")
        except OSError:
            pass
        shutil.rmtree(doomed, ignore_errors=True)

    def _remove_stale_builds(self) -> None:
        now = time.time()
        for path in (self.root / "tmp").iterdir():
            try:
                if now - path.stat().st_mtime > STALE_TMP_SECONDS:
                    shutil.rmtree(path, ignore_errors=True)
            except OSError:
                continue


def _same_entry(a: Entry, b: Entry) -> bool:
    """Are ``a`` and ``b`` the same entry on disk (not a rebuild of it)?"""
    return a.path == b.path and a.ino == b.ino and a.meta.get("sha256") == b.meta.get("sha256")


def cache_for_config() -> ModuleCache:
    """The cache under ``config.compiledir``."""
    from opweave import config

    return ModuleCache(config.compiledir)
