"""Elementwise fusion: chains of ``Elemwise`` nodes become one ``Elemwise(Composite)`` node.

:class:`FusionOptimizer` walks the graph from the outputs. Each ``Elemwise`` node it meets
(a *root*) grows a cluster upward: the ``Elemwise`` node computing one of the cluster's
inputs joins when

* every client of every output of that node is already in the cluster (its results are
  needed nowhere else, not even as graph outputs: nothing is computed twice);
* its outputs have the root's broadcast pattern (a value broadcast inside the root is
  not recomputed for every element it is broadcast to);
* the fused node would still have at most ``max_inputs`` inputs (32 by default) and its
  ``Composite`` at most ``max_nodes`` scalar nodes (256 by default; a fused node counts
  its ``Composite``'s nodes), so that a chain of any length becomes a chain of fused
  nodes of bounded size, whose code compiles in a time bounded per node: linear in the
  graph, however long the chain;
* it is not in place and its scalar Op (like every Op in a ``Composite``) comes from
  the core's scalar library, for which every backend has an implementation.

A cluster of two nodes or more is replaced by one ``Elemwise`` of a
:class:`~opweave.scalar.Composite` of the clustered scalar Ops; constants holding a
single element are inlined into the ``Composite``. ``exp(x) * y + z`` becomes one node,
a chain of 200 elementwise Ops on ``x`` too, and a chain of 20000 about 80 nodes.

Registered as its own phase ``elemwise_fusion`` at position 3 (after ``specialize``,
before ``merge2``), tags ``fast_run``, ``fusion``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard, cast

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable, io_toposort
from opweave.graph.features import ReplaceValidate
from opweave.graph.rewriting import GraphRewriter
from opweave.graph.utils import InconsistencyError
from opweave.scalar import Composite, ScalarOp, get_scalar_type
from opweave.tensor._typing import tensor_outs, tensor_type_of
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "FusionOptimizer",
    "is_fusable",
    "is_inlinable_constant",
    "register_fusion",
    "scalar_node_count",
]

#: The default bound on the number of inputs of a fused node.
DEFAULT_MAX_INPUTS = 32
#: The default bound on the number of scalar nodes in a fused node's ``Composite``.
DEFAULT_MAX_NODES = 256
#: Passes over the graph before giving up on reaching a fixed point.
_MAX_PASSES = 8

#: What :meth:`FusionOptimizer.apply` returns (PyTensor's profile tuple): the rewriter,
#: fused nodes made, nodes replaced, inconsistent replacements, validate time, callback
#: time, callback times by feature, toposort time.
FusionProfile = tuple[Any, int, int, int, None, None, dict[str, float], int]


def _library_scalar_op(op: Any) -> bool:
    """True for a scalar Op of the core's library (backends implement all of them)."""
    if not isinstance(op, ScalarOp) or callable(getattr(op, "impl", None)):
        return False
    if not type(op).__module__.startswith("opweave.scalar"):
        return False
    if isinstance(op, Composite):
        found = op.__dict__.get("_cache_library_only")  # a Composite never changes
        if found is None:
            found = all(_library_scalar_op(n.op) for n in op.inner_nodes())
            op.__dict__["_cache_library_only"] = found
        return bool(found)
    return True


def is_fusable(node: Apply) -> TypeGuard[Apply[Elemwise]]:
    """True if ``node`` may take part in a fused ``Elemwise(Composite)`` node.

    Parameters
    ----------
    node
        An Apply node.

    Returns
    -------
    bool
        ``node`` is a non-inplace ``Elemwise`` of a library scalar Op with tensor outputs.
    """
    op = node.op
    return (
        isinstance(op, Elemwise)
        and not op.inplace_pattern
        and all(isinstance(o.type, TensorType) for o in node.outputs)
        and all(isinstance(i.type, TensorType) for i in node.inputs)
        and _library_scalar_op(op.scalar_op)
    )


def scalar_node_count(node: Apply) -> int:
    """How many scalar nodes ``node`` (an Elemwise's) brings into a fused ``Composite``:
    its ``Composite``'s inner nodes, or 1 for any other scalar Op."""
    scalar_op = getattr(node.op, "scalar_op", None)
    if isinstance(scalar_op, Composite):
        return len(scalar_op.inner_nodes())
    return 1


def is_inlinable_constant(var: Variable) -> TypeGuard[Constant]:
    """True for a constant with a single element (inlined as a scalar constant)."""
    return (
        isinstance(var, Constant)
        and isinstance(var.type, TensorType)
        and np.asarray(var.data).size == 1
    )


