"""Basic indexing of GPU arrays."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.tensor.subtensor import Subtensor
from opweave_cuda.ops.base import GpuOp

__all__ = ["GpuSubtensor"]


class GpuSubtensor(GpuOp):
    """``x[idx_list]`` (integers and slices) of a GPU array: a strided view.

    The symbolic index entries are host integer scalars.

    Parameters
    ----------
    idx_list
        As for :class:`~opweave.tensor.subtensor.Subtensor`.
    """

    __props__ = ("idx_list",)
    view_map = {0: [0]}
    device_inputs = (0,)

    def __init__(self, idx_list: Sequence[Any]) -> None:
        self._host = Subtensor(idx_list)
        self.idx_list = self._host.idx_list

    def host_op(self) -> Subtensor:
        """``Subtensor(idx_list)``."""
        return self._host

    def __hash__(self) -> int:
        return hash((type(self), hash(self._host)))

    def __str__(self) -> str:
        return "Gpu" + str(self._host)
