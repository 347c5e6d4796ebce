"""Fewer cyclic garbage collections while a function compiles.

Rewriting and linking allocate hundreds of thousands of small container objects (nodes,
variables, Types, lists) and keep most of them. CPython's cyclic collector runs a young
collection every 700 such allocations and now and then a full one, which walks every
object of the process: on a graph of a few hundred nodes those collections take a tenth of
the compile, and find almost nothing to free.

:func:`fewer_collections` raises the collector's first threshold while a compile runs and
puts the previous thresholds back when the last concurrent compile ends. Young collections
still run (every :data:`COMPILE_THRESHOLD` allocations), so cyclic garbage a compile makes
is bounded; a collector the user disabled stays disabled, and thresholds the user raised
higher are kept. At the end, what was allocated since the last young collection moves to
the oldest generation without being examined (:func:`_promote_young`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from opweave.plugins.forksafe import AfterFork

__all__ = ["COMPILE_THRESHOLD", "fewer_collections"]

#: The first threshold of the cyclic collector during a compile (CPython's default: 700).
COMPILE_THRESHOLD = 100_000


class _Pauses:
    """How many compiles run now (in all, and in each thread), and the thresholds to put
    back after the last one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.per_thread: dict[int, int] = {}
        self.saved: tuple[int, ...] = ()
        AfterFork.track(self)

    def enter(self) -> None:
        """Count a compile starting in this thread (the lock is held)."""
        me = threading.get_ident()
        self.per_thread[me] = self.per_thread.get(me, 0) + 1
        self.depth += 1

    def leave(self) -> None:
        """Count a compile of this thread ending (the lock is held)."""
        me = threading.get_ident()
        left = self.per_thread.get(me, 0) - 1
        if left > 0:
            self.per_thread[me] = left
        else:
            self.per_thread.pop(me, None)
        self.depth -= 1

    def reset_after_fork(self) -> None:
        """In a forked child: a new lock, and only the compiles of the thread that forked
        still count (the other threads are not there); with none, the thresholds before
        the compiles are back."""
        self.lock = threading.Lock()
        me = threading.get_ident()
        mine = self.per_thread.get(me, 0)
        self.per_thread = {me: mine} if mine else {}
        if self.depth and not mine and self.saved:
            gc.set_threshold(*self.saved)
        self.depth = mine


_PAUSES = _Pauses()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the cyclic collector's first threshold is at least
    :data:`COMPILE_THRESHOLD`; the thresholds before the outermost block are restored at
    its end (also when it raises). Safe to nest and to enter from several threads; a
    process forked while other threads compile gets the thresholds back."""
    with _PAUSES.lock:
        if _PAUSES.depth == 0:
            _PAUSES.saved = gc.get_threshold()
            first, *rest = _PAUSES.saved
            if first < COMPILE_THRESHOLD:
                gc.set_threshold(COMPILE_THRESHOLD, *rest)
        _PAUSES.enter()
    try:
        yield
    finally:
        with _PAUSES.lock:
            _PAUSES.leave()
            if _PAUSES.depth == 0:
                _promote_young()
                gc.set_threshold(*_PAUSES.saved)


def _promote_young() -> None:
    """Move the objects the compile made into the collector's oldest generation, unexamined.

    With the first threshold put back, the next allocation would start a young collection
    over every object allocated since the last one (most of a compile's nodes and
    variables, which live on): about 10 ms on a graph of a few hundred nodes, for nothing.
    :func:`gc.freeze` then :func:`gc.unfreeze` moves every tracked object to the oldest
    generation in constant time; cyclic garbage among them goes at the next full
    collection. Skipped when the collector is off or objects are frozen (by the program,
    before a fork, say): unfreezing would thaw them.
    """
    if gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_count()[0] > _PAUSES.saved[0]:
        gc.freeze()
        gc.unfreeze()
