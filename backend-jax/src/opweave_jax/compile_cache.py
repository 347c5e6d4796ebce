"""JAX's persistent compilation cache under opweave's compile directory.

With ``config.jax__compilation_cache`` on (the default), linking the first ``jax``-linker
function of a process points JAX's persistent compilation cache
(``jax_compilation_cache_dir``) at ``<config.compiledir>/jax``, so that another process
compiling the same graph loads XLA's executable from there instead of compiling it again.
JAX's thresholds are lowered so that small graphs are kept too: entries of any compile
time (``jax_persistent_cache_min_compile_time_secs`` from its default 1 s to 0) and of any
size (``jax_persistent_cache_min_entry_size_bytes`` from its default 0, which lets JAX
choose, to -1: no limit).

A cache directory configured for JAX already (by ``JAX_COMPILATION_CACHE_DIR``,
``jax.config.update`` or ``jax.experimental.compilation_cache``) is left as it is, and so
are JAX's thresholds then: that cache and its settings are the user's.

Executables are code: as for the other caches under ``compiledir``
(:mod:`opweave.plugins.trusted_files`), the folder is made so that only you can enter it,
and the cache is not used, with a warning, when another user could write there.
"""

from __future__ import annotations

import os
import stat
import threading
import warnings
from pathlib import Path
from typing import Any

from opweave.plugins.trusted_files import trusted_uids, unsafe_ancestry, unsafe_reason

__all__ = ["cache_folder", "configure_compilation_cache", "unsafe_folder"]

#: JAX's default of ``jax_persistent_cache_min_compile_time_secs``.
_JAX_MIN_COMPILE_TIME = 1.0

_lock = threading.Lock()

#: The folder this process gave JAX (``None``: none yet, or the user's own cache).
_configured: list[str] = []


def _flag(name: str) -> Any:
    """The value of JAX's configuration option ``name``."""
    import jax

    return getattr(jax.config, name)


def cache_folder(compiledir: str | os.PathLike[str] | None = None) -> Path:
    """``<compiledir>/jax``: where JAX keeps the executables of ``jax``-linker functions.

    Parameters
    ----------
    compiledir
        The compile directory (default: ``config.compiledir``).
    """
    if compiledir is None:
        from opweave.configdefaults import config

        compiledir = config.compiledir
    return Path(compiledir) / "jax"


def unsafe_folder(folder: Path) -> str | None:
    """Why another user could write into ``folder`` (made if missing, only you may enter
    it) or replace it, or ``None`` when no one can."""
    trusted = trusted_uids()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(folder)
    except OSError as exc:
        return f"{folder} cannot be made: {exc.strerror or exc}"
    problem = unsafe_reason(info, trusted, stat.S_IFDIR)
    if problem is not None:
        return f"{folder} {problem}"
    return unsafe_ancestry(folder, trusted)


def configure_compilation_cache() -> str | None:
    """Point JAX's persistent compilation cache at :func:`cache_folder`, once per process,
    unless ``config.jax__compilation_cache`` is off or JAX has a cache directory already.

    Returns
    -------
    str or None
        The cache directory JAX uses (``None``: none), this process's or the user's.

    Warns
    -----
    RuntimeWarning
        When the folder could be written by another user (the cache is not used).
    """
    import jax

    from opweave.configdefaults import config

    if not config.jax__compilation_cache:
        return None
    with _lock:
        current = _flag("jax_compilation_cache_dir")
        if current or _configured:  # the user's own cache, or the one set before
            return str(current) if current else None
        folder = cache_folder()
        problem = unsafe_folder(folder)
        _configured.append(str(folder))
        if problem is not None:
            warnings.warn(
                f"jax linker: JAX's compilation cache is not kept under compiledir: "
                f"{problem}; set config.jax__compilation_cache=False to silence this",
                RuntimeWarning,
                stacklevel=3,
            )
            return None
        if _flag("jax_persistent_cache_min_compile_time_secs") == _JAX_MIN_COMPILE_TIME:
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        if _flag("jax_persistent_cache_min_entry_size_bytes") == 0:
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
        jax.config.update("jax_compilation_cache_dir", str(folder))
        return str(folder)
