"""The ``jax`` linker: a graph lowered to one ``jax.jit`` function, run by XLA.

Linking asks the core's resolver for every node's lowering (:mod:`opweave_jax.program`),
builds one Python function of ``jax.numpy`` / ``jax.lax`` calls from them and wraps it in
``jax.jit`` once. A call passes the input cells' values (filtered by the core, as on every
linker) to the jitted function, which traces and compiles on the first call for each
combination of input shapes and dtypes, and stores NumPy arrays (writable copies) in the
output cells, so that results compare with other linkers' and may be changed by the caller.

64-bit values: linking turns JAX's ``jax_enable_x64`` flag on, process-wide, since opweave's
Types fix their dtypes (``float64`` and ``int64`` are common, and shapes are ``int64``); JAX
would otherwise compute them in 32 bits.

Shared variables and updates work by value: their NumPy values are passed in and the new
values come back as NumPy arrays (no device-resident storage, no buffer donation).

This module imports no JAX: the plugin hands :class:`JAXLinker` to every opweave user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.link.basic import Linker
from opweave.scalar.type import ScalarType

__all__ = ["JAXLinker", "enable_x64"]


def enable_x64() -> None:
    """Turn on JAX's 64-bit mode (``jax_enable_x64``), once per process."""
    import jax

    if not jax.config.read("jax_enable_x64"):
        jax.config.update("jax_enable_x64", True)


def _to_host(value: Any, var: Variable) -> Any:
    """``value`` as a NumPy array of ``var``'s dtype that the caller owns."""
    dtype = getattr(var.type, "dtype", None)
    out = np.array(value, dtype=dtype, copy=True)
    return out[()] if isinstance(var.type, ScalarType) else out


class JAXLinker(Linker):
    """``linker='jax'`` (mode ``JAX``): the whole graph as one ``jax.jit`` function.

    ``priority`` is negative: ``linker='auto'`` never picks it.
    """

    name: ClassVar[str] = "jax"
    priority: ClassVar[int] = -10
    compile_priority: ClassVar[int] = -10

    def make_all(
        self,
        input_storage: list[list[Any]] | None = None,
        output_storage: list[list[Any]] | None = None,
        storage_map: dict[Variable, list[Any]] | None = None,
    ) -> tuple[Callable[[], Any], list[list[Any]], list[list[Any]], list[Any], list[Apply]]:
        """Lower and jit the accepted graph; see :meth:`opweave.link.basic.Linker.make_all`.

        Raises
        ------
        opweave.graph.utils.NoImplementationError
            For a node whose Op has no ``jax`` lowering (the resolver's message).
        """
        import jax

        from opweave_jax.program import GraphProgram

        fgraph, order, ins, outs, _smap = self.wire_storage(
            input_storage, output_storage, storage_map
        )
        enable_x64()
        program = GraphProgram(fgraph, order)
        jitted = jax.jit(program)
        outputs = list(fgraph.outputs)

        def run() -> None:
            results, conditions = jitted(*[cell[0] for cell in ins])
            for key, condition in conditions.items():
                if not bool(condition):
                    check = program.checks[key]
                    raise check.exc_type(check.msg)
            for cell, var, value in zip(outs, outputs, results, strict=True):
                cell[0] = _to_host(value, var)

        run.impl = "jax"  # type: ignore[attr-defined]
        run.jitted = jitted  # type: ignore[attr-defined]
        run.program = program  # type: ignore[attr-defined]
        self.jitted = jitted
        return run, ins, outs, [run], order
