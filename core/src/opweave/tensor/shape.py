"""Shapes: :func:`shape`, :func:`shape_i`, :class:`Reshape`, :class:`SpecifyShape`.

``shape`` and ``shape_i`` build the type-generic ``Shape``/``Shape_i`` Ops defined here
(``opweave.compile.ops`` re-exports them; backends give their code per Type, e.g. through
``opweave.compile.ops.register_shape_c_code`` / ``register_shape_i_c_code``).
:class:`Reshape` takes its new shape as an integer vector input (one entry may be
``-1``) and returns a view of its input where NumPy can; its output's static shape is at
least as specific as PyTensor's (the entries known statically, through shapes of static
length and arithmetic on constants, and an entry the sizes determine).
:class:`SpecifyShape` asserts a shape at run time and gives its output the corresponding
static shape. Shape inputs never affect the output's elements, so they are disconnected
for gradients.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from opweave.compile.ops import register_shape_c_code as register_shape_c_code  # PyTensor's
from opweave.compile.ops import register_shape_i_c_code as register_shape_i_c_code
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.type import Generic, disconnected_type, generic
from opweave.scalar.basic import ScalarConstant
from opweave.scalar.type import int64 as scalar_int64
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var, tensor_vars
from opweave.tensor.basic import (
    MakeVector,
    _as_int_scalar,
    _const_int,
    _int_vector,
    _static_vector,
    alloc,
    get_underlying_scalar_constant_value,
    get_vector_length,
    make_vector,
    where,
)
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.elemwise import DimShuffle
from opweave.tensor.exceptions import NotScalarConstantError
from opweave.tensor.shape_ops import Shape, Shape_i
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = [
    "Reshape",
    "Shape",
    "ShapeValueType",
    "Shape_i",
    "SpecifyShape",
    "flatten",
    "reshape",
    "shape",
    "shape_i",
    "shape_padaxis",
    "shape_padleft",
    "shape_padright",
    "shape_tuple",
    "specify_broadcastable",
    "specify_shape",
    "vectorize_shape",
]

#: One entry of a shape given to :func:`specify_shape`: a length, ``None`` (unknown), a
#: symbolic length, or ``...`` standing for the unknown leading dimensions.
ShapeValueType = None | EllipsisType | np.integer | int | Variable


# ====================================================================== Shape, Shape_i
# (the Ops are defined in opweave.tensor.shape_ops, below the modules this one builds on)

_shape = Shape()


def shape(x: Any) -> TensorVariable:
    """The symbolic shape of ``x``: an int64 vector of static length ``x.ndim``."""
    return tensor_out(Shape()(as_tensor_variable(x)))


def shape_i(x: Any, i: int) -> TensorVariable:
    """The length of dimension ``i`` of ``x`` as an int64 scalar.

    A constant when ``x``'s static shape knows it, else ``Shape_i(i)(x)``.
    """
    x = as_tensor_variable(x)
    if isinstance(i, bool) or not isinstance(i, int | np.integer):
        raise TypeError(f"shape_i: the dimension must be an int, got {i!r}")
    if not -x.ndim <= i < x.ndim:
        raise IndexError(f"shape_i: dimension {i} is out of range for the {x.ndim}-d {x}")
    i = int(i) % x.ndim
    static = x.type.shape[i]
    if static is not None:
        return constant(static, dtype="int64")
    return tensor_out(Shape_i(i)(x))


@_vectorize_node.register(Shape)
def vectorize_shape(op: Shape, node: Apply, batched_x: Variable) -> Apply:
    """The shape of each core tensor of ``batched_x``: its core lengths repeated over the
    batch dimensions (an ``Alloc`` of shape ``batch_shape + (core_ndim,)``), or the plain
    shape when ``batched_x`` has no batch dimensions."""
    (core_x,) = node.inputs
    x = tensor_var(batched_x)
    core_ndim = tensor_var(core_x).ndim
    batch_ndim = x.ndim - core_ndim
    if batch_ndim < 0:
        raise ValueError(
            f"vectorize_shape: the batched input {x} has fewer dimensions ({x.ndim}) than "
            f"the core input ({core_ndim})"
        )
    batched_shape = shape(x)
    if batch_ndim == 0:
        return cast(Apply, batched_shape.owner)
    core_shape = batched_shape[batch_ndim:]
    # static batch lengths as constants, so that the Alloc keeps them (a batch of length
    # 1 then broadcasts against a longer one, as in PyTensor)
    batch_shape = tuple(
        batched_shape[i] if length is None else length
        for i, length in enumerate(x.type.shape[:batch_ndim])
    )
    return cast(Apply, tensor_out(alloc(core_shape, *batch_shape, core_ndim)).owner)


# ====================================================================== padding


def _dimshuffle(x: TensorVariable, order: Sequence[Any]) -> TensorVariable:
    op = DimShuffle(input_ndim=x.ndim, new_order=tuple(order))
    return tensor_out(op(x))


def shape_padleft(t: Any, n_ones: int = 1) -> TensorVariable:
    """``t`` with ``n_ones`` broadcastable dimensions added on the left."""
    var = as_tensor_variable(t)
    if n_ones == 0:
        return var
    return _dimshuffle(var, ["x"] * n_ones + list(range(var.ndim)))


def shape_padright(t: Any, n_ones: int = 1) -> TensorVariable:
    """``t`` with ``n_ones`` broadcastable dimensions added on the right."""
    var = as_tensor_variable(t)
    if n_ones == 0:
        return var
    return _dimshuffle(var, list(range(var.ndim)) + ["x"] * n_ones)


def shape_padaxis(t: Any, axis: int) -> TensorVariable:
    """``t`` with a broadcastable dimension inserted at ``axis`` (negative counts from the end)."""
    t = as_tensor_variable(t)
    ndim = t.ndim + 1
    if not -ndim <= axis < ndim:
        raise IndexError(f"shape_padaxis: axis {axis} is out of range for a {ndim}-d result")
    axis %= ndim
    order: list[Any] = list(range(t.ndim))
    order.insert(axis, "x")
    return _dimshuffle(t, order)


# ====================================================================== Reshape


def _static_int(v: Variable) -> int | None:
    """The constant integer value of the 0-d ``v`` (looking through shapes of static length,
    arithmetic of constants, ...: :func:`get_underlying_scalar_constant_value`), or ``None``."""
    try:
        value = get_underlying_scalar_constant_value(v)
    except NotScalarConstantError:
        return None
    if value.dtype.kind not in "iu":
        return None
    return int(value)


def _dim_of(v: Variable, x: TensorVariable) -> int | None:
    """``i`` when ``v`` is the length of dimension ``i`` of ``x`` (``x.shape[i]`` or
    ``Shape_i(i)(x)``), else ``None``."""
    owner = v.owner
    if owner is None:
        return None
    if isinstance(owner.op, Shape_i):
        return owner.op.i if owner.inputs[0] is x else None
    # ``x.shape[i]``: a Subtensor (defined above this module) with one constant index
    idx = getattr(owner.op, "idx_list", None)
    if idx is None or len(owner.inputs) != 1 or len(idx) != 1:
        return None
    source = owner.inputs[0].owner
    if source is None or not isinstance(source.op, Shape) or source.inputs[0] is not x:
        return None
    (i,) = idx
    return int(i) if isinstance(i, int | np.integer) and 0 <= i < x.ndim else None


def _new_shape_entries(
    x: TensorVariable, shp: TensorVariable, ndim: int
) -> tuple[list[int | None], list[int | None]]:
    """Per entry of the new shape ``shp``: its constant value (``None`` where unknown), and
    the dimension of ``x`` whose length it is (``None`` where it is none)."""
    if isinstance(shp, Constant):
        return [int(e) for e in np.asarray(shp.data).reshape(-1)], [None] * ndim
    owner = shp.owner
    if owner is not None and isinstance(owner.op, MakeVector):
        entries = list(owner.inputs)
    elif owner is not None and not isinstance(owner.op, Shape):
        entries = [shp[i] for i in range(ndim)]
    else:
        static = _static_vector(shp)
        return (static or [None] * ndim), [None] * ndim
    return [_static_int(e) for e in entries], [_dim_of(e, x) for e in entries]


def _reshape_static(
    in_shape: Sequence[int | None],
    entries: Sequence[int | None],
    dims: Sequence[int | None] | None = None,
) -> list[int | None]:
    """The static output shape of a reshape; raises for impossible constant shapes.

    ``entries`` are the new shape's constant values (``None`` where unknown) and ``dims``
    the dimension of the input each entry is the length of (``None`` where none).
    """
    if sum(1 for e in entries if e == -1) > 1:
        raise ValueError(f"Reshape: at most one entry of the new shape can be -1, got {entries}")
    bad = [e for e in entries if e is not None and e < -1]
    if bad:
        raise ValueError(f"Reshape: invalid new shape entries {bad} in {list(entries)}")
    dims = dims if dims is not None else [None] * len(entries)
    out: list[int | None] = [e if e is not None and e >= 0 else None for e in entries]
    known = [e for e in entries if e is not None and e >= 0]
    prod = int(np.prod(known, dtype=np.int64))
    unknown = [k for k, e in enumerate(entries) if e is None or e == -1]
    if None not in in_shape:
        size = int(np.prod(cast("Sequence[int]", in_shape), dtype=np.int64))
        if not unknown and prod != size:
            raise ValueError(
                f"Reshape: Input shape {tuple(in_shape)} is incompatible with new shape "
                f"{tuple(entries)}: cannot reshape a tensor of static shape {tuple(in_shape)} "
                f"(size {size}) into {tuple(entries)} (size {prod})"
            )
        if len(unknown) == 1:
            # The one entry left (-1 or symbolic) makes the sizes match, as in PyTensor.
            k = unknown[0]
            if prod == 0 or size % prod:
                if prod or size or entries[k] == -1:
                    raise ValueError(
                        f"Reshape: cannot reshape a tensor of static shape {tuple(in_shape)} "
                        f"into {tuple(e if e is not None else '?' for e in entries)}"
                    )
            else:
                out[k] = size // prod
        return out
    if -1 in entries:
        # The other entries are constants and lengths of the input's dimensions: those of
        # unknown length, each once, cancel out (a -1 fails when the others' product is 0).
        free = [i for i, n in enumerate(in_shape) if n is None]
        named = sorted(d for k, d in enumerate(dims) if d is not None and out[k] is None)
        rest = [k for k in unknown if entries[k] != -1 and dims[k] is None]
        if not rest and named == free and prod > 0:
            size = int(np.prod([n for n in in_shape if n is not None], dtype=np.int64))
            if size % prod == 0:
                out[list(entries).index(-1)] = size // prod
    return out


class Reshape(Op):
    """``x`` with a new shape of ``ndim`` dimensions, given as an integer vector input.

    One entry of the new shape may be ``-1``: its length is inferred. The output
    is a view of the input when NumPy can make one (``view_map = {0: [0]}``).

    Parameters
    ----------
    ndim
        The number of output dimensions (the new shape's length).
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}

    def __init__(self, ndim: int) -> None:
        if isinstance(ndim, bool) or not isinstance(ndim, int | np.integer) or ndim < 0:
            raise TypeError(f"Reshape: ndim must be a non-negative int, got {ndim!r}")
        self.ndim = int(ndim)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.ndim}}}"  # PyTensor's Reshape{2}

    def make_node(self, x: Any, shp: Any) -> Apply:
        """``x`` and an integer vector of length ``ndim``.

        The output's static shape has the entries of ``shp`` known statically (constants,
        static lengths of shapes, arithmetic on them), and the one entry left (``-1`` or
        symbolic) when the input's size determines it: always when the input's static
        shape is complete, and for a ``-1`` when the other entries are constants and the
        lengths of the input's dimensions of unknown length (``x.reshape((x.shape[0],
        -1))`` of a ``(None, 3, 4)`` tensor is ``(None, 12)``).

        Raises
        ------
        ValueError
            For a new shape that cannot hold the input's static size.
        """
        x = as_tensor_variable(x)
        shp = _int_vector(shp, "Reshape: the new shape")
        length = shp.type.shape[0]
        if length is not None and length != self.ndim:
            raise ValueError(
                f"Reshape: the new shape {shp} has {length} entries but ndim is {self.ndim}"
            )
        entries, dims = _new_shape_entries(x, shp, self.ndim)
        static = _reshape_static(x.type.shape, entries, dims)
        return Apply(self, [x, shp], [TensorType(x.dtype, shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The new shape's entries, with a ``-1`` replaced by the size left over."""
        shp = tensor_var(node.inputs[1])
        static = tensor_type_of(node.outputs[0]).shape
        if None not in static:
            return [tuple(static)]
        entries = _static_vector(shp) or [None] * self.ndim
        size = _product(shapes[0])
        # With a -1 entry, -prod(shp) is the product of the other entries.
        missing = tm.int_div(size, tm.maximum(tm.neg(tm.prod(shp)), 1))
        out: list[Any] = []
        for i, (s, e) in enumerate(zip(static, entries)):
            if s is not None:
                out.append(s)
            elif e is not None and e >= 0:
                out.append(e)
            elif e == -1:
                out.append(missing)
            else:
                entry = shp[i]
                out.append(_switch(tm.eq(entry, -1), missing, entry))
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The shape input does not affect the elements."""
        return [[True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient reshaped to ``x``'s shape; the shape is disconnected."""
        x, _ = tensor_vars(inputs)
        (gz,) = output_grads
        return [reshape(gz, shape(x), ndim=x.ndim), disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point reshaped the same way."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


def _switch(cond: Any, ift: Any, iff: Any) -> Any:
    return where(cond, ift, iff)


def _product(dims: Sequence[Any]) -> Any:
    result: Any = 1
    for d in dims:
        if isinstance(d, int | np.integer):
            if isinstance(result, int):
                result *= int(d)
                continue
        result = tm.mul(result, d)
    return result


def reshape(x: Any, newshape: Any, ndim: int | None = None) -> TensorVariable:
    """Return ``x`` reshaped to ``newshape``.

    Parameters
    ----------
    x
        The tensor.
    newshape
        An int, a sequence of ints and 0-d integer tensors, or an integer vector. One entry
        may be ``-1``.
    ndim
        The new shape's length; needed only when ``newshape`` is a vector whose length is
        not known statically.

    Raises
    ------
    ValueError
        If the number of dimensions cannot be determined or disagrees with ``ndim``, or a
        constant new shape cannot hold ``x``'s static size.
    """
    x = as_tensor_variable(x)
    if isinstance(newshape, int | np.integer) and not isinstance(newshape, bool):
        newshape = (int(newshape),)
    elif isinstance(newshape, Variable) and getattr(newshape.type, "ndim", None) == 0:
        newshape = (newshape,)
    n: int | None
    if isinstance(newshape, list | tuple):
        n = len(newshape)
        if any(isinstance(e, Variable) for e in newshape):
            shp = make_vector(*[_as_int_scalar(e, "reshape: shape entry") for e in newshape])
        else:
            shp = _int_vector(newshape, "reshape: the new shape")
    else:
        shp = _int_vector(newshape, "reshape: the new shape")
        n = shp.type.shape[0]
        if n is None:
            if ndim is None:
                raise ValueError(
                    f"reshape: the length of the new shape {shp} is not known statically; pass ndim"
                )
            n = ndim
    if ndim is not None and ndim != n:
        raise ValueError(f"reshape: ndim={ndim} but the new shape has {n} entries")
    return tensor_out(Reshape(n)(x, shp))


@_vectorize_node.register(Reshape)
def vectorize_reshape(
    op: Reshape, node: Apply, batched_x: Variable, batched_shape: Variable
) -> Any:
    """Reshape each core tensor of ``batched_x``: the batch lengths followed by the core
    shape (or, when the new shape already has one entry per batch dimension more, that
    shape). A shape that gained batch dimensions of its own goes to ``Blockwise``.

    Raises
    ------
    ValueError
        When the new shape has neither the core nor the batched number of entries.
    """
    core_x = node.inputs[0]
    x = tensor_var(batched_x)
    new_shape = tensor_var(batched_shape)
    if new_shape.ndim != 1:
        return _vectorize_node.dispatch(Op)(op, node, batched_x, batched_shape)
    batch_ndim = x.ndim - tensor_var(core_x).ndim
    core_len = op.ndim
    new_len = get_vector_length(new_shape)
    if new_len == core_len:
        entries = [*tuple(x.shape[:batch_ndim]), *tuple(new_shape)]
        return cast(Apply, reshape(x, entries, ndim=len(entries)).owner)
    if new_len == core_len + batch_ndim:
        return cast(Apply, reshape(x, new_shape, ndim=new_len).owner)
    raise ValueError(
        f"Invalid shape length passed into vectorize node of Reshape: {new_len} entries for "
        f"a core shape of {core_len} and {batch_ndim} batch dimension(s)"
    )


def flatten(x: Any, ndim: int = 1) -> TensorVariable:
    """Collapse the trailing dimensions of ``x`` so that ``ndim`` remain.

    Parameters
    ----------
    x
        The tensor.
    ndim
        The number of dimensions of the result, between 1 and ``max(x.ndim, 1)``.
    """
    xt = as_tensor_variable(x)
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= max(xt.ndim, 1):
        raise ValueError(f"flatten: ndim must be between 1 and {max(xt.ndim, 1)}, got {ndim!r}")
    if xt.ndim == ndim:
        return xt
    dims: list[Any] = [shape_i(xt, i) for i in range(ndim - 1)]
    tail = xt.type.shape[ndim - 1 :]
    dims.append(
        int(np.prod(cast("Sequence[int]", tail), dtype=np.int64)) if None not in tail else -1
    )
    return reshape(xt, dims, ndim=ndim)


# ====================================================================== SpecifyShape


def _none_const() -> Constant:
    """A constant ``None`` standing for an unspecified dimension."""
    return Constant(generic, None)


def _is_none(v: Any) -> bool:
    return v is None or (isinstance(v, Constant) and isinstance(v.type, Generic) and v.data is None)


class SpecifyShape(Op):
    """Return ``x`` after checking, at run time, that its shape is the one given.

    Inputs: ``x`` then one entry per dimension, a 0-d integer or ``None`` (a
    constant of the ``generic`` Type) for a dimension not checked. The output
    (a view of ``x``) has the constant entries as static shape.
    """

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x: Any, *shape: Any) -> Apply:
        """Check the entries against ``x``'s rank and static shape."""
        x = as_tensor_variable(x)
        if len(shape) != x.ndim:
            raise ValueError(
                f"SpecifyShape: {x} is {x.ndim}-dimensional and will never match a shape of "
                f"length {len(shape)}"
            )
        dims: list[Variable] = []
        static: list[int | None] = []
        for i, s in enumerate(shape):
            if _is_none(s):
                dims.append(s if isinstance(s, Constant) else _none_const())
                static.append(x.type.shape[i])
                continue
            try:
                d = _as_int_scalar(s, f"shape entry {i}")
            except TypeError as exc:
                raise TypeError(
                    f"SpecifyShape: shape values must be integer types ({exc})"
                ) from None
            known = _const_int(d)
            if known is not None and known < 0:
                raise ValueError(f"SpecifyShape: shape entry {i} is negative ({known})")
            have = x.type.shape[i]
            if known is not None and have is not None and known != have:
                raise ValueError(
                    f"SpecifyShape: {x} has static length {have} in dimension {i}, which "
                    f"contradicts the specified {known}"
                )
            dims.append(d)
            static.append(known if known is not None else have)
        return Apply(self, [x, *dims], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The specified entries, ``x``'s dimensions elsewhere."""
        xshape = shapes[0]
        out: list[Any] = []
        for i, d in enumerate(node.inputs[1:]):
            static = tensor_type_of(node.outputs[0]).shape[i]
            if static is not None:
                out.append(static)
            elif _is_none(d):
                out.append(xshape[i])
            else:
                out.append(d)
        return [tuple(out)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The shape entries do not affect the elements."""
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The output gradient (with the same shape specified); shape entries disconnected."""
        (gz,) = output_grads
        return [self(gz, *inputs[1:]), *[disconnected_type() for _ in inputs[1:]]]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point with the same shape specified."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


def _expand_ellipsis(shape: tuple[Any, ...], ndim: int) -> tuple[Any, ...]:
    """``shape`` with its one ``Ellipsis`` replaced by ``None`` for the dimensions it covers."""
    where = [i for i, s in enumerate(shape) if s is Ellipsis]
    if not where:
        return shape
    if len(where) > 1:
        raise ValueError(f"Multiple Ellipsis in specify_shape's shape {shape}")
    (i,) = where
    covered = max(ndim - (len(shape) - 1), 0)
    return (*shape[:i], *(None,) * covered, *shape[i + 1 :])


def specify_shape(x: Any, shape: Any) -> TensorVariable:
    """Return ``x``, checked at run time to have shape ``shape``.

    Parameters
    ----------
    x
        The tensor.
    shape
        One entry per dimension of ``x``: an int, a 0-d integer tensor, or ``None`` for a
        dimension not checked; or an integer vector of length ``x.ndim``. A single int or
        ``None`` is accepted for a vector. One ``Ellipsis`` stands for ``None`` in as many
        dimensions as needed.

    Returns
    -------
    TensorVariable
        ``x`` itself when nothing new is specified, else a ``SpecifyShape`` output whose
        static shape includes the constant entries.
    """
    xt = as_tensor_variable(x)
    if shape is None or shape is Ellipsis or isinstance(shape, int | np.integer):
        shape = (shape,)
    elif isinstance(shape, Variable) and getattr(shape.type, "ndim", None) == 0:
        shape = (shape,)
    elif isinstance(shape, list | tuple) and len(shape) == 1 and isinstance(shape[0], Variable):
        if getattr(shape[0].type, "ndim", None) == 1:
            shape = shape[0]
    if isinstance(shape, Variable):
        vec = _int_vector(shape, "specify_shape: shape")
        entries = _static_vector(vec)
        if entries is None:
            raise ValueError(
                f"specify_shape: Shape vector must have fixed dimensions; the length of {vec} "
                "is not known"
            )
        shape = tuple(e if e is not None else vec[i] for i, e in enumerate(entries))
    shape = _expand_ellipsis(tuple(shape), xt.ndim)
    if len(shape) != xt.ndim:
        raise ValueError(
            f"specify_shape: {xt} has {xt.ndim} dimensions but the shape {shape} has "
            f"{len(shape)}: it is {xt.ndim}-dimensional and will never match a shape of "
            f"length {len(shape)}"
        )
    redundant = all(
        _is_none(s) or (xt.type.shape[i] is not None and _const_int(s) == xt.type.shape[i])
        for i, s in enumerate(shape)
    )
    if redundant:
        return xt
    return tensor_out(SpecifyShape()(xt, *shape))


@_vectorize_node.register(SpecifyShape)
def vectorize_specify_shape(
    op: SpecifyShape, node: Apply, batched_x: Variable, *shape: Variable
) -> Apply:
    """The same shape specified for the core dimensions of ``batched_x``; its batch
    dimensions are left unchecked.

    Raises
    ------
    NotImplementedError
        When a shape entry itself gained batch dimensions.
    """
    if any(not _is_none(s) and getattr(s.type, "ndim", 0) != 0 for s in shape):
        raise NotImplementedError(
            "vectorize_specify_shape: it is not possible to vectorize the shape entries of "
            "SpecifyShape"
        )
    x = tensor_var(batched_x)
    batch_ndim = x.ndim - tensor_var(node.inputs[0]).ndim
    entries = [None] * batch_ndim + [None if _is_none(s) else s for s in shape]
    out = specify_shape(x, entries)
    if out.owner is None or out is x:
        return cast(Apply, tensor_out(SpecifyShape()(x, *entries)).owner)
    return out.owner


#: PyTensor's name for the ``SpecifyShape`` Op instance: ``_specify_shape(x, *shape)``.
_specify_shape = SpecifyShape()


def specify_broadcastable(x: Any, *axes: int) -> TensorVariable:
    """``x`` with the given axes declared of length 1, checked at run time.

    Parameters
    ----------
    x
        The tensor.
    *axes
        The axes (negative ones count from the end).

    Returns
    -------
    TensorVariable
        ``x`` itself when no axis is given, else a :func:`specify_shape` of ``x`` with
        length 1 on ``axes`` and the known static lengths elsewhere.

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of range.
    ValueError
        When a given axis has a static length other than 1.
    """
    xt = as_tensor_variable(x)
    if not axes:
        return xt
    chosen = normalize_axis_tuple(axes, xt.type.ndim)
    for axis in chosen:
        if xt.type.shape[axis] not in (None, 1):
            raise ValueError(
                f"specify_broadcastable: axis {axis} of {xt} has static length "
                f"{xt.type.shape[axis]}, not 1"
            )
    return specify_shape(xt, [1 if i in chosen else s for i, s in enumerate(xt.type.shape)])


def shape_tuple(x: Any) -> tuple[Variable, ...]:
    """The shape of ``x`` as a tuple of graph variables: an int64 scalar constant for each
    statically known length, else that entry of ``shape(x)``.

    Parameters
    ----------
    x
        A tensor; anything without a shape gives ``()``.

    Returns
    -------
    tuple of Variable
        One entry per dimension.
    """
    static = getattr(getattr(x, "type", None), "shape", None)
    if static is None:
        return ()
    symbolic = shape(x)
    return tuple(
        symbolic[i] if length is None else ScalarConstant(scalar_int64, length)
        for i, length in enumerate(static)
    )
