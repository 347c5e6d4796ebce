"""The ``idx_list`` of the indexing Ops: how an index is described, flattened and rebuilt.

An ``idx_list`` has one entry per indexed dimension (or index array). Each entry is

* an ``int`` — a constant scalar index, always within the ``int64`` range;
* a :class:`~opweave.tensor.type.TensorType` — a *placeholder* for an index given as an
  input of the node: a 0-d integer Type (a symbolic scalar index), or, for the advanced
  indexing Ops only, an integer or boolean Type of one or more dimensions with every
  static length unknown (an index array, a mask);
* a ``slice`` whose ``start``/``stop``/``step`` are each ``None``, an ``int`` or a 0-d
  integer placeholder.

The placeholders' inputs follow ``x`` (and ``y`` for the updating Ops) in the order they
appear in ``idx_list``. :func:`flatten_index_variables` builds an ``idx_list`` and its
inputs from a NumPy-style index; :func:`indices_from_subtensor` rebuilds the index from the
inputs (symbolic variables or run-time values).

Index constants must fit in ``int64``, as PyTensor requires: a larger one (``2**63``, a
``uint64`` beyond the ``int64`` range, ``-2**63 - 1``) is a ``TypeError``, never a silently
clipped or wrapped index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeGuard

import numpy as np

from opweave.graph.basic import Constant, Variable
from opweave.scalar.basic import ScalarConstant, ScalarVariable
from opweave.scalar.type import int64 as scalar_int64
from opweave.tensor.basic import ScalarFromTensor, get_scalar_constant_value
from opweave.tensor.constructors import as_tensor_variable
from opweave.tensor.type import TensorType, integer_dtypes
from opweave.tensor.variable import NotScalarConstantError, TensorConstant, TensorVariable

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "as_index_constant",
    "as_index_literal",
    "check_idx_list",
    "flatten_index_variables",
    "get_constant_idx",
    "get_idx_list",
    "get_slice_elements",
    "index_literal",
    "indices_from_subtensor",
    "unflatten_index_variables",
]

IdxEntry = Any  # int | TensorType | slice

INT64_MIN = int(np.iinfo(np.int64).min)
INT64_MAX = int(np.iinfo(np.int64).max)


def index_literal(value: Any, what: str = "index") -> int:
    """``value`` (a Python or NumPy integer) as an ``int``, checked to fit in ``int64``.

    Parameters
    ----------
    value
        The constant index.
    what
        Names the index in the error message.

    Returns
    -------
    int
        The value.

    Raises
    ------
    TypeError
        If ``value`` is not an integer, is a bool, or lies outside the ``int64`` range.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what}: expected an integer index, got {value!r}")
    v = int(value)
    if not INT64_MIN <= v <= INT64_MAX:
        raise TypeError(
            f"{what}: the index constant {v} ({type(value).__name__}) does not fit in int64; "
            f"index constants must lie in [{INT64_MIN}, {INT64_MAX}]"
        )
    return v


def is_placeholder(e: Any) -> TypeGuard[TensorType]:
    """Whether the ``idx_list`` entry (or slice component) ``e`` stands for an input."""
    return isinstance(e, TensorType)


def index_type(var: Any) -> TensorType:
    """The placeholder for the index variable (or Type) ``var``: its dtype and rank, with
    every length unknown."""
    t = var if isinstance(var, TensorType) else var.type
    return TensorType(t.dtype, shape=(None,) * t.ndim)


