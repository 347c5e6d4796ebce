"""Node rewriters that remove useless nodes and simplify Alloc, Join, Switch, Cast and
Assert graphs, under PyTensor's names and with PyTensor's contracts.

Helpers (:func:`broadcasted_by`, :func:`get_simplified_shape`,
:func:`get_simplified_broadcast_shape`, :func:`broadcast_like_elemwise`,
:func:`elemwise_of`, :func:`is_an_upcast`, :func:`equivalent_up_to_constant_casting`)
are public too. :func:`register_simplify` registers the rewrites in the standard phases
(see its docstring for which run by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import opweave.scalar as ps
from opweave.compile.ops import ViewOp
from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.rewriting.graph import dfs_rewriter, in2out
from opweave.graph.rewriting.node import OpPattern, copy_stack_trace, node_rewriter
from opweave.raise_op import Assert, CheckAndRaise, assert_op
from opweave.tensor.basic import (
    Alloc,
    AllocEmpty,
    ExtractDiag,
    Join,
    MakeVector,
    NotScalarConstantError,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
    alloc,
    as_tensor_variable,
    cast,
    diagonal,
    get_scalar_constant_value,
    join,
    second,
    tile,
    zeros,
)
from opweave.tensor.basic_extra import atleast_Nd
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.extra_ops import _broadcast_arrays_unchecked
from opweave.tensor.math import add, eq, switch, variadic_add
from opweave.tensor.reductions import Sum
from opweave.tensor.shape import Reshape, Shape_i
from opweave.tensor.subtensor import Subtensor
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorConstant, TensorVariable

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting.db import RewriteDatabase

__all__ = [
    "broadcast_like_elemwise",
    "broadcasted_by",
    "elemwise_of",
    "equivalent_up_to_constant_casting",
    "extract_diag_of_transpose",
    "get_simplified_broadcast_shape",
    "get_simplified_shape",
    "is_an_upcast",
    "local_alloc_empty_to_zeros",
    "local_alloc_sink_dimshuffle",
    "local_alloc_unary",
    "local_cast_cast",
    "local_dimshuffle_alloc",
    "local_elemwise_alloc",
    "local_join_1",
    "local_join_empty",
    "local_join_make_vector",
    "local_join_of_alloc",
    "local_join_scalars_make_vector",
    "local_join_to_repeat",
    "local_merge_alloc",
    "local_merge_switch_same_cond",
    "local_remove_all_assert",
    "local_remove_useless_assert",
    "local_scalar_tensor_scalar",
    "local_second_sink",
    "local_second_to_alloc",
    "local_sum_make_vector",
    "local_tensor_scalar_tensor",
    "local_useless_alloc",
    "local_useless_elemwise",
    "local_useless_fill",
    "local_useless_split",
    "local_useless_subtensor",
    "local_useless_switch",
    "local_view_op",
    "register_simplify",
    "remove_tensor_copy",
    "topological_second_sink",
]


# ====================================================================== helpers


def broadcasted_by(x: TensorVariable, y: TensorVariable) -> bool:
    """True if ``x`` would be broadcast by ``y`` in an Elemwise: ``x`` has fewer
    dimensions, or a broadcastable dimension where ``y``'s (aligned right) is not."""
    bx, by = x.type.broadcastable, y.type.broadcastable
    if len(bx) < len(by):
        return True
    bx = bx[len(bx) - len(by) :]
    return any(a and not b for a, b in zip(bx, by, strict=True))


def get_simplified_shape(x: TensorVariable, *, fgraph: Any) -> tuple[Any, ...]:
    """The shape of ``x``: from ``fgraph.shape_feature`` when attached, else the static
    shape when fully known, else ``tuple(x.shape)``."""
    shape_feature = getattr(fgraph, "shape_feature", None)
    if shape_feature is not None and hasattr(shape_feature, "shape_tuple"):
        return tuple(shape_feature.shape_tuple(x))
    static = x.type.shape
    if all(d is not None for d in static):
        return tuple(static)
    return tuple(x.shape)


def get_simplified_broadcast_shape(
    first: TensorVariable, *others: TensorVariable, fgraph: Any, batch_ndim: int | None = None
) -> list[Any]:
    """The broadcast shape of ``first`` with ``others``, per axis.

    ``first``'s entry is kept on every axis where ``first`` is not broadcastable; other
    axes take the entry of the first of ``others`` not broadcastable there. With
    ``batch_ndim``, only the leading ``batch_ndim`` axes are computed.
    """
    if batch_ndim is None:
        batch_ndim = first.type.ndim
    broadcastable = list(first.type.broadcastable[:batch_ndim])
    shape = list(get_simplified_shape(first, fgraph=fgraph))[:batch_ndim]
    if not (any(broadcastable) and others):
        return shape
    for other in others:
        other_shape = get_simplified_shape(other, fgraph=fgraph)
        for i in range(batch_ndim):
            if broadcastable[i] and not other.type.broadcastable[i]:
                shape[i] = other_shape[i]
                broadcastable[i] = False
    return shape


