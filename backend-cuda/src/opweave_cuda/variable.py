"""Symbolic variables whose values live on the GPU."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Constant, Variable

__all__ = ["GpuArrayConstant", "GpuArrayVariable"]


class GpuArrayVariable(Variable):
    """A variable of a :class:`~opweave_cuda.type.GpuArrayType`.

    It does not overload arithmetic: build the computation on host tensors
    (``g.transfer('cpu')``) and let the GPU rewrites (``device='cuda'`` or the ``cuda``
    linker) move it back to the device.
    """

    @property
    def ndim(self) -> int:
        """The rank."""
        return int(self.type.ndim)  # type: ignore[attr-defined]

    @property
    def dtype(self) -> str:
        """The dtype's name."""
        return str(self.type.dtype)  # type: ignore[attr-defined]

    @property
    def broadcastable(self) -> tuple[bool, ...]:
        """Which dimensions have static length 1."""
        return tuple(self.type.broadcastable)  # type: ignore[attr-defined]

    def transfer(self, target: str) -> Any:
        """This variable moved to ``target`` (``'cpu'`` gives ``HostFromGpu(self)``)."""
        from opweave.transfer import transfer

        return transfer(self, target)


class GpuArrayConstant(GpuArrayVariable, Constant):
    """A constant GPU array (its value is a ``pycuda.gpuarray.GPUArray``)."""
