"""The constant scalar value a tensor variable always holds:
:func:`get_underlying_scalar_constant` (``x.get_underlying_scalar_constant()``).

It looks through identity Ops (copies, views) and reads static lengths through ``Shape_i``;
:func:`opweave.tensor.basic.get_underlying_scalar_constant_value`, PyTensor's function,
builds on it and looks through many more Ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.compile.ops import DeepCopyOp, ViewOp
from opweave.graph.basic import Constant, Variable
from opweave.tensor.exceptions import NotScalarConstantError
from opweave.tensor.shape_ops import Shape_i

__all__ = ["get_underlying_scalar_constant"]


def _unique_value(data: Any) -> np.ndarray:
    arr = np.asarray(data)
    if arr.dtype.kind not in "biufc" or arr.size == 0:
        raise NotScalarConstantError(f"{_describe(data)} is not a numeric scalar")
    if arr.ndim == 0:
        return arr
    first = arr.flat[0]
    if not (arr == first).all():
        raise NotScalarConstantError(f"the constant {_describe(data)} holds different values")
    return np.asarray(first, dtype=arr.dtype)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:55] + "(...)"


def get_underlying_scalar_constant(
    v: Any, only_process_constants: bool = False, max_recur: int = 10
) -> np.ndarray:
    """Return the constant scalar value that ``v`` always holds, or raise.

    Parameters
    ----------
    v
        A Python number, NumPy scalar or array, a constant, or a variable computed from one
        through identity Ops (``DeepCopyOp``, ``ViewOp``), or ``Shape_i`` of a variable with a
        known static length.
    only_process_constants
        Look only at ``v`` itself, never through the Op computing it.
    max_recur
        How many Ops to look through.

    Returns
    -------
    numpy.ndarray
        A 0-d array. Constants whose elements are all equal count as that scalar.

    Raises
    ------
    NotScalarConstantError
        If no constant scalar value can be determined.
    """
    for _ in range(max_recur + 1):
        if isinstance(v, Constant):
            return _unique_value(v.data)
        if not isinstance(v, Variable):
            if v is None or isinstance(v, str | bytes):
                raise NotScalarConstantError(f"{v!r} is not a numeric scalar")
            return _unique_value(v)
        if only_process_constants or v.owner is None:
            break
        op = v.owner.op
        if isinstance(op, DeepCopyOp | ViewOp):
            v = v.owner.inputs[0]
            continue
        if isinstance(op, Shape_i):
            static = getattr(v.owner.inputs[0].type, "shape", None)
            if static is not None and static[op.i] is not None:
                return np.asarray(static[op.i], dtype="int64")
        break
    raise NotScalarConstantError(f"{v} is not a constant scalar")
