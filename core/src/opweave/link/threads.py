"""How many threads opweave's BLAS calls, OpenMP loops and compiler runs use.

One rule, in one place (see ``docs/threads.md``):

* :func:`usable_cpus` is the number of CPUs this process may really use: the CPUs of its
  affinity mask (:func:`os.process_cpu_count` where Python has it, else
  :func:`os.sched_getaffinity`), fewer when a cgroup CPU quota (v2 ``cpu.max``, v1
  ``cpu.cfs_quota_us``/``cpu.cfs_period_us``, the smallest along the cgroup's path) allows
  less (the quota over the period, rounded up). Every count of "as many as there are
  cores" in opweave (the C backend's compile jobs, its OpenMP loops) is this number.
* ``config.blas__threads`` (0 or ``"auto"``: the rule's choice) sets the threads of the
  BLAS libraries the process has loaded (NumPy's and SciPy's OpenBLAS, MKL, BLIS), through
  threadpoolctl. An explicit number is set as it is. ``auto`` is :func:`usable_cpus`, but
  never more than the library had before opweave changed it: a limit the user set
  (``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OMP_NUM_THREADS``, a threadpoolctl
  limit in force) is kept.
* With ``config.blas__follow_load`` (off by default) and ``auto``, the threads of OpenBLAS
  libraries then follow the load between products: fewer when other processes want the
  CPUs, up to that number again when they are gone (:mod:`opweave.link.blas_load`).
* ``config.openmp__threads`` (0 or ``"auto"``) is the number of threads of the C backend's
  OpenMP loops; ``auto`` is the calling thread's OpenMP limit (``omp_get_max_threads()``:
  ``OMP_NUM_THREADS``, or what threadpoolctl set in that thread) and at most
  :func:`usable_cpus` (:func:`openmp_threads`).

BLAS limits are process-wide in those libraries, so they are applied process-wide, by
:func:`apply_thread_flags`, which every function compile runs before linking: a call then
costs nothing more. It does work (about a millisecond) only when the flag changed since the
last time, or when modules were imported since (a BLAS library may have been loaded); a
linked function runs with the limits of the latest link.
"""

from __future__ import annotations

import ctypes
import functools
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opweave.configdefaults import config
from opweave.link.blas_load import MAX_LIBRARIES, BlasLoad, blas_load
from opweave.plugins.forksafe import ForkSafeLock

__all__ = [
    "BlasThreads",
    "apply_thread_flags",
    "blas_threads",
    "cgroup_cpu_limit",
    "openmp_threads",
    "usable_cpus",
]

#: Where the cgroup hierarchy is mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")


def _affinity_cpus() -> int:
    """CPUs of this process's affinity mask (all CPUs where there is no such mask)."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13: also honours -X cpu_count
    if count is not None:
        return max(1, count() or 1)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _cgroup_paths(proc_cgroup: Path) -> tuple[str | None, str | None]:
    """This process's cgroup v2 path and v1 ``cpu`` controller path, from ``/proc``."""
    v2 = v1 = None
    try:
        text = proc_cgroup.read_text()
    except OSError:
        return None, None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            v2 = path
        elif "cpu" in controllers.split(","):
            v1 = path
    return v2, v1


