"""Lowerings of the array constructors and helper Ops: ``Alloc``, ``AllocEmpty``,
``MakeVector``, ``Join``, ``ARange``, ``Eye``, ``TensorFromScalar``, ``ScalarFromTensor``,
and the core's copy and view Ops (``DeepCopyOp``, and ``ViewOp`` with the other
``TypeCastingOp`` Ops), which are the identity on immutable JAX values.

Shapes, lengths and ``ARange``'s bounds must be static (constants, or computed from
shapes): XLA compiles for fixed shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from opweave.compile.ops import DeepCopyOp, TypeCastingOp
from opweave.graph.basic import Apply
from opweave.tensor.basic import (
    Alloc,
    AllocEmpty,
    ARange,
    Eye,
    Join,
    MakeVector,
    ScalarFromTensor,
    TensorFromScalar,
)
from opweave.tensor.runtime_broadcast import check_runtime_broadcast
from opweave_jax.lowerings.scalar import out_dtype
from opweave_jax.values import is_static, static_int

__all__ = ["LOWERINGS"]

Fn = Callable[..., Any]


def _shape(op: Any, dims: tuple[Any, ...]) -> tuple[int, ...]:
    shp = tuple(static_int(d, f"the shape of {op}") for d in dims)
    if any(d < 0 for d in shp):
        raise ValueError(f"{op}: negative dimensions are not allowed: {shp}")
    return shp


def alloc(op: Alloc, node: Apply) -> Fn:
    """The value broadcast to the (static) shape (only along the dimensions its Type lets
    broadcast: :func:`~opweave.tensor.runtime_broadcast.check_runtime_broadcast`)."""
    dtype = out_dtype(node)
    static = node.inputs[0].type.shape  # type: ignore[attr-defined]

    def run(value: Any, *dims: Any) -> Any:
        shape = _shape("Alloc", dims)
        check_runtime_broadcast("Alloc", static, tuple(jnp.shape(value)), shape)
        return jnp.broadcast_to(jnp.asarray(value).astype(dtype), shape)

    return run


def alloc_empty(op: AllocEmpty, node: Apply) -> Fn:
    """Zeros of the (static) shape: JAX has no uninitialised arrays."""
    dtype = out_dtype(node)

    def run(*dims: Any) -> Any:
        return jnp.zeros(_shape("AllocEmpty", dims), dtype)

    return run


def make_vector(op: MakeVector, node: Apply) -> Fn:
    """The scalars stacked into a vector of ``op.dtype``."""
    dtype = np.dtype(op.dtype)

    def run(*xs: Any) -> Any:
        if not xs:
            return jnp.zeros((0,), dtype)
        return jnp.stack([jnp.asarray(x).astype(dtype) for x in xs])

    return run


def join(op: Join, node: Apply) -> Fn:
    """``jnp.concatenate`` along the (static) axis, in the output dtype."""
    dtype = out_dtype(node)
    ndim = len(node.outputs[0].type.shape)  # type: ignore[attr-defined]

    def run(axis_value: Any, *tensors: Any) -> Any:
        axis = static_int(axis_value, "the axis of Join")
        shapes = [jnp.shape(t) for t in tensors]
        if not -ndim <= axis < ndim:
            raise ValueError(
                f"Join: cannot join shapes {shapes} along axis {axis}: axis {axis} is out of "
                f"bounds for array of dimension {ndim}"
            )
        try:
            return jnp.concatenate([jnp.asarray(t).astype(dtype) for t in tensors], axis=axis)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"Join: cannot join shapes {shapes} along axis {axis}: {exc}"
            ) from None

    return run


def arange(op: ARange, node: Apply) -> Fn:
    """``jnp.arange`` with static bounds, in ``op.dtype``."""
    dtype = np.dtype(op.dtype)

    def run(start: Any, stop: Any, step: Any) -> Any:
        named = (("start", start), ("stop", stop), ("step", step))
        bounds = [np.asarray(_static(v, f"the {what} of ARange")).item() for what, v in named]
        if bounds[2] == 0:
            raise ValueError("ARange: step must not be zero")
        return jnp.asarray(np.arange(*bounds, dtype=dtype))

    return run


def _static(value: Any, what: str) -> Any:
    if not is_static(value):
        static_int(value, what)  # raises the linker's message
    return value


def eye(op: Eye, node: Apply) -> Fn:
    """``jnp.eye`` with static sizes."""
    dtype = np.dtype(op.dtype)

    def run(n: Any, m: Any, k: Any) -> Any:
        rows, cols = static_int(n, "the rows of Eye"), static_int(m, "the columns of Eye")
        if rows < 0 or cols < 0:
            raise ValueError(f"Eye: negative dimensions are not allowed: ({rows}, {cols})")
        return jnp.eye(rows, cols, static_int(k, "the diagonal of Eye"), dtype=dtype)

    return run


def _identity(op: Any, node: Apply) -> Fn:
    def run(x: Any) -> Any:
        return x

    return run


#: Op class -> factory.
LOWERINGS: dict[type, Callable[[Any, Apply], Fn]] = {
    Alloc: alloc,
    AllocEmpty: alloc_empty,
    MakeVector: make_vector,
    Join: join,
    ARange: arange,
    Eye: eye,
    TensorFromScalar: _identity,
    ScalarFromTensor: _identity,
    DeepCopyOp: _identity,
    TypeCastingOp: _identity,
}
