"""Exceptions and small helpers shared by the graph modules."""

from __future__ import annotations

import sys


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
