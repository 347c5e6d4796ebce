"""A busy machine for the benchmarks: processes spinning on every CPU while a case runs.

``with busy_machine(n): ...`` starts ``n`` Python processes, each a pure busy loop, and
stops them when the block ends, however it ends (an exception, ``KeyboardInterrupt`` on
Ctrl-C, ``SIGTERM`` turned into ``SystemExit`` for the block's duration), and at
interpreter exit. Each process also ends by itself as soon as the process that started it
is gone, so none outlives a benchmark killed with ``SIGKILL``. Their command line carries
``BUSY_TAG``, which finds any of them (``pkill -f opweave-bench-busy``).
"""

from __future__ import annotations

import atexit
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from types import FrameType

#: Spins until its parent (``argv[1]``) is gone: a busy loop that cannot be orphaned.
LOOP = "import os, sys\nparent = int(sys.argv[1])\nwhile os.getppid() == parent: pass"
#: The extra argument that marks a busy process on its command line.
BUSY_TAG = "opweave-bench-busy"
STOP_TIMEOUT_S = 5.0


def cpu_count() -> int:
    """The CPUs this process may run on (its affinity where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    """Kill ``processes`` and reap them (idempotent)."""
    for process in processes:
        if process.poll() is None:
            process.kill()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in processes:
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            print(f"busy process {process.pid} did not stop", file=sys.stderr)


def _exit_on_sigterm(signum: int, frame: FrameType | None) -> None:
    """``SIGTERM`` as ``SystemExit``, so that ``finally`` blocks run."""
    raise SystemExit(128 + signum)


@contextmanager
def busy_machine(n: int | None = None, settle_s: float = 0.2) -> Iterator[int]:
    """Run the block beside ``n`` busy processes (default: one per CPU).

    Waits ``settle_s`` seconds after starting them, so they are all spinning when the
    block starts. Yields ``n``.

    Raises
    ------
    ValueError
        When ``n`` is below 1.
    """
    n = cpu_count() if n is None else n
    if n < 1:
        raise ValueError(f"busy_machine: need at least one busy process, got {n}")
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _exit_on_sigterm) if in_main_thread else None
    processes: list[subprocess.Popen[bytes]] = []
    cleanup = partial(stop, processes)
    atexit.register(cleanup)
    command = [sys.executable, "-c", LOOP, str(os.getpid()), BUSY_TAG]
    try:
        for _ in range(n):
            processes.append(subprocess.Popen(command, stdin=subprocess.DEVNULL))
        time.sleep(settle_s)
        yield n
    finally:
        stop(processes)
        atexit.unregister(cleanup)
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
