"""Indexing: :class:`Subtensor`, :class:`IncSubtensor`, and the advanced indexing Ops.

``x[key]`` (:func:`getitem`) accepts what NumPy's indexing does:

* integers, slices, ``...`` and ``None`` (basic indexing), with constant or symbolic
  (0-d integer tensor) entries: :class:`Subtensor`, a view;
* a single integer vector, every other entry a full slice: :class:`AdvancedSubtensor1`
  (``take`` along that axis);
* any other mix of integer arrays, boolean masks (which select as ``nonzero(mask)``
  does), integers and slices: :class:`AdvancedSubtensor`, with NumPy's placement of the
  broadcast index dimensions (where the first advanced index is when the advanced
  indices are adjacent, else first).

The Ops describe their index with an ``idx_list`` (see :mod:`opweave.tensor.index_list`):
``int`` entries are constant indices, :class:`~opweave.tensor.type.TensorType` entries are
placeholders for the index inputs, in order, and slices hold either. Index constants must
fit in ``int64``; a larger one is a ``TypeError`` (as in PyTensor).

:func:`set_subtensor` and :func:`inc_subtensor` take the indexing expression
itself, as in PyTensor: ``set_subtensor(x[1:3], y)``. Repeated advanced indices
accumulate when incrementing (``numpy.add.at``), unless ``ignore_duplicates=True`` asks
for ``x[idx] += y`` (each position updated once); when setting, the last one wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.type import disconnected_type
from opweave.printing import Printer, PrinterState, pprint
from opweave.scalar.basic import Cast, ScalarMaximum, ScalarMinimum
from opweave.tensor import math as tm
from opweave.tensor._typing import tensor_out, tensor_type_of, tensor_var, tensor_vars
from opweave.tensor.basic import (
    MakeVector,
    ScalarFromTensor,
    TensorFromScalar,
    _as_int_scalar,
    _as_tensor_or_scalar,
    _const_int,
    _float_zeros_like,
    _normalize_axis,
    _sum_to,
    arange,
    full_like,
    transpose,
    where,
    zeros_like,
)
from opweave.tensor.blockwise import vectorize_node_fallback
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.elemwise import DimShuffle, Elemwise
from opweave.tensor.index_list import (
    IdxEntry,
    as_index_array,
    as_index_constant,
    as_index_literal,
    check_idx_list,
    flatten_index_variables,
    get_constant_idx,
    get_idx_list,
    get_slice_elements,
    hashable,
    idx_str,
    index_literal,
    index_type,
    indices_from_subtensor,
    is_placeholder,
    placeholders,
    unflatten_index_variables,
)
from opweave.tensor.index_shapes import (
    assemble_indexed_shape,
    basic_shape,
    broadcast_index_shapes,
    get_canonical_form_slice,
    group_indices,
    indexed_result_shape,
    slice_len,
    slice_length,
    slice_static_length,
    static_indexed_shape,
)
from opweave.tensor.shape import (
    Shape,
    Shape_i,
    _dimshuffle,
    flatten,
    reshape,
    shape_i,
    shape_padleft,
)
from opweave.tensor.type import continuous_dtypes, integer_dtypes
from opweave.tensor.type_other import NoneTypeT, SliceType
from opweave.tensor.variable import TensorVariable

__all__ = [
    "AdvancedIncSubtensor",
    "AdvancedIncSubtensor1",
    "AdvancedSubtensor",
    "AdvancedSubtensor1",
    "IncSubtensor",
    "Subtensor",
    "advanced_inc_subtensor",
    "advanced_inc_subtensor1",
    "advanced_set_subtensor",
    "advanced_set_subtensor1",
    "advanced_subtensor",
    "advanced_subtensor1",
    "as_index_constant",
    "as_index_literal",
    "as_tensor_index_variable",
    "basic_shape",
    "basic_subtensor",
    "flatten_index_variables",
    "flip",
    "get_canonical_form_slice",
    "get_constant_idx",
    "get_idx_list",
    "get_slice_elements",
    "getitem",
    "group_indices",
    "inc_subtensor",
    "indexed_result_shape",
    "indices_from_subtensor",
    "is_basic_idx",
    "set_subtensor",
    "slice_at_axis",
    "slice_len",
    "slice_static_length",
    "take",
    "unflatten_index_variables",
]


# ====================================================================== idx_list helpers


def _is_provably_positive(var: Any, strict: bool = True) -> bool:
    """Whether ``var`` is shown, from the graph alone, to be positive (PyTensor's contract).

    Parameters
    ----------
    var
        A Python or NumPy integer, or a Variable.
    strict
        Prove ``var > 0`` when true, ``var >= 0`` when false.

    Returns
    -------
    bool
        ``True`` only when proven: integers and constants by their values; ``MakeVector``
        when every element is; ``Subtensor``, ``DimShuffle`` and the scalar/tensor
        conversions by their input; ``minimum`` when every input is, ``maximum`` when one
        is. For ``strict=False`` also unsigned dtypes, shapes (``Shape``/``Shape_i``) and
        casts of a non-negative input, all of which may be zero.
    """
    if isinstance(var, int | np.integer):
        return bool(var > 0) if strict else bool(var >= 0)
    if not isinstance(var, Variable):
        raise TypeError(f"_is_provably_positive: expected an integer or a Variable, got {var!r}")
    if not strict and str(getattr(var.type, "dtype", "")).startswith("uint"):
        return True
    if isinstance(var, Constant):
        data = np.asarray(var.data)
        return bool((data > 0).all()) if strict else bool((data >= 0).all())
    if var.owner is None:
        return False
    op, inputs = var.owner.op, var.owner.inputs
    if not strict and isinstance(op, Shape | Shape_i):
        return True
    if isinstance(op, MakeVector):
        return all(_is_provably_positive(i, strict) for i in inputs)
    if isinstance(op, Subtensor | ScalarFromTensor | TensorFromScalar | DimShuffle):
        return _is_provably_positive(inputs[0], strict)
    if isinstance(op, Elemwise):
        scalar_op = op.scalar_op
        if not strict and isinstance(scalar_op, Cast):
            return _is_provably_positive(inputs[0], strict)
        if isinstance(scalar_op, ScalarMinimum):
            return all(_is_provably_positive(i, strict) for i in inputs)
        if isinstance(scalar_op, ScalarMaximum):
            return any(_is_provably_positive(i, strict) for i in inputs)
    return False


def _is_provably_non_negative(var: Any) -> bool:
    """Whether ``var`` is shown, from the graph alone, to be ``>= 0``
    (:func:`_is_provably_positive` with ``strict=False``)."""
    return _is_provably_positive(var, strict=False)


def _static_out_shape(x_shape: Sequence[int | None], idx_list: Sequence[IdxEntry]) -> list[Any]:
    out: list[int | None] = []
    for d, e in enumerate(idx_list):
        if isinstance(e, slice):
            out.append(slice_static_length(e, x_shape[d]))
    out.extend(x_shape[len(idx_list) :])
    return out


def _check_index_inputs(
    who: str, idx_list: Sequence[IdxEntry], inputs: Sequence[Any]
) -> list[TensorVariable]:
    """The index inputs as variables, each of the Type its placeholder asks for."""
    types = placeholders(idx_list)
    if len(inputs) != len(types):
        raise TypeError(
            f"{who}: idx_list has {len(types)} symbolic entries but {len(inputs)} index inputs "
            "were given"
        )
    converted: list[TensorVariable] = []
    for i, (inp, t) in enumerate(zip(inputs, types)):
        if t.ndim == 0:
            var = _as_int_scalar(inp, f"{who}: index input {i}")
        else:
            var = as_index_array(inp)
        if index_type(var) != t:
            raise TypeError(f"{who}: index input {i} ({var}) has type {var.type!r}, expected {t!r}")
        converted.append(var)
    return converted


def _bounds_check(x: TensorVariable, idx_list: Sequence[IdxEntry]) -> None:
    for d, e in enumerate(idx_list):
        n = x.type.shape[d]
        if isinstance(e, int) and n is not None and not -n <= e < n:
            raise IndexError(f"index {e} is out of bounds for axis {d} with size {n}")


# ====================================================================== Subtensor


class _IndexedRead(Op):
    """What reading ``x[idx_list]`` means for gradients, whatever the kind of index.

    Only ``x`` is connected to the output; the gradient adds the output gradient at the
    indexed positions of zeros (through the matching increment Op, :meth:`_increment`);
    the R-op indexes the evaluation point the same way.
    """

    idx_list: tuple[Any, ...]
    #: The Op adding values at the positions this Op reads (a method of each subclass).
    _increment: Callable[[], Op]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The index inputs do not affect the elements' values."""
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros with the output gradient added at the indexed positions (repeated
        positions, for an advanced index, add up)."""
        x, *rest = tensor_vars(inputs)
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:
            first = _float_zeros_like(x)
        else:
            first = tensor_out(self._increment()(zeros_like(x), gz, *rest))
        return [first, *[disconnected_type() for _ in rest]]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same indexing of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], *inputs[1:])]


class Subtensor(_IndexedRead):
    """Basic indexing ``x[idx_list]``; the output is a view of ``x``.

    Parameters
    ----------
    idx_list
        The index description (see the module docstring): ints, slices and 0-d integer
        placeholders.
    """

    __props__ = ("idx_list",)
    view_map = {0: [0]}

    def __init__(self, idx_list: Sequence[IdxEntry]) -> None:
        self.idx_list = check_idx_list(idx_list, "Subtensor")

    def __hash__(self) -> int:
        return hash((type(self), hashable(self.idx_list)))

    def __str__(self) -> str:
        return f"Subtensor{{{idx_str(self.idx_list)}}}"

    def make_node(self, x: Any, *inputs: Any) -> Apply:
        """``x`` and one 0-d integer per symbolic entry of ``idx_list``."""
        x = as_tensor_variable(x)
        if len(self.idx_list) > x.ndim:
            raise IndexError(
                f"too many indices for the {x.ndim}-d tensor {x}: {len(self.idx_list)} were given"
            )
        ins = _check_index_inputs(str(self), self.idx_list, inputs)
        _bounds_check(x, self.idx_list)
        static = _static_out_shape(x.type.shape, self.idx_list)
        return Apply(self, [x, *ins], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The sliced dimensions' lengths and the untouched dimensions."""
        xshape = shapes[0]
        entries = get_idx_list(node.inputs, self.idx_list)
        static = tensor_type_of(node.outputs[0]).shape
        out: list[Any] = []
        for d, e in enumerate(entries):
            if isinstance(e, slice):
                known = static[len(out)]
                out.append(
                    known if known is not None else slice_length(e.start, e.stop, e.step, xshape[d])
                )
        out.extend(xshape[len(entries) :])
        return [tuple(out)]

    def _increment(self) -> Op:
        """:class:`IncSubtensor` at the same index."""
        return IncSubtensor(self.idx_list)


def basic_subtensor(x: Any, *index_variables: Any) -> TensorVariable:
    """``x[index_variables]`` for a basic index, as a :class:`Subtensor`.

    Parameters
    ----------
    x
        The tensor.
    *index_variables
        One entry per indexed dimension: ints, slices, 0-d integer variables.

    Raises
    ------
    TypeError
        For an index array (use :func:`advanced_subtensor`) or a constant outside ``int64``.
    """
    idx_list, flat = flatten_index_variables(index_variables)
    arrays = [v for v in flat if tensor_type_of(v).ndim > 0]
    if arrays:
        raise TypeError(
            f"basic_subtensor: {arrays[0]} is an index array; basic indices are ints, slices "
            "and 0-d integer tensors (use advanced_subtensor for index arrays)"
        )
    return tensor_out(Subtensor(idx_list)(x, *flat))


def _aliased_pairs(pairs: Sequence[Sequence[int]] | None) -> tuple[tuple[int, int], ...]:
    """``destroyhandler_tolerate_aliased`` as a tuple of ``(int, int)`` pairs."""
    if pairs is None:
        return ()
    result = []
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(
                f"destroyhandler_tolerate_aliased: expected pairs of input positions, got {pair!r}"
            )
        result.append((int(pair[0]), int(pair[1])))
    return tuple(result)


class IncSubtensor(Op):
    """``x`` with ``y`` added to (or, with ``set_instead_of_inc``, written into) ``x[idx_list]``.

    Inputs: ``x``, ``y`` (broadcastable to ``x[idx_list]``) and the index inputs.

    Parameters
    ----------
    idx_list
        The index description (see the module docstring).
    inplace
        Write into ``x`` (``destroy_map = {0: [0]}``) instead of a copy.
    set_instead_of_inc
        Replace the indexed elements instead of incrementing them.
    destroyhandler_tolerate_aliased
        Pairs ``(destroyed, other)`` of input positions: the in-place write may go ahead
        although input ``other`` is (a view of) the destroyed input ``destroyed``.
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc", "destroyhandler_tolerate_aliased")

    def __init__(
        self,
        idx_list: Sequence[IdxEntry],
        inplace: bool = False,
        set_instead_of_inc: bool = False,
        destroyhandler_tolerate_aliased: Sequence[Sequence[int]] | None = None,
    ) -> None:
        self.idx_list = check_idx_list(idx_list, "IncSubtensor")
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}
        self.destroyhandler_tolerate_aliased = _aliased_pairs(destroyhandler_tolerate_aliased)

    def __hash__(self) -> int:
        return hash(
            (
                type(self),
                hashable(self.idx_list),
                self.inplace,
                self.set_instead_of_inc,
                self.destroyhandler_tolerate_aliased,
            )
        )

    def __str__(self) -> str:
        name = "SetSubtensor" if self.set_instead_of_inc else "IncSubtensor"
        prefix = "Inplace" if self.inplace else ""
        return f"{prefix}{name}{{{idx_str(self.idx_list)}}}"

    def make_node(self, x: Any, y: Any, *inputs: Any) -> Apply:
        """Check that ``y`` fits ``x[idx_list]``; the output has ``x``'s Type."""
        x = as_tensor_variable(x)
        sub = Subtensor(self.idx_list).make_node(x, *inputs)
        ins = sub.inputs[1:]
        target = tensor_var(sub.outputs[0])
        y = _value_for(y, x, str(self))
        _check_broadcast(y, target.type.shape, str(self))
        return Apply(self, [x, y, *ins], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` and ``y`` are connected; the indices are not."""
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` (zeroed where set) for ``x``; ``gz[idx]`` summed to ``y``'s shape for ``y``."""
        x, y, *rest = tensor_vars(inputs)
        gz = tensor_var(output_grads[0])
        disc = [disconnected_type() for _ in rest]
        if gz.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), _float_zeros_like(y), *disc]
        if self.set_instead_of_inc:
            zero = constant(0, dtype=gz.dtype)
            gx = IncSubtensor(self.idx_list, set_instead_of_inc=True)(gz, zero, *rest)
        else:
            gx = gz
        if y.dtype in continuous_dtypes:
            gy = _sum_to(tensor_out(Subtensor(self.idx_list)(gz, *rest)), y.type)
        else:
            gy = _float_zeros_like(y)
        return [gx, gy, *disc]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same update applied to the evaluation points."""
        ex, ey = eval_points[:2]
        if ex is None and ey is None:
            return [None]
        ex = zeros_like(inputs[0]) if ex is None else ex
        ey = zeros_like(inputs[1]) if ey is None else ey
        op = IncSubtensor(self.idx_list, set_instead_of_inc=self.set_instead_of_inc)
        return [op(ex, ey, *inputs[2:])]


def _value_for(y: Any, x: TensorVariable, who: str) -> TensorVariable:
    """``y`` as a tensor whose values can be stored in ``x``."""
    if not isinstance(y, Variable):
        arr = np.asarray(y)
        if arr.dtype.kind in "biufc":
            cast_arr = arr.astype(x.dtype)
            with np.errstate(all="ignore"):
                same = bool(np.all(cast_arr == arr))
            if same or np.can_cast(arr.dtype, x.dtype, "same_kind"):
                return constant(cast_arr)
    value = as_tensor_variable(y)
    if not np.can_cast(value.dtype, x.dtype, "same_kind"):
        raise TypeError(
            f"{who}: cannot store values of dtype {value.dtype} ({value}) in a tensor of dtype "
            f"{x.dtype} without changing their kind; cast them first"
        )
    return value


class ValueRankError(TypeError, ValueError):
    """A value with more dimensions than the indexed part it should be written into.

    A :class:`TypeError` (PyTensor's contract: the value's Type does not fit) that is also
    a :class:`ValueError`, as opweave raised it before.
    """


def _check_broadcast(y: TensorVariable, target: Sequence[int | None], who: str) -> None:
    if y.ndim > len(target):
        raise ValueRankError(
            f"{who}: cannot use a {y.ndim}-d value to update a {len(target)}-d subtensor"
        )
    for ys, ts in zip(reversed(y.type.shape), reversed(tuple(target))):
        if ys not in (None, 1) and ts is not None and ys != ts:
            raise ValueError(
                f"{who}: a value of static shape {y.type.shape} does not broadcast to the "
                f"indexed part's static shape {tuple(target)}"
            )


# ====================================================================== integer-vector indexing


def _index_vector(ilist: Any, who: str) -> TensorVariable:
    if not isinstance(ilist, Variable):
        arr = np.asarray(ilist)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        ilist = constant(arr)
    var = as_tensor_variable(ilist)
    if var.dtype == "bool":
        raise TypeError(f"{who}: boolean masks are not supported; use nonzero(mask) as indices")
    if var.dtype not in integer_dtypes:
        raise TypeError(f"{who}: indices must be integers, got {var} of dtype {var.dtype}")
    if var.ndim != 1:
        raise TypeError(f"{who}: indices must be a vector, got {var.ndim} dimensions")
    return var


class AdvancedSubtensor1(Op):
    """``x[ilist]`` for an integer vector ``ilist`` (a copy; negative indices allowed)."""

    __props__ = ()

    def make_node(self, x: Any, ilist: Any) -> Apply:
        """``x`` (at least 1-d) and an integer vector."""
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise TypeError(f"AdvancedSubtensor1: cannot index the 0-d tensor {x}")
        ilist = _index_vector(ilist, "AdvancedSubtensor1")
        n = x.type.shape[0]
        if isinstance(ilist, Constant) and n is not None and ilist.data.size:
            bad = ilist.data[(ilist.data >= n) | (ilist.data < -n)]
            if bad.size:
                raise IndexError(f"index {int(bad[0])} is out of bounds for axis 0 with size {n}")
        static = (ilist.type.shape[0], *x.type.shape[1:])
        return Apply(self, [x, ilist], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The number of indices, then ``x``'s trailing dimensions."""
        return [(shapes[1][0], *shapes[0][1:])]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The indices do not affect the values."""
        return [[True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """Zeros with the output gradient's rows added at the indices (repeats accumulate)."""
        x, ilist = tensor_vars(inputs)
        (gz,) = output_grads
        if x.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), disconnected_type()]
        return [AdvancedIncSubtensor1()(zeros_like(x), gz, ilist), disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same rows of the evaluation point."""
        if eval_points[0] is None:
            return [None]
        return [self(eval_points[0], inputs[1])]


def advanced_subtensor1(x: Any, ilist: Any) -> TensorVariable:
    """``x[ilist]`` for an integer vector ``ilist``."""
    return tensor_out(AdvancedSubtensor1()(x, ilist))


class AdvancedIncSubtensor1(Op):
    """``x`` with ``y`` added to (or written into) the rows ``x[ilist]``.

    Repeated indices accumulate when incrementing (``numpy.add.at``); when setting,
    the last one wins.

    Parameters
    ----------
    inplace
        Write into ``x`` (``destroy_map = {0: [0]}``).
    set_instead_of_inc
        Replace the rows instead of incrementing them.
    """

    __props__ = ("inplace", "set_instead_of_inc")

    def __init__(self, inplace: bool = False, set_instead_of_inc: bool = False) -> None:
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __str__(self) -> str:
        name = "AdvancedSetSubtensor1" if self.set_instead_of_inc else "AdvancedIncSubtensor1"
        return f"{name}{{inplace}}" if self.inplace else name

    def make_node(self, x: Any, y: Any, ilist: Any) -> Apply:
        """``x``, ``y`` broadcastable to ``x[ilist]``, and an integer vector."""
        x = as_tensor_variable(x)
        target = AdvancedSubtensor1().make_node(x, ilist)
        ilist = target.inputs[1]
        y = _value_for(y, x, str(self))
        _check_broadcast(y, tensor_type_of(target.outputs[0]).shape, str(self))
        return Apply(self, [x, y, ilist], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` and ``y`` are connected; the indices are not."""
        return [[True], [True], [False]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` (zeroed at set rows) for ``x``; ``gz[ilist]`` summed to ``y``'s shape.

        When setting, a repeated row takes the value of its last write, so only that
        write's element of ``y`` gets the row's gradient.
        """
        x, y, ilist = tensor_vars(inputs)
        gz = tensor_var(output_grads[0])
        if gz.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), _float_zeros_like(y), disconnected_type()]
        if self.set_instead_of_inc:
            zero = constant(0, dtype=gz.dtype)
            gx = AdvancedIncSubtensor1(set_instead_of_inc=True)(gz, zero, ilist)
        else:
            gx = gz
        if y.dtype in continuous_dtypes:
            picked = advanced_subtensor1(gz, ilist)
            if self.set_instead_of_inc:
                picked = _only_last_writes(
                    x,
                    (index_type(ilist),),
                    [ilist],
                    picked,
                    lambda base, values: AdvancedIncSubtensor1(set_instead_of_inc=True)(
                        base, values, ilist
                    ),
                    lambda t: advanced_subtensor1(t, ilist),
                )
            gy = _sum_to(picked, y.type)
        else:
            gy = _float_zeros_like(y)
        return [gx, gy, disconnected_type()]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same update applied to the evaluation points."""
        ex, ey = eval_points[:2]
        if ex is None and ey is None:
            return [None]
        ex = zeros_like(inputs[0]) if ex is None else ex
        ey = zeros_like(inputs[1]) if ey is None else ey
        op = AdvancedIncSubtensor1(set_instead_of_inc=self.set_instead_of_inc)
        return [op(ex, ey, inputs[2])]


def advanced_inc_subtensor1(x: Any, y: Any, ilist: Any) -> TensorVariable:
    """``x`` with ``y`` added to the rows ``ilist`` (repeated rows accumulate)."""
    return tensor_out(AdvancedIncSubtensor1()(x, y, ilist))


def advanced_set_subtensor1(x: Any, y: Any, ilist: Any) -> TensorVariable:
    """``x`` with the rows ``ilist`` replaced by ``y``."""
    return tensor_out(AdvancedIncSubtensor1(set_instead_of_inc=True)(x, y, ilist))


# ====================================================================== take


def take(
    a: Any, indices: Any, axis: int | None = None, mode: str | None = "raise"
) -> TensorVariable:
    """``numpy.take``: the elements of ``a`` at ``indices`` along ``axis``.

    Parameters
    ----------
    a
        The tensor.
    indices
        Integer scalar, vector or tensor (constant or symbolic).
    axis
        The axis; ``None`` takes from the flattened ``a``.
    mode
        ``"raise"`` (out-of-range indices are an error; ``None`` means the same, as in
        :meth:`numpy.ndarray.take`), ``"wrap"`` or ``"clip"``.
    """
    if mode is None:
        mode = "raise"
    a = as_tensor_variable(a)
    if axis is None:
        a, axis = flatten(a, 1), 0
    axis = _normalize_axis(axis, a.ndim, "take")
    if not isinstance(indices, Variable):
        indices = np.asarray(indices)
        if indices.size == 0 and indices.dtype.kind == "f":
            indices = indices.astype("int64")
        indices = constant(indices)
    indices = as_tensor_variable(indices)
    if indices.dtype not in integer_dtypes:
        raise TypeError(f"take: indices must be integers, got {indices} of dtype {indices.dtype}")
    if mode == "wrap":
        indices = tm.mod(indices, shape_i(a, axis))
    elif mode == "clip":
        indices = tm.clip(indices, 0, tm.sub(shape_i(a, axis), 1))
    elif mode != "raise":
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if indices.ndim == 0:
        return getitem(a, (slice(None),) * axis + (indices,))
    if indices.ndim > 1:
        flat = take(a, flatten(indices, 1), axis)
        dims = (
            [shape_i(a, d) for d in range(axis)]
            + [shape_i(indices, d) for d in range(indices.ndim)]
            + [shape_i(a, d) for d in range(axis + 1, a.ndim)]
        )
        return reshape(flat, dims, ndim=len(dims))
    if axis == 0:
        return advanced_subtensor1(a, indices)
    others = [d for d in range(a.ndim) if d != axis]
    moved = advanced_subtensor1(transpose(a, [axis, *others]), indices)
    back = [*range(1, axis + 1), 0, *range(axis + 1, a.ndim)]
    return transpose(moved, back)


# ====================================================================== repeated positions


def _indices_distinct(
    x_shape: Sequence[int | None], idx_list: Sequence[IdxEntry], index_inputs: Sequence[Any]
) -> bool:
    """Whether the advanced index is known, from constants, to name no position twice."""
    arrays: list[np.ndarray] = []
    inputs = iter(index_inputs)
    dim = 0

    def normalized(values: np.ndarray, n: int | None) -> np.ndarray | None:
        if values.size and values.min() < 0:
            if n is None:
                return None
            values = np.where(values < 0, values + n, values)
        return values

    for e in idx_list:
        if isinstance(e, slice):
            for c in (e.start, e.stop, e.step):
                if is_placeholder(c):
                    next(inputs)
            dim += 1
            continue
        if isinstance(e, int):
            data = np.asarray(e)
        else:
            var = next(inputs)
            if not isinstance(var, Constant):
                return False
            data = np.asarray(var.data)
        if data.dtype == bool:
            arrays.extend(np.nonzero(data))
            dim += max(data.ndim, 1)
            continue
        values = normalized(data.astype(np.int64), x_shape[dim] if dim < len(x_shape) else None)
        if values is None:
            return False
        arrays.append(values)
        dim += 1
    try:
        broadcast = np.broadcast_arrays(*arrays)
    except ValueError:
        return False
    if not broadcast or broadcast[0].size <= 1:
        return True
    stacked = np.stack([a.ravel() for a in broadcast])
    return bool(np.unique(stacked, axis=1).shape[1] == stacked.shape[1])


def _only_last_writes(
    x: TensorVariable,
    idx_list: Sequence[IdxEntry],
    index_inputs: Sequence[Any],
    picked: TensorVariable,
    scatter: Callable[[Any, Any], Any],
    gather: Callable[[Any], Any],
) -> TensorVariable:
    """``picked`` (shaped like ``x[idx]``) with zeros where a later write hides the element.

    With repeated positions in ``idx``, ``x[idx] = v`` keeps the last write to each
    position: only that element of ``v`` reaches the result. Each element gets an id;
    scattering the ids (``scatter``) and gathering them back (``gather``) tells which
    element wrote last.
    """
    if _indices_distinct(x.type.shape, idx_list, index_inputs):
        return picked
    ids = reshape(arange(picked.size, dtype="int64"), picked.shape, ndim=picked.ndim)
    owner = scatter(full_like(x, -1, dtype="int64"), ids)
    return where(tm.eq(gather(owner), ids), picked, zeros_like(picked))


# ====================================================================== advanced indexing


def _holds_bool(seq: list[Any] | tuple[Any, ...]) -> bool:
    """Whether a nested list mixes booleans with other elements, or holds a symbolic
    boolean (a list of only Python booleans is a mask)."""
    flat: list[Any] = []
    stack: list[Any] = [seq]
    while stack:
        item = stack.pop()
        if isinstance(item, list | tuple):
            stack.extend(item)
        else:
            flat.append(item)
    if any(getattr(getattr(e, "type", None), "dtype", None) == "bool" for e in flat):
        return True
    bools = [isinstance(e, bool | np.bool_) for e in flat]
    return any(bools) and not all(bools)


def as_tensor_index_variable(idx: Any) -> TensorVariable:
    """``idx`` as an index variable for advanced indexing: integers or a boolean mask.

    Raises
    ------
    TypeError
        For a non-integer, non-boolean index, a 0-d boolean, or a Python list or tuple
        holding booleans (constant or symbolic) as elements (NumPy would read them as
        the integers 0 and 1).
    """
    if isinstance(idx, list | tuple) and _holds_bool(idx):
        raise TypeError(
            f"booleans nested in a Python list are not valid indices, got {idx!r}: use a "
            "boolean array as a mask, or integers"
        )
    var = as_index_array(idx)
    if var.dtype == "bool" and var.ndim == 0:
        raise TypeError(f"boolean scalars are not valid indices, got {idx!r}")
    return var


def _advanced_entries(
    idx_list: Sequence[IdxEntry],
    index_inputs: Sequence[Any],
    static: bool,
) -> tuple[list[tuple[Any, ...]], int]:
    """The entries of :func:`~opweave.tensor.index_shapes.static_indexed_shape` (or, with
    ``static`` false, of the symbolic shape, using the index inputs' symbolic shapes), and
    the number of dimensions the index takes."""
    inputs = iter(index_inputs)
    entries: list[tuple[Any, ...]] = []
    dim = 0
    for e in idx_list:
        if isinstance(e, slice):
            comps = []
            for c in (e.start, e.stop, e.step):
                if is_placeholder(c):
                    # A symbolic bound takes its index input even when only its static
                    # type is used, so that the entries after it get theirs.
                    var = next(inputs)
                    comps.append(c if static else var)
                else:
                    comps.append(c)
            entries.append(("slice", slice(*comps), dim))
            dim += 1
            continue
        if isinstance(e, int):
            entries.append(("adv", (), dim + 1))
            dim += 1
            continue
        var = next(inputs)
        if e.ndim == 0:
            entries.append(("adv", (), dim + 1))
            dim += 1
        elif e.dtype == "bool":
            if isinstance(var, Constant):
                count: Any = int(np.count_nonzero(var.data))
            else:
                count = None if static else tm.cast(tm.sum(var), "int64")
            dim += e.ndim
            entries.append(("adv", (count,), dim))
        else:
            if static:
                shape = tuple(var.type.shape)
            else:
                shape = tuple(
                    s if s is not None else shape_i(var, d) for d, s in enumerate(var.type.shape)
                )
            dim += 1
            entries.append(("adv", shape, dim))
    return entries, dim


def _static_index_checks(
    x: TensorVariable, idx_list: Sequence[IdxEntry], ins: Sequence[Any]
) -> None:
    """IndexError for constant indices out of static bounds and masks of the wrong shape."""
    inputs = iter(ins)
    dim = 0
    values: np.ndarray | None
    for e in idx_list:
        if isinstance(e, slice):
            for c in (e.start, e.stop, e.step):
                if is_placeholder(c):
                    next(inputs)
            dim += 1
            continue
        if isinstance(e, int):
            values, var = np.asarray(e), None
        else:
            var = next(inputs)
            values = np.asarray(var.data) if isinstance(var, Constant) else None
        if var is not None and var.dtype == "bool":
            for j, (n, m) in enumerate(zip(x.type.shape[dim:], var.type.shape)):
                if n is not None and m is not None and n != m:
                    raise IndexError(
                        f"boolean index did not match indexed tensor along axis {dim + j}; size "
                        f"of axis is {n} but size of corresponding boolean axis is {m}"
                    )
            dim += var.ndim
            continue
        n = x.type.shape[dim]
        if values is not None and n is not None and values.size:
            bad = values[(values >= n) | (values < -n)]
            if bad.size:
                raise IndexError(
                    f"index {int(bad.flat[0])} is out of bounds for axis {dim} with size {n}"
                )
        dim += 1


class AdvancedSubtensor(_IndexedRead):
    """NumPy's advanced indexing ``x[idx_list]`` (a copy).

    The index may mix integer arrays (broadcast together), boolean masks (which select
    as ``nonzero(mask)``), integers and slices. The broadcast dimensions of the advanced
    indices (integers count as 0-d arrays) replace the dimensions they index when the
    advanced indices are adjacent, and come first otherwise.

    Parameters
    ----------
    idx_list
        The index description (see the module docstring): ints, slices, and placeholders
        for 0-d integer indices, integer arrays and boolean masks.
    """

    __props__ = ("idx_list",)

    def __init__(self, idx_list: Sequence[IdxEntry]) -> None:
        self.idx_list = check_idx_list(idx_list, "AdvancedSubtensor", arrays=True)

    def __hash__(self) -> int:
        return hash((type(self), hashable(self.idx_list)))

    def __str__(self) -> str:
        return f"AdvancedSubtensor{{{idx_str(self.idx_list)}}}"

    def make_node(self, x: Any, *index_variables: Any) -> Apply:
        """``x`` and one index input per placeholder of ``idx_list``."""
        x = as_tensor_variable(x)
        ins = _check_index_inputs(str(self), self.idx_list, index_variables)
        entries, used = _advanced_entries(self.idx_list, ins, static=True)
        if used > x.ndim:
            raise IndexError(
                f"too many indices for the {x.ndim}-d tensor {x}: the index takes {used} dimensions"
            )
        _static_index_checks(x, self.idx_list, ins)
        static = static_indexed_shape(x.type.shape, entries)
        return Apply(self, [x, *ins], [x.type.clone(shape=static)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """NumPy's result shape from the input shapes (mask sizes are their sums)."""
        entries, _ = _advanced_entries(self.idx_list, node.inputs[1:], static=False)
        symbolic = assemble_indexed_shape(
            list(shapes[0]), entries, slice_len, broadcast_index_shapes
        )
        static = tensor_type_of(node.outputs[0]).shape
        return [tuple(s if s is not None else d for s, d in zip(static, symbolic))]

    def _increment(self) -> Op:
        """:class:`AdvancedIncSubtensor` at the same index (repeated positions add up)."""
        return AdvancedIncSubtensor(self.idx_list)


def advanced_subtensor(x: Any, *index_variables: Any) -> TensorVariable:
    """``x[index_variables]`` with NumPy's advanced indexing, as an :class:`AdvancedSubtensor`.

    Parameters
    ----------
    x
        The tensor.
    *index_variables
        One entry per index: ints, slices, 0-d integer variables, integer arrays and
        boolean masks (variables or values).
    """
    idx_list, flat = flatten_index_variables(index_variables)
    return tensor_out(AdvancedSubtensor(idx_list)(x, *flat))


class AdvancedIncSubtensor(Op):
    """``x`` with ``y`` added to (or written into) ``x[idx_list]`` under advanced indexing.

    Inputs: ``x``, ``y`` (broadcastable to ``x[idx_list]``) and the index inputs.

    Parameters
    ----------
    idx_list
        The index description, as for :class:`AdvancedSubtensor`.
    inplace
        Write into ``x`` (``destroy_map = {0: [0]}``).
    set_instead_of_inc
        Replace the indexed elements (a repeated position keeps its last write).
    ignore_duplicates
        When incrementing, update each position once (``x[idx] += y``: the last of a
        repeated position's increments wins) instead of accumulating the repeats
        (``numpy.add.at(x, idx, y)``, the default).
    """

    __props__ = ("idx_list", "inplace", "set_instead_of_inc", "ignore_duplicates")

    def __init__(
        self,
        idx_list: Sequence[IdxEntry],
        inplace: bool = False,
        set_instead_of_inc: bool = False,
        ignore_duplicates: bool = False,
    ) -> None:
        self.idx_list = check_idx_list(idx_list, "AdvancedIncSubtensor", arrays=True)
        self.inplace = bool(inplace)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.ignore_duplicates = bool(ignore_duplicates)
        self.destroy_map = {0: [0]} if self.inplace else {}

    def __hash__(self) -> int:
        return hash(
            (
                type(self),
                hashable(self.idx_list),
                self.inplace,
                self.set_instead_of_inc,
                self.ignore_duplicates,
            )
        )

    def __str__(self) -> str:
        name = "AdvancedSetSubtensor" if self.set_instead_of_inc else "AdvancedIncSubtensor"
        prefix = "Inplace" if self.inplace else ""
        extra = "; ignore_duplicates" if self.ignore_duplicates else ""
        return f"{prefix}{name}{{{idx_str(self.idx_list)}{extra}}}"

    def make_node(self, x: Any, y: Any, *index_variables: Any) -> Apply:
        """Check that ``y`` fits ``x[idx_list]``; the output has ``x``'s Type."""
        x = as_tensor_variable(x)
        target = AdvancedSubtensor(self.idx_list).make_node(x, *index_variables)
        ins = target.inputs[1:]
        y = _value_for(y, x, str(self))
        _check_broadcast(y, tensor_type_of(target.outputs[0]).shape, str(self))
        return Apply(self, [x, y, *ins], [x.type()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """``x``'s shape."""
        return [shapes[0]]

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """``x`` and ``y`` are connected; the indices are not."""
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """``gz`` (zeroed where set) for ``x``; ``gz[idx]`` summed to ``y``'s shape for ``y``.

        When setting, or incrementing with ``ignore_duplicates``, a repeated position
        keeps only its last write, so only that write's element of ``y`` gets the
        position's gradient.
        """
        x, y, *rest = tensor_vars(inputs)
        gz = tensor_var(output_grads[0])
        disc = [disconnected_type() for _ in rest]
        if gz.dtype not in continuous_dtypes:
            return [_float_zeros_like(x), _float_zeros_like(y), *disc]
        if self.set_instead_of_inc:
            zero = constant(0, dtype=gz.dtype)
            gx = AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)(gz, zero, *rest)
        else:
            gx = gz
        if y.dtype not in continuous_dtypes:
            return [gx, _float_zeros_like(y), *disc]
        picked = tensor_out(AdvancedSubtensor(self.idx_list)(gz, *rest))
        if self.set_instead_of_inc or self.ignore_duplicates:
            setter = AdvancedIncSubtensor(self.idx_list, set_instead_of_inc=True)
            getter = AdvancedSubtensor(self.idx_list)
            picked = _only_last_writes(
                x,
                self.idx_list,
                rest,
                picked,
                lambda base, values: setter(base, values, *rest),
                lambda t: getter(t, *rest),
            )
        return [gx, _sum_to(picked, y.type), *disc]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The same update applied to the evaluation points."""
        ex, ey = eval_points[:2]
        if ex is None and ey is None:
            return [None]
        ex = zeros_like(inputs[0]) if ex is None else ex
        ey = zeros_like(inputs[1]) if ey is None else ey
        op = AdvancedIncSubtensor(
            self.idx_list,
            set_instead_of_inc=self.set_instead_of_inc,
            ignore_duplicates=self.ignore_duplicates,
        )
        return [op(ex, ey, *inputs[2:])]


def advanced_inc_subtensor(x: Any, y: Any, *args: Any, **kwargs: Any) -> TensorVariable:
    """``x`` with ``y`` added at ``x[args]`` (advanced indexing): :class:`AdvancedIncSubtensor`.

    Parameters
    ----------
    x
        The tensor.
    y
        The values, broadcastable to ``x[args]``.
    *args
        The index, as for :func:`advanced_subtensor`.
    **kwargs
        ``inplace``, ``set_instead_of_inc``, ``ignore_duplicates`` (see the Op).
    """
    idx_list, flat = flatten_index_variables(args)
    return tensor_out(AdvancedIncSubtensor(idx_list, **kwargs)(x, y, *flat))


def advanced_set_subtensor(x: Any, y: Any, *args: Any, **kwargs: Any) -> TensorVariable:
    """``x`` with ``x[args]`` (advanced indexing) replaced by ``y``."""
    return advanced_inc_subtensor(x, y, *args, set_instead_of_inc=True, **kwargs)


# ====================================================================== getitem


def _scalar_entry(k: Any, what: str) -> Any:
    """An int (within ``int64``), a 0-d integer variable (a symbolic entry), or raise."""
    if isinstance(k, bool | np.bool_):
        raise TypeError(f"{what}: boolean scalars are not valid indices")
    if isinstance(k, int | np.integer):
        return index_literal(k, what)
    if isinstance(k, float | np.floating):
        raise TypeError(f"{what}: indices must be integers, got the float {k!r}")
    if isinstance(k, Variable):
        var = _as_tensor_or_scalar(k)
        if var.ndim != 0 or var.dtype not in integer_dtypes:
            raise TypeError(
                f"{what}: a symbolic index must be a 0-d integer tensor, got {var} of type "
                f"{var.type!r}"
            )
        known = _const_int(var) if isinstance(var, Constant) else None
        return index_literal(known, what) if known is not None else var
    raise TypeError(f"{what}: invalid index {k!r} of type {type(k).__name__}")


def _classify(k: Any) -> str:
    """``'none'``, ``'ellipsis'``, ``'slice'``, ``'scalar'`` or ``'array'``."""
    if k is None:
        return "none"
    if k is Ellipsis:
        return "ellipsis"
    if isinstance(k, slice):
        return "slice"
    if isinstance(k, Variable):
        return "scalar" if getattr(k.type, "ndim", 0) == 0 else "array"
    if isinstance(k, list | tuple | np.ndarray):
        return "scalar" if np.ndim(k) == 0 and not isinstance(k, list | tuple) else "array"
    if isinstance(k, bool | np.bool_ | int | np.integer | float | np.floating):
        return "scalar"
    raise TypeError(
        f"invalid index {k!r} of type {type(k).__name__}: only integers, slices (':'), "
        "ellipsis ('...'), None (newaxis), integer arrays and boolean masks are valid indices"
    )


def _dims_taken(k: Any, kind: str) -> int:
    """How many dimensions of the indexed tensor the (converted) key entry ``k`` takes."""
    if kind == "array" and k.dtype == "bool":
        return int(k.ndim)
    return 1 if kind in ("slice", "scalar", "array") else 0


def getitem(x: Any, key: Any) -> TensorVariable:
    """``x[key]``: the entry point of ``TensorVariable.__getitem__``.

    Parameters
    ----------
    x
        The tensor.
    key
        An index or a tuple of indices: ints, slices, ``...``, ``None``, 0-d integer
        tensors, integer arrays and boolean masks (constant or symbolic).

    Raises
    ------
    IndexError
        Too many indices, several ellipses, a constant index out of static bounds, or
        index arrays whose static shapes do not broadcast.
    TypeError
        An index of an invalid kind (float, bool scalar, string, float tensor, ...) or a
        constant outside the ``int64`` range.
    """
    x = as_tensor_variable(x)
    key = key if isinstance(key, tuple) else (key,)
    kinds = [_classify(k) for k in key]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    key = tuple(
        as_tensor_index_variable(k) if kind == "array" else k for k, kind in zip(key, kinds)
    )
    n_real = sum(_dims_taken(k, kind) for k, kind in zip(key, kinds))
    if n_real > x.ndim:
        raise IndexError(
            f"too many indices for tensor: tensor is {x.ndim}-dimensional, but {n_real} were "
            f"indexed ({n_real} were given for {x})"
        )
    if "ellipsis" in kinds:
        pos = kinds.index("ellipsis")
        fill = (slice(None),) * (x.ndim - n_real)
        key = key[:pos] + fill + key[pos + 1 :]
        kinds = kinds[:pos] + ["slice"] * len(fill) + kinds[pos + 1 :]
    if "none" in kinds:
        return _with_newaxes(x, key, kinds)
    if "array" in kinds:
        return _advanced(x, key, kinds)
    idx_list: list[IdxEntry] = []
    inputs: list[Variable] = []

    def entry(k: Any, what: str) -> Any:
        if k is None:
            return None
        e = _scalar_entry(np.asarray(k).item() if isinstance(k, np.ndarray) else k, what)
        if isinstance(e, Variable):
            inputs.append(e)
            return e.type
        return e

    for d, (k, kind) in enumerate(zip(key, kinds)):
        if kind == "slice":
            s = slice(
                entry(k.start, "slice start"),
                entry(k.stop, "slice stop"),
                entry(k.step, "slice step"),
            )
            if s.step == 0:
                raise ValueError("slice step cannot be zero")
            idx_list.append(s)
        else:
            idx_list.append(entry(k, f"index {d}"))
    while idx_list and idx_list[-1] == slice(None):
        idx_list.pop()
    return tensor_out(Subtensor(tuple(idx_list))(x, *inputs))


#: Alias of :func:`getitem`.
subtensor = getitem


def _layout(kinds: Sequence[str]) -> list[Any]:
    """The order of a result's parts: ``("slice", i)``, ``"new"`` and ``"adv"`` (the block
    of broadcast advanced-index dimensions), by NumPy's rules."""
    advanced = "array" in kinds
    adv = [i for i, kind in enumerate(kinds) if advanced and kind in ("array", "scalar")]
    adjacent = not adv or adv == list(range(adv[0], adv[-1] + 1))
    out: list[Any] = ["adv"] if adv and not adjacent else []
    n_slices = 0
    for i, kind in enumerate(kinds):
        if kind == "slice":
            out.append(("slice", n_slices))
            n_slices += 1
        elif kind == "none":
            out.append("new")
        elif adv and adjacent and i == adv[0]:
            out.append("adv")
    return out


def _with_newaxes(x: TensorVariable, key: tuple[Any, ...], kinds: list[str]) -> TensorVariable:
    """``x[key]`` for a key with ``None``: index without them, then insert the new axes
    (and, for advanced indices that ``None`` separates, move the broadcast block first)."""
    real = [kind for kind in kinds if kind != "none"]
    base = getitem(x, tuple(k for k, kind in zip(key, kinds) if kind != "none"))
    trailing = x.ndim - sum(_dims_taken(k, kind) for k, kind in zip(key, kinds))
    inner = _layout(real)
    n_slices = sum(1 for part in inner if part != "adv")
    n_adv = base.ndim - n_slices - trailing
    where_: dict[Any, list[int]] = {}
    j = 0
    for part in inner:
        width = n_adv if part == "adv" else 1
        where_[part] = list(range(j, j + width))
        j += width
    order: list[Any] = []
    for part in _layout(kinds):
        order.extend(["x"] if part == "new" else where_[part])
    order.extend(range(j, base.ndim))
    return _dimshuffle(base, order)


def _advanced(x: TensorVariable, key: tuple[Any, ...], kinds: list[str]) -> TensorVariable:
    """``x[key]`` for a key with index arrays or masks (already tensor variables)."""
    arrays = [i for i, kind in enumerate(kinds) if kind == "array"]
    others_full = all(
        kind == "array" or (kind == "slice" and key[i] == slice(None))
        for i, kind in enumerate(kinds)
    )
    if len(arrays) == 1 and others_full:
        var = key[arrays[0]]
        if var.dtype != "bool" and var.ndim == 1:
            return take(x, var, arrays[0])
    entries: list[Any] = []
    for d, (k, kind) in enumerate(zip(key, kinds)):
        if kind == "slice":
            comps = [
                None if c is None else _scalar_entry(c, f"slice {name}")
                for c, name in zip((k.start, k.stop, k.step), ("start", "stop", "step"))
            ]
            if comps[2] == 0 and isinstance(comps[2], int):
                raise ValueError("slice step cannot be zero")
            entries.append(slice(*comps))
        elif kind == "scalar":
            entries.append(
                _scalar_entry(
                    np.asarray(k).item() if isinstance(k, np.ndarray) else k, f"index {d}"
                )
            )
        else:
            entries.append(k)
    while entries and entries[-1] == slice(None):
        entries.pop()
    return advanced_subtensor(x, *entries)


# ====================================================================== set / inc


def _inner_update(
    x: TensorVariable, y: Any, inplace: bool, set_: bool, who: str, ignore_duplicates: bool
) -> TensorVariable:
    owner = x.owner
    once = ignore_duplicates and not set_
    if owner is not None and isinstance(owner.op, Subtensor):
        real_x, *idx = owner.inputs
        op: Op = IncSubtensor(owner.op.idx_list, inplace=inplace, set_instead_of_inc=set_)
        return tensor_out(op(real_x, y, *idx))
    if owner is not None and isinstance(owner.op, AdvancedSubtensor1):
        real_x, ilist = owner.inputs
        if once:
            op = AdvancedIncSubtensor((index_type(ilist),), inplace=inplace, ignore_duplicates=True)
            return tensor_out(op(real_x, y, ilist))
        inc1 = AdvancedIncSubtensor1(inplace=inplace, set_instead_of_inc=set_)
        return tensor_out(inc1(real_x, y, ilist))
    if owner is not None and isinstance(owner.op, AdvancedSubtensor):
        real_x, *idx = owner.inputs
        op = AdvancedIncSubtensor(
            owner.op.idx_list, inplace=inplace, set_instead_of_inc=set_, ignore_duplicates=once
        )
        return tensor_out(op(real_x, y, *idx))
    new_order = getattr(getattr(owner, "op", None), "new_order", None)
    if owner is not None and new_order is not None:
        inner = tensor_var(owner.inputs[0])
        y = as_tensor_variable(y)
        if y.ndim > x.ndim:
            raise ValueRankError(
                f"{who}: cannot use a {y.ndim}-d value to update a {x.ndim}-d tensor"
            )
        y = shape_padleft(y, x.ndim - y.ndim)
        for j, o in enumerate(new_order):
            if o == "x" and y.type.shape[j] != 1:
                raise ValueError(
                    f"{who}: the value has length {y.type.shape[j]} along the inserted axis {j}; "
                    "it must be 1"
                )
        inverse = [new_order.index(k) if k in new_order else "x" for k in range(inner.ndim)]
        result = _inner_update(
            inner, _dimshuffle(y, inverse), inplace, set_, who, ignore_duplicates
        )
        return _undo_base_transpose(result, tuple(new_order))
    raise TypeError(
        f"{who}: the first argument must be an indexing expression such as x[1:3] or x[idx] "
        f"(the part of x to update), got {x}"
    )


def _is_permutation(order: Sequence[Any]) -> bool:
    return "x" not in order and sorted(order) == list(range(len(order)))


def _undo_base_transpose(result: TensorVariable, outer: tuple[Any, ...]) -> TensorVariable:
    """Transpose ``result`` back when its indexed base was a transposed tensor.

    ``take(t, i, axis)`` on an axis other than 0 is ``(t.T')[i].T''`` with ``T''`` the
    inverse of ``T'``; updating it gives a ``t.T'``-shaped result, and applying the
    outer permutation ``T''`` brings it back to ``t``'s layout.
    """
    base = result.owner.inputs[0] if result.owner is not None else None
    inner = getattr(getattr(base, "owner", None), "op", None)
    order = getattr(inner, "new_order", None)
    if order is None or not (_is_permutation(outer) and _is_permutation(order)):
        return result
    if len(order) != len(outer) or any(order[outer[k]] != k for k in range(len(outer))):
        return result
    return _dimshuffle(result, outer)


def set_subtensor(
    x: Any, y: Any, inplace: bool = False, tolerate_inplace_aliasing: bool = False
) -> TensorVariable:
    """Return the tensor that ``x`` indexes, with the indexed part replaced by ``y``.

    Parameters
    ----------
    x
        An indexing expression ``t[idx]``; the result has ``t``'s shape.
    y
        Values broadcastable to ``x``'s shape. Where an advanced index repeats a
        position, the last value written to it wins.
    inplace
        Build the in-place Op (normally left to rewrites).
    tolerate_inplace_aliasing
        Accepted for PyTensor compatibility; unused.

    Examples
    --------
    >>> r = set_subtensor(t[1:3], 0.0)  # doctest: +SKIP
    """
    return inc_subtensor(x, y, inplace=inplace, set_instead_of_inc=True)


def inc_subtensor(
    x: Any,
    y: Any,
    inplace: bool = False,
    set_instead_of_inc: bool = False,
    tolerate_inplace_aliasing: bool = False,
    ignore_duplicates: bool = False,
) -> TensorVariable:
    """Return the tensor that ``x`` indexes, with ``y`` added to the indexed part.

    Parameters
    ----------
    x
        An indexing expression ``t[idx]``; the result has ``t``'s shape.
    y
        Values broadcastable to ``x``'s shape.
    inplace
        Build the in-place Op (normally left to rewrites).
    set_instead_of_inc
        Replace instead of increment (:func:`set_subtensor`).
    tolerate_inplace_aliasing
        Accepted for PyTensor compatibility; unused.
    ignore_duplicates
        For an advanced index that repeats a position: ``False`` (the default) adds every
        repeat's value (``numpy.add.at(t, idx, y)``); ``True`` updates each position once,
        as ``t[idx] += y`` does in NumPy (the last repeat's value is added). Basic indices
        never repeat a position.

    Examples
    --------
    Row 0 gets 2 here, and 1 with ``ignore_duplicates=True``:

    >>> r = inc_subtensor(t[[0, 1, 0]], 1.0)  # doctest: +SKIP
    """
    who = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    x = as_tensor_variable(x)
    return _inner_update(x, y, inplace, set_instead_of_inc, who, ignore_duplicates)


# ====================================================================== helpers for callers


def slice_at_axis(sl: slice, axis: int) -> tuple[Any, ...]:
    """The index applying ``sl`` to dimension ``axis`` and nothing to the others.

    Parameters
    ----------
    sl
        The slice.
    axis
        The dimension; negative counts from the end.

    Returns
    -------
    tuple
        ``(slice(None),) * axis + (sl, ...)`` (or ``(..., sl) + (slice(None),) * k`` for
        ``axis = -1 - k``).

    Examples
    --------
    >>> slice_at_axis(slice(None, 1), 1)
    (slice(None, None, None), slice(None, 1, None), Ellipsis)
    """
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise TypeError(f"slice_at_axis: axis must be an int, got {axis!r}")
    if axis >= 0:
        return (slice(None),) * int(axis) + (sl, Ellipsis)
    return (Ellipsis, sl) + (slice(None),) * (-int(axis) - 1)


def flip(arr: Any, axis: int | Sequence[int] | None = None) -> TensorVariable:
    """``arr`` with the order of its elements reversed along ``axis`` (a view).

    Parameters
    ----------
    arr
        The tensor.
    axis
        An axis or a sequence of axes (negative count from the end); ``None`` (the
        default) flips every axis.

    Raises
    ------
    TypeError
        If ``axis`` is not ``None``, an int or a sequence of ints.
    ValueError
        If an axis is out of range or repeated.
    """
    arr = as_tensor_variable(arr)
    if axis is None:
        axes = set(range(arr.ndim))
    else:
        raw = [axis] if isinstance(axis, int | np.integer) else axis
        if not isinstance(raw, Sequence) or isinstance(axis, bool):
            raise TypeError(f"flip: axis must be None, an int or a sequence of ints, got {axis!r}")
        normalized = [_normalize_axis(a, arr.ndim, "flip") for a in raw]
        axes = set(normalized)
        if len(axes) != len(normalized):
            raise ValueError(f"flip: repeated axis in {axis!r}")
    return getitem(
        arr, tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(arr.ndim))
    )


def is_basic_idx(idx: Any) -> bool:
    """Whether the index entry ``idx`` is basic on its own: a slice or ``None`` (a Python
    one, or a variable of :class:`~opweave.tensor.type_other.SliceType` or
    :class:`~opweave.tensor.type_other.NoneTypeT`).

    An integer is not counted: next to an index array it takes part in advanced indexing.
    """
    return isinstance(idx, slice | type(None)) or isinstance(
        getattr(idx, "type", None), SliceType | NoneTypeT
    )


# ====================================================================== vectorization


def _advanced_entries_adjacent(key: Sequence[Any]) -> bool:
    """Whether the advanced entries (everything but slices and ``None``) of ``key`` are
    next to each other, so that NumPy keeps their result dimensions in place."""
    positions = [i for i, k in enumerate(key) if not isinstance(k, slice | type(None))]
    return not positions or positions[-1] - positions[0] + 1 == len(positions)


@_vectorize_node.register(Subtensor)
@_vectorize_node.register(AdvancedSubtensor)
@_vectorize_node.register(AdvancedSubtensor1)
def _vectorize_indexed_read(op: Op, node: Apply, x: Variable, *index_inputs: Variable) -> Any:
    """Index the batched tensor with full slices on its batch axes when only it gained
    batch dimensions (and the advanced entries are adjacent, so that NumPy's placement of
    their dimensions is unchanged); otherwise wrap the Op in a ``Blockwise``."""
    core_x, *core_indices = node.inputs
    indices_batched = any(
        tensor_type_of(new).ndim != tensor_type_of(old).ndim
        for old, new in zip(core_indices, index_inputs, strict=True)
    )
    batch_ndim = tensor_var(x).ndim - tensor_var(core_x).ndim
    if indices_batched or batch_ndim <= 0:
        return vectorize_node_fallback(op, node, x, *index_inputs)
    idx_list = getattr(op, "idx_list", None)
    if idx_list is None:
        key: tuple[Any, ...] = tuple(index_inputs)
    else:
        key = tuple(unflatten_index_variables(index_inputs, idx_list))
    if not isinstance(op, Subtensor) and not _advanced_entries_adjacent(key):
        return vectorize_node_fallback(op, node, x, *index_inputs)
    return [getitem(x, (slice(None),) * batch_ndim + key)]


# ====================================================================== pretty printing


def _index_text(idx_list: Sequence[IdxEntry], index_texts: Sequence[str]) -> str:
    """``idx_list`` as Python indexing text, its placeholders replaced by ``index_texts``."""
    texts = iter(index_texts)

    def one(c: Any) -> str:
        if c is None:
            return ""
        return next(texts) if is_placeholder(c) else str(c)

    parts = []
    for e in idx_list:
        if isinstance(e, slice):
            text = f"{one(e.start)}:{one(e.stop)}"
            if e.step is not None:
                text += f":{one(e.step)}"
            parts.append(text)
        else:
            parts.append(one(e))
    return ", ".join(parts)


class _IndexingPrinter(Printer):
    """Renders reads as ``x[idx]`` and writes as ``inc_subtensor(x[idx], y)`` or
    ``set_subtensor(x[idx], y)`` (PyTensor's ``pprint`` of the indexing Ops)."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        node = var.owner
        if node is None:
            raise TypeError(f"cannot print {var} as an indexing: it has no owner")
        op = node.op
        texts = [pstate.pprinter.process(inp, pstate) for inp in node.inputs]
        writes = isinstance(op, IncSubtensor | AdvancedIncSubtensor | AdvancedIncSubtensor1)
        first_index = 2 if writes else 1
        idx_list = getattr(op, "idx_list", None)
        if idx_list is None:  # the ``*1`` Ops: one index vector on the first axis
            index = texts[first_index]
        else:
            index = _index_text(idx_list, texts[first_index:])
        read = f"{texts[0]}[{index}]"
        if not writes:
            return read
        write_op = cast("IncSubtensor | AdvancedIncSubtensor | AdvancedIncSubtensor1", op)
        name = "set_subtensor" if write_op.set_instead_of_inc else "inc_subtensor"
        return f"{name}({read}, {texts[1]})"


for _indexing_op in (
    Subtensor,
    IncSubtensor,
    AdvancedSubtensor1,
    AdvancedIncSubtensor1,
    AdvancedSubtensor,
    AdvancedIncSubtensor,
):
    pprint.assign(_indexing_op, _IndexingPrinter())
del _indexing_op
