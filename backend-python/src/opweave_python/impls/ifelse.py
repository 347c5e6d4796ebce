"""Python implementation of :mod:`opweave.ifelse`: ``IfElse``.

The implementation returns the selected branch (a copy, or the ``then`` values themselves
for ``as_view``). Laziness is not its business: the thunk-loop linkers wrap its thunk
(:func:`opweave.link.lazy.make_lazy_thunk`) and run it once the condition and the
selected branch are computed, so the other branch's cells may hold ``None``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.ifelse import IfElse


def ifelse_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Set each output to its ``then`` value when the condition is nonzero, else to its
    ``else`` value; copied unless ``as_view`` and the ``then`` branch is taken."""
    n = op.n_outs
    take_then = bool(inputs[0] != 0)
    chosen = inputs[1 : 1 + n] if take_then else inputs[1 + n :]
    view = op.as_view and take_then
    for cell, value in zip(out, chosen, strict=True):
        if view:
            cell[0] = value
        elif isinstance(value, np.ndarray):
            cell[0] = value.copy()
        else:
            cell[0] = copy.deepcopy(value)


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({IfElse: ifelse_perform})
