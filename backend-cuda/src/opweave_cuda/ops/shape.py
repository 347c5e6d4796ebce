"""Views of GPU arrays: axis permutation/insertion/removal and reshaping."""

from __future__ import annotations

from collections.abc import Sequence

from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.shape import Reshape
from opweave_cuda.ops.base import GpuOp

__all__ = ["GpuDimShuffle", "GpuReshape"]


class GpuDimShuffle(GpuOp):
    """``DimShuffle`` of a GPU array: a strided view, no data moves.

    Parameters
    ----------
    input_ndim, new_order
        As for :class:`~opweave.tensor.dimshuffle.DimShuffle`.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order: Sequence[int | str]) -> None:
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(new_order)

    def host_op(self) -> DimShuffle:
        """``DimShuffle(input_ndim, new_order)``."""
        return DimShuffle(self.input_ndim, self.new_order)

    def __str__(self) -> str:
        return f"GpuDimShuffle{{{','.join(map(str, self.new_order))}}}"


class GpuReshape(GpuOp):
    """``Reshape`` of a GPU array: a view of a C-contiguous input, else of a device copy.

    The new shape (a host integer vector) stays on the host.

    Parameters
    ----------
    ndim
        The output rank.
    """

    __props__ = ("ndim",)
    view_map = {0: [0]}
    device_inputs = (0,)

    def __init__(self, ndim: int) -> None:
        self.ndim = int(ndim)

    def host_op(self) -> Reshape:
        """``Reshape(ndim)``."""
        return Reshape(self.ndim)

    def __str__(self) -> str:
        return f"GpuReshape{{{self.ndim}}}"