def check_idx_list(idx_list: Any, who: str, arrays: bool = False) -> tuple[IdxEntry, ...]:
    """Validate ``idx_list`` and return it as a tuple (NumPy integers become ``int``).

    Parameters
    ----------
    idx_list
        The index description.
    who
        The Op's name, for error messages.
    arrays
        Whether index arrays and boolean masks (placeholders of one or more dimensions)
        are allowed, as in the advanced indexing Ops.

    Raises
    ------
    TypeError
        For an invalid entry, or a constant outside the ``int64`` range.
    ValueError
        For a constant zero slice step.
    """
    if not isinstance(idx_list, list | tuple):
        raise TypeError(f"{who}: idx_list must be a tuple, got {idx_list!r}")

    def scalar(e: Any, where: str) -> Any:
        if is_placeholder(e):
            if e.ndim == 0 and e.dtype in integer_dtypes:
                return e
        elif isinstance(e, int | np.integer) and not isinstance(e, bool | np.bool_):
            return index_literal(e, f"{who}: {where}")
        raise TypeError(
            f"{who}: invalid idx_list entry {e!r} ({where}): expected an int, a slice, or a "
            "0-d integer TensorType" + (" or an integer/boolean array TensorType" if arrays else "")
        )

    out: list[IdxEntry] = []
    for e in idx_list:
        if isinstance(e, slice):
            comps = [
                None if c is None else scalar(c, f"slice {name}")
                for c, name in zip((e.start, e.stop, e.step), ("start", "stop", "step"))
            ]
            if comps[2] == 0 and not is_placeholder(comps[2]):
                raise ValueError(f"{who}: slice step cannot be zero")
            out.append(slice(*comps))
        elif (
            arrays
            and is_placeholder(e)
            and e.ndim > 0
            and (e.dtype in integer_dtypes or e.dtype == "bool")
        ):
            out.append(index_type(e))
        else:
            out.append(scalar(e, "index"))
    return tuple(out)


def hashable(idx_list: Sequence[IdxEntry]) -> tuple[Any, ...]:
    """A hashable form of ``idx_list`` (slices are not hashable before Python 3.12)."""
    return tuple(
        ("slice", e.start, e.stop, e.step) if isinstance(e, slice) else e for e in idx_list
    )


def placeholders(idx_list: Sequence[IdxEntry]) -> list[TensorType]:
    """The placeholders of ``idx_list``, in the order of the node's index inputs."""
    out: list[TensorType] = []
    for e in idx_list:
        comps = (e.start, e.stop, e.step) if isinstance(e, slice) else (e,)
        out.extend(c for c in comps if is_placeholder(c))
    return out


def idx_str(idx_list: Sequence[IdxEntry]) -> str:
    """``idx_list`` as text: ``1:3, int64, int64[?]`` (placeholders by dtype and rank)."""

    def one(c: Any) -> str:
        if c is None:
            return ""
        if is_placeholder(c):
            return c.dtype + (f"[{','.join('?' * c.ndim)}]" if c.ndim else "")
        return str(c)

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


def unflatten_index_variables(
    flat_indices: Sequence[Any], idx_list: Sequence[IdxEntry]
) -> tuple[Any, ...]:
    """Rebuild the index that ``idx_list`` describes, its placeholders taken from ``flat_indices``.

    Parameters
    ----------
    flat_indices
        One variable or value per placeholder, in order.
    idx_list
        The index description.

    Returns
    -------
    tuple
        Ints, slices and the given variables or values; a 0-d NumPy value becomes an
        ``int``, so that a tuple of run-time values is a NumPy index.

    Raises
    ------
    ValueError
        If the number of ``flat_indices`` is not the number of placeholders.
    """
    n = len(placeholders(idx_list))
    if len(flat_indices) != n:
        raise ValueError(f"the idx_list has {n} placeholders but {len(flat_indices)} were given")
    it = iter(flat_indices)

    def sub(c: Any) -> Any:
        if is_placeholder(c):
            v = next(it)
            if isinstance(v, np.integer) or (isinstance(v, np.ndarray) and v.ndim == 0):
                return int(v)
            return v
        return c

    out = []
    for e in idx_list:
        if isinstance(e, slice):
            out.append(slice(sub(e.start), sub(e.stop), sub(e.step)))
        else:
            out.append(sub(e))
    return tuple(out)


def indices_from_subtensor(
    op_indices: Sequence[Any], idx_list: Sequence[IdxEntry]
) -> tuple[Any, ...]:
    """The index a ``*Subtensor*`` node was built from.

    Parameters
    ----------
    op_indices
        The node's index inputs (``node.inputs[1:]`` for a ``Subtensor``,
        ``node.inputs[2:]`` for an ``IncSubtensor``), or their run-time values.
    idx_list
        ``node.op.idx_list``.

    Returns
    -------
    tuple
        One entry per indexed dimension: ints, slices, variables (or values).
    """
    return unflatten_index_variables(op_indices, idx_list)


