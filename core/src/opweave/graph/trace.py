"""Where graph objects were created: creation traces, as Theano and PyTensor record them.

``Op.__call__`` and ``Type.__call__`` record on each new variable's ``tag.trace`` the user's
stack frames at that point (frames of opweave and of its backends are left out, so the trace
starts in the code that built the graph), at most ``config.traceback__limit`` of them
(``-1``: all, ``0``: none). When a rewrite replaces a variable by one without a trace of its
own making, the replacement inherits the replaced one's trace
(:meth:`~opweave.graph.fg.FunctionGraph.replace`; node rewriters may also call
:func:`opweave.graph.rewriting.copy_stack_trace`, which appends), so a node of a compiled
function points at the line that created what it computes. A failing node's error report quotes it
(:func:`creation_note`).

``tag.trace`` holds a list of traces (one per origin), each a list of ``(filename, lineno,
function name, line)`` from the outermost frame to the innermost, as PyTensor's.
"""

from __future__ import annotations

import functools
import linecache
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from types import FrameType
from typing import Any

from opweave.configdefaults import config

__all__ = [
    "Frame",
    "add_tag_trace",
    "creation_note",
    "inherit_stack_trace",
    "traces_of",
    "traces_off",
    "user_frames",
    "variable_creation_note",
]

#: One recorded frame: file, line number, function, the line's text.
Frame = tuple[str, int, str, str]
#: Whether traces are being recorded in this context (see :func:`traces_off`).
_RECORDING: ContextVar[bool] = ContextVar("opweave_trace_recording", default=True)


@functools.lru_cache(maxsize=1024)
def _internal(module: str) -> bool:
    """Whether frames of ``module`` are opweave's own (left out of traces)."""
    top = module.partition(".")[0]
    return top == "opweave" or top.startswith("opweave_")


@functools.lru_cache(maxsize=4096)
def _frame(filename: str, line: int, function: str) -> Frame:
    """One recorded frame, made once per line: the graph's variables share it (a graph
    built in a loop records the same few lines thousands of times), and pickling the graph
    (the rewrite cache, a pickled function) writes it once."""
    return (filename, line, function, sys.intern(linecache.getline(filename, line).strip()))


def user_frames(limit: int, skip: int = 1) -> list[Frame]:
    """The innermost ``limit`` frames of the caller's stack outside opweave, outermost first.

    Parameters
    ----------
    limit
        How many frames at most (``-1``: all, ``0``: none).
    skip
        Frames to skip above this function (``1``: start at its caller).
    """
    if limit == 0:
        return []
    frames: list[Frame] = []
    frame: FrameType | None = sys._getframe(skip)
    while frame is not None and (limit < 0 or len(frames) < limit):
        module = frame.f_globals.get("__name__", "")
        if not _internal(module):
            code = frame.f_code
            frames.append(_frame(code.co_filename, frame.f_lineno, code.co_name))
        frame = frame.f_back
    frames.reverse()
    return frames


def pause_traces() -> Token[bool]:
    """Stop recording traces until :func:`resume_traces` is called with the returned token
    (what :func:`traces_off` does, without a context manager's cost: ``Op.__call__`` runs
    it around every ``make_node``)."""
    return _RECORDING.set(False)


def resume_traces(token: Token[bool]) -> None:
    """Undo the :func:`pause_traces` that returned ``token``."""
    _RECORDING.reset(token)


@contextmanager
def traces_off() -> Iterator[None]:
    """Record no trace inside the ``with`` block (in this thread or task).

    The rewriting of a compilation runs under it: the variables rewrites make would all
    record the same user frame (the call of ``function``) after a walk through the whole
    stack, and :meth:`~opweave.graph.fg.FunctionGraph.replace` gives them the trace of
    what they replace anyway.
    """
    token = pause_traces()
    try:
        yield
    finally:
        resume_traces(token)


def add_tag_trace(things: Iterable[Any]) -> None:
    """Record the caller's user frames on each of ``things`` (variables) as ``tag.trace``.

    Does nothing when ``config.traceback__limit`` is ``0``, under :func:`traces_off`, or
    when no user frame is found.
    """
    if not _RECORDING.get():  # first: much cheaper than reading the flag
        return
    limit = config.traceback__limit
    if limit == 0:
        return
    frames = user_frames(limit, skip=2)
    if not frames:
        return
    for thing in things:
        thing.tag.trace = [frames]


def traces_of(var: Any) -> list[list[Any]]:
    """``var.tag.trace`` as a list of traces (one trace alone, a list of frames, is wrapped)."""
    trace = list(getattr(var.tag, "trace", []))
    return [trace] if trace and isinstance(trace[0], tuple) else trace


def inherit_stack_trace(source: Any, target: Any) -> None:
    """Give ``target`` the traces of ``source`` (variables), in place of its own, when
    ``source`` has any: ``target`` was made by a rewrite to compute what ``source`` did."""
    traces = traces_of(source)
    if traces:
        target.tag.trace = traces


def creation_note(node: Any) -> str | None:
    """Text naming where ``node``'s outputs were created, for an error report (``None``:
    no trace was recorded)."""
    traces: list[list[Any]] = []
    for var in node.outputs:
        traces = traces_of(var)
        if traces:
            break
    return _format(traces, "node")


def variable_creation_note(var: Any) -> str | None:
    """Text naming where ``var`` was created, for an error report about it (``None``: no
    trace was recorded)."""
    return _format(traces_of(var), "variable")


def _format(traces: list[list[Any]], what: str) -> str | None:
    if not traces or not traces[-1]:
        return None
    lines = [f"Backtrace when the {what} was created (config.traceback__limit sets the depth):"]
    for frame in traces[-1]:
        filename, lineno, name = frame[0], frame[1], frame[2]
        lines.append(f'  File "{filename}", line {lineno}, in {name}')
        text = frame[3] if len(frame) > 3 else linecache.getline(filename, lineno).strip()
        if text:
            lines.append(f"    {text}")
    return "\n".join(lines)
