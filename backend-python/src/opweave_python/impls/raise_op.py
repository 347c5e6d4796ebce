"""Python implementations of :mod:`opweave.raise_op`: ``CheckAndRaise`` and its subclasses."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.raise_op import CheckAndRaise


def check_and_raise_perform(
    op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """Pass the value through (as a view); raise ``op.exc_type(op.msg)`` when a condition
    is false."""
    value, *conds = inputs
    if not all(conds):
        raise op.exc_type(op.msg)
    out[0][0] = value


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({CheckAndRaise: check_and_raise_perform})
