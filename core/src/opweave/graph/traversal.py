"""Walking graphs: ancestors, roots, the part between inputs and outputs, topological orders.

PyTensor keeps these functions in ``pytensor.graph.traversal``; so does opweave (the old
names in :mod:`opweave.graph.basic` still work and give the same functions). The walks
that follow only ``owner`` and ``inputs`` are defined in :mod:`opweave.graph.walks`, below
:mod:`opweave.graph.basic`, which uses them; the three that tell variables, constants and
nodes apart (:func:`explicit_graph_inputs`, :func:`apply_depends_on`,
:func:`variable_depends_on`) are defined in :mod:`opweave.graph.basic`, beside those
classes.

Walks that return many values are generators, except the topological orders
:func:`io_toposort` and :func:`general_toposort` and :func:`truncated_graph_inputs`, which
return lists.

Depth-first walks visit the inputs of a node from left to right, so
``graph_inputs([(x + y) * z])`` yields ``x, y, z``. Walking stops at *blockers*: a
blocker is yielded but what computes it is not visited.
"""

from __future__ import annotations

from opweave.graph.basic import apply_depends_on, explicit_graph_inputs, variable_depends_on
from opweave.graph.walks import (
    ancestors,
    apply_ancestors,
    applys_between,
    general_toposort,
    get_var_by_name,
    graph_inputs,
    io_toposort,
    orphans_between,
    toposort,
    toposort_with_orderings,
    truncated_graph_inputs,
    variable_ancestors,
    vars_between,
    walk,
    walk_toposort,
)

__all__ = [
    "ancestors",
    "apply_ancestors",
    "apply_depends_on",
    "applys_between",
    "explicit_graph_inputs",
    "general_toposort",
    "get_var_by_name",
    "graph_inputs",
    "io_toposort",
    "orphans_between",
    "toposort",
    "toposort_with_orderings",
    "truncated_graph_inputs",
    "variable_ancestors",
    "variable_depends_on",
    "vars_between",
    "walk",
    "walk_toposort",
]
