"""Nodes the dask linker has no chunk-wise form for: run whole, on one worker, lazily.

The node's Python implementation (the ``vm`` linker's, found through the plugins'
``opweave_implementation`` hook) runs in one :func:`dask.delayed` task whose arguments are
the node's inputs: Dask gathers each input array into one piece for it (its chunks
concatenated), so nothing is computed before the outputs are. Tensor outputs become Dask
arrays again (:func:`dask.array.from_delayed`, one chunk), with the lengths the Op's
``infer_shape`` gives from the inputs' lengths (and from concrete inputs' values); lengths it
cannot give stay unknown (``nan``), which some later Dask operations refuse. Other outputs
stay :class:`~dask.delayed.Delayed`.

The same kernel runs a node at once, as the ``vm`` linker would, when none of its inputs is
lazy (shape arithmetic, constants).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da

from opweave.graph.basic import Apply, Constant, Variable, graph_inputs
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType
from opweave_dask.kernel import NodeKernel, detached_inputs, variable_positions
from opweave_dask.values import is_lazy_value, meta_for

__all__ = ["ShapeFunction", "build_one_worker", "whole_node_kernel"]

Runner = Callable[[list[Any]], list[Any]]


def whole_node_kernel(node: Apply) -> NodeKernel:
    """A ``vm`` kernel computing ``node`` from whole values (not in place)."""
    op = node.op
    if isinstance(op, Elemwise) and op.inplace_pattern:
        op = Elemwise(op.scalar_op, name=op.name)
        return NodeKernel(op, detached_inputs(node), "vm", [o.type for o in node.outputs])
    positions = variable_positions(node)
    destroyed = sorted(
        {positions.index(i) for ins in node.op.destroy_map.values() for i in ins if i in positions}
    )
    return NodeKernel(
        op, detached_inputs(node), "vm", [o.type for o in node.outputs], destroyed=destroyed
    )


class ShapeFunction:
    """The output lengths of a node from its inputs' lengths, through ``infer_shape``.

    Built once per node; :meth:`__call__` gives one tuple per tensor output, with ``nan``
    for lengths it cannot tell (the Op has no ``infer_shape``, or the lengths depend on a
    lazy input's values).
    """

    def __init__(self, node: Apply) -> None:
        self.node = node
        self.fn: Any = None
        self.uses: list[int] = []
        self.dims: list[int] = []
        self._build()

    def _build(self) -> None:
        import opweave  # late-bound: the package's function (the kernels' own compiler)
        import opweave.tensor as ot

        node = self.node
        tensors = [o for o in node.outputs if isinstance(o.type, TensorType)]
        self.dims = [o.type.ndim for o in tensors]
        if all(s is not None for o in tensors for s in o.type.shape):
            return
        lengths = [
            tuple(ot.lscalar(f"n{i}_{d}") for d in range(v.type.ndim))
            if isinstance(v.type, TensorType)
            else None
            for i, v in enumerate(node.inputs)
        ]
        tensor_outputs = [i for i, o in enumerate(node.outputs) if isinstance(o.type, TensorType)]
        try:
            shapes = node.op.infer_shape(None, node, lengths)
            flat = [ot.as_tensor_variable(n) for i in tensor_outputs for n in shapes[i]]
        except Exception:  # no infer_shape, or one this cannot evaluate: lengths unknown
            return
        scalars = [n for shape in lengths if shape is not None for n in shape]
        roots = set(graph_inputs(flat)) if flat else set()
        self.uses = [
            i for i, v in enumerate(node.inputs) if not isinstance(v, Constant) and v in roots
        ]
        try:
            self.fn = opweave.function(
                scalars + [node.inputs[i] for i in self.uses],
                flat,
                mode=opweave.Mode(linker="vm"),
                on_unused_input="ignore",
            )
        except Exception:
            self.fn = None

    def __call__(self, values: Sequence[Any]) -> list[tuple[float, ...]]:
        node = self.node
        tensors = [o for o in node.outputs if isinstance(o.type, TensorType)]
        static = [tuple(math.nan if s is None else s for s in o.type.shape) for o in tensors]
        if self.fn is None or any(is_lazy_value(values[i]) for i in self.uses):
            return static
        args: list[Any] = []
        for v, value in zip(node.inputs, values, strict=True):
            if isinstance(v.type, TensorType):
                args += [int(n) if not math.isnan(n) else -1 for n in _shape_of(value)]
        if -1 in args:
            return static
        args += [values[i] for i in self.uses]
        flat = [int(n) for n in self.fn(*args)]
        result: list[tuple[float, ...]] = []
        for ndim in self.dims:
            result.append(tuple(flat[:ndim]))
            flat = flat[ndim:]
        return result


def _whole(value: Any) -> Any:
    """A Dask array as the Delayed of its one chunk (rechunked to one), its graph kept as it
    is (``dask.delayed`` would optimize it separately, duplicating shared tasks)."""
    if not isinstance(value, da.Array):
        return value
    one = value.rechunk({axis: -1 for axis in range(value.ndim)})
    return one.to_delayed(optimize_graph=False).flat[0]


def _shape_of(value: Any) -> tuple[float, ...]:
    shape = getattr(value, "shape", None)
    if shape is None:  # a Delayed: lengths unknown
        return (math.nan,)
    return tuple(shape)


def build_one_worker(node: Apply, kernel: NodeKernel | None = None) -> Runner:
    """A runner computing ``node`` whole in one task (see the module's description)."""
    kernel = kernel or whole_node_kernel(node)
    positions = variable_positions(node)
    shapes = ShapeFunction(node)
    outputs: list[Variable] = list(node.outputs)

    def run(values: list[Any]) -> list[Any]:
        result = dask.delayed(kernel, pure=True)(*[_whole(values[i]) for i in positions])
        lengths = iter(shapes(values))
        out: list[Any] = []
        for k, var in enumerate(outputs):
            value = result if len(outputs) == 1 else result[k]
            if isinstance(var.type, TensorType):
                dtype = var.type.dtype
                meta = meta_for(var.type.ndim, dtype)
                out.append(da.from_delayed(value, next(lengths), dtype=dtype, meta=meta))
            else:
                out.append(value)
        return out

    return run
