"""NumPy implementations of the core's standard Ops, looked up by Op class.

Each module here holds a read-only ``PERFORMS`` table (Op class ->
``perform(op, node, inputs, output_storage)``); this package merges them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from opweave.link.implementations import ImplementationTable
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
PERFORMS = ImplementationTable(
    "py",
    {
        **compile_ops.PERFORMS,
        **scalar.PERFORMS,
        **elemwise.PERFORMS,
        **math.PERFORMS,
        **basic.PERFORMS,
        **shape.PERFORMS,
        **subtensor.PERFORMS,
        **special.PERFORMS,
    },
    own_method="perform",
)


def perform_for(op: Any) -> Callable[..., None] | None:
    """Return ``op``'s NumPy implementation bound to it, or ``None`` if there is none."""
    fn = PERFORMS.lookup(op)
    return None if fn is None else functools.partial(fn, op)
