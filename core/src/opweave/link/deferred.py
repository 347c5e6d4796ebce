"""Work a compile can leave for the time it waits on a compiler.

Some steps of a compile need not be done before the next one starts: keeping the
rewritten graph in the compile directory, say. Such a step is handed to :func:`defer`;
inside a :func:`waiting_room` block it waits there. A linker that starts outside compilers
calls :func:`run_deferred` once they run, so the step fills a wait the user has anyway;
whatever is still waiting when the outermost block ends runs then (also when the block
raises). Outside any block, :func:`defer` runs the step at once.

The steps live in a context variable, so compiles in other threads each have their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["defer", "has_deferred", "run_deferred", "waiting_room"]

_WAITING: ContextVar[list[Callable[[], None]] | None] = ContextVar(
    "opweave_deferred_steps", default=None
)


@contextmanager
def waiting_room() -> Iterator[None]:
    """Within the block, :func:`defer` keeps steps for :func:`run_deferred`; the steps
    still waiting run when the outermost block ends. Nested blocks share the outer one's."""
    if _WAITING.get() is not None:
        yield
        return
    steps: list[Callable[[], None]] = []
    token = _WAITING.set(steps)
    try:
        yield
    finally:
        _WAITING.reset(token)
        _run(steps)


def defer(step: Callable[[], None]) -> None:
    """Run ``step`` when the compile next waits on a compiler (:func:`run_deferred`), or
    at the end of the current :func:`waiting_room` block; at once outside any block."""
    steps = _WAITING.get()
    if steps is None:
        step()
    else:
        steps.append(step)


def has_deferred() -> bool:
    """Whether steps wait in the current block (a linker that would start a thread just to
    run them beside a compiler can skip it when none do)."""
    return bool(_WAITING.get())


def run_deferred() -> None:
    """Run the steps :func:`defer` kept in the current block, in the order they came (a
    linker calls this while outside compilers run)."""
    steps = _WAITING.get()
    if steps:
        _run(steps)


def _run(steps: list[Callable[[], None]]) -> None:
    while steps:
        steps.pop(0)()
