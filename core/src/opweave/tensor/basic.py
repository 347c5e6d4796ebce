"""Tensor construction, joining, splitting and casting (``pytensor.tensor.basic``).

Ops: :class:`MakeVector`, :class:`Alloc`, :class:`ARange`, :class:`Eye`,
:class:`Join`, :class:`Split`, :class:`Nonzero`, :class:`ExtractDiag` (and its
gradient :class:`DiagGrad`), :class:`TensorFromScalar`, :class:`ScalarFromTensor`. Functions
building them: :func:`make_vector`, :func:`alloc`, :func:`zeros`, :func:`ones`,
:func:`full`, :func:`zeros_like`, :func:`ones_like`, :func:`arange`, :func:`eye`,
:func:`join`, :func:`concatenate`, :func:`stack`, :func:`split`, :func:`nonzero`,
:func:`diagonal`. Elementwise helpers (:func:`cast`, :func:`fill`/:func:`second`,
:func:`where`/:func:`switch`, :func:`tensor_copy`) and the axis permutations
(:func:`transpose`, :func:`swapaxes`, :func:`matrix_transpose`) build
``opweave.tensor.elemwise`` Ops, imported when they are called.

Integer inputs that only decide a shape (the shape of :class:`Alloc`, the bounds
of :class:`Eye`, the sizes of :class:`Split`) are marked disconnected in
``connection_pattern`` and get :class:`~opweave.graph.type.DisconnectedType`
gradients (seed 004, example 4). The kernels live in the backends.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import opweave.scalar as ps
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType, disconnected_type
from opweave.graph.utils import MethodNotDefined
from opweave.scalar import ScalarType, as_scalar, get_scalar_type, grad_undefined
from opweave.scalar.type import floatX, normalize_dtype, upcast
from opweave.tensor import math as tm
from opweave.tensor.constructors import as_tensor, as_tensor_variable, constant
from opweave.tensor.elemwise import DimShuffle, Elemwise
from opweave.tensor.type import TensorType, continuous_dtypes, discrete_dtypes, float_dtypes
from opweave.tensor.variable import (
    NotScalarConstantError,
    TensorVariable,
    get_underlying_scalar_constant,
)

__all__ = [
    "ARange",
    "Alloc",
    "DiagGrad",
    "ExtractDiag",
    "Eye",
    "Join",
    "MakeVector",
    "Nonzero",
    "ScalarFromTensor",
    "Split",
    "TensorFromScalar",
    "alloc",
    "arange",
    "as_dtype",
    "as_tensor",
    "as_tensor_variable",
    "cast",
    "concatenate",
    "constant",
    "diagonal",
    "eye",
    "fill",
    "flatnonzero",
    "flatten",
    "full",
    "full_like",
    "get_scalar_constant_value",
    "get_vector_length",
    "join",
    "make_vector",
    "matrix_transpose",
    "nonzero",
    "nonzero_values",
    "ones",
    "ones_like",
    "scalar_from_tensor",
    "second",
    "split",
    "stack",
    "swapaxes",
    "switch",
    "tensor_copy",
    "tensor_from_scalar",
    "transpose",
    "where",
    "zeros",
    "zeros_like",
]


# ====================================================================== helpers


def as_dtype(dtype: Any) -> str:
    """Return the canonical name of a dtype specification.

    Parameters
    ----------
    dtype
        A dtype name, NumPy dtype or scalar type, a Python type (``float`` is
        ``float64``) or ``"floatX"`` (``config.floatX``).

    Returns
    -------
    str
        E.g. ``"float64"``.

    Raises
    ------
    TypeError
        If ``dtype`` is not a dtype opweave supports.
    """
    return normalize_dtype(dtype)


def get_scalar_constant_value(v: Any) -> int | float | bool | complex:
    """Return the Python value of the constant scalar ``v``, or raise ``NotScalarConstantError``.

    See :func:`opweave.tensor.variable.get_underlying_scalar_constant`.
    """
    return get_underlying_scalar_constant(v).item()  # type: ignore[no-any-return]


def _const_int(v: Any) -> int | None:
    """The constant integer value of ``v``, or ``None`` if it is not known statically."""
    try:
        value = get_underlying_scalar_constant(v)
    except NotScalarConstantError:
        return None
    if value.dtype.kind not in "iub":
        return None
    return int(value)


def _as_tensor_or_scalar(x: Any) -> TensorVariable:
    """``as_tensor_variable``, also accepting ``opweave.scalar`` variables (0-d tensors)."""
    if isinstance(x, Variable) and isinstance(x.type, ScalarType):
        return tensor_from_scalar(x)
    return as_tensor_variable(x)


def _as_int_scalar(x: Any, what: str) -> TensorVariable:
    """``x`` as a 0-d integer tensor; ``what`` names it in errors."""
    if isinstance(x, bool | np.bool_):
        raise TypeError(f"{what} must be an integer, got the bool {x!r}")
    if isinstance(x, int | np.integer):
        return constant(int(x), dtype="int64")
    try:
        var = _as_tensor_or_scalar(x)
    except TypeError as exc:
        raise TypeError(f"{what} must be an integer scalar, got {x!r}: {exc}") from None
    if var.ndim != 0 or var.dtype not in discrete_dtypes or var.dtype == "bool":
        raise TypeError(f"{what} must be a 0-d integer tensor, got {var} of type {var.type!r}")
    return var


def _int_vector(x: Any, what: str) -> TensorVariable:
    """``x`` (a sequence of ints or an integer vector variable) as an integer vector."""
    if isinstance(x, Variable):
        var = as_tensor_variable(x)
    elif isinstance(x, list | tuple) and any(isinstance(e, Variable) for e in x):
        var = make_vector(*[_as_int_scalar(e, f"{what} entry") for e in x])
    else:
        arr = np.asarray(x)
        if arr.size == 0:
            arr = arr.astype("int64")
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{what} must hold integers, got {x!r}")
        var = constant(arr.astype("int64"))
    if var.ndim != 1 or var.dtype not in discrete_dtypes or var.dtype == "bool":
        raise TypeError(f"{what} must be an integer vector, got {var} of type {var.type!r}")
    return var


def _static_vector(v: Variable) -> list[int | None] | None:
    """The statically known entries of the integer vector ``v`` (``None`` where unknown).

    Returns ``None`` when not even the length is known.
    """
    if isinstance(v, Constant):
        return [int(e) for e in np.asarray(v.data).reshape(-1)]
    owner = v.owner
    if owner is not None and isinstance(owner.op, MakeVector):
        return [_const_int(e) for e in owner.inputs]
    # late: opweave.tensor.shape (Shape) builds on this module (same floor, above it)
    from opweave.tensor.shape import Shape

    if owner is not None and isinstance(owner.op, Shape):
        static = getattr(owner.inputs[0].type, "shape", None)
        if static is not None:
            return list(static)
    length = v.type.shape[0]  # type: ignore[attr-defined]
    return None if length is None else [None] * length


def _grad_undefined(op: Op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    return grad_undefined(op, x_pos, x, comment)  # type: ignore[no-any-return]


def _is_disconnected(g: Any) -> bool:
    return isinstance(getattr(g, "type", None), DisconnectedType)


def _sum_to(g: Variable, target: TensorType) -> Variable:
    """Sum ``g`` over the dimensions that broadcasting added or stretched to reach ``target``.

    Leading dimensions beyond ``target.ndim`` are summed away; dimensions where
    ``target`` has static length 1 and ``g`` does not are summed with ``keepdims``.
    """
    extra = g.ndim - target.ndim  # type: ignore[attr-defined]
    if extra > 0:
        g = tm.sum(g, axis=tuple(range(extra)))
    axes = tuple(
        i
        for i, (t, s) in enumerate(zip(target.shape, g.type.shape))  # type: ignore[attr-defined]
        if t == 1 and s != 1
    )
    if axes:
        g = tm.sum(g, axis=axes, keepdims=True)
    if g.dtype != target.dtype and target.dtype in continuous_dtypes:  # type: ignore[attr-defined]
        g = cast(g, target.dtype)
    return g


def _float_zeros_like(x: Variable) -> Variable:
    """The zero gradient of ``x``: its dtype when continuous, ``floatX`` otherwise."""
    dtype = x.dtype if x.dtype in continuous_dtypes else floatX()  # type: ignore[attr-defined]
    return zeros_like(x, dtype=dtype)


# ====================================================================== elementwise helpers


def cast(x: Any, dtype: Any) -> TensorVariable:
    """Return ``x`` converted to ``dtype`` (``x`` itself when it already has it).

    Parameters
    ----------
    x
        A tensor or anything :func:`as_tensor_variable` accepts.
    dtype
        The target dtype (``"floatX"`` allowed).

    Raises
    ------
    TypeError
        For a complex-to-real cast (take ``real`` or ``abs`` explicitly).
    """
    dtype = normalize_dtype(dtype)
    if not isinstance(x, Variable):
        return constant(x, dtype=dtype)
    x = as_tensor_variable(x)
    if x.dtype == dtype:
        return x
    if x.dtype.startswith("complex") and not dtype.startswith("complex"):
        raise TypeError(
            f"casting {x} from {x.dtype} to {dtype} is ambiguous: take the real part or the "
            "absolute value explicitly"
        )
    return Elemwise(getattr(ps, f"convert_to_{dtype}"))(x)  # type: ignore[no-any-return]


def second(a: Any, b: Any) -> TensorVariable:
    """``b`` broadcast to the shape of ``a`` and ``b`` (``Elemwise(scalar.second)``)."""
    return Elemwise(ps.second)(a, b)  # type: ignore[no-any-return]


def fill(model: Any, value: Any) -> TensorVariable:
    """A tensor shaped like ``model`` (broadcast with ``value``) holding ``value``."""
    return second(model, value)


def where(cond: Any, ift: Any, iff: Any) -> TensorVariable:
    """Elementwise ``ift if cond else iff``, with broadcasting (``Elemwise(scalar.switch)``)."""
    return Elemwise(ps.switch)(cond, ift, iff)  # type: ignore[no-any-return]


def switch(cond: Any, ift: Any, iff: Any) -> TensorVariable:
    """Alias of :func:`where`."""
    return where(cond, ift, iff)


def tensor_copy(x: Any) -> TensorVariable:
    """A copy of ``x`` (``Elemwise(scalar.identity)``)."""
    return Elemwise(ps.identity)(x)  # type: ignore[no-any-return]


# ====================================================================== axis permutations


def _dimshuffle(x: TensorVariable, order: Sequence[Any]) -> TensorVariable:
    op = DimShuffle(input_ndim=x.ndim, new_order=tuple(order))
    return op(x)  # type: ignore[no-any-return]


def transpose(x: Any, axes: Sequence[int] | None = None) -> TensorVariable:
    """Permute the axes of ``x`` (reverse them when ``axes`` is ``None``)."""
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    axes = tuple(int(a) + x.ndim if int(a) < 0 else int(a) for a in axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {x.ndim} axes")
    if axes == tuple(range(x.ndim)):
        return x
    return _dimshuffle(x, axes)


def swapaxes(x: Any, axis1: int, axis2: int) -> TensorVariable:
    """``x`` with axes ``axis1`` and ``axis2`` exchanged."""
    x = as_tensor_variable(x)
    order = list(range(x.ndim))
    a, b = _normalize_axis(axis1, x.ndim, "swapaxes"), _normalize_axis(axis2, x.ndim, "swapaxes")
    order[a], order[b] = order[b], order[a]
    return transpose(x, order)


def matrix_transpose(x: Any) -> TensorVariable:
    """``x`` with its last two axes exchanged (``x.mT``)."""
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {x.ndim}")
    return swapaxes(x, -1, -2)


def _normalize_axis(axis: Any, ndim: int, who: str) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"{who}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{who}: axis {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % ndim


def flatten(x: Any, ndim: int = 1) -> TensorVariable:
    """See :func:`opweave.tensor.shape.flatten`."""
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import flatten as _flatten

    return _flatten(x, ndim)


# ====================================================================== MakeVector


class MakeVector(Op):
    """Make a vector from scalars (0-d tensors).

    Parameters
    ----------
    dtype
        The vector's dtype. Inputs of another dtype are cast when no value can be lost.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any = "int64") -> None:
        self.dtype = normalize_dtype(dtype)

    def make_node(self, *inputs: Any) -> Apply:
        """Any number of 0-d inputs; a vector output of static length ``len(inputs)``."""
        converted = []
        for i, inp in enumerate(inputs):
            if not isinstance(inp, Variable):
                arr = np.asarray(inp)
                cast_arr = arr.astype(self.dtype)
                if arr.ndim != 0 or not np.array_equal(arr, cast_arr):
                    raise TypeError(
                        f"{self}: input {i} ({inp!r}) is not a scalar representable as {self.dtype}"
                    )
                converted.append(constant(cast_arr))
                continue
            var = as_tensor_variable(inp)
            if var.ndim != 0:
                raise TypeError(
                    f"{self}: input {i} ({var}) is not a scalar: it has {var.ndim} dims"
                )
            if var.dtype != self.dtype:
                if not np.can_cast(var.dtype, self.dtype, "safe"):
                    raise TypeError(
                        f"{self}: input {i} ({var}) has dtype {var.dtype}, which cannot be cast "
                        f"to {self.dtype} without loss; cast it explicitly"
                    )
                var = cast(var, self.dtype)
            converted.append(var)
        out = TensorType(self.dtype, shape=(len(converted),))()
        return Apply(self, converted, [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """A vector with one entry per input."""
        return [(len(node.inputs),)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Entry ``i`` of the output gradient for input ``i`` (zeros for a discrete vector)."""
        (gz,) = output_grads
        if self.dtype in discrete_dtypes:
            return [_float_zeros_like(x) for x in inputs]
        return [cast(gz[i], x.dtype) for i, x in enumerate(inputs)]  # type: ignore[index,attr-defined]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """A vector of the evaluation points."""
        if any(e is None for e in eval_points):
            return [None]
        return [self(*eval_points)]


def make_vector(*inputs: Any, dtype: Any = None) -> TensorVariable:
    """Return a vector made of the scalars ``inputs``.

    Parameters
    ----------
    *inputs
        0-d tensors or Python numbers.
    dtype
        The vector's dtype; by default the promotion of the variables' dtypes (Python
        numbers are taken as they are), or NumPy's choice for all-constant inputs.
    """
    if dtype is None:
        variables = [as_tensor_variable(i).dtype for i in inputs if isinstance(i, Variable)]
        if variables:
            dtype = upcast(*variables)
        elif inputs:
            dtype = upcast(*[as_tensor_variable(i).dtype for i in inputs])
        else:
            dtype = "int64"
    return MakeVector(dtype)(*inputs)  # type: ignore[return-value]


def get_vector_length(v: Any) -> int:
    """Return the length of the vector ``v`` when it is known statically.

    Raises
    ------
    ValueError
        If ``v`` is not a vector or its length cannot be determined.
    """
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise ValueError(f"{v} is not a vector: it has {v.ndim} dimensions")
    entries = _static_vector(v)
    if entries is not None:
        return len(entries)
    raise ValueError(f"the length of {v} cannot be determined statically")


# ====================================================================== Alloc


class Alloc(Op):
    """A new tensor of the given shape filled with ``value`` (broadcast NumPy-style).

    Inputs: ``value`` and one 0-d integer per output dimension. The output's
    elements depend on ``value`` only; the shape inputs are disconnected.
    """

    __props__ = ()

    def make_node(self, value: Any, *shape: Any) -> Apply:
        """``value`` (at most ``len(shape)`` dims) and the output's dimensions."""
        value = as_tensor_variable(value)
        dims = [_as_int_scalar(s, f"Alloc: shape entry {i}") for i, s in enumerate(shape)]
        if value.ndim > len(dims):
            raise TypeError(
                f"Alloc: the value {value} has {value.ndim} dimensions, more than the "
                f"{len(dims)} of the requested shape"
            )
        offset = len(dims) - value.ndim
        static: list[int | None] = []
        for i, d in enumerate(dims):
            known = _const_int(d)
            vdim = value.type.shape[i - offset] if i >= offset else 1
            if known is not None and known < 0:
                raise ValueError(f"Alloc: shape entry {i} is negative ({known})")
            if known is not None and vdim not in (None, 1, known):
                raise ValueError(
                    f"Alloc: cannot broadcast a value of static shape {value.type.shape} to "
                    f"length {known} in dimension {i}"
                )
            static.append(known if known is not None else (vdim if vdim != 1 else None))
        out = TensorType(value.dtype, shape=static)()
        return Apply(self, [value, *dims], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shape inputs."""
        return [tuple(node.inputs[1:])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """Only ``value`` affects the output's elements."""
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient summed over the broadcast dimensions; shapes disconnected."""
        value = inputs[0]
        (gz,) = output_grads
        rest = [disconnected_type() for _ in inputs[1:]]
        if value.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(value), *rest]
        return [_sum_to(gz, value.type), *rest]  # type: ignore[arg-type]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``alloc`` of the value's evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


def alloc(value: Any, *shape: Any) -> TensorVariable:
    """Return a tensor of shape ``shape`` filled with ``value`` (broadcast).

    Parameters
    ----------
    value
        A scalar or tensor broadcastable to ``shape``.
    *shape
        Ints or 0-d integer tensors.
    """
    return Alloc()(value, *shape)  # type: ignore[return-value]


def _shape_entries(shape: Any) -> list[Any]:
    """A shape given as an int, a sequence or an integer vector, as a list of entries."""
    if isinstance(shape, Variable):
        var = as_tensor_variable(shape)
        if var.ndim == 0:
            return [var]
        if var.owner is not None and isinstance(var.owner.op, MakeVector):
            return list(var.owner.inputs)
        entries = _static_vector(var)
        if entries is None:
            raise ValueError(f"the length of the shape {var} is not known statically")
        return [e if e is not None else var[i] for i, e in enumerate(entries)]  # type: ignore[index]
    if isinstance(shape, int | np.integer):
        return [shape]
    if isinstance(shape, np.ndarray) and shape.ndim == 0:
        return [int(shape)]
    return list(shape)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor of ``shape`` filled with ``fill_value``.

    Parameters
    ----------
    shape
        An int, a sequence of ints or 0-d integer tensors, or an integer vector.
    fill_value
        A scalar (or a tensor broadcastable to ``shape``).
    dtype
        The output dtype (default: ``fill_value``'s).
    """
    value = as_tensor_variable(fill_value) if dtype is None else cast(fill_value, dtype)
    return alloc(value, *_shape_entries(shape))


def zeros(shape: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor of zeros (dtype default ``config.floatX``)."""
    return full(shape, constant(0, dtype=floatX() if dtype is None else as_dtype(dtype)))


def ones(shape: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor of ones (dtype default ``config.floatX``)."""
    return full(shape, constant(1, dtype=floatX() if dtype is None else as_dtype(dtype)))


def _dims_of(x: TensorVariable) -> list[Any]:
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import shape_i

    return [shape_i(x, i) for i in range(x.ndim)]


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor shaped like ``x`` filled with ``fill_value`` (dtype default ``x``'s)."""
    x = as_tensor_variable(x)
    dtype = x.dtype if dtype is None else as_dtype(dtype)
    if isinstance(fill_value, Variable):
        value = cast(fill_value, dtype)
    else:
        value = constant(fill_value, dtype=dtype)
    return alloc(value, *_dims_of(x))


def zeros_like(x: Any, dtype: Any = None, opt: bool = False) -> TensorVariable:
    """A new tensor of zeros shaped like ``x`` (dtype default ``x``'s).

    Its elements do not depend on ``x``'s: the gradient with respect to ``x`` is
    disconnected.
    """
    return full_like(x, 0, dtype)


def ones_like(x: Any, dtype: Any = None, opt: bool = False) -> TensorVariable:
    """A new tensor of ones shaped like ``x`` (dtype default ``x``'s)."""
    return full_like(x, 1, dtype)


# ====================================================================== ARange


def _arange_length(start: float, stop: float, step: float) -> int:
    return max(0, math.ceil((stop - start) / step))


class ARange(Op):
    """``numpy.arange(start, stop, step)`` as a vector of ``dtype``.

    Parameters
    ----------
    dtype
        The output dtype.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any) -> None:
        self.dtype = normalize_dtype(dtype)

    def make_node(self, start: Any, stop: Any, step: Any) -> Apply:
        """Three 0-d real inputs; a vector output (static length when all are constant)."""
        ins = []
        for name, v in (("start", start), ("stop", stop), ("step", step)):
            var = as_tensor_variable(v)
            if var.ndim != 0 or var.dtype.startswith("complex"):
                raise TypeError(f"ARange: {name} must be a real scalar, got {var} ({var.type!r})")
            ins.append(var)
        length = None
        try:
            vals = [get_underlying_scalar_constant(v).item() for v in ins]
        except NotScalarConstantError:
            vals = None
        if vals is not None:
            if vals[2] == 0:
                raise ValueError("ARange: step must not be zero")
            length = _arange_length(*vals)
        return Apply(self, ins, [TensorType(self.dtype, shape=(length,))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``max(ceil((stop - start) / step), 0)``."""
        if node.outputs[0].type.shape[0] is not None:
            return [(node.outputs[0].type.shape[0],)]
        start, stop, step = node.inputs
        n = tm.ceil(tm.true_div(tm.sub(stop, start), step))
        return [(cast(tm.maximum(n, 0), "int64"),)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``stop`` affects only the length."""
        return [[True], [False], [True]]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """``sum(gz)`` for start, ``sum(gz * arange(n))`` for step; stop disconnected."""
        start, _, step = inputs
        (gz,) = output_grads
        if self.dtype in discrete_dtypes:
            return [_float_zeros_like(start), disconnected_type(), _float_zeros_like(step)]
        # late: opweave.tensor.shape builds on this module (same floor, above it)
        from opweave.tensor.shape import shape_i

        n = shape_i(outputs[0], 0)
        steps = arange(n, dtype=self.dtype)
        g_start = cast(tm.sum(gz), start.dtype) if start.dtype in float_dtypes else None
        g_step = cast(tm.sum(tm.mul(gz, steps)), step.dtype) if step.dtype in float_dtypes else None
        return [
            g_start if g_start is not None else _float_zeros_like(start),
            disconnected_type(),
            g_step if g_step is not None else _float_zeros_like(step),
        ]


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> TensorVariable:
    """``numpy.arange`` as a symbolic vector.

    Parameters
    ----------
    start, stop, step
        Real scalars; ``arange(n)`` is ``arange(0, n)``.
    dtype
        Output dtype; default: the promotion of the inputs' dtypes (Python ints are
        int64, Python floats ``config.floatX``).
    """
    if stop is None:
        start, stop = 0, start
    ins = [as_tensor_variable(v) for v in (start, stop, step)]
    if dtype is None:
        dtype = upcast(*[v.dtype for v in ins])
    return ARange(dtype)(*ins)  # type: ignore[return-value]


# ====================================================================== Eye


class Eye(Op):
    """An ``n`` by ``m`` matrix with ones on diagonal ``k`` (``numpy.eye``).

    Parameters
    ----------
    dtype
        The output dtype.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: Any = None) -> None:
        self.dtype = floatX() if dtype is None else normalize_dtype(dtype)

    def make_node(self, n: Any, m: Any, k: Any) -> Apply:
        """Three 0-d integers; a matrix output."""
        n = _as_int_scalar(n, "Eye: n")
        m = _as_int_scalar(m, "Eye: m")
        k = _as_int_scalar(k, "Eye: k")
        static = (_const_int(n), _const_int(m))
        for name, s in zip("nm", static):
            if s is not None and s < 0:
                raise ValueError(f"Eye: {name} must be non-negative, got {s}")
        return Apply(self, [n, m, k], [TensorType(self.dtype, shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``(n, m)``."""
        return [(node.inputs[0], node.inputs[1])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``n`` and ``m`` decide the shape only; ``k`` decides where the ones are."""
        return [[False], [False], [True]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``n``, ``m`` disconnected; ``k`` (an integer position) undefined."""
        return [
            disconnected_type(),
            disconnected_type(),
            _grad_undefined(self, 2, inputs[2], "k is an integer position"),
        ]


def eye(n: Any, m: Any = None, k: Any = 0, dtype: Any = None) -> TensorVariable:
    """An ``n`` by ``m`` (default ``n``) matrix with ones on diagonal ``k``.

    Parameters
    ----------
    n, m, k
        Ints or 0-d integer tensors.
    dtype
        Output dtype (default ``config.floatX``).
    """
    if m is None:
        m = n
    return Eye(dtype)(n, m, k)  # type: ignore[return-value]


# ====================================================================== Join and Split


def _merge_static(a: int | None, b: int | None, who: str, dim: int) -> int | None:
    if a is None:
        return b
    if b is not None and a != b:
        raise ValueError(f"{who}: static lengths {a} and {b} of dimension {dim} do not match")
    return a


class Join(Op):
    """Concatenate tensors along an axis (``numpy.concatenate``).

    Inputs: ``axis`` (a 0-d integer) then the tensors, all of one rank (at least 1).
    The output dtype is the promotion of the tensors' dtypes.
    """

    __props__ = ()

    def make_node(self, axis: Any, *tensors: Any) -> Apply:
        """Check ranks and static lengths; compute the output's static shape."""
        if not tensors:
            raise ValueError("Join: needs at least one tensor to join")
        axis = _as_int_scalar(axis, "Join: axis")
        ts = [as_tensor_variable(t) for t in tensors]
        ndim = ts[0].ndim
        for i, t in enumerate(ts):
            if t.ndim == 0:
                raise TypeError(f"Join: tensor {i} ({t}) is 0-d; use stack to join scalars")
            if t.ndim != ndim:
                raise TypeError(
                    f"Join: all tensors must have the same number of dimensions; tensor 0 has "
                    f"{ndim}, tensor {i} ({t}) has {t.ndim}"
                )
        dtype = upcast(*[t.dtype for t in ts])
        ax = _const_int(axis)
        static: list[int | None] = [None] * ndim
        if ax is not None:
            if not -ndim <= ax < ndim:
                raise ValueError(f"Join: axis {ax} is out of range for {ndim}-d tensors")
            ax %= ndim
            for d in range(ndim):
                if d == ax:
                    lengths = [t.type.shape[d] for t in ts]
                    static[d] = None if None in lengths else sum(lengths)  # type: ignore[arg-type]
                else:
                    for t in ts:
                        static[d] = _merge_static(static[d], t.type.shape[d], "Join", d)
        out = TensorType(dtype, shape=static)()
        return Apply(self, [axis, *ts], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sum of the lengths along ``axis``, the first tensor's length elsewhere."""
        axis = node.inputs[0]
        ishapes = shapes[1:]
        ndim = len(ishapes[0])
        ax = _const_int(axis)
        out = []
        for d in range(ndim):
            total = _add_dims([s[d] for s in ishapes])
            if ax is not None:
                out.append(total if d == ax % ndim else ishapes[0][d])
            else:
                is_axis = tm.or_(tm.eq(axis, d), tm.eq(axis, d - ndim))
                out.append(where(is_axis, total, ishapes[0][d]))
        return [tuple(out)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient split back into the inputs' pieces; ``axis`` undefined."""
        axis, *tensors = inputs
        (gz,) = output_grads
        g_axis = _grad_undefined(self, 0, axis, "axis is an integer")
        if gz.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [g_axis, *[_float_zeros_like(t) for t in tensors]]
        # late: opweave.tensor.shape builds on this module (same floor, above it)
        from opweave.tensor.shape import shape

        if len(tensors) == 1:
            pieces = [gz]
        else:
            sizes = make_vector(*[shape(t)[axis] for t in tensors])  # type: ignore[index]
            pieces = split(gz, sizes, len(tensors), axis)
        grads: list[Any] = [g_axis]
        for t, piece in zip(tensors, pieces):
            if t.dtype in continuous_dtypes:  # type: ignore[attr-defined]
                grads.append(cast(piece, t.dtype))  # type: ignore[attr-defined]
            else:
                grads.append(_float_zeros_like(t))
        return grads

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The join of the tensors' evaluation points."""
        if any(e is None for e in eval_points[1:]):
            return [None]
        return [self(inputs[0], *eval_points[1:])]


def _add_dims(dims: Sequence[Any]) -> Any:
    known = [d for d in dims if isinstance(d, int | np.integer)]
    symbolic = [d for d in dims if not isinstance(d, int | np.integer)]
    total: Any = int(sum(known))
    for d in symbolic:
        total = tm.add(total, d) if not (isinstance(total, int) and total == 0) else d
    return total


def join(axis: Any, *tensors: Any) -> TensorVariable:
    """Concatenate ``tensors`` along ``axis`` (a single tensor is returned as is).

    Parameters
    ----------
    axis
        An int or 0-d integer tensor.
    *tensors
        Tensors of one rank; their lengths may differ along ``axis`` only.
    """
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if len(tensors) == 1:
        return as_tensor_variable(tensors[0])
    return Join()(axis, *tensors)  # type: ignore[return-value]


def concatenate(tensor_list: Sequence[Any], axis: Any = 0) -> TensorVariable:
    """``numpy.concatenate``: join the list ``tensor_list`` along ``axis``."""
    if not isinstance(tensor_list, list | tuple):
        raise TypeError(
            "concatenate: the first argument must be a list or tuple of tensors (did you "
            "write concatenate(x, y) instead of concatenate([x, y])?)"
        )
    return join(axis, *tensor_list)


def stack(tensors: Sequence[Any], axis: int = 0) -> TensorVariable:
    """Join ``tensors`` (all of one shape) along a new axis ``axis`` (``numpy.stack``).

    Scalars stacked on axis 0 make a :class:`MakeVector`.
    """
    if not isinstance(tensors, list | tuple) or not tensors:
        raise TypeError("stack: expected a non-empty list or tuple of tensors")
    ts = [as_tensor_variable(t) for t in tensors]
    ndim = ts[0].ndim
    if any(t.ndim != ndim for t in ts):
        raise TypeError(f"stack: all tensors must have the same rank, got {[t.ndim for t in ts]}")
    axis = _normalize_axis(axis, ndim + 1, "stack")
    if ndim == 0:
        return make_vector(*ts, dtype=upcast(*[t.dtype for t in ts]))
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import shape_padaxis

    return Join()(axis, *[shape_padaxis(t, axis) for t in ts])  # type: ignore[return-value]


class Split(Op):
    """Split a tensor into ``len_splits`` pieces along an axis (views of the input).

    Inputs: ``x``, ``axis`` (0-d integer) and ``splits`` (an integer vector of the
    pieces' lengths, summing to ``x``'s length along ``axis``).

    Parameters
    ----------
    len_splits
        The number of pieces.
    """

    __props__ = ("len_splits",)

    def __init__(self, len_splits: int) -> None:
        if isinstance(len_splits, bool) or not isinstance(len_splits, int) or len_splits < 1:
            raise TypeError(f"Split: len_splits must be a positive int, got {len_splits!r}")
        self.len_splits = len_splits
        self.view_map = {i: [0] for i in range(len_splits)}

    def make_node(self, x: Any, axis: Any, splits: Any) -> Apply:
        """Check the inputs; each output is like ``x``, with the split axis' length from
        ``splits`` when it is constant."""
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"Split: cannot split the 0-d tensor {x}")
        axis = _as_int_scalar(axis, "Split: axis")
        splits = _int_vector(splits, "Split: splits")
        n = splits.type.shape[0]
        if n is not None and n != self.len_splits:
            raise ValueError(f"Split: expected {self.len_splits} split sizes, got {n}")
        ax = _const_int(axis)
        entries = _static_vector(splits) or [None] * self.len_splits
        if any(e is not None and e < 0 for e in entries):
            raise ValueError(f"Split: split sizes must be non-negative, got {entries}")
        outs = []
        if ax is not None:
            if not -x.ndim <= ax < x.ndim:
                raise ValueError(f"Split: axis {ax} is out of range for {x.ndim}-d {x}")
            ax %= x.ndim
            length = x.type.shape[ax]
            if length is not None and None not in entries and sum(entries) != length:  # type: ignore[arg-type]
                raise ValueError(
                    f"Split: the split sizes {entries} do not sum to the length {length} of "
                    f"axis {ax}"
                )
            for e in entries:
                shape = list(x.type.shape)
                shape[ax] = e
                outs.append(x.type.clone(shape=shape)())
        else:
            outs = [x.type.clone(shape=(None,) * x.ndim)() for _ in range(self.len_splits)]
        return Apply(self, [x, axis, splits], outs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape with the split axis' length replaced by each split size."""
        x, axis, splits = node.inputs
        ax = _const_int(axis)
        xshape = shapes[0]
        entries = _static_vector(splits) or [None] * self.len_splits
        out = []
        for i, e in enumerate(entries):
            size = e if e is not None else splits[i]  # type: ignore[index]
            if ax is not None:
                out.append(tuple(size if d == ax % x.ndim else s for d, s in enumerate(xshape)))  # type: ignore[attr-defined]
            else:
                dims = []
                for d, s in enumerate(xshape):
                    is_axis = tm.or_(tm.eq(axis, d), tm.eq(axis, d - len(xshape)))
                    dims.append(where(is_axis, size, s))
                out.append(tuple(dims))
        return out

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` (and the integer ``axis``) affect every piece; the sizes only shapes."""
        n = self.len_splits
        return [[True] * n, [True] * n, [False] * n]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """The pieces' gradients joined back (zeros for disconnected pieces)."""
        x, axis, _ = inputs
        if all(_is_disconnected(g) for g in output_grads):
            return [disconnected_type(), disconnected_type(), disconnected_type()]
        g_axis = _grad_undefined(self, 1, axis, "axis is an integer")
        if x.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(x), g_axis, disconnected_type()]
        pieces = [
            zeros_like(out) if _is_disconnected(g) else g for g, out in zip(output_grads, outputs)
        ]
        return [join(axis, *pieces), g_axis, disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The split of ``x``'s evaluation point."""
        if eval_points[0] is None:
            return [None] * self.len_splits
        return self.make_node(eval_points[0], *inputs[1:]).outputs


def split(x: Any, splits_size: Any, n_splits: int, axis: Any = 0) -> list[TensorVariable]:
    """Split ``x`` along ``axis`` into ``n_splits`` pieces of lengths ``splits_size``.

    Parameters
    ----------
    x
        The tensor.
    splits_size
        A sequence of ints or an integer vector, summing to ``x``'s length along ``axis``.
    n_splits
        The number of pieces (the length of ``splits_size``).
    axis
        An int or 0-d integer tensor.
    """
    return Split(n_splits).make_node(x, axis, splits_size).outputs  # type: ignore[return-value]


# ====================================================================== Nonzero and diagonals


class Nonzero(Op):
    """The indices of the non-zero elements: an int64 matrix with one row per dimension."""

    __props__ = ()

    def make_node(self, a: Any) -> Apply:
        """Any tensor of at least one dimension."""
        a = as_tensor_variable(a)
        if a.ndim == 0:
            raise ValueError("Nonzero: the input must have at least one dimension")
        return Apply(self, [a], [TensorType("int64", shape=(a.ndim, None))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """Not known without the values."""
        raise MethodNotDefined("Nonzero's output shape depends on the input's values")

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zero: integer positions do not change with small changes of the input."""
        return [_float_zeros_like(inputs[0])]


def nonzero(a: Any, return_matrix: bool = False) -> Any:
    """The indices of the non-zero elements of ``a``.

    Returns
    -------
    tuple of TensorVariable or TensorVariable
        One int64 vector per dimension (``numpy.nonzero``), or the ``(ndim, n)`` matrix
        when ``return_matrix`` is true.
    """
    matrix = Nonzero()(a)
    if return_matrix:
        return matrix
    return tuple(matrix[i] for i in range(as_tensor_variable(a).ndim))  # type: ignore[index]


def flatnonzero(a: Any) -> TensorVariable:
    """The indices of the non-zero elements of ``a`` flattened."""
    a = as_tensor_variable(a)
    return nonzero(flatten(a, 1))[0]  # type: ignore[no-any-return]


def nonzero_values(a: Any) -> TensorVariable:
    """The non-zero elements of ``a``, flattened, in C order."""
    # late: opweave.tensor.subtensor builds on this module (same floor, above it)
    from opweave.tensor.subtensor import advanced_subtensor1

    flat = flatten(as_tensor_variable(a), 1)
    return advanced_subtensor1(flat, flatnonzero(flat))


class ExtractDiag(Op):
    """The diagonal ``offset`` of the plane ``(axis1, axis2)`` (``numpy.diagonal``, a copy).

    Parameters
    ----------
    offset
        Diagonal offset (positive: above the main diagonal).
    axis1, axis2
        The two (distinct, non-negative) axes.
    """

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> None:
        if axis1 == axis2:
            raise ValueError("ExtractDiag: axis1 and axis2 must differ")
        if min(axis1, axis2) < 0:
            raise ValueError("ExtractDiag: axes must be non-negative (normalize them first)")
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)

    def _length(self, n1: Any, n2: Any) -> Any:
        if isinstance(n1, int) and isinstance(n2, int):
            if self.offset >= 0:
                return max(0, min(n1, n2 - self.offset))
            return max(0, min(n1 + self.offset, n2))
        if self.offset >= 0:
            length = tm.minimum(n1, tm.sub(n2, self.offset))
        else:
            length = tm.minimum(tm.add(n1, self.offset), n2)
        return tm.maximum(length, 0)

    def make_node(self, x: Any) -> Apply:
        """A tensor with at least ``max(axis1, axis2) + 1`` dims; the diagonal is the last axis."""
        x = as_tensor_variable(x)
        if x.ndim <= max(self.axis1, self.axis2):
            raise ValueError(f"{self}: {x} has only {x.ndim} dimensions")
        shape = x.type.shape
        rest = [s for d, s in enumerate(shape) if d not in (self.axis1, self.axis2)]
        n1, n2 = shape[self.axis1], shape[self.axis2]
        length = None if n1 is None or n2 is None else self._length(n1, n2)
        return Apply(self, [x], [x.type.clone(shape=(*rest, length))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The other dimensions, then the diagonal's length."""
        (s,) = shapes
        rest = [d for i, d in enumerate(s) if i not in (self.axis1, self.axis2)]
        return [(*rest, self._length(s[self.axis1], s[self.axis2]))]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros with the output gradient written on the diagonal."""
        (x,) = inputs
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(x)]
        return [DiagGrad(self.offset, self.axis1, self.axis2)(zeros_like(x), gz)]


class DiagGrad(Op):
    """``x`` with the diagonal of :class:`ExtractDiag` (same parameters) replaced by ``y``."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int, axis1: int, axis2: int) -> None:
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)

    def make_node(self, x: Any, y: Any) -> Apply:
        """``x`` and the new diagonal ``y``."""
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        if y.ndim != x.ndim - 1:
            raise TypeError(f"{self}: the diagonal must have {x.ndim - 1} dims, got {y.ndim}")
        return Apply(self, [x, y], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` off the diagonal for ``x``; the diagonal of ``gz`` for ``y``."""
        (gz,) = output_grads
        extract = ExtractDiag(self.offset, self.axis1, self.axis2)
        return [self(gz, zeros_like(extract(gz))), extract(gz)]


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> TensorVariable:
    """``numpy.diagonal``: the diagonal ``offset`` of the plane ``(axis1, axis2)``."""
    a = as_tensor_variable(a)
    a1 = _normalize_axis(axis1, a.ndim, "diagonal")
    a2 = _normalize_axis(axis2, a.ndim, "diagonal")
    return ExtractDiag(offset, a1, a2)(a)  # type: ignore[return-value]


# ====================================================================== scalars and 0-d tensors


class TensorFromScalar(Op):
    """A 0-d tensor holding the value of an ``opweave.scalar`` variable."""

    __props__ = ()

    def make_node(self, s: Any) -> Apply:
        """A scalar (``ScalarType``) input; a 0-d tensor of its dtype."""
        s = as_scalar(s)
        if not isinstance(s.type, ScalarType):
            raise TypeError(f"TensorFromScalar expects a scalar variable, got {s}")
        return Apply(self, [s], [TensorType(s.type.dtype, shape=())()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """A 0-d tensor."""
        return [()]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient as a scalar (zero for a discrete input)."""
        (s,) = inputs
        (gz,) = output_grads
        if s.type.dtype in continuous_dtypes:  # type: ignore[attr-defined]
            return [scalar_from_tensor(gz)]
        return [ps.zero_grad(s)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point as a tensor."""
        return [None if eval_points[0] is None else self(eval_points[0])]


class ScalarFromTensor(Op):
    """The ``opweave.scalar`` value of a 0-d tensor."""

    __props__ = ()

    def make_node(self, t: Any) -> Apply:
        """A 0-d tensor input; a scalar of its dtype."""
        t = as_tensor_variable(t)
        if t.ndim != 0:
            raise TypeError(f"ScalarFromTensor expects a 0-d tensor, got {t} with {t.ndim} dims")
        return Apply(self, [t], [get_scalar_type(t.dtype)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """A scalar."""
        return [()]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient as a 0-d tensor."""
        (t,) = inputs
        (gz,) = output_grads
        if t.dtype not in continuous_dtypes:  # type: ignore[attr-defined]
            return [_float_zeros_like(t)]
        return [cast(tensor_from_scalar(gz), t.dtype)]  # type: ignore[attr-defined]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point as a scalar."""
        return [None if eval_points[0] is None else self(eval_points[0])]


def tensor_from_scalar(s: Any) -> TensorVariable:
    """A 0-d tensor holding the scalar ``s``."""
    return TensorFromScalar()(s)  # type: ignore[return-value]


def scalar_from_tensor(t: Any) -> Variable:
    """The scalar held by the 0-d tensor ``t``."""
    return ScalarFromTensor()(t)  # type: ignore[return-value]
