"""Positional and labeled indexing of named-dimension tensors, and updates of indexed parts.

Indexing follows xarray: integers drop a dimension, slices keep it, and integer arrays
with named dimensions select along the dimension they index. Array indices that share an
output dimension pair up element by element (vectorized indexing); those with different
dimensions combine in every way (orthogonal indexing). An unlabeled integer vector is
labeled with the dimension it indexes; ``(dims, array)`` labels an array explicitly. A
boolean vector selects the positions where it is true.

:class:`Index` builds the indexed view, :class:`IndexUpdate` a copy of the indexed tensor
with the view set or incremented. The functions :func:`getitem`, :func:`isel`,
:func:`set_value`, :func:`inc_value`, :func:`head`, :func:`tail`, :func:`thin` and
:func:`diff` are the logic of the matching methods of
:class:`~opweave.xtensor.type.XTensorVariable`. The rewrites of
:mod:`opweave.xtensor.rewriting.indexing` lower both Ops to the tensor library's indexing.
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Mapping
from itertools import chain
from typing import Literal

from opweave.graph.basic import Apply, Constant, Variable
from opweave.scalar.type import discrete_dtypes
from opweave.tensor.constructors import as_tensor
from opweave.tensor.type_other import NoneTypeT, SliceType, make_slice
from opweave.xtensor.basic import XOp, xtensor_from_tensor
from opweave.xtensor.math import sub
from opweave.xtensor.shape import broadcast, transpose
from opweave.xtensor.type import XTensorType, XTensorVariable, as_xtensor, xtensor

__all__ = [
    "Index",
    "IndexUpdate",
    "as_idx_variable",
    "diff",
    "get_static_slice_length",
    "getitem",
    "head",
    "inc_value",
    "index",
    "index_assignment",
    "index_increment",
    "isel",
    "set_value",
    "tail",
    "thin",
]


def _is_dims_label(label: typing.Any) -> bool:
    """Whether ``label`` names output dimensions: a string, or a sequence of strings."""
    if isinstance(label, str):
        return True
    return isinstance(label, tuple | list) and all(isinstance(d, str) for d in label)


def as_idx_variable(idx: typing.Any, indexed_dim: str) -> Variable:
    """The symbolic index that ``idx`` stands for when it indexes the dimension ``indexed_dim``.

    Parameters
    ----------
    idx
        A slice (Python or symbolic), an integer or boolean scalar or array (an
        ``XTensorVariable`` keeps its dimensions; an unlabeled vector is labeled
        ``indexed_dim``), or a pair ``(dims, array)`` that labels the array.
    indexed_dim
        The dimension of the indexed tensor that ``idx`` indexes.

    Returns
    -------
    Variable
        A slice variable, or an integer ``XTensorVariable`` (a boolean vector becomes the
        positions where it is true).

    Raises
    ------
    TypeError
        For ``None`` (a new axis: use ``expand_dims``) and non-integer numbers.
    IndexError
        For a label given to an ``XTensorVariable``, an unlabeled array of more than one
        dimension, or a boolean vector labeled with another dimension.
    NotImplementedError
        For a boolean index that is not a vector.
    """
    if idx is None or (isinstance(idx, Variable) and isinstance(idx.type, NoneTypeT)):
        raise TypeError(
            "XTensors do not support indexing with None (np.newaxis), use expand_dims instead"
        )
    if isinstance(idx, slice):
        return typing.cast(Variable, make_slice(idx))
    if isinstance(idx, Variable) and isinstance(idx.type, SliceType):
        return idx
    if isinstance(idx, tuple) and len(idx) == 2 and _is_dims_label(idx[0]):
        label, values = idx
        if isinstance(values, Variable) and isinstance(values.type, XTensorType):
            raise IndexError(
                "Giving a dimension name to an XTensorVariable indexer is not supported: "
                f"{(label, values)}. Use .rename() instead."
            )
        dims = (label,) if isinstance(label, str) else tuple(label)
        xidx = as_xtensor(as_tensor(values), dims=dims)
    else:
        try:
            xidx = as_xtensor(idx)
        except (TypeError, ValueError):
            tidx = as_tensor(idx)
            if tidx.type.ndim > 1:
                raise IndexError(
                    "Unlabeled multi-dimensional array cannot be used for indexing"
                ) from None
            xidx = xtensor_from_tensor(tidx, dims=(indexed_dim,)[: tidx.type.ndim])
    if xidx.type.dtype == "bool":
        if xidx.type.ndim != 1:
            raise NotImplementedError("Only 1d boolean indexing arrays are supported")
        if xidx.type.dims != (indexed_dim,):
            raise IndexError(
                "Boolean indexer should be unlabeled or on the same dimension to the indexed "
                f"array. Indexer is on {xidx.type.dims} but the target dimension is "
                f"{indexed_dim}."
            )
        return typing.cast(Variable, as_xtensor(xidx.values.nonzero()[0], dims=xidx.type.dims))
    if xidx.type.dtype not in discrete_dtypes:
        raise TypeError("Numerical indices must be integers or boolean")
    return typing.cast(Variable, xidx)


def _constant_value(var: Variable) -> tuple[bool, typing.Any]:
    """``(True, value)`` for a constant (``None`` for ``NoneConst``), else ``(False, None)``."""
    if isinstance(var, Constant):
        return True, var.data
    return False, None


def get_static_slice_length(slc: Variable, dim_length: int | None) -> int | None:
    """The length that the slice variable ``slc`` gives a dimension of ``dim_length``.

    ``None`` when the dimension's length or a bound of the slice is not known.
    """
    if dim_length is None:
        return None
    if isinstance(slc, Constant):
        bounds: tuple[typing.Any, ...] = (slc.data.start, slc.data.stop, slc.data.step)
    elif slc.owner is None:
        return None
    else:
        known = [_constant_value(b) for b in slc.owner.inputs]
        if not all(k for k, _ in known):
            return None
        bounds = tuple(v for _, v in known)
    return len(range(*slice(*bounds).indices(dim_length)))


def _expand_ellipsis(ndim: int, idxs: tuple[typing.Any, ...]) -> tuple[typing.Any, ...]:
    """``idxs`` with its ellipsis replaced by as many full slices as it stands for."""
    n_ellipsis = sum(1 for idx in idxs if idx is Ellipsis)
    if n_ellipsis == 0:
        return idxs
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    loc = next(i for i, idx in enumerate(idxs) if idx is Ellipsis)
    n_full = ndim - (len(idxs) - 1)
    return (*idxs[:loc], *((slice(None),) * n_full), *idxs[loc + 1 :])


class _OutputDims:
    """The dimensions and static lengths of an indexing result, gathered index by index."""

    def __init__(self) -> None:
        self.dims: list[str] = []
        self.shape: list[int | None] = []

    def add(self, dim: str, length: int | None) -> None:
        """Record ``dim`` with ``length``, checking it against an earlier length of ``dim``."""
        if dim not in self.dims:
            self.dims.append(dim)
            self.shape.append(length)
            return
        pos = self.dims.index(dim)
        known = self.shape[pos]
        if known is None:
            self.shape[pos] = length
        elif length is not None and length != known:
            raise IndexError(f"Dimension of indexers mismatch for dim {dim}")


def _dims(var: Variable) -> tuple[str, ...]:
    """The dims of the xtensor variable ``var``."""
    return typing.cast(XTensorType, var.type).dims


def _is_full_slice(idx: typing.Any) -> bool:
    return isinstance(idx, slice) and idx == slice(None)


class Index(XOp):
    """Positional indexing of a named-dimension tensor, as xarray's ``DataArray[idx]``.

    ``index(x, *idxs)`` takes one index per leading dimension of ``x`` (an ellipsis
    stands for the full slices of the dimensions it skips).
    """

    __props__ = ()

    def make_node(self, x: typing.Any, *idxs: typing.Any) -> Apply:
        """The indexed view: inputs ``x`` and the symbolic indices up to the last useful one.

        Raises
        ------
        IndexError
            For more indices than dimensions, several ellipses, or indices that give one
            output dimension different lengths.
        """
        x = as_xtensor(x)
        x_dims = x.type.dims
        x_shape = x.type.shape
        idxs = _expand_ellipsis(x.type.ndim, idxs)
        if len(idxs) > x.type.ndim:
            raise IndexError("Too many indices")
        # Trailing full slices change nothing: drop them.
        n_useful = len(idxs)
        while n_useful and _is_full_slice(idxs[n_useful - 1]):
            n_useful -= 1
        sym_idxs = [
            as_idx_variable(idx, dim) for idx, dim in zip(idxs[:n_useful], x_dims, strict=False)
        ]
        out = _OutputDims()
        for i, idx in enumerate(sym_idxs):
            if isinstance(idx.type, SliceType):
                out.add(x_dims[i], get_static_slice_length(idx, x_shape[i]))
            else:
                idx_type = typing.cast(XTensorType, idx.type)
                for d, length in zip(idx_type.dims, idx_type.shape, strict=True):
                    out.add(d, length)
        for d, length in zip(x_dims[n_useful:], x_shape[n_useful:], strict=True):
            out.add(d, length)
        output = xtensor(dtype=x.type.dtype, dims=tuple(out.dims), shape=tuple(out.shape))
        return Apply(self, [x, *sym_idxs], [output])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same indices on the batched input, by dimension name; new dimensions stay whole."""
        new_x, *new_idxs = new_inputs
        by_dim = dict(zip(_dims(node.inputs[0]), new_idxs, strict=False))
        batched = [by_dim.get(d, slice(None)) for d in _dims(new_x)]
        return [typing.cast(Variable, self(new_x, *batched))]


