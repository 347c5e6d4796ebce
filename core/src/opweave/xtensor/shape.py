"""Shape operations on named-dimension tensors: reorder, merge, split, add and drop dims.

The Ops here are :class:`~opweave.xtensor.basic.XOp` s: they only describe the result's
dims and static shape, and :mod:`opweave.xtensor.rewriting.shape` lowers each of them to
tensor Ops before a function is linked. The public functions follow xarray's
``DataArray`` methods of the same names, without coordinates.
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Mapping, Sequence
from types import EllipsisType
from typing import Any, Literal

import numpy as np

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.scalar import discrete_dtypes, upcast
from opweave.tensor import as_tensor, cast, get_scalar_constant_value
from opweave.tensor.exceptions import NotScalarConstantError
from opweave.tensor.type import integer_dtypes
from opweave.tensor.utils import get_static_shape_from_size_variables
from opweave.tensor.variable import TensorVariable
from opweave.xtensor.basic import XOp, tensor_from_xtensor, xtensor_from_tensor
from opweave.xtensor.type import XTensorVariable, as_xtensor, xtensor

__all__ = [
    "Broadcast",
    "Concat",
    "ExpandDims",
    "Squeeze",
    "Stack",
    "Transpose",
    "UnStack",
    "broadcast",
    "broadcast_like",
    "concat",
    "expand_dims",
    "full_like",
    "ones_like",
    "squeeze",
    "stack",
    "transpose",
    "unstack",
    "zeros_like",
]


def _combined_sizes(
    inputs: Sequence[XTensorVariable], exclude: Sequence[str] = (), kind: str = "Dimension"
) -> dict[str, int | None]:
    """The dims of ``inputs`` in order of first appearance, with their static lengths.

    A dim's length is the first static length any input gives it (``None`` if none does);
    dims in ``exclude`` are left out.

    Raises
    ------
    ValueError
        If two inputs give a dim different static lengths (the message calls the dim a
        ``kind``).
    """
    sizes: dict[str, int | None] = {}
    for inp in inputs:
        for dim, length in zip(inp.type.dims, inp.type.shape, strict=True):
            if dim in exclude:
                continue
            known = sizes.get(dim)
            if dim not in sizes or known is None:
                sizes[dim] = length
            elif length is not None and length != known:
                raise ValueError(f"{kind} {dim} has conflicting shapes: {known} and {length}")
    return sizes


def _outputs(op: Op, *inputs: Any) -> list[XTensorVariable]:
    """The outputs of a node of ``op`` on ``inputs``."""
    outputs = op(*inputs, return_list=True)
    assert isinstance(outputs, list)
    return [typing.cast(XTensorVariable, out) for out in outputs]


def _output(op: Op, *inputs: Any) -> XTensorVariable:
    """The only output of a node of ``op`` on ``inputs``."""
    [out] = _outputs(op, *inputs)
    return out


def _size_tensor(length: Any) -> TensorVariable:
    """``length`` (an int, a tensor or a 0-d xtensor) as a tensor variable."""
    if isinstance(length, XTensorVariable):
        return length.values
    return as_tensor(length)


def _xtensor(x: Any) -> XTensorVariable:
    """``x`` as an xtensor variable (see :func:`~opweave.xtensor.type.as_xtensor`)."""
    out: XTensorVariable = as_xtensor(x)
    return out


class Stack(XOp):
    """Merge the dims ``stacked_dims`` into one new last dim ``new_dim_name``.

    The merged dim runs over the stacked dims in C order (the last stacked dim varies
    fastest); the other dims keep their order.

    Parameters
    ----------
    new_dim_name
        Name of the new dim.
    stacked_dims
        The dims merged into it, in the order that defines the merge.
    """

    __props__ = ("new_dim_name", "stacked_dims")

    def __init__(self, new_dim_name: str, stacked_dims: tuple[str, ...]):
        super().__init__()
        if new_dim_name in stacked_dims:
            raise ValueError(f"Stacking dim {new_dim_name} must not be in {stacked_dims}")
        if not stacked_dims:
            raise ValueError(f"Stacking dims must not be empty: got {stacked_dims}")
        if len(set(stacked_dims)) != len(stacked_dims):
            raise ValueError(f"Stacking dims must not repeat: got {stacked_dims}")
        self.new_dim_name = new_dim_name
        self.stacked_dims = tuple(stacked_dims)

    def make_node(self, x: Any) -> Apply:
        x = _xtensor(x)
        if not set(self.stacked_dims) <= set(x.type.dims):
            raise ValueError(f"Stacking dims {self.stacked_dims} must be a subset of {x.type.dims}")
        if self.new_dim_name in x.type.dims:
            raise ValueError(f"Stacking dim {self.new_dim_name} must not be in {x.type.dims}")
        kept = [
            (dim, length)
            for dim, length in zip(x.type.dims, x.type.shape, strict=True)
            if dim not in self.stacked_dims
        ]
        stacked_length: int | None = 1
        for dim, length in zip(x.type.dims, x.type.shape, strict=True):
            if dim in self.stacked_dims:
                stacked_length = (
                    None if length is None or stacked_length is None else (stacked_length * length)
                )
        output = xtensor(
            dtype=x.type.dtype,
            dims=(*(dim for dim, _ in kept), self.new_dim_name),
            shape=(*(length for _, length in kept), stacked_length),
        )
        return Apply(self, [x], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same stack of the batched input (new dims stay in front)."""
        return list(_outputs(self, *new_inputs))


