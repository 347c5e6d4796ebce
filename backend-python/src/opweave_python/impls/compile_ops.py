"""Python implementations of :mod:`opweave.compile.ops`: ``DeepCopyOp``, ``ViewOp`` and the
other ``TypeCastingOp`` subclasses (the identity)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.compile.ops import DeepCopyOp, TypeCastingOp, ViewOp
from opweave.graph.basic import Apply


def deep_copy_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Copy the input: ``.copy()`` where the value has one, else ``copy.deepcopy``."""
    (x,) = inputs
    if isinstance(x, np.ndarray):
        z = out[0][0]
        if isinstance(z, np.ndarray) and z.shape == x.shape and z.dtype == x.dtype and z is not x:
            np.copyto(z, x)
        else:
            out[0][0] = x.copy()
    elif hasattr(x, "copy") and callable(x.copy) and not isinstance(x, (int, float, complex, str)):
        out[0][0] = x.copy()
    else:
        out[0][0] = copy.deepcopy(x)


def view_perform(op: Any, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """Return the input itself."""
    out[0][0] = inputs[0]


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType(
    {
        DeepCopyOp: deep_copy_perform,
        ViewOp: view_perform,
        TypeCastingOp: view_perform,
    }
)
