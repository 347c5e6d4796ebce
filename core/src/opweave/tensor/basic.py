"""Tensor construction, joining, splitting and casting (``pytensor.tensor.basic``).

Ops: :class:`MakeVector`, :class:`Alloc`, :class:`ARange`, :class:`Eye`,
:class:`Join`, :class:`Split`, :class:`Nonzero`, :class:`ExtractDiag` (and its
gradient :class:`DiagGrad`), :class:`AllocDiag`, :class:`TensorFromScalar`,
:class:`ScalarFromTensor`. Functions building them: :func:`make_vector`, :func:`alloc`,
:func:`zeros`, :func:`ones`, :func:`full`, :func:`zeros_like`, :func:`ones_like`,
:func:`arange`, :func:`eye`, :func:`join`, :func:`concatenate`, :func:`stack`,
:func:`split`, :func:`nonzero`, :func:`diagonal`, :func:`alloc_diag`, :func:`diag`,
:func:`tile`, :func:`choose` (:class:`Choose`). :func:`tri`, :func:`tril` and :func:`triu`
are built, as in PyTensor, from :func:`arange` and comparisons. Elementwise helpers
(:func:`cast`, :func:`fill`/:func:`second`,
:func:`where`/:func:`switch`, :func:`tensor_copy`) and the axis permutations
(:func:`transpose`, :func:`swapaxes`, :func:`matrix_transpose`) build
``opweave.tensor.elemwise`` Ops, imported when they are called.

Integer inputs that only decide a shape (the shape of :class:`Alloc`, the bounds
of :class:`Eye`, the sizes of :class:`Split`) are marked disconnected in
``connection_pattern`` and get :class:`~opweave.graph.type.DisconnectedType`
gradients. The kernels live in the backends.

:func:`get_underlying_scalar_constant_value` and :func:`get_scalar_constant_value` find
the constant value a variable always holds, as PyTensor's functions of those names do.
``tensor`` (the constructor of :mod:`opweave.tensor.type`) is importable from here too.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Sequence
from typing import Any

import numpy as np

import opweave.scalar as ps
from opweave.compile.ops import DeepCopyOp, ViewOp
from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.rewriting.graph import in2out
from opweave.graph.type import DisconnectedType, disconnected_type
from opweave.graph.utils import MethodNotDefined
from opweave.scalar import ScalarType, as_scalar, get_scalar_type, grad_undefined
from opweave.scalar.type import floatX, normalize_dtype, upcast
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_outs, tensor_type_of, tensor_var, tensor_vars
from opweave.tensor.constructors import as_tensor, as_tensor_variable, constant
from opweave.tensor.conversion import _as_tensor_variable as _as_tensor_variable  # PyTensor's
from opweave.tensor.elemwise import DimShuffle, Elemwise
from opweave.tensor.exceptions import EmptyConstantError
from opweave.tensor.scalar_constant import get_underlying_scalar_constant
from opweave.tensor.type import (
    TensorType,
    continuous_dtypes,
    discrete_dtypes,
    float_dtypes,
    int_dtypes,
    uint_dtypes,
)
from opweave.tensor.type import tensor as tensor  # re-exported, as in PyTensor
from opweave.tensor.variable import NotScalarConstantError, TensorVariable
from opweave.transfer import transfer as transfer  # PyTensor's re-export

if typing.TYPE_CHECKING:
    # PyTensor's names of this module whose home builds on it (set here by
    # opweave.tensor._pytensor_paths, which sits above both)
    from opweave.tensor.basic_extra import atleast_1d as atleast_1d
    from opweave.tensor.basic_extra import atleast_2d as atleast_2d
    from opweave.tensor.basic_extra import atleast_3d as atleast_3d
    from opweave.tensor.basic_extra import atleast_Nd as atleast_Nd
    from opweave.tensor.basic_extra import empty as empty
    from opweave.tensor.basic_extra import empty_like as empty_like
    from opweave.tensor.basic_extra import expand_dims as expand_dims
    from opweave.tensor.basic_extra import extract_diag as extract_diag
    from opweave.tensor.basic_extra import horizontal_stack as horizontal_stack
    from opweave.tensor.basic_extra import identity as identity
    from opweave.tensor.basic_extra import identity_like as identity_like
    from opweave.tensor.basic_extra import inverse_permutation as inverse_permutation
    from opweave.tensor.basic_extra import is_flat as is_flat
    from opweave.tensor.basic_extra import mgrid as mgrid
    from opweave.tensor.basic_extra import moveaxis as moveaxis
    from opweave.tensor.basic_extra import ogrid as ogrid
    from opweave.tensor.basic_extra import permute_row_elements as permute_row_elements
    from opweave.tensor.basic_extra import stacklists as stacklists
    from opweave.tensor.basic_extra import take_along_axis as take_along_axis
    from opweave.tensor.basic_extra import trace as trace
    from opweave.tensor.basic_extra import tril_indices as tril_indices
    from opweave.tensor.basic_extra import tril_indices_from as tril_indices_from
    from opweave.tensor.basic_extra import triu_indices as triu_indices
    from opweave.tensor.basic_extra import triu_indices_from as triu_indices_from
    from opweave.tensor.basic_extra import vertical_stack as vertical_stack
    from opweave.tensor.extra_ops import roll as roll

    # Used here, defined in modules that build on this one (indexing, shape inference):
    # set here by opweave.tensor._given_names, which sits above them all
    from opweave.tensor.index_list import get_idx_list
    from opweave.tensor.rewriting.shape import (
        ShapeFeature,
        local_shape_from_infer_shape,
        local_shape_i_from_infer_shape,
        local_subtensor_of_shape,
    )
    from opweave.tensor.subtensor import Subtensor, advanced_subtensor1

__all__ = [
    "ARange",
    "Alloc",
    "AllocDiag",
    "AllocEmpty",
    "Choose",
    "DiagGrad",
    "ExtractDiag",
    "Eye",
    "Join",
    "MakeVector",
    "Nonzero",
    "PermuteRowElements",
    "ScalarFromTensor",
    "Split",
    "TensorFromScalar",
    "alloc",
    "alloc_diag",
    "arange",
    "as_dtype",
    "as_tensor",
    "as_tensor_variable",
    "cast",
    "choose",
    "concatenate",
    "constant",
    "diag",
    "diagonal",
    "eye",
    "fill",
    "flatnonzero",
    "flatten",
    "full",
    "full_like",
    "get_scalar_constant_value",
    "get_underlying_scalar_constant_value",
    "get_vector_length",
    "infer_static_shape",
    "join",
    "join_axis",
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
    "tile",
    "transpose",
    "tri",
    "tril",
    "triu",
    "where",
    "zeros",
    "zeros_like",
    *(
        # PyTensor's names of this module whose home is a module built on this one:
        # opweave.tensor._pytensor_paths sets them here
        "atleast_1d atleast_2d atleast_3d atleast_Nd empty empty_like expand_dims "
        "extract_diag horizontal_stack identity identity_like inverse_permutation is_flat "
        "mgrid moveaxis ogrid permute_row_elements roll stacklists take_along_axis trace "
        "transfer tril_indices tril_indices_from triu_indices triu_indices_from "
        "vertical_stack"
    ).split(),
]

# ====================================================================== helpers


def _above() -> types.SimpleNamespace:
    """The modules of this package built on this one, for the functions here that call
    them: (the functions used from) ``shape``."""
    # late: opweave.tensor.shape builds on this module (same floor, above it)
    from opweave.tensor.shape import Shape, flatten, shape_i, shape_padaxis

    # (``opweave.tensor.shape``, the package's attribute, is the function ``shape``.)
    shape = types.SimpleNamespace(
        Shape=Shape, flatten=flatten, shape_i=shape_i, shape_padaxis=shape_padaxis
    )
    return types.SimpleNamespace(shape=shape)


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


#: Scalar Ops whose result :func:`get_underlying_scalar_constant_value` computes from
#: constant inputs, as PyTensor does: casts, comparisons, ``switch`` and the arithmetic
#: that shapes and indices are made of. Other Ops (``exp``, ...) are not evaluated.
_CONSTANT_VALUE_SCALAR_OPS: tuple[type, ...] = (
    ps.Cast,
    ps.Switch,
    ps.NEQ,
    ps.EQ,
    ps.LT,
    ps.GT,
    ps.LE,
    ps.GE,
    ps.Sub,
    ps.Add,
    ps.Mod,
    ps.Mul,
    ps.IntDiv,
    ps.TrueDiv,
    ps.Minimum,
    ps.Maximum,
)
#: Ops whose output holds the values of their first input (possibly broadcast or copied).
_VALUE_PRESERVING_OPS: tuple[type, ...] = (DeepCopyOp, ViewOp, DimShuffle)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:55] + "(...)"


def _value_of_constant(v: Constant) -> np.ndarray:
    """The one value a constant holds (all its elements equal), as a 0-d array."""
    data = v.data
    if isinstance(data, np.ndarray) and data.size == 0:
        raise EmptyConstantError(f"the constant {v} has no element, hence no scalar value")
    return get_underlying_scalar_constant(v, only_process_constants=True)


def _value_of_python(v: Any) -> np.ndarray:
    """A number, NumPy scalar or one-element array, as a 0-d array."""
    if isinstance(v, bool | int | float | complex | np.generic):
        arr = np.asarray(v)
    elif isinstance(v, np.ndarray):
        if v.size == 0:
            raise EmptyConstantError(f"the array {_short(v)} has no element")
        if v.size != 1:
            raise NotScalarConstantError(f"the array {_short(v)} holds {v.size} elements, not one")
        arr = np.array(v.item(), dtype=v.dtype)
    else:
        raise NotScalarConstantError(f"{type(v).__name__} {_short(v)} is not a scalar constant")
    if arr.dtype.kind not in "biufc":
        raise NotScalarConstantError(f"{_short(v)} is not numeric")
    return arr


def _constant_folding() -> types.ModuleType:
    """The module :mod:`opweave.tensor.rewriting.constant_folding` (it computes constant
    nodes through the backends' plugins)."""
    # late: the rewrites build on this module (same floor, above it)
    from opweave.tensor.rewriting import constant_folding

    return constant_folding


def _computed(v: Variable, values: Sequence[np.ndarray]) -> np.ndarray:
    """The value of ``v`` (an Elemwise or scalar Op of a listed scalar Op) from its inputs'."""
    compute_constant_node = _constant_folding().compute_constant_node
    node = v.owner
    assert node is not None
    assert v.index is not None
    op = node.op
    types: list[TensorType | ScalarType]
    if isinstance(op, Elemwise):
        op = Elemwise(op.scalar_op)  # never in place: the inputs are fresh constants
        types = [TensorType(tensor_type_of(i).dtype, shape=()) for i in node.inputs]
    else:  # a scalar Op: scalar inputs
        types = [typing.cast(ScalarType, i.type) for i in node.inputs]
    consts = [t.make_constant(np.asarray(val, dtype=t.dtype)) for t, val in zip(types, values)]
    results = compute_constant_node(op.make_node(*consts))
    if results is None:
        raise NotScalarConstantError(f"{v} could not be computed from its constant inputs")
    return np.asarray(results[v.index])


def _indexed_value(
    v: Variable, elemwise: bool, max_recur: int
) -> np.ndarray | tuple[Variable, Any] | None:
    """For ``v = base[i]`` (a 0-d ``Subtensor``): its value, or ``(entry, dtype)`` to look
    at next (``base`` a ``MakeVector`` or a ``Join`` of vectors), or ``None``."""
    node = v.owner
    if node is None or not isinstance(node.op, Subtensor) or tensor_type_of(v).ndim != 0:
        return None
    base = tensor_var(node.inputs[0])
    try:
        idx = [int(_underlying_value(i, elemwise, False, max_recur)) for i in node.inputs[1:]]
    except (NotScalarConstantError, TypeError, ValueError):
        return None
    key = get_idx_list([base, *idx], node.op.idx_list)
    dtype = tensor_type_of(v).dtype
    if isinstance(base, Constant):
        return np.asarray(np.asarray(base.data)[key], dtype=dtype)
    if len(key) != 1 or not isinstance(key[0], int) or base.type.ndim != 1:
        return None
    (i,) = key
    owner = base.owner
    if owner is not None and isinstance(owner.op, MakeVector):
        n = len(owner.inputs)
        return (owner.inputs[i % n], dtype) if -n <= i < n else None
    if owner is not None and isinstance(owner.op, Join) and join_axis(owner) == 0:
        lengths = [tensor_type_of(t).shape[0] for t in owner.inputs[1:]]
        known = [n for n in lengths if n is not None]
        if len(known) < len(lengths) or not -sum(known) <= i < sum(known):
            return None
        i %= sum(known)
        for part, length in zip(tensor_vars(owner.inputs[1:]), known):
            if i < length:
                return (part[i], dtype)
            i -= length
    entries = _static_vector(base)
    if entries is not None and -len(entries) <= i < len(entries) and entries[i] is not None:
        return np.asarray(entries[i], dtype=dtype)
    return None


def _underlying_value(
    v: Any, elemwise: bool, only_process_constants: bool, max_recur: int
) -> np.ndarray:
    """See :func:`get_underlying_scalar_constant_value`."""
    while True:
        if v is None:
            raise NotScalarConstantError("None is not a scalar constant")
        if isinstance(v, Constant):
            return _value_of_constant(v)
        if not isinstance(v, Variable):
            return _value_of_python(v)
        node = v.owner
        if only_process_constants or node is None or max_recur <= 0:
            break
        max_recur -= 1
        op = node.op
        if isinstance(op, (*_VALUE_PRESERVING_OPS, Alloc, TensorFromScalar, ScalarFromTensor)):
            v = node.inputs[0]
            continue
        scalar_op = op.scalar_op if isinstance(op, Elemwise) else op
        if isinstance(scalar_op, ps.Second):
            v = node.inputs[1]  # the second input, broadcast to the first's shape
            continue
        if isinstance(scalar_op, _CONSTANT_VALUE_SCALAR_OPS) and (
            elemwise or not isinstance(op, Elemwise)
        ):
            values = [_underlying_value(i, elemwise, False, max_recur) for i in node.inputs]
            return _computed(v, values)
        found = _indexed_value(v, elemwise, max_recur)
        if isinstance(found, tuple):
            entry, dtype = found
            return np.asarray(_underlying_value(entry, elemwise, False, max_recur), dtype=dtype)
        if found is not None:
            return found
        try:  # Shape_i of a dimension of static length (opweave.tensor.variable's rule)
            return get_underlying_scalar_constant(v, max_recur=0)
        except NotScalarConstantError:
            break
    raise NotScalarConstantError(f"{v} is not a constant scalar")


def get_underlying_scalar_constant_value(
    v: Any,
    *,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
    raise_not_constant: bool = True,
) -> Any:
    """Return the one constant value that ``v`` holds, as a 0-d array (PyTensor's function).

    Constants whose elements are all equal hold that value; the search then looks through
    the Ops that keep their input's values (``DimShuffle``, ``Alloc``, ``second``/``fill``,
    copies and views, ``TensorFromScalar``/``ScalarFromTensor``), the lengths of static
    shapes (``Shape_i``, ``x.shape[i]``), entries of ``MakeVector``/``stack`` and of joined
    vectors, indexing of constants, and computes casts, comparisons, ``switch`` and
    ``+ - * / // % minimum maximum`` of constant inputs (Elemwise or scalar Ops). Other Ops
    (``exp``, ...) are not evaluated.

    Parameters
    ----------
    v
        A variable, a Python number, a NumPy scalar or a one-element array.
    elemwise
        Compute Elemwise Ops of constants (``second`` is always looked through).
    only_process_constants
        Look at ``v`` itself only, never through the Op computing it.
    max_recur
        How many Ops to look through.
    raise_not_constant
        When false, return ``v`` itself instead of raising.

    Returns
    -------
    numpy.ndarray
        A 0-d array of ``v``'s dtype (or ``v`` when it has no constant value and
        ``raise_not_constant`` is false).

    Raises
    ------
    NotScalarConstantError
        If no constant value can be determined (:class:`EmptyConstantError` for a constant
        without any element).
    """
    try:
        return _underlying_value(v, elemwise, only_process_constants, max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
    return v


def get_scalar_constant_value(
    v: Any,
    elemwise: bool = True,
    only_process_constants: bool = False,
    max_recur: int = 10,
    raise_not_constant: bool = True,
) -> Any:
    """:func:`get_underlying_scalar_constant_value` of a scalar (0-d) ``v`` only.

    Raises
    ------
    NotScalarConstantError
        Also when ``v`` is a variable or array with one or more dimensions.
    """
    ndim = getattr(v.type, "ndim", 0) if isinstance(v, Variable) else np.ndim(v)
    if isinstance(v, Variable | np.ndarray) and ndim != 0:
        if raise_not_constant:
            raise NotScalarConstantError(f"{_short(v)} is not a scalar: it has {ndim} dimension(s)")
        return v
    return get_underlying_scalar_constant_value(
        v,
        elemwise=elemwise,
        only_process_constants=only_process_constants,
        max_recur=max_recur,
        raise_not_constant=raise_not_constant,
    )


def _checked_shape_entry(s: Any) -> TensorVariable:
    """``s`` as a 0-d integer tensor, for :func:`infer_static_shape`."""
    entry = as_tensor_variable(s, ndim=0)
    if entry.dtype in int_dtypes + uint_dtypes:
        return entry
    raise TypeError(f"Shapes must be scalar integers; got {entry} of type {entry.type!r}")


def _folded_entry(entry: TensorVariable) -> int | None:
    """The value of the shape entry ``entry`` when it is known without running anything."""
    try:
        return int(get_underlying_scalar_constant_value(entry))
    except NotScalarConstantError:
        pass
    fgraph = FunctionGraph(outputs=[entry], features=[ShapeFeature()], clone=True)
    in2out(
        local_shape_from_infer_shape,
        local_shape_i_from_infer_shape,
        local_subtensor_of_shape,
    ).rewrite(fgraph)
    _constant_folding().topo_constant_folding.rewrite(fgraph)
    (folded,) = fgraph.outputs
    try:
        return int(get_underlying_scalar_constant_value(folded))
    except NotScalarConstantError:
        return None


def infer_static_shape(
    shape: Variable | Sequence[Variable | int],
) -> tuple[list[TensorVariable], tuple[int | None, ...]]:
    """Validate a shape and find the entries whose values are known statically.

    Each entry is converted to a 0-d integer tensor; entries that are constants, or
    that shape inference and constant folding reduce to constants, give their value.

    Parameters
    ----------
    shape
        A sequence of integers and 0-d integer tensors, or an integer vector of known
        length.

    Returns
    -------
    tuple
        The entries as 0-d integer tensors, and a tuple of ``int`` (known) or ``None``
        usable as a ``TensorType`` shape.

    Raises
    ------
    TypeError
        For an entry that is not an integer (``"Shapes must be scalar integers"``).
    ValueError
        For an entry that cannot be made 0-d.
    """
    # A vector variable iterates over its (statically known) entries.
    items = tensor_var(shape) if isinstance(shape, Variable) else shape
    entries = [_checked_shape_entry(s) for s in items]
    return entries, tuple(_folded_entry(e) for e in entries)


def _const_int(v: Any) -> int | None:
    """The constant integer value of ``v``, or ``None`` if it is not known statically
    (:func:`get_underlying_scalar_constant_value`: through static shape lengths and the
    arithmetic of constants, as PyTensor's static shapes see them)."""
    try:
        value = get_underlying_scalar_constant_value(v)
    except NotScalarConstantError:
        return None
    if value.dtype.kind not in "iub":
        return None
    return int(value)


def _as_tensor_or_scalar(x: Any) -> TensorVariable:
    """``as_tensor_variable``, also accepting ``opweave.scalar`` variables (0-d tensors)."""
    if isinstance(x, Variable) and isinstance(x.type, ScalarType):
        return tensor_out(tensor_from_scalar(x))
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
    if owner is not None and isinstance(owner.op, _above().shape.Shape):
        static = getattr(owner.inputs[0].type, "shape", None)
        if static is not None:
            return list(static)
    if owner is not None and type(owner.op).__name__ == "Subtensor":
        # (the class of opweave.tensor.subtensor, which builds on this module)
        sliced = _static_slice(owner)
        if sliced is not None:
            return sliced
    length = tensor_type_of(v).shape[0]
    return None if length is None else [None] * length


def _static_slice(node: Apply) -> list[int | None] | None:
    """The known entries of ``vector[start:stop:step]`` (a ``Subtensor`` node) with
    constant bounds, from those of the vector (``x.shape[:2]``: two static lengths)."""
    entries = _static_vector(node.inputs[0])
    idx_list: tuple[Any, ...] = getattr(node.op, "idx_list", ())
    if entries is None or len(idx_list) != 1 or not isinstance(idx_list[0], slice):
        return None
    placeheld = iter(node.inputs[1:])  # the bounds that are not None, in order
    bounds: list[int | None] = []
    for bound in (idx_list[0].start, idx_list[0].stop, idx_list[0].step):
        if bound is None:
            bounds.append(None)
            continue
        value = int(bound) if isinstance(bound, int | np.integer) else _const_int(next(placeheld))
        if value is None:
            return None
        bounds.append(value)
    return entries[slice(*bounds)]


def _grad_undefined(op: Op, x_pos: int, x: Variable, comment: str = "") -> Variable:
    undefined: Variable = grad_undefined(op, x_pos, x, comment)
    return undefined


def _is_disconnected(g: Any) -> bool:
    return isinstance(getattr(g, "type", None), DisconnectedType)


def _sum_to(g: Variable, target: TensorType) -> TensorVariable:
    """Sum ``g`` over the dimensions that broadcasting added or stretched to reach ``target``.

    Leading dimensions beyond ``target.ndim`` are summed away; dimensions where
    ``target`` has static length 1 and ``g`` does not are summed with ``keepdims``.
    """
    g = tensor_var(g)
    extra = g.ndim - target.ndim
    if extra > 0:
        g = tm.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, (t, s) in enumerate(zip(target.shape, g.type.shape)) if t == 1 and s != 1)
    if axes:
        g = tm.sum(g, axis=axes, keepdims=True)
    if g.dtype != target.dtype and target.dtype in continuous_dtypes:
        g = cast(g, target.dtype)
    return g


def _float_zeros_like(x: Variable) -> TensorVariable:
    """The zero gradient of ``x``: its dtype when continuous, ``floatX`` otherwise."""
    x_dtype = tensor_type_of(x).dtype
    dtype = x_dtype if x_dtype in continuous_dtypes else floatX()
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
    xt = as_tensor_variable(x)
    if xt.dtype == dtype:
        return xt
    if xt.dtype.startswith("complex") and not dtype.startswith("complex"):
        raise TypeError(
            f"casting {xt} from {xt.dtype} to {dtype} is ambiguous: take the real part or the "
            "absolute value explicitly"
        )
    return tensor_out(Elemwise(getattr(ps, f"convert_to_{dtype}"))(xt))


#: ``second(a, b)``: ``b`` broadcast to the shape of ``a`` and ``b`` (the Elemwise of
#: ``scalar.second``); ``fill(model, value)`` is the same Op.
second = Elemwise(ps.second, name="second")
second.__doc__ = "``b`` broadcast to the shape of ``a`` and ``b``, elementwise."
fill = second

#: ``switch(cond, ift, iff)``: the Elemwise of ``scalar.switch``.
switch = tm.switch


@typing.overload
def where(cond: Any, ift: None = None, iff: None = None) -> tuple[TensorVariable, ...]: ...


@typing.overload
def where(cond: Any, ift: Any, iff: Any) -> TensorVariable: ...


def where(
    cond: Any, ift: Any = None, iff: Any = None
) -> TensorVariable | tuple[TensorVariable, ...]:
    """Elementwise ``ift if cond else iff``, with broadcasting (a :data:`switch` node);
    with ``cond`` alone, the indices of its non-zero elements (``numpy.where(cond)``).

    Returns
    -------
    TensorVariable or tuple of TensorVariable
        The selection, or one index vector per dimension of ``cond``.

    Raises
    ------
    ValueError
        When only one of ``ift`` and ``iff`` is given.
    """
    if ift is None and iff is None:
        indices: tuple[TensorVariable, ...] = nonzero(cond)
        return indices
    if ift is None or iff is None:
        raise ValueError("where: give either both ift and iff or neither")
    return tensor_out(switch(cond, ift, iff))


def tensor_copy(x: Any) -> TensorVariable:
    """A copy of ``x`` (``Elemwise(scalar.identity)``)."""
    return tensor_out(Elemwise(ps.identity)(x))


# ====================================================================== axis permutations


def _dimshuffle(x: TensorVariable, order: Sequence[Any]) -> TensorVariable:
    op = DimShuffle(input_ndim=x.ndim, new_order=tuple(order))
    return tensor_out(op(x))


def transpose(x: Any, axes: Sequence[int] | None = None) -> TensorVariable:
    """Permute the axes of ``x`` (reverse them when ``axes`` is ``None``)."""
    xt = as_tensor_variable(x)
    if axes is None:
        axes = tuple(range(xt.ndim - 1, -1, -1))
    axes = tuple(int(a) + xt.ndim if int(a) < 0 else int(a) for a in axes)
    if sorted(axes) != list(range(xt.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the {xt.ndim} axes")
    if axes == tuple(range(xt.ndim)):
        return xt
    return _dimshuffle(xt, axes)


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
    return typing.cast(TensorVariable, _above().shape.flatten(x, ndim))


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
        converted: list[TensorVariable] = []
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
        gz_t = tensor_var(gz)
        return [cast(gz_t[i], tensor_type_of(x).dtype) for i, x in enumerate(inputs)]

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
        numbers are taken as they are), or for inputs that are all Python numbers the
        promotion of the dtypes their constants get (``config.cast_policy``: under
        ``custom``, ``make_vector(1.5, 2)`` is ``float32``, as ``stack([1.5, 2])`` is).
    """
    if dtype is None:
        variables = [as_tensor_variable(i).dtype for i in inputs if isinstance(i, Variable)]
        if variables:
            dtype = upcast(*variables)
        elif inputs:
            dtype = upcast(*[as_tensor_variable(i).dtype for i in inputs])
        else:
            dtype = "int64"
    return tensor_out(MakeVector(dtype)(*inputs))


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
                    f"length {known} in dimension {i} (Alloc static input type and target "
                    "shape are incompatible)"
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
        if tensor_type_of(value).dtype not in continuous_dtypes:
            return [_float_zeros_like(value), *rest]
        return [_sum_to(gz, tensor_type_of(value)), *rest]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """``alloc`` of the value's evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


#: ``alloc(value, *shape)``: a tensor of shape ``shape`` (ints or 0-d integer tensors)
#: filled with ``value`` (broadcast); the :class:`Alloc` instance.
alloc = Alloc()


class AllocEmpty(Op):
    """A new tensor of dtype ``dtype`` and the given shape, its memory left uninitialized.

    Inputs: one 0-d integer per output dimension. The values are arbitrary; the Op serves
    as a buffer that later Ops fill (PyTensor's name and contract).

    Parameters
    ----------
    dtype
        The output's dtype.
    """

    __props__ = ("dtype",)

    def __init__(self, dtype: str) -> None:
        if not isinstance(dtype, str):
            raise TypeError(f"AllocEmpty: dtype must be a str, got {type(dtype).__name__}")
        self.dtype = normalize_dtype(dtype.lower())

    def make_node(self, *shape: Any) -> Apply:
        """One 0-d integer per dimension (a single shape sequence is accepted too).

        Raises
        ------
        TypeError
            For a shape entry that is not a 0-d integer.
        ValueError
            For a negative constant entry.
        """
        if len(shape) == 1 and isinstance(shape[0], list | tuple):
            shape = tuple(shape[0])
        dims = [_as_int_scalar(s, f"AllocEmpty: shape entry {i}") for i, s in enumerate(shape)]
        static = []
        for i, d in enumerate(dims):
            known = _const_int(d)
            if known is not None and known < 0:
                raise ValueError(f"AllocEmpty: shape entry {i} is negative ({known})")
            static.append(known)
        return Apply(self, dims, [TensorType(self.dtype, shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The shape inputs."""
        return [tuple(node.inputs)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The output's values depend on no input."""
        return [[False] for _ in node.inputs]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The shape inputs are disconnected."""
        return [disconnected_type() for _ in inputs]

    def do_constant_folding(self, fgraph: Any, node: Apply) -> bool:
        """Never: a folded buffer would be shared by every call."""
        return False


def _shape_entries(shape: Any) -> list[Any]:
    """A shape given as an int, a sequence or an integer vector, as a list of entries."""
    if isinstance(shape, Variable):
        var = as_tensor_variable(shape)
        if var.ndim == 0:
            return [var]
        entries = _static_vector(var)
        if entries is None:
            raise ValueError(f"the length of the shape {var} is not known statically")
        if isinstance(var, Constant):
            return list(entries)
        # Symbolic entries even where the length is known statically, also of a
        # ``MakeVector`` (as PyTensor's ``alloc(value, *shape)``): the result stays a
        # function of the vector itself (an inner graph whose input is the vector does
        # not reach what computes its entries), and Alloc still reads the static
        # lengths through them.
        return [var[i] for i in range(len(entries))]
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
    return tensor_out(alloc(value, *_shape_entries(shape)))


def zeros(shape: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor of zeros (dtype default ``config.floatX``)."""
    return full(shape, constant(0, dtype=floatX() if dtype is None else as_dtype(dtype)))


def ones(shape: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor of ones (dtype default ``config.floatX``)."""
    return full(shape, constant(1, dtype=floatX() if dtype is None else as_dtype(dtype)))


def _dims_of(x: TensorVariable) -> list[Any]:
    shape_i = _above().shape.shape_i
    return [shape_i(x, i) for i in range(x.ndim)]


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> TensorVariable:
    """A new tensor shaped like ``x`` filled with ``fill_value`` (dtype default ``x``'s)."""
    x = as_tensor_variable(x)
    dtype = x.dtype if dtype is None else as_dtype(dtype)
    if isinstance(fill_value, Variable):
        value = cast(fill_value, dtype)
    else:
        value = constant(fill_value, dtype=dtype)
    dims = _dims_of(x)
    if all(isinstance(d, Constant) for d in dims):
        # Every length is known statically: ``fill`` keeps ``x`` in the graph, as in
        # PyTensor, so a function of ``x`` computing it does not find ``x`` unused (the
        # rewrites make it a constant-shaped ``Alloc``).
        return tensor_out(second(x, value))
    return tensor_out(alloc(value, *dims))


def _like(x: Any, fill_value: int, dtype: Any, opt: bool) -> TensorVariable:
    x = as_tensor_variable(x)
    if opt:
        value = constant(fill_value, dtype=x.dtype if dtype is None else as_dtype(dtype))
        if value.type == x.type:
            return value
    return full_like(x, fill_value, dtype)


def zeros_like(x: Any, dtype: Any = None, opt: bool = False) -> TensorVariable:
    """A new tensor of zeros shaped like ``x`` (dtype default ``x``'s).

    Its elements do not depend on ``x``'s: the gradient with respect to ``x`` is
    disconnected. With ``opt``, a scalar ``x`` gives the constant itself when it has
    ``x``'s Type (PyTensor's contract).
    """
    return _like(x, 0, dtype, opt)


def ones_like(x: Any, dtype: Any = None, opt: bool = False) -> TensorVariable:
    """A new tensor of ones shaped like ``x`` (dtype default ``x``'s); ``opt`` as for
    :func:`zeros_like`."""
    return _like(x, 1, dtype, opt)


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
        length = tensor_type_of(node.outputs[0]).shape[0]
        if length is not None:
            return [(length,)]
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
        start, _, step = tensor_vars(inputs)
        (gz,) = output_grads
        if self.dtype in discrete_dtypes:
            return [_float_zeros_like(start), disconnected_type(), _float_zeros_like(step)]
        n = _above().shape.shape_i(outputs[0], 0)
        steps = arange(n, dtype=self.dtype)
        g_start = cast(tm.sum(gz), start.dtype) if start.dtype in float_dtypes else None
        g_step = cast(tm.sum(tm.mul(gz, steps)), step.dtype) if step.dtype in float_dtypes else None
        return [
            g_start if g_start is not None else _float_zeros_like(start),
            disconnected_type(),
            g_step if g_step is not None else _float_zeros_like(step),
        ]


def _arange_dtype(start: TensorVariable, stop: TensorVariable, step: TensorVariable) -> str:
    """The dtype :func:`arange` gives when none is asked for (PyTensor's rule).

    The promoted dtype of the three arguments (:func:`~opweave.scalar.type.upcast`), with
    every signed integer result widened to ``int64`` and every unsigned one to ``uint64``:
    a range is not worth the overflow risk of a narrow dtype, even though Python ints are
    ``int8`` constants under ``cast_policy="custom"``. Under ``"numpy+floatX"`` the result
    is NumPy's ``arange`` dtype for arguments of those dtypes instead, except that with
    ``floatX`` ``float32`` a ``float64`` result becomes ``float32`` unless an argument is
    explicitly ``float64``.
    """
    dtypes = [start.dtype, stop.dtype, step.dtype]
    dtype = upcast(*dtypes)
    if dtype in int_dtypes:
        dtype = "int64"
    elif dtype in uint_dtypes:
        dtype = "uint64"
    if config.cast_policy == "numpy+floatX" and all(np.dtype(d).kind in "iuf" for d in dtypes):
        numpy_dtype = np.arange(
            np.dtype(dtypes[0]).type(0),
            np.dtype(dtypes[1]).type(1),
            np.dtype(dtypes[2]).type(1),
        ).dtype.name
        if numpy_dtype != dtype:
            if floatX() == "float32" and numpy_dtype == "float64" and "float64" not in dtypes:
                dtype = "float32"
            else:
                dtype = numpy_dtype
    return dtype


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> TensorVariable:
    """``numpy.arange`` as a symbolic vector.

    Parameters
    ----------
    start, stop, step
        Real scalars; ``arange(n)`` is ``arange(0, n)``. Python numbers become constants
        (:func:`~opweave.tensor.constructors.constant`).
    dtype
        Output dtype. By default, as in PyTensor: the promotion of the arguments' dtypes,
        any integer result widened to ``int64`` (``uint64`` for unsigned ones); so
        ``arange(10)`` and ``arange(iscalar())`` are ``int64``, ``arange(fscalar())`` and,
        under ``cast_policy="custom"``, ``arange(0.5, 2.5)`` (exact ``float32`` constants)
        are ``float32``. Under ``cast_policy="numpy+floatX"`` NumPy's ``arange`` dtype for
        such arguments, kept at ``float32`` when ``floatX`` is ``float32`` and no argument
        is ``float64``.

    Raises
    ------
    TypeError
        If an argument is not a real scalar (raised by :class:`ARange`).
    """
    if stop is None:
        start, stop = 0, start
    ins = [as_tensor_variable(v) for v in (start, stop, step)]
    out_dtype = _arange_dtype(*ins) if dtype is None else normalize_dtype(dtype)
    return tensor_out(ARange(out_dtype)(*ins))


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
    return tensor_out(Eye(dtype)(n, m, k))


# ====================================================================== Join and Split


def _merge_static(a: int | None, b: int | None, who: str, dim: int) -> int | None:
    if a is None:
        return b
    if b is not None and a != b:
        raise ValueError(f"{who}: static lengths {a} and {b} of dimension {dim} do not match")
    return a


class Join(Op):
    """Concatenate tensors along an axis (``numpy.concatenate``).

    PyTensor's contract: the Op has no parameters and its first input is the axis, a 0-d
    integer tensor, followed by the tensors to join (all of one rank, at least 1):
    ``Join()(axis, *tensors)``. The output dtype is the promotion of the tensors' dtypes.
    A negative constant axis is replaced by its non-negative equivalent when the node is
    built; a symbolic axis is read when the graph runs (the output's static shape is then
    unknown). :func:`join_axis` gives a node's static axis.
    """

    __props__ = ()

    def make_node(self, axis: Any, *tensors: Any) -> Apply:
        """Check the axis, the ranks and the static lengths; compute the static shape.

        Raises
        ------
        TypeError
            For an axis that is not a 0-d integer, 0-d tensors or tensors of different
            ranks.
        ValueError
            Without tensors, or for static lengths that differ off the axis.
        numpy.exceptions.AxisError
            For a constant axis out of range (a ``ValueError``).
        """
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
        if isinstance(axis, Constant):
            value = int(np.asarray(axis.data))
            if not -ndim <= value < ndim:
                raise np.exceptions.AxisError(
                    f"Join: axis {value} is out of range for {ndim}-d tensors"
                )
            if value < 0:
                axis = constant(value % ndim, dtype=tensor_type_of(axis).dtype)
        out = TensorType(upcast(*[t.dtype for t in ts]), shape=_join_shape(_const_int(axis), ts))()
        return Apply(self, [axis, *ts], [out])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sum of the lengths along the axis, the first tensor's length elsewhere."""
        tensor_shapes = shapes[1:]
        out = list(tensor_shapes[0])
        static_axis = join_axis(node)
        if static_axis is not None:
            out[static_axis] = _add_dims([s[static_axis] for s in tensor_shapes])
            return [tuple(out)]
        axis = tensor_var(node.inputs[0])
        ndim = len(out)
        axis = where(tm.lt(axis, 0), tm.add(axis, ndim), axis)
        for d in range(ndim):
            total = _add_dims([s[d] for s in tensor_shapes])
            out[d] = where(tm.eq(axis, d), total, out[d])
        return [tuple(out)]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Undefined for the axis; the output gradient split back into the tensors' pieces
        (zeros for discrete tensors)."""
        axis, *parts = inputs
        g_axis = _grad_undefined(self, 0, axis, "axis is an integer")
        gz = tensor_var(output_grads[0])
        tensors = tensor_vars(parts)
        if gz.dtype not in continuous_dtypes:
            return [g_axis, *[_float_zeros_like(t) for t in tensors]]
        pieces: list[TensorVariable]
        if len(tensors) == 1:
            pieces = [gz]
        else:
            static_axis = _const_int(axis)
            ax: Any = axis if static_axis is None else static_axis
            sizes = make_vector(*[t.shape[ax] for t in tensors])
            pieces = split(gz, sizes, len(tensors), ax)
        grads: list[Any] = [g_axis]
        for t, piece in zip(tensors, pieces):
            if t.dtype in continuous_dtypes:
                grads.append(cast(piece, t.dtype))
            else:
                grads.append(_float_zeros_like(t))
        return grads

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The join, along the same axis, of the tensors' evaluation points."""
        if any(e is None for e in eval_points[1:]):
            return [None]
        return [self(inputs[0], *eval_points[1:])]


#: The :class:`Join` that :func:`join` applies (it has no parameters).
_join = Join()


def _join_shape(axis: int | None, ts: Sequence[TensorVariable]) -> list[int | None]:
    """The static shape of the join of ``ts`` along ``axis`` (``None``: not known)."""
    ndim = ts[0].ndim
    if axis is None:
        if len(ts) == 1:
            return list(ts[0].type.shape)
        return [None] * ndim
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"Join: axis {axis} is out of range for {ndim}-d tensors")
    axis %= ndim
    static: list[int | None] = [None] * ndim
    for d in range(ndim):
        if d == axis:
            lengths = [t.type.shape[d] for t in ts]
            known = [n for n in lengths if n is not None]
            static[d] = sum(known) if len(known) == len(lengths) else None
        else:
            for t in ts:
                static[d] = _merge_static(static[d], t.type.shape[d], "Join", d)
    return static


def join_axis(node: Apply) -> int | None:
    """The axis of a :class:`Join` node as a non-negative int, or ``None`` when it is
    symbolic (known only when the graph runs).

    Parameters
    ----------
    node
        An ``Apply`` of :class:`Join` (or of a subclass).

    Returns
    -------
    int or None
        The axis, in ``range(ndim)``.

    Raises
    ------
    TypeError
        If ``node`` is not a node of :class:`Join`.
    """
    if not isinstance(getattr(node, "op", None), Join):
        raise TypeError(f"join_axis: expected a node of Join, got {node!r}")
    axis = _const_int(node.inputs[0])
    if axis is None:
        return None
    return axis % tensor_type_of(node.outputs[0]).ndim


@_vectorize_node.register(Join)
def vectorize_join(op: Join, node: Apply, axis: Variable, *tensors: Variable) -> Any:
    """A join of tensors that all gained the same batch dimensions (in front), with the
    same broadcastable pattern, is the same join along the axis shifted past them; other
    cases (a batch dimension of length 1 against a longer one included) go to the rule of
    ``Op`` (a ``Blockwise``, which broadcasts the batch dimensions)."""
    static_axis = join_axis(node)
    batch = {
        tensor_type_of(new).ndim - tensor_type_of(old).ndim
        for old, new in zip(node.inputs[1:], tensors)
    }
    if axis is node.inputs[0] and static_axis is not None and len(batch) == 1:
        (n_batch,) = batch
        patterns = {tuple(n == 1 for n in tensor_type_of(t).shape[:n_batch]) for t in tensors}
        if len(patterns) == 1:
            return op.make_node(static_axis + n_batch, *tensors)
    return _vectorize_node.dispatch(Op)(op, node, axis, *tensors)


def _add_dims(dims: Sequence[Any]) -> Any:
    known = [d for d in dims if isinstance(d, int | np.integer)]
    symbolic = [d for d in dims if not isinstance(d, int | np.integer)]
    total: Any = int(sum(known))
    for d in symbolic:
        total = tm.add(total, d) if not (isinstance(total, int) and total == 0) else d
    return total


def join(axis: Any, *tensors: Any) -> TensorVariable:
    """Concatenate ``tensors`` along ``axis`` (a single tensor is returned as is).

    Builds ``Join()(axis, *tensors)``.

    Parameters
    ----------
    axis
        An int (negative counts from the end) or a 0-d integer tensor; a constant one is
        checked when the graph is built, a symbolic one when it runs.
    *tensors
        Tensors of one rank; their lengths may differ along ``axis`` only. A single list or
        tuple of tensors is accepted too.

    Raises
    ------
    TypeError
        For an axis that is not a 0-d integer.
    numpy.exceptions.AxisError
        For a constant axis out of range (a ``ValueError``).
    """
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if len(tensors) == 1:
        return as_tensor_variable(tensors[0])
    return tensor_out(_join(axis, *tensors))


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
    shape_padaxis = _above().shape.shape_padaxis
    return tensor_out(_join(axis, *[shape_padaxis(t, axis) for t in ts]))


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
        # Per instance: the number of outputs is a parameter (as in PyTensor's Split).
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
            known = [e for e in entries if e is not None]
            if length is not None and len(known) == len(entries) and sum(known) != length:
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
        x, axis, splits = tensor_vars(node.inputs)
        ax = _const_int(axis)
        xshape = shapes[0]
        entries = _static_vector(splits) or [None] * self.len_splits
        out = []
        for i, e in enumerate(entries):
            size = e if e is not None else splits[i]
            if ax is not None:
                out.append(tuple(size if d == ax % x.ndim else s for d, s in enumerate(xshape)))
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
        x, axis, _ = tensor_vars(inputs)
        if all(_is_disconnected(g) for g in output_grads):
            return [disconnected_type(), disconnected_type(), disconnected_type()]
        g_axis = _grad_undefined(self, 1, axis, "axis is an integer")
        if x.dtype not in continuous_dtypes:
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


def split(
    x: Any, splits_size: Any, n_splits: int | None = None, axis: Any = 0
) -> list[TensorVariable]:
    """Split ``x`` along ``axis`` into ``n_splits`` pieces of lengths ``splits_size``.

    Parameters
    ----------
    x
        The tensor.
    splits_size
        A sequence of ints or an integer vector, summing to ``x``'s length along ``axis``.
    n_splits
        The number of pieces; default (PyTensor's): the length of ``splits_size``.
    axis
        An int or 0-d integer tensor.
    """
    if n_splits is None:
        if isinstance(splits_size, Variable):
            n_splits = get_vector_length(splits_size)
        else:
            n_splits = len(splits_size)
    return tensor_outs(Split(n_splits).make_node(x, axis, splits_size).outputs)


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
    matrix = tensor_out(Nonzero()(a))
    if return_matrix:
        return matrix
    return tuple(matrix[i] for i in range(as_tensor_variable(a).ndim))


def flatnonzero(a: Any) -> TensorVariable:
    """The indices of the non-zero elements of ``a`` flattened.

    Raises
    ------
    ValueError
        For a 0-d ``a`` (PyTensor's contract; NumPy treats it as one element).
    """
    a = as_tensor_variable(a)
    if a.ndim == 0:
        raise ValueError(f"flatnonzero: the input {a} must have at least one dimension")
    return tensor_var(nonzero(flatten(a, 1))[0])


def nonzero_values(a: Any) -> TensorVariable:
    """The non-zero elements of ``a``, flattened, in C order."""
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
        if tensor_type_of(x).dtype not in continuous_dtypes:
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
    return tensor_out(ExtractDiag(offset, a1, a2)(a))


# ====================================================================== triangles and diagonals


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = None) -> TensorVariable:
    """An ``N`` by ``M`` matrix with ones at and below diagonal ``k``, zeros above
    (``numpy.tri``).

    Built, as in PyTensor, from :func:`arange` and a comparison: ``T[i, j]`` is 1 where
    ``i + k >= j``.

    Parameters
    ----------
    N
        Number of rows (an int or a 0-d integer tensor).
    M
        Number of columns (default ``N``).
    k
        The diagonal at and below which the matrix holds ones: 0 is the main diagonal,
        negative below it, positive above it.
    dtype
        Output dtype (default ``config.floatX``).

    Returns
    -------
    TensorVariable
        A matrix of ``dtype``.

    Raises
    ------
    TypeError
        If ``N``, ``M`` or ``k`` is not an integer scalar.
    """
    n = _as_int_scalar(N, "tri: N")
    m = n if M is None else _as_int_scalar(M, "tri: M")
    kk = _as_int_scalar(k, "tri: k")
    rows = _dimshuffle(arange(n), (0, "x"))
    cols = _dimshuffle(arange(m), ("x", 0))
    mask = tm.ge(tm.add(rows, kk), cols)
    return cast(mask, floatX() if dtype is None else as_dtype(dtype))


def _triangle_mask(x: TensorVariable, k: Any, who: str) -> TensorVariable:
    """The boolean :func:`tri` mask (diagonal ``k``) of the last two axes of ``x``."""
    if x.ndim == 0:
        raise ValueError(f"{who}: m must have at least 1 dimension, got the 0-d {x}")
    static = x.type.shape[-2:]
    dims = [s if s is not None else d for s, d in zip(static, _dims_of(x)[-2:], strict=True)]
    n_cols = dims[1] if len(dims) > 1 else None
    return tri(dims[0], n_cols, k=_as_int_scalar(k, f"{who}: k"), dtype="bool")


def tril(m: Any, k: Any = 0) -> TensorVariable:
    """The lower triangle of ``m``: a copy with the elements above diagonal ``k`` zeroed
    (``numpy.tril``).

    For more than two dimensions the last two axes hold the matrices; a vector is
    broadcast to a square matrix first, as NumPy does. The elements are selected (not
    multiplied by a mask), so non-finite values above the diagonal give zeros too.

    Parameters
    ----------
    m
        A tensor with at least one dimension, shape ``(..., M, N)``.
    k
        Diagonal above which to zero elements (an int or a 0-d integer tensor): 0 is the
        main diagonal, negative below it, positive above it.

    Returns
    -------
    TensorVariable
        The lower triangle, with ``m``'s dtype.

    Raises
    ------
    ValueError
        If ``m`` is 0-d.
    TypeError
        If ``k`` is not an integer scalar.
    """
    x = as_tensor_variable(m)
    mask = _triangle_mask(x, k, "tril")
    return where(mask, x, np.zeros((), dtype=x.dtype))


def triu(m: Any, k: Any = 0) -> TensorVariable:
    """The upper triangle of ``m``: a copy with the elements below diagonal ``k`` zeroed
    (``numpy.triu``).

    See :func:`tril` for the handling of batches and vectors.

    Parameters
    ----------
    m
        A tensor with at least one dimension, shape ``(..., M, N)``.
    k
        Diagonal below which to zero elements (an int or a 0-d integer tensor).

    Returns
    -------
    TensorVariable
        The upper triangle, with ``m``'s dtype.

    Raises
    ------
    ValueError
        If ``m`` is 0-d.
    TypeError
        If ``k`` is not an integer scalar.
    """
    x = as_tensor_variable(m)
    below = tm.sub(_as_int_scalar(k, "triu: k"), 1)
    mask = _triangle_mask(x, below, "triu")
    return where(mask, np.zeros((), dtype=x.dtype), x)


def _diag_side(length: Any, offset: int) -> Any:
    if isinstance(length, int | np.integer):
        return int(length) + abs(offset)
    return tm.add(length, abs(offset))


def _insert_axes(batch: Sequence[Any], side: Any, axis1: int, axis2: int) -> list[Any]:
    """``batch`` with ``side`` inserted at the (increasing) positions ``axis1``, ``axis2``."""
    dims = list(batch)
    dims.insert(axis1, side)
    dims.insert(axis2, side)
    return dims


class AllocDiag(Op):
    """Zeros with the last axis of the input written on diagonal ``offset`` of the plane
    ``(axis1, axis2)``; the inverse of :class:`ExtractDiag` with the same parameters.

    The input ``diag`` of shape ``(*batch, n)`` gives an output with ``batch``'s axes in
    order and two new axes of length ``n + abs(offset)`` at ``axis1`` and ``axis2``.

    Parameters
    ----------
    axis1, axis2
        The positions of the two new axes in the output (non-negative, ``axis1 < axis2``).
    offset
        Diagonal offset (positive: above the main diagonal).
    """

    __props__ = ("axis1", "axis2", "offset")

    def __init__(self, *, axis1: int = 0, axis2: int = 1, offset: int = 0) -> None:
        for name, value in (("axis1", axis1), ("axis2", axis2), ("offset", offset)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TypeError(f"AllocDiag: {name} must be an int, got {value!r}")
        if not 0 <= axis1 < axis2:
            raise ValueError(
                f"AllocDiag: the axes must satisfy 0 <= axis1 < axis2, got {axis1} and {axis2}"
            )
        self.axis1, self.axis2, self.offset = int(axis1), int(axis2), int(offset)

    def __str__(self) -> str:
        return f"AllocDiag{{axis1={self.axis1}, axis2={self.axis2}, offset={self.offset}}}"

    def make_node(self, diag: Any) -> Apply:
        """A tensor with at least one dimension; one more dimension in the output."""
        diag = as_tensor_variable(diag)
        if diag.ndim == 0:
            raise ValueError(f"{self}: diag must have at least 1 dimension, got the 0-d {diag}")
        if self.axis2 > diag.ndim:
            raise ValueError(
                f"{self}: axis2 is out of range for the {diag.ndim + 1}-d output of {diag}"
            )
        *batch, n = diag.type.shape
        side = None if n is None else _diag_side(n, self.offset)
        shape = _insert_axes(batch, side, self.axis1, self.axis2)
        return Apply(self, [diag], [diag.type.clone(shape=tuple(shape))()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The batch dimensions with the two sides inserted."""
        *batch, n = shapes[0]
        return [tuple(_insert_axes(batch, _diag_side(n, self.offset), self.axis1, self.axis2))]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The diagonal of the output gradient (:class:`ExtractDiag`)."""
        (diag,) = inputs
        (gz,) = output_grads
        if tensor_type_of(diag).dtype not in continuous_dtypes:
            return [_float_zeros_like(diag)]
        return [ExtractDiag(self.offset, self.axis1, self.axis2)(gz)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """Linear: the Op applied to the evaluation point."""
        return [None if eval_points[0] is None else self(eval_points[0])]


def alloc_diag(diag: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> TensorVariable:
    """Write the last axis of ``diag`` on a diagonal of zeros (:class:`AllocDiag`).

    ``diagonal(alloc_diag(x, offset, axis1, axis2), offset, axis1, axis2)`` is ``x``.

    Parameters
    ----------
    diag
        A tensor with at least one dimension.
    offset
        Diagonal offset (positive: above the main diagonal).
    axis1, axis2
        The axes of the output (negative values count from its end) that hold the matrices.

    Returns
    -------
    TensorVariable
        A tensor with one more dimension than ``diag``.

    Raises
    ------
    ValueError
        If ``diag`` is 0-d, or the axes are out of range or equal.
    """
    diag = as_tensor_variable(diag)
    if diag.ndim == 0:
        raise ValueError(f"alloc_diag: diag must have at least 1 dimension, got the 0-d {diag}")
    a1 = _normalize_axis(axis1, diag.ndim + 1, "alloc_diag")
    a2 = _normalize_axis(axis2, diag.ndim + 1, "alloc_diag")
    if a1 == a2:
        raise ValueError(f"alloc_diag: axis1 and axis2 must differ, got {axis1} and {axis2}")
    if isinstance(offset, bool) or not isinstance(offset, int | np.integer):
        raise TypeError(f"alloc_diag: offset must be an int, got {offset!r}")
    a1, a2 = min(a1, a2), max(a1, a2)
    return tensor_out(AllocDiag(axis1=a1, axis2=a2, offset=int(offset))(diag))


def diag(v: Any, k: int = 0) -> TensorVariable:
    """``numpy.diag``: a vector gives a matrix with ``v`` on diagonal ``k``
    (:func:`alloc_diag`); a matrix gives its diagonal ``k`` (:func:`diagonal`).

    Parameters
    ----------
    v
        A vector or a matrix.
    k
        Diagonal offset (positive: above the main diagonal).

    Returns
    -------
    TensorVariable
        A matrix for a vector input, a vector for a matrix input.

    Raises
    ------
    ValueError
        If ``v`` is neither 1-d nor 2-d.
    """
    x = as_tensor_variable(v)
    if x.ndim == 1:
        return alloc_diag(x, offset=k)
    if x.ndim == 2:
        return diagonal(x, offset=k)
    raise ValueError(
        f"diag: v must be 1-d or 2-d, got {x} with {x.ndim} dimensions. Input must be 1- or 2-d."
    )


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
        if typing.cast(ScalarType, s.type).dtype in continuous_dtypes:
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
        t_dtype = tensor_type_of(t).dtype
        if t_dtype not in continuous_dtypes:
            return [_float_zeros_like(t)]
        return [cast(tensor_from_scalar(gz), t_dtype)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The evaluation point as a scalar."""
        return [None if eval_points[0] is None else self(eval_points[0])]


#: PyTensor's ``tensor_from_scalar``: the ``TensorFromScalar`` Op instance; calling it
#: on a scalar gives a 0-d tensor holding it.
tensor_from_scalar = TensorFromScalar()

#: PyTensor's ``scalar_from_tensor``: the ``ScalarFromTensor`` Op instance; calling it on
#: a 0-d tensor gives the scalar it holds.
scalar_from_tensor = ScalarFromTensor()


@_vectorize_node.register(ScalarFromTensor)
def vectorize_scalar_from_tensor(op: ScalarFromTensor, node: Apply, batch_x: Variable) -> Apply:
    """PyTensor's rule: a 0-d tensor still gives a scalar; one that gained batch dimensions
    stays the tensor it is (the batched gradient of a convolution carries its mode flag
    so), as its own node or a copy's."""
    if tensor_type_of(batch_x).ndim == 0:
        return scalar_from_tensor.make_node(batch_x)
    if batch_x.owner is not None:
        return batch_x.owner
    copied = tensor_copy(batch_x).owner
    assert copied is not None
    return copied


# ====================================================================== tile and choose


def tile(A: Any, reps: Any) -> TensorVariable:
    """``numpy.tile``: ``A`` repeated ``reps[i]`` times along each dimension ``i``.

    Built as in PyTensor: ``A`` with a new axis before each dimension is broadcast
    (:func:`alloc`) to ``(reps[0], n0, reps[1], n1, ...)``, then reshaped to
    ``(reps[0] * n0, reps[1] * n1, ...)``. The gradient follows from those Ops.

    Parameters
    ----------
    A
        A tensor (or anything :func:`as_tensor_variable` accepts).
    reps
        An int, a sequence of ints or 0-d integer tensors, or an integer vector whose length
        is known statically (``specify_shape`` can state it). Shorter ``reps`` are padded
        with ones on the left; a shorter ``A`` gets new leading axes.

    Returns
    -------
    TensorVariable
        Of rank ``max(len(reps), A.ndim)``, with static lengths where ``reps`` and ``A``'s
        static shape are known.

    Raises
    ------
    TypeError
        If an entry of ``reps`` is not an integer scalar.
    ValueError
        If ``reps`` has more than one dimension or a length unknown statically.
    """
    A = as_tensor_variable(A)
    if not isinstance(reps, list | tuple):
        reps_var = _as_tensor_or_scalar(reps)
        if reps_var.ndim == 0:
            reps = [reps_var]
        elif reps_var.ndim == 1:
            entries = _static_vector(reps_var)
            if entries is None:
                raise ValueError(
                    f"tile: the length of reps {reps_var} is not known statically. Use "
                    "specify_shape to set the length: specify_shape(reps, (n,))"
                )
            reps = [e if e is not None else reps_var[i] for i, e in enumerate(entries)]
        else:
            raise ValueError(f"tile: reps must be a scalar or a vector, got {reps_var.ndim} dims")
    reps_t = [_as_int_scalar(r, f"tile: reps[{i}]") for i, r in enumerate(reps)]
    out_ndim = max(len(reps_t), A.ndim)
    reps_t = [_as_int_scalar(1, "tile")] * (out_ndim - len(reps_t)) + reps_t
    if A.ndim < out_ndim:
        A = tensor_var(A.dimshuffle(["x"] * (out_ndim - A.ndim) + list(range(A.ndim))))
    dims = _dims_of(A)
    spread = A.dimshuffle([d for k in range(out_ndim) for d in ("x", k)])
    replicated = tensor_out(alloc(spread, *[d for pair in zip(reps_t, dims) for d in pair]))
    tiled: list[Any] = []
    for r, d in zip(reps_t, dims):
        known_r, known_d = _const_int(r), _const_int(d)
        if known_r is not None and known_d is not None:
            tiled.append(known_r * known_d)
        else:
            tiled.append(tm.mul(cast(r, "int64"), d))
    return tensor_var(replicated.reshape(tiled))


#: ``Choose``'s modes and the NumPy clip mode each stands for.
CHOOSE_MODES: tuple[str, ...] = ("raise", "wrap", "clip")


def _broadcast_static(a: int | None, b: int | None, who: str, dim: int) -> int | None:
    """The static length of two broadcast lengths (``None``: unknown)."""
    if a == 1:
        return b
    if b == 1:
        return a
    if a is not None and b is not None and a != b:
        raise ValueError(f"{who}: lengths {a} and {b} of dimension {dim} do not broadcast")
    return a if a is not None else b


def _choices_tensor(choices: Sequence[Any]) -> TensorVariable:
    """A list of choices broadcast against each other and stacked along a new first axis."""
    if not choices:
        raise ValueError("Choose: choices must not be empty")
    ts = [as_tensor_variable(c) for c in choices]
    ndim = max(t.ndim for t in ts)
    ts = [tensor_var(t.dimshuffle(["x"] * (ndim - t.ndim) + list(range(t.ndim)))) for t in ts]
    if len({t.type.shape for t in ts}) > 1 or any(None in t.type.shape for t in ts):
        model = ts[0]
        for t in ts[1:]:
            model = tensor_out(second(t, model))  # the shape of all choices broadcast together
        ts = [tensor_out(second(model, t)) for t in ts]
    return stack(ts)


class Choose(Op):
    """``numpy.choose(a, choices, mode)``: at each position, the element of ``choices[a]``.

    Inputs: ``a``, an integer (or boolean) tensor of indices, and ``choices``, a tensor whose
    first axis enumerates the choices (a list of tensors is broadcast and stacked into one
    by :meth:`make_node`). ``a`` and ``choices[i]`` broadcast against each other.

    Parameters
    ----------
    mode
        What indices outside ``[0, n)`` do: ``"raise"`` (an error), ``"wrap"`` (taken
        modulo ``n``) or ``"clip"`` (limited to ``[0, n - 1]``).

    Raises
    ------
    ValueError
        For another mode.
    """

    __props__ = ("mode",)

    def __init__(self, mode: str = "raise") -> None:
        if mode not in CHOOSE_MODES:
            raise ValueError(f"Choose: mode must be one of {CHOOSE_MODES}, got {mode!r}")
        self.mode = mode

    def make_node(self, a: Any, choices: Any) -> Apply:
        """An output of ``choices``' dtype and the broadcast shape of ``a`` and a choice.

        Raises
        ------
        TypeError
            For a non-integer ``a`` (``uint64`` included: NumPy cannot index with it) or
            0-d ``choices``.
        ValueError
            For static shapes that do not broadcast.
        """
        a = as_tensor_variable(a)
        if a.dtype not in discrete_dtypes or a.dtype == "uint64":
            raise TypeError(
                f"Choose: a must be an integer tensor (int8 ... int64, uint8 ... uint32 or "
                f"bool), got {a} of type {a.type!r}"
            )
        if isinstance(choices, list | tuple):
            choices = _choices_tensor(choices)
        else:
            choices = as_tensor_variable(choices)
        if choices.ndim == 0:
            raise TypeError(
                f"Choose: choices must be a list of tensors or a tensor whose first axis "
                f"enumerates them, got the 0-d {choices}"
            )
        ndim = max(a.ndim, choices.ndim - 1)
        a_shape = (1,) * (ndim - a.ndim) + a.type.shape
        c_shape = (1,) * (ndim - choices.ndim + 1) + choices.type.shape[1:]
        shape = [
            _broadcast_static(x, y, "Choose", d) for d, (x, y) in enumerate(zip(a_shape, c_shape))
        ]
        return Apply(self, [a, choices], [TensorType(choices.dtype, shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The broadcast shape of ``a`` and one choice."""
        a_shape, c_shape = shapes[0], shapes[1][1:]
        out = tensor_type_of(node.outputs[0]).shape
        ndim = len(out)
        a_full = [1] * (ndim - len(a_shape)) + list(a_shape)
        c_full = [1] * (ndim - len(c_shape)) + list(c_shape)
        dims: list[Any] = []
        for d, (x, y) in enumerate(zip(a_full, c_full)):
            if out[d] is not None:
                dims.append(out[d])
            elif isinstance(x, int) and x == 1:
                dims.append(y)
            elif isinstance(y, int) and y == 1:
                dims.append(x)
            else:
                dims.append(where(tm.eq(x, 1), y, x))
        return [tuple(dims)]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The values come from ``choices``; ``a`` only selects (as an index does)."""
        return [[False], [True]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` sent to the choice each position took (after ``wrap``/``clip``), summed
        over the dimensions that broadcasting added to ``choices`` or that have static
        length 1 there (as for Elemwise, broadcasting must be known statically)."""
        a, choices = tensor_vars(inputs)
        gz = tensor_var(output_grads[0])
        if choices.dtype not in continuous_dtypes:
            return [disconnected_type(), _float_zeros_like(choices)]
        n = choices.shape[0]
        if self.mode == "wrap":
            a = tensor_out(tm.mod(a, n))
        elif self.mode == "clip":
            a = tensor_out(tm.clip(a, 0, tm.sub(n, 1)))
        ndim = gz.type.ndim
        which = arange(n).dimshuffle([0] + ["x"] * ndim)
        a_pattern: list[Any] = ["x"] * (ndim - a.ndim + 1) + list(range(a.ndim))
        picked = tm.eq(a.dimshuffle(a_pattern), which)
        g = where(picked, gz.dimshuffle(["x", *range(ndim)]), constant(0, dtype=gz.dtype))
        extra = ndim + 1 - choices.ndim
        if extra:
            g = tm.sum(g, axis=tuple(range(1, 1 + extra)))
        axes = tuple(
            i
            for i, (c, s) in enumerate(zip(choices.type.shape, g.type.shape))
            if i > 0 and c == 1 and s != 1
        )
        if axes:
            g = tm.sum(g, axis=axes, keepdims=True)
        return [disconnected_type(), cast(g, choices.dtype)]


def choose(a: Any, choices: Any, mode: str = "raise") -> TensorVariable:
    """``numpy.choose``: an array built from ``choices`` by the indices ``a``.

    Parameters
    ----------
    a
        Integer indices into ``choices``.
    choices
        A list of tensors (broadcast against each other and ``a``) or a tensor whose first
        axis enumerates the choices.
    mode
        ``"raise"`` (indices outside ``[0, n)`` are an error when the function runs),
        ``"wrap"`` or ``"clip"``.

    Returns
    -------
    TensorVariable
        Of the broadcast shape of ``a`` and one choice, in the choices' dtype.
    """
    return tensor_out(Choose(mode)(a, choices))


# ====================================================================== PermuteRowElements


class PermuteRowElements(Op):
    """Permute the last axis of ``x`` by the integer permutation(s) ``y``.

    ``out[..., i] = x[..., y[..., i]]``; with ``inverse``, ``out[..., y[..., i]] =
    x[..., i]``. The leading axes of ``x`` and ``y`` broadcast together (the input of
    fewer dimensions gets leading axes of length 1), so a vector ``y`` applies one
    permutation to every row of ``x`` and a matrix ``y`` applies one per row.

    Parameters
    ----------
    inverse
        Apply the inverse of each permutation.
    """

    __props__ = ("inverse",)

    def __init__(self, inverse: bool = False) -> None:
        self.inverse = bool(inverse)

    def make_node(self, x: Any, y: Any) -> Apply:
        """Pad ``x`` and ``y`` to the same rank; the output has ``x``'s dtype.

        Raises
        ------
        TypeError
            For a non-integer ``y``.
        ValueError
            For a 0-d ``x`` or ``y``.
        """
        x = as_tensor_variable(x)
        y = as_tensor_variable(y)
        if y.dtype not in int_dtypes + uint_dtypes:
            raise TypeError(
                f"PermuteRowElements: y must be an integer tensor, got {y} of type {y.type!r}"
            )
        if x.ndim < 1 or y.ndim < 1:
            raise ValueError("PermuteRowElements: x and y need at least one dimension")
        ndim = max(x.ndim, y.ndim)
        if x.ndim < ndim:
            x = _dimshuffle(x, ["x"] * (ndim - x.ndim) + list(range(x.ndim)))
        if y.ndim < ndim:
            y = _dimshuffle(y, ["x"] * (ndim - y.ndim) + list(range(y.ndim)))
        shape = [1 if a == 1 and b == 1 else None for a, b in zip(x.type.shape, y.type.shape)]
        return Apply(self, [x, y], [TensorType(x.dtype, shape=shape)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The larger of the two lengths in each dimension."""
        return [tuple(tm.maximum(a, b) for a, b in zip(shapes[0], shapes[1]))]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` permuted back, summed over the axes ``x`` was broadcast along; ``y`` is
        an index, so its gradient is undefined."""
        x, y = tensor_vars(inputs)
        gz = tensor_var(output_grads[0])
        if x.dtype in discrete_dtypes:
            return [_float_zeros_like(x), _grad_undefined(self, 1, y)]
        gx = tensor_out(PermuteRowElements(not self.inverse)(gz, y))
        return [_sum_to(gx, tensor_type_of(x)), _grad_undefined(self, 1, y)]
