"""Elementwise and reduction Ops on the GPU."""

from __future__ import annotations

from typing import Any

from opweave.graph.op import Op
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave_cuda.ops.base import GpuOp

__all__ = ["GpuCAReduce", "GpuElemwise"]


class GpuElemwise(GpuOp):
    """``Elemwise(scalar_op)`` on GPU arrays (``Composite`` included: one fused kernel).

    All inputs must have the output's rank (the host ``Elemwise`` pads them; the GPU
    rewrite moves nodes whose inputs already are padded).

    Parameters
    ----------
    scalar_op
        The scalar Op applied to each element.
    """

    __props__ = ("scalar_op",)

    def __init__(self, scalar_op: Op) -> None:
        self.scalar_op = scalar_op
        self.nout = getattr(scalar_op, "nout", 1)

    def host_op(self) -> Elemwise:
        """``Elemwise(scalar_op)``."""
        return Elemwise(self.scalar_op)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"GpuElemwise{{{self.scalar_op}}}"


class GpuCAReduce(GpuOp):
    """``CAReduce`` (``Sum``, ``Prod``, ``Max``, ...) over any axes, on the GPU.

    Parameters
    ----------
    scalar_op
        The associative binary scalar Op.
    axis
        The reduced axes (``None``: all).
    dtype, acc_dtype
        The output and accumulation dtypes (as resolved by the host Op's node).
    """

    __props__ = ("scalar_op", "axis", "dtype", "acc_dtype")

    def __init__(
        self,
        scalar_op: Op,
        axis: tuple[int, ...] | None = None,
        dtype: str | None = None,
        acc_dtype: str | None = None,
    ) -> None:
        self.scalar_op = scalar_op
        self.axis = None if axis is None else tuple(int(a) for a in axis)
        self.dtype = dtype
        self.acc_dtype = acc_dtype

    def host_op(self) -> CAReduce:
        """``CAReduce`` with the same scalar Op, axes and dtypes."""
        return CAReduce(self.scalar_op, self.axis, self.dtype, self.acc_dtype)  # type: ignore[arg-type]

    def reduced_axes(self, ndim: int) -> tuple[int, ...]:
        """The axes reduced for an input of rank ``ndim``."""
        return self.host_op().reduced_axes(ndim)

    def __str__(self) -> str:
        axes = "all" if self.axis is None else ",".join(map(str, self.axis))
        return f"GpuCAReduce{{{self.scalar_op}}}{{axes={axes}}}"

    def infer_shape(self, fgraph: Any, node: Any, shapes: list[Any]) -> list[Any]:
        """The input shape without the reduced axes."""
        (ishape,) = shapes
        axes = self.reduced_axes(len(ishape))
        return [tuple(n for i, n in enumerate(ishape) if i not in axes)]
