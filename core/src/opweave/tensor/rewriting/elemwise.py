"""The Elemwise rewrites under PyTensor's module and names (``tensor.rewriting.elemwise``).

The definitions live in opweave's modules, one per family; this module re-exports them:

* :class:`FusionOptimizer` (:mod:`opweave.tensor.rewriting.fusion`): chains of
  ``Elemwise`` fused into one ``Elemwise(Composite)``;
* :class:`InplaceElemwiseOptimizer` (:mod:`opweave.tensor.rewriting.inplace`):
  ``Elemwise`` computed in the storage of an input;
* :data:`local_careduce_fusion` (:mod:`opweave.tensor.rewriting.reduce_fusion`): a
  reduction of an elementwise map computed in one pass;
* :data:`local_useless_dimshuffle_makevector`
  (:mod:`opweave.tensor.rewriting.canonicalize`): ``MakeVector(a).dimshuffle(()) -> a``.

They are registered into each compilation's rewrite database by
:func:`~opweave.tensor.rewriting.plugin.register_standard_rewrites`.

This module also defines :data:`local_dimshuffle_lift` (a ``DimShuffle`` moved below an
``Elemwise``, consecutive ``DimShuffle`` nodes merged, useless ones removed) and its helpers
:func:`is_dimshuffle_useless` and :func:`apply_local_dimshuffle_lift`: a node rewriter
for ``out2in``/``rewrite_graph``, not held by the standard databases (their
``local_dimshuffle_merge`` and fusion cover its merging role).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import copy_stack_trace, node_rewriter
from opweave.tensor._typing import tensor_outs, tensor_type_of, tensor_var
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.canonicalize import local_useless_dimshuffle_makevector
from opweave.tensor.rewriting.fusion import FusionOptimizer
from opweave.tensor.rewriting.inplace import InplaceElemwiseOptimizer
from opweave.tensor.rewriting.reduce_fusion import local_careduce_fusion

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph

__all__ = [
    "FusionOptimizer",
    "InplaceElemwiseOptimizer",
    "apply_local_dimshuffle_lift",
    "is_dimshuffle_useless",
    "local_careduce_fusion",
    "local_dimshuffle_lift",
    "local_useless_dimshuffle_makevector",
]


def is_dimshuffle_useless(new_order: Sequence[Any], input: Variable) -> bool:
    """True if ``input.dimshuffle(new_order)`` has the same values and Type as ``input``.

    That is the case when the order keeps the rank and every position either keeps its
    dimension or holds a dimension of static length 1 (or a new one, ``"x"``) where the
    input has a dimension of static length 1.

    Parameters
    ----------
    new_order
        A DimShuffle order (input dimensions and ``"x"`` entries).
    input
        The tensor variable it would be applied to.
    """
    input_type = tensor_type_of(input)
    ndim = input_type.ndim
    if len(new_order) != ndim:
        return False
    length_one = {i for i, b in enumerate(input_type.broadcastable) if b}
    length_one_or_new = {*length_one, "x"}
    return all(
        new_order[i] == i or (i in length_one and new_order[i] in length_one_or_new)
        for i in range(ndim)
    )


def apply_local_dimshuffle_lift(fgraph: FunctionGraph | None, var: Variable) -> Variable:
    """``var`` with :data:`local_dimshuffle_lift` applied to its owner (if it applies)."""
    if var.owner is None:
        return var
    # The rewrite also runs on nodes outside any graph (``fgraph`` None); it returns a
    # list of replacements or False.
    new = local_dimshuffle_lift.transform(cast("FunctionGraph", fgraph), var.owner)
    return cast("list[Variable]", new)[0] if new else var


def _lift_through_elemwise(fgraph: FunctionGraph | None, node: Apply) -> list[Variable] | None:
    """``DimShuffle(Elemwise(x, y)) -> Elemwise(DimShuffle(x), DimShuffle(y))`` when the
    Elemwise has one output and this DimShuffle is its only client."""
    inner = node.inputs[0]
    inode = inner.owner
    if not (
        inode is not None
        and isinstance(inode.op, Elemwise)
        and len(inode.outputs) == 1
        and (fgraph is None or len(fgraph.clients[inner]) == 1)
    ):
        return None
    new_order = cast(DimShuffle, node.op).new_order
    new_inputs = [
        apply_local_dimshuffle_lift(fgraph, tensor_var(x).dimshuffle(new_order))
        for x in inode.inputs
    ]
    copy_stack_trace(node.outputs[0], new_inputs)
    return list(tensor_outs(inode.op(*new_inputs, return_list=True)))


@node_rewriter([DimShuffle])
def local_dimshuffle_lift(fgraph: FunctionGraph | None, node: Apply) -> list[Variable] | bool:
    """Lift a ``DimShuffle`` through ``Elemwise`` and merge consecutive ones (PyTensor's name).

    * ``DimShuffle(Elemwise(x, y)) -> Elemwise(DimShuffle(x), DimShuffle(y))`` (one-output
      Elemwise whose output has no other client), applied again on the new DimShuffles;
    * ``DimShuffle(DimShuffle(x)) -> DimShuffle(x)`` with the composed order;
    * a DimShuffle that changes nothing (:func:`is_dimshuffle_useless`) ``-> x``.
    """
    op = node.op
    if not isinstance(op, DimShuffle):
        return False
    lifted = _lift_through_elemwise(fgraph, node)
    if lifted is not None:
        return lifted
    x = node.inputs[0]
    inode = x.owner
    new_order = list(op.new_order)
    merged = False
    if inode is not None and isinstance(inode.op, DimShuffle):
        merged = True
        inner_order = inode.op.new_order
        new_order = ["x" if k == "x" else inner_order[int(k)] for k in new_order]
        x = inode.inputs[0]
    if is_dimshuffle_useless(new_order, x):
        return [x]
    if merged:
        out = apply_local_dimshuffle_lift(fgraph, tensor_var(x).dimshuffle(new_order))
        copy_stack_trace(node.outputs[0], out)
        return [out]
    return False
