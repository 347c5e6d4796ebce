"""Locks that a forked child gets back released.

``os.fork`` copies only the thread that calls it. A lock another thread held at that moment
stays held in the child for ever, so the child's first compiled call (or compile) that
needs it would wait for ever: ``multiprocessing`` with the ``fork`` start method meets this
whenever a thread of the parent is inside a call. The objects owning such locks register
here (:meth:`AfterFork.track`) and make their locks anew in the child
(:meth:`AfterFork.reset_all`, run by :func:`os.register_at_fork` in the child before any
code of its own). What a lock guarded is left as the other thread left it: a compiled
function's storage cells are rewritten by the child's next call.

Some work cannot be taken up again in a child: an import another thread had begun stays
begun there (Python's lock of that module is held for ever), so importing the module in
the child hangs. A lock guarding such work (loading a backend's implementations, which
imports its modules) is made with ``fork_waits=True``: a fork then waits until no other
thread holds it (at most :data:`FORK_WAIT_SECONDS`), so the child finds the work done.
Other objects can hold a fork back the same way (:meth:`AfterFork.hold_during_fork`).

It sits with the plugin machinery, the lowest floor that loads code lazily (the plugins'
entry points), so that every floor from there up can use it.

:class:`ForkSafeLock` is such a lock (a :class:`threading.Lock` registered here when it is
made); :class:`StateLock` is the re-entrant one of a piece of state that several compiled
functions share (a shared variable's value, a random generator).
"""

from __future__ import annotations

# Imported before the hooks below are registered: fork hooks run last-registered first, and
# logging's takes its module lock, which the work a fork waits for (imports) may need.
import logging  # noqa: F401
import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, Self

__all__ = [
    "FORK_WAIT_SECONDS",
    "AfterFork",
    "ForkSafeLock",
    "HoldDuringFork",
    "ResetAfterFork",
    "StateLock",
]

#: How long a fork waits at most for the work of a ``fork_waits`` lock to end (seconds).
#: Only a thread holding such a lock at that moment makes a fork wait at all.
FORK_WAIT_SECONDS = 30.0


class ResetAfterFork(Protocol):
    """What :class:`AfterFork` tracks: an object that makes its locks anew in a child."""

    def reset_after_fork(self) -> None:
        """Replace every lock this object owns by a new, released one."""


class HoldDuringFork(Protocol):
    """What a fork waits for (:meth:`AfterFork.hold_during_fork`)."""

    def hold_for_fork(self) -> None:
        """Before a fork: wait (boundedly) until the work is done, and keep it from
        starting again until :meth:`release_after_fork`."""

    def release_after_fork(self) -> None:
        """After a fork, in the parent: let the work start again (nothing if
        :meth:`hold_for_fork` held nothing)."""


class AfterFork:
    """The objects whose locks a forked child makes anew, and those a fork waits for.

    They are held weakly: tracking keeps nothing alive, and an object that is gone costs
    nothing at fork time.
    """

    _objects: ClassVar[weakref.WeakSet[Any]] = weakref.WeakSet()
    _holding: ClassVar[weakref.WeakSet[Any]] = weakref.WeakSet()

    @classmethod
    def track(cls, obj: ResetAfterFork) -> None:
        """Call ``obj.reset_after_fork()`` in every child forked from now on, while ``obj``
        lives."""
        cls._objects.add(obj)

    @classmethod
    def hold_during_fork(cls, obj: HoldDuringFork) -> None:
        """Make every fork from now on call ``obj.hold_for_fork()`` before it and
        ``obj.release_after_fork()`` after it in the parent, while ``obj`` lives."""
        cls._holding.add(obj)

    @classmethod
    def wait_for_work(cls) -> None:
        """Before a fork: wait for the work of every holding object."""
        for obj in list(cls._holding):
            obj.hold_for_fork()

    @classmethod
    def release_after_fork(cls) -> None:
        """After a fork, in the parent: let the work start again."""
        for obj in list(cls._holding):
            obj.release_after_fork()

    @classmethod
    def reset_all(cls) -> None:
        """Reset the locks of every tracked object (run in a forked child)."""
        for obj in list(cls._objects):
            obj.reset_after_fork()


if hasattr(os, "register_at_fork"):  # not on Windows, where processes are not forked
    os.register_at_fork(
        before=AfterFork.wait_for_work,
        after_in_parent=AfterFork.release_after_fork,
        after_in_child=AfterFork.reset_all,
    )


class ForkSafeLock:
    """A :class:`threading.Lock` that a forked child gets back released.

    Use it as a context manager, or acquire and release its :attr:`lock` (read it at
    each use: a forked child gets a new one). It pickles and copies as a new lock.

    Parameters
    ----------
    fork_waits
        Make a fork wait until no other thread holds the lock (for work that a child
        could not take up again, such as an import); the lock is then re-entrant, so a
        fork from the thread holding it does not wait.

    Attributes
    ----------
    lock
        The lock itself.
    """

    __slots__ = ("__weakref__", "fork_waits", "lock", "taken_for_fork")

    #: Makes the lock (a new one in a forked child).
    _make_lock: ClassVar[Callable[[], Any]] = threading.Lock

    def __init__(self, *, fork_waits: bool = False) -> None:
        self.fork_waits = fork_waits
        self.lock = self._new_lock()
        self.taken_for_fork: Any = None
        AfterFork.track(self)
        if fork_waits:
            AfterFork.hold_during_fork(self)

    def _new_lock(self) -> Any:
        return threading.RLock() if self.fork_waits else type(self)._make_lock()

    def reset_after_fork(self) -> None:
        """Replace the lock by a new, released one (in a forked child)."""
        self.lock = self._new_lock()
        self.taken_for_fork = None

    def hold_for_fork(self) -> None:
        """Before a fork (``fork_waits`` locks): take the lock, waiting at most
        :data:`FORK_WAIT_SECONDS` for another thread to release it."""
        lock = self.lock
        if lock.acquire(timeout=FORK_WAIT_SECONDS):
            self.taken_for_fork = lock

    def release_after_fork(self) -> None:
        """After a fork, in the parent: release what :meth:`hold_for_fork` took."""
        lock, self.taken_for_fork = self.taken_for_fork, None
        if lock is not None:
            lock.release()

    def __enter__(self) -> Self:
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def __reduce__(self) -> tuple[Callable[..., ForkSafeLock], tuple[Any, ...]]:
        return (_new_fork_safe_lock, (type(self), self.fork_waits))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} at {id(self):#x}>"


def _new_fork_safe_lock(cls: type[ForkSafeLock], fork_waits: bool) -> ForkSafeLock:
    """A new lock of class ``cls`` (what an unpickled or copied lock is)."""
    return cls(fork_waits=fork_waits)


class StateLock(ForkSafeLock):
    """The lock of one piece of state that several compiled functions read and write.

    A re-entrant lock (:class:`threading.RLock`: a thread holding it may take it again,
    as an Op's ``perform`` calling another compiled function that updates the same state,
    or reading the state's value, does). Released in a forked child; pickled or copied, it
    is a new lock (the copy of a shared variable is a new piece of state).
    """

    __slots__ = ()

    _make_lock: ClassVar[Callable[[], Any]] = threading.RLock
