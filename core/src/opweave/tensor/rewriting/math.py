"""Numerically stable rewrites of the logistic family: ``sigmoid``, ``softplus``,
``log1mexp`` and their gradients (PyTensor's ``pytensor.tensor.rewriting.math``, the part
about them).

The logistic function written out, ``1 / (1 + exp(-x))``, overflows in ``exp`` and rounds
to exactly 0 or 1 long before the true value leaves the floating-point range; its
logarithm is then ``-inf`` and its gradient ``0 * inf = nan``. These rewrites recognise
the written-out forms and replace them by ``sigmoid`` and ``softplus``, whose
implementations never overflow, as PyTensor does:

``stabilize`` (tags ``fast_run``, ``stabilize``):

* ``local_exp_over_1_plus_exp`` (a ``true_div``), ``local_reciprocal_1_plus_exp`` (a
  ``reciprocal``) and ``local_sigm_times_exp`` (a ``mul``): a product of factors over
  a product of factors (through ``mul``, ``true_div``, ``neg`` and ``reciprocal``) is
  simplified with ``exp(x) / (1 + exp(x)) -> sigmoid(x)``,
  ``c / (1 + exp(x)) -> c * sigmoid(-x)``, ``exp(x) * sigmoid(-x) -> sigmoid(x)`` and
  ``sigmoid(x) / sigmoid(x) -> 1``;
* ``local_sigm_distributor``: a product of a sum and ``sigmoid`` factors that divide
  terms of the sum is distributed over the sum, so that the factors cancel:
  ``(a / sigmoid(x) + b / sigmoid(-x)) * sigmoid(x) * sigmoid(-x)
  -> a * sigmoid(-x) + b * sigmoid(x)`` (the shape of the gradient of a cross-entropy;
  the part of PyTensor's ``local_greedy_distributor`` that keeps it finite);
* ``local_1msigmoid``: ``1 - sigmoid(x) -> sigmoid(-x)`` (also ``1 + -sigmoid(x)``);
* ``logsigm_to_softplus``: ``log(sigmoid(x)) -> -softplus(-x)``;
* ``log1msigm_to_softplus``: ``log(1 - sigmoid(x)) -> -softplus(x)``;
* ``log1p_neg_sigmoid``: ``log1p(-sigmoid(x)) -> -softplus(x)``;
* ``local_log1p_plusminus_exp``: ``log1p(exp(x)) -> softplus(x)`` (with
  ``local_log1p``, ``log(1 + exp(x))`` takes the same way), ``log1p(-exp(x))`` and
  ``log(1 - exp(x)) -> log1mexp(x)``;
* ``logmexpm1_to_log1mexp``: ``log(-expm1(x)) -> log1mexp(x)``.

``local_double_neg`` (:mod:`~opweave.tensor.rewriting.canonicalize`) also runs in
``stabilize``, as ``stabilize_double_neg``: the products are rebuilt with their sign
outside, which can meet a negation already there.

``specialize`` (tags ``fast_run``, ``specialize``): ``local_1msigmoid`` and
``log1p_neg_sigmoid`` again, as PyTensor registers them (a constant folded there can
complete ``1 - sigmoid(x)``).

The phases are PyTensor's: opweave's ``stabilize`` (position 1.5) runs after
``canonicalize`` and before ``specialize``, as PyTensor's does; nothing goes in
``canonicalize``, so graphs keep the form written until they are stabilized. The
rewrites recognise ``-x`` written as ``neg(x)`` or as ``x * -1``, and equal subgraphs
built twice; the negation they build of ``-x`` is ``x``.

Every replacement has the dtype and the broadcastable dimensions of the variable it
replaces (a form that would have others is left alone), so no shape or dtype changes.
``local_log1p``, ``local_expm1`` and ``local_pow_specialize``, which PyTensor also keeps
in this module, are defined in :mod:`opweave.tensor.rewriting.canonicalize` and
re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard
from typing import cast as typed

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_type_of
from opweave.tensor.basic import cast
from opweave.tensor.constructors import constant
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.canonicalize import (
    _replace_if_same_type,
    constant_fill_value,
    local_double_neg,
    local_expm1,
    local_log1p,
    local_pow_specialize,
)
from opweave.tensor.special import log1mexp
from opweave.tensor.type import TensorType, float_dtypes

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "local_1msigmoid",
    "local_exp_over_1_plus_exp",
    "local_expm1",
    "local_log1p",
    "local_log1p_plusminus_exp",
    "local_pow_specialize",
    "local_reciprocal_1_plus_exp",
    "local_sigm_distributor",
    "local_sigm_times_exp",
    "log1msigm_to_softplus",
    "log1p_neg_sigmoid",
    "logmexpm1_to_log1mexp",
    "logsigm_to_softplus",
    "register_math",
]

Replacement = list[Variable] | bool

# The elementwise functions built here, typed as the one-output functions they are.
_Fn = Callable[..., Variable]
_add, _sub, _mul = typed(_Fn, tm.add), typed(_Fn, tm.sub), typed(_Fn, tm.mul)
_true_div, _reciprocal = typed(_Fn, tm.true_div), typed(_Fn, tm.reciprocal)
_neg, _sigmoid, _softplus = typed(_Fn, tm.neg), typed(_Fn, tm.sigmoid), typed(_Fn, tm.softplus)
_log1mexp = typed(_Fn, log1mexp)

#: How many product (or sum) nodes one parse looks through; deeper ones are leaves.
_MAX_NODES = 64
#: How deep two subgraphs are compared when they are not the same variable.
_MAX_DEPTH = 4


# ====================================================================== matching


def _elemwise_owner(var: Variable, scalar_class: type) -> Apply | None:
    """The node computing ``var`` when it is a non-inplace ``Elemwise`` of ``scalar_class``."""
    node = var.owner
    if (
        node is not None
        and isinstance(node.op, Elemwise)
        and isinstance(node.op.scalar_op, scalar_class)
        and not node.op.inplace_pattern
    ):
        return node
    return None


def _arg(var: Variable, scalar_class: type) -> Variable | None:
    """``x`` when ``var`` is ``f(x)`` for the unary ``Elemwise`` of ``scalar_class``."""
    node = _elemwise_owner(var, scalar_class)
    return None if node is None else node.inputs[0]


def _is_close(var: Variable, value: float) -> bool:
    """True if ``var`` is a constant whose elements all equal ``value`` (within 10 ULPs
    for floats, as PyTensor compares constants here)."""
    fill = constant_fill_value(var)
    if fill is None:
        return False
    fill = np.asarray(fill)
    if fill.dtype.kind == "f":
        return bool(abs(fill - value) <= 10 * np.spacing(fill.dtype.type(value)))
    return bool(fill == value)


def _strip_neg(var: Variable) -> tuple[Variable, bool]:
    """``(x, True)`` when ``var`` is ``-x`` (``neg(x)``, or ``x * -1``), else ``(var, False)``."""
    x = _arg(var, ps.Neg)
    if x is not None:
        return x, True
    node = _elemwise_owner(var, ps.Mul)
    if node is not None and len(node.inputs) == 2:
        a, b = node.inputs
        if _is_close(a, -1):
            return b, True
        if _is_close(b, -1):
            return a, True
    return var, False


def _minus(var: Variable, dtype: str) -> Variable:
    """``-var`` for a function computed in the float ``dtype``: ``x`` when ``var`` is
    ``-x``, and an integer ``var`` is cast to ``dtype`` first (``-x`` wraps around for an
    unsigned ``x``)."""
    x, negated = _strip_neg(var)
    if negated:
        return x
    if getattr(var.type, "dtype", None) not in float_dtypes:
        var = cast(var, dtype)
    return _neg(var)


def _dtype(var: Variable) -> str:
    return tensor_type_of(var).dtype


def _same(a: Variable, b: Variable, depth: int = _MAX_DEPTH) -> bool:
    """True if ``a`` and ``b`` compute the same value: the same variable, equal constants,
    or outputs of equal Ops on the same inputs (compared ``depth`` levels deep)."""
    if a is b:
        return True
    if isinstance(a, Constant) or isinstance(b, Constant):
        return isinstance(a, Constant) and a.equals(b)
    if depth == 0 or a.owner is None or b.owner is None or a.type != b.type:
        return False
    na, nb = a.owner, b.owner
    return (
        a.index == b.index
        and len(na.inputs) == len(nb.inputs)
        and na.op == nb.op
        and all(_same(x, y, depth - 1) for x, y in zip(na.inputs, nb.inputs, strict=True))
    )


def _same_signed(a: Variable, b: Variable) -> bool:
    """True if ``a == b``, looking through negations on both sides."""
    xa, na = _strip_neg(a)
    xb, nb = _strip_neg(b)
    return na == nb and _same(xa, xb)


def _negatives(a: Variable, b: Variable) -> bool:
    """True if ``a == -b``."""
    xa, na = _strip_neg(a)
    xb, nb = _strip_neg(b)
    return na != nb and _same(xa, xb)


def _one_plus_exp_arg(var: Variable) -> Variable | None:
    """``x`` when ``var`` is ``1 + exp(x)`` (constant terms summing to 1, one ``exp``)."""
    node = _elemwise_owner(var, ps.Add)
    if node is None:
        return None
    total = 0.0
    rest = []
    for term in node.inputs:
        fill = constant_fill_value(term)
        if fill is None:
            rest.append(term)
        else:
            total += float(np.real(fill))
    if len(rest) != 1 or len(rest) == len(node.inputs):
        return None
    if abs(total - 1.0) > 10 * np.spacing(np.asarray(1.0, dtype=tensor_type_of(var).dtype)):
        return None
    return _arg(rest[0], ps.Exp)


def _is_float(var: Variable) -> TypeGuard[Variable[TensorType]]:
    return isinstance(var.type, TensorType) and var.type.dtype in float_dtypes


def _find(
    items: list[Variable], target: Variable, match: Callable[[Variable, Variable], bool]
) -> int | None:
    """The index of the first item of ``items`` for which ``match(item, target)``."""
    for k, item in enumerate(items):
        if match(item, target):
            return k
    return None


# ====================================================================== products


@dataclass
class _Product:
    """``(-1 if negative else 1) * prod(num) / prod(den)``.

    ``units`` holds the constants 1 and -1 the parse left out, each as ``(constant,
    divides, is_minus_one)``; the signs of the -1 are already in ``negative``. They are put
    back only where the result needs their dtype or their broadcasting.
    """

    negative: bool = False
    num: list[Variable] = field(default_factory=list)
    den: list[Variable] = field(default_factory=list)
    units: list[tuple[Variable, bool, bool]] = field(default_factory=list)

    def copy(self) -> _Product:
        return _Product(self.negative, list(self.num), list(self.den), list(self.units))


_PRODUCT_OPS = (ps.Mul, ps.TrueDiv, ps.Neg, ps.Reciprocal)


def _parse_product(var: Variable, dtype: str) -> _Product:
    """Flatten the ``mul``/``true_div``/``neg``/``reciprocal`` nodes (of ``dtype``) that
    compute ``var`` into a :class:`_Product` of the variables they combine."""
    prod = _Product()
    budget = [_MAX_NODES]

    def visit(v: Variable, in_den: bool) -> None:
        node = v.owner
        if (
            budget[0] > 0
            and node is not None
            and isinstance(node.op, Elemwise)
            and isinstance(node.op.scalar_op, _PRODUCT_OPS)
            and not node.op.inplace_pattern
            and getattr(v.type, "dtype", None) == dtype
        ):
            budget[0] -= 1
            scalar_op = node.op.scalar_op
            if isinstance(scalar_op, ps.Mul):
                for inp in node.inputs:
                    visit(inp, in_den)
            elif isinstance(scalar_op, ps.TrueDiv):
                visit(node.inputs[0], in_den)
                visit(node.inputs[1], not in_den)
            elif isinstance(scalar_op, ps.Neg):
                prod.negative = not prod.negative
                visit(node.inputs[0], in_den)
            else:
                visit(node.inputs[0], not in_den)
            return
        for unit in (1, -1):
            if _is_close(v, unit):
                prod.units.append((v, in_den, unit == -1))
                prod.negative ^= unit == -1
                return
        (prod.den if in_den else prod.num).append(v)

    visit(var, False)
    return prod


def _remove(items: list[Variable], item: Variable) -> None:
    """Remove ``item`` (this very variable) from ``items``."""
    del items[next(k for k, v in enumerate(items) if v is item)]


def _exp_of(var: Variable, x: Variable) -> bool:
    """True if ``var`` is ``exp(x)``."""
    arg = _arg(var, ps.Exp)
    return arg is not None and _same_signed(arg, x)


def _sigmoid_of_minus(var: Variable, x: Variable) -> bool:
    """True if ``var`` is ``sigmoid(-x)``."""
    arg = _arg(var, ps.Sigmoid)
    return arg is not None and _negatives(arg, x)


def _same_sigmoid(a: Variable, b: Variable) -> bool:
    """True if ``a`` and ``b`` are ``sigmoid`` of the same argument."""
    xa, xb = _arg(a, ps.Sigmoid), _arg(b, ps.Sigmoid)
    return xa is not None and xb is not None and _same_signed(xa, xb)


def _simplify(prod: _Product) -> bool:
    """Apply the sigmoid identities to ``prod`` in place; True if any applied."""
    changed = False
    # exp(x) / (1 + exp(x)) -> sigmoid(x); c / (1 + exp(x)) -> c * sigmoid(-x)
    for d in list(prod.den):
        x = _one_plus_exp_arg(d)
        if x is None:
            continue
        _remove(prod.den, d)
        k = _find(prod.num, x, _exp_of)
        if k is not None:
            prod.num[k] = _sigmoid(x)
        else:
            prod.num.append(_sigmoid(_minus(x, _dtype(d))))
        changed = True
    # exp(x) * sigmoid(-x) -> sigmoid(x)
    for n in list(prod.num):
        x = _arg(n, ps.Exp)
        if x is None:
            continue
        j = _find(prod.num, x, _sigmoid_of_minus)
        if j is not None:
            prod.num[j] = _sigmoid(x)
            _remove(prod.num, n)
            changed = True
    # sigmoid(x) / sigmoid(x) -> 1
    for d in list(prod.den):
        if _arg(d, ps.Sigmoid) is None:
            continue
        j = _find(prod.num, d, _same_sigmoid)
        if j is not None:
            del prod.num[j]
            _remove(prod.den, d)
            changed = True
    return changed


def _one(dtype: str) -> Variable:
    return constant(np.asarray(1, dtype=dtype))


def _build(prod: _Product, dtype: str, keep_units: bool, signed: bool = True) -> Variable:
    """The variable computing ``prod`` (``keep_units``: with the constants 1 and -1 the
    parse took out; ``signed=False``: without its sign)."""
    num, den, negative = list(prod.num), list(prod.den), prod.negative
    if keep_units:
        for var, in_den, minus in prod.units:
            (den if in_den else num).append(var)
            negative ^= minus
    top = None if not num else num[0] if len(num) == 1 else _mul(*num)
    if den:
        bottom = den[0] if len(den) == 1 else _mul(*den)
        value = _reciprocal(bottom) if top is None else _true_div(top, bottom)
    else:
        value = _one(dtype) if top is None else top
    return _minus(value, dtype) if negative and signed else value


def _replacement(old: Variable, candidates: list[Variable]) -> Replacement:
    """The first candidate with the dtype and broadcastable dimensions of ``old``."""
    for new in candidates:
        if (
            isinstance(new.type, TensorType)
            and new.type.dtype == tensor_type_of(old).dtype
            and new.type.broadcastable == tensor_type_of(old).broadcastable
        ):
            replaced = _replace_if_same_type(old, new)
            if replaced:
                return replaced
    return False


def _stabilize_product(node: Apply) -> Replacement:
    out = node.outputs[0]
    if not _is_float(out):
        return False
    dtype = out.type.dtype
    prod = _parse_product(out, dtype)
    if not _simplify(prod):
        return False
    return _replacement(out, [_build(prod, dtype, False), _build(prod, dtype, True)])


@node_rewriter([Elemwise], scalar_tracks=(ps.TrueDiv,))
def local_exp_over_1_plus_exp(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``exp(x) / (1 + exp(x)) -> sigmoid(x)`` and ``c / (1 + exp(x)) -> c * sigmoid(-x)``.

    The division is read as a product over a product (through ``mul``, ``true_div``,
    ``neg`` and ``reciprocal``), so the gradient of ``1 / (1 + exp(-x))``,
    ``-g / ((1 + exp(-x)) * (1 + exp(-x))) * exp(-x)``, becomes
    ``-g * sigmoid(x) * sigmoid(-x)``; ``exp(x) * sigmoid(-x)`` and
    ``sigmoid(x) / sigmoid(x)`` are simplified in the same product (see
    :data:`local_sigm_times_exp`).
    """
    if _elemwise_owner(node.outputs[0], ps.TrueDiv) is None:
        return False
    return _stabilize_product(node)


