"""Numerically stable forms of the error function family (PyTensor's ``local_one_plus_erf``
and the other ``erf``/``erfc`` patterns of ``pytensor.tensor.rewriting.math``, and
``local_log_erfc``).

``1 + erf(x)`` rounds to exactly 0 in float64 once ``x < -5.9`` (``erfc(-x)``, its exact
value, is 1e-17 there and stays representable down to ``x = -26.5``), so its logarithm is
``-inf`` where the true value is finite; the skew-normal density is written that way.
In the ``canonicalize``, ``stabilize`` and ``specialize`` phases (tags ``fast_run`` and
the phase's name), as PyTensor does:

* ``local_one_plus_erf``: ``1 + erf(x) -> erfc(-x)``;
* ``local_one_minus_erf``: ``1 - erf(x) -> erfc(x)`` (also written ``1 + -erf(x)``);
* ``local_erf_minus_one``: ``-1 + erf(x) -> -erfc(x)`` (also ``erf(x) - 1``);
* ``local_one_minus_erfc``: ``1 - erfc(x) -> erf(x)`` (also ``1 + -erfc(x)``);
* ``local_erf_neg_minus_one``: ``-1 + erfc(-x) -> erf(x)`` (also ``erfc(-x) - 1``).

The constant may be written as several constant terms of the sum, in any order, and
``-x`` as ``neg(x)`` or ``x * -1``.

``erfc(x)`` itself underflows to 0 once ``x`` passes 26.64 (float64; 10.05 in float32 and
float16), so in ``stabilize`` and ``specialize``:

* ``local_log_erfc``: ``log(erfc(x)) -> switch(x < threshold, log(erfc(x)), -x**2 - log(x)
  - log(pi) / 2 + log(1 - 1 / (2 x**2) + 3 / (4 x**4) - 15 / (8 x**6)))``, the asymptotic
  series PyTensor uses, with its thresholds.

Every replacement has the dtype and broadcastable dimensions of the variable it replaces
(a form that would have others is left alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from typing import cast as typed

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import node_rewriter
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting.canonicalize import constant_fill_value
from opweave.tensor.rewriting.math import (
    Replacement,
    _arg,
    _build,
    _dtype,
    _elemwise_owner,
    _is_close,
    _is_float,
    _minus,
    _negatives,
    _parse_product,
    _remove,
    _replacement,
    _same,
    _strip_neg,
)

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "local_erf_minus_one",
    "local_erf_neg_minus_one",
    "local_grad_log_erfc_neg",
    "local_log_erfc",
    "local_one_minus_erf",
    "local_one_minus_erfc",
    "local_one_plus_erf",
    "register_erf",
]

# The elementwise functions built here, typed as the one-output functions they are.
_Fn = Callable[..., Variable]
_erf, _erfc, _neg = typed(_Fn, tm.erf), typed(_Fn, tm.erfc), typed(_Fn, tm.neg)
_log, _lt, _switch = typed(_Fn, tm.log), typed(_Fn, tm.lt), typed(_Fn, tm.switch)
_true_div = typed(_Fn, tm.true_div)

#: Where ``log(erfc(x))`` switches to the asymptotic series, by output dtype (PyTensor's).
_LOG_ERFC_THRESHOLDS = {"float64": 26.641747557, "float32": 10.0541949, "float16": 10.0541949}
#: The tag marking a ``log(erfc(x))`` node ``local_log_erfc`` built (it is not rewritten).
_LOG_ERFC_DONE = "local_log_erfc_applied"
#: Where ``exp(-x**2) / erfc(x)`` switches to its asymptotic form (PyTensor's).
_GRAD_THRESHOLDS = {"float64": 26.641747557, "float32": 9.3, "float16": 9.3}
#: The tag marking an ``exp(-x**2) / erfc(x)`` node ``local_grad_log_erfc_neg`` built.
_GRAD_DONE = "local_grad_log_erfc_neg"


def _constant_plus_term(node: Apply) -> tuple[float, Variable, bool] | None:
    """``(c, t, negated)`` when ``node`` computes ``c + t`` (``negated``: ``c - t``), with
    ``c`` the sum of its constant terms and ``t`` its one other term, seen through a
    negation; ``None`` for any other node."""
    out = node.outputs[0]
    if _elemwise_owner(out, ps.Sub) is not None:
        a, b = node.inputs
        fill_a, fill_b = constant_fill_value(a), constant_fill_value(b)
        if fill_a is not None and fill_b is None:
            term, negated = _strip_neg(b)
            return float(np.real(fill_a)), term, not negated
        if fill_b is not None and fill_a is None:
            term, negated = _strip_neg(a)
            return -float(np.real(fill_b)), term, negated
        return None
    if _elemwise_owner(out, ps.Add) is None:
        return None
    total, rest = 0.0, []
    for inp in node.inputs:
        fill = constant_fill_value(inp)
        if fill is None:
            rest.append(inp)
        else:
            total += float(np.real(fill))
    if len(rest) != 1 or len(node.inputs) == 1:
        return None
    term, negated = _strip_neg(rest[0])
    return total, term, negated


def _is(value: float, target: float, dtype: str) -> bool:
    """True if the constant sum ``value`` is ``target`` (within 10 ULPs of ``dtype``)."""
    return abs(value - target) <= 10 * float(np.spacing(np.asarray(abs(target), dtype=dtype)))


def _matched(node: Apply, constant: float, negated: bool, scalar_class: type) -> Variable | None:
    """``x`` when ``node`` is ``constant + f(x)`` (``constant - f(x)`` if ``negated``), for
    the unary ``Elemwise`` ``f`` of ``scalar_class``, computed in a float dtype."""
    out = node.outputs[0]
    if not _is_float(out):
        return None
    parsed = _constant_plus_term(node)
    if parsed is None:
        return None
    total, term, is_negated = parsed
    if is_negated != negated or not _is(total, constant, _dtype(out)):
        return None
    owner = _elemwise_owner(term, scalar_class)
    return None if owner is None else owner.inputs[0]


@node_rewriter([Elemwise], scalar_tracks=(ps.Add, ps.Sub))
def local_one_plus_erf(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``1 + erf(x) -> erfc(-x)`` (``1 + erf(-6.0)`` is exactly 0 in float64;
    ``erfc(6.0)`` is 2.2e-17)."""
    x = _matched(node, 1.0, False, ps.Erf)
    if x is None:
        return False
    out = node.outputs[0]
    return _replacement(out, [_erfc(_minus(x, _dtype(out)))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Add, ps.Sub))
