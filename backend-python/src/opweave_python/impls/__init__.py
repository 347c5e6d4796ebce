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
import importlib
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

from opweave.link.implementations import ImplementationTable

#: The implementation modules (in this package), each with its ``PERFORMS`` table; imported
#: at the first lookup in :data:`PERFORMS`, so that loading the plugin imports none of them.
MODULE_NAMES = (
    "compile_ops",
    "scalar",
    "dimshuffle",
    "elemwise",
    "map_reduce",
    "blas",
    "reductions",
    "basic",
    "shape",
    "shape_ops",
    "subtensor",
    "special",
    "sort",
    "slinalg",
    "riccati",
    "nlinalg",
    "products",
    "constructors",
    "lu",
    "eigen",
    "schur",
    "linear_control",
    "extra_ops",
    "ifelse",
    "random",
    "builders",
    "scan",
    "raise_op",
    "type_other",
    "blockwise",
    "sparse",
    "printing",
    "fft",
    "fourier",
    "reshape",
    "conv",
)


def implementation_modules() -> list[ModuleType]:
    """The modules of :data:`MODULE_NAMES`, imported."""
    return [importlib.import_module(f"{__name__}.{name}") for name in MODULE_NAMES]


def _all_performs() -> Mapping[type, Callable[..., None]]:
    return {cls: fn for module in implementation_modules() for cls, fn in module.PERFORMS.items()}


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only; its modules are
#: imported at the first lookup.
PERFORMS = ImplementationTable("py", _all_performs, own_method="perform")


def perform_for(op: Any) -> Callable[..., None] | None:
    """Return ``op``'s NumPy implementation bound to it, or ``None`` if there is none."""
    fn = PERFORMS.lookup(op)
    return None if fn is None else functools.partial(fn, op)