@node_rewriter([Elemwise], scalar_tracks=(ps.Reciprocal,))
def local_reciprocal_1_plus_exp(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``reciprocal(1 + exp(x)) -> sigmoid(-x)`` (and the other identities of
    :data:`local_exp_over_1_plus_exp` in the product below)."""
    if _elemwise_owner(node.outputs[0], ps.Reciprocal) is None:
        return False
    return _stabilize_product(node)


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul,))
def local_sigm_times_exp(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``exp(x) * sigmoid(-x) -> sigmoid(x)``, ``exp(-x) * sigmoid(x) -> sigmoid(-x)`` and
    ``sigmoid(x) / sigmoid(x) -> 1`` in a product (and the identities of
    :data:`local_exp_over_1_plus_exp` in the divisions it holds).

    ``exp(x) * sigmoid(-x)`` is ``inf * 0 = nan`` for large ``x``; ``sigmoid(x)`` is 1.
    """
    if _elemwise_owner(node.outputs[0], ps.Mul) is None:
        return False
    return _stabilize_product(node)


# ====================================================================== distribution


def _parse_sum(var: Variable, dtype: str) -> list[_Product] | None:
    """The terms of ``var`` when it is a sum (``add``/``sub`` of ``dtype``, looking through
    nested sums and negations), each as a :class:`_Product`; else ``None``."""
    if _elemwise_owner(var, ps.Add) is None and _elemwise_owner(var, ps.Sub) is None:
        return None
    if getattr(var.type, "dtype", None) != dtype:
        return None
    terms: list[_Product] = []
    budget = [_MAX_NODES]

    def visit(v: Variable, negative: bool) -> None:
        if budget[0] > 0 and getattr(v.type, "dtype", None) == dtype:
            node = _elemwise_owner(v, ps.Add)
            if node is not None:
                budget[0] -= 1
                for inp in node.inputs:
                    visit(inp, negative)
                return
            node = _elemwise_owner(v, ps.Sub)
            if node is not None:
                budget[0] -= 1
                visit(node.inputs[0], negative)
                visit(node.inputs[1], not negative)
                return
        term = _parse_product(v, dtype)
        term.negative ^= negative
        terms.append(term)

    visit(var, False)
    return terms if len(terms) > 1 else None


def _distribute(prod: _Product, terms: list[_Product]) -> bool:
    """Move into every term the sigmoid factors of ``prod`` that cancel in some term."""
    moved = False
    for outside, inside in (("num", "den"), ("den", "num")):
        factors: list[Variable] = getattr(prod, outside)
        for f in list(factors):
            if _arg(f, ps.Sigmoid) is None:
                continue
            hits = [_find(getattr(t, inside), f, _same_sigmoid) for t in terms]
            if all(h is None for h in hits):
                continue
            for t, h in zip(terms, hits, strict=True):
                if h is None:
                    getattr(t, outside).append(f)
                else:
                    del getattr(t, inside)[h]
            _remove(factors, f)
            moved = True
    return moved


def _build_sum(terms: list[_Product], dtype: str, keep_units: bool) -> Variable:
    """The variable computing the sum of ``terms`` (see :func:`_build`)."""
    first, *others = terms
    value = _build(first, dtype, keep_units, signed=False)
    total = _minus(value, dtype) if first.negative else value
    for t in others:
        value = _build(t, dtype, keep_units, signed=False)
        total = _sub(total, value) if t.negative else _add(total, value)
    return total


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul, ps.TrueDiv))
def local_sigm_distributor(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``(a / sigmoid(x) + b) * sigmoid(x) -> a + b * sigmoid(x)``: a product holding a sum
    and ``sigmoid`` factors is distributed over the sum when a factor cancels in a term.

    This is how the gradient of a cross-entropy of ``p = sigmoid(x)`` (``-y / p +
    (1 - y) / (1 - p)`` times ``p * (1 - p)``) stays finite where ``p`` rounds to 0 or 1.
    Only ``sigmoid`` factors are moved, and only when one cancels a divisor (or a
    factor, for a divisor of the product) of some term.
    """
    out = node.outputs[0]
    if not _is_float(out) or (
        _elemwise_owner(out, ps.Mul) is None and _elemwise_owner(out, ps.TrueDiv) is None
    ):
        return False
    dtype = out.type.dtype
    prod = _parse_product(out, dtype)
    if not any(_arg(v, ps.Sigmoid) is not None for v in prod.num + prod.den):
        return False
    for k, leaf in enumerate(prod.num):
        terms = _parse_sum(leaf, dtype)
        if terms is None:
            continue
        rest = prod.copy()
        del rest.num[k]
        if not _distribute(rest, terms):
            continue
        candidates = []
        for keep_units in (False, True):
            whole = rest.copy()
            whole.num.append(_build_sum(terms, dtype, keep_units))
            candidates.append(_build(whole, dtype, keep_units))
        return _replacement(out, candidates)
    return False


# ====================================================================== 1 - sigmoid, logs


def _one_minus_sigmoid_arg(var: Variable) -> Variable | None:
    """``x`` when ``var`` is ``1 - sigmoid(x)`` (also written ``1 + -sigmoid(x)``, the
    form ``log1p``'s gradient has)."""
    node = _elemwise_owner(var, ps.Sub)
    if node is not None:
        if not _is_close(node.inputs[0], 1):
            return None
        return _arg(node.inputs[1], ps.Sigmoid)
    node = _elemwise_owner(var, ps.Add)
    if node is None or len(node.inputs) != 2:
        return None
    for one, other in (node.inputs, node.inputs[::-1]):
        s, negated = _strip_neg(other)
        if negated and _is_close(one, 1):
            return _arg(s, ps.Sigmoid)
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.Sub, ps.Add))
def local_1msigmoid(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``1 - sigmoid(x) -> sigmoid(-x)``, and ``1 + -sigmoid(x)`` likewise (``1 -
    sigmoid(40.0)`` is exactly 0 in float64; ``sigmoid(-40.0)`` is 4.2e-18)."""
    x = _one_minus_sigmoid_arg(node.outputs[0])
    if x is None or not _is_float(node.outputs[0]):
        return False
    return _replacement(node.outputs[0], [_sigmoid(_minus(x, _dtype(node.outputs[0])))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def logsigm_to_softplus(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(sigmoid(x)) -> -softplus(-x)`` (finite where ``sigmoid(x)`` rounds to 0)."""
    if _elemwise_owner(node.outputs[0], ps.Log) is None:
        return False
    x = _arg(node.inputs[0], ps.Sigmoid)
    if x is None:
        return False
    out = node.outputs[0]
    return _replacement(out, [_neg(_softplus(_minus(x, _dtype(out))))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def log1msigm_to_softplus(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(1 - sigmoid(x)) -> -softplus(x)`` (finite where ``sigmoid(x)`` rounds to 1)."""
    if _elemwise_owner(node.outputs[0], ps.Log) is None:
        return False
    x = _one_minus_sigmoid_arg(node.inputs[0])
    if x is None:
        return False
    return _replacement(node.outputs[0], [_neg(_softplus(x))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log1p,))
def log1p_neg_sigmoid(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log1p(-sigmoid(x)) -> -softplus(x)``."""
    if _elemwise_owner(node.outputs[0], ps.Log1p) is None:
        return False
    s, negated = _strip_neg(node.inputs[0])
    x = _arg(s, ps.Sigmoid)
    if x is None or not negated:
        return False
    return _replacement(node.outputs[0], [_neg(_softplus(x))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log1p, ps.Log))
def local_log1p_plusminus_exp(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log1p(exp(x)) -> softplus(x)`` and ``log1p(-exp(x)) -> log1mexp(x)``; also
    ``log(1 - exp(x)) -> log1mexp(x)`` (PyTensor's ``local_log1p`` first turns it into
    ``log1p(-exp(x))``; opweave's rewrites only ``log(1 + x)``).

    ``exp`` overflows for ``x`` > 709 in float64 (88 in float32), where ``softplus(x)`` is
    ``x``; ``1 - exp(x)`` loses every digit as ``x`` nears 0 (it is 0 for ``x = -1e-10``
    in float32), where ``log1mexp`` stays exact.
    """
    out = node.outputs[0]
    if _elemwise_owner(out, ps.Log1p) is not None:
        e, negated = _strip_neg(node.inputs[0])
        x = _arg(e, ps.Exp)
        if x is None:
            return False
        return _replacement(out, [_log1mexp(x) if negated else _softplus(x)])
    if _elemwise_owner(out, ps.Log) is not None:
        diff = _elemwise_owner(node.inputs[0], ps.Sub)
        if diff is None or not _is_close(diff.inputs[0], 1):
            return False
        x = _arg(diff.inputs[1], ps.Exp)
        if x is None:
            return False
        return _replacement(out, [_log1mexp(x)])
    return False


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def logmexpm1_to_log1mexp(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(-expm1(x)) -> log1mexp(x)`` (``-expm1(x)`` rounds to 1 for ``x < -37`` in
    float64, so its logarithm is 0 where ``log1mexp`` gives ``-exp(x)``)."""
    if _elemwise_owner(node.outputs[0], ps.Log) is None:
        return False
    e, negated = _strip_neg(node.inputs[0])
    x = _arg(e, ps.Expm1)
    if x is None or not negated:
        return False
    return _replacement(node.outputs[0], [_log1mexp(x)])


# ====================================================================== registration


def register_math(db: RewriteDatabase) -> None:
    """Register the rewrites of this module in the ``stabilize`` and ``specialize`` phases
    of ``db`` (see the module docstring for the list).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    stabilize = db["stabilize"]
    for name, rewriter in (
        ("local_exp_over_1_plus_exp", local_exp_over_1_plus_exp),
        ("local_reciprocal_1_plus_exp", local_reciprocal_1_plus_exp),
        ("local_sigm_times_exp", local_sigm_times_exp),
        ("local_sigm_distributor", local_sigm_distributor),
        ("local_1msigmoid", local_1msigmoid),
        ("logsigm_to_softplus", logsigm_to_softplus),
        ("log1msigm_to_softplus", log1msigm_to_softplus),
        ("log1p_neg_sigmoid", log1p_neg_sigmoid),
        ("local_log1p_plusminus_exp", local_log1p_plusminus_exp),
        ("logmexpm1_to_log1mexp", logmexpm1_to_log1mexp),
        # the products above are rebuilt with their sign outside: -(-x) where a
        # negation already stood there
        ("stabilize_double_neg", local_double_neg),
    ):
        stabilize.register(name, rewriter, "fast_run", "stabilize")
    specialize = db["specialize"]
    for name, rewriter in (
        ("local_1msigmoid", local_1msigmoid),
        ("log1p_neg_sigmoid", log1p_neg_sigmoid),
    ):
        specialize.register(name, rewriter, "fast_run", "specialize")
