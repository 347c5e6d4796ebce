"""The rewrites that move graphs to the GPU, and the removal of transfer pairs.

Registered through the ``opweave_rewrites`` hook (see :func:`register_gpu_rewrites`):

====================== ======== ===========================================================
entry                  position tags
====================== ======== ===========================================================
``gpu_lift``           4        gpu, cuda (never ``fast_run``: only a cuda compile runs it)
``gpu_cut_transfers``  4.5      gpu, cuda, fast_run, fast_compile, transfer
====================== ======== ===========================================================

``gpu_lift`` runs after ``elemwise_fusion`` (3), so fused ``Composite`` loops move as one
kernel, and before ``merge2`` (49) and ``inplace`` (50). A host reduction fused with its
elementwise input (``MapReduce``) is first split back into its ``Elemwise`` and ``CAReduce``,
which move as a fused elementwise kernel and a reduction kernel. It visits the nodes in
topological order and replaces each supported one by ``HostFromGpu(GpuOp(...))`` whose
GPU inputs are the GPU variables the previous replacements produced (or
``GpuFromHost`` of host inputs): a chain of GPU Ops has no transfers between its links,
and transfers remain only at the graph's edges. ``gpu_cut_transfers`` removes
back-to-back pairs (``HostFromGpu(GpuFromHost(x)) -> x`` and the reverse); it only removes
transfers, so it is safe on CPU compiles too.

``config.device = 'cuda'`` (through the backend info's ``devices``) and the ``cuda``
linker (through its ``rewrite_tags``) add the tag ``cuda`` to the compilation's query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.features import ReplaceValidate
from opweave.graph.rewriting import GraphRewriter, in2out, node_rewriter
from opweave.graph.utils import InconsistencyError
from opweave.tensor.basic import Alloc
from opweave.tensor.blas import Dot, MatMul
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.shape import Reshape
from opweave.tensor.subtensor import Subtensor
from opweave.tensor.type import TensorType
from opweave_cuda.ops import (
    GpuAlloc,
    GpuCAReduce,
    GpuDimShuffle,
    GpuDot,
    GpuElemwise,
    GpuOp,
    GpuReshape,
    GpuSubtensor,
    as_gpuarray_variable,
)
from opweave_cuda.transfer_ops import GpuFromHost, HostFromGpu, host_from_gpu

if TYPE_CHECKING:
    from opweave.graph.fg import FunctionGraph
    from opweave.graph.rewriting import RewriteDatabase

__all__ = [
    "DEVICE_DTYPES",
    "GpuLift",
    "gpu_op_for",
    "local_cut_gpu_transfers",
    "register_gpu_rewrites",
]

#: The dtypes whose arrays are moved to the GPU (no complex numbers).
DEVICE_DTYPES = frozenset(
    {
        "bool",
        "float16",
        "float32",
        "float64",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
    }
)
#: The dtypes ``gemm`` multiplies.
GEMM_DTYPES = frozenset({"float32", "float64"})


def _kernel_supported(build: str, *args: Any, **kwargs: Any) -> bool:
    """False when the kernel generator refuses the node (``NotImplementedError``)."""
    try:
        from opweave_cuda import kernels
    except ImportError:
        return True
    builder = getattr(kernels, build, None)
    if builder is None:
        return True
    try:
        builder(*args, **kwargs)
    except NotImplementedError:
        return False
    return True


def _elemwise_op(node: Apply) -> GpuOp | None:
    op = node.op
    if op.inplace_pattern:  # type: ignore[attr-defined]
        return None
    ndim = node.outputs[0].type.ndim  # type: ignore[attr-defined]
    if any(i.type.ndim != ndim for i in node.inputs):  # type: ignore[attr-defined]
        return None
    if not _kernel_supported(
        "elemwise_kernel",
        op.scalar_op,  # type: ignore[attr-defined]
        [i.type for i in node.inputs],
        [o.type for o in node.outputs],
    ):
        return None
    return GpuElemwise(op.scalar_op)  # type: ignore[attr-defined]


def _careduce_op(node: Apply) -> GpuOp | None:
    op = node.op
    gpu = GpuCAReduce(op.scalar_op, op.axis, op.dtype, op.acc_dtype)  # type: ignore[attr-defined]
    in_type = node.inputs[0].type
    if not _kernel_supported(
        "reduction_kernel",
        gpu.scalar_op,
        gpu.reduced_axes(in_type.ndim),  # type: ignore[attr-defined]
        in_type,
        node.outputs[0].type,
        acc_dtype=gpu.acc_dtype,
    ):
        return None
    return gpu


def _dot_op(node: Apply) -> GpuOp | None:
    if isinstance(node.op, MatMul) and any(i.type.ndim != 2 for i in node.inputs):  # type: ignore[attr-defined]
        return None
    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]
    if dtype not in GEMM_DTYPES or any(i.type.dtype != dtype for i in node.inputs):  # type: ignore[attr-defined]
        return None
    return GpuDot()


def gpu_op_for(node: Apply) -> GpuOp | None:
    """The GPU Op that computes the host ``node``, or ``None`` if it stays on the host.

    Moved: ``Elemwise`` (not in place; fused ``Composite`` included) whose kernel the
    generator supports, ``CAReduce`` over any axes, ``Dot`` and 2-d ``MatMul`` of one
    float32/float64 dtype, ``DimShuffle``, ``Reshape``, ``Alloc`` and basic
    ``Subtensor``, when every array input and output has a dtype in
    :data:`DEVICE_DTYPES`.
    """
    op = node.op
    arrays = [v for v in (*node.inputs, *node.outputs) if isinstance(v.type, TensorType)]
    if any(v.type.dtype not in DEVICE_DTYPES for v in arrays):  # type: ignore[attr-defined]
        return None
    if isinstance(op, Elemwise):
        return _elemwise_op(node)
    if isinstance(op, CAReduce):
        return _careduce_op(node)
    if isinstance(op, Dot | MatMul):
        return _dot_op(node)
    if isinstance(op, DimShuffle):
        return GpuDimShuffle(op.input_ndim, op.new_order)
    if isinstance(op, Reshape):
        return GpuReshape(op.ndim)
    if isinstance(op, Alloc):
        return GpuAlloc()
    if type(op) is Subtensor:
        return GpuSubtensor(op.idx_list)
    return None


class GpuLift(GraphRewriter):
    """Replace every supported host node by its GPU Op, keeping transfers at the edges."""

    name = "gpu_lift"

    def add_requirements(self, fgraph: FunctionGraph) -> None:
        """Attach a ReplaceValidate."""
        fgraph.attach_feature(ReplaceValidate())

    def apply(self, fgraph: FunctionGraph) -> int:
        """Move the graph's supported nodes to the GPU; return how many moved."""
        self._split_map_reduces(fgraph)
        moved = 0
        for node in list(fgraph.toposort()):
            if node not in fgraph.apply_nodes:
                continue
            gpu_op = gpu_op_for(node)
            if gpu_op is None:
                continue
            inputs: list[Variable] = [
                as_gpuarray_variable(x) if gpu_op._on_device(i) else x
                for i, x in enumerate(node.inputs)
            ]
            try:
                gpu_node = gpu_op.make_node(*inputs)
            except (TypeError, ValueError, NotImplementedError):
                continue
            outputs = [host_from_gpu(o) for o in gpu_node.outputs]
            if any(new.type != old.type for new, old in zip(outputs, node.outputs, strict=True)):
                continue
            try:
                fgraph.replace_all_validate(  # type: ignore[attr-defined]
                    list(zip(node.outputs, outputs, strict=True)), reason="gpu_lift"
                )
            except InconsistencyError:
                continue
            moved += 1
        return moved

    @staticmethod
    def _split_map_reduces(fgraph: FunctionGraph) -> None:
        """Undo the host's reduction fusion (``MapReduce``): the GPU fuses on its own terms.

        ``MapReduce(elemwise, careduce)(x)`` becomes ``careduce(elemwise(x))``, whose two
        nodes the lift then moves (a fused elementwise kernel and a reduction kernel).
        """
        for node in list(fgraph.toposort()):
            op = node.op
            if type(op).__name__ != "MapReduce" or node not in fgraph.apply_nodes:
                continue
            elemwise, careduce = getattr(op, "elemwise", None), getattr(op, "careduce", None)
            if not isinstance(elemwise, Elemwise) or not isinstance(careduce, CAReduce):
                continue
            try:
                mapped = elemwise(*node.inputs)
                reduced = careduce(mapped)
            except (TypeError, ValueError):
                continue
            if reduced.type != node.outputs[0].type or len(node.outputs) != 1:
                continue
            if gpu_op_for(reduced.owner) is None or gpu_op_for(mapped.owner) is None:
                continue
            try:
                fgraph.replace_all_validate(  # type: ignore[attr-defined]
                    [(node.outputs[0], reduced)], reason="gpu_split_map_reduce"
                )
            except InconsistencyError:
                continue


@node_rewriter([GpuFromHost, HostFromGpu])
def local_cut_gpu_transfers(fgraph: FunctionGraph, node: Apply) -> list[Variable] | bool:
    """``HostFromGpu(GpuFromHost(x)) -> x`` and ``GpuFromHost(HostFromGpu(g)) -> g``."""
    (x,) = node.inputs
    inverse = HostFromGpu if isinstance(node.op, GpuFromHost) else GpuFromHost
    if x.owner is None or not isinstance(x.owner.op, inverse):
        return False
    inner = x.owner.inputs[0]
    if inner.type != node.outputs[0].type:
        return False
    return [inner]


def register_gpu_rewrites(db: RewriteDatabase) -> None:
    """Register ``gpu_lift`` and ``gpu_cut_transfers`` into ``db`` (see the module doc)."""
    db.register("gpu_lift", GpuLift(), "gpu", "cuda", position=4)
    db.register(
        "gpu_cut_transfers",
        in2out(local_cut_gpu_transfers),
        "gpu",
        "cuda",
        "fast_run",
        "fast_compile",
        "transfer",
        position=4.5,
    )
