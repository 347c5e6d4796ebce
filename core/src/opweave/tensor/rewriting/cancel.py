"""Cancellation of a factor that divides a product it is also a factor of, and merging
of constant factors (the parts of PyTensor's ``local_mul_canonizer`` that remove common
factors and merge constants).

* ``local_mul_div_cancel``: a tree of ``mul`` and ``true_div`` nodes is read as a list of
  numerator and a list of denominator factors; a variable found in both is removed from
  both: ``(g / (x / b)) * x -> g * b``, ``(x * y) / x -> y``;
* ``local_greedy_distributor``: a product of a sum and factors that divide one of the
  sum's terms is distributed over the sum, so that the factors cancel there
  (PyTensor's name; ``(a + g / x) * x -> a * x + g``).
* ``local_mul_constants``: the constant factors of a product (``mul``, ``true_div`` and
  ``reciprocal`` nodes) are merged into one constant computed in the product's dtype,
  where a constant factor is itself a product of constants (the part of PyTensor's
  ``local_mul_canonizer`` that merges constants): ``x / reciprocal(3) -> 3.0 * x``,
  ``x * reciprocal(reciprocal(3)) -> 3.0 * x``, ``x * reciprocal(3) -> 0.333... * x``
  with a float64 ``x``. Inner products of another dtype are read through too, as
  PyTensor reads them: ``v ** 2 / (int8 3 * int8 7 ** 2) -> 0.333... * v ** 2 / 7 ** 2``
  (the int8 product ``147`` would wrap around to ``-109``; this is the form of PyMC's
  ``HalfStudentT`` log-density). As in PyTensor, this runs before constant folding (an ``out2in``
  phase, ``canonicalize_mul_constants``, before the ``constant_folding`` phase, and in
  ``canonicalize``): folding ``reciprocal(int8 3)`` first would give the float32
  ``0.33333334``, whose rounding would then enter the float64 product.

The gradient of ``log(x / b)`` with respect to ``b`` is built as ``(g / (x / b)) * x /
b ** 2``; where ``x`` is 0 that is ``inf * 0 = nan``, while the value, ``-g / b``, is
finite (the log-density of a scale family at an observed 0, for instance). As in
PyTensor, the cancelled form is used, also where the factor is 0 or infinite.

Only products whose factors cancel (or that hold a product of constants) are rewritten
(other graphs are left as they are), and a replacement must have the dtype and
broadcastable dimensions of the variable it replaces: ``row * y / y`` with a matrix ``y``
is left alone, the factor gives the shape.
All are registered in ``canonicalize`` (tags ``fast_run`` and ``canonicalize``);
``local_mul_constants`` also in its own phase (see above), with the same tags.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING, Any

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting import copy_stack_trace, node_rewriter, out2in
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of
from opweave.tensor.constructors import constant
from opweave.tensor.dimshuffle import DimShuffle
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
    "local_greedy_distributor",
    "local_mul_constants",
    "local_mul_div_cancel",
    "register_cancel",
]

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


_PRODUCT_OPS = (ps.Mul, ps.TrueDiv, ps.Reciprocal)


def _product_owner(var: Variable, integers: bool = False) -> Apply | None:
    """The node computing ``var`` if it is a float ``mul``, ``true_div`` or ``reciprocal``
    (or an integer one, with ``integers``)."""
    owner = var.owner
    if owner is None:
        return None
    kind = np.dtype(tensor_type_of(var).dtype).kind
    if kind != "f" and not (integers and kind in "iu"):
        return None
    if any(_is_elemwise(owner, op) for op in _PRODUCT_OPS):
        return owner
    return None


def _inverts(owner: Apply, k: int) -> bool:
    """True if input ``k`` of the product ``owner`` is a divisor (of ``reciprocal`` or
    the second of ``true_div``)."""
    return _is_elemwise(owner, ps.Reciprocal) or (_is_elemwise(owner, ps.TrueDiv) and k == 1)


def _left_expand_input(var: Variable) -> Variable | None:
    """``x`` if ``var`` is ``x`` with new axes prepended (how Elemwise broadcasts ``x``)."""
    owner = var.owner
    if owner is not None and isinstance(owner.op, DimShuffle) and owner.op.is_left_expand_dims:
        return owner.inputs[0]
    return None


def _unique_value(var: Variable) -> Any:
    """The value every element of the numeric constant ``var`` has, else ``None``."""
    if not isinstance(var, Constant):
        return None
    value = constant_fill_value(var, max_depth=0)
    if value is None or np.asarray(value).dtype.kind not in "iuf":
        return None
    return value


def _constant_product(var: Variable, depth: int = 0) -> tuple[list[Any], list[Any], bool] | None:
    """``(numerator, denominator, has_product)`` values of a product of constants.

    ``var`` is a numeric constant with one value, or a ``mul``, ``true_div``,
    ``reciprocal`` or (float) ``neg`` of such products (through new leading axes);
    ``has_product`` tells whether a ``mul``, ``true_div`` or ``reciprocal`` node was read.
    ``None`` for anything else.
    """
    value = _unique_value(var)
    if value is not None:
        return [value], [], False
    if depth >= _MAX_DEPTH:
        return None
    inner = _left_expand_input(var)
    if inner is not None:
        return _constant_product(inner, depth + 1)
    if _is_elemwise(var.owner, ps.Neg) and tensor_type_of(var).dtype.startswith("float"):
        # ``-c`` is ``-1 * c`` (PyTensor's ``local_neg_to_mul`` runs in canonicalize)
        negated = _constant_product(var.owner.inputs[0], depth + 1)
        if negated is None:
            return None
        n, d, has_product = negated
        return [*n, np.int8(-1)], d, has_product
    owner = _product_owner(var, integers=True)
    if owner is None:
        return None
    parts = [_constant_product(inp, depth + 1) for inp in owner.inputs]
    if any(part is None for part in parts):
        return None
    num: list[Any] = []
    den: list[Any] = []
    for k, part in enumerate(parts):
        assert part is not None
        n, d, _ = part
        inverted = _inverts(owner, k)
        num, den = (num + d, den + n) if inverted else (num + n, den + d)
    return num, den, True


@dataclass
class _Product:
    """The factors of a product: variables and constant values, above and below;
    ``merge``: a constant was found that a node of another dtype than the product's
    would combine (a product of constants, or a constant factor of an inner product of
    another dtype)."""

    num: list[Variable] = field(default_factory=list)
    den: list[Variable] = field(default_factory=list)
    num_values: list[Any] = field(default_factory=list)
    den_values: list[Any] = field(default_factory=list)
    merge: bool = False


def _read_product(
    var: Variable, dtype: str, above: bool, prod: _Product, depth: int, inner: bool
) -> None:
    """Add the factors of ``var`` to ``prod`` (``above``: in the numerator).

    Products (float or integer, as PyTensor's canonicalizer reads them) are read
    through, as are new leading axes; a product of constants gives its constant values.
    ``inner``: ``var`` is read inside a product of another dtype than ``dtype``.
    """
    const = _constant_product(var)
    if const is not None:
        n, d, has_product = const
        prod.num_values += n if above else d
        prod.den_values += d if above else n
        prod.merge = prod.merge or has_product or inner
        return
    target = var
    while (expanded := _left_expand_input(target)) is not None and depth < _MAX_DEPTH:
        target, depth = expanded, depth + 1
    owner = _product_owner(target, integers=True)
    if depth < _MAX_DEPTH and owner is not None:
        inner = inner or tensor_type_of(target).dtype != dtype
        for k, inp in enumerate(owner.inputs):
            _read_product(inp, dtype, above != _inverts(owner, k), prod, depth + 1, inner)
        return
    (prod.num if above else prod.den).append(var)


def _read_by_product(fgraph: FunctionGraph, var: Variable) -> bool:
    """True if a float product reads ``var`` as a factor (it is rewritten there, as
    PyTensor's canonicalizer waits for the outermost product)."""
    for client, _ in fgraph.clients.get(var, ()):
        node: Any = client
        while (
            isinstance(getattr(node, "op", None), DimShuffle)
            and node.op.is_left_expand_dims
            and len(fgraph.clients.get(node.outputs[0], ())) == 1
        ):
            node = fgraph.clients[node.outputs[0]][0][0]
        if not isinstance(node, Apply) or not isinstance(node.op, Elemwise):
            continue
        if _product_owner(node.outputs[0]) is node:
            return True
    return False


def _mul_calculate(num: list[Any], den: list[Any], dtype: str) -> np.ndarray:
    """``prod(num) / prod(den)`` computed in ``dtype`` (PyTensor's ``mul_calculate``)."""
    one = np.asarray(1, dtype=dtype)
    with np.errstate(all="ignore"):  # a zero divisor gives inf, as at run time
        value = reduce(np.multiply, num, one) / reduce(np.multiply, den, one)
    return np.asarray(value, dtype=dtype)


@node_rewriter([Elemwise], scalar_tracks=_PRODUCT_OPS)
def local_mul_constants(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """Merge the constant factors of a product holding a product of constants into one
    constant computed in the product's dtype: ``x / reciprocal(3) -> 3.0 * x``."""
    out = node.outputs[0]
    if _product_owner(out) is not node or _constant_product(out) is not None:
        return False  # not a float product, or only constants (constant folding's job)
    if _read_by_product(fgraph, out):
        return False
    dtype = tensor_type_of(out).dtype
    prod = _Product()
    _read_product(out, dtype, True, prod, 0, False)
    if not prod.merge:
        return False
    value = _mul_calculate(prod.num_values, prod.den_values, dtype)
    num = list(prod.num)
    if not np.all(value == 1):
        num.insert(0, constant(value, dtype=dtype))
    top = _product(num)
    bottom = _product(prod.den)
    if top is None:
        top = constant(np.asarray(1, dtype=dtype), dtype=dtype)
    new = top if bottom is None else tensor_out(tm.true_div(top, bottom))
    out_type = tensor_type_of(out)
    if tensor_type_of(new).broadcastable != out_type.broadcastable:
        return False
    if tensor_type_of(new).dtype != out_type.dtype:
        return False
    copy_stack_trace(node.outputs, new)
    return _replace_if_same_type(out, new)


def register_cancel(db: RewriteDatabase) -> None:
    """Register ``local_mul_div_cancel``, ``local_greedy_distributor`` and
    ``local_mul_constants`` in the ``canonicalize`` phase of ``db``, and
    ``local_mul_constants`` in a phase of its own before constant folding.

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
    db["canonicalize"].register(
        "local_mul_constants", local_mul_constants, "fast_run", "canonicalize"
    )
    db.register(
        "canonicalize_mul_constants",
        out2in(local_mul_constants, ignore_newtrees=True, name="canonicalize_mul_constants"),
        "fast_run",
        "canonicalize",
        position=0.45,
    )