def broadcast_like_elemwise(
    value: Any,
    node: Apply,
    *,
    fgraph: Any,
    ref_input_idx: int | None = None,
    stack_trace: bool = False,
) -> Any:
    """Cast ``value`` (or each of a list of values, one per output) to the dtype of
    ``node``'s output and ``alloc`` it to the node's broadcast shape when it would be
    broadcast.

    Parameters
    ----------
    value
        A variable or constant, or a list/tuple of them (one per output of ``node``).
    node
        An elementwise node.
    fgraph
        The graph of ``node`` (its shape feature simplifies the shapes).
    ref_input_idx
        The input whose shape entries take precedence in the broadcast shape.
    stack_trace
        Copy the creation trace of ``node.outputs[0]`` onto the results.
    """
    is_seq = isinstance(value, list | tuple)
    values = list(value) if is_seq else [value]
    ref_out = node.outputs[0]
    casted = []
    for v, out in zip(values, node.outputs, strict=False):
        v = v if isinstance(v, TensorVariable) else as_tensor_variable(v)
        if v.type.dtype != out.type.dtype:
            v = cast(v, out.type.dtype)
        casted.append(v)
    if broadcasted_by(casted[0], ref_out):
        inputs = list(node.inputs)
        if ref_input_idx is not None:
            inputs.insert(0, inputs.pop(ref_input_idx))
        shape = get_simplified_broadcast_shape(*inputs, fgraph=fgraph)
        results = [alloc(v, *shape) for v in casted]
    else:
        results = casted
    if stack_trace:
        for r in results:
            copy_stack_trace(ref_out, r)
    return results if is_seq else results[0]


def elemwise_of(scalar_op: Any) -> OpPattern:
    """A track matching the ``Elemwise`` nodes whose scalar Op is an instance of
    ``scalar_op`` (a scalar Op class, a union of them, or a scalar Op instance)."""
    if isinstance(scalar_op, OpPattern):
        return OpPattern(Elemwise, scalar_op=scalar_op.op_type)
    return OpPattern(Elemwise, scalar_op=scalar_op)


_UPCAST_RANK = {
    "bool": (0, 0),
    "uint8": (1, 1),
    "uint16": (1, 2),
    "uint32": (1, 3),
    "uint64": (1, 4),
    "int8": (2, 1),
    "int16": (2, 2),
    "int32": (2, 3),
    "int64": (2, 4),
    "float16": (3, 1.5),
    "float32": (3, 2.5),
    "float64": (3, 3.5),
    "complex64": (4, 3),
    "complex128": (4, 4),
}


def is_an_upcast(type1: str, type2: str) -> bool:
    """True if converting dtype ``type1`` to ``type2`` keeps every value: ``type2`` is
    of the same or a wider kind (bool < uint < int < float < complex) and more precise.

    Raises
    ------
    KeyError
        For a dtype that is not a numeric or bool dtype.
    """
    kind1, size1 = _UPCAST_RANK[type1]
    kind2, size2 = _UPCAST_RANK[type2]
    return kind2 >= kind1 and size2 > size1


def equivalent_up_to_constant_casting(a: Variable, b: Variable) -> bool:
    """True if ``a`` is ``b``, or both are constants of the same shape holding the same
    values in different dtypes."""
    if a == b:
        return True
    if (
        isinstance(a, TensorConstant)
        and isinstance(b, TensorConstant)
        and a.type.shape == b.type.shape
        and a.type.dtype != b.type.dtype
    ):
        return bool(np.array_equal(a.data, b.data))
    return False


def _unique_value(var: Variable) -> Any:
    """The value every entry of constant ``var`` holds, or ``None``."""
    if not isinstance(var, TensorConstant):
        return None
    data = np.asarray(var.data)
    if data.size == 0:
        return None
    first = data.flat[0]
    return first if bool(np.all(data == first)) else None


def _constant_int(var: Variable) -> int | None:
    value = get_scalar_constant_value(var, only_process_constants=True, raise_not_constant=False)
    if value is None or isinstance(value, Variable):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _is_elemwise_of(var: Variable, scalar_class: type) -> bool:
    owner = var.owner
    return (
        owner is not None
        and isinstance(owner.op, Elemwise)
        and isinstance(owner.op.scalar_op, scalar_class)
    )


# ====================================================================== scalar/tensor


