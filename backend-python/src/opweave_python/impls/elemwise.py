"""NumPy implementations of :mod:`opweave.tensor.elemwise`:
:class:`~opweave.tensor.elemwise.Elemwise` and :class:`~opweave.tensor.elemwise.CAReduce`.

Elemwise evaluates the scalar Op's NumPy implementation
(:func:`opweave_python.impls.scalar.scalar_impl`) on whole arrays. When the scalar Op is a
NumPy ufunc whose result already has the output dtype, the ufunc writes straight into the
previous call's output array when nothing else references it (or, for an in-place Op,
into the destroyed input). Results
are always arrays of exactly the output dtype (0-d arrays for scalars) and never alias an
input unless the Op declares it. NumPy's floating-point warnings are silenced: ``1 / 0``
gives ``inf`` (and ``log(0)`` ``-inf``) without a warning, as in the C backend.

Per-node preparations are kept in ``node.tag`` (checked against the node's input Types).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.scalar import basic as sb
from opweave.tensor.elemwise import CAReduce, Elemwise, is_broadcast_constant
from opweave_python.float_to_uint32 import as_dtype
from opweave_python.impls.scalar import pow_impl, scalar_impl

__all__ = ["PERFORMS", "careduce_perform", "elemwise_perform"]

try:  # NumPy 2 keeps the ufunc error state in a context variable; setting it directly
    # costs a tenth of entering ``np.errstate`` (about 2 us), on every Elemwise call.
    from numpy._core._ufunc_config import _extobj_contextvar as _errstate_var
except ImportError:  # pragma: no cover - other NumPy versions
    _errstate_var = None

if _errstate_var is not None:
    with np.errstate(all="ignore"):
        _IGNORE = _errstate_var.get()

    def quiet_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` with NumPy's floating-point warnings silenced."""
        token = _errstate_var.set(_IGNORE)
        try:
            return fn(*args, **kwargs)
        finally:
            _errstate_var.reset(token)