#: The :class:`Index` Op: ``index(x, *idxs)``.
index = Index()


class IndexUpdate(XOp):
    """A copy of ``x`` with the part ``x[idxs]`` set to ``y`` or incremented by ``y``.

    ``y``'s dimensions are a subset of the indexed view's and broadcast over the others.
    With repeated integer indices, ``"inc"`` adds every repeat's value.

    Parameters
    ----------
    mode
        ``"set"`` or ``"inc"``.
    """

    __props__ = ("mode",)

    def __init__(self, mode: Literal["set", "inc"]) -> None:
        super().__init__()
        if mode not in ("set", "inc"):
            raise ValueError("mode must be 'set' or 'inc'")
        self.mode = mode

    def make_node(self, x: typing.Any, y: typing.Any, *idxs: typing.Any) -> Apply:
        """Inputs ``x``, ``y`` and the symbolic indices; one output of ``x``'s Type.

        Raises
        ------
        ValueError
            If ``y`` has a dimension that the indexed view lacks.
        """
        view_node = index.make_node(x, *idxs)
        x, *sym_idxs = view_node.inputs
        view_dims = _dims(view_node.outputs[0])
        try:
            y = as_xtensor(y)
        except (TypeError, ValueError):
            y = as_xtensor(as_tensor(y), dims=view_dims)
        if not set(y.type.dims) <= set(view_dims):
            raise ValueError(
                f"Value dimensions {y.type.dims} must be a subset of the indexed dimensions "
                f"{view_dims}"
            )
        return Apply(self, [x, y, *sym_idxs], [x.type()])

    def vectorize_node(
        self, node: Apply, *new_inputs: Variable, new_dim: str | None
    ) -> list[Variable]:
        """The same update where ``x`` is broadcast to the new dimensions of any input."""
        old_dims = set(
            chain.from_iterable(
                _dims(inp) for inp in node.inputs if isinstance(inp.type, XTensorType)
            )
        )
        x_like = [inp for inp in new_inputs if isinstance(inp.type, XTensorType)]
        new_x = broadcast(*x_like, exclude=tuple(old_dims))[0]
        # New dimensions go last: the indices pair with the leading dimensions by position.
        new_x = transpose(new_x, *_dims(node.inputs[0]), ...)
        _, new_y, *new_idxs = new_inputs
        return [typing.cast(Variable, self(new_x, new_y, *new_idxs))]


