"""The base of GPU Ops: output Types and shapes come from the equivalent host Op."""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor import as_tensor_variable
from opweave.tensor.type import TensorType
from opweave_cuda.type import GpuArrayType

__all__ = ["GpuOp", "as_gpuarray_variable"]


def as_gpuarray_variable(x: Any) -> Variable:
    """``x`` if it is a GPU variable, else its upload (``GpuFromHost``).

    A host variable that is itself a download (``HostFromGpu(g)``) gives ``g`` back, so
    no transfer pair is built.
    """
    from opweave_cuda.transfer_ops import HostFromGpu, gpu_from_host

    if isinstance(getattr(x, "type", None), GpuArrayType):
        return x  # type: ignore[no-any-return]
    x = as_tensor_variable(x)
    if x.owner is not None and isinstance(x.owner.op, HostFromGpu):
        return x.owner.inputs[0]
    return gpu_from_host(x)


class GpuOp(Op):
    """A GPU Op mirroring a host Op.

    Subclasses implement :meth:`host_op` (the equivalent core Op) and may set
    ``device_inputs`` (the positions of the inputs that live on the GPU; the others,
    such as shapes and indices, stay host tensors). :meth:`make_node` builds the host
    Op's node on host stand-ins to check the inputs and derive the outputs, whose Types
    become :class:`GpuArrayType`; :meth:`infer_shape` is the host Op's.
    """

    #: Positions of the inputs that live on the GPU; ``None``: all of them.
    device_inputs: tuple[int, ...] | None = None

    def host_op(self) -> Op:
        """The core Op this one computes on the device."""
        raise NotImplementedError(f"{type(self).__name__}.host_op is not defined")

    def _on_device(self, i: int) -> bool:
        return self.device_inputs is None or i in self.device_inputs

    def make_node(self, *inputs: Any) -> Apply:
        """GPU inputs (uploading host ones) and the host Op's outputs as GPU Types.

        Raises
        ------
        TypeError, ValueError
            What the host Op raises for such inputs, or a ``TypeError`` when the host Op
            would have to convert an input (cast it or pad its rank) first.
        """
        ins: list[Variable] = []
        stand_ins: list[Variable] = []
        for i, x in enumerate(inputs):
            if self._on_device(i):
                g = as_gpuarray_variable(x)
                ins.append(g)
                stand_ins.append(g.type.host_type()())  # type: ignore[attr-defined]
            else:
                h = as_tensor_variable(x)
                ins.append(h)
                stand_ins.append(h)
        host_node = self.host_op().make_node(*stand_ins)
        for i, (given, used) in enumerate(zip(stand_ins, host_node.inputs, strict=False)):
            if self._on_device(i) and given.type != used.type:
                raise TypeError(
                    f"{self}: input {i} of type {ins[i].type} would need converting to "
                    f"{used.type} first; convert it before moving the computation to the GPU"
                )
        outputs = []
        for out in host_node.outputs:
            if not isinstance(out.type, TensorType):
                raise TypeError(f"{self}: the host Op's output type {out.type} is not a tensor")
            outputs.append(GpuArrayType.from_host_type(out.type)())
        return Apply(self, ins, outputs)

    def infer_shape(self, fgraph: Any, node: Apply, shapes: list[Any]) -> list[Any]:
        """The host Op's ``infer_shape`` (GpuArrayType has TensorType's shape attributes)."""
        return self.host_op().infer_shape(fgraph, node, shapes)  # type: ignore[no-any-return]
