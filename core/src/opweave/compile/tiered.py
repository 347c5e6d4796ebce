"""Tiered compilation: a compiled function is usable before its linker has compiled it.

A linker that compiles code (C: code generation, then a compiler) can take a large part of
a second on a graph it has not seen; a warm on-disk cache links the same graph in a few
milliseconds. With ``config.compile__tiered`` (on by default), :class:`FunctionMaker.create
<opweave.compile.maker.FunctionMaker.create>` runs such a linker's ``make_all`` in a thread
of its own (:class:`BackgroundLink`) and links the rewritten graph with the Python kernels
too (the :data:`PYTHON_TIER` linker, found by name among the installed ones). It waits for
the background link up to :data:`GRACE_S` (less for a graph new to the compile directory;
:func:`link_tiered` says how): when it is done by then (a warm cache), the function is what
an untiered compile gives and the Python tier is dropped. Otherwise the function returned
at once runs on the Python kernels until the background link is done: the next call then
switches to it before it starts (:meth:`BackgroundLink.settle`), so no call runs partly on
one tier and partly on the other. On the Python tier every call holds the function's lock
(its lock-free path is off), so no call is under way when the switch happens; the switch
puts back the final linker's call path, and its calls then cost what they cost untiered.

Which linkers are tiered: those whose class says ``links_slowly = True``; one that says
nothing is tiered when its ``impls`` include ``"c"`` (the kernels it links are compiled).
Not a graph for which the linker's ``python_tier_agrees(fgraph)`` answers false, nor a
profiled function (its per-node times must be those of its linker), a copy sharing
another function's storage, a compile inside a background link, nor a graph the Python
tier cannot link (the compile then waits for its linker, as untiered).

Failures: an error the linker raises before ``function`` returns is raised by it, as
without tiering. One raised later is not raised in the middle of the caller's program, at
whichever call happens to come next: the function warns once (a :class:`RuntimeWarning`
naming the linker and its error) and keeps running on the Python kernels, which compute
the same values (a linker tiers only graphs on which they do: ``python_tier_agrees``);
:meth:`~opweave.compile.executor.Function.wait_compiled` raises the error, for code that
must have the final linker.

Configuration: the background link reads ``opweave.config`` while it runs. The flags are
noted when the compile starts; if any of them has changed when the link ends (a
``config.change_flags`` block left in the meantime), its result is dropped and the switch
links again, in the calling thread, under the flags the compile saw. The background link
shows no progress (:mod:`opweave.link.progress`): it would print over the program's output.
"""

from __future__ import annotations

import threading
import time
import warnings
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from opweave.compile.collector import fewer_collections
from opweave.compile.executor import Function
from opweave.configdefaults import config
from opweave.link.deferred import waiting_room
from opweave.link.lookup import available_linkers

if TYPE_CHECKING:
    from collections.abc import Callable

    from opweave.compile.maker import FunctionMaker

__all__ = [
    "GRACE_S",
    "PYTHON_TIER",
    "BackgroundLink",
    "link_tiered",
    "links_slowly",
    "python_tier_for",
]

#: Seconds, from the start of the background link, that a compile waits for it before
#: returning a function on the Python tier (a warm cache links within it, and then the
#: Python tier is not used).
GRACE_S = 0.03

#: Seconds a compile first waits for the background link alone, before it links the Python
#: tier beside it (within :data:`GRACE_S`), when nothing says whether the linker's cache
#: holds the graph: what a warm cache usually takes.
FIRST_WAIT_S = 0.01

#: The name of the linker of the Python tier (opweave-python's ``vm``).
PYTHON_TIER = "vm"

#: Whether the current thread is a background link (its own compiles are not tiered).
_IN_BACKGROUND: ContextVar[bool] = ContextVar("opweave_background_link", default=False)

#: What ``Linker.make_all`` returns: ``(fn, input cells, output cells, thunks, order)``.
LinkResult = tuple[Any, list[list[Any]], list[list[Any]], list[Any], list[Any]]


def links_slowly(linker: Any) -> bool:
    """Whether ``linker`` (a class or an instance) compiles code when it links.

    Its ``links_slowly`` attribute where it has one; otherwise whether its ``impls``
    include ``"c"``.
    """
    declared = getattr(linker, "links_slowly", None)
    if declared is not None:
        return bool(declared)
    return "c" in (getattr(linker, "impls", None) or ())