#: ``index_assignment(x, y, *idxs)``: ``x`` with ``x[idxs]`` set to ``y``.
index_assignment = IndexUpdate("set")
#: ``index_increment(x, y, *idxs)``: ``x`` with ``y`` added to ``x[idxs]``.
index_increment = IndexUpdate("inc")


# ====================================================================== the methods' logic


def getitem(x: XTensorVariable, idx: typing.Any) -> XTensorVariable:
    """``x[idx]``: positional indexing, or labeled indexing (:func:`isel`) for a dict."""
    if isinstance(idx, dict):
        return isel(x, idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    return typing.cast(XTensorVariable, index(x, *idx))


def isel(
    x: XTensorVariable,
    /,
    indexers: Mapping[str, typing.Any] | None = None,
    drop: bool = False,
    missing_dims: Literal["raise", "warn", "ignore"] = "raise",
    **indexers_kwargs: typing.Any,
) -> XTensorVariable:
    """Index ``x`` along the dimensions named by ``indexers`` (or the keyword arguments).

    Parameters
    ----------
    x
        The indexed tensor.
    indexers
        The index of each named dimension; the dimensions not named stay whole.
    drop
        Accepted for xarray compatibility; unused (there are no coordinates).
    missing_dims
        What a name that is not a dimension of ``x`` does: ``"raise"`` a ``ValueError``,
        ``"warn"`` (and be ignored), or be ``"ignore"``-d.
    **indexers_kwargs
        The indices by keyword, instead of ``indexers``.

    Raises
    ------
    ValueError
        For both ``indexers`` and keyword indices, an unknown ``missing_dims``, or (with
        ``"raise"``) a name that is not a dimension of ``x``.
    TypeError
        For an ellipsis given as the index of a dimension.
    """
    if indexers_kwargs:
        if indexers is not None:
            raise ValueError("Cannot pass both indexers and indexers_kwargs to isel")
        indexers = indexers_kwargs
    elif indexers is None:
        indexers = {}
    if missing_dims not in ("raise", "warn", "ignore"):
        raise ValueError(f"Unrecognized options {missing_dims} for missing_dims argument")
    dims = x.type.dims
    positional: list[typing.Any] = [slice(None)] * x.type.ndim
    for key, idx in indexers.items():
        if idx is Ellipsis:
            raise TypeError("Ellipsis (...) is an invalid labeled index")
        if key in dims:
            positional[dims.index(key)] = idx
            continue
        message = f"Dimension {key} does not exist. Expected one of {dims}"
        if missing_dims == "raise":
            raise ValueError(message)
        if missing_dims == "warn":
            warnings.warn(message, UserWarning, stacklevel=2)
    return typing.cast(XTensorVariable, index(x, *positional))


def _index_node_inputs(view: XTensorVariable, method: str) -> list[Variable]:
    """The inputs ``(x, *idxs)`` of the :class:`Index` node that gives ``view``."""
    if view.owner is None or not isinstance(view.owner.op, Index):
        raise ValueError(
            f"{method} can only be called on the output of an index (or isel) operation. "
            f"Self is the result of {view.owner}"
        )
    return list(view.owner.inputs)


def set_value(x: XTensorVariable, value: typing.Any) -> XTensorVariable:
    """``x[idx].set(value)``: the indexed tensor with the part ``x`` stands for set to ``value``.

    Raises
    ------
    ValueError
        If ``x`` is not the output of an indexing operation.
    """
    base, *idxs = _index_node_inputs(x, "set")
    return typing.cast(XTensorVariable, index_assignment(base, value, *idxs))


def inc_value(x: XTensorVariable, value: typing.Any) -> XTensorVariable:
    """``x[idx].inc(value)``: the indexed tensor with ``value`` added to the part ``x`` is.

    Raises
    ------
    ValueError
        If ``x`` is not the output of an indexing operation.
    """
    base, *idxs = _index_node_inputs(x, "inc")
    return typing.cast(XTensorVariable, index_increment(base, value, *idxs))


def _per_dim_counts(
    x: XTensorVariable,
    /,
    indexers: Mapping[str, typing.Any] | int | None,
    indexers_kwargs: Mapping[str, typing.Any],
    kind: str,
) -> Mapping[str, typing.Any]:
    """The count of each dimension that ``head``/``tail``/``thin`` use."""
    if indexers_kwargs:
        if indexers is not None:
            raise ValueError(f"Cannot pass both indexers and indexers_kwargs to {kind}")
        return indexers_kwargs
    if indexers is None:
        if kind == "thin":
            raise TypeError("thin() indexers must be either dict-like or a single integer")
        return dict.fromkeys(x.type.dims, 5)
    if not isinstance(indexers, Mapping):
        return dict.fromkeys(x.type.dims, indexers)
    return indexers


def head(
    x: XTensorVariable,
    /,
    indexers: Mapping[str, typing.Any] | int | None = None,
    **indexers_kwargs: typing.Any,
) -> XTensorVariable:
    """The first ``n`` elements along each named dimension (5 along every one by default).

    ``indexers`` maps dimension names to counts, or is one count for every dimension.
    """
    counts = _per_dim_counts(x, indexers, indexers_kwargs, "head")
    return isel(x, {d: slice(None, n) for d, n in counts.items()})


def tail(
    x: XTensorVariable,
    /,
    indexers: Mapping[str, typing.Any] | int | None = None,
    **indexers_kwargs: typing.Any,
) -> XTensorVariable:
    """The last ``n`` elements along each named dimension (5 along every one by default).

    ``indexers`` maps dimension names to counts, or is one count for every dimension.
    """
    counts = _per_dim_counts(x, indexers, indexers_kwargs, "tail")
    sizes = x.sizes
    # The start is size - n, not -n: a count of 0 must select nothing.
    return isel(x, {d: slice(sizes[d] - n, None) for d, n in counts.items()})


def thin(
    x: XTensorVariable,
    /,
    indexers: Mapping[str, typing.Any] | int | None = None,
    **indexers_kwargs: typing.Any,
) -> XTensorVariable:
    """Every ``n``-th element along each named dimension.

    ``indexers`` maps dimension names to steps, or is one step for every dimension.

    Raises
    ------
    TypeError
        If no step is given.
    """
    counts = _per_dim_counts(x, indexers, indexers_kwargs, "thin")
    return isel(x, {d: slice(None, None, n) for d, n in counts.items()})


def diff(x: XTensorVariable, dim: str, n: int = 1) -> XTensorVariable:
    """The ``n``-th discrete difference along ``dim`` (which gets ``n`` elements shorter)."""
    for _ in range(n):
        x = sub(isel(x, {dim: slice(1, None)}), isel(x, {dim: slice(None, -1)}))
    return x
