"""NumPy implementations of the core's standard Ops, looked up by Op class.

Each module here holds a read-only ``PERFORMS`` table (Op class ->
``perform(op, node, inputs, output_storage)``); this package merges them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from opweave_python.impls import (
    basic,
    compile_ops,
    elemwise,
    math,
    scalar,
    shape,
    special,
    subtensor,
)

#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        **compile_ops.PERFORMS,
        **scalar.PERFORMS,
        **elemwise.PERFORMS,
        **math.PERFORMS,
        **basic.PERFORMS,
        **shape.PERFORMS,
        **subtensor.PERFORMS,
        **special.PERFORMS,
    }
)


def perform_for(op: Any) -> Callable[..., None] | None:
    """Return ``op``'s NumPy implementation bound to it, or ``None`` if there is none."""
    for cls in type(op).__mro__:
        fn = PERFORMS.get(cls)
        if fn is not None:
            return functools.partial(fn, op)
    return None
