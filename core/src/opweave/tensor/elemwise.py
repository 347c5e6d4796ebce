"""Tensor Ops built from scalar Ops: :class:`Elemwise` (elementwise application with
broadcasting), :class:`CAReduce` (reduction over axes), and :class:`DimShuffle`.

Broadcasting follows NumPy's rules on *static* shapes, as in PyTensor: inputs of lower rank
are left-padded with new axes (a :class:`DimShuffle` with ``"x"`` entries), and a
dimension broadcasts when its static length is 1. Two different known lengths are an
error when the graph is built. At run time a dimension whose static length is unknown
must not silently broadcast (backends raise), so that gradients, which sum only over
statically broadcast dimensions, stay correct.

Python numbers mixed with tensors become constants whose dtype ``config.cast_policy``
chooses (:func:`opweave.scalar.convert`, as in PyTensor): under the default ``custom`` policy
the narrowest dtype holding the value, so ``float32 + 1.5`` is ``float32``, ``int8 * 2`` is
``int8`` and ``int8 + 1000`` is ``int16``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, cast

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

import opweave.scalar as ps
from opweave.configdefaults import config
from opweave.graph.basic import Apply, Constant, Variable
from opweave.graph.op import Op
from opweave.graph.replace import _vectorize_node
from opweave.graph.type import DisconnectedType, NullType
from opweave.printing import Printer, PrinterState
from opweave.scalar import Cast, ScalarOp, ScalarType, get_scalar_type
from opweave.scalar import second as scalar_second
from opweave.scalar.basic import grad_not_implemented
from opweave.scalar.complex import scalar_l_op
from opweave.tensor._typing import tensor_out, tensor_outs, tensor_type_of, tensor_var
from opweave.tensor.constructors import as_tensor_variable, constant
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.type import TensorType, continuous_dtypes, discrete_dtypes, float_dtypes
from opweave.tensor.variable import TensorVariable

__all__ = [
    "CAReduce",
    "DimShuffle",
    "DimShufflePrinter",
    "Elemwise",
    "FrozenDict",
    "cast_to",
    "fill_as",
    "get_normalized_batch_axes",
    "is_broadcast_constant",
    "scalar_elemwise",
    "zeros_like_float",
]


# ====================================================================== helpers


class FrozenDict(Mapping[int, int]):
    """An immutable, hashable ``{int: int}`` mapping (an Elemwise's ``inplace_pattern``)."""

    __slots__ = ("_hash", "_items")

    def __init__(self, items: Mapping[int, int] | None = None) -> None:
        data = dict(items or {})
        for k, v in data.items():
            if not isinstance(k, int | np.integer) or not isinstance(v, int | np.integer):
                raise TypeError(f"inplace_pattern must map output index to input index: {data}")
        self._items: dict[int, int] = {int(k): int(v) for k, v in sorted(data.items())}
        self._hash = hash(tuple(self._items.items()))

    def __getitem__(self, key: int) -> int:
        return self._items[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return self._hash

    def __getstate__(self) -> object:
        """The slots' values, so that pickle protocols 0 and 1 can copy it too."""
        return object.__getstate__(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._items == other._items
        if isinstance(other, Mapping):
            return self._items == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self._items)


def _as_tensor(x: Any) -> TensorVariable:
    return as_tensor_variable(x)


def _floatX() -> str:
    return str(config.floatX)


def _is_weak(x: Any) -> bool:
    """True for a Python number (not a NumPy scalar): its dtype adapts to the tensors."""
    return isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic)


def as_elemwise_inputs(inputs: Sequence[Any]) -> list[TensorVariable]:
    """Convert Elemwise inputs to tensor variables (:func:`as_tensor_variable`), as PyTensor does.

    Parameters
    ----------
    inputs
        Tensor variables, arrays, NumPy or Python scalars.

    Returns
    -------
    list of TensorVariable
        A Python number becomes a constant typed by ``config.cast_policy`` alone
        (:func:`opweave.scalar.convert`), whatever the other inputs; its dtype then takes
        part in the usual promotion (``bvector() + 1000`` is ``int16`` under the default
        ``custom`` policy).
    """
    return [_as_tensor(x) for x in inputs]


def fill_as(model: Variable, value: Any) -> TensorVariable:
    """``second(model, value)``: ``value`` broadcast to ``model``'s shape (PyTensor's ``fill``)."""
    return tensor_out(Elemwise(scalar_second)(model, value))


def cast_to(x: Any, dtype: str) -> TensorVariable:
    """``x`` converted elementwise to ``dtype`` (``x`` itself if it has that dtype already)."""
    xt = _as_tensor(x)
    dtype = np.dtype(dtype).name if dtype != "floatX" else _floatX()
    if xt.type.dtype == dtype:
        return xt
    return tensor_out(Elemwise(Cast(get_scalar_type(dtype), name=f"convert_to_{dtype}"))(xt))


def zeros_like_float(x: Variable, dtype: str | None = None) -> TensorVariable:
    """Zeros shaped like ``x``: of ``x``'s dtype when continuous, else of ``floatX``.

    This is the gradient of an input that does not change the output locally.
    """
    if dtype is None:
        x_dtype = tensor_type_of(x).dtype
        dtype = x_dtype if x_dtype in continuous_dtypes else _floatX()
    return fill_as(x, constant(0, dtype=dtype))


def _is_special_grad(v: Any) -> bool:
    return v is None or isinstance(v.type, NullType | DisconnectedType)


def _broadcast_shape(shapes: Sequence[tuple[int | None, ...]], what: object) -> tuple[Any, ...]:
    """The static shape of a broadcast of same-rank static ``shapes``; ``ValueError`` if
    two known lengths differ on an axis (``what``, formatted only then, names the Op)."""
    out: list[int | None] = []
    for axis, lengths in enumerate(zip(*shapes)):
        known = {n for n in lengths if n is not None and n != 1}
        if len(known) > 1:
            described = ", ".join(str(tuple(s)) for s in shapes)
            raise ValueError(
                f"{what}: incompatible static shapes on axis {axis}: lengths "
                f"{sorted(known)} cannot broadcast together (Incompatible Elemwise input "
                f"shapes [{described}])"
            )
        if known:
            out.append(known.pop())
        elif all(n == 1 for n in lengths):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


def left_pad(x: TensorVariable, ndim: int) -> TensorVariable:
    """``x`` with new broadcastable axes in front, up to ``ndim`` dimensions."""
    missing = ndim - x.type.ndim
    if missing <= 0:
        return x
    order: list[int | str] = ["x"] * missing
    order += range(x.type.ndim)
    return tensor_out(DimShuffle(x.type.ndim, order)(x))


def sum_to_broadcast(term: Variable, like: Variable, out_shape: tuple[Any, ...]) -> TensorVariable:
    """Sum ``term`` (shaped like the broadcast output) over the axes ``like`` broadcast on."""
    axes = [j for j, n in enumerate(tensor_type_of(like).shape) if n == 1 and out_shape[j] != 1]
    if not axes:
        return tensor_var(term)
    # late: opweave.tensor.reductions builds on this module (same floor, above it)
    from opweave.tensor.reductions import sum as tensor_sum

    return tensor_sum(term, axis=axes, keepdims=True)


# ====================================================================== Elemwise


class Elemwise(Op):
    """Apply a scalar Op to every element of its (broadcast) tensor inputs.

    Parameters
    ----------
    scalar_op
        The :class:`~opweave.scalar.ScalarOp` applied to each element.
    inplace_pattern
        ``{output index: input index}``: each such output is computed in the storage of
        that input, which is destroyed (``destroy_map``). The input must have the
        output's dtype and must not be broadcast.
    name
        A name for documentation (not part of the Op's identity).

    Notes
    -----
    ``Elemwise(add)(x, y)`` is ``x + y``; ``Elemwise(add, {0: 0})`` is ``x += y``. Inputs
    of lower rank are left-padded with broadcastable axes. The output dtypes are the
    scalar Op's output dtypes; the static shape on each axis is the known length of a
    non-broadcast input, 1 if every input has length 1, else unknown.
    """

    __props__ = ("scalar_op", "inplace_pattern")

    def __init__(
        self,
        scalar_op: ScalarOp,
        inplace_pattern: Mapping[int, int] | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(scalar_op, Elemwise) or not isinstance(scalar_op, Op):
            raise TypeError(f"Elemwise needs a scalar Op, got {scalar_op!r}")
        self.scalar_op = scalar_op
        self.inplace_pattern = FrozenDict(inplace_pattern)
        # Per instance: which outputs overwrite which inputs is a parameter.
        self.destroy_map = {o: [i] for o, i in self.inplace_pattern.items()}
        self.name = name
        self.nout = getattr(scalar_op, "nout", 1)
        self.nin = getattr(scalar_op, "nin", -1)

    def __str__(self) -> str:
        """The scalar Op's name, capitalised, as PyTensor prints it: ``Add``, ``Exp``,
        ``Cast{int32}``, ``Composite{exp((i0 + i1))}``.

        The in-place version prints the same (its ``destroy_map`` tells them apart), and
        ``name`` is documentation only. A trailing underscore, which keeps a scalar Op's
        name clear of a Python keyword (``and_``, ``or_``), is dropped: ``And``, ``Or``.
        """
        return str(self.scalar_op).rstrip("_").capitalize()

    # ------------------------------------------------------------------ graph

    def outer(self, x: Any, y: Any) -> Any:
        """The Op applied to every pair of an element of ``x`` and one of ``y``, as
        :meth:`numpy.ufunc.outer`: the result has shape ``x.shape + y.shape``.

        Raises
        ------
        TypeError
            If the Op does not take two inputs.
        """
        if self.nin not in (-1, 2):
            raise TypeError(f"{self}.outer needs an Op of two inputs; this one takes {self.nin}")
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        x_expanded = DimShuffle(input_ndim=x.ndim, new_order=[*range(x.ndim), *"x" * y.ndim])(x)
        return self(x_expanded, y)

    def make_node(self, *inputs: Any) -> Apply:
        """Broadcast the inputs and build the outputs.

        Raises
        ------
        TypeError
            For a wrong number of inputs, dtypes the scalar Op rejects, or an inplace
            output whose dtype differs from its input's.
        ValueError
            For static shapes that cannot broadcast, or an inplace input that is broadcast.
        """
        if self.nin >= 0 and len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} input(s), got {len(inputs)}")
        if not inputs:
            raise TypeError(f"{self} needs at least one input")
        tensors = as_elemwise_inputs(inputs)
        ndim = max(t.type.ndim for t in tensors)
        padded = [left_pad(t, ndim) for t in tensors]
        dtypes = [t.type.dtype for t in padded]
        try:
            out_dtypes = self._output_dtypes(dtypes)
        except TypeError as exc:
            raise TypeError(
                f"{self} cannot be applied to inputs of dtypes ({', '.join(dtypes)}): {exc}"
            ) from exc
        out_shape = _broadcast_shape([t.type.shape for t in padded], self)
        for o, i in self.inplace_pattern.items():
            if not (0 <= o < len(out_dtypes) and 0 <= i < len(padded)):
                raise ValueError(f"{self}: inplace_pattern refers to a missing output or input")
            if out_dtypes[o] != dtypes[i]:
                raise TypeError(
                    f"{self}: output {o} (dtype {out_dtypes[o]}) cannot be computed in place in "
                    f"input {i} of dtype {dtypes[i]}"
                )
            in_shape = padded[i].type.shape
            if any(s == 1 and n != 1 for s, n in zip(in_shape, out_shape)):
                raise ValueError(
                    f"{self}: input {i} (static shape {in_shape}) is broadcast to the output's "
                    f"{out_shape}, so the output cannot be computed in place in it"
                )
        outputs = [TensorType(d, shape=out_shape)() for d in out_dtypes]
        return Apply(self, padded, outputs)

    def _output_dtypes(self, dtypes: Sequence[str]) -> list[str]:
        """The scalar Op's output dtypes for inputs of ``dtypes``: from its Types alone when
        its ``make_node`` is the base class's (which checks the arity and asks
        ``output_types``), else from a node of scalar variables made by its own."""
        scalar_op = self.scalar_op
        if type(scalar_op).make_node is ScalarOp.make_node:
            nin = scalar_op.nin
            if nin >= 0 and len(dtypes) != nin:
                raise TypeError(f"{scalar_op} takes {nin} input(s), got {len(dtypes)}")
            return [t.dtype for t in scalar_op.output_types([get_scalar_type(d) for d in dtypes])]
        shadow = scalar_op.make_node(*[get_scalar_type(d)() for d in dtypes])
        return [cast(ScalarType, o.type).dtype for o in shadow.outputs]

    @staticmethod
    def axis_source(node: Apply, axis: int) -> int | None:
        """The input whose length on ``axis`` is the outputs' (the first one not
        statically broadcast there), or ``None`` when every input is (the length is 1)."""
        for k, inp in enumerate(node.inputs):
            if tensor_type_of(inp).shape[axis] != 1:
                return k
        return None

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """Each output axis: a known static length, else the first non-broadcast input's."""
        out_shape: list[Any] = []
        static = tensor_type_of(node.outputs[0]).shape
        for axis, length in enumerate(static):
            if length is not None:
                out_shape.append(length)
                continue
            source = self.axis_source(node, axis)
            out_shape.append(1 if source is None else shapes[source][axis])
        return [tuple(out_shape)] * len(node.outputs)

    def connection_pattern(self, node: Apply) -> list[list[bool]]:
        """The scalar Op's connection pattern when it has one, else all connected."""
        pattern = getattr(self.scalar_op, "connection_pattern", None)
        if pattern is not None:
            connections: list[list[bool]] = pattern(node)
            return connections
        return [[True] * len(node.outputs) for _ in node.inputs]

    # ------------------------------------------------------------------ gradients

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """The scalar Op's gradient graph rebuilt with Elemwise Ops, summed over the axes
        each input was broadcast on, and cast to a float input's dtype.

        A discrete output is locally constant. When no continuous output carries a
        gradient (every output is discrete, or the cost reaches the node only through its
        discrete outputs), the inputs get zero gradients, unless the scalar Op reports them
        undefined (``NullType``) or disconnected (``DisconnectedType``). Otherwise the
        scalar Op's gradient is used as it is, so an Op with a float and an int output
        differentiates through its float output.
        """
        rval = self._bgrad(inputs, outputs, output_grads)
        carried = [
            tensor_type_of(o).dtype in continuous_dtypes and not _is_special_grad(g)
            for o, g in zip(outputs, output_grads)
        ]
        if not any(carried):
            return [g if _is_special_grad(g) else zeros_like_float(x) for g, x in zip(rval, inputs)]
        out_shape = tensor_type_of(outputs[0]).shape
        result: list[Variable] = []
        for g, x in zip(rval, inputs):
            if _is_special_grad(g):
                result.append(g)
                continue
            g = sum_to_broadcast(g, x, out_shape)
            x_dtype = tensor_type_of(x).dtype
            if x_dtype in float_dtypes and g.type.dtype in float_dtypes:
                g = cast_to(g, x_dtype)
            result.append(g)
        return result

    def _bgrad(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Any]:
        """Gradients with respect to the broadcast inputs (shaped like the output)."""

        def as_scalar(t: Variable) -> Variable:
            if isinstance(t.type, NullType | DisconnectedType):
                return t
            return get_scalar_type(tensor_type_of(t).dtype)()

        scalar_inputs = [as_scalar(x) for x in inputs]
        scalar_ograds = [as_scalar(g) for g in output_grads]
        scalar_outputs = self.scalar_op.make_node(*scalar_inputs).outputs
        # the scalar Op's gradient, with PyTensor's convention for complex values
        scalar_igrads = scalar_l_op(self.scalar_op, scalar_inputs, scalar_outputs, scalar_ograds)
        if not isinstance(scalar_igrads, list | tuple) or len(scalar_igrads) != len(inputs):
            raise TypeError(
                f"{self.scalar_op}.L_op returned {scalar_igrads!r}: expected one term per input"
            )
        known: dict[Variable, Variable] = {}
        for s, t in zip(scalar_inputs, inputs):
            known[s] = t
        for s, t in zip(scalar_outputs, outputs):
            known[s] = t
        for s, t in zip(scalar_ograds, output_grads):
            known[s] = t

        def transform(r: Variable) -> Variable:
            if isinstance(r.type, NullType | DisconnectedType):
                return r
            if r in known:
                return known[r]
            node = r.owner
            if node is None:
                if not isinstance(r, Constant):
                    raise ValueError(f"{self.scalar_op}'s gradient uses the free variable {r}")
                # a constant of the scalar gradient graph
                scalar_type = cast(ScalarType, r.type)
                res: Variable = constant(np.asarray(r.data), dtype=scalar_type.dtype)
            else:
                args = [transform(i) for i in node.inputs]
                # an output of a scalar Op of the scalar gradient graph
                scalar_op, index = cast(ScalarOp, node.op), cast(int, r.index)
                res = tensor_outs(Elemwise(scalar_op)(*args, return_list=True))[index]
            known[r] = res
            return res

        return [None if g is None else transform(g) for g in scalar_igrads]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]) -> list[Any]:
        """``sum_j d out / d in_j * eval_point_j`` for each output."""
        outs = tensor_outs(self(*inputs, return_list=True))
        rval: list[Any] = []
        for idx, out in enumerate(outs):
            ograds = [zeros_like_float(o) for o in outs]
            ograds[idx] = fill_as(out, constant(1, dtype=ograds[idx].type.dtype))
            bgrads = self._bgrad(inputs, outs, ograds)
            total: Any = None
            for g, ev in zip(bgrads, eval_points):
                if ev is None or _is_special_grad(g):
                    continue
                term = Elemwise(ps.mul)(g, ev)
                total = term if total is None else Elemwise(ps.add)(total, term)
            rval.append(total)
        return rval