@node_rewriter([TensorFromScalar])
def local_tensor_scalar_tensor(fgraph: FunctionGraph, node: Apply) -> Any:
    """``tensor_from_scalar(scalar_from_tensor(x)) -> x``."""
    s = node.inputs[0]
    if s.owner is not None and isinstance(s.owner.op, ScalarFromTensor):
        return [s.owner.inputs[0]]
    return None


@node_rewriter([ScalarFromTensor])
def local_scalar_tensor_scalar(fgraph: FunctionGraph, node: Apply) -> Any:
    """``scalar_from_tensor(tensor_from_scalar(s)) -> s``."""
    t = node.inputs[0]
    if t.owner is not None and isinstance(t.owner.op, TensorFromScalar):
        return [t.owner.inputs[0]]
    return None


# ====================================================================== alloc / fill


@node_rewriter([Elemwise])
def local_elemwise_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """``elemwise(..., alloc(x, *shape), ...) -> alloc(elemwise(..., x, ...), *shape)``
    (the shape is taken from the other inputs where they give it; shape-unsafe)."""
    if len(node.inputs) == 1:
        return None
    new_inputs = list(node.inputs)
    changed = False
    for i, inp in enumerate(node.inputs):
        if inp.owner is not None and isinstance(inp.owner.op, Alloc):
            new_inputs[i] = inp.owner.inputs[0]
            copy_stack_trace(inp, new_inputs[i])
            changed = True
    if not changed:
        return False
    new_outs = node.op.make_node(*new_inputs).outputs
    return broadcast_like_elemwise(new_outs, node, fgraph=fgraph, stack_trace=True)


@node_rewriter([Elemwise])
def local_second_sink(fgraph: FunctionGraph, node: Apply) -> Any:
    """``f(second(a, b), second(c, d), e) -> second(c, second(a, f(b, d, e)))`` for an
    elementwise ``f`` that is not ``second`` itself."""
    if isinstance(node.op.scalar_op, ps.Second):
        return False
    models, inputs = [], []
    for inp in node.inputs:
        if _is_elemwise_of(inp, ps.Second):
            model, value = inp.owner.inputs
            if value.type.dtype != inp.type.dtype:
                value = cast(value, inp.type.dtype)
            models.append(model)
            inputs.append(value)
        else:
            inputs.append(inp)
    if not models:
        return False
    outputs = node.op.make_node(*inputs).outputs
    for model in models:
        if broadcasted_by(outputs[0], model):
            outputs = [second(model, out) for out in outputs]
    return outputs


topological_second_sink = in2out(local_second_sink, name="topological_second_sink")


@node_rewriter([Elemwise], scalar_tracks=(ps.Second,))
def local_second_to_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """``second(a, b) -> b``, or ``alloc(b, *shape)`` when ``b`` would be broadcast
    (shape-unsafe: ``a``'s non-broadcastable lengths are assumed equal to ``b``'s)."""
    if not isinstance(node.op.scalar_op, ps.Second):
        return None
    return [
        broadcast_like_elemwise(
            node.inputs[1], node, fgraph=fgraph, ref_input_idx=1, stack_trace=True
        )
    ]


@node_rewriter([Elemwise], scalar_tracks=(ps.Second,))
def local_useless_fill(fgraph: FunctionGraph, node: Apply) -> Any:
    """``second(s, v) -> v`` when ``v`` has the output's dtype and broadcastable
    pattern (shape-unsafe)."""
    if not isinstance(node.op.scalar_op, ps.Second):
        return None
    v = node.inputs[1]
    out_type = node.outputs[0].type
    if v.type.dtype == out_type.dtype and v.type.broadcastable == out_type.broadcastable:
        return [v]
    return None


@node_rewriter([Alloc])
def local_useless_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """``alloc(x, *shape) -> x`` when ``x`` has the output's dtype and broadcastable
    pattern (shape-unsafe)."""
    inp, out = node.inputs[0], node.outputs[0]
    if inp.type.dtype == out.type.dtype and inp.type.broadcastable == out.type.broadcastable:
        return [inp]
    return None


@node_rewriter([Alloc])
def local_alloc_sink_dimshuffle(fgraph: FunctionGraph, node: Apply) -> Any:
    """Leading new dimensions of constant length 1 in an ``Alloc`` become a
    ``DimShuffle``: ``alloc(x, 1, n) -> alloc(x, n).dimshuffle('x', 0)``."""
    inp, out = node.inputs[0], node.outputs[0]
    shape = node.inputs[1:]
    leading_ones = 0
    for dim in shape[: len(shape) - inp.type.ndim]:
        if _constant_int(dim) != 1:
            break
        leading_ones += 1
    rest = shape[leading_ones:]
    if leading_ones == 0 or len(rest) < inp.type.ndim:
        return None
    inner = inp if out.type.broadcastable[leading_ones:] == inp.type.broadcastable else None
    if inner is None:
        inner = node.op(inp, *rest)
    return [inner.dimshuffle(["x"] * leading_ones + list(range(len(rest))))]