def _read_quota_v2(folder: Path) -> float | None:
    try:
        quota, period = (folder / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return int(quota) / int(period) if int(period) > 0 else None


def _read_quota_v1(folder: Path) -> float | None:
    try:
        quota = int((folder / "cpu.cfs_quota_us").read_text())
        period = int((folder / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def _along(folder: Path, root: Path, read: Any) -> float | None:
    """The smallest quota from ``folder`` up to ``root`` (nested limits all apply)."""
    found: list[float] = []
    while True:
        quota = read(folder)
        if quota is not None:
            found.append(quota)
        if folder == root or folder.parent == folder:
            break
        folder = folder.parent
    return min(found) if found else None


def cgroup_cpu_limit(
    root: str | os.PathLike[str] = CGROUP_ROOT,
    proc_cgroup: str | os.PathLike[str] = "/proc/self/cgroup",
) -> int | None:
    """The CPUs this process's cgroup CPU quota allows, or ``None`` for no quota.

    Parameters
    ----------
    root
        Where the cgroup hierarchy is mounted.
    proc_cgroup
        The file naming this process's cgroups.

    Returns
    -------
    int or None
        The quota over the period, rounded up (at least 1); the smallest one from the
        process's cgroup up to the root, cgroup v2 (``cpu.max``) first, else v1
        (``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``).
    """
    base = Path(root)
    v2, v1 = _cgroup_paths(Path(proc_cgroup))
    quota = None
    if v2 is not None and (base / "cgroup.controllers").exists():
        quota = _along(base / v2.lstrip("/"), base, _read_quota_v2)
    elif v1 is not None:
        for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
            top = base / mount
            if top.is_dir():
                quota = _along(top / v1.lstrip("/"), top, _read_quota_v1)
                if quota is None and v1 != "/":  # a cgroup namespace: the mount is ours
                    quota = _read_quota_v1(top)
                break
    return None if quota is None else max(1, math.ceil(quota))


def usable_cpus() -> int:
    """How many CPUs this process may really use: its affinity mask, bounded by its
    cgroup CPU quota (:func:`cgroup_cpu_limit`). At least 1."""
    cpus = _affinity_cpus()
    quota = cgroup_cpu_limit()
    return cpus if quota is None else max(1, min(cpus, quota))


def openmp_threads(flag: int) -> int:
    """The most threads an OpenMP loop may use: ``flag`` (``config.openmp__threads``) when
    positive, else (``auto``) :func:`usable_cpus`, which the C loops also bound by the
    calling thread's ``omp_get_max_threads()``."""
    return flag if flag > 0 else usable_cpus()


def blas_threads(flag: int, before: int, cpus: int | None = None) -> int:
    """The threads a BLAS library gets for ``config.blas__threads == flag``: ``flag`` when
    positive; for ``auto`` (0), ``cpus`` (default :func:`usable_cpus`) but no more than
    ``before``, the library's number before opweave set it."""
    if flag > 0:
        return flag
    return max(1, min(before, usable_cpus() if cpus is None else cpus))


@dataclass
class _Library:
    """What opweave knows of one BLAS library: its threads before opweave set them, and
    what opweave set."""

    before: int
    applied: int
    #: Whether its threads follow the load (:mod:`opweave.link.blas_load`).
    followed: bool = False


@dataclass
class BlasThreads:
    """The thread limits of the process's BLAS libraries, as opweave sets them.

    There is one per process (:func:`process_blas_threads`), as there is one thread pool
    per BLAS library. :meth:`apply` sets the limits for a value of ``blas__threads``;
    a library whose threads someone else changed since opweave set them is taken as it
    is now (its new number is the one ``auto`` keeps to).
    """

    libraries: dict[str, _Library] = field(default_factory=dict)
    #: The flag values and the number of imported modules at the last :meth:`apply`.
    last: tuple[int, bool, int] | None = None
    #: Released in a forked child (whose other threads are gone).
    lock: ForkSafeLock = field(default_factory=ForkSafeLock)

    def controllers(self) -> list[Any]:
        """threadpoolctl's controllers of the BLAS libraries loaded now."""
        from threadpoolctl import ThreadpoolController

        return list(ThreadpoolController().select(user_api="blas").lib_controllers)

    def apply(self, flag: int, follow_load: bool = False) -> dict[str, int]:
        """Set every loaded BLAS library's threads for ``blas__threads == flag``; with
        ``follow_load`` (``blas__follow_load``) and ``auto``, let their threads follow
        the load (:mod:`opweave.link.blas_load`).

        Returns
        -------
        dict
            Library file -> the threads it has now.
        """
        with self.lock:
            cpus = usable_cpus()
            load = blas_load()
            now: dict[str, int] = {}
            setters: list[tuple[int, int]] = []
            for lib in self.controllers():
                current = int(lib.num_threads)
                known = self.libraries.get(lib.filepath)
                # The threads the load-following products gave it are still opweave's.
                ours = known is not None and (
                    known.applied == current or (known.followed and current == load.current)
                )
                before = known.before if ours else current  # type: ignore[union-attr]
                target = blas_threads(flag, before, cpus)
                if target != current:
                    lib.set_num_threads(target)
                # What the library has now: threadpoolctl lets only one thread set a
                # process-wide pool's limit, and ignores the others.
                applied = int(lib.num_threads)
                setter = _openblas_setter(lib) if flag <= 0 and follow_load else None
                if setter is not None and len(setters) < MAX_LIBRARIES:
                    setters.append(setter)
                self.libraries[lib.filepath] = _Library(before, applied, setter is not None)
                now[lib.filepath] = applied
            _follow_load(load, setters, now, cpus)
            self.last = (flag, follow_load, len(sys.modules))
            return now

    def apply_if_changed(self, flag: int, follow_load: bool = False) -> None:
        """:meth:`apply`, unless neither the flags nor the set of imported modules
        changed since the last time (a check of a few hundred nanoseconds)."""
        if self.last != (flag, follow_load, len(sys.modules)):
            self.apply(flag, follow_load)


def _openblas_setter(lib: Any) -> tuple[int, int] | None:
    """The addresses of an OpenBLAS library's ``openblas_set_num_threads`` and
    ``openblas_get_num_threads`` (``None`` for another BLAS, or where threadpoolctl
    cannot find them)."""
    if getattr(lib, "internal_api", None) != "openblas":
        return None
    try:
        functions = [lib._get_symbol(f"openblas_{verb}_num_threads") for verb in ("set", "get")]
    except (AttributeError, TypeError):
        return None
    addresses = [ctypes.cast(f, ctypes.c_void_p).value for f in functions if f is not None]
    return (addresses[0], addresses[1]) if len(addresses) == 2 and all(addresses) else None  # type: ignore[return-value]


def _follow_load(
    load: BlasLoad, setters: list[tuple[int, int]], now: dict[str, int], cpus: int
) -> None:
    """Fill the shared :class:`~opweave.link.blas_load.BlasLoad`: followed when there
    are OpenBLAS setters and the load can be read, with their threads as the limit."""
    load.enabled = 0
    if not setters or not os.access(load.path.decode(), os.R_OK):
        return
    limit = min(now.values())
    load.n_setters = len(setters)
    for k, (setter, getter) in enumerate(setters):
        load.setters[k] = setter
        load.getters[k] = getter
    load.limit = limit
    load.current = limit
    load.usable = cpus
    load.online = max(os.cpu_count() or cpus, cpus)
    load.raise_votes = 0
    load.last = 0.0
    load.enabled = 1 if limit > 1 else 0


@functools.cache
def process_blas_threads() -> BlasThreads:
    """This process's :class:`BlasThreads` (one, as the libraries' thread pools are)."""
    return BlasThreads()


def apply_thread_flags() -> None:
    """Give the process's BLAS libraries the threads ``config.blas__threads`` says (and
    let them follow the load with ``config.blas__follow_load``).

    Every compile runs it before linking; it does work only when a flag or the set of
    imported modules changed since the last call.
    """
    process_blas_threads().apply_if_changed(config.blas__threads, config.blas__follow_load)
