"""In-place elementwise computation: an ``Elemwise`` writes its output into an input.

:class:`InplaceElemwiseOptimizer` attaches a
:class:`~opweave.graph.features.DestroyHandler` and visits the ``Elemwise`` nodes in
execution order. For each output of a node it tries the inputs that could hold it (same
Type as the output, so neither broadcast nor of another dtype; not a constant; not a
graph input unless marked mutable) and replaces the node by
``Elemwise(scalar_op, {output: input})`` through ``fgraph.replace_all_validate``. The
DestroyHandler rejects (and the replacement is reverted) when the input is still needed
by a node that cannot run before, is a graph output, is (a view of) a graph input or a
constant, or is read again by the same node; the next candidate is then tried.

So the caller's arrays are never overwritten (unless passed as ``In(mutable=True)``) and
no output is the memory of an input because of this rewrite.

Registered in the ``inplace`` phase (after ``merge2``) as ``inplace_elemwise``, tags
``fast_run``, ``inplace``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.features import DestroyHandler, ReplaceValidate
from opweave.graph.rewriting import GraphRewriter
from opweave.graph.utils import InconsistencyError
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["InplaceElemwiseOptimizer", "register_inplace"]


def _candidates(fgraph: FunctionGraph, node: Apply, out: Variable, used: set[int]) -> list[int]:
    """The inputs of ``node`` that could hold ``out`` (before asking the DestroyHandler)."""
    found = []
    for i, inp in enumerate(node.inputs):
        if i in used or inp.type != out.type or isinstance(inp, Constant):
            continue
        if inp in fgraph.inputs and not getattr(inp.tag, "mutable", False):
            continue
        if inp in fgraph.outputs:
            continue
        found.append(i)
    return found


class InplaceElemwiseOptimizer(GraphRewriter):
    """Turns ``Elemwise`` nodes into their in-place versions where it is safe.

    See the module docstring.

    Parameters
    ----------
    name
        A display name.

    Attributes
    ----------
    replaced
        How many nodes the last :meth:`apply` made in place.
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self.replaced = 0

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate and a DestroyHandler."""
        fgraph.attach_feature(ReplaceValidate())
        fgraph.attach_feature(DestroyHandler())

    def apply(self, fgraph: FunctionGraph) -> int:
        """Make every ``Elemwise`` node in place where allowed; return how many were."""
        self.replaced = 0
        order = fgraph.toposort()
        handler: DestroyHandler = fgraph.destroy_handler
        # Each replacement reads the same inputs as the node it replaces and takes its
        # position, so ``order`` stays a topological order of the data dependencies: the
        # handler checks the destroy orderings against it instead of sorting the graph
        # again for every candidate (which made this pass quadratic in the graph).
        handler.order_hint = {node: at for at, node in enumerate(order)}
        try:
            for node in order:
                if node not in fgraph.apply_nodes:
                    continue
                op = node.op
                if not isinstance(op, Elemwise) or op.inplace_pattern:
                    continue
                if not all(isinstance(o.type, TensorType) for o in node.outputs):
                    continue
                if self._make_inplace(fgraph, node, handler.order_hint):
                    self.replaced += 1
        finally:
            handler.order_hint = None
        return self.replaced

    def _make_inplace(self, fgraph: FunctionGraph, node: Apply, order: dict[Apply, int]) -> bool:
        op = cast(Elemwise, node.op)  # apply() passes the nodes of Elemwise Ops only
        pattern: dict[int, int] = {}
        current = node
        for o in range(len(node.outputs)):
            for i in _candidates(fgraph, current, current.outputs[o], set(pattern.values())):
                trial = {**pattern, o: i}
                # ``_candidates`` keeps inputs of the output's own Type only, which is all
                # ``make_node`` would check of an in-place pattern: build the node directly.
                new_op = Elemwise(op.scalar_op, trial, name=op.name)
                new_node = Apply(new_op, list(current.inputs), [v.type() for v in current.outputs])
                pairs = list(zip(current.outputs, new_node.outputs, strict=True))
                order[new_node] = order[current]
                try:
                    fgraph.replace_all_validate(pairs, reason="inplace_elemwise")
                except InconsistencyError:
                    del order[new_node]
                    continue
                pattern = trial
                current = new_node
                break
        return bool(pattern)


def register_inplace(db: RewriteDatabase) -> None:
    """Register :class:`InplaceElemwiseOptimizer` in the ``inplace`` phase of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db["inplace"].register(
        "inplace_elemwise",
        InplaceElemwiseOptimizer(name="inplace_elemwise"),
        "fast_run",
        "inplace",
    )