@node_rewriter([AllocEmpty])
def local_alloc_empty_to_zeros(fgraph: FunctionGraph, node: Apply) -> Any:
    """``AllocEmpty(*shape) -> zeros(shape)`` (off by default: include the
    ``alloc_empty_to_zeros`` tag, to find uninitialised reads)."""
    return [zeros(node.inputs, dtype=node.outputs[0].type.dtype)]


@node_rewriter([Elemwise])
def local_alloc_unary(fgraph: FunctionGraph, node: Apply) -> Any:
    """``unary(alloc(x, *shape)) -> alloc(unary(x), *shape)``."""
    if len(node.inputs) != 1:
        return None
    a = node.inputs[0]
    if a.owner is None or not isinstance(a.owner.op, Alloc):
        return None
    x, *shape = a.owner.inputs
    value = node.op(x)
    copy_stack_trace(node.outputs[0], value)
    result = alloc(cast(value, node.outputs[0].type.dtype), *shape)
    copy_stack_trace([node.outputs[0], a], result)
    return [result]


@node_rewriter([Alloc])
def local_merge_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """``alloc(alloc(m, *inner), *outer) -> alloc(m, *outer)``; an inner length that
    is neither the outer one nor the constant 1 is asserted equal to it."""
    value = node.inputs[0]
    if value.owner is None or not isinstance(value.owner.op, Alloc):
        return False
    inner_value, *dims_inner = value.owner.inputs
    dims_outer = list(node.inputs[1:])
    for i, dim_inner in enumerate(reversed(dims_inner)):
        dim_outer = dims_outer[-1 - i]
        if dim_inner == dim_outer:
            continue
        if isinstance(dim_inner, Constant) and np.all(np.asarray(dim_inner.data) == 1):
            continue
        dims_outer[-1 - i] = Assert("the lengths of two nested Allocs differ")(
            dim_outer, eq(dim_outer, dim_inner)
        )
    return [alloc(inner_value, *dims_outer)]


@node_rewriter([DimShuffle])
def local_dimshuffle_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """``alloc(v, *shape).dimshuffle(order) -> alloc(v'.dimshuffle(order), *shape')``."""
    a = node.inputs[0]
    if a.owner is None or not isinstance(a.owner.op, Alloc):
        return None
    op = node.op
    value, *shape = a.owner.inputs
    value = atleast_Nd(value, n=len(shape))
    new_shape = [shape[i] for i in op.shuffle]
    for dim in op.augment:
        new_shape.insert(dim, 1)
    return [alloc(value.dimshuffle(op.new_order), *new_shape)]


# ====================================================================== elemwise


def _fill_like(value: Any, node: Apply, fgraph: Any, **kwargs: Any) -> list[Any]:
    return [broadcast_like_elemwise(value, node, fgraph=fgraph, **kwargs)]


def _useless_logic(node: Apply, fgraph: Any) -> Any:
    """``and``/``or`` with a constant operand (see :func:`local_useless_elemwise`)."""
    is_and = isinstance(node.op.scalar_op, ps.AND)
    dtype = node.outputs[0].type.dtype
    for const_idx in (0, 1):
        const_inp = node.inputs[const_idx]
        value = _unique_value(const_inp)
        if value is None:
            continue
        other_idx = 1 - const_idx
        other = node.inputs[other_idx]
        if not all(const_inp.type.broadcastable) and any(d is None for d in other.type.shape):
            return None
        if value == 0:
            if is_and:
                return _fill_like(np.array(0, dtype=dtype), node, fgraph)
            return _fill_like(other, node, fgraph, ref_input_idx=other_idx)
        if dtype == "bool":
            if is_and:
                return _fill_like(other, node, fgraph, ref_input_idx=other_idx)
            return _fill_like(np.array(1, dtype=dtype), node, fgraph)
    return None


