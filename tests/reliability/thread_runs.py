"""Running one function in many threads at once, for the thread-safety tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["run_threads"]


def run_threads(n: int, target: Callable[[int], Any], timeout: float = 120.0) -> list[Any]:
    """Run ``target(k)`` for ``k`` in ``range(n)`` in ``n`` threads started together and
    return the results in order; fail (rather than hang) if a thread has not finished
    after ``timeout`` seconds, and re-raise the first exception a thread raised."""
    results: list[Any] = [None] * n
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def work(k: int) -> None:
        try:
            barrier.wait()
            results[k] = target(k)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    stuck = sum(t.is_alive() for t in threads)
    assert stuck == 0, f"{stuck} of {n} threads still running after {timeout} s: a deadlock"
    if errors:
        raise errors[0]
    return results
