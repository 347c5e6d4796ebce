"""Threads inside the dask linker's tasks: no oversubscription of the CPUs.

Dask runs tasks on several threads at once (the threaded scheduler: one per CPU). A task
calling a BLAS routine or an OpenMP loop with all the CPUs' threads would then run
``workers * CPUs`` threads. So, while the dask linker's tasks run:

* a BLAS library with a process-wide thread pool (OpenBLAS on pthreads, MKL, BLIS) has
  :func:`task_threads` threads while the dask linker's ``dask.compute`` runs (with
  ``dask__compute``, or the linker's ``host_values``): :func:`blas_for_tasks` sets it
  from the calling thread, the one threadpoolctl lets set such limits, and restores it
  after. Lazy outputs computed later get it by being computed in ``blas_for_tasks()``;
* each thread that runs a kernel task gives itself, once, a limit of
  :func:`task_threads` for OpenMP and for a BLAS library built on OpenMP, whose limits
  belong to the thread that sets them (:func:`limit_task_thread`); the C backend's
  ``auto`` loops keep to it.

:func:`task_threads` is ``config.blas__threads`` (for BLAS) or ``config.openmp__threads``
(for OpenMP) when it is a number, else (``auto``) the CPUs this process may use
(:func:`opweave.link.threads.usable_cpus`) divided by Dask's worker threads, at least 1:
1 with the threaded scheduler's default pool, every CPU with the synchronous scheduler.
Limits only ever lower a library's threads.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from opweave.configdefaults import config
from opweave.link.threads import usable_cpus
from opweave.plugins.forksafe import ForkSafeLock

__all__ = [
    "blas_for_tasks",
    "dask_worker_threads",
    "limit_task_thread",
    "task_threads",
]

#: Dask's names of the scheduler that runs tasks one at a time in the calling thread.
SYNC_SCHEDULERS = frozenset({"sync", "synchronous", "single-threaded"})


def dask_worker_threads() -> int:
    """How many tasks Dask runs at once here: 1 with the synchronous scheduler, else its
    ``num_workers`` setting, else the CPUs Dask counts (its thread pool's size)."""
    import dask
    import dask.system

    scheduler = dask.config.get("scheduler", None)
    if isinstance(scheduler, str) and scheduler in SYNC_SCHEDULERS:
        return 1
    workers = dask.config.get("num_workers", None)
    return max(1, int(workers or dask.system.CPU_COUNT or 1))


def task_threads(flag: int) -> int:
    """The threads of a BLAS library or OpenMP loop in one task: ``flag`` (the library's
    flag, ``blas__threads`` or ``openmp__threads``) when positive, else the usable CPUs
    shared among Dask's worker threads (:func:`dask_worker_threads`), at least 1."""
    if flag > 0:
        return flag
    return max(1, usable_cpus() // dask_worker_threads())


@dataclass
class _TaskBlas:
    """The BLAS limits while tasks run: how many runs hold them, what to restore."""

    #: Released in a forked child (whose other threads are gone).
    lock: ForkSafeLock = field(default_factory=ForkSafeLock)
    depth: int = 0
    saved: list[tuple[Any, int]] = field(default_factory=list)
    libraries: list[Any] = field(default_factory=list)
    modules: int = -1

    def _controllers(self) -> list[Any]:
        if self.modules != len(sys.modules):  # a BLAS library may have been loaded since
            from threadpoolctl import ThreadpoolController

            self.libraries = list(ThreadpoolController().select(user_api="blas").lib_controllers)
            self.modules = len(sys.modules)
        return self.libraries

    def enter(self) -> None:
        with self.lock:
            self.depth += 1
            if self.depth > 1:
                return
            threads = task_threads(config.blas__threads)
            for lib in self._controllers():
                current = int(lib.num_threads)
                if threads < current:
                    lib.set_num_threads(threads)
                    self.saved.append((lib, current))

    def leave(self) -> None:
        with self.lock:
            self.depth -= 1
            if self.depth > 0:
                return
            for lib, threads in self.saved:
                lib.set_num_threads(threads)
            self.saved.clear()


@functools.cache
def _task_blas() -> _TaskBlas:
    """This process's :class:`_TaskBlas` (one, as the BLAS libraries' limits are)."""
    return _TaskBlas()


@contextlib.contextmanager
def blas_for_tasks() -> Iterator[None]:
    """While in force (it nests, also across threads), the BLAS libraries have at most
    :func:`task_threads` of ``config.blas__threads`` threads each, then what they had.

    Enter it in the thread that controls the BLAS limits (threadpoolctl lets only the first
    thread that set them set them again, usually the main one): around ``dask.compute``.

    Examples
    --------
    >>> lazy = f(x)  # doctest: +SKIP
    >>> with blas_for_tasks():  # doctest: +SKIP
    ...     value = lazy.compute()
    """
    state = _task_blas()
    state.enter()
    try:
        yield
    finally:
        state.leave()


@functools.cache
def _thread_state() -> threading.local:
    return threading.local()


def limit_task_thread() -> None:
    """Give the calling thread (a Dask worker's) limits of at most :func:`task_threads`
    for the libraries whose limits are per thread: OpenMP (``config.openmp__threads``)
    and a BLAS library built on OpenMP (``config.blas__threads``).

    Once per thread and pair of flags (a check of a few hundred nanoseconds after that);
    while no such library is loaded, it looks again once more modules were imported (a
    compiled C module may load one). A BLAS library with a process-wide pool is limited
    by :func:`blas_for_tasks` instead: threadpoolctl lets only one thread set its limits.
    """
    local = _thread_state()
    key = (config.blas__threads, config.openmp__threads)
    done = getattr(local, "limited", None)
    if done == key or done == (key, len(sys.modules)):
        return
    from threadpoolctl import ThreadpoolController

    found = False
    for lib in ThreadpoolController().lib_controllers:
        if lib.user_api == "openmp":
            flag = key[1]
        elif getattr(lib, "threading_layer", None) == "openmp":
            flag = key[0]
        else:
            continue
        found = True
        threads = task_threads(flag)
        if threads < int(lib.num_threads):
            lib.set_num_threads(threads)
    local.limited = key if found else (key, len(sys.modules))
