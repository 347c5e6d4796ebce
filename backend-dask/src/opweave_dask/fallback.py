"""Nodes the dask linker has no chunk-wise form for: run whole, on one worker, lazily.

The node's Python implementation (the ``vm`` linker's, found through the plugins'
``opweave_implementation`` hook) runs in one :func:`dask.delayed` task whose arguments are
the node's inputs: Dask gathers each input array into one piece for it (its chunks
concatenated, in a task of their own when their lengths are unknown), so nothing is
computed before the outputs are. Tensor outputs become Dask arrays again
(:func:`dask.array.from_delayed`, one chunk), with the lengths the Op's ``infer_shape``
gives from the inputs' known lengths (and from concrete inputs' values); lengths it cannot
give stay unknown (``nan``). A later node run on one worker takes such an array as any
other; a chunk-wise runner whose Dask operation would refuse it (indexing or joining along
an unknown length) returns ``None``, leaving the node to this module. Other outputs stay
:class:`~dask.delayed.Delayed`.

The same kernel runs a node at once, as the ``vm`` linker would, when none of its inputs is
lazy (shape arithmetic, constants).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from opweave.graph.basic import Apply, Constant, Variable, ancestors
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
    for lengths it cannot tell: the Op has no ``infer_shape``, the lengths depend on the
    outputs' values or on a lazy input's values, or on input lengths that are unknown
    themselves (the other lengths are still given).
    """

    def __init__(self, node: Apply) -> None:
        self.node = node
        self.fn: Any = None
        self.uses: list[int] = []
        self.dims: list[int] = []
        #: For each output length (all outputs' lengths in a row), the positions of the
        #: input lengths it is computed from; ``None`` for one the inputs do not give.
        self.needs: list[frozenset[int] | None] = []
        self._build()

    def _build(self) -> None:
        import opweave  # late-bound: the package's function (the kernels' own compiler)
        import opweave.tensor as ot

        node = self.node
        tensors = [o.type for o in node.outputs if isinstance(o.type, TensorType)]
        self.dims = [t.ndim for t in tensors]
        if all(s is not None for t in tensors for s in t.shape):
            return
        lengths: list[Any] = [
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
        position = {n: k for k, n in enumerate(scalars)}
        outputs = set(node.outputs)
        given: list[Any] = []  # the lengths computable from the inputs
        for n in flat:
            # The walk stops at the node's inputs: lengths computed from an input's value
            # (the transform lengths of an FFT) need that value, not what computed it.
            needed = set(ancestors([n], blockers=node.inputs))
            if needed & outputs:  # a length of an output's own value: unknown
                self.needs.append(None)
                continue
            self.needs.append(frozenset(position[a] for a in needed if a in position))
            given.append(n)
        if not given:
            return
        read = set(ancestors(given, blockers=node.inputs))
        self.uses = [
            i for i, v in enumerate(node.inputs) if not isinstance(v, Constant) and v in read
        ]
        try:
            self.fn = opweave.function(
                scalars + [node.inputs[i] for i in self.uses],
                given,
                mode=opweave.Mode(linker="vm"),
                on_unused_input="ignore",
            )
        except Exception:
            self.fn = None

    def __call__(self, values: Sequence[Any]) -> list[tuple[float, ...]]:
        node = self.node
        tensors = [o.type for o in node.outputs if isinstance(o.type, TensorType)]
        static = [tuple(math.nan if s is None else s for s in t.shape) for t in tensors]
        if self.fn is None or any(is_lazy_value(values[i]) for i in self.uses):
            return static
        known: list[float] = []
        for v, value in zip(node.inputs, values, strict=True):
            if isinstance(v.type, TensorType):
                shape = _shape_of(value)
                if len(shape) != v.type.ndim:
                    shape = (math.nan,) * v.type.ndim
                known += shape
        unknown = {k for k, n in enumerate(known) if math.isnan(n)}
        if all(need is None or need & unknown for need in self.needs):
            return static
        # Unknown input lengths are given as 0: the lengths computed from them are dropped.
        args: list[Any] = [0 if math.isnan(n) else int(n) for n in known]
        args += [values[i] for i in self.uses]
        try:
            computed = iter(self.fn(*args))
        except Exception:  # a check on the stand-in lengths failed: lengths unknown
            return static
        flat: list[float] = []
        for need in self.needs:
            n = math.nan if need is None else next(computed)
            flat.append(math.nan if need is None or need & unknown else int(n))
        result: list[tuple[float, ...]] = []
        for ndim, fixed in zip(self.dims, static, strict=True):
            lengths, flat = flat[:ndim], flat[ndim:]
            result.append(
                tuple(n if math.isnan(s) else s for n, s in zip(lengths, fixed, strict=True))
            )
        return result


def _whole(value: Any) -> Any:
    """A Dask array as the Delayed of its one chunk, its graph kept as it is
    (``dask.delayed`` would optimize it separately, duplicating shared tasks).

    An array of several chunks is rechunked to one when its chunk lengths are known; when
    some are unknown (``nan``: an output of a node run on one worker) its chunks are joined
    in a task of their own (:func:`numpy.block`), which needs no lengths.
    """
    if not isinstance(value, da.Array):
        return value
    if any(n > 1 for n in value.numblocks):
        if not _known_chunks(value):
            blocks = value.to_delayed(optimize_graph=False).tolist()
            return dask.delayed(np.block, pure=True)(blocks)
        value = value.rechunk({axis: -1 for axis in range(value.ndim)})
    return value.to_delayed(optimize_graph=False).flat[0]


def _known_chunks(value: da.Array) -> bool:
    return not any(math.isnan(n) for lengths in value.chunks for n in lengths)


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