@node_rewriter([Elemwise])
def local_useless_elemwise(fgraph: FunctionGraph, node: Apply) -> Any:
    """``eq(x, x) -> 1``, ``neq(x, x) -> 0``, ``xor(x, x) -> 0``, ``add(x) -> x``,
    ``mul(x) -> x``, ``identity(x) -> x``, and ``and``/``or`` with a constant 0 or
    (for bool) 1, each broadcast to the output's shape and dtype."""
    scalar_op = node.op.scalar_op
    dtype = node.outputs[0].type.dtype
    if isinstance(scalar_op, ps.Mul | ps.Add | ps.Identity) and len(node.inputs) == 1:
        return [node.inputs[0]]
    if len(node.inputs) != 2:
        return None
    same = node.inputs[0] is node.inputs[1]
    if isinstance(scalar_op, ps.EQ) and same:
        return _fill_like(np.array(1, dtype=dtype), node, fgraph, stack_trace=True)
    if isinstance(scalar_op, ps.NEQ | ps.XOR) and same:
        return _fill_like(np.array(0, dtype=dtype), node, fgraph, stack_trace=True)
    if isinstance(scalar_op, ps.AND | ps.OR):
        return _useless_logic(node, fgraph)
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.Cast,))
def local_cast_cast(fgraph: FunctionGraph, node: Apply) -> Any:
    """``cast(cast(x, t1), t2)``: ``cast(x, t1)`` when ``t1 == t2``; when the first
    cast is an upcast, ``x`` (if ``t2`` is ``x``'s dtype) or ``cast(x, t2)``."""
    if not isinstance(node.op.scalar_op, ps.Cast):
        return None
    x = node.inputs[0]
    if not _is_elemwise_of(x, ps.Cast):
        return None
    type1 = x.owner.op.scalar_op.o_type
    type2 = node.op.scalar_op.o_type
    base = x.owner.inputs[0]
    if type1 == type2:
        return [x]
    if is_an_upcast(base.type.dtype, type1.dtype):
        if type2.dtype == base.type.dtype:
            return [base]
        value = node.op(base)
        copy_stack_trace(node.outputs[0], value)
        return [value]
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.Switch,))
def local_useless_switch(fgraph: FunctionGraph, node: Apply) -> Any:
    """``switch(c, a, b)``: ``a`` or ``b`` for a constant uniform ``c``; ``a`` when
    ``a`` and ``b`` are the same (up to constant casting); and
    ``switch(le(shape_i(x), 0), 0, shape_i(x)) -> shape_i(x)``. Shape-unsafe."""
    if not isinstance(node.op.scalar_op, ps.Switch):
        return None
    cond, left, right = node.inputs
    out_type = node.outputs[0].type
    value = _unique_value(cond)
    if value is not None:
        chosen = right if value == 0 else left
        out = chosen if chosen.type.dtype == out_type.dtype else cast(chosen, out_type.dtype)
        if out.type.broadcastable != out_type.broadcastable:
            out = _broadcast_arrays_unchecked(out, *node.inputs)[0]
        copy_stack_trace([*node.outputs, chosen], out)
        return [out]
    if equivalent_up_to_constant_casting(left, right):
        if left.type.broadcastable != out_type.broadcastable:
            left = _broadcast_arrays_unchecked(left, cond)[0]
        if left.type.dtype != out_type.dtype:
            left = cast(left, out_type.dtype)
        copy_stack_trace([*node.outputs, *node.inputs], left)
        return [left]
    if (
        out_type.ndim == 0
        and _is_elemwise_of(cond, ps.LE)
        and cond.owner.inputs[0].owner is not None
        and isinstance(cond.owner.inputs[0].owner.op, Shape_i)
        and _constant_int(cond.owner.inputs[1]) == 0
        and _constant_int(left) == 0
        and right is cond.owner.inputs[0]
    ):
        return [right]
    return None


@node_rewriter([Elemwise], scalar_tracks=(ps.BinaryScalarOp, ps.Add, ps.Mul))
def local_merge_switch_same_cond(fgraph: FunctionGraph, node: Apply) -> Any:
    """``f(switch(c, a, b), switch(c, x, y)) -> switch(c, f(a, x), f(b, y))`` for an
    elementwise binary ``f`` (or ``add``/``mul``) of switches on the same condition."""
    if isinstance(node.op.scalar_op, ps.Switch) or not node.inputs:
        return None
    if not all(_is_elemwise_of(s, ps.Switch) for s in node.inputs):
        return None
    cond = node.inputs[0].owner.inputs[0]
    if not all(s.owner.inputs[0] is cond for s in node.inputs[1:]):
        return None
    return [
        switch(
            cond,
            node.op(*[s.owner.inputs[1] for s in node.inputs]),
            node.op(*[s.owner.inputs[2] for s in node.inputs]),
        )
    ]


@node_rewriter([Elemwise], scalar_tracks=(ps.Identity,))
def remove_tensor_copy(fgraph: FunctionGraph, node: Apply) -> Any:
    """``tensor_copy(x) -> x``."""
    if isinstance(node.op.scalar_op, ps.Identity) and len(node.inputs) == 1:
        if node.inputs[0].type.dtype == node.outputs[0].type.dtype:
            return [node.inputs[0]]
    return None


@node_rewriter([ViewOp])
def local_view_op(fgraph: FunctionGraph, node: Apply) -> Any:
    """``view_op(x) -> x``."""
    return list(node.inputs)


# ====================================================================== asserts


