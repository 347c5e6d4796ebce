"""Python implementations of :mod:`opweave.tensor.type_other`: ``MakeSlice``."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.type_other import MakeSlice


def _bound(value: Any) -> Any:
    """A 0-d integer array as a Python int; ``None`` as it is."""
    return None if value is None else int(value)


def make_slice_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """``slice(start, stop, step)``."""
    out[0][0] = slice(*(_bound(v) for v in inputs))


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({MakeSlice: make_slice_perform})
