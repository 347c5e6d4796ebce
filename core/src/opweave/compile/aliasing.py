"""Views, aliases and destroyed memory in compiled functions.

Three concerns, as in PyTensor's ``pytensor.compile.aliasing``:

* following views: :func:`view_chain`, :func:`alias_root`, :func:`view_tree_set` and
  :func:`infer_reuse_pattern` (which outputs must get fresh storage on every call);
* protecting memory while compiling: :func:`add_supervisor_to_fgraph` lets destructive
  Ops overwrite only the inputs that may be overwritten (a :class:`Supervisor` guards the
  others), and :func:`insert_deepcopy` copies outputs that would hand the caller memory
  it does not own;
* protecting memory while calling: :class:`InputAliasGuard` copies an argument when it
  shares memory with another input that the function overwrites in place.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from opweave.compile.io import In, Out
from opweave.compile.ops import deep_copy_op, view_op
from opweave.graph.basic import Constant, Variable
from opweave.graph.features import DestroyHandler, Feature
from opweave.graph.fg import AlreadyThere, FunctionGraph
from opweave.graph.utils import InconsistencyError

__all__ = [
    "InputAliasGuard",
    "Supervisor",
    "add_supervisor_to_fgraph",
    "alias_root",
    "destroyed_inputs",
    "destructive_nodes",
    "fresh_copy",
    "infer_reuse_pattern",
    "insert_deepcopy",
    "view_chain",
    "view_tree_set",
]


def _aliased_inputs(var: Variable) -> list[int]:
    """Positions of the inputs of ``var.owner`` that ``var`` is a view or destroyed version of."""
    op = var.owner.op  # type: ignore[union-attr]
    views = (getattr(op, "view_map", None) or {}).get(var.index) or []
    destroyed = (getattr(op, "destroy_map", None) or {}).get(var.index) or []
    return list(views) + list(destroyed)


def view_chain(var: Variable) -> list[Variable]:
    """Return ``var`` and the variables it aliases, following ``view_map``/``destroy_map``.

    The last entry is the root: a variable that is not a view of anything.
    """
    chain_ = [var]
    while var.owner is not None:
        aliased = _aliased_inputs(var)
        if not aliased:
            break
        var = var.owner.inputs[aliased[0]]
        chain_.append(var)
    return chain_


def alias_root(var: Variable) -> Variable:
    """Return the variable whose memory ``var`` uses (through views and destroyed inputs).

    Raises
    ------
    NotImplementedError
        If an Op declares an output as a view of more than one input.
    """
    while var.owner is not None:
        aliased = _aliased_inputs(var)
        if len(aliased) > 1:
            raise NotImplementedError(
                f"{var} is declared a view or destroyed version of several inputs of "
                f"{var.owner.op}; an output may alias one input only"
            )
        if not aliased:
            break
        var = var.owner.inputs[aliased[0]]
    return var


def view_tree_set(fgraph: FunctionGraph, var: Variable, treeset: set[Variable]) -> None:
    """Add ``var`` and every variable of ``fgraph`` that is a view of it to ``treeset``.

    ``var`` should be a root (see :func:`alias_root`).
    """
    stack = [var]
    while stack:
        v = stack.pop()
        if v in treeset:
            continue
        treeset.add(v)
        for node, i in fgraph.clients.get(v, ()):
            if isinstance(node, str):  # the graph's output marker
                continue
            op = node.op
            maps = chain(
                (getattr(op, "view_map", None) or {}).items(),
                (getattr(op, "destroy_map", None) or {}).items(),
            )
            for out_pos, in_positions in maps:
                if i in in_positions and out_pos is not None:
                    stack.append(node.outputs[out_pos])


def infer_reuse_pattern(
    fgraph: FunctionGraph, outputs_to_disown: Iterable[Variable]
) -> set[Variable]:
    """Return the computed variables that may share memory with ``outputs_to_disown``.

    Their storage must not be reused by the next call while the caller holds the
    outputs (a linker's ``no_recycling``). Inputs and constants are left out.
    """
    found: set[Variable] = set()
    for out in outputs_to_disown:
        view_tree_set(fgraph, alias_root(out), found)
    return {v for v in found if v.owner is not None}


class Supervisor(Feature):
    """A feature refusing any graph in which a protected variable is destroyed.

    It needs the graph's :class:`~opweave.graph.features.DestroyHandler` to know what is
    destroyed; without one nothing can be, and it accepts every graph.

    Parameters
    ----------
    protected
        The variables no Op may overwrite (the graph's outputs are always protected).
    """

    def __init__(self, protected: Iterable[Variable]) -> None:
        self.protected = list(protected)
        self.fgraph: FunctionGraph | None = None

    def clone(self) -> Supervisor:
        """Return a Supervisor protecting the same variables."""
        return Supervisor(self.protected)

    def on_attach(self, fgraph: FunctionGraph) -> None:
        """Record the graph; a graph takes one Supervisor."""
        if any(isinstance(f, Supervisor) for f in fgraph.features):
            raise AlreadyThere("the graph already has a Supervisor")
        if self.fgraph is not None and self.fgraph is not fgraph:
            raise ValueError("a Supervisor can only be attached to one FunctionGraph")
        self.fgraph = fgraph

    def on_detach(self, fgraph: FunctionGraph) -> None:
        """Forget the graph."""
        self.fgraph = None

    def validate(self, fgraph: FunctionGraph) -> None:
        """Raise :class:`~opweave.graph.utils.InconsistencyError` if a protected variable
        (or an output of the graph) is destroyed."""
        destroyers = getattr(fgraph, "destroyers", None)
        if destroyers is None:
            return
        for var in chain(self.protected, fgraph.outputs):
            found = destroyers(var)
            if found:
                raise InconsistencyError(
                    f"{var} is protected (a function input not marked mutable, or an output) "
                    f"but {found[0]} overwrites it"
                )


def destructive_nodes(fgraph: FunctionGraph) -> list[Any]:
    """The nodes of ``fgraph`` whose Op declares a ``destroy_map``."""
    return [n for n in fgraph.apply_nodes if getattr(n.op, "destroy_map", None)]


def add_supervisor_to_fgraph(
    fgraph: FunctionGraph,
    input_specs: Sequence[In],
    accept_inplace: bool = False,
) -> None:
    """Prepare ``fgraph`` so that in-place rewrites may overwrite only what they may.

    The inputs of ``fgraph`` that ``input_specs`` mark ``mutable`` (or that carry an
    ``update``), and the inputs updated through ``fgraph.update_mapping``, may be
    overwritten: opweave marks them with ``var.tag.mutable = True``, which the
    :class:`~opweave.graph.features.DestroyHandler` reads. A :class:`Supervisor`
    protects the other inputs.

    Parameters
    ----------
    fgraph
        The graph of a function; its first ``len(input_specs)`` inputs are the explicit
        ones, any further inputs are shared variables (overwritable only when updated).
    input_specs
        The :class:`~opweave.compile.io.In` of each explicit input.
    accept_inplace
        Whether the graph may already contain destructive Ops; a DestroyHandler is then
        attached and the graph validated.

    Raises
    ------
    TypeError
        If the graph contains destructive Ops and ``accept_inplace`` is false.
    opweave.graph.utils.InconsistencyError
        If a destructive Op of the graph overwrites a protected input.
    """
    if len(input_specs) > len(fgraph.inputs):
        raise ValueError(
            f"add_supervisor_to_fgraph: {len(input_specs)} input specs for a graph with "
            f"{len(fgraph.inputs)} inputs"
        )
    updated = {fgraph.inputs[i] for i in fgraph.update_mapping.values()}
    protected = []
    for i, var in enumerate(fgraph.inputs):
        spec = input_specs[i] if i < len(input_specs) else None
        mutable = spec is not None and (spec.mutable or spec.update is not None)
        if mutable or var in updated:
            var.tag.mutable = True
        else:
            protected.append(var)
    destroyers = destructive_nodes(fgraph)
    if destroyers:
        if not accept_inplace:
            names = ", ".join(sorted({str(n.op) for n in destroyers}))
            raise TypeError(
                f"the graph contains inplace operations ({names}); pass accept_inplace=True to "
                "compile it anyway"
            )
        if not hasattr(fgraph, "destroyers"):
            fgraph.attach_feature(DestroyHandler())
    fgraph.attach_feature(Supervisor(protected))
    if destroyers:
        fgraph.validate()


def insert_deepcopy(
    fgraph: FunctionGraph, wrapped_inputs: Sequence[In], wrapped_outputs: Sequence[Out]
) -> None:
    """Copy the outputs that would hand the caller memory it does not own.

    An output that is (or is a view of, through ``view_map``/``destroy_map`` chains) an
    input or a constant, or that shares its memory with an earlier output, goes through a
    ``DeepCopyOp``. Exceptions: an update computed in the memory of the variable it
    updates, and an output aliasing an explicit input when both the input's ``In`` and the
    output's ``Out`` say ``borrow=True`` (a ``ViewOp`` then keeps them distinct variables).

    Parameters
    ----------
    fgraph
        The graph; its outputs after the first ``len(wrapped_outputs)`` are updates
        (``fgraph.update_mapping``).
    wrapped_inputs
        The :class:`~opweave.compile.io.In` of each explicit input (the first inputs of
        ``fgraph``).
    wrapped_outputs
        The :class:`~opweave.compile.io.Out` of each returned output.
    """
    roots_seen: set[Variable] = set()
    positions = {v: i for i, v in enumerate(fgraph.inputs)}
    n_user = len(wrapped_outputs)
    for i, out in enumerate(list(fgraph.outputs)):
        root = view_chain(out)[-1]
        own = i >= n_user and root is fgraph.inputs[fgraph.update_mapping[i]]
        j = positions.get(root)
        earlier = root in roots_seen
        roots_seen.add(root)
        if not ((j is not None and not own) or isinstance(root, Constant) or earlier):
            continue
        borrowed = (
            not earlier
            and j is not None
            and i < n_user
            and j < len(wrapped_inputs)
            and wrapped_outputs[i].borrow
            and wrapped_inputs[j].borrow
        )
        wrap = view_op if borrowed else deep_copy_op
        fgraph.change_node_input("output", i, wrap(out), reason="insert_deepcopy")


def destroyed_inputs(fgraph: FunctionGraph) -> list[int]:
    """Positions of the inputs of ``fgraph`` that a node overwrites in place.

    Empty when the graph has no :class:`~opweave.graph.features.DestroyHandler` (no
    destructive Op was ever introduced).
    """
    destroyers = getattr(fgraph, "destroyers", None)
    if destroyers is None:
        return []
    return [i for i, var in enumerate(fgraph.inputs) if destroyers(var)]


def fresh_copy(value: Any) -> Any:
    """A copy of ``value`` that shares no memory with it."""
    if isinstance(value, np.ndarray):
        return value.copy()
    return copy.deepcopy(value)


class InputAliasGuard:
    """Copies arguments that share memory with an input the function overwrites.

    A function whose graph overwrites an input in place (an input marked ``mutable``, or
    a shared variable updated in place) computes wrong values when another input's value
    shares memory with it: the same array passed twice, an array and a view of it, or the
    shared variable's own value passed as an argument. Before each call the guard looks
    for such pairs with the Types' ``may_share_memory`` and copies one value of each pair:
    the argument that will be overwritten, or, when the overwritten input is a shared
    variable, the other argument (the shared variable keeps its own memory, as its update
    expects).

    A shared variable's value that cannot be overwritten (a read-only array, as another
    linker left it or as its owner made it) is copied too, the variable getting the copy
    as its new value. (A read-only argument for an input marked ``mutable`` is refused by
    the function: the caller said it may be overwritten.)

    A function builds a guard only when its graph overwrites an input
    (:meth:`for_graph`), so other functions pay nothing.

    Parameters
    ----------
    types
        The Type of every input of the graph (explicit, then implicit).
    destroyed
        Positions of the overwritten inputs.
    implicit_cells
        The storage cells of the implicit inputs (shared variables), in order.
    """

    def __init__(
        self,
        types: Sequence[Any],
        destroyed: Sequence[int],
        implicit_cells: Sequence[list[Any]],
    ) -> None:
        self.types = list(types)
        self.destroyed = tuple(destroyed)
        self.implicit_cells = list(implicit_cells)
        self.n_explicit = len(self.types) - len(self.implicit_cells)

    @classmethod
    def for_graph(
        cls, fgraph: FunctionGraph, implicit_cells: Sequence[list[Any]]
    ) -> InputAliasGuard | None:
        """The guard of a function of ``fgraph``, or ``None`` when no input is overwritten."""
        destroyed = destroyed_inputs(fgraph)
        if not destroyed:
            return None
        return cls([v.type for v in fgraph.inputs], destroyed, implicit_cells)

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        """Return the explicit arguments ``args``, with copies where memory is shared.

        A shared variable whose value must be copied (two shared variables sharing
        memory, one of them overwritten) gets the copy as its new value.
        """
        n = self.n_explicit
        values = list(args) + [cell[0] for cell in self.implicit_cells]
        for p in self.destroyed:
            if p >= n and isinstance(values[p], np.ndarray) and not values[p].flags.writeable:
                values[p] = values[p].copy()  # a shared variable's read-only value
                self.implicit_cells[p - n][0] = values[p]
            may_share = self.types[p].may_share_memory
            for q, other in enumerate(values):
                if q == p or not may_share(values[p], other):
                    continue
                if p < n:  # an argument that will be overwritten: copy it
                    values[p] = fresh_copy(values[p])
                    break
                if q < n:  # a shared variable will be overwritten: copy the argument
                    values[q] = fresh_copy(other)
                    continue
                values[p] = fresh_copy(values[p])  # two shared variables sharing memory
                self.implicit_cells[p - n][0] = values[p]
                break
        return values[:n]