def get_idx_list(inputs: Sequence[Any], idx_list: Sequence[IdxEntry]) -> tuple[Any, ...]:
    """The index of a ``Subtensor``-like node from all its inputs (``x`` first).

    Parameters
    ----------
    inputs
        ``node.inputs`` (or their values): the indexed tensor, then the index inputs.
    idx_list
        ``node.op.idx_list``.

    Returns
    -------
    tuple
        See :func:`indices_from_subtensor`.
    """
    return indices_from_subtensor(inputs[1:], idx_list)


def _constant_int(var: Variable) -> int | None:
    """The value of a 0-d integer constant, else ``None``."""
    if isinstance(var, Constant) and getattr(var.type, "ndim", None) == 0:
        data = np.asarray(var.data)
        if data.dtype.kind in "iu":
            return int(data)
    return None


def flatten_index_variables(idx_vars: Sequence[Any]) -> tuple[list[IdxEntry], list[Variable]]:
    """Split a NumPy-style index into an ``idx_list`` and the variables it needs as inputs.

    Parameters
    ----------
    idx_vars
        One entry per indexed dimension: ints, slices (of ints, ``None`` or 0-d integer
        variables), 0-d integer variables, index arrays or masks (variables or values).

    Returns
    -------
    idx_list, variables
        Constant scalars (ints and 0-d integer constants) become ``int`` entries; every
        other entry becomes a placeholder, and its variable is appended to ``variables``.

    Raises
    ------
    TypeError
        For a constant outside the ``int64`` range or an entry that is not an index.
    """
    idx_list: list[IdxEntry] = []
    flat: list[Variable] = []

    def scalar(c: Any, what: str) -> Any:
        if c is None:
            return None
        if isinstance(c, int | np.integer) and not isinstance(c, bool | np.bool_):
            return index_literal(c, what)
        var = as_tensor_variable(c.owner.inputs[0] if _scalar_from_tensor(c) else c)
        if var.ndim != 0 or var.dtype not in integer_dtypes:
            raise TypeError(f"{what} must be an integer scalar, got {c!r} of type {var.type!r}")
        known = _constant_int(var)
        if known is not None:
            return index_literal(known, what)
        flat.append(var)
        return index_type(var)

    for k in idx_vars:
        if isinstance(k, slice):
            idx_list.append(
                slice(
                    scalar(k.start, "slice start"),
                    scalar(k.stop, "slice stop"),
                    scalar(k.step, "slice step"),
                )
            )
            continue
        if isinstance(k, int | np.integer) and not isinstance(k, bool | np.bool_):
            idx_list.append(index_literal(k))
            continue
        var = as_index_array(k)
        if var.ndim == 0:
            idx_list.append(scalar(var, "index"))
        else:
            flat.append(var)
            idx_list.append(index_type(var))
    return idx_list, flat


def _scalar_from_tensor(c: Any) -> bool:
    return isinstance(c, ScalarVariable) and isinstance(
        getattr(c.owner, "op", None), ScalarFromTensor
    )


def as_index_array(idx: Any) -> TensorVariable:
    """``idx`` (an index array, mask or scalar; a variable or a value) as a tensor variable.

    Empty lists become ``int64`` vectors; lists holding variables are stacked.

    Raises
    ------
    TypeError
        If the index holds neither integers nor booleans.
    """
    if isinstance(idx, ScalarVariable):
        idx = _tensor_of_scalar(idx)
    if not isinstance(idx, Variable):
        if isinstance(idx, list | tuple) and any(isinstance(e, Variable) for e in idx):
            var = as_tensor_variable(idx)
        else:
            arr = np.asarray(idx)
            if arr.size == 0 and arr.dtype.kind not in "iub":
                arr = arr.astype("int64")
            if arr.dtype.kind not in "iub":
                raise TypeError(
                    f"index arrays must hold integers or booleans, got {idx!r} of dtype {arr.dtype}"
                )
            var = as_tensor_variable(arr)
    else:
        var = as_tensor_variable(idx)
    if var.dtype not in integer_dtypes and var.dtype != "bool":
        raise TypeError(
            f"index arrays must hold integers or booleans, got {var} of type {var.type!r}"
        )
    return var


