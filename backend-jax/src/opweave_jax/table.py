"""The ``jax`` lowerings as the core's :class:`~opweave.link.implementations
.ImplementationTable` (Op class -> factory, looked up through the Op's MRO).

A factory is called once per node as ``factory(op, node)`` (the table's
``implementation_of``: :func:`lowering_of`) and returns a function of JAX arrays. The
entries live in :mod:`opweave_jax.lowerings`, imported (with JAX) at the first lookup, not
when the plugin loads.

The table's scope is the core Op classes the entries cover: what this backend lowers so far.
The plugin's answer says ``"fallback": False``, so ``python -m opweave info --ops`` reports
the other classes as missing on this backend: the ``jax`` linker refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from opweave.graph.basic import Apply
from opweave.link.implementations import ImplementationTable, core_op_classes

__all__ = ["JAX_OPS", "lowering_of"]

#: The lowering modules, each with its ``LOWERINGS``.
_MODULES = (
    "scalar",
    "special",
    "complex",
    "elemwise",
    "reductions",
    "shape",
    "basic",
    "blas",
    "subtensor",
    "extra",
    "checks",
    "random",
    "control",
    "blockwise",
    "linalg",
    "linalg_decompositions",
    "linalg_solvers",
    "extra_more",
    "special_more",
    "special_bessel",
    "special_inverse",
    "special_hyp2f1",
    "special_grads",
    "rng_consumer",
    "debug",
    "sparse",
    "sparse_more",
    "reshape",
    "signal",
    "fft",
)


def _entries() -> Mapping[type, Any]:
    from importlib import import_module

    found: dict[type, Any] = {}
    for name in _MODULES:
        found.update(import_module(f"opweave_jax.lowerings.{name}").LOWERINGS)
    return found


def lowering_of(entry: Callable[[Any, Apply], Any], op: Any, node: Apply) -> Any:
    """The function of JAX arrays ``entry`` (a factory) makes for ``op``'s ``node``."""
    return entry(op, node)


def _scope() -> list[type]:
    """The core Op classes this backend lowers so far (those its entries cover through the
    MRO): the rest are refused, and reported missing (``docs/backend-jax.md``, "Limits")."""
    covered = tuple(JAX_OPS)
    return [cls for cls in core_op_classes() if issubclass(cls, covered)]


#: Op class -> factory. Read-only.
JAX_OPS = ImplementationTable("jax", _entries, scope=_scope)