def python_tier_for(maker: FunctionMaker) -> Any | None:
    """The Python tier's linker, accepting ``maker``'s graph, when ``maker``'s compile is
    to be tiered; ``None`` when it is not (flag off, a background link, a linker that
    links quickly, no Python tier installed, or a linker whose ``python_tier_agrees(fgraph)``
    answers false: its kernels would not give the Python kernels' values on that graph)."""
    if not config.compile__tiered or _IN_BACKGROUND.get():
        return None
    final = maker.linker
    if not links_slowly(final):
        return None
    # Among the installed linkers (the Python kernels need no compiler: asking each backend
    # whether it is usable here, as resolve_linker does, would cost a millisecond).
    cls = available_linkers().get(PYTHON_TIER)
    if cls is None or isinstance(final, cls):
        return None
    agrees = getattr(final, "python_tier_agrees", None)
    if callable(agrees) and not agrees(maker.fgraph):
        return None  # the linker's kernels would not give the Python kernels' values
    return cls(allow_gc=getattr(final, "allow_gc", None)).accept(
        maker.fgraph, no_recycling=list(getattr(final, "no_recycling", ()))
    )


def _flag_values() -> dict[str, Any]:
    return {info.name: info.value for info in config.flags()}


def _link(linker: Any, input_storage: list[list[Any]]) -> Any:
    """``linker.make_all`` on ``input_storage`` (in a block where the linker's own deferred
    steps wait for its compiler, :mod:`opweave.link.deferred`)."""
    with fewer_collections(), waiting_room():
        return linker.make_all(input_storage=input_storage)


