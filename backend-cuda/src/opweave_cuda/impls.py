"""Implementations of the GPU Ops, served through ``opweave_implementation`` (``"cuda"``).

:func:`perform_for` runs at compile time: it builds the generated kernels a node needs
(no pycuda required for that) and returns ``fn(node, inputs, output_storage)``. The
returned functions need pycuda when they run. View Ops (DimShuffle, Subtensor, Reshape of
contiguous arrays) build strided ``GPUArray`` views; nothing is copied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

import opweave.scalar.basic as ps
from opweave.compile.ops import DeepCopyOp
from opweave.graph.basic import Apply, Constant
from opweave.graph.op import Op
from opweave.link.implementations import ImplementationTable, op_classes_of
from opweave.scalar.composite import Composite
from opweave.scalar.type import get_scalar_type
from opweave.tensor.dimshuffle import DimShuffle
from opweave.tensor.subtensor import indices_from_subtensor
from opweave_cuda import device_copy
from opweave_cuda.ops import (
    GpuAlloc,
    GpuCAReduce,
    GpuDimShuffle,
    GpuDot,
    GpuElemwise,
    GpuOp,
    GpuReshape,
    GpuSubtensor,
)
from opweave_cuda.transfer_ops import GpuFromHost, HostFromGpu
from opweave_cuda.type import GpuArrayType, is_gpuarray

__all__ = ["FACTORIES", "gpu_op_classes", "perform_for"]


def gpu_op_classes() -> list[type]:
    """The Op classes this backend defines (its implementations' scope), less its base and
    the scalar Ops of the kernel generator (``opweave_cuda.kernels``: parts of generated
    device code, such as ``RoundToHalf``, never nodes of a graph)."""
    classes = op_classes_of("opweave_cuda", exclude=("opweave_cuda.kernels",))
    return [cls for cls in classes if cls is not GpuOp]


Perform = Callable[[Apply, Sequence[Any], list[list[Any]]], None]


def _reusable(cell: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
    """The GPUArray in ``cell`` when it can hold a result of ``shape``/``dtype``, else None."""
    z = cell[0]
    if (
        is_gpuarray(z)
        and tuple(z.shape) == shape
        and z.dtype == np.dtype(dtype)
        and z.base is None
        and device_copy.is_contiguous(z)
    ):
        return z
    return None


def _output(cell: list[Any], shape: tuple[int, ...], dtype: Any) -> Any:
    z = _reusable(cell, shape, dtype)
    if z is None:
        z = device_copy.empty(shape, dtype)
        cell[0] = z
    return z


def broadcast_shape(op: Op, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """NumPy broadcasting of equal-rank ``shapes``; ``ValueError`` naming ``op`` otherwise."""
    out: list[int] = []
    for axis, lengths in enumerate(zip(*shapes, strict=True)):
        sizes = {n for n in lengths if n != 1}
        if len(sizes) > 1:
            raise ValueError(
                f"{op}: input shapes {list(shapes)} cannot be broadcast together (axis {axis})"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# ---------------------------------------------------------------------- transfers


def _gpu_from_host(op: Op, node: Apply) -> Perform:
    if isinstance(node.inputs[0], Constant):
        return _constant_to_gpu()

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        x = device_copy.host_for_upload(inputs[0])  # 0-d values stay 0-d
        z = _reusable(out[0], x.shape, x.dtype)
        if z is None:
            out[0][0] = device_copy.upload(x)
        else:
            device_copy.upload_into(z, x)

    return perform


def _constant_to_gpu() -> Perform:
    """``GpuFromHost`` of a constant: uploaded at the first call only (an upload waits for
    the kernels before it), then copied on the device into each call's output, which a
    node may overwrite in place."""
    held: list[Any] = []

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        if not held:
            held.append(device_copy.upload(inputs[0]))
        (value,) = held
        z = _reusable(out[0], tuple(value.shape), value.dtype)
        if z is None:
            z = device_copy.empty(value.shape, value.dtype)
            out[0][0] = z
        device_copy.copy_into(z, value)

    return perform


def _host_from_gpu(op: Op, node: Apply) -> Perform:
    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        out[0][0] = device_copy.to_host(inputs[0])

    return perform


def _deep_copy(op: Op, node: Apply) -> Perform | None:
    if not isinstance(node.inputs[0].type, GpuArrayType):
        return None

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        (x,) = inputs
        z = _output(out[0], tuple(x.shape), x.dtype)
        device_copy.copy_into(z, x)

    return perform


# ---------------------------------------------------------------------- computations


def _constant_value(var: Any) -> Any:
    """The one value of ``var`` when it is a constant (moved to the device, broadcast),
    else ``None``."""
    while not isinstance(var, Constant):
        owner = var.owner
        if owner is None or not isinstance(owner.op, (GpuFromHost, DimShuffle, GpuDimShuffle)):
            return None
        var = owner.inputs[0]
    data = np.asarray(var.data)
    if data.size == 0 or not (data == data.flat[0]).all():
        return None
    return data.flat[0]


def _kernel_scalar_op(op: GpuElemwise, node: Apply) -> Any:
    """The scalar Op the kernel computes: a power's constant integer exponent is inlined
    (a constant exponent no wider than the base makes the power wrap around in the base's
    dtype, as on the host linkers: see :class:`opweave.scalar.basic.Pow`)."""
    scalar_op = op.scalar_op
    if type(scalar_op) is not ps.Pow or len(node.inputs) != 2:
        return scalar_op
    exponent_dtype = node.inputs[1].type.dtype  # type: ignore[attr-defined]
    value = _constant_value(node.inputs[1]) if np.dtype(exponent_dtype).kind in "biu" else None
    if value is None:
        return scalar_op
    xs, ys = (get_scalar_type(v.type.dtype)() for v in node.inputs)  # type: ignore[attr-defined]
    power: Any = ps.pow(xs, ps.constant(value, dtype=exponent_dtype))
    return Composite([xs, ys], [power])


def _elemwise(op: GpuElemwise, node: Apply) -> Perform:
    from opweave_cuda.kernels import elemwise_kernel

    kernel = elemwise_kernel(
        _kernel_scalar_op(op, node), [i.type for i in node.inputs], [o.type for o in node.outputs]
    )
    out_dtypes = [o.type.dtype for o in node.outputs]  # type: ignore[attr-defined]

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        shape = broadcast_shape(op, [tuple(x.shape) for x in inputs])
        outputs = [_output(cell, shape, d) for cell, d in zip(out, out_dtypes, strict=True)]
        if all(n > 0 for n in shape):
            kernel(list(inputs), outputs)

    return perform


#: Reductions NumPy refuses over an empty axis (their identity is infinite), as the CPU
#: backends do: scalar Op class -> the ufunc NumPy names in its message.
_NO_IDENTITY: MappingProxyType[type, str] = MappingProxyType(
    {ps.Maximum: "maximum", ps.Minimum: "minimum"}
)


def _careduce(op: GpuCAReduce, node: Apply) -> Perform:
    from opweave_cuda.kernels import reduction_kernel

    in_type = node.inputs[0].type
    axes = op.reduced_axes(in_type.ndim)  # type: ignore[attr-defined]
    kernel = reduction_kernel(
        op.scalar_op, axes, in_type, node.outputs[0].type, acc_dtype=op.acc_dtype
    )
    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]
    ufunc = _NO_IDENTITY.get(type(op.scalar_op))

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        (x,) = inputs
        if ufunc is not None and any(int(x.shape[a]) == 0 for a in axes):
            raise ValueError(
                f"{op}: zero-size array to reduction operation {ufunc} which has no identity"
            )
        shape = tuple(int(n) for i, n in enumerate(x.shape) if i not in axes)
        kernel(x, _output(out[0], shape, dtype))

    return perform


def _dot(op: GpuDot, node: Apply) -> Perform:
    from opweave_cuda.kernels.gemm import gemm

    dtype = node.outputs[0].type.dtype  # type: ignore[attr-defined]

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        a, b = inputs
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} are not aligned")
        shape = tuple(int(n) for n in (*a.shape[:-1], *b.shape[1:]))
        gemm(a, b, _output(out[0], shape, dtype))

    return perform


def _alloc(op: GpuAlloc, node: Apply) -> Perform:
    import opweave.scalar as ps
    from opweave_cuda.kernels import elemwise_kernel

    out_type = node.outputs[0].type
    value_type = node.inputs[0].type
    pad = out_type.ndim - value_type.ndim  # type: ignore[attr-defined]
    padded_type = value_type.clone(shape=(1,) * pad + tuple(value_type.shape))  # type: ignore[attr-defined]
    kernel = elemwise_kernel(ps.identity, [padded_type], [out_type])

    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        value, *lengths = inputs
        shape = tuple(int(n) for n in lengths)
        if any(n < 0 for n in shape):
            raise ValueError(f"{op}: negative dimensions are not allowed: {shape}")
        vshape = (1,) * pad + tuple(int(n) for n in value.shape)
        for v, n in zip(vshape, shape, strict=True):
            if v not in (1, n):
                raise ValueError(f"{op}: a value of shape {tuple(value.shape)} cannot fill {shape}")
        z = _output(out[0], shape, out_type.dtype)  # type: ignore[attr-defined]
        if z.size == 0:
            return
        view = device_copy.strided_view(value, vshape, (0,) * pad + tuple(value.strides))
        kernel([view], [z])

    return perform


# ---------------------------------------------------------------------- views


def dimshuffle_layout(
    op: GpuDimShuffle, shape: Sequence[int], strides: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The shape and byte strides of ``op``'s view of an array with ``shape``/``strides``.

    Raises
    ------
    ValueError
        If an axis that is dropped does not have length 1.
    """
    kept = {a for a in op.new_order if a != "x"}
    for axis in range(op.input_ndim):
        if axis not in kept and int(shape[axis]) != 1:
            raise ValueError(
                f"{op}: cannot drop axis {axis} of length {shape[axis]} (input shape "
                f"{tuple(shape)}); only length-1 axes can be dropped"
            )
    new_shape = tuple(1 if a == "x" else int(shape[a]) for a in op.new_order)  # type: ignore[index]
    new_strides = tuple(0 if a == "x" else int(strides[a]) for a in op.new_order)  # type: ignore[index]
    return new_shape, new_strides


def _dimshuffle(op: GpuDimShuffle, node: Apply) -> Perform:
    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        (x,) = inputs
        shape, strides = dimshuffle_layout(op, x.shape, x.strides)
        out[0][0] = device_copy.strided_view(x, shape, strides)

    return perform


def subtensor_layout(
    op: GpuSubtensor,
    index_values: Sequence[Any],
    shape: Sequence[int],
    strides: Sequence[int],
    itemsize: int,
) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    """The shape, byte strides and byte offset of ``x[idx]`` for ``x`` of that layout.

    NumPy computes them (with its bounds checks) on a stand-in array that has the layout
    but whose memory is never read.
    """
    base = np.zeros(1, dtype=np.dtype(f"V{itemsize}"))
    probe = np.lib.stride_tricks.as_strided(base, shape=tuple(shape), strides=tuple(strides))
    index = (*indices_from_subtensor(index_values, op.idx_list), Ellipsis)
    try:
        view = probe[index]
    except IndexError as exc:
        raise IndexError(f"{op}: {exc} (input shape {tuple(shape)})") from None
    offset = view.__array_interface__["data"][0] - probe.__array_interface__["data"][0]
    return tuple(view.shape), tuple(view.strides), int(offset)


def _subtensor(op: GpuSubtensor, node: Apply) -> Perform:
    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        x, *rest = inputs
        shape, strides, offset = subtensor_layout(op, rest, x.shape, x.strides, x.dtype.itemsize)
        out[0][0] = device_copy.strided_view(x, shape, strides, offset)

    return perform


def resolve_shape(op: Op, size: int, requested: Sequence[Any]) -> tuple[int, ...]:
    """``requested`` with a ``-1`` entry resolved, checked against ``size`` elements."""
    shp = [int(n) for n in requested]
    unknown = [i for i, n in enumerate(shp) if n == -1]
    known = int(np.prod([n for n in shp if n != -1], dtype=np.int64))
    if len(unknown) > 1 or any(n < -1 for n in shp):
        raise ValueError(f"{op}: invalid new shape {tuple(shp)}")
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"{op}: cannot reshape an array of size {size} into {tuple(shp)}")
        shp[unknown[0]] = size // known
    elif known != size:
        raise ValueError(f"{op}: cannot reshape an array of size {size} into {tuple(shp)}")
    return tuple(shp)


