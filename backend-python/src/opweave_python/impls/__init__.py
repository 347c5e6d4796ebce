"""NumPy implementations of the core's standard Ops, looked up by Op class.

Each module here holds a read-only ``PERFORMS`` table (Op class ->
``perform(op, node, inputs, output_storage)``); this package merges them.

An Op's implementation lives in the module named after the core module that defines the
Op: ``impls/elemwise.py`` for :mod:`opweave.tensor.elemwise`, ``impls/blas.py`` for
:mod:`opweave.tensor.blas`, ``impls/compile_ops.py`` for :mod:`opweave.compile.ops`, and
so on. Two exceptions: ``impls/scalar.py`` is named after the whole package
:mod:`opweave.scalar` and covers all of its modules (``basic``, ``composite``, ``math``),
whose scalar implementations are one table that Elemwise also uses; ``impls/random.py``
covers the whole package :mod:`opweave.tensor.random`.
``tests/backend_python/test_impl_modules.py`` checks the rule.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from opweave.link.implementations import ImplementationTable
from opweave_python.impls import (
    basic,
    blas,
    builders,
    compile_ops,
    dimshuffle,
    elemwise,
    extra_ops,
    ifelse,
    linalg_constructors,
    linalg_control,
    linalg_eigen,
    linalg_lu,
    linalg_products,
    linalg_schur,
    map_reduce,
    nlinalg,
    random,
    reductions,
    scalar,
    scan,
    shape,
    slinalg,
    slinalg_riccati,
    sort,
    special,
    subtensor,
)

#: The implementation modules, each with its ``PERFORMS`` table.
MODULES = (
    compile_ops,
    scalar,
    dimshuffle,
    elemwise,
    map_reduce,
    blas,
    reductions,
    basic,
    shape,
    subtensor,
    special,
    sort,
    slinalg,
    slinalg_riccati,
    nlinalg,
    linalg_products,
    linalg_constructors,
    linalg_lu,
    linalg_eigen,
    linalg_schur,
    linalg_control,
    extra_ops,
    ifelse,
    random,
    builders,
    scan,
)

#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS = ImplementationTable(
    "py",
    {cls: fn for module in MODULES for cls, fn in module.PERFORMS.items()},
    own_method="perform",
)


def perform_for(op: Any) -> Callable[..., None] | None:
    """Return ``op``'s NumPy implementation bound to it, or ``None`` if there is none."""
    fn = PERFORMS.lookup(op)
    return None if fn is None else functools.partial(fn, op)