class BackgroundLink:
    """A linker's ``make_all`` running in a thread of its own.

    Parameters
    ----------
    linker
        The accepted linker.
    input_storage
        The function's input cells (the Python tier links the same ones).

    Attributes
    ----------
    done
        A :class:`threading.Event` set when the link has ended (done or failed).
    """

    def __init__(self, linker: Any, input_storage: list[list[Any]]) -> None:
        self.linker = linker
        self.done = threading.Event()
        self._input_storage = input_storage
        self._result: LinkResult | None = None
        self._error: BaseException | None = None
        self._flags = _flag_values()
        #: Flags changed while the link ran, with the values the compile saw (``None``:
        #: the link has to be done again, as in a forked child where it never ended).
        self._changed: dict[str, Any] | None = {}
        name = getattr(linker, "name", type(linker).__name__)
        # Not a daemon: a process that ends during the link lets it finish its cache entry.
        threading.Thread(target=self._run, name=f"opweave link ({name})").start()

    def _run(self) -> None:
        _IN_BACKGROUND.set(True)
        try:
            self._result = _link(self.linker, self._input_storage)
        except BaseException as exc:  # kept for the caller: a thread has no one to raise to
            self._error = exc
        finally:
            self._changed = self._changed_flags()
            self.done.set()

    def _changed_flags(self) -> dict[str, Any]:
        now = _flag_values()
        return {k: v for k, v in self._flags.items() if k in now and now[k] != v}

    def after_fork(self) -> None:
        """In a forked child: the thread is not there, the link is done again when needed."""
        if not self.done.is_set():
            self._changed = None
            self.done = threading.Event()
            self.done.set()

    def result(self) -> LinkResult:
        """What ``make_all`` returned; linked again in this thread, under the flags the
        compile saw, when they changed while it ran.

        Raises
        ------
        Exception
            What the linker raised.
        """
        if self._error is not None:
            raise self._error
        changed = self._changed
        if changed is None:
            changed = self._changed_flags()
        elif not changed:
            assert self._result is not None
            return self._result
        try:
            with config.change_flags(changed):
                self._result = _link(self.linker, self._input_storage)
        except Exception as exc:
            self._error = exc
            raise
        self._changed = {}
        return self._result

    def settle(self, f: Function, warn: bool) -> None:
        """Switch ``f`` from the Python tier to the final linker once this link is done,
        or keep it on the Python tier when the link failed (warning once with ``warn``;
        :meth:`Function.wait_compiled` raises the error). ``f``'s lock is held: no call
        is under way."""
        if not self.done.is_set():
            return
        f._tier = None
        try:
            fn, in_cells, out_cells, thunks, order = self.result()
        except Exception as exc:
            f._tier_error = exc
            # Back to the Python tier's own call path (its lock-free one, where it has it).
            f._attach(f.linker, f.fn, f.input_cells, f.output_cells)
            if warn:
                final = getattr(self.linker, "name", type(self.linker).__name__)
                warnings.warn(
                    f"{f._label()}: the {final!r} linker failed in the background "
                    f"({type(exc).__name__}: {exc}); the function keeps running on the "
                    f"Python kernels (the {f.tier!r} linker). Function.wait_compiled() "
                    "raises the error.",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return
        f.maker.record_link(self.linker, thunks, order)
        f._attach(self.linker, fn, in_cells, out_cells)


def link_tiered(
    maker: FunctionMaker,
    python_tier: Any,
    input_storage: list[list[Any]],
    store: Callable[[], None] | None,
    unpack_single: bool,
    name: str | None,
) -> Function:
    """Link ``maker``'s graph with its linker in the background and with ``python_tier``
    meanwhile; the Python tier runs the calls unless the linker is done within the grace
    period (see the module's text).

    How long the linker is waited for depends on what is known of its cache. A graph
    rewritten just now (``store`` given) is new to the compile directory, so the linker
    will not find it in its cache either: the Python tier links first, alone (the
    background link would take its turns of the interpreter lock), then the linker starts
    and the function returns at once. A graph whose rewritten form came from the cache was
    linked before: the linker gets all of :data:`GRACE_S` alone first. Otherwise it gets
    :data:`FIRST_WAIT_S` alone, then the rest of :data:`GRACE_S` beside the Python tier's
    link.

    Parameters
    ----------
    maker
        The function maker; ``maker.linker`` is the final linker.
    python_tier
        The Python tier's linker (:func:`python_tier_for`).
    input_storage
        The input cells both tiers use.
    store
        What :meth:`~opweave.compile.maker.FunctionMaker.create` defers to the link (the
        rewritten graph kept for later compiles), or ``None``; run first.
    unpack_single, name
        As for :class:`~opweave.compile.executor.Function`.

    Returns
    -------
    Function
        On the final linker when it was done in time (or the Python tier could not link
        the graph), else on the Python tier until the switch.

    Raises
    ------
    Exception
        What the final linker raised, when it failed before the function was returned
        (within the grace period, or while the Python tier could not link the graph).
    """
    if store is not None:
        # Before either link: the Python kernels keep what they build on the graph's nodes
        # (their first call does), which the rewrite cache cannot pickle.
        store()
        python = _link_python(python_tier, input_storage)
        background = BackgroundLink(maker.linker, input_storage)
    else:
        start = time.perf_counter()
        background = BackgroundLink(maker.linker, input_storage)
        first_wait = GRACE_S if maker.rewrites_reused else FIRST_WAIT_S
        if background.done.wait(first_wait):
            return _on_final(maker, background, unpack_single, name)
        python = _link_python(python_tier, input_storage)
        if python is not None:
            background.done.wait(max(0.0, GRACE_S - (time.perf_counter() - start)))
    if python is None:  # the Python kernels cannot run this graph: wait for the linker
        background.done.wait()
    if background.done.is_set():
        return _on_final(maker, background, unpack_single, name)
    assert python is not None
    fn, in_cells, out_cells, thunks, order = python
    f = Function(maker, fn, in_cells, out_cells, unpack_single, name=name, linker=python_tier)
    # Every call takes the function's lock until the switch (Function.__call__).
    f._tier = background
    f._lock_free = False
    maker.record_link(python_tier, thunks, order)
    return f


def _link_python(python_tier: Any, input_storage: list[list[Any]]) -> LinkResult | None:
    """The Python tier's ``make_all``, or ``None`` when it cannot link the graph."""
    try:
        with fewer_collections():
            result: LinkResult = python_tier.make_all(input_storage=input_storage)
    except Exception:  # e.g. an Op without a Python implementation
        return None
    return result


def _on_final(
    maker: FunctionMaker, background: BackgroundLink, unpack_single: bool, name: str | None
) -> Function:
    """The function on the final linker, once ``background`` is done (its error raised)."""
    fn, in_cells, out_cells, thunks, order = background.result()
    maker.record_link(maker.linker, thunks, order)
    return Function(maker, fn, in_cells, out_cells, unpack_single, name=name)