def _tensor_of_scalar(s: ScalarVariable) -> Variable:
    if s.owner is not None and _scalar_from_tensor(s):
        return s.owner.inputs[0]
    return as_tensor_variable(s)


def as_index_constant(a: Any) -> Any:
    """Make constants of the Python literals of an index entry; leave variables as they are.

    Parameters
    ----------
    a
        ``None``, an integer, a slice, a variable, or a value for an index array.

    Returns
    -------
    None, slice or Variable
        Integers become ``int64`` scalar constants (slices are converted part by part).

    Raises
    ------
    TypeError
        For an integer outside the ``int64`` range.
    """
    if a is None:
        return None
    if isinstance(a, slice):
        return slice(
            as_index_constant(a.start), as_index_constant(a.stop), as_index_constant(a.step)
        )
    if isinstance(a, int | np.integer) and not isinstance(a, bool | np.bool_):
        return ScalarConstant(scalar_int64, np.int64(index_literal(a)))
    if isinstance(a, Variable):
        return a
    return as_tensor_variable(a)


def as_index_literal(idx: Any) -> Any:
    """The Python value of an index entry: the inverse of :func:`as_index_constant`.

    Parameters
    ----------
    idx
        ``None``, an integer, a slice, or a constant (scalar or 0-d tensor) variable.

    Returns
    -------
    None, int or slice

    Raises
    ------
    NotScalarConstantError
        For a variable whose value is not a known constant.
    TypeError
        For something that is not an index entry.
    """
    if idx is None or isinstance(idx, int | np.integer):
        return idx
    if isinstance(idx, slice):
        return slice(
            as_index_literal(idx.start), as_index_literal(idx.stop), as_index_literal(idx.step)
        )
    if not isinstance(idx, Variable):
        raise TypeError(f"not an index entry: {idx!r}")
    if isinstance(idx, ScalarConstant):
        return idx.data.item() if isinstance(idx.data, np.generic) else idx.data
    if _scalar_from_tensor(idx):
        return as_index_literal(idx.owner.inputs[0])
    if isinstance(idx, TensorConstant) and np.ndim(idx.data) == 0:
        return np.asarray(idx.data).item()
    raise NotScalarConstantError(f"{idx} is not a constant index")


def get_slice_elements(
    idxs: Sequence[Any], cond: Callable[[Any], bool] = lambda x: isinstance(x, Variable)
) -> list[Any]:
    """The entries of ``idxs`` (slices opened into their parts) for which ``cond`` holds.

    Parameters
    ----------
    idxs
        Index entries and slices.
    cond
        The test; an entry that passes is kept whole even if it is a slice.

    Returns
    -------
    list
    """
    found: list[Any] = []

    def visit(entry: Any) -> None:
        if cond(entry):
            found.append(entry)
        elif isinstance(entry, slice):
            visit(entry.start)
            visit(entry.stop)
            visit(entry.step)

    for idx in idxs:
        visit(idx)
    return found


def get_constant_idx(
    idx_list: Sequence[IdxEntry],
    inputs: Sequence[Any],
    allow_partial: bool = False,
    only_process_constants: bool = False,
    elemwise: bool = True,
) -> list[Any]:
    """The index of a ``Subtensor``-like node with its constant inputs as Python ints.

    Parameters
    ----------
    idx_list
        ``node.op.idx_list``.
    inputs
        ``node.inputs`` (the indexed tensor first).
    allow_partial
        Leave the non-constant entries as their variables instead of raising.
    only_process_constants, elemwise
        Accepted for PyTensor compatibility: only constants (and what
        :func:`~opweave.tensor.get_underlying_scalar_constant` sees through) are read.

    Returns
    -------
    list
        One entry per indexed dimension.

    Raises
    ------
    NotScalarConstantError
        If an entry is not constant and ``allow_partial`` is false.
    """

    def conv(val: Any) -> Any:
        if val is None or isinstance(val, int):
            return val
        if isinstance(val, slice):
            return slice(conv(val.start), conv(val.stop), conv(val.step))
        try:
            return get_scalar_constant_value(val)
        except NotScalarConstantError:
            if allow_partial:
                return val
            raise

    return [conv(e) for e in get_idx_list(inputs, idx_list)]
