"""PyTensor's ``local_mul_switch_sink`` and ``local_div_switch_sink``: a product or a
quotient of a ``switch`` whose one branch is zero becomes a ``switch`` of it.

* ``local_mul_switch_sink``: ``mul(a, switch(c, x, 0), b) -> switch(c, mul(a, x, b), 0)``
  and ``mul(a, switch(c, 0, x), b) -> switch(c, 0, mul(a, x, b))``;
* ``local_div_switch_sink``: ``switch(c, x, 0) / a -> switch(c, x / a, 0)`` and
  ``switch(c, 0, x) / a -> switch(c, 0, x / a)`` (also for ``//``);
* ``local_add_zero_fill``: ``add(a, second(s, 0), b) -> add(a, b)``, the zero terms a
  gradient adds, so that the product it is a factor of meets the switch (PyTensor's
  canonicalizer drops them; shape-unsafe as PyTensor's: ``s``'s lengths are assumed to
  be the output's).

The gradient of ``switch(c, f(x), g(x))`` is such a product: ``switch(c, g, 0) * f'(x)``.
Where the condition rules a branch out, that branch's derivative may be ``nan`` or
``inf`` (a logarithm outside its domain, a density whose parameter is out of bounds), and
``0 * nan`` is ``nan``; with the switch outside, the result is the 0 the other branch
gives, as in PyTensor (PyMC's gradients of bounded densities are written that way).

A zero is a constant whose elements are all 0 (through DimShuffles) or a fill of one
(``second(x, 0)``). Registered as PyTensor registers them: ``local_mul_switch_sink`` in
``canonicalize``, ``stabilize`` and ``specialize``, ``local_div_switch_sink`` in
``canonicalize`` (tags ``fast_run`` and the phase's name); ``local_add_zero_fill`` in
``canonicalize`` and ``specialize`` (tags ``fast_run``, ``shape_unsafe`` and the phase's
name). Every replacement has the
dtype and broadcastable dimensions of the variable it replaces (a form that would have
others is left alone).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import copy_stack_trace, node_rewriter
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.basic import cast
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.canonicalize import (
    _is_elemwise,
    _replace_if_same_type,
    constant_fill_value,
)

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "local_add_zero_fill",
    "local_div_switch_sink",
    "local_mul_switch_sink",
    "register_switch_sink",
]


def _is_zero(var: Variable) -> bool:
    """True if every element of ``var`` is 0: a constant (through DimShuffles) or a fill
    ``second(x, 0)`` of one."""
    owner = var.owner
    if _is_elemwise(owner, ps.Second):
        var = owner.inputs[1]
    value = constant_fill_value(var)
    return value is not None and bool(np.all(np.asarray(value) == 0))


def _split_switch(var: Variable) -> tuple[Variable, Variable, int] | None:
    """``(switch output, the branch that is not zero, index of the zero branch)`` when
    ``var`` is a ``switch`` with a zero branch (1: the true branch, 2: the false one)."""
    owner = var.owner
    if not _is_elemwise(owner, ps.Switch):
        return None
    for zero_index in (1, 2):
        if _is_zero(owner.inputs[zero_index]):
            other = owner.inputs[3 - zero_index]
            dtype = tensor_type_of(var).dtype
            if tensor_type_of(other).dtype != dtype:
                other = cast(other, dtype)
            return owner.outputs[0], other, zero_index
    return None


def _rebuilt(
    node: Apply, switch_out: Variable, inner: Variable, zero_index: int
) -> list[Variable] | bool:
    """``switch(cond, inner, zero)`` (or with the zero first), replacing ``node``'s output."""
    cond = switch_out.owner.inputs[0]  # type: ignore[union-attr]
    zero = switch_out.owner.inputs[zero_index]  # type: ignore[union-attr]
    copy_stack_trace(node.outputs, inner)
    new = tensor_out(
        tm.switch(cond, zero, inner) if zero_index == 1 else tm.switch(cond, inner, zero)
    )
    copy_stack_trace([*node.outputs, switch_out], new)
    return _replace_if_same_type(node.outputs[0], new)


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul,))
def local_mul_switch_sink(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``mul(a, switch(c, x, 0), b) -> switch(c, mul(a, x, b), 0)`` (the zero may be
    either branch)."""
    if not _is_elemwise(node, ps.Mul):
        return False
    for index, factor in enumerate(node.inputs):
        split = _split_switch(factor)
        if split is None:
            continue
        switch_out, other, zero_index = split
        factors = list(node.inputs)
        factors[index] = other
        return _rebuilt(node, switch_out, tensor_out(tm.mul(*factors)), zero_index)
    return False


@node_rewriter([Elemwise], scalar_tracks=(ps.TrueDiv, ps.IntDiv))
def local_div_switch_sink(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``switch(c, x, 0) / a -> switch(c, x / a, 0)`` (the zero may be either branch;
    also for ``//``)."""
    if not (_is_elemwise(node, ps.TrueDiv) or _is_elemwise(node, ps.IntDiv)):
        return False
    split = _split_switch(node.inputs[0])
    if split is None:
        return False
    switch_out, other, zero_index = split
    divide = tm.true_div if _is_elemwise(node, ps.TrueDiv) else tm.int_div
    return _rebuilt(node, switch_out, tensor_out(divide(other, node.inputs[1])), zero_index)


@node_rewriter([Elemwise], scalar_tracks=(ps.Add,))
def local_add_zero_fill(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``add(a, second(s, 0), b) -> add(a, b)`` (and constant zero terms) when the sum
    left has the output's Type."""
    if not _is_elemwise(node, ps.Add):
        return False
    terms = [term for term in node.inputs if not _is_zero(term)]
    if not terms or len(terms) == len(node.inputs):
        return False
    return _replace_if_same_type(
        node.outputs[0], terms[0] if len(terms) == 1 else tensor_out(tm.add(*terms))
    )


def register_switch_sink(db: RewriteDatabase) -> None:
    """Register the rewrites of this module in ``db`` (see the module docstring for the
    phases).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    for phase in ("canonicalize", "stabilize", "specialize"):
        db[phase].register("local_mul_switch_sink", local_mul_switch_sink, "fast_run", phase)
    db["canonicalize"].register(
        "local_div_switch_sink", local_div_switch_sink, "fast_run", "canonicalize"
    )
    for phase in ("canonicalize", "specialize"):
        db[phase].register(
            "local_add_zero_fill", local_add_zero_fill, "fast_run", "shape_unsafe", phase
        )
