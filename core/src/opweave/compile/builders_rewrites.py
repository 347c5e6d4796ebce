"""The rewrite that inlines ``OpFromGraph(..., inline=True)`` nodes.

``inline_ofg_expansion`` replaces each node of an inline
:class:`~opweave.compile.builders.OpFromGraph` by a copy of its inner graph computed from
the node's inputs, so the compiled function has no such node and the inner graph is
rewritten (and linked, in C where it can be) with the rest. As in PyTensor it runs before
everything else (the top-level entry ``inline_ofg_expansion`` at position -0.01, tags
``fast_compile`` and ``fast_run``); :func:`register_inline_ofg` is called by the core's
standard rewrites (:mod:`opweave.tensor.rewriting.plugin`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opweave.compile.builders import OpFromGraph
from opweave.graph.basic import Apply, Variable
from opweave.graph.replace import clone_replace
from opweave.graph.rewriting import in2out, node_rewriter

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["inline_ofg_expansion", "register_inline_ofg"]


@node_rewriter([OpFromGraph])
def inline_ofg_expansion(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """Replace a node of an ``OpFromGraph`` with ``inline=True`` by its inner graph."""
    op = node.op
    if not isinstance(op, OpFromGraph) or not op.is_inline:
        return False
    replace = dict(zip(op.inner_inputs, node.inputs, strict=True))
    return list(clone_replace(op.inner_outputs, replace=replace))


def register_inline_ofg(db: RewriteDatabase) -> None:
    """Register ``inline_ofg_expansion`` in ``db``, before every phase.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db.register(
        "inline_ofg_expansion",
        in2out(inline_ofg_expansion, name="inline_ofg_expansion"),
        "fast_compile",
        "fast_run",
        position=-0.01,
    )