@node_rewriter([CheckAndRaise])
def local_remove_useless_assert(fgraph: FunctionGraph, node: Apply) -> Any:
    """Drop the conditions of a ``CheckAndRaise`` (``Assert``) that are constant and
    true; the node itself goes when none is left."""
    value, *conds = node.inputs
    kept = []
    for c in conds:
        try:
            const = get_scalar_constant_value(c)
        except NotScalarConstantError:
            kept.append(c)
            continue
        if not const:
            kept.append(c)
    if not kept:
        return [value]
    if len(kept) < len(conds):
        new = node.op(value, *kept)
        copy_stack_trace(node.outputs[0], new)
        return [new]
    return None


@node_rewriter([Assert])
def local_remove_all_assert(fgraph: FunctionGraph, node: Apply) -> Any:
    """``assert_op(x, *conds) -> x``: removes every ``Assert`` (unsafe; off by
    default, on with the ``unsafe`` tag)."""
    return [node.inputs[0]]


# ====================================================================== join / split


def _join_axis(node: Apply) -> int | None:
    axis = _constant_int(node.inputs[0])
    if axis is None:
        return None
    ndim = node.outputs[0].type.ndim
    return axis + ndim if axis < 0 else axis


@node_rewriter([Join])
def local_join_1(fgraph: FunctionGraph, node: Apply) -> Any:
    """``join(axis, x) -> x``."""
    tensors = node.inputs[1:]
    if len(tensors) == 1 and tensors[0].type.dtype == node.outputs[0].type.dtype:
        return [tensors[0]]
    return None


@node_rewriter([Join])
def local_join_empty(fgraph: FunctionGraph, node: Apply) -> Any:
    """Drop the inputs of a ``Join`` whose static length along the axis is 0."""
    axis = _join_axis(node)
    if axis is None:
        return None
    tensors = node.inputs[1:]
    kept = [t for t in tensors if t.type.shape[axis] != 0]
    if not 0 < len(kept) < len(tensors):
        return None
    out = node.outputs[0]
    result = join(axis, *kept)
    if result.type.dtype != out.type.dtype:
        result = cast(result, out.type.dtype)
    copy_stack_trace(out, result)
    return [result]


@node_rewriter([Join])
def local_join_make_vector(fgraph: FunctionGraph, node: Apply) -> Any:
    """Merge neighbouring ``MakeVector`` inputs of a vector ``Join`` into one."""
    if node.outputs[0].type.ndim != 1:
        return None
    new_inputs = [node.inputs[0]]
    for inp in node.inputs[1:]:
        last = new_inputs[-1]
        if (
            len(new_inputs) > 1
            and inp.owner is not None
            and isinstance(inp.owner.op, MakeVector)
            and last.owner is not None
            and isinstance(last.owner.op, MakeVector)
            and inp.owner.op == last.owner.op
        ):
            new_inputs[-1] = inp.owner.op(*last.owner.inputs, *inp.owner.inputs)
            copy_stack_trace(node.outputs, new_inputs[-1])
        else:
            new_inputs.append(inp)
    if len(new_inputs) == len(node.inputs):
        return None
    result = join(new_inputs[0], *new_inputs[1:])
    copy_stack_trace(node.outputs, result)
    return [result]


def _whole(entry: Any) -> bool:
    """Whether a ``Subtensor`` index entry keeps a whole dimension: ``:``, ``0:``, ``::1``."""
    return (
        isinstance(entry, slice)
        and entry.start in (None, 0)
        and entry.stop is None
        and entry.step in (None, 1)
        and not isinstance(entry.start, bool)
        and not isinstance(entry.step, bool)
    )


@node_rewriter([Subtensor])
def local_useless_subtensor(fgraph: FunctionGraph, node: Apply) -> Any:
    """``x[()] -> x``, ``x[:, 0:, ::1] -> x``: an index that keeps every element (PyTensor's
    name), as ``b[None]`` of a 0-d ``b`` leaves before its ``ExpandDims``."""
    op = node.op
    if not isinstance(op, Subtensor) or len(node.inputs) != 1:
        return None
    if not all(_whole(entry) for entry in op.idx_list):
        return None
    x, out = node.inputs[0], node.outputs[0]
    return [x] if x.type == out.type else None


def _scalar_of_one_entry(var: Variable) -> Variable | None:
    """The 0-d variable a length-1 vector ``var`` was made of (``x[None]``, ``x.ravel()``
    or ``x.reshape((1,))`` of a 0-d ``x``), else ``None``."""
    owner = var.owner
    if owner is None:
        return None
    op = owner.op
    whole = (isinstance(op, DimShuffle) and op.new_order == ("x",)) or (
        isinstance(op, Reshape) and op.ndim == 1
    )
    if not whole:
        return None
    x = owner.inputs[0]
    return x if isinstance(x.type, TensorType) and x.type.ndim == 0 else None


