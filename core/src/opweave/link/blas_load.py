"""BLAS threads that follow the machine's load, between calls.

With ``config.blas__threads = "auto"`` a BLAS library gets :func:`usable_cpus` threads
(:mod:`opweave.link.threads`). That is right on a quiet machine and very wrong on a busy
one: OpenBLAS splits a product between its threads and waits for the slowest, and a
thread the operating system has descheduled for another process is slow by a whole time
slice, so the product of a 784-256-10 MLP step takes four to five times longer with two
threads than with one beside two busy processes on two CPUs.

So, with ``config.blas__follow_load`` and ``auto``, a backend about to call a BLAS
product looks at the load at most every :attr:`BlasLoad.interval` seconds (the number of
runnable threads of the machine, the fourth field of ``/proc/loadavg``) and gives the
OpenBLAS libraries the threads :func:`threads_for_load` says: fewer when other threads
want the CPUs, never more than the ``auto`` limit. It costs a clock read per product, and
a read of ``/proc/loadavg`` (a few microseconds) per interval.

The state the backends share is one C structure per process (:func:`blas_load`), which
:meth:`BlasThreads.apply <opweave.link.threads.BlasThreads.apply>` fills: whether the
load is followed, the limit, the threads the libraries have, and the addresses of the
libraries' ``openblas_set_num_threads``. A library someone else gave other threads in
between (a ``threadpoolctl`` limit) is left to them. The C backend's ``Dot`` and
``MatMul`` follow it (``opw_blas_adapt`` in its ``blas.c``, :func:`threads_for_load` in
C); the Python backend's products keep the threads of the last compile.

It applies on Linux (where ``/proc/loadavg`` exists) to OpenBLAS libraries (NumPy's and
SciPy's); other BLAS libraries keep the ``auto`` limit.

It is off by default, because OpenBLAS divides a product's work by its threads and the
last bits of a large product depend on how: with the threads following the load, the same
function on the same inputs may give results that differ in their last bits from run to
run (a seeded sampler's draws among them). With the flag off, results are reproducible.
"""

from __future__ import annotations

import ctypes
import functools
import math

__all__ = ["LOADAVG", "MAX_LIBRARIES", "BlasLoad", "blas_load", "threads_for_load"]

#: Where Linux publishes the load, the runnable threads in its fourth field (``r/total``).
LOADAVG = "/proc/loadavg"
#: The most OpenBLAS libraries followed in one process.
MAX_LIBRARIES = 4


class BlasLoad(ctypes.Structure):
    """The shared state (``opw_blas_load_t`` in the C backend's ``blas.c``; same layout).

    Attributes
    ----------
    enabled : int
        1 while the load is followed (``blas__threads`` is ``auto``, an OpenBLAS is
        loaded, ``/proc/loadavg`` is readable).
    limit : int
        The most threads (``auto``'s choice).
    current : int
        The threads the followed libraries have now.
    usable, online : int
        The CPUs this process may use, and the machine's.
    raise_votes : int
        Consecutive looks that asked for more threads (two are needed to add threads;
        fewer threads are taken at once).
    n_setters : int
        How many entries of ``setters`` are used.
    interval : float
        Seconds between two looks at the load.
    last : float
        ``CLOCK_MONOTONIC`` seconds of the last look.
    setters, getters : arrays of void pointers
        Each library's ``openblas_set_num_threads`` and ``openblas_get_num_threads``.
        Where a library's threads are not ``current`` (someone else, threadpoolctl for
        one, changed them), following stops until the next compile.
    path : bytes
        The file read for the load (:data:`LOADAVG`).
    """

    _fields_ = [
        ("enabled", ctypes.c_int),
        ("limit", ctypes.c_int),
        ("current", ctypes.c_int),
        ("usable", ctypes.c_int),
        ("online", ctypes.c_int),
        ("raise_votes", ctypes.c_int),
        ("n_setters", ctypes.c_int),
        ("interval", ctypes.c_double),
        ("last", ctypes.c_double),
        ("setters", ctypes.c_void_p * MAX_LIBRARIES),
        ("getters", ctypes.c_void_p * MAX_LIBRARIES),
        ("path", ctypes.c_char * 256),
    ]

    @property
    def address(self) -> int:
        """The structure's address, which the C backend's modules read once."""
        return ctypes.addressof(self)


@functools.cache
def blas_load() -> BlasLoad:
    """This process's :class:`BlasLoad` (off until a compile fills it).

    Returns
    -------
    BlasLoad
        The one structure; it lives as long as the process.
    """
    state = BlasLoad()
    state.interval = 0.05
    state.path = LOADAVG.encode()
    return state


def threads_for_load(limit: int, running: int, current: int, usable: int, online: int) -> int:
    """The BLAS threads for a machine with ``running`` runnable threads.

    The caller's own ``current`` threads (the calling one and the library's workers,
    which spin between products) are taken out of ``running``; the others are spread
    over the machine's ``online`` CPUs, of which this process may use ``usable`` (their
    share of those, rounded); the threads are the CPUs the others leave free, between 1
    and ``limit``.

    Parameters
    ----------
    limit
        The most threads (``blas__threads = "auto"``'s choice).
    running
        Runnable threads of the whole machine (``/proc/loadavg``'s fourth field).
    current
        The threads the library has now.
    usable, online
        CPUs this process may use, and the machine's.

    Returns
    -------
    int
        Between 1 and ``limit``.

    Examples
    --------
    >>> threads_for_load(2, running=2, current=2, usable=2, online=2)  # quiet
    2
    >>> threads_for_load(2, running=4, current=2, usable=2, online=2)  # 2 busy others
    1
    """
    others = max(0, running - max(current, 1))
    busy_here = math.floor(others * usable / max(online, usable, 1) + 0.5)
    return max(1, min(limit, usable - busy_here))