class FusionOptimizer(GraphRewriter):
    """Fuses clusters of ``Elemwise`` nodes into ``Elemwise(Composite)`` nodes.

    See the module docstring for the rules.

    Parameters
    ----------
    max_inputs
        The most inputs a fused node may have.
    max_nodes
        The most scalar nodes a fused node's ``Composite`` may have.
    name
        A display name.

    Attributes
    ----------
    fused
        How many fused nodes the last :meth:`apply` created.
    """

    def __init__(
        self,
        max_inputs: int = DEFAULT_MAX_INPUTS,
        name: str | None = None,
        max_nodes: int = DEFAULT_MAX_NODES,
    ) -> None:
        if max_inputs < 1:
            raise ValueError(f"max_inputs must be at least 1, got {max_inputs}")
        if max_nodes < 2:
            raise ValueError(f"max_nodes must be at least 2, got {max_nodes}")
        self.max_inputs = max_inputs
        self.max_nodes = max_nodes
        self.name = name
        self.fused = 0
        self.replaced = 0

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate."""
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph: FunctionGraph) -> FusionProfile:
        """Fuse until nothing more can be fused; return PyTensor's profile tuple.

        The ReplaceValidate feature is attached first when ``fgraph`` lacks it (a direct
        call, not through :meth:`rewrite`).

        Returns
        -------
        tuple
            ``(self, nb_fused, nb_replacement, 0, None, None, {}, -1)``: the fused nodes
            made, the nodes they replaced (the Elemwise nodes removed, each fused node
            counted once), then PyTensor's timing slots (not measured).
        """
        if not hasattr(fgraph, "replace_all_validate"):
            self.add_requirements(fgraph)
        self.fused = 0
        self.replaced = 0
        for _ in range(_MAX_PASSES):
            made = self._pass(fgraph)
            self.fused += made
            if not made:
                break
        return (self, self.fused, self.replaced, 0, None, None, {}, -1)

    def rewrite(self, fgraph: FunctionGraph) -> int:
        """Attach the requirements and fuse; return the number of fused nodes made."""
        self.add_requirements(fgraph)
        self.apply(fgraph)
        return self.fused

    # ------------------------------------------------------------------ one pass

    def _pass(self, fgraph: FunctionGraph) -> int:
        made = 0
        for node in reversed(io_toposort(fgraph.inputs, fgraph.outputs)):
            if node not in fgraph.apply_nodes or not is_fusable(node):
                continue
            cluster, outer = self._grow(fgraph, node)
            if len(cluster) < 2:
                continue
            if self._fuse(fgraph, node, cluster, outer):
                made += 1
        return made

    def _grow(self, fgraph: FunctionGraph, root: Apply) -> tuple[set[Apply], list[Variable]]:
        """Return the cluster rooted at ``root`` and its outer inputs (in first-use order)."""
        pattern = tensor_type_of(root.outputs[0]).broadcastable
        cluster: set[Apply] = {root}
        size = scalar_node_count(root)
        outer: dict[Variable, None] = {
            v: None for v in root.inputs if not is_inlinable_constant(v) and v not in root.outputs
        }
        changed = True
        while changed:
            changed = False
            for var in list(outer):
                cand = var.owner
                if cand is None or cand in cluster or not is_fusable(cand):
                    continue
                if any(tensor_type_of(o).broadcastable != pattern for o in cand.outputs):
                    continue
                cand_size = scalar_node_count(cand)
                if size + cand_size > self.max_nodes:
                    continue
                if not all(
                    isinstance(client, Apply) and client in cluster
                    for o in cand.outputs
                    for client, _ in fgraph.clients.get(o, ())
                ):
                    continue
                new_outer = {v: None for v in outer if v.owner is not cand}
                for inp in cand.inputs:
                    if not is_inlinable_constant(inp):
                        new_outer[inp] = None
                if len(new_outer) > self.max_inputs:
                    continue
                # Keep the first-use order: the candidate's inputs take its place.
                ordered: dict[Variable, None] = {}
                for v in outer:
                    if v.owner is cand:
                        for inp in cand.inputs:
                            if not is_inlinable_constant(inp):
                                ordered[inp] = None
                    else:
                        ordered[v] = None
                outer = ordered
                cluster.add(cand)
                size += cand_size
                changed = True
        return cluster, list(outer)

    def _fuse(
        self, fgraph: FunctionGraph, root: Apply, cluster: set[Apply], outer: list[Variable]
    ) -> bool:
        """Replace ``cluster`` by one ``Elemwise(Composite)`` node; False if it cannot."""
        order = [n for n in io_toposort(outer, root.outputs) if n in cluster]
        if len(order) != len(cluster):
            return False
        if not outer:  # only constants: keep one as an input so the node has a shape
            first = next(i for n in order for i in n.inputs if is_inlinable_constant(i))
            outer = [first]
        inner: dict[Variable, Variable] = {
            v: get_scalar_type(tensor_type_of(v).dtype)() for v in outer
        }
        inner_inputs = [inner[v] for v in outer]
        for node in order:
            args = []
            for inp in node.inputs:
                if inp not in inner:
                    if not is_inlinable_constant(inp):
                        return False
                    stype = get_scalar_type(tensor_type_of(inp).dtype)
                    inner[inp] = stype.make_constant(np.asarray(inp.data).reshape(()))
                args.append(inner[inp])
            # The scalar node computes what the Elemwise node does, on scalars of its
            # dtypes: its output Types are the node's (no need to infer them again).
            scalar_op = cast(Elemwise, node.op).scalar_op  # is_fusable
            outputs = [
                get_scalar_type(tensor_type_of(o).dtype).make_variable() for o in node.outputs
            ]
            for old, new in zip(node.outputs, Apply(scalar_op, args, outputs).outputs, strict=True):
                inner[old] = new
        try:
            composite = Composite(inner_inputs, [inner[o] for o in root.outputs])
            new_outputs = tensor_outs(Elemwise(composite)(*outer, return_list=True))
        except (TypeError, ValueError):
            return False
        pairs = list(zip(root.outputs, new_outputs, strict=True))
        for old, new in pairs:
            if new.type != old.type and not tensor_type_of(old).is_super(new.type):
                return False
        before = len(fgraph.apply_nodes)
        try:
            fgraph.replace_all_validate(pairs, reason="elemwise_fusion")
        except InconsistencyError:
            return False
        self.replaced += before - len(fgraph.apply_nodes) + 1
        return True


def register_fusion(db: RewriteDatabase) -> None:
    """Register :class:`FusionOptimizer` as the phase ``elemwise_fusion`` of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db.register(
        "elemwise_fusion",
        FusionOptimizer(name="elemwise_fusion"),
        "fast_run",
        "fusion",
        position=3,
    )
