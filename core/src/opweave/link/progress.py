"""What a long compile is doing, shown on stderr.

A compile is part of the user's wait. :func:`compile_progress` wraps one (``function``
does); the parts of the pipeline say what they are doing through :func:`current`, which
answers a do-nothing reporter outside a compile, so backends call it unconditionally::

    progress = current()
    progress.stage(f"generating C for {n} nodes")
    with progress.steps("compiling C modules", total=len(groups)) as steps:
        for group in groups:
            build(group)
            steps.advance()

Nothing is shown for a compile that ends within ``config.compile__progress_delay``
seconds. After that the stage under way is printed, and every later stage as it starts;
steps show as a progress bar (tqdm) on a terminal and as one line per step otherwise.
``config.compile__progress = False`` turns it all off.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TextIO

from opweave.configdefaults import config
from opweave.plugins.forksafe import ForkSafeLock

__all__ = ["CompileProgress", "Steps", "compile_progress", "current"]

_ACTIVE: ContextVar[CompileProgress | None] = ContextVar("opweave_compile_progress", default=None)


class Steps:
    """A counted part of a compile (``k of K``); use as a context manager.

    Parameters
    ----------
    progress
        The compile's reporter.
    text
        What the steps are ("compiling C modules").
    total
        How many steps there are.
    """

    def __init__(self, progress: CompileProgress, text: str, total: int) -> None:
        self.progress = progress
        self.text = text
        self.total = total
        self.done = 0
        self._bar: Any = None

    def __enter__(self) -> Steps:
        self.progress._start_steps(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress._end_steps(self)

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more steps done (thread-safe)."""
        self.progress._advance(self, n)


class CompileProgress:
    """Reports one compile's stages once it has run longer than ``delay`` seconds.

    Parameters
    ----------
    what
        What is being compiled, for the first line ("compiling function f").
    delay
        Seconds of silence before anything is shown.
    stream
        Where to write (default: ``sys.stderr`` at the time of writing).
    enabled
        ``False`` makes every method a no-op.
    """

    def __init__(
        self,
        what: str,
        delay: float = 2.0,
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.what = what
        self.delay = delay
        self.enabled = enabled
        self._stream = stream
        # Released in a forked child (the silent reporter is shared by every thread).
        self._lock = ForkSafeLock()
        self._stage = ""
        self._steps: Steps | None = None
        self._shown = False
        self._start = time.perf_counter()
        self._timer: threading.Timer | None = None
        #: Every line written (what a test or a log handler can read back).
        self.lines: list[str] = []

    @property
    def stream(self) -> TextIO:
        """The stream written to."""
        return self._stream if self._stream is not None else sys.stderr

    @property
    def shown(self) -> bool:
        """Whether the compile has run long enough for its progress to be shown."""
        return self._shown

    # ------------------------------------------------------------------ reporting

    def stage(self, text: str) -> None:
        """Say what the compile is doing now ("rewriting 481 nodes")."""
        if not self.enabled:
            return
        with self._lock:
            self._stage = text
            if self._shown:
                self._write(f"opweave: {text}")

    def steps(self, text: str, total: int) -> Steps:
        """A counted part of the compile: ``with progress.steps(text, total) as s: ...``."""
        return Steps(self, text, total)

    # ------------------------------------------------------------------ lifetime

    def start(self) -> None:
        """Start the clock; progress appears after ``delay`` seconds."""
        if not self.enabled:
            return
        self._start = time.perf_counter()
        if self.delay <= 0:
            self._show()
            return
        self._timer = threading.Timer(self.delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def close(self) -> None:
        """Stop reporting; say how long the compile took if anything was shown."""
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            if self._shown:
                elapsed = time.perf_counter() - self._start
                self._write(f"opweave: {self.what}: done in {elapsed:.1f} s")
            self._shown = False
            self.enabled = False

    # ------------------------------------------------------------------ internals

    def _show(self) -> None:
        with self._lock:
            if not self.enabled or self._shown:
                return
            self._shown = True
            self._write(f"opweave: {self.what} (taking a while)")
            if self._steps is not None:
                self._open_bar(self._steps)
            elif self._stage:
                self._write(f"opweave: {self._stage}")

    def _write(self, line: str) -> None:
        self.lines.append(line)
        try:
            print(line, file=self.stream, flush=True)
        except (OSError, ValueError):  # a closed or broken stream: progress is a courtesy
            pass

    def _is_terminal(self) -> bool:
        try:
            return bool(self.stream.isatty())
        except (AttributeError, ValueError):
            return False

    def _open_bar(self, steps: Steps) -> None:
        if self._is_terminal():
            try:
                from tqdm import tqdm  # imported when a bar is first needed (import time)

                steps._bar = tqdm(
                    total=steps.total,
                    initial=steps.done,
                    desc=f"opweave: {steps.text}",
                    file=self.stream,
                    leave=False,
                )
                return
            except Exception:  # no bar after all: progress is a courtesy, lines will do
                steps._bar = None
        self._write(f"opweave: {steps.text}: {steps.done} of {steps.total}")

    def _start_steps(self, steps: Steps) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._steps = steps
            self._stage = steps.text
            if self._shown:
                self._open_bar(steps)

    def _advance(self, steps: Steps, n: int) -> None:
        if not self.enabled:
            return
        with self._lock:
            steps.done += n
            if not self._shown:
                return
            if steps._bar is not None:
                steps._bar.update(n)
            else:
                self._write(f"opweave: {steps.text}: {steps.done} of {steps.total}")

    def _end_steps(self, steps: Steps) -> None:
        with self._lock:
            if steps._bar is not None:
                steps._bar.close()
                steps._bar = None
            if self._steps is steps:
                self._steps = None


#: The reporter :func:`current` answers outside a compile: it shows nothing.
_SILENT = CompileProgress("", enabled=False)


def current() -> CompileProgress:
    """The reporter of the compile under way in this context (a silent one if none)."""
    return _ACTIVE.get() or _SILENT


@contextmanager
def compile_progress(
    what: str,
    enabled: bool | None = None,
    delay: float | None = None,
    stream: TextIO | None = None,
) -> Iterator[CompileProgress]:
    """Report the compile run inside the ``with`` block once it takes a while.

    A compile started inside another one (an inner function of a loop Op, say) reports
    through the outer one's reporter.

    Parameters
    ----------
    what
        What is compiled ("compiling function f").
    enabled, delay
        Default: the ``compile__progress`` and ``compile__progress_delay`` flags.
    stream
        Default: ``sys.stderr``.
    """
    outer = _ACTIVE.get()
    if outer is not None:
        yield outer
        return
    if enabled is None or delay is None:
        enabled = bool(config.compile__progress) if enabled is None else enabled
        delay = float(config.compile__progress_delay) if delay is None else delay
    progress = CompileProgress(what, delay=delay, stream=stream, enabled=enabled)
    token = _ACTIVE.set(progress)
    progress.start()
    try:
        yield progress
    finally:
        progress.close()
        _ACTIVE.reset(token)