def _reshape(op: GpuReshape, node: Apply) -> Perform:
    def perform(node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        x, shp = inputs
        if len(shp) != op.ndim:
            raise ValueError(
                f"{op}: the new shape {tuple(shp)} has {len(shp)} entries, not {op.ndim}"
            )
        shape = resolve_shape(op, int(x.size), shp)
        x = device_copy.contiguous(x)
        itemsize = x.dtype.itemsize
        strides = tuple(
            int(np.prod(shape[i + 1 :], dtype=np.int64)) * itemsize for i in range(len(shape))
        )
        out[0][0] = device_copy.strided_view(x, shape, strides)

    return perform


#: GPU Op class -> ``fn(op, node) -> perform or None``; the scope is the backend's own Ops.
FACTORIES = ImplementationTable(
    "cuda",
    {
        GpuFromHost: _gpu_from_host,
        HostFromGpu: _host_from_gpu,
        DeepCopyOp: _deep_copy,
        GpuElemwise: _elemwise,
        GpuCAReduce: _careduce,
        GpuDot: _dot,
        GpuAlloc: _alloc,
        GpuDimShuffle: _dimshuffle,
        GpuSubtensor: _subtensor,
        GpuReshape: _reshape,
    },
    scope=gpu_op_classes,
)


def perform_for(op: Op, node: Apply) -> Perform | None:
    """The implementation of ``node`` when its Op is one of this backend's, else ``None``.

    ``DeepCopyOp`` is answered only for GPU inputs.
    """
    factory = FACTORIES.lookup(op)
    return None if factory is None else factory(op, node)