def stack(
    x: Any, /, dim: Mapping[str, Sequence[str]] | None = None, **dims: Sequence[str]
) -> XTensorVariable:
    """Merge groups of dims into new dims (xarray's ``DataArray.stack``).

    Parameters
    ----------
    x
        The variable.
    dim
        A mapping from each new dim's name to the dims it merges; give either it or
        ``**dims``.
    **dims
        The same mapping as keyword arguments.

    Returns
    -------
    XTensorVariable
        ``x`` with each group replaced by its new dim, added last, in the order given.

    Raises
    ------
    ValueError
        If both ``dim`` and ``**dims`` are given, or a group is empty, has a dim ``x``
        lacks, or the new name is already a dim.
    TypeError
        If a group is a single string rather than a sequence of names.
    """
    if dim is not None:
        if dims:
            raise ValueError("Cannot use both positional dim and keyword dims in stack")
        dims = dict(dim)
    y = _xtensor(x)
    for new_dim_name, stacked_dims in dims.items():
        if isinstance(stacked_dims, str):
            raise TypeError(
                f"Stacking dims must be a sequence of strings, got a single string: {stacked_dims}"
            )
        y = _output(Stack(new_dim_name, tuple(stacked_dims)), y)
    return y


class UnStack(XOp):
    """Split the dim ``old_dim_name`` into the new last dims ``unstacked_dims``.

    The lengths of the new dims are inputs of the node (after the variable); the split is
    in C order, the inverse of :class:`Stack`.

    Parameters
    ----------
    old_dim_name
        The dim that is split.
    unstacked_dims
        The names of the dims it is split into (two or more).
    """

    __props__ = ("old_dim_name", "unstacked_dims")

    def __init__(self, old_dim_name: str, unstacked_dims: tuple[str, ...]):
        super().__init__()
        if old_dim_name in unstacked_dims:
            raise ValueError(f"Dim to be unstacked {old_dim_name} can't be in {unstacked_dims}")
        if not unstacked_dims:
            raise ValueError("Dims to unstack into can't be empty.")
        if len(unstacked_dims) == 1:
            raise ValueError("Only one dimension to unstack into, use rename instead")
        self.old_dim_name = old_dim_name
        self.unstacked_dims = tuple(unstacked_dims)

    def make_node(self, x: Any, *unstacked_length: Any) -> Apply:
        x = _xtensor(x)
        if self.old_dim_name not in x.type.dims:
            raise ValueError(f"Dim to unstack {self.old_dim_name} must be in {x.type.dims}")
        if not set(self.unstacked_dims).isdisjoint(x.type.dims):
            raise ValueError(
                f"Dims to unstack into {self.unstacked_dims} must not be in {x.type.dims}"
            )
        if len(unstacked_length) != len(self.unstacked_dims):
            raise ValueError(
                f"Number of unstacked lengths {len(unstacked_length)} must match number of "
                f"unstacked dims {len(self.unstacked_dims)}"
            )
        lengths = [_size_tensor(length) for length in unstacked_length]
        if not all(length.type.dtype in discrete_dtypes for length in lengths):
            raise TypeError("Unstacked lengths must be discrete dtypes.")
        if not all(length.type.ndim == 0 for length in lengths):
            raise ValueError("Unstacked lengths must be scalars.")
        kept = [
            (dim, length)
            for dim, length in zip(x.type.dims, x.type.shape, strict=True)
            if dim != self.old_dim_name
        ]
        output = xtensor(
            dtype=x.type.dtype,
            dims=(*(dim for dim, _ in kept), *self.unstacked_dims),
            shape=(
                *(length for _, length in kept),
                *get_static_shape_from_size_variables(lengths),
            ),
        )
        return Apply(self, [x, *lengths], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same split of the batched input; the lengths must stay scalars."""
        new_x, *new_lengths = new_inputs
        lengths = [as_tensor(length).squeeze() for length in new_lengths]
        if not all(length.type.ndim == 0 for length in lengths):
            raise NotImplementedError(
                f"Vectorization of {self} with batched unstacked_length not implemented"
            )
        return list(_outputs(self, new_x, *lengths))


def unstack(
    x: Any, /, dim: Mapping[str, Mapping[str, Any]] | None = None, **dims: Mapping[str, Any]
) -> XTensorVariable:
    """Split dims into several new dims (xarray's ``DataArray.unstack``, with lengths).

    Without coordinates the lengths of the new dims must be given; they may be symbolic.

    Parameters
    ----------
    x
        The variable.
    dim
        A mapping from each dim that is split to a mapping from the new dims' names to
        their lengths (ints or integer scalars); give either it or ``**dims``.
    **dims
        The same mapping as keyword arguments.

    Returns
    -------
    XTensorVariable
        ``x`` with each split dim replaced by its new dims, added last, in C order.

    Raises
    ------
    ValueError
        If both ``dim`` and ``**dims`` are given, a split dim is not a dim of ``x``, fewer
        than two new dims are given, or a new name is already a dim.
    TypeError
        If a length does not have an integer dtype.
    """
    if dim is not None:
        if dims:
            raise ValueError("Cannot use both positional dim and keyword dims in unstack")
        dims = dict(dim)
    y = _xtensor(x)
    for old_dim_name, new_sizes in dims.items():
        y = _output(UnStack(old_dim_name, tuple(new_sizes.keys())), y, *new_sizes.values())
    return y


class Transpose(XOp):
    """Reorder the dims of a variable to ``dims`` (a permutation of its dims).

    Parameters
    ----------
    dims
        The dims of the output, in order.
    """

    __props__ = ("dims",)

    def __init__(self, dims: Sequence[str]):
        super().__init__()
        self.dims = tuple(dims)

    def make_node(self, x: Any) -> Apply:
        x = _xtensor(x)
        x_dims = x.type.dims
        if len(self.dims) != len(x_dims) or set(self.dims) != set(x_dims):
            raise ValueError(f"{self.dims} must be a permuted list of {x_dims}")
        output = xtensor(
            dtype=x.type.dtype,
            dims=self.dims,
            shape=tuple(x.type.shape[x_dims.index(d)] for d in self.dims),
        )
        return Apply(self, [x], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same order of the old dims, after the new dims of the batched input."""
        [new_x] = new_inputs
        new_dims = tuple(d for d in _xtensor(new_x).type.dims if d not in self.dims)
        return list(_outputs(type(self)((*new_dims, *self.dims)), new_x))


def transpose(
    x: Any,
    *dim: str | EllipsisType,
    missing_dims: Literal["raise", "warn", "ignore"] = "raise",
) -> XTensorVariable:
    """Reorder the dims of ``x`` (xarray's ``DataArray.transpose``).

    Parameters
    ----------
    x
        The variable.
    *dim
        The new order. ``...`` (at most once) stands for the dims not named, in their
        current order; no names reverse the dims.
    missing_dims
        What to do with named dims that ``x`` lacks: ``"raise"`` a ``ValueError``,
        ``"warn"`` and leave them out, or ``"ignore"`` them.

    Returns
    -------
    XTensorVariable
        ``x`` with its dims in the new order (``x`` itself if the order is unchanged).

    Raises
    ------
    ValueError
        If ``missing_dims="raise"`` and a dim does not exist, ``...`` appears more than
        once, or the names (without ``...``) are not all the dims of ``x``.
    """
    x = _xtensor(x)
    x_dims = x.type.dims
    unknown = set(dim) - {..., *x_dims}
    if unknown:
        if missing_dims not in ("raise", "warn", "ignore"):
            raise ValueError(
                f"missing_dims must be one of 'raise', 'warn', 'ignore', got {missing_dims!r}"
            )
        if missing_dims != "ignore":
            message = f"Dimensions {unknown} do not exist. Expected one or more of: {x_dims}"
            if missing_dims == "raise":
                raise ValueError(message)
            warnings.warn(message, UserWarning, stacklevel=2)
        dim = tuple(d for d in dim if d is ... or d in x_dims)
    order: tuple[str, ...]
    if not dim:
        order = tuple(reversed(x_dims))
    elif ... in dim:
        if dim.count(...) > 1:
            raise ValueError("Ellipsis (...) can only appear once in the dimensions")
        at = dim.index(...)
        before = tuple(str(d) for d in dim[:at])
        after = tuple(str(d) for d in dim[at + 1 :])
        rest = tuple(d for d in x_dims if d not in before and d not in after)
        order = (*before, *rest, *after)
    else:
        order = tuple(str(d) for d in dim)
    if order == x_dims:
        return _xtensor(x)
    return _output(Transpose(order), x)


class Concat(XOp):
    """Join variables along the dim ``dim`` (xarray's ``concat``).

    The output has the dims of the inputs in order of first appearance; an input lacking
    a dim is broadcast along it. An input lacking ``dim`` adds one entry along it, and
    ``dim`` becomes the first dim when no input has it.

    Parameters
    ----------
    dim
        The dim to join along.
    """

    __props__ = ("dim",)

    def __init__(self, dim: str):
        super().__init__()
        self.dim = dim

    def make_node(self, *inputs: Any) -> Apply:
        xs = [_xtensor(inp) for inp in inputs]
        if not xs:
            raise ValueError("concat needs at least one variable")
        sizes = _combined_sizes(xs, exclude=(self.dim,), kind="Non-concatenated dimension")
        joined: int | None = 0
        for x in xs:
            if self.dim in x.type.dims:
                length = x.type.shape[x.type.dims.index(self.dim)]
            else:
                length = 1
            joined = None if joined is None or length is None else joined + length
        dims = [d for x in xs for d in x.type.dims]
        if self.dim in dims:
            order = list(dict.fromkeys(dims))
        else:
            order = [self.dim, *dict.fromkeys(dims)]
        shape = tuple(joined if d == self.dim else sizes[d] for d in order)
        dtype = upcast(*(x.type.dtype for x in xs))
        output = xtensor(dtype=dtype, dims=tuple(order), shape=shape)
        return Apply(self, xs, [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same join of the batched inputs."""
        return list(_outputs(self, *new_inputs))


def concat(xtensors: Sequence[Any], dim: str) -> XTensorVariable:
    """Join variables along a dim, existing or new (xarray's ``concat``).

    Parameters
    ----------
    xtensors
        The variables (or values, made into xtensors) to join.
    dim
        The dim to join along.

    Returns
    -------
    XTensorVariable
        The joined variable, with the upcast dtype of the inputs.

    Raises
    ------
    ValueError
        If another dim has different static lengths in two inputs.

    Examples
    --------
    >>> from opweave.xtensor import as_xtensor, concat, xtensor
    >>> x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    >>> zero = as_xtensor([0], dims=("a",))
    >>> out = concat([zero, x, zero], dim="a")
    >>> out.type.dims, out.type.shape
    (('a', 'b'), (4, 3))
    """
    return _output(Concat(dim), *xtensors)


class Squeeze(XOp):
    """Drop dims of length 1.

    Dims whose static length is unknown are assumed to have length 1 (checked when the
    function runs).

    Parameters
    ----------
    dims
        The dims to drop (kept sorted and without repeats).
    """

    __props__ = ("dims",)

    def __init__(self, dims: Sequence[str]):
        super().__init__()
        self.dims = tuple(sorted(set(dims)))

    def make_node(self, x: Any) -> Apply:
        x = _xtensor(x)
        dropped = set()
        for d in self.dims:
            if d not in x.type.dims:
                raise ValueError(f"Dimension {d} not found in {x.type.dims}")
            length = x.type.shape[x.type.dims.index(d)]
            if length is not None and length != 1:
                raise ValueError(f"Dimension {d} has static size {length}, not 1")
            dropped.add(d)
        kept = [
            (dim, length)
            for dim, length in zip(x.type.dims, x.type.shape, strict=True)
            if dim not in dropped
        ]
        output = xtensor(
            dtype=x.type.dtype,
            dims=tuple(dim for dim, _ in kept),
            shape=tuple(length for _, length in kept),
        )
        return Apply(self, [x], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same dims dropped from the batched input."""
        return list(_outputs(self, *new_inputs))


def squeeze(
    x: Any,
    dim: str | Sequence[str] | None = None,
    drop: bool | None = None,
    axis: int | Sequence[int] | None = None,
) -> XTensorVariable:
    """Drop dims of length 1 (xarray's ``DataArray.squeeze``).

    Parameters
    ----------
    x
        The variable.
    dim
        The dim or dims to drop. With neither ``dim`` nor ``axis``, the dims whose static
        length is 1 are dropped (a dim of unknown static length is kept).
    drop
        Accepted for xarray's signature; without coordinates it has no effect.
    axis
        The position or positions (negative ones count from the end) of the dims to
        drop, instead of ``dim``.

    Returns
    -------
    XTensorVariable
        ``x`` without those dims (``x`` itself when there is nothing to drop).

    Raises
    ------
    ValueError
        If both ``dim`` and ``axis`` are given, a dim does not exist, or its static
        length is not 1.
    IndexError
        If an axis is out of range.
    """
    x = _xtensor(x)
    if axis is not None:
        if dim is not None:
            raise ValueError("Cannot specify both `dim` and `axis`")
        axes = (axis,) if not isinstance(axis, Sequence) else tuple(axis)
        dim = tuple(x.type.dims[int(i)] for i in axes)
    dims: tuple[str, ...]
    if dim is None:
        dims = tuple(d for d, s in zip(x.type.dims, x.type.shape, strict=True) if s == 1)
    elif isinstance(dim, str):
        dims = (dim,)
    else:
        dims = tuple(dim)
    if not dims:
        return _xtensor(x)
    return _output(Squeeze(dims), x)


class ExpandDims(XOp):
    """Add the dim ``dim`` in front, of the length given by the node's second input.

    Parameters
    ----------
    dim
        Name of the new dim.
    """

    __props__ = ("dim",)

    def __init__(self, dim: str):
        super().__init__()
        if not isinstance(dim, str):
            raise TypeError(f"`dim` must be a string, got: {type(dim)}")
        self.dim = dim

    def make_node(self, x: Any, size: Any) -> Apply:
        x = _xtensor(x)
        if self.dim in x.type.dims:
            raise ValueError(f"Dimension {self.dim} already exists in {x.type.dims}")
        size = _size_tensor(size)
        if not (size.type.dtype in integer_dtypes and size.type.ndim == 0):
            raise ValueError(f"size should be an integer scalar, got {size.type}")
        try:
            static_size: int | None = int(get_scalar_constant_value(size))
        except NotScalarConstantError:
            static_size = None
        if static_size is not None and static_size < 0:
            raise ValueError(f"size must be 0 or positive, got: {static_size}")
        output = xtensor(
            dtype=x.type.dtype,
            dims=(self.dim, *x.type.dims),
            shape=(static_size, *x.type.shape),
        )
        return Apply(self, [x, size], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same dim added to the batched input; the size must stay a scalar."""
        new_x, new_size = new_inputs
        size = as_tensor(new_size).squeeze()
        if size.type.ndim != 0:
            raise NotImplementedError(
                f"Vectorization of {self} with batched new_size not implemented"
            )
        return list(_outputs(self, new_x, size))


def _new_dim_sizes(dim: Any) -> dict[str, Any]:
    """The new dims that ``expand_dims``'s ``dim`` names, with their lengths."""
    if isinstance(dim, str):
        return {dim: 1}
    if isinstance(dim, Mapping):
        sizes: dict[str, Any] = {}
        for name, value in dim.items():
            if isinstance(value, list | tuple | np.ndarray):
                warnings.warn(
                    "When a sequence is provided as a dimension size, only its length is "
                    "used. The actual values (which would be coordinates in xarray) are "
                    "ignored.",
                    UserWarning,
                    stacklevel=3,
                )
                sizes[name] = len(value)
            else:
                sizes[name] = value
        return sizes
    if isinstance(dim, Sequence):
        return dict.fromkeys(dim, 1)
    raise TypeError(f"Invalid type for `dim`: {type(dim)}")


def expand_dims(
    x: Any,
    /,
    dim: str | Sequence[str] | Mapping[str, Any] | None = None,
    create_index_for_new_dim: bool | None = None,
    axis: int | Sequence[int] | None = None,
    **dim_kwargs: Any,
) -> XTensorVariable:
    """Add new dims (xarray's ``DataArray.expand_dims``).

    Parameters
    ----------
    x
        The variable.
    dim
        A name or names of new dims of length 1, or a mapping from new names to lengths
        (ints, integer scalars, or sequences, of which only the length counts).
    create_index_for_new_dim
        Accepted for xarray's signature; without coordinates it has no effect.
    axis
        The positions of the new dims in the result (negative ones count from its end),
        one per new dim; by default they come first, in the order given.
    **dim_kwargs
        The new dims and their lengths as keyword arguments, instead of ``dim``.

    Returns
    -------
    XTensorVariable
        ``x`` broadcast along the new dims.

    Raises
    ------
    ValueError
        If both ``dim`` and ``**dim_kwargs`` are given, a new dim already exists, a length
        is negative or not an integer scalar, or ``axis`` does not give one distinct
        position per new dim.
    TypeError
        If ``dim`` is of none of the accepted types.
    IndexError
        If a position is out of range.
    """
    x = _xtensor(x)
    original_dims = x.type.dims
    if dim is None:
        dim = dim_kwargs
    elif dim_kwargs:
        raise ValueError("Cannot specify both `dim` and `**dim_kwargs`")
    sizes = _new_dim_sizes(dim)
    for name, size in reversed(sizes.items()):
        x = _output(ExpandDims(name), x, size)
    if axis is None:
        return _xtensor(x)
    axes = list(axis) if isinstance(axis, Sequence) else [axis]
    if len(axes) != len(sizes):
        raise ValueError("lengths of dim and axis should be identical.")
    result_ndim = len(original_dims) + len(sizes)
    positions = []
    for a in axes:
        if not -result_ndim <= a < result_ndim:
            raise IndexError(
                f"Axis {a} is out of bounds of the expanded dimension size {result_ndim}"
            )
        positions.append(int(a) % result_ndim)
    if len(set(positions)) != len(positions):
        raise ValueError("axis should not contain duplicate values")
    order = list(original_dims)
    for position, name in sorted(zip(positions, sizes, strict=True)):
        order.insert(position, name)
    return transpose(x, *order)


class Broadcast(XOp):
    """Broadcast variables against each other (xarray's ``broadcast``).

    Each output has the union of the inputs' dims that are not excluded, in order of
    first appearance, followed by its own input's excluded dims in the order of
    ``exclude``; it keeps its input's dtype.

    Parameters
    ----------
    exclude
        Dims that are not broadcast (their lengths may differ between inputs).
    """

    __props__ = ("exclude",)

    def __init__(self, exclude: Sequence[str] = ()):
        super().__init__()
        self.exclude = tuple(exclude)

    def make_node(self, *inputs: Any) -> Apply:
        xs = [_xtensor(inp) for inp in inputs]
        sizes = _combined_sizes(xs, exclude=self.exclude)
        outputs = []
        for x in xs:
            excluded = tuple(d for d in self.exclude if d in x.type.dims)
            outputs.append(
                xtensor(
                    dtype=x.type.dtype,
                    dims=(*sizes, *excluded),
                    shape=(
                        *sizes.values(),
                        *(x.type.shape[x.type.dims.index(d)] for d in excluded),
                    ),
                )
            )
        return Apply(self, xs, outputs)

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same broadcast of the batched inputs, unless a new dim is excluded."""
        excluded = set(self.exclude)
        for old_x, new_x in zip(node.inputs, new_inputs, strict=True):
            new_dims = _xtensor(new_x).type.dims
            gained = (set(new_dims) - set(_xtensor(old_x).type.dims)) & excluded
            if gained:
                raise NotImplementedError(
                    f"Vectorize of {self} is undefined because the input {new_x} has an "
                    f"excluded dimension {sorted(gained)} that it did not have before."
                )
        return list(_outputs(self, *new_inputs))


def broadcast(
    *args: Any, exclude: str | Sequence[str] | None = None
) -> tuple[XTensorVariable, ...]:
    """Broadcast variables against each other (xarray's ``broadcast``).

    Parameters
    ----------
    *args
        The variables.
    exclude
        A dim or dims not to broadcast.

    Returns
    -------
    tuple of XTensorVariable
        One broadcast variable per argument (an empty tuple without arguments).

    Raises
    ------
    TypeError
        If ``exclude`` is not a string, a sequence or ``None``.
    ValueError
        If a dim has different static lengths in two arguments.
    """
    if exclude is None:
        exclude = ()
    elif isinstance(exclude, str):
        exclude = (exclude,)
    elif not isinstance(exclude, Sequence):
        raise TypeError(f"exclude must be None, str, or Sequence, got {type(exclude)}")
    if not args:
        return ()
    return tuple(_outputs(Broadcast(tuple(exclude)), *args))


def broadcast_like(
    x: Any, other: Any, exclude: str | Sequence[str] | None = None
) -> XTensorVariable:
    """Broadcast ``x`` against ``other`` (xarray's ``DataArray.broadcast_like``).

    Parameters
    ----------
    x
        The variable to broadcast.
    other
        The variable whose dims ``x`` gets.
    exclude
        A dim or dims not to broadcast.

    Returns
    -------
    XTensorVariable
        ``x`` with the dims of ``other`` first (in its order), then its own other dims.
    """
    _, x_broadcast = broadcast(other, x, exclude=exclude)
    return x_broadcast


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> XTensorVariable:
    """A variable with the dims and shape of ``x``, filled with ``fill_value``.

    Parameters
    ----------
    x
        The variable whose dims and shape are used.
    fill_value
        The value: a scalar, or a 0-d variable.
    dtype
        The dtype of the result; by default that of ``x``. ``fill_value`` is cast to it.

    Returns
    -------
    XTensorVariable

    Raises
    ------
    ValueError
        If ``fill_value`` is not a scalar.

    Examples
    --------
    >>> from opweave.xtensor import full_like, xtensor
    >>> x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="float64")
    >>> y = full_like(x, 5.0)
    >>> y.type.dims, y.type.shape, y.type.dtype
    (('a', 'b'), (2, 3), 'float64')
    """
    x = _xtensor(x)
    out_dtype = x.type.dtype if dtype is None else np.dtype(dtype).name
    if isinstance(fill_value, Variable):
        ndim = getattr(fill_value.type, "ndim", 0)
        if ndim != 0:
            raise ValueError(f"fill_value must be a scalar, got ndim={ndim}")
        fill = _xtensor(fill_value)
        if fill.type.dtype != out_dtype:
            fill = xtensor_from_tensor(cast(tensor_from_xtensor(fill), out_dtype), dims=())
    else:
        value = np.asarray(fill_value)
        if value.ndim != 0:
            raise ValueError(f"fill_value must be a scalar, got ndim={value.ndim}")
        fill = _xtensor(value.astype(out_dtype))
    _, filled = broadcast(x, fill)
    return filled


def ones_like(x: Any, dtype: Any = None) -> XTensorVariable:
    """A variable with the dims and shape of ``x``, filled with ones.

    Parameters
    ----------
    x
        The variable whose dims and shape are used.
    dtype
        The dtype of the result; by default that of ``x``.

    Returns
    -------
    XTensorVariable
    """
    return full_like(x, 1, dtype=dtype)


def zeros_like(x: Any, dtype: Any = None) -> XTensorVariable:
    """A variable with the dims and shape of ``x``, filled with zeros.

    Parameters
    ----------
    x
        The variable whose dims and shape are used.
    dtype
        The dtype of the result; by default that of ``x``.

    Returns
    -------
    XTensorVariable
    """
    return full_like(x, 0, dtype=dtype)
