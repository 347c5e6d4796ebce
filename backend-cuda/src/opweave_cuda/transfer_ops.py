"""The transfer Ops between host memory and the GPU, and the ``transfer`` rule.

``GpuFromHost(x)`` uploads a host tensor; ``HostFromGpu(g)`` downloads a GPU array. Each
one's gradient is the opposite transfer. Their implementations (pycuda uploads and
downloads) are served by the plugin's ``opweave_implementation`` hook.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.graph.type import DisconnectedType, NullType
from opweave.tensor import as_tensor_variable
from opweave.tensor.type import TensorType
from opweave_cuda.type import GpuArrayType

__all__ = [
    "CUDA_TARGETS",
    "GpuFromHost",
    "HostFromGpu",
    "cuda_transfer",
    "gpu_from_host",
    "host_from_gpu",
]

#: The ``transfer`` targets that mean "the GPU".
CUDA_TARGETS = ("cuda", "gpu")


def _passes_through(g: Variable) -> bool:
    return isinstance(g.type, DisconnectedType | NullType)


class GpuFromHost(Op):
    """Upload a host tensor: the output is a :class:`GpuArrayType` of the same dtype/shape."""

    __props__ = ()

    def make_node(self, x: Any) -> Apply:
        """``x`` must be a host tensor (a ``TensorType`` variable or a value).

        Raises
        ------
        TypeError
            If ``x`` already lives on the GPU or is not a tensor.
        """
        if isinstance(getattr(x, "type", None), GpuArrayType):
            raise TypeError(f"GpuFromHost: {x} already lives on the GPU (type {x.type})")
        x = as_tensor_variable(x)
        if not isinstance(x.type, TensorType):
            raise TypeError(f"GpuFromHost expects a host tensor, got {x} of type {x.type}")
        return Apply(self, [x], [GpuArrayType.from_host_type(x.type)()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The gradient, downloaded: ``HostFromGpu(gz)``."""
        (gz,) = output_grads
        if _passes_through(gz) or not isinstance(gz.type, GpuArrayType):
            return [gz]
        return [host_from_gpu(gz)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The eval point, uploaded."""
        (ev,) = eval_points
        return [None if ev is None else gpu_from_host(ev)]

    def __str__(self) -> str:
        return "GpuFromHost"


class HostFromGpu(Op):
    """Download a GPU array: the output is a ``TensorType`` of the same dtype/shape."""

    __props__ = ()

    def make_node(self, g: Any) -> Apply:
        """``g`` must be a :class:`GpuArrayType` variable.

        Raises
        ------
        TypeError
            If ``g`` is not a GPU variable.
        """
        if not isinstance(g, Variable) or not isinstance(g.type, GpuArrayType):
            raise TypeError(
                f"HostFromGpu expects a variable of a GpuArrayType, got {g!r} of type "
                f"{getattr(g, 'type', type(g).__name__)}"
            )
        return Apply(self, [g], [g.type.host_type()()])

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[tuple[Any, ...]]) -> list[Any]:
        """The input's shape."""
        return [shapes[0]]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        """The gradient, uploaded: ``GpuFromHost(gz)``."""
        (gz,) = output_grads
        if _passes_through(gz):
            return [gz]
        gz = as_tensor_variable(gz)
        wanted = inputs[0].type.host_type()  # type: ignore[attr-defined]
        if gz.type.dtype != wanted.dtype:  # type: ignore[attr-defined]
            gz = gz.astype(wanted.dtype)  # type: ignore[attr-defined]
        return [gpu_from_host(gz)]

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        """The eval point, downloaded."""
        (ev,) = eval_points
        return [None if ev is None else host_from_gpu(ev)]

    def __str__(self) -> str:
        return "HostFromGpu"


def gpu_from_host(x: Any) -> Variable:
    """``GpuFromHost()(x)``."""
    return GpuFromHost()(x)  # type: ignore[return-value]


def host_from_gpu(g: Any) -> Variable:
    """``HostFromGpu()(g)``."""
    return HostFromGpu()(g)  # type: ignore[return-value]


def cuda_transfer(var: Variable, target: str) -> Variable | None:
    """The ``opweave_transfer`` rule of this backend.

    * ``'cuda'`` (or ``'gpu'``): a host tensor becomes ``GpuFromHost(var)``; a GPU
      variable is returned as is.
    * ``'cpu'``: a GPU variable becomes ``HostFromGpu(var)``.
    * anything else: ``None`` (another plugin may answer).
    """
    on_gpu = isinstance(var.type, GpuArrayType)
    if target in CUDA_TARGETS:
        if on_gpu:
            return var
        if isinstance(var.type, TensorType):
            return gpu_from_host(var)
        return None
    if target == "cpu" and on_gpu:
        return host_from_gpu(var)
    return None
