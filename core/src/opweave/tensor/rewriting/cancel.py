"""Cancellation of a factor that divides a product it is also a factor of (the part of
PyTensor's ``local_mul_canonizer`` that removes common factors).

* ``local_mul_div_cancel``: a tree of ``mul`` and ``true_div`` nodes is read as a list of
  numerator and a list of denominator factors; a variable found in both is removed from
  both: ``(g / (x / b)) * x -> g * b``, ``(x * y) / x -> y``;
* ``local_greedy_distributor``: a product of a sum and factors that divide one of the
  sum's terms is distributed over the sum, so that the factors cancel there
  (PyTensor's name; ``(a + g / x) * x -> a * x + g``).

The gradient of ``log(x / b)`` with respect to ``b`` is built as ``(g / (x / b)) * x /
b ** 2``; where ``x`` is 0 that is ``inf * 0 = nan``, while the value, ``-g / b``, is
finite (the log-density of a scale family at an observed 0, for instance). As in
PyTensor, the cancelled form is used, also where the factor is 0 or infinite.

Only products whose factors cancel are rewritten (other graphs are left as they are),
and a replacement must have the dtype and broadcastable dimensions of the variable it
replaces: ``row * y / y`` with a matrix ``y`` is left alone, the factor gives the shape.
Both are registered in ``canonicalize`` (tags ``fast_run`` and ``canonicalize``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import copy_stack_trace, node_rewriter
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.canonicalize import _is_elemwise, _replace_if_same_type

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = ["local_greedy_distributor", "local_mul_div_cancel", "register_cancel"]

#: How deep a product is read (a bound on the work one node costs).
_MAX_DEPTH = 8


def _factors(var: Variable, depth: int = 0) -> tuple[list[Variable], list[Variable]]:
    """``(numerator, denominator)`` factors of ``var`` through float ``mul``/``true_div``."""
    owner = var.owner
    if depth < _MAX_DEPTH and tensor_type_of(var).dtype.startswith("float"):
        if _is_elemwise(owner, ps.Mul):
            num: list[Variable] = []
            den: list[Variable] = []
            for inp in owner.inputs:
                n, d = _factors(inp, depth + 1)
                num += n
                den += d
            return num, den
        if _is_elemwise(owner, ps.TrueDiv):
            top_n, top_d = _factors(owner.inputs[0], depth + 1)
            bottom_n, bottom_d = _factors(owner.inputs[1], depth + 1)
            return top_n + bottom_d, top_d + bottom_n
    return [var], []


def _product(factors: list[Variable]) -> Variable | None:
    if not factors:
        return None
    return factors[0] if len(factors) == 1 else tensor_out(tm.mul(*factors))


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul, ps.TrueDiv))
def local_mul_div_cancel(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """Remove a factor found in both the numerator and the denominator of a product."""
    if not (_is_elemwise(node, ps.Mul) or _is_elemwise(node, ps.TrueDiv)):
        return False
    out = node.outputs[0]
    if not tensor_type_of(out).dtype.startswith("float"):
        return False
    num, den = _factors(out)
    if not den:
        return False
    kept: list[Variable] = []  # the denominator factors not cancelled
    for var in den:
        index = next((k for k, n in enumerate(num) if n is var), None)
        if index is None:
            kept.append(var)
        else:
            del num[index]
    if len(kept) == len(den):
        return False
    den = kept
    top, bottom = _product(num), _product(den)
    if top is None:  # nothing left above (a product of 1): left as it is
        return False
    new = top if bottom is None else tensor_out(tm.true_div(top, bottom))
    if tensor_type_of(new).broadcastable != tensor_type_of(out).broadcastable:
        return False  # the cancelled factor gave the product its shape on an axis
    copy_stack_trace(node.outputs, new)
    return _replace_if_same_type(out, new)


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul,))
def local_greedy_distributor(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``(a + g / x) * x -> a * x + g / x * x`` (then cancelled): only where a factor of
    the product divides a term of the sum."""
    if not _is_elemwise(node, ps.Mul):
        return False
    out = node.outputs[0]
    if not tensor_type_of(out).dtype.startswith("float"):
        return False
    for index, inp in enumerate(node.inputs):
        if not _is_elemwise(inp.owner, ps.Add) or len(fgraph.clients.get(inp, ())) != 1:
            continue
        others = [f for k, f in enumerate(node.inputs) if k != index]
        terms = list(inp.owner.inputs)
        if not any(any(f is d for d in _factors(term)[1]) for term in terms for f in others):
            continue
        new = tensor_out(tm.add(*(tensor_out(tm.mul(term, *others)) for term in terms)))
        if tensor_type_of(new).broadcastable != tensor_type_of(out).broadcastable:
            return False
        copy_stack_trace(node.outputs, new)
        return _replace_if_same_type(out, new)
    return False


def register_cancel(db: RewriteDatabase) -> None:
    """Register ``local_mul_div_cancel`` and ``local_greedy_distributor`` in the
    ``canonicalize`` phase of ``db``.

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db["canonicalize"].register(
        "local_mul_div_cancel", local_mul_div_cancel, "fast_run", "canonicalize"
    )
    db["canonicalize"].register(
        "local_greedy_distributor", local_greedy_distributor, "fast_run", "canonicalize"
    )
