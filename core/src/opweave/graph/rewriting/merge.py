"""Merging duplicate computations: "the merging of duplicate calculations".

Two :class:`~opweave.graph.basic.Apply` nodes are duplicates when their Ops compare
equal and they have the very same inputs, in the same order; two constants are
duplicates when they have the same :meth:`~opweave.graph.basic.Constant.signature`
and :meth:`~opweave.graph.basic.Constant.equals` each other. :class:`MergeOptimizer`
keeps the first of each group (in topological order) and points the clients of the
others at it. Merging constants first lets nodes that used different but equal
constants merge too; walking the nodes in topological order makes a single pass reach
the fixed point (a merge only changes nodes that come later).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.features import ReplaceValidate
from opweave.graph.rewriting.graph import GraphRewriter
from opweave.graph.traversal import io_toposort
from opweave.graph.utils import InconsistencyError

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = ["MergeOptimizer"]


def _replace(fgraph: FunctionGraph, pairs: list[tuple[Variable, Variable]], reason: str) -> bool:
    if hasattr(fgraph, "replace_all_validate"):
        try:
            fgraph.replace_all_validate(pairs, reason=reason)
        except InconsistencyError:
            return False
    else:
        fgraph.replace_all(pairs, reason=reason)
    return True


class MergeOptimizer(GraphRewriter):
    """Merges equal constants and duplicate nodes (see the module docstring).

    Nodes whose Ops differ, or whose inputs are different variables (even if they
    compute the same value), are never merged. A merge that the graph's validators
    reject (for example two nodes destroying their inputs) is undone and skipped.

    Attributes
    ----------
    merged_constants, merged_nodes
        How many constants and nodes the last :meth:`apply` merged away.
    """

    def __init__(self, name: str | None = None) -> None:
        self.name = name
        self.merged_constants = 0
        self.merged_nodes = 0

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate."""
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph: FunctionGraph) -> int:
        """Merge; return the number of constants and nodes merged away."""
        self.merged_constants = self._merge_constants(fgraph)
        self.merged_nodes = self._merge_nodes(fgraph)
        return self.merged_constants + self.merged_nodes

    def _merge_constants(self, fgraph: FunctionGraph) -> int:
        seen: dict[Any, list[Constant]] = {}
        merged = 0
        for const in self._constants_in_order(fgraph):
            if const not in fgraph.variables:
                continue
            key = const.signature()
            group = seen.setdefault(key, [])
            keep = next((c for c in group if c.equals(const)), None)
            if keep is None:
                group.append(const)
                continue
            if _replace(fgraph, [(const, keep)], reason="merge constants"):
                merged += 1
        return merged

    @staticmethod
    def _constants_in_order(fgraph: FunctionGraph) -> list[Constant]:
        found: dict[Constant, None] = {}
        for node in io_toposort(fgraph.inputs, fgraph.outputs):
            for inp in node.inputs:
                if isinstance(inp, Constant) and inp not in fgraph.inputs:
                    found[inp] = None
        for out in fgraph.outputs:
            if isinstance(out, Constant) and out not in fgraph.inputs:
                found[out] = None
        return list(found)

    def _merge_nodes(self, fgraph: FunctionGraph) -> int:
        seen: dict[Any, Apply] = {}
        unhashable: list[Apply] = []
        merged = 0
        for node in io_toposort(fgraph.inputs, fgraph.outputs):
            if node not in fgraph.apply_nodes:
                continue
            keep = self._find_equal(node, seen, unhashable)
            if keep is None or keep not in fgraph.apply_nodes:
                self._remember(node, seen, unhashable)
                continue
            if any(a.type != b.type for a, b in zip(node.outputs, keep.outputs, strict=True)):
                continue
            pairs = list(zip(node.outputs, keep.outputs, strict=True))
            if _replace(fgraph, pairs, reason="merge nodes"):
                merged += 1
        return merged

    @staticmethod
    def _key(node: Apply) -> tuple[Any, ...]:
        return (node.op, len(node.outputs), *(id(i) for i in node.inputs))

    def _find_equal(
        self, node: Apply, seen: dict[Any, Apply], unhashable: list[Apply]
    ) -> Apply | None:
        try:
            other = seen.get(self._key(node))
        except TypeError:
            other = None
        if other is not None and self._same(node, other):
            return other
        return next((n for n in unhashable if self._same(node, n)), None)

    def _remember(self, node: Apply, seen: dict[Any, Apply], unhashable: list[Apply]) -> None:
        try:
            seen[self._key(node)] = node
        except TypeError:
            unhashable.append(node)

    @staticmethod
    def _same(a: Apply, b: Apply) -> bool:
        return (
            a is not b
            and len(a.inputs) == len(b.inputs)
            and len(a.outputs) == len(b.outputs)
            and all(x is y for x, y in zip(a.inputs, b.inputs, strict=True))
            and bool(a.op == b.op)
        )
