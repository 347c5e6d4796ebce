"""NumPy implementations of the core's standard Ops, looked up by Op class."""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from opweave.compile.ops import DeepCopyOp, Shape, Shape_i, ViewOp
from opweave_python.impls import compile_ops

#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        DeepCopyOp: compile_ops.deep_copy_perform,
        ViewOp: compile_ops.view_perform,
        Shape: compile_ops.shape_perform,
        Shape_i: compile_ops.shape_i_perform,
    }
)


def perform_for(op: Any) -> Callable[..., None] | None:
    """Return ``op``'s NumPy implementation bound to it, or ``None`` if there is none."""
    for cls in type(op).__mro__:
        fn = PERFORMS.get(cls)
        if fn is not None:
            return functools.partial(fn, op)
    return None
