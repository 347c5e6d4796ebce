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
higher are kept.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["COMPILE_THRESHOLD", "fewer_collections"]

#: The first threshold of the cyclic collector during a compile (CPython's default: 700).
COMPILE_THRESHOLD = 100_000


class _Pauses:
    """How many compiles run now, and the thresholds to put back after the last one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: tuple[int, ...] = ()


_PAUSES = _Pauses()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Within the block, the cyclic collector's first threshold is at least
    :data:`COMPILE_THRESHOLD`; the thresholds before the outermost block are restored at
    its end (also when it raises). Safe to nest and to enter from several threads."""
    with _PAUSES.lock:
        if _PAUSES.depth == 0:
            _PAUSES.saved = gc.get_threshold()
            first, *rest = _PAUSES.saved
            if first < COMPILE_THRESHOLD:
                gc.set_threshold(COMPILE_THRESHOLD, *rest)
        _PAUSES.depth += 1
    try:
        yield
    finally:
        with _PAUSES.lock:
            _PAUSES.depth -= 1
            if _PAUSES.depth == 0:
                gc.set_threshold(*_PAUSES.saved)