# ====================================================================== CAReduce


def normalize_axis(axis: Any, ndim: int, what: str) -> tuple[int, ...]:
    """``axis`` (``None``, an int, or a list, tuple, range or array of ints, possibly
    negative) as sorted axes.

    Raises
    ------
    ValueError
        For an axis out of ``[-ndim, ndim)`` or a repeated axis.
    TypeError
        For non-integer axes.
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Variable):
        axis = getattr(axis, "data", axis)
    if isinstance(axis, np.ndarray):
        axis = axis.tolist()
    items = list(axis) if isinstance(axis, list | tuple | range) else [axis]
    result: list[int] = []
    for a in items:
        if isinstance(a, Variable):
            a = getattr(a, "data", a)
        if not isinstance(a, int | np.integer) or isinstance(a, bool):
            a_arr = np.asarray(a)
            if a_arr.ndim != 0 or a_arr.dtype.kind not in "iu":
                raise TypeError(f"{what}: axis entries must be ints, got {a!r}")
            a = a_arr.item()
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(
                f"{what}: axis {a} is out of range for an input with {ndim} dimensions"
            )
        a = a % ndim if ndim else a
        if a in result:
            raise ValueError(f"{what}: repeated axis {a} in {axis!r}")
        result.append(a)
    return tuple(sorted(result))


class CAReduce(Op):
    """Reduce the given axes of a tensor with an associative binary scalar Op.

    Parameters
    ----------
    scalar_op
        A binary scalar Op (``add``, ``mul``, ``maximum``, ``and_``, ...). Its ``identity``
        is the value of a reduction over an empty axis.
    axis
        An axis, several axes (negative ones count from the end), or ``None`` for all.
    dtype
        The output dtype (default: the scalar Op's output dtype for the input's dtype).
    acc_dtype
        The dtype accumulated in (default: the output dtype).

    Notes
    -----
    ``make_node`` returns a node whose Op has ``axis``, ``dtype`` and ``acc_dtype``
    resolved (sorted non-negative axes, concrete dtypes), so backends never guess them.
    """

    __props__: tuple[str, ...] = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(
        self,
        scalar_op: ScalarOp,
        axis: int | Sequence[int] | None = None,
        dtype: Any = None,
        acc_dtype: Any = None,
    ) -> None:
        if not isinstance(scalar_op, Op) or getattr(scalar_op, "nin", 2) not in (-1, 2):
            raise TypeError(f"{type(self).__name__} needs a binary scalar Op, got {scalar_op!r}")
        self.scalar_op = scalar_op
        self.axis = self._parse_axis(axis)
        self.dtype = None if dtype is None else _dtype_name(dtype)
        self.acc_dtype = None if acc_dtype is None else _dtype_name(acc_dtype)

    def _parse_axis(self, axis: Any) -> tuple[int, ...] | None:
        if axis is None:
            return None
        items = [axis] if isinstance(axis, int | np.integer) else list(axis)
        for a in items:
            if not isinstance(a, int | np.integer) or isinstance(a, bool):
                raise TypeError(f"{type(self).__name__}: axis entries must be ints, got {a!r}")
        parsed = tuple(int(a) for a in items)
        if len(set(parsed)) != len(parsed):
            raise ValueError(f"{type(self).__name__}: repeated axis in {parsed}")
        return parsed

    def _axis_str(self) -> str:
        """``axes=None``, ``axis=0`` or ``axes=[0, 1]``."""
        if self.axis is None:
            return "axes=None"
        if len(self.axis) == 1:
            return f"axis={self.axis[0]}"
        return f"axes={list(self.axis)}"

    def __str__(self) -> str:
        """PyTensor's names: ``CAReduce{add, axis=0}`` for a reduction built from a scalar
        Op, ``Sum{axes=None}`` for a class that fixes its scalar Op in its constructor, with
        ``, acc=<dtype>`` added when it accumulates in another dtype than its output's."""
        parts = [self._axis_str()]
        if type(self).__init__ is CAReduce.__init__:
            parts.insert(0, str(self.scalar_op))
        if self.acc_dtype != self.dtype:
            parts.append(f"acc={self.acc_dtype}")
        return f"{type(self).__name__}{{{', '.join(parts)}}}"

    # ------------------------------------------------------------------ dtypes

    def _output_dtype(self, idtype: str) -> str:
        """The default output dtype for an input of ``idtype``."""
        t = get_scalar_type(idtype)
        out_type = cast(ScalarType, self.scalar_op.make_node(t(), t()).outputs[0].type)
        return str(out_type.dtype)

    def _acc_dtype(self, idtype: str, out_dtype: str) -> str:
        """The default accumulation dtype."""
        return out_dtype

    def _prepare_input(self, x: Variable) -> Variable:
        """Hook for subclasses that convert the input first (``All`` casts to bool)."""
        return x

    def clone(self, **changes: Any) -> CAReduce:
        """A copy with some of ``axis``, ``dtype`` and ``acc_dtype`` replaced."""
        new = copy.copy(self)
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    # ------------------------------------------------------------------ graph

    def make_node(self, x: Any) -> Apply:
        """Check the axes against the input's rank; drop the reduced axes.

        Raises
        ------
        ValueError
            For an axis out of range.
        TypeError
            For an accumulation dtype narrower than the input's.
        """
        x = self._prepare_input(_as_tensor(x))
        ndim = x.type.ndim
        axis = (
            self._scalar_input_axes() if ndim == 0 else normalize_axis(self.axis, ndim, str(self))
        )
        if self.axis is None:
            axis_prop: tuple[int, ...] | None = None
        else:
            axis_prop = axis
        out_dtype = self.dtype or self._output_dtype(x.type.dtype)
        default_acc = self._acc_dtype(x.type.dtype, out_dtype)
        acc_dtype = self.acc_dtype or default_acc
        if (
            acc_dtype != default_acc
            and np.result_type(x.type.dtype, acc_dtype) != np.dtype(acc_dtype)
            and not (x.type.dtype == "bool" and acc_dtype != "bool")
            # as PyTensor: a float or complex accumulator for integers is always accepted
            and not (x.type.dtype in discrete_dtypes and acc_dtype in continuous_dtypes)
        ):
            raise TypeError(
                f"{self}: cannot accumulate an input of dtype {x.type.dtype} in {acc_dtype} "
                "without losing precision; choose a wider acc_dtype"
            )
        op = self
        if (axis_prop, out_dtype, acc_dtype) != (self.axis, self.dtype, self.acc_dtype):
            op = self.clone(axis=axis_prop, dtype=out_dtype, acc_dtype=acc_dtype)
        shape = tuple(n for i, n in enumerate(x.type.shape) if i not in axis)
        return Apply(op, [x], [TensorType(out_dtype, shape=shape)()])

    def _scalar_input_axes(self) -> tuple[int, ...]:
        """The axes reduced for a 0-d input: none, whether ``axis`` is ``None``, ``0`` or
        ``-1`` (the input is its own reduction, as in PyTensor).

        Raises
        ------
        numpy.exceptions.AxisError
            For any other axis.
        """
        if self.axis is None or all(a in (0, -1) for a in self.axis):
            return ()
        raise np.exceptions.AxisError(
            f"axis {tuple(self.axis)} is out of bounds for array of dimension 0"
        )

    def reduced_axes(self, ndim: int) -> tuple[int, ...]:
        """The axes reduced for an input of rank ``ndim``."""
        return normalize_axis(self.axis, ndim, str(self))

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The input shape without the reduced axes."""
        (ishape,) = shapes
        axes = self.reduced_axes(len(ishape))
        return [tuple(n for i, n in enumerate(ishape) if i not in axes)]

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        """Not implemented for a general scalar Op (``Sum``, ``Prod``, ``Max``... define it)."""
        return [grad_not_implemented(self, 0, inputs[0], "use Sum, Prod, Max or Min")]

    def expand_reduced(self, g: Variable, ndim: int) -> Variable:
        """``g`` (shaped like the output) with the reduced axes put back with length 1."""
        axes = self.reduced_axes(ndim)
        order: list[int | str] = []
        k = 0
        for i in range(ndim):
            if i in axes:
                order.append("x")
            else:
                order.append(k)
                k += 1
        return tensor_out(DimShuffle(tensor_type_of(g).ndim, order)(g))


def _dtype_name(dtype: Any) -> str:
    if isinstance(dtype, str) and dtype == "floatX":
        return _floatX()
    return str(np.dtype(dtype).name)


def is_discrete(x: Variable) -> bool:
    """True if ``x`` has a bool or integer dtype."""
    return tensor_type_of(x).dtype in discrete_dtypes


def is_broadcast_constant(var: Variable) -> bool:
    """Whether ``var`` is a constant, possibly broadcast (a ``DimShuffle`` of a constant).

    An integer power whose exponent is such a constant wraps around in the base's dtype
    (see :class:`~opweave.scalar.basic.Pow`): the backends ask this of a node's inputs.
    """
    while not isinstance(var, Constant):
        owner = var.owner
        if owner is None or not isinstance(owner.op, DimShuffle):
            return False
        var = owner.inputs[0]
    return True


# ====================================================================== vectorization
# Rules for :func:`opweave.graph.replace.vectorize_graph`: batch dimensions come first.


def _batch_ndim(core: Variable, batched: Variable) -> int:
    return int(tensor_type_of(batched).ndim - tensor_type_of(core).ndim)


@_vectorize_node.register(Elemwise)
def vectorize_elemwise(op: Elemwise, node: Apply, *batched_inputs: Variable) -> Apply:
    """Elemwise broadcasts by itself: inputs with fewer batch dimensions are padded on the
    left. An in-place Elemwise whose inputs gained dimensions is rebuilt out of place (the
    input it would overwrite may now be broadcast)."""
    if op.inplace_pattern and any(
        _batch_ndim(core, new) for core, new in zip(node.inputs, batched_inputs)
    ):
        op = Elemwise(op.scalar_op, name=op.name)
    return op.make_node(*batched_inputs)


@_vectorize_node.register(DimShuffle)
def vectorize_dimshuffle(op: DimShuffle, node: Apply, x: Variable) -> Apply:
    """The batch dimensions stay in front; the core ones are shuffled as before."""
    batch = _batch_ndim(node.inputs[0], x)
    if not batch:
        return op.make_node(x)
    order = [*range(batch), *("x" if a == "x" else int(a) + batch for a in op.new_order)]
    return DimShuffle(tensor_type_of(x).ndim, order).make_node(x)


def get_normalized_batch_axes(
    core_axes: int | Sequence[int] | None, core_ndim: int, batch_ndim: int
) -> tuple[int, ...]:
    """The axes of a batched input that the core axes of an operation become.

    Parameters
    ----------
    core_axes
        Axes of the core input (negative ones count from its end); ``None`` is all of them.
    core_ndim
        The number of dimensions of the core input.
    batch_ndim
        The number of batch dimensions put in front of it.

    Returns
    -------
    tuple of int
        E.g. ``get_normalized_batch_axes(None, 2, 4) == (4, 5)`` and
        ``get_normalized_batch_axes((0, -1), 3, 1) == (1, 3)``.

    Raises
    ------
    numpy.exceptions.AxisError
        When an axis is out of range for ``core_ndim`` dimensions.
    """
    if core_axes is None:
        axes: tuple[int, ...] = tuple(range(core_ndim))
    else:
        axes = normalize_axis_tuple(core_axes, core_ndim)
    return tuple(axis + batch_ndim for axis in axes)


@_vectorize_node.register(CAReduce)
def vectorize_careduce(op: CAReduce, node: Apply, x: Variable) -> Apply:
    """The same reduction over the core axes, moved past the batch dimensions."""
    core_ndim = tensor_type_of(node.inputs[0]).ndim
    batch = _batch_ndim(node.inputs[0], x)
    if not batch:
        return op.make_node(x)
    axes = normalize_axis(op.axis, core_ndim, str(op))
    return op.clone(axis=get_normalized_batch_axes(axes, core_ndim, batch)).make_node(x)


# ====================================================================== PyTensor's helpers


def scalar_elemwise(
    *symbol: Callable[..., Any],
    nfunc: str | None = None,
    nin: int | None = None,
    nout: int | None = None,
    symbolname: str | None = None,
) -> Any:
    """Decorator turning a function stub into the :class:`Elemwise` of the scalar Op of
    :mod:`opweave.scalar` with the stub's name (or ``symbolname``).

    ``@scalar_elemwise`` and ``@scalar_elemwise(symbolname="exp")`` both work; the
    Elemwise takes the stub's docstring and module. ``nfunc``, ``nin`` and ``nout`` name
    an equivalent NumPy function and its arities; they are kept as the Elemwise's
    ``nfunc_spec`` for reference only.

    Raises
    ------
    ValueError
        For a name ending in ``_inplace`` (in-place Elemwise are made by rewrites).
    AttributeError
        When :mod:`opweave.scalar` has no Op of that name.
    TypeError
        When that name is not a scalar Op.
    """

    def construct(stub: Callable[..., Any]) -> Elemwise:
        name = symbolname or stub.__name__
        if name.endswith("_inplace"):
            raise ValueError("Creation of automatic inplace elemwise operations deprecated")
        scalar_op = getattr(ps, name, None)
        if scalar_op is None:
            raise AttributeError(f"scalar_elemwise: opweave.scalar has no scalar Op {name!r}")
        if not isinstance(scalar_op, ScalarOp):
            raise TypeError(
                f"scalar_elemwise: opweave.scalar.{name} is {scalar_op!r}, not a scalar Op"
            )
        op = Elemwise(scalar_op)
        op.nfunc_spec = (nfunc, nin, nout) if nfunc else None  # type: ignore[attr-defined]
        if stub.__doc__:
            op.__doc__ = stub.__doc__
        op.__module__ = stub.__module__
        return op

    return construct(symbol[0]) if symbol else construct


class DimShufflePrinter(Printer):
    """Pretty-prints a :class:`DimShuffle`: leading new axes are not shown, an identity
    order prints its input, a full reversal ``x.T``, any other order
    ``DimShuffle{1, x, 0}(x)``."""

    def process(self, var: Variable, pstate: PrinterState) -> str:
        """The text of ``var``, an output of a DimShuffle.

        Raises
        ------
        TypeError
            When ``var`` is not computed by a DimShuffle.
        """
        node = var.owner
        if node is None or not isinstance(node.op, DimShuffle):
            raise TypeError("Can only print DimShuffle.")
        order = list(node.op.new_order)
        while order and order[0] == "x":
            order.pop(0)
        (x,) = node.inputs
        ndim = tensor_type_of(x).ndim
        text = pstate.pprinter.process(x, pstate)
        if order == list(range(ndim)):
            return str(text)
        if order == list(range(ndim))[::-1]:
            return f"{text}.T"
        return f"DimShuffle{{{', '.join(str(o) for o in order)}}}({text})"
