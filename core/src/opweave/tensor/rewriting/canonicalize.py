"""Algebraic rewrites of tensor graphs: canonical forms, stable forms, special cases.

Every rewrite here replaces a variable only by one of the very same Type (dtype and
static shape; a more specific static shape is accepted, a less specific one goes
through ``specify_shape``), so a rewrite never changes what a function returns beyond
floating-point rounding; where the simpler form would have another Type
(``int8_x + 0.0`` is ``float64``; ``vector_x * ones((3, 4))`` broadcasts ``x``), the
node is left alone.

``canonicalize`` (tags ``fast_run``, ``canonicalize``):

* ``local_mul_by_one``: ``x * 1 -> x`` (constant ones dropped from a product);
* ``local_add_zero``: ``x + 0 -> x`` (constant zeros dropped from a sum);
* ``local_sub_zero``: ``x - 0 -> x``;
* ``local_double_neg``: ``-(-x) -> x``;
* ``local_sub_self``: ``x - x -> zeros_like(x)`` (as PyTensor, also where ``x`` holds
  ``inf`` or ``nan``);
* ``local_reduce_of_dimshuffle``: a ``Sum`` (or ``Prod``, ``Max``, ``Min``) of a
  :class:`~opweave.tensor.dimshuffle.DimShuffle` becomes the reduction of the
  DimShuffle's input over the corresponding axes, followed by a DimShuffle of the
  result: ``sum(x.T, axis=0) -> sum(x, axis=1)``, ``sum(x.T) -> sum(x)``.
* ``local_dimshuffle_merge``: two DimShuffles in a row become one
  (``x.dimshuffle(a).dimshuffle(b) -> x.dimshuffle(a[b])``: ``x.T.T -> x``,
  ``expand_dims`` then ``squeeze`` -> nothing), and an identity DimShuffle is removed;
* ``local_useless_dimshuffle_makevector``: ``MakeVector(a).dimshuffle(()) -> a`` (the
  0-d element of a one-element vector, where it has the result's Type);
* ``local_fill_of_elemwise``: ``second(f(x, ...), v) -> second(x, v)`` for an elementwise
  ``f`` and an input ``x`` of the output's shape (a fill reads only its first input's
  shape: the gradient of ``sum(x ** 2)`` no longer keeps ``x ** 2`` alive for it).

``stabilize`` (tags ``fast_run``, ``stabilize``):

* ``local_log1p``: ``log(1 + x) -> log1p(x)``;
* ``local_expm1``: ``exp(x) - 1 -> expm1(x)`` (and ``exp(x) + -1``);
* ``local_log_softmax``: ``log(softmax(x)) -> log_softmax(x)``.

``specialize`` (tags ``fast_run``, ``specialize``):

* ``local_dot_transposes``: ``dot(x.T, y.T) -> dot(y, x).T``;
* ``local_pow_specialize``: ``x ** 2 -> sqr(x)`` and ``x ** 1 -> x`` (as NumPy's
  ``power`` does; a generic ``pow`` is many times slower than a multiplication).

Constant arithmetic (``2 * 3``) is left to constant folding
(:mod:`opweave.tensor.rewriting.constant_folding`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import MergeOptimizer, node_rewriter
from opweave.raise_op import CheckAndRaise
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var
from opweave.tensor.basic import MakeVector, zeros_like
from opweave.tensor.blas import Dot
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.reductions import Max, Min, Prod, Sum
from opweave.tensor.special import LogSoftmax, Softmax
from opweave.tensor.type import TensorType

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "constant_fill_value",
    "local_add_zero",
    "local_dot_transposes",
    "local_double_neg",
    "local_expm1",
    "local_fill_of_elemwise",
    "local_log1p",
    "local_log_softmax",
    "local_mul_by_one",
    "local_pow_specialize",
    "local_reduce_of_dimshuffle",
    "local_sub_self",
    "local_sub_zero",
    "local_useless_dimshuffle_makevector",
    "register_canonicalize",
]


# ====================================================================== helpers


def _is_elemwise(node: Apply | None, scalar_class: type) -> TypeGuard[Apply]:
    """True if ``node`` is a non-inplace ``Elemwise`` of a ``scalar_class`` scalar Op."""
    return (
        node is not None
        and isinstance(node.op, Elemwise)
        and isinstance(node.op.scalar_op, scalar_class)
        and not node.op.inplace_pattern
    )


def constant_fill_value(var: Variable, max_depth: int = 8) -> Any:
    """Return the value every element of ``var`` has, when ``var`` is such a constant.

    Looks through DimShuffles of a constant (how Elemwise broadcasts a constant).

    Parameters
    ----------
    var
        A variable.
    max_depth
        How many DimShuffles to look through.

    Returns
    -------
    numpy scalar or None
        The common value of all the elements of a non-empty constant, else ``None``
        (also for ``nan``, which equals nothing).
    """
    for _ in range(max_depth):
        owner = var.owner
        if owner is None or not isinstance(owner.op, DimShuffle):
            break
        var = owner.inputs[0]
    if not isinstance(var, Constant):
        return None
    data = np.asarray(var.data)
    if data.size == 0 or data.dtype.kind not in "biufc":
        return None
    flat = data.reshape(-1)
    first = flat[0]
    if data.size == 1:  # the common case (a scalar or broadcast constant), without a ufunc
        return first if first == first else None
    if not np.all(flat == first):
        return None
    return first


def _is_constant(var: Variable, value: float) -> bool:
    fill = constant_fill_value(var)
    return fill is not None and bool(fill == value)


def _same_type(old: Variable, new: Variable) -> bool:
    """True if ``new`` can replace ``old`` as it is (equal or more specific Type)."""
    if new.type == old.type:
        return True
    is_super = getattr(old.type, "is_super", None)
    return bool(is_super is not None and is_super(new.type))


def _replace_if_same_type(old: Variable, new: Variable) -> list[Variable] | bool:
    """``[new]`` if it can replace ``old``; a ``SpecifyShape`` of ``new`` if only ``old``'s
    static shape is more specific (checked at run time, where the unrewritten node would
    also have refused other lengths); else ``False``."""
    if _same_type(old, new):
        return [new]
    convert = getattr(old.type, "convert_variable", None)
    if convert is None:
        return False
    try:
        converted = convert(new)
    except (TypeError, ValueError):
        return False
    if converted is None or not _same_type(old, converted):
        return False
    return [converted]


def _drop_neutral(node: Apply, neutral: float, rebuild: Elemwise) -> list[Variable] | bool:
    """Drop the inputs of ``node`` that are constants equal to ``neutral``."""
    kept = [inp for inp in node.inputs if not _is_constant(inp, neutral)]
    if len(kept) == len(node.inputs) or not kept:
        return False  # nothing to drop, or only constants (constant folding's job)
    new = kept[0] if len(kept) == 1 else tensor_out(rebuild(*kept))
    return _replace_if_same_type(node.outputs[0], new)


# ====================================================================== canonicalize


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul,))
def local_mul_by_one(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x * 1 -> x``: constant ones are dropped from a product of the same Type."""
    if not _is_elemwise(node, ps.Mul):
        return False
    return _drop_neutral(node, 1, tm.mul)


