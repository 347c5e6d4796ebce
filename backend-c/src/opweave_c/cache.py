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
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opweave_c.errors import CacheDirError

log = logging.getLogger("opweave_c.cache")

#: Builds slower than this are logged at INFO level while they happen.
SLOW_BUILD_SECONDS = 2.0
#: Abandoned ``tmp/`` builds older than this are removed when a cache is opened.
STALE_TMP_SECONDS = 3600.0


class CorruptEntryWarning(UserWarning):
    """A cache entry failed its integrity check and was rebuilt."""


@dataclass(frozen=True)
class Entry:
    """One cached module: its key, directory and metadata."""

    key: str
    path: Path
    meta: dict[str, Any]

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


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (mode 0700) or check an existing one is safe to load code from.

    Raises
    ------
    CacheDirError
        If the directory belongs to another user or others can write to it.
    """
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise CacheDirError(
            f"compiledir {path} belongs to uid {info.st_uid}, not to you (uid {os.getuid()}): "
            "opweave will not load compiled code from it; set config.compiledir to a directory "
            "of your own"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise CacheDirError(
            f"compiledir {path} is writable by group or others (mode {stat.filemode(info.st_mode)}"
            "): anyone could plant code there. Run `chmod go-w` on it or choose another "
            "config.compiledir"
        )
    return path


class ModuleCache:
    """The compiled modules under one compile directory.

    Parameters
    ----------
    root
        The compile directory; created private to the user when missing.
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = ensure_private_dir(Path(root).expanduser())
        for sub in ("c", "locks", "tmp"):
            (self.root / sub).mkdir(mode=0o700, exist_ok=True)
        self._remove_stale_builds()

    # ------------------------------------------------------------------ lookup

    def entry_dir(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.root / "c" / key[:2] / key

    def lookup(self, key: str) -> Entry | None:
        """The valid entry for ``key``; ``None`` if missing. A corrupt entry is removed."""
        path = self.entry_dir(key)
        if not path.exists():
            return None
        problem = self._check(path)
        if problem is None:
            return Entry(key, path, json.loads((path / "meta.json").read_text()))
        warnings.warn(
            f"opweave: corrupt C cache entry {path} ({problem}); rebuilding it",
            CorruptEntryWarning,
            stacklevel=3,
        )
        self._discard(path)
        return None

    def _check(self, path: Path) -> str | None:
        try:
            meta = json.loads((path / "meta.json").read_text())
            lib = path / meta["library"]
            if sha256_file(lib) != meta["sha256"]:
                return "the shared object does not match its recorded sha256"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    # ------------------------------------------------------------------ build

    def get_or_build(self, key: str, build: Callable[[Path], dict[str, Any]], what: str) -> Entry:
        """Return the entry for ``key``, building it with ``build(tmpdir)`` if needed.

        ``build`` writes the source and shared object into the directory it is given
        and returns the metadata (at least ``library``, the shared object's file name).
        Concurrent callers with the same key produce one build: the others wait on the
        entry's lock and then load what the first wrote.
        """
        found = self.lookup(key)
        if found is not None:
            return found
        from filelock import FileLock  # only builds need it (its import is slow)

        with FileLock(str(self.root / "locks" / f"{key}.lock")):
            found = self.lookup(key)
            if found is not None:
                return found
            tmp = Path(tempfile.mkdtemp(prefix=f"{key[:16]}-", dir=self.root / "tmp"))
            try:
                meta = self._timed_build(build, tmp, what)
                meta["sha256"] = sha256_file(tmp / meta["library"])
                meta["key"] = key
                meta["created"] = time.time()
                (tmp / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
                final = self.entry_dir(key)
                final.parent.mkdir(mode=0o700, exist_ok=True)
                os.replace(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return Entry(key, final, meta)

    def build_private(self, build: Callable[[Path], dict[str, Any]], what: str) -> Entry:
        """Build unversioned code in a fresh directory no other process will look at."""
        tmp = Path(tempfile.mkdtemp(prefix="unversioned-", dir=self.root / "tmp"))
        meta = self._timed_build(build, tmp, what)
        return Entry("", tmp, meta)

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
        """Remove every entry and abandoned build; return how many entries went."""
        entries = self.entries()
        for entry in entries:
            self._discard(entry.path)
        for path in (self.root / "tmp").iterdir():
            shutil.rmtree(path, ignore_errors=True)
        return len(entries)

    def _discard(self, path: Path) -> None:
        # Rename first so that a concurrent reader never sees a half-deleted entry.
        doomed = Path(tempfile.mkdtemp(prefix="discard-", dir=self.root / "tmp"))
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


def cache_for_config() -> ModuleCache:
    """The cache under ``config.compiledir``."""
    from opweave import config

    return ModuleCache(config.compiledir)