else:  # pragma: no cover - other NumPy versions

    def quiet_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` with NumPy's floating-point warnings silenced."""
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)


#: ``sys.getrefcount`` of a previous output array that only its storage cell holds (the
#: cell, the local name, the call's argument). More references mean that someone (a view
#: returned to the user, another storage cell) still sees it: it is then not overwritten.
_UNSHARED_REFS = 3


#: Scalar Op classes whose NumPy ufunc (named by ``nfunc_spec``) computes exactly the
#: scalar implementation for integer and boolean arrays of the output dtype too.
_EXACT_ON_INTEGERS = frozenset(
    {
        sb.Add,
        sb.Sub,
        sb.Mul,
        sb.Neg,
        sb.Abs,
        sb.Sign,
        sb.Sqr,
        sb.Maximum,
        sb.Minimum,
        sb.IntDiv,
        sb.Mod,
        sb.AND,
        sb.OR,
        sb.XOR,
        sb.Invert,
    }
)


# ====================================================================== Elemwise


class _ElemwisePlan:
    """What an Elemwise node needs at each call, computed once per node."""

    __slots__ = ("checks", "impl", "inplace", "inputs", "nout", "out_dtype", "out_dtypes", "ufunc")

    def __init__(self, op: Elemwise, node: Apply) -> None:
        #: The input variables the plan was made for (an Op may be re-applied in place).
        self.inputs = tuple(node.inputs)
        self.out_dtypes = tuple(np.dtype(v.type.dtype) for v in node.outputs)  # type: ignore[attr-defined]
        self.out_dtype = self.out_dtypes[0]
        self.nout = len(node.outputs)
        self.inplace = tuple(op.inplace_pattern.items())
        self.impl = _impl_for(op.scalar_op, len(node.inputs))
        if isinstance(op.scalar_op, sb.Pow) and not callable(getattr(op.scalar_op, "impl", None)):
            self.impl = pow_impl(is_broadcast_constant(node.inputs[1]))
        self.ufunc = _fast_ufunc(op.scalar_op, node)
        # Axes on which two or more inputs are not statically broadcastable: their run-time
        # lengths must agree (a length-1 value must not silently broadcast there).
        checks = []
        ndim = node.outputs[0].type.ndim  # type: ignore[attr-defined]
        for axis in range(ndim):
            idx = tuple(
                i
                for i, v in enumerate(node.inputs)
                if v.type.shape[axis] != 1  # type: ignore[attr-defined]
            )
            if len(idx) > 1:
                checks.append((axis, idx))
        self.checks = tuple(checks)


def _impl_for(scalar_op: Any, nin: int) -> Callable[..., Any]:
    """The array implementation of ``scalar_op``.

    An Op defining its own scalar-only ``impl`` (PyTensor style) is vectorized with
    :func:`numpy.frompyfunc`.
    """
    own = getattr(scalar_op, "impl", None)
    if callable(own):
        return np.frompyfunc(own, nin, getattr(scalar_op, "nout", 1))  # type: ignore[no-any-return]
    return scalar_impl(scalar_op)


def _fast_ufunc(scalar_op: Any, node: Apply) -> np.ufunc | None:
    """The NumPy ufunc that computes ``node`` exactly, with ``out=`` support, or ``None``."""
    spec = getattr(scalar_op, "nfunc_spec", None)
    if spec is None or callable(getattr(scalar_op, "impl", None)) or len(node.outputs) != 1:
        return None
    ufunc = getattr(np, spec[0], None)
    if not isinstance(ufunc, np.ufunc) or ufunc.nin != len(node.inputs) or ufunc.nout != 1:
        return None
    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]
    if any(v.type.dtype != dtype for v in node.inputs):  # type: ignore[attr-defined]
        return None
    kind = np.dtype(dtype).kind
    if kind == "f":
        return ufunc
    if kind in "biu" and type(scalar_op) in _EXACT_ON_INTEGERS:
        return ufunc
    return None


def _plan(op: Elemwise, node: Apply) -> _ElemwisePlan:
    plan = node.tag.__dict__.get("py_elemwise_plan")
    if plan is None or plan.inputs != tuple(node.inputs):
        plan = _ElemwisePlan(op, node)
        node.tag.py_elemwise_plan = plan
    return plan  # type: ignore[no-any-return]


def _check_shapes(op: Elemwise, plan: _ElemwisePlan, inputs: Sequence[Any]) -> None:
    for axis, idx in plan.checks:
        first = inputs[idx[0]].shape[axis]
        for i in idx[1:]:
            if inputs[i].shape[axis] != first:
                shapes = ", ".join(str(np.shape(x)) for x in inputs)
                raise ValueError(
                    f"{op}: input shapes ({shapes}) do not match on axis {axis}; a length-1 "
                    "axis broadcasts only when its static shape says so (give the input static "
                    "shape 1 there, e.g. with specify_shape or a 'row'/'col' variable)"
                )


def _broadcast_shape(inputs: Sequence[np.ndarray]) -> tuple[int, ...]:
    shape = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != shape:
            return np.broadcast_shapes(*(a.shape for a in inputs))
    return shape


def _as_output(value: Any, dtype: np.dtype[Any], inputs: Sequence[Any]) -> np.ndarray:
    """``value`` as a fresh ndarray of ``dtype`` that shares no memory with ``inputs``."""
    if type(value) is np.ndarray and value.dtype == dtype:
        if value.base is not None or any(value is x for x in inputs):
            if any(isinstance(x, np.ndarray) and np.may_share_memory(value, x) for x in inputs):
                return value.copy()
        return value
    return np.asarray(value, dtype=dtype)


def _compute(plan: _ElemwisePlan, inputs: Sequence[Any]) -> list[np.ndarray]:
    results = plan.impl(*inputs)
    if plan.nout == 1:
        results = (results,)
    return [
        _as_output(value, dtype, inputs)
        for value, dtype in zip(results, plan.out_dtypes, strict=True)
    ]


def elemwise_perform(
    op: Elemwise, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """Compute an :class:`Elemwise` node (see the module docstring)."""
    plan = node.tag.__dict__.get("py_elemwise_plan")
    if plan is None or plan.inputs != tuple(node.inputs):
        plan = _plan(op, node)
    if plan.checks:
        _check_shapes(op, plan, inputs)
    ufunc = plan.ufunc
    if ufunc is not None:
        cell = output_storage[0]
        if plan.inplace:
            dest = inputs[plan.inplace[0][1]]
        else:
            dest = cell[0]
            if not (
                type(dest) is np.ndarray
                and dest.dtype == plan.out_dtype
                and dest.shape == _broadcast_shape(inputs)
                and dest.flags.writeable
                and sys.getrefcount(dest) <= _UNSHARED_REFS
            ):
                dest = None
        if dest is None:
            result = quiet_call(ufunc, *inputs)
        else:
            result = quiet_call(ufunc, *inputs, out=dest)
        cell[0] = result if type(result) is np.ndarray else np.asarray(result)
        return
    outputs = quiet_call(_compute, plan, inputs)
    for o, i in plan.inplace:
        dest = inputs[i]
        dest[...] = outputs[o]
        outputs[o] = dest
    for cell, value in zip(output_storage, outputs):
        cell[0] = value


# ====================================================================== CAReduce


def reducer_ufunc(scalar_op: Any, dtype: np.dtype[Any]) -> np.ufunc | None:
    """The NumPy ufunc whose ``reduce`` combines like ``scalar_op`` in ``dtype`` (the
    logical one for booleans), or ``None``: the one the scalar Op names
    (:meth:`~opweave.scalar.basic.ScalarOp.reduce_ufunc_name`)."""
    describe = getattr(scalar_op, "reduce_ufunc_name", None)
    name = describe(dtype.kind) if describe is not None else None
    ufunc = getattr(np, name, None) if name is not None else None
    return ufunc if isinstance(ufunc, np.ufunc) else None


def _prod_of_non_zeros(x: np.ndarray, axes: tuple[int, ...], acc_dtype: np.dtype[Any]) -> Any:
    """The reduction of ``mul_without_zeros``: each group's product of its non-zero
    elements, 0 for a group without any (all zeros, or empty)."""
    x = x.astype(acc_dtype, copy=False)
    non_zero = x != 0
    ones = np.where(non_zero, x, np.ones((), dtype=acc_dtype))
    prod = np.multiply.reduce(ones, axis=axes, dtype=acc_dtype)
    return np.where(np.logical_or.reduce(non_zero, axis=axes), prod, np.zeros((), dtype=acc_dtype))


#: Scalar Op class -> ``fn(x, axes, acc_dtype)`` computing a CAReduce with it in NumPy,
#: for the scalar Ops without a NumPy ufunc that reduces the same way.
_ARRAY_REDUCERS: MappingProxyType[type, Callable[..., Any]] = MappingProxyType(
    {sb.MulWithoutZeros: _prod_of_non_zeros}
)


def _array_reducer(scalar_op: Any) -> Callable[..., Any] | None:
    for cls in type(scalar_op).__mro__:
        fn = _ARRAY_REDUCERS.get(cls)
        if fn is not None:
            return fn
    return None


def _generic_reduce(op: CAReduce, x: np.ndarray, axes: tuple[int, ...]) -> Any:
    """Reduce with the scalar Op's implementation, one axis at a time."""
    impl = _impl_for(op.scalar_op, 2)
    result = x
    for axis in sorted(axes, reverse=True):
        n = result.shape[axis]
        if n == 0:
            identity = getattr(op.scalar_op, "identity", None)
            if identity is None:
                raise ValueError(
                    f"{op}: cannot reduce an empty axis: {op.scalar_op} has no identity"
                )
            shape = result.shape[:axis] + result.shape[axis + 1 :]
            result = np.full(shape, identity, dtype=op.acc_dtype)
            continue
        acc = np.take(result, 0, axis=axis)
        for k in range(1, n):
            acc = impl(acc, np.take(result, k, axis=axis))
        result = acc
    return result


def _reduce(
    op: CAReduce,
    ufunc: np.ufunc | None,
    x: np.ndarray,
    axes: tuple[int, ...],
    acc_dtype: np.dtype[Any],
    out_dtype: np.dtype[Any],
) -> np.ndarray:
    array_reducer = None if ufunc is not None else _array_reducer(op.scalar_op)
    if array_reducer is not None:
        result = array_reducer(x, axes, acc_dtype)
    elif ufunc is None:
        result = _generic_reduce(op, x.astype(acc_dtype, copy=False), axes)
    elif ufunc is np.add or ufunc is np.multiply:
        result = ufunc.reduce(x, axis=axes, dtype=acc_dtype)
    else:
        result = ufunc.reduce(x if x.dtype == acc_dtype else x.astype(acc_dtype), axis=axes)
    return as_dtype(result, out_dtype)


def careduce_perform(
    op: CAReduce, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """Reduce with the ufunc matching the scalar Op (``np.add.reduce``, ...) in ``acc_dtype``,
    then cast to the output dtype.

    Raises
    ------
    ValueError
        For an empty reduction of an Op without identity (``max`` of an empty axis).
    """
    (x,) = inputs
    out_dtype = np.dtype(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
    acc_dtype = np.dtype(op.acc_dtype or out_dtype)
    axes = op.reduced_axes(x.ndim)
    ufunc = reducer_ufunc(op.scalar_op, acc_dtype)
    result = quiet_call(_reduce, op, ufunc, x, axes, acc_dtype, out_dtype)
    if result is x or (result.base is not None and np.may_share_memory(result, x)):
        result = result.copy()
    output_storage[0][0] = result


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {
        Elemwise: elemwise_perform,
        CAReduce: careduce_perform,
    }
)
