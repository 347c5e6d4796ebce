"""``min`` in the canonical form PyTensor builds it in: ``-max(-x)``.

PyTensor's ``min`` of a float or signed integer tensor is the graph ``-max(-x)``, and
code written against PyTensor's graphs recognizes that form (PyMC derives the density of
the minimum of i.i.d. variables from it, after running the ``canonicalize`` phase).
opweave's ``min`` builds a :class:`~opweave.tensor.reductions.Min` node, so:

* ``local_min_to_neg_max`` (``canonicalize``; tags fast_run, canonicalize):
  ``Min(x) -> -Max(-x)`` for float and signed integer ``x``;
* ``local_neg_max_neg_to_min`` (``specialize``; tags fast_run, uncanonicalize, as
  PyTensor's ``local_max_to_min``): ``-Max(-x) -> Min(x)``, so that compiled functions
  compute one ``Min`` again.

Only the exact ``Min`` and ``Max`` classes are rewritten (subclasses, such as PyMC's
measurable ``Max``, are left alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import cast as typed

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.reductions import Max, Min
from opweave.tensor.rewriting.math import Replacement, _elemwise_owner, _replacement
from opweave.tensor.type import int_dtypes

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_min_to_neg_max", "local_neg_max_neg_to_min", "register_min_max"]

_neg = typed(Callable[..., Variable], tm.neg)


def _negatable(dtype: str) -> bool:
    """Whether ``-max(-x)`` is the minimum for ``x`` of ``dtype`` (no unsigned wrap)."""
    return dtype.startswith("float") or dtype in int_dtypes


@node_rewriter([Min])
def local_min_to_neg_max(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``Min(x) -> -Max(-x)`` for float and signed integer ``x`` (PyTensor's ``min``)."""
    if type(node.op) is not Min:
        return False
    (x,) = node.inputs
    if not _negatable(tensor_type_of(x).dtype):
        return False
    maximum = Max(node.op.axis)(_neg(x))
    return _replacement(node.outputs[0], [_neg(maximum)])


@node_rewriter([Elemwise], scalar_tracks=(ps.Neg,))
def local_neg_max_neg_to_min(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``-Max(-x) -> Min(x)`` where the ``Max`` feeds only this negation."""
    if _elemwise_owner(node.outputs[0], ps.Neg) is None:
        return False
    (reduced,) = node.inputs
    max_node = reduced.owner
    if max_node is None or type(max_node.op) is not Max:
        return False
    if len(fgraph.clients.get(reduced, [])) != 1:
        return False
    inner = _elemwise_owner(max_node.inputs[0], ps.Neg)
    if inner is None or not _negatable(tensor_type_of(inner.inputs[0]).dtype):
        return False
    minimum = tensor_out(Min(max_node.op.axis)(inner.inputs[0]))
    return _replacement(node.outputs[0], [minimum])


def register_min_max(db: RewriteDatabase) -> None:
    """Register ``local_min_to_neg_max`` (``canonicalize``) and
    ``local_neg_max_neg_to_min`` (``specialize``) in ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db["canonicalize"].register(
        "local_min_to_neg_max", local_min_to_neg_max, "fast_run", "canonicalize"
    )
    db["specialize"].register(
        "local_neg_max_neg_to_min", local_neg_max_neg_to_min, "fast_run", "uncanonicalize"
    )
