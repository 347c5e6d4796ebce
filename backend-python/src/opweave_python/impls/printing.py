"""Python implementation of :mod:`opweave.printing`'s ``Print``: the identity that calls its
``global_fn`` (by default, printing the value) each time it runs."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.printing import Print


def print_perform(op: Print, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Return the input itself, after ``op.global_fn(op, value)``."""
    (x,) = inputs
    out[0][0] = x
    op.global_fn(op, x)


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({Print: print_perform})
