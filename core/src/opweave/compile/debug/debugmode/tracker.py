"""A FunctionGraph feature recording what the rewrites replaced, so DebugMode can check it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opweave.graph.basic import Apply, Variable
from opweave.graph.features import Feature

if TYPE_CHECKING:
    from opweave.graph.fg import ClientNode, FunctionGraph

__all__ = ["Replacement", "ReplacementTracker"]


@dataclass(frozen=True)
class Replacement:
    """One replacement made by a rewrite: ``old`` was replaced by ``new`` because of ``reason``."""

    old: Variable
    new: Variable
    reason: str | None


class ReplacementTracker(Feature):
    """Records every ``on_change_input`` replacement and every node ever in the graph.

    Replacements undone by ``History.revert`` (a rewrite whose result failed validation)
    are forgotten. Nodes that leave the graph stay recorded: DebugMode still computes
    them, so that the variables that were replaced keep a value to compare with their
    replacements.

    Attributes
    ----------
    nodes
        Every Apply node seen in the graph since attachment, in order of appearance.
    """

    def __init__(self) -> None:
        self._events: list[tuple[ClientNode, int, Variable, Variable, str | None]] = []
        self._nodes: dict[Apply, None] = {}

    @property
    def nodes(self) -> list[Apply]:
        """Every node seen in the graph since attachment."""
        return list(self._nodes)

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Record the nodes already in the graph."""
        for node in fgraph.toposort():
            self._nodes[node] = None

    def on_import(self, fgraph: FunctionGraph, node: Apply, reason: str | None) -> None:
        """Record a node entering the graph."""
        self._nodes[node] = None

    def on_change_input(
        self,
        fgraph: FunctionGraph,
        node: ClientNode,
        i: int,
        old_var: Variable,
        new_var: Variable,
        reason: str | None = None,
    ) -> None:
        """Record a replacement, or forget the one a ``revert(...)`` undoes."""
        if isinstance(reason, str) and reason.startswith("revert("):
            for k in range(len(self._events) - 1, -1, -1):
                e_node, e_i, e_old, e_new, _ = self._events[k]
                if e_node is node and e_i == i and e_old is new_var and e_new is old_var:
                    del self._events[k]
                    break
            return
        self._events.append((node, i, old_var, new_var, reason))

    def replacements(self) -> list[Replacement]:
        """Return the replacements still in effect, each ``(old, new)`` pair once, in order."""
        seen: set[tuple[int, int]] = set()
        result = []
        for _node, _i, old, new, reason in self._events:
            key = (id(old), id(new))
            if key in seen:
                continue
            seen.add(key)
            result.append(Replacement(old, new, reason))
        return result
