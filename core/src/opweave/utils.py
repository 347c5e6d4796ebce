"""PyTensor's ``pytensor.utils``: platform constants and small sequence helpers.

Standard library only, so every part of opweave may use it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "LOCAL_BITWIDTH",
    "PYTHON_INT_BITWIDTH",
    "difference",
    "flatten",
    "from_return_values",
    "to_return_values",
    "uniq",
]

#: The width in bits of a pointer on this platform (32 or 64).
LOCAL_BITWIDTH: int = struct.calcsize("P") * 8

#: The width in bits of a C ``long`` (NumPy's default integer on most platforms): 64 on
#: 64-bit Linux and macOS, 32 on Windows and 32-bit platforms.
PYTHON_INT_BITWIDTH: int = struct.calcsize("l") * 8


def to_return_values(values: Sequence[Any]) -> Any:
    """Return the only element of ``values``, or ``values`` itself when it has several
    (or none)."""
    return values[0] if len(values) == 1 else values


def from_return_values(values: Any) -> list[Any] | tuple[Any, ...]:
    """Return ``values`` if it is a list or tuple, else ``[values]`` (the inverse of
    :func:`to_return_values`)."""
    return values if isinstance(values, list | tuple) else [values]


def flatten(a: Any) -> list[Any]:
    """Return the leaves of nested lists and tuples ``a``, in order (``[a]`` for a leaf)."""
    if not isinstance(a, list | tuple):
        return [a]
    return [leaf for item in a for leaf in flatten(item)]


def uniq(seq: Iterable[Any]) -> list[Any]:
    """Return the elements of ``seq`` without repetitions, in the order of first appearance."""
    return list(dict.fromkeys(seq))


def difference(seq1: Iterable[Any], seq2: Iterable[Any]) -> list[Any]:
    """Return the elements of ``seq1`` that are not in ``seq2``, in ``seq1``'s order."""
    excluded = list(seq2)
    return [item for item in seq1 if item not in excluded]
