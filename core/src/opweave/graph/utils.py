"""Exceptions and small helpers shared by the graph modules."""

from __future__ import annotations

import linecache
import sys
import traceback
from abc import ABCMeta
from collections.abc import Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

# ``Scratchpad``, the attribute bag of ``tag``, is defined with the graph objects; it is
# re-exported here under PyTensor's path.
from opweave.graph.basic import Scratchpad as Scratchpad
from opweave.graph.trace import traces_of

if TYPE_CHECKING:
    from opweave.graph.basic import Apply, Variable

#: PyTensor's type variable for graph objects (an Apply node or a Variable).
T = TypeVar("T", bound="Apply | Variable")


class MethodNotDefined(Exception):
    """Raised by an optional contract method that a class does not implement.

    The C-linker methods of :class:`~opweave.graph.type.Type` and
    :class:`~opweave.graph.op.Op` raise it by default, so a backend can tell
    "not provided" apart from a real failure.
    """


class MissingInputError(Exception):
    """A graph needs a variable that was not given as an input."""

    def __init__(self, message: str, variable: object = None) -> None:
        super().__init__(message)
        self.variable = variable


class InconsistencyError(Exception):
    """A change to a :class:`FunctionGraph` would make it inconsistent."""


class NoImplementationError(NotImplementedError):
    """No installed backend implements an Op for the requested linker."""


def add_tag_trace(obj: object) -> object:
    """Hook kept for PyTensor compatibility; opweave records no creation traces."""
    return obj


def is_masked_array(value: object) -> bool:
    """Whether ``value`` is a NumPy masked array, without importing ``numpy.ma`` (a
    module NumPy loads on first use, in milliseconds): a process that never imported it
    holds no masked array."""
    masked = sys.modules.get("numpy.ma")
    return masked is not None and isinstance(value, masked.MaskedArray)


class MetaType(ABCMeta):
    """A metaclass checking a class's ``__props__`` (PyTensor's name for the metaclass of
    its Op and Type classes).

    opweave's :class:`~opweave.graph.op.Op` derives ``__eq__``, ``__hash__`` and
    ``__str__`` from ``__props__`` in ``__init_subclass__`` instead, so its classes do not
    need this metaclass; it serves code that names the type of such classes.

    Raises
    ------
    TypeError
        When a class defines ``__props__`` that is not a tuple of strings.
    """

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> MetaType:
        props = namespace.get("__props__")
        if props is not None and (
            not isinstance(props, tuple) or not all(isinstance(p, str) for p in props)
        ):
            raise TypeError(f"{name}.__props__ must be a tuple of attribute names")
        return super().__new__(mcs, name, bases, namespace)


class MetaObject(metaclass=MetaType):
    """A base class whose subclasses get :class:`MetaType`'s ``__props__`` check
    (PyTensor's name); ``!=`` is the negation of ``==``."""

    __slots__: list[str] = []

    def __ne__(self, other: object) -> bool:
        return not self == other


class AssocList:
    """A mapping that also accepts unhashable keys (PyTensor's name and contract).

    Hashable keys live in a dict; the others in a list of pairs, compared with ``==``.
    Reading a missing key gives ``None``.
    """

    def __init__(self) -> None:
        self._dict: dict[Any, Any] = {}
        self._list: list[tuple[Any, Any]] = []

    @staticmethod
    def _hashable(key: Any) -> bool:
        try:
            hash(key)
        except TypeError:
            return False
        return True

    def get(self, item: Any, default: Any = None) -> Any:
        """The value of ``item``, or ``default`` when it has none."""
        if self._hashable(item):
            return self._dict.get(item, default)
        for key, value in self._list:
            if key == item:
                return value
        return default

    def __getitem__(self, item: Any) -> Any:
        return self.get(item, None)

    def __setitem__(self, item: Any, value: Any) -> None:
        if self._hashable(item):
            self._dict[item] = value
            return
        for i, (key, _) in enumerate(self._list):
            if key == item:
                self._list[i] = (item, value)
                return
        self._list.append((item, value))

    def __delitem__(self, item: Any) -> None:
        if self._hashable(item):
            del self._dict[item]
            return
        for i, (key, _) in enumerate(self._list):
            if key == item:
                del self._list[i]
                return
        raise KeyError(item)

    def discard(self, item: Any) -> None:
        """Remove ``item`` if it is a key."""
        try:
            del self[item]
        except KeyError:
            pass

    def __contains__(self, item: Any) -> bool:
        if self._hashable(item):
            return item in self._dict
        return any(key == item for key, _ in self._list)

    def __len__(self) -> int:
        return len(self._dict) + len(self._list)

    def __repr__(self) -> str:
        return f"AssocList({self._dict}, {self._list})"


def simple_extract_stack(
    f: FrameType | None = None, limit: int | None = None, skips: Sequence[str] | None = None
) -> list[tuple[str | None, int, str, str | None]]:
    """The call stack from frame ``f`` (default: the caller's), outermost first, as
    ``(filename, lineno, function, line)`` tuples (PyTensor's name and contract).

    Parameters
    ----------
    f
        The innermost frame to record.
    limit
        How many frames at most (default: ``sys.tracebacklimit`` when set, else all).
    skips
        Path fragments: innermost frames whose file contains one are dropped, until the
        first frame that is kept (files under a ``tests`` path are always kept).
    """
    skips = list(skips or ())
    if f is None:
        f = sys._getframe().f_back
    if limit is None:
        limit = getattr(sys, "tracebacklimit", None)
    trace: list[tuple[str | None, int, str, str | None]] = []
    while f is not None and (limit is None or len(trace) < limit):
        filename, lineno, name = f.f_code.co_filename, f.f_lineno, f.f_code.co_name
        f = f.f_back
        if not trace and any(p in filename and "tests" not in filename for p in skips):
            continue
        line = linecache.getline(filename, lineno).strip() or None
        trace.append((filename, lineno, name, line))
    trace.reverse()
    return trace


def get_variable_trace_string(v: Any) -> str:
    """Where variable ``v`` was created, as printed stack traces (``""`` when no trace was
    recorded; the flag ``traceback__limit`` sets how many frames are recorded)."""
    traces = [t for t in traces_of(v) if t]
    if not traces:
        return ""
    parts = [" \nBacktrace when that variable is created:\n\n"]
    for i, trace in enumerate(traces):
        if len(traces) > 1:
            parts.append(f"trace {i}\n")
        parts.extend(traceback.format_list([tuple(frame[:4]) for frame in trace]))
    return "".join(parts)
