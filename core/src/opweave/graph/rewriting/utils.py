"""Running the standard rewrites on a graph outside a compilation.

:func:`rewrite_graph` (PyTensor's name and contract) rewrites variables or a
:class:`~opweave.graph.fg.FunctionGraph` with a query of the rewrite database a
compilation would build (the standard phases and every plugin's rewrites, see
:func:`~opweave.graph.rewriting.db.build_rewrite_database`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, cast

from opweave.graph.basic import Apply, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting.db import RewriteDatabaseQuery, build_rewrite_database
from opweave.graph.rewriting.graph import GraphRewriter

__all__ = ["get_clients_at_depth", "rewrite_graph", "rewrite_subgraph"]


def _outputs_of(graph: Any) -> list[Variable]:
    if isinstance(graph, Variable):
        return [graph]
    if isinstance(graph, Sequence) and not isinstance(graph, str):
        outputs = list(graph)
        for i, out in enumerate(outputs):
            if not isinstance(out, Variable):
                raise TypeError(
                    f"rewrite_graph: graph[{i}] is {type(out).__name__}, expected a Variable"
                )
        return outputs
    raise TypeError(
        "rewrite_graph: graph must be a Variable, a sequence of Variables or a FunctionGraph, "
        f"got {type(graph).__name__}"
    )


def rewrite_graph(
    graph: Variable | Sequence[Variable] | FunctionGraph,
    include: Sequence[str] = ("canonicalize",),
    custom_rewrite: GraphRewriter | None = None,
    clone: bool = False,
    **kwargs: Any,
) -> Variable | list[Variable] | FunctionGraph:
    """Rewrite ``graph`` with the rewrites selected by ``include`` (and ``kwargs``).

    Parameters
    ----------
    graph
        A variable, a sequence of variables, or a :class:`FunctionGraph` (rewritten in
        place).
    include
        Tags selecting the entries of the rewrite database (default: the
        ``canonicalize`` phase).
    custom_rewrite
        A graph rewriter run after the selected rewrites.
    clone
        Rewrite a copy of the variables' graph rather than the graph itself (the
        ``FunctionGraph`` is built with ``clone=clone``).
    **kwargs
        Further arguments of :class:`~opweave.graph.rewriting.db.RewriteDatabaseQuery`
        (``exclude``, ``require``, ``subquery``, ``position_cutoff``).

    Returns
    -------
    Variable, list of Variable or FunctionGraph
        The rewritten form of ``graph``, of the same kind.

    Raises
    ------
    TypeError
        If ``graph`` is not a variable, a sequence of variables or a FunctionGraph, or
        ``custom_rewrite`` is not a graph rewriter.
    """
    if custom_rewrite is not None and not isinstance(custom_rewrite, GraphRewriter):
        raise TypeError(
            "rewrite_graph: custom_rewrite must be a GraphRewriter, got "
            f"{type(custom_rewrite).__name__}"
        )
    if isinstance(graph, FunctionGraph):
        fgraph = graph
    else:
        fgraph = FunctionGraph(outputs=_outputs_of(graph), clone=clone)
    query = RewriteDatabaseQuery(include=include, **kwargs)
    # The top-level database runs its phases in sequence: its query is a graph rewriter.
    cast(GraphRewriter, build_rewrite_database().query(query)).rewrite(fgraph)
    if custom_rewrite is not None:
        custom_rewrite.rewrite(fgraph)
    if isinstance(graph, FunctionGraph):
        return fgraph
    if isinstance(graph, Variable):
        return fgraph.outputs[0]
    return list(fgraph.outputs)


def rewrite_subgraph(
    outputs: Sequence[Variable],
    frontier: Iterable[Variable],
    include: Sequence[str] = ("canonicalize",),
    **kwargs: Any,
) -> list[Variable]:
    """Rewrite the graph between ``frontier`` and ``outputs`` on its own, in place.

    The ``frontier`` variables are detached from their owners for the rewrite, so they
    act as the inputs of the subgraph: the rewrites neither see nor change what lies
    behind them. ``outputs`` must not belong to a :class:`FunctionGraph`.

    Parameters
    ----------
    outputs
        The outputs of the subgraph.
    frontier
        Variables where the subgraph stops.
    include, **kwargs
        As for :func:`rewrite_graph`.

    Returns
    -------
    list of Variable
        The rewritten outputs.
    """
    saved = [(v, v.owner, getattr(v, "index", None)) for v in frontier]
    for var, _, _ in saved:
        var.owner = None
    try:
        rewritten = rewrite_graph(list(outputs), include=include, clone=False, **kwargs)
        return list(cast(list[Variable], rewritten))
    finally:
        for var, owner, index in saved:
            var.owner = owner
            if index is not None:
                var.index = index


def get_clients_at_depth(fgraph: FunctionGraph, node: Apply, depth: int) -> Iterator[Apply]:
    """Yield the nodes ``depth`` client steps below ``node`` (``node`` itself, once per
    output, for depth 0); the graph's outputs are not nodes and are skipped."""
    for var in node.outputs:
        if depth > 0:
            for client, _ in fgraph.clients[var]:
                if isinstance(client, Apply):
                    yield from get_clients_at_depth(fgraph, client, depth - 1)
        else:
            assert var.owner is not None
            yield var.owner