@node_rewriter([Elemwise], scalar_tracks=(ps.Add,))
def local_add_zero(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x + 0 -> x``: constant zeros are dropped from a sum of the same Type."""
    if not _is_elemwise(node, ps.Add):
        return False
    return _drop_neutral(node, 0, tm.add)


@node_rewriter([Elemwise], scalar_tracks=(ps.Sub,))
def local_sub_zero(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x - 0 -> x`` when ``x`` has the output's Type."""
    if not _is_elemwise(node, ps.Sub):
        return False
    x, y = node.inputs
    if not _is_constant(y, 0):
        return False
    return _replace_if_same_type(node.outputs[0], x)


@node_rewriter([Elemwise], scalar_tracks=(ps.Neg,))
def local_double_neg(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``-(-x) -> x``."""
    if not _is_elemwise(node, ps.Neg):
        return False
    inner = node.inputs[0].owner
    if not _is_elemwise(inner, ps.Neg):
        return False
    return _replace_if_same_type(node.outputs[0], inner.inputs[0])


@node_rewriter([Elemwise], scalar_tracks=(ps.Sub,))
def local_sub_self(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x - x -> zeros_like(x)`` (an ``Alloc`` of zero shaped like ``x``)."""
    if not _is_elemwise(node, ps.Sub):
        return False
    x, y = node.inputs
    if x is not y or not isinstance(x.type, TensorType):
        return False
    out = node.outputs[0]
    return _replace_if_same_type(out, zeros_like(x, dtype=tensor_type_of(out).dtype))


_ORDER_FREE_REDUCTIONS = (Sum, Prod, Max, Min)


@node_rewriter(list(_ORDER_FREE_REDUCTIONS))
def local_reduce_of_dimshuffle(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``reduce(dimshuffle(x)) -> dimshuffle(reduce(x))`` over the corresponding axes.

    For ``Sum``, ``Prod``, ``Max`` and ``Min``, whose result does not depend on the order
    of the axes: the reduction runs on the DimShuffle's input (new ``"x"`` axes, of
    length 1, need no reduction) and a DimShuffle puts the remaining axes in the order
    the original output had (dropping the axes the original DimShuffle dropped).
    """
    op = node.op
    # exactly these Ops, not subclasses (the isinstance test only tells the type checker)
    if type(op) not in _ORDER_FREE_REDUCTIONS or not isinstance(op, _ORDER_FREE_REDUCTIONS):
        return False
    (inp,) = node.inputs
    ds = inp.owner
    if ds is None or not isinstance(ds.op, DimShuffle):
        return False
    x = tensor_var(ds.inputs[0])
    order = ds.op.new_order
    reduced_positions = set(op.reduced_axes(len(order)))
    axes = sorted(int(order[p]) for p in reduced_positions if order[p] != "x")
    remaining = [a for a in range(x.type.ndim) if a not in axes]
    rank = {a: k for k, a in enumerate(remaining)}
    new_order: list[int | str] = [
        "x" if order[p] == "x" else rank[int(order[p])]
        for p in range(len(order))
        if p not in reduced_positions
    ]
    if axes:
        reduced = tensor_out(op.clone(axis=tuple(axes))(x))
    elif x.type.dtype == tensor_type_of(node.outputs[0]).dtype:
        reduced = x  # only new axes were reduced: nothing to compute
    else:
        return False
    if new_order != list(range(reduced.type.ndim)):
        reduced = tensor_out(DimShuffle(reduced.type.ndim, new_order)(reduced))
    return _replace_if_same_type(node.outputs[0], reduced)


# ====================================================================== stabilize


@node_rewriter([DimShuffle])
def local_dimshuffle_merge(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x.dimshuffle(a).dimshuffle(b) -> x.dimshuffle(a[b])`` and an identity DimShuffle
    ``-> x`` (same Type only)."""
    op = node.op
    if not isinstance(op, DimShuffle):
        return False
    inner = node.inputs[0].owner
    if inner is not None and isinstance(inner.op, DimShuffle):
        first = inner.op.new_order
        composed = tuple("x" if k == "x" else first[int(k)] for k in op.new_order)
        x, ndim = inner.inputs[0], inner.op.input_ndim
        if composed == tuple(range(ndim)):
            return _replace_if_same_type(node.outputs[0], x)
        new = tensor_out(DimShuffle(ndim, composed)(x))
        return _replace_if_same_type(node.outputs[0], new)
    if op.new_order == tuple(range(op.input_ndim)):
        return _replace_if_same_type(node.outputs[0], node.inputs[0])
    return False


@node_rewriter([DimShuffle])
def local_useless_dimshuffle_makevector(
    fgraph: FunctionGraph, node: Apply
) -> list[Variable] | bool:
    """``MakeVector(a).dimshuffle(()) -> a`` (PyTensor's name): dropping the only
    dimension of a one-element ``MakeVector`` gives back its element."""
    if not isinstance(node.op, DimShuffle) or node.op.new_order != ():
        return False
    vec = node.inputs[0].owner
    if vec is None or not isinstance(vec.op, MakeVector) or len(vec.inputs) != 1:
        return False
    (element,) = vec.inputs
    if element.type != node.outputs[0].type:
        return False
    return [element]


@node_rewriter([Elemwise], scalar_tracks=(ps.Second,))
def local_fill_of_elemwise(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``second(f(x, ...), v) -> second(x, v)``: the fill's shape comes from an input of
    the elementwise ``f`` that has the output's shape (broadcasting needs a static length
    of 1, so an input without one where the output has none has the output's length).

    ``second(check(x, *conds), v) -> second(x, v)`` too: the fill reads only the shape,
    which the check does not change, so the conditions are not evaluated (as in PyTensor,
    whose fill becomes an ``Alloc`` of that shape).
    """
    if not _is_elemwise(node, ps.Second):
        return False
    shaped, value = node.inputs
    inner = shaped.owner
    if inner is not None and isinstance(inner.op, CheckAndRaise):
        return _replace_if_same_type(node.outputs[0], tensor_out(node.op(inner.inputs[0], value)))
    if inner is None or not isinstance(inner.op, Elemwise):
        return False
    out = tensor_type_of(inner.outputs[0])
    for x in inner.inputs:
        xt = tensor_type_of(x)
        if xt.ndim == out.ndim and not any(
            a == 1 and b != 1 for a, b in zip(xt.shape, out.shape, strict=True)
        ):
            return _replace_if_same_type(node.outputs[0], tensor_out(node.op(x, value)))
    return False


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def local_log1p(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``log(1 + x) -> log1p(x)`` (the sum may have more terms: ``log(1 + x + y)``)."""
    if not _is_elemwise(node, ps.Log):
        return False
    total = node.inputs[0].owner
    if not _is_elemwise(total, ps.Add):
        return False
    terms: Sequence[Variable] = total.inputs
    ones = [k for k, t in enumerate(terms) if _is_constant(t, 1)]
    if not ones:
        return False
    rest = [t for k, t in enumerate(terms) if k != ones[0]]
    if not rest:
        return False
    arg = rest[0] if len(rest) == 1 else tensor_out(tm.add(*rest))
    return _replace_if_same_type(node.outputs[0], tensor_out(tm.log1p(arg)))


@node_rewriter([Elemwise], scalar_tracks=(ps.Sub, ps.Add))
def local_expm1(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``exp(x) - 1 -> expm1(x)``, and ``exp(x) + (-1)`` likewise."""
    if _is_elemwise(node, ps.Sub):
        e, one = node.inputs
        if not _is_constant(one, 1):
            return False
    elif _is_elemwise(node, ps.Add) and len(node.inputs) == 2:
        a, b = node.inputs
        if _is_constant(b, -1):
            e = a
        elif _is_constant(a, -1):
            e = b
        else:
            return False
    else:
        return False
    if not _is_elemwise(e.owner, ps.Exp):
        return False
    x = e.owner.inputs[0]
    return _replace_if_same_type(node.outputs[0], tensor_out(tm.expm1(x)))


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def local_log_softmax(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``log(softmax(x, axis)) -> log_softmax(x, axis)``."""
    if not _is_elemwise(node, ps.Log):
        return False
    sm = node.inputs[0].owner
    if sm is None or type(sm.op) is not Softmax:
        return False
    new = tensor_out(LogSoftmax(sm.op.axis)(sm.inputs[0]))
    return _replace_if_same_type(node.outputs[0], new)


# ====================================================================== specialize


def _transposed(var: Variable) -> Variable | None:
    """``x`` if ``var`` is the transpose ``x.T`` of a matrix, else ``None``."""
    owner = var.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.new_order == (1, 0):
        return owner.inputs[0]
    return None


@node_rewriter([Dot])
def local_dot_transposes(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``dot(x.T, y.T) -> dot(y, x).T`` (one transpose instead of two)."""
    a, b = node.inputs
    x, y = _transposed(a), _transposed(b)
    if x is None or y is None:
        return False
    product = Dot()(y, x)
    new = tensor_out(DimShuffle(2, (1, 0))(product))
    return _replace_if_same_type(node.outputs[0], new)


@node_rewriter([Elemwise], scalar_tracks=(ps.Pow,))
def local_pow_specialize(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``x ** 2 -> sqr(x)``, ``x ** 1 -> x`` for a constant exponent, same Type only."""
    if not _is_elemwise(node, ps.Pow):
        return False
    base, exponent = node.inputs
    if _is_constant(exponent, 2):
        return _replace_if_same_type(node.outputs[0], tensor_out(tm.sqr(base)))
    if _is_constant(exponent, 1):
        return _replace_if_same_type(node.outputs[0], base)
    return False


# ====================================================================== registration


def register_canonicalize(db: RewriteDatabase) -> None:
    """Register the rewrites of this module in the ``canonicalize``, ``stabilize`` and
    ``specialize`` phases of ``db`` (see the module docstring for the list).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    canonicalize = db["canonicalize"]
    for name, rewriter in (
        ("local_mul_by_one", local_mul_by_one),
        ("local_add_zero", local_add_zero),
        ("local_sub_zero", local_sub_zero),
        ("local_double_neg", local_double_neg),
        ("local_sub_self", local_sub_self),
        ("local_reduce_of_dimshuffle", local_reduce_of_dimshuffle),
        ("local_dimshuffle_merge", local_dimshuffle_merge),
        ("local_useless_dimshuffle_makevector", local_useless_dimshuffle_makevector),
        ("local_fill_of_elemwise", local_fill_of_elemwise),
    ):
        canonicalize.register(name, rewriter, "fast_run", "canonicalize")
    # PyTensor's cleanup entry of canonicalize: a merge after the other entries of each
    # pass, so that duplicates are merged also where a query selects canonicalize alone.
    canonicalize.register(
        "merge", MergeOptimizer(name="canon_merge"), "fast_run", "canonicalize", cleanup=True
    )
    stabilize = db["stabilize"]
    for name, rewriter in (
        ("local_log1p", local_log1p),
        ("local_expm1", local_expm1),
        ("local_log_softmax", local_log_softmax),
    ):
        stabilize.register(name, rewriter, "fast_run", "stabilize")
    for name, rewriter in (
        ("local_dot_transposes", local_dot_transposes),
        ("local_pow_specialize", local_pow_specialize),
    ):
        db["specialize"].register(name, rewriter, "fast_run", "specialize")