def local_one_minus_erf(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``1 - erf(x) -> erfc(x)``."""
    x = _matched(node, 1.0, True, ps.Erf)
    if x is None:
        return False
    return _replacement(node.outputs[0], [_erfc(x)])


@node_rewriter([Elemwise], scalar_tracks=(ps.Add, ps.Sub))
def local_erf_minus_one(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``-1 + erf(x) -> -erfc(x)``."""
    x = _matched(node, -1.0, False, ps.Erf)
    if x is None:
        return False
    return _replacement(node.outputs[0], [_neg(_erfc(x))])


@node_rewriter([Elemwise], scalar_tracks=(ps.Add, ps.Sub))
def local_one_minus_erfc(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``1 - erfc(x) -> erf(x)``."""
    x = _matched(node, 1.0, True, ps.Erfc)
    if x is None:
        return False
    return _replacement(node.outputs[0], [_erf(x)])


@node_rewriter([Elemwise], scalar_tracks=(ps.Add, ps.Sub))
def local_erf_neg_minus_one(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``-1 + erfc(-x) -> erf(x)``."""
    minus_x = _matched(node, -1.0, False, ps.Erfc)
    if minus_x is None:
        return False
    x, negated = _strip_neg(minus_x)
    if not negated:
        return False
    return _replacement(node.outputs[0], [_erf(x)])


@node_rewriter([Elemwise], scalar_tracks=(ps.Log,))
def local_log_erfc(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """``log(erfc(x))`` switching to its asymptotic series where ``erfc(x)`` underflows
    (``log(erfc(30.0))`` is ``-inf``; the series gives -903.4)."""
    out = node.outputs[0]
    if _elemwise_owner(out, ps.Log) is None or getattr(node.tag, _LOG_ERFC_DONE, False):
        return False
    erfc_node = _elemwise_owner(node.inputs[0], ps.Erfc)
    threshold = _LOG_ERFC_THRESHOLDS.get(_dtype(out))
    if erfc_node is None or threshold is None:
        return False
    x: Any = erfc_node.inputs[0]  # a tensor: its arithmetic operators build the series
    series = 1 - 1 / (2 * x**2) + 3 / (4 * x**4) - 15 / (8 * x**6)
    half_log_pi = np.asarray(0.5 * np.log(np.pi), dtype=_dtype(out))  # no upcast of float32
    stable = -(x**2) - _log(x) - half_log_pi + _log(series)
    direct = _log(node.inputs[0])
    assert direct.owner is not None
    setattr(direct.owner.tag, _LOG_ERFC_DONE, True)
    return _replacement(out, [_switch(_lt(x, threshold), direct, stable)])


def _minus_square_arg(var: Variable) -> Variable | None:
    """``y`` when ``var`` is ``exp(-y**2)`` (the square as ``sqr(y)``, ``y * y`` or
    ``y ** 2``; the negation as ``neg`` or a product by -1)."""
    arg = _arg(var, ps.Exp)
    if arg is None:
        return None
    square, negated = _strip_neg(arg)
    if not negated:
        return None
    y = _arg(square, ps.Sqr)
    if y is not None:
        return y
    mul = _elemwise_owner(square, ps.Mul)
    if mul is not None and len(mul.inputs) == 2 and _same(mul.inputs[0], mul.inputs[1]):
        return mul.inputs[0]
    power = _elemwise_owner(square, ps.Pow)
    if power is not None and _is_close(power.inputs[1], 2):
        return power.inputs[0]
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.Mul, ps.TrueDiv))
def local_grad_log_erfc_neg(fgraph: FunctionGraph, node: Apply) -> Replacement:
    """A product with ``exp(-x**2) / erfc(x)`` (the gradient of ``log(erfc(x))``) computes
    that ratio in one division, switching to ``x * sqrt(pi) / (1 - 1 / (2 x**2) + 3 / (4
    x**4) - 15 / (8 x**6))`` where ``erfc(x)`` underflows (the ratio is ``0 / 0`` there)."""
    out = node.outputs[0]
    if not _is_float(out) or getattr(node.tag, _GRAD_DONE, False):
        return False
    dtype = _dtype(out)
    threshold = _GRAD_THRESHOLDS.get(dtype)
    if threshold is None:
        return False
    prod = _parse_product(out, dtype)
    for den in prod.den:
        z: Any = _arg(den, ps.Erfc)
        if z is None or _dtype(z) != dtype:
            continue
        for num in prod.num:
            y = _minus_square_arg(num)
            if y is None or not (_same(y, z) or _negatives(y, z)) or _dtype(num) != dtype:
                continue
            ratio = _true_div(num, den)
            assert ratio.owner is not None
            setattr(ratio.owner.tag, _GRAD_DONE, True)
            series = 1 - 1 / (2 * z**2) + 3 / (4 * z**4) - 15 / (8 * z**6)
            stable = z * np.asarray(np.sqrt(np.pi), dtype=dtype) / series
            _remove(prod.num, num)
            _remove(prod.den, den)
            prod.num.append(_switch(_lt(z, threshold), ratio, stable))
            return _replacement(out, [_build(prod, dtype, False), _build(prod, dtype, True)])
    return False


def register_erf(db: RewriteDatabase) -> None:
    """Register the rewrites of this module in ``db`` (see the module docstring for the
    phases).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    patterns = (
        ("local_one_plus_erf", local_one_plus_erf),
        ("local_one_minus_erf", local_one_minus_erf),
        ("local_erf_minus_one", local_erf_minus_one),
        ("local_one_minus_erfc", local_one_minus_erfc),
        ("local_erf_neg_minus_one", local_erf_neg_minus_one),
    )
    for phase in ("canonicalize", "stabilize", "specialize"):
        for name, rewriter in patterns:
            db[phase].register(name, rewriter, "fast_run", phase)
    for phase in ("stabilize", "specialize"):
        db[phase].register("local_log_erfc", local_log_erfc, "fast_run", phase)
        db[phase].register("local_grad_log_erfc_neg", local_grad_log_erfc_neg, "fast_run", phase)
