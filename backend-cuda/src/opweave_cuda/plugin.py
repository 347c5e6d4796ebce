"""The ``opweave.plugins`` entry point of the CUDA backend.

Importing this module never imports pycuda: the plugin loads (and reports itself
unavailable, with the reason) on machines without pycuda or a CUDA driver. Nor does it
import the GPU implementations and their kernel generators (:mod:`opweave_cuda.impls`):
every process that compiles a function loads this plugin, and only one with GPU nodes
needs those, so they are imported at the first GPU node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opweave.link.implementations import ImplementationTable
from opweave.plugins import hookimpl
from opweave_cuda import availability
from opweave_cuda.linker import CudaLinker
from opweave_cuda.options import add_cuda_options
from opweave_cuda.rewrites import register_gpu_rewrites
from opweave_cuda.sharedvar import gpu_shared
from opweave_cuda.transfer_ops import cuda_transfer
from opweave_cuda.type import GpuArrayType


def _factories() -> Mapping[type, Any]:
    from opweave_cuda.impls import FACTORIES

    return FACTORIES


def _gpu_op_classes() -> list[type]:
    from opweave_cuda.impls import gpu_op_classes

    return gpu_op_classes()


#: The GPU implementations (:data:`opweave_cuda.impls.FACTORIES`), imported at the first
#: lookup.
IMPLEMENTATIONS = ImplementationTable("cuda", _factories, scope=_gpu_op_classes)


def _gpu_perform(op: Any, node: Any) -> Any:
    """The GPU implementation of ``node``; ``None``, importing nothing, for a node with no
    GPU input or output (every GPU Op, transfer and GPU ``DeepCopyOp`` has one)."""
    variables = (*node.inputs, *node.outputs)
    if not any(isinstance(v.type, GpuArrayType) for v in variables):
        return None
    from opweave_cuda.impls import perform_for

    return perform_for(op, node)


@hookimpl
def opweave_addoption(config: Any) -> None:
    """Register the CUDA backend's flags (``cuda__check_launches``)."""
    add_cuda_options(config)


@hookimpl
def opweave_linkers() -> dict[str, type]:
    """``cuda``."""
    return {"cuda": CudaLinker}


@hookimpl
def opweave_backend_info() -> dict[str, Any]:
    """Available when pycuda imports and the driver reports a device (checked once)."""
    problem = availability.cuda_problem()
    return {
        "name": "opweave-cuda",
        "linkers": ["cuda"],
        "devices": ["cuda"],
        "available": problem is None,
        "reason": problem,
        "implementations": IMPLEMENTATIONS,
    }


@hookimpl
def opweave_implementation(op: Any, node: Any, backend: str) -> Any:
    """The GPU Ops, transfers, and ``DeepCopyOp`` of GPU values, for ``backend="cuda"``
    and for any linker that runs ``perform``-style thunks (``"py"``).

    A GPU node has no other implementation, so it runs on the GPU whether the linker
    asks for ``"cuda"`` (the ``cuda`` linker) or ``"py"`` (the ``vm`` and ``cvm`` loops
    after ``config.device="cuda"`` moved the graph). Answering for a GPU node makes the
    device ``config.device`` names the process's
    (:func:`~opweave_cuda.availability.select_device`: a ``ValueError`` lists the devices
    when there is no such device).
    """
    if backend not in ("py", "cuda"):
        return None
    perform = _gpu_perform(op, node)
    if perform is None:
        return None
    from opweave import config  # late: the package init is above the plugin's imports

    availability.select_device(str(getattr(config, "device", "cpu")))
    return perform


@hookimpl
def opweave_transfer(var: Any, target: str) -> Any:
    """``'cuda'``: ``GpuFromHost`` of host tensors; ``'cpu'``: ``HostFromGpu`` of GPU ones."""
    return cuda_transfer(var, target)


@hookimpl
def opweave_shared(
    value: Any,
    name: str | None,
    strict: bool,
    allow_downcast: bool | None,
    borrow: bool,
    shape: Any,
    target: str | None,
) -> Any:
    """``shared(value, target='cuda')``: a :class:`GpuArraySharedVariable`."""
    return gpu_shared(value, name, strict, allow_downcast, borrow, shape, target)


@hookimpl
def opweave_rewrites(db: Any) -> None:
    """``gpu_lift`` and ``gpu_cut_transfers`` (tags ``gpu``, ``cuda``)."""
    register_gpu_rewrites(db)
