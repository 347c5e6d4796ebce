"""The error the ``jax`` linker raises for a node it has no lowering for.

The core's resolver words its refusal for every backend alike (what was asked, which
distribution to install); the ``jax`` linker says instead which Op it cannot lower and
how to compile the graph anyway: with ``config.jax__python_fallback`` (the node's Python
kernel through ``jax.pure_callback``) or with another linker. The resolver's own error is
chained to it (``__cause__``).
"""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply
from opweave.graph.utils import NoImplementationError
from opweave.link.resolver import Resolution

__all__ = ["HOW_TO_PROCEED", "no_lowering"]

#: What to do about a node without a lowering (the end of the message).
HOW_TO_PROCEED = (
    "To compile this graph anyway, either set config.jax__python_fallback=True "
    "(OPWEAVE_FLAGS=jax__python_fallback=True, or "
    "opweave.config.change_flags(jax__python_fallback=True)) to run the node's Python "
    "kernel through jax.pure_callback, on the host and not differentiable by JAX, or "
    "compile with another linker (mode='FAST_RUN', or linker='cvm' or 'py')."
)


def _which(op: Any, node: Apply) -> str:
    name = type(op).__name__
    if op is node.op:
        return f"Op {name} ({op}, node {node})"
    return f"Op {name} ({op}, inside the {type(node.op).__name__} node {node})"


def no_lowering(found: Resolution, op: Any, node: Apply) -> NoImplementationError:
    """The error saying that the ``jax`` linker has no lowering for ``op`` (of ``node``),
    what the resolver found instead (``found``, not a kernel), and how to proceed.

    Parameters
    ----------
    found
        The resolver's answer for ``op`` on backend ``"jax"``.
    op
        The Op asked: ``node.op``, or an Op inside it (the scalar Op of an ``Elemwise``).
    node
        The node.

    Returns
    -------
    NoImplementationError
        The error to raise (from the resolver's own).
    """
    if found.what == "fallback":
        where = f" on {found.falls_back_to!r}" if found.falls_back_to else ""
        why = (
            f"{found.source} runs {op} not on backend 'jax' but falls back to another "
            f"implementation{where}, which the jax linker cannot call inside jax.jit"
        )
    else:
        asked = ", ".join(found.asked) or "nothing"
        why = f"nothing installed implements {op} for backend 'jax' (asked: {asked})"
    return NoImplementationError(
        f"the jax linker has no lowering for {_which(op, node)}: {why}. {HOW_TO_PROCEED}"
    )