@node_rewriter([Join])
def local_join_scalars_make_vector(fgraph: FunctionGraph, node: Apply) -> Any:
    """``join(0, x[None], y.ravel(), z.reshape((1,))) -> make_vector(x, y, z)`` for 0-d
    ``x, y, z`` (a gradient's ``concatenate([g.ravel() for g in grads])`` of scalars):
    one node instead of one per entry and the join."""
    out = node.outputs[0]
    if out.type.ndim != 1 or len(node.inputs) < 2:
        return None
    scalars = [_scalar_of_one_entry(inp) for inp in node.inputs[1:]]
    if any(x is None for x in scalars):
        return None
    dtype = out.type.dtype
    entries = [x if x.type.dtype == dtype else cast(x, dtype) for x in scalars]  # type: ignore[union-attr]
    result = MakeVector(dtype)(*entries)
    copy_stack_trace(out, result)
    return [result]


@node_rewriter([Join])
def local_join_to_repeat(fgraph: FunctionGraph, node: Apply) -> Any:
    """``join(axis, x, x, ..., x) -> tile(x, reps)``."""
    axis = _join_axis(node)
    tensors = node.inputs[1:]
    if axis is None or len(tensors) <= 1 or not all(t is tensors[0] for t in tensors[1:]):
        return None
    reps = tuple(len(tensors) if i == axis else 1 for i in range(tensors[0].type.ndim))
    result = tile(tensors[0], reps)
    copy_stack_trace(node.outputs[0], result)
    return [result]


@node_rewriter([Join])
def local_join_of_alloc(fgraph: FunctionGraph, node: Apply) -> Any:
    """A ``Join`` of ``Alloc``s broadcasting along the same non-join axes becomes an
    ``Alloc`` of the ``Join`` of the smaller values (shape-unsafe)."""
    axis = _join_axis(node)
    tensors = node.inputs[1:]
    if axis is None or len(tensors) < 2:
        return None
    if not all(t.owner is not None and isinstance(t.owner.op, Alloc) for t in tensors):
        return None
    values, shapes = [], []
    for t in tensors:
        value, *shape = t.owner.inputs
        values.append(atleast_Nd(value, n=len(shape)))
        shapes.append(shape)
    ndim = node.outputs[0].type.ndim
    liftable = {
        d
        for d in range(ndim)
        if d != axis
        and all(
            v.type.broadcastable[d] and not t.type.broadcastable[d]
            for v, t in zip(values, tensors, strict=True)
        )
    }
    if not liftable:
        return None
    parts = [
        alloc(v, *[1 if i in liftable else d for i, d in enumerate(shape)])
        for v, shape in zip(values, shapes, strict=True)
    ]
    joined = join(axis, *parts)
    post_shape = []
    for i, dims in enumerate(zip(*shapes, strict=True)):
        if i == axis:
            post_shape.append(add(*dims))
        else:
            post_shape.append(next((d for d in dims if isinstance(d, Constant)), dims[-1]))
    result = alloc(joined, *post_shape)
    copy_stack_trace(node.outputs[0], result)
    return [result]


@node_rewriter([Split])
def local_useless_split(fgraph: FunctionGraph, node: Apply) -> Any:
    """``split(x, axis, splits, n_splits=1) -> x``, asserting that ``splits`` has one
    entry and that it is ``x``'s length along ``axis``."""
    if node.op.len_splits != 1:
        return None
    x, axis, splits = node.inputs
    out = assert_op(x, eq(splits.shape[0], 1))
    copy_stack_trace(node.outputs, out)
    out2 = assert_op(out, eq(x.shape[axis], splits[0]))
    copy_stack_trace(out, out2)
    return [out2]


@node_rewriter([Sum])
def local_sum_make_vector(fgraph: FunctionGraph, node: Apply) -> Any:
    """``sum(make_vector(a, b, ...)) -> a + b + ...`` (in the accumulation dtype)."""
    (array,) = node.inputs
    if array.owner is None or not isinstance(array.owner.op, MakeVector):
        return None
    if node.op.axis == ():
        return [array]
    acc_dtype, out_dtype = node.op.acc_dtype, node.op.dtype
    if acc_dtype == "float64" and out_dtype != "float64" and config.floatX != "float64":
        return None
    total = variadic_add(*[cast(v, acc_dtype) for v in array.owner.inputs])
    return [cast(total, out_dtype)]


