"""What lets the ``c`` linker compile each kind of node once: a rewrite lifting the float
constants of fused nodes into inputs.

The ``c`` linker writes one C function per kind of node (:class:`opweave_c.codegen.BlockBuilder`
with ``share_kinds``), called from the whole-graph function. Fusion writes constants into the
fused node's code, so a graph of many blocks that differ only by a constant would still get
one function per block; the rewrite ``c_lift_fused_constants`` (tag ``c_lift_constants``,
which the ``c`` linker adds to its compilations through its ``rewrite_tags``) replaces such
a node by the equivalent node taking those constants as one-element inputs
(:func:`~opweave_c.linkers.lifted_constants.lift_float_constants`, which ``cvm`` applies per
node at link time). Runs right after fusion, before the in-place pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import in2out, node_rewriter
from opweave.tensor.elemwise import Elemwise
from opweave_c.linkers.lifted_constants import lift_float_constants

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["LIFT_TAG", "local_lift_fused_constants", "register_shared_kind_rewrites"]

#: The tag of the rewrite; the ``c`` linker's ``rewrite_tags``.
LIFT_TAG = "c_lift_constants"


@node_rewriter([Elemwise])
def local_lift_fused_constants(fgraph: FunctionGraph, node: Apply) -> list[Variable] | None:
    """``Elemwise{Composite{... 1.5 ...}}(x)`` -> ``Elemwise{Composite{... i1 ...}}(x, [1.5])``."""
    lifted = lift_float_constants(node)
    if lifted is None:
        return None
    return list(lifted[0].outputs)


def register_shared_kind_rewrites(db: RewriteDatabase) -> None:
    """Register ``c_lift_fused_constants`` into ``db`` (after fusion, before in-place)."""
    rewriter: Any = in2out(local_lift_fused_constants)
    db.register("c_lift_fused_constants", rewriter, LIFT_TAG, position=3.7)