@node_rewriter([ExtractDiag])
def extract_diag_of_transpose(fgraph: FunctionGraph, node: Apply) -> Any:
    """``diagonal(x.T, offset=k) -> diagonal(x, offset=-k)`` over the last two axes."""
    op = node.op
    (inp,) = node.inputs
    ndim = inp.type.ndim
    if op.axis1 != ndim - 2 or op.axis2 != ndim - 1 or inp.owner is None:
        return None
    ds = inp.owner.op
    expected = (*range(ndim - 2), ndim - 1, ndim - 2)
    if not isinstance(ds, DimShuffle) or tuple(ds.new_order) != expected:
        return None
    return [diagonal(inp.owner.inputs[0], offset=-op.offset, axis1=op.axis1, axis2=op.axis2)]


# ====================================================================== registration

_DEFAULT = ("fast_run",)
#: (name, rewriter, phases, extra tags) of the rewrites run by default.
_PHASED: Sequence[tuple[str, Any, tuple[str, ...], tuple[str, ...]]] = (
    ("local_tensor_scalar_tensor", local_tensor_scalar_tensor, ("canonicalize", "specialize"), ()),
    ("local_scalar_tensor_scalar", local_scalar_tensor_scalar, ("canonicalize", "specialize"), ()),
    ("local_useless_fill", local_useless_fill, ("canonicalize",), ("useless", "shape_unsafe")),
    (
        "local_useless_alloc",
        local_useless_alloc,
        ("canonicalize", "stabilize", "specialize"),
        ("useless", "shape_unsafe"),
    ),
    (
        "local_alloc_sink_dimshuffle",
        local_alloc_sink_dimshuffle,
        ("canonicalize", "stabilize", "specialize"),
        (),
    ),
    (
        "local_useless_elemwise",
        local_useless_elemwise,
        ("canonicalize", "specialize"),
        ("useless",),
    ),
    ("local_cast_cast", local_cast_cast, ("canonicalize", "specialize"), ()),
    (
        "local_remove_useless_assert",
        local_remove_useless_assert,
        ("canonicalize", "specialize"),
        ("useless",),
    ),
    ("local_join_1", local_join_1, ("canonicalize", "specialize"), ("useless",)),
    ("local_join_empty", local_join_empty, ("canonicalize", "specialize"), ("useless",)),
    (
        "local_join_make_vector",
        local_join_make_vector,
        ("canonicalize", "specialize"),
        ("useless",),
    ),
    (
        "local_useless_subtensor",
        local_useless_subtensor,
        ("canonicalize", "specialize"),
        ("useless",),
    ),
    (
        "local_join_scalars_make_vector",
        local_join_scalars_make_vector,
        ("canonicalize", "specialize"),
        (),
    ),
    ("local_sum_make_vector", local_sum_make_vector, ("canonicalize", "specialize"), ("useless",)),
    (
        "local_useless_switch",
        local_useless_switch,
        ("canonicalize", "specialize"),
        ("useless", "shape_unsafe"),
    ),
    ("local_merge_switch_same_cond", local_merge_switch_same_cond, ("canonicalize",), ()),
    ("local_useless_split", local_useless_split, ("canonicalize", "specialize"), ("useless",)),
    ("local_view_op", local_view_op, ("canonicalize",), ("useless",)),
    (
        "local_merge_alloc",
        local_merge_alloc,
        ("canonicalize", "stabilize", "specialize"),
        ("useless",),
    ),
    ("remove_tensor_copy", remove_tensor_copy, ("canonicalize",), ()),
    (
        "extract_diag_of_transpose",
        extract_diag_of_transpose,
        ("canonicalize", "stabilize", "specialize"),
        (),
    ),
)


def register_simplify(db: RewriteDatabase) -> None:
    """Register the rewrites of this module into ``db``'s standard phases.

    By default (``fast_run``): the ``local_useless_*``, ``local_join_*`` (but
    ``local_join_to_repeat`` and ``local_join_of_alloc``), ``local_cast_cast``,
    ``local_remove_useless_assert``, ``local_merge_alloc``, ``local_view_op``,
    ``remove_tensor_copy`` and the scalar/tensor round trips, in ``canonicalize`` and
    the other phases PyTensor uses. ``local_remove_all_assert`` runs only with the
    ``unsafe`` tag; ``local_alloc_empty_to_zeros`` only with ``alloc_empty_to_zeros``.
    Each entry is tagged with its name, so ``Mode.excluding(name)`` turns it off.
    """
    for name, rewriter, phases, tags in _PHASED:
        for phase in phases:
            db[phase].register(name, rewriter, *_DEFAULT, *tags)
    for phase in ("canonicalize", "stabilize", "specialize"):
        db[phase].register(
            "local_remove_all_assert", local_remove_all_assert, "unsafe", use_db_name_as_tag=False
        )
    db.register(
        "local_alloc_empty_to_zeros",
        dfs_rewriter(local_alloc_empty_to_zeros),
        "alloc_empty_to_zeros",
        position=49.3,
    )
