"""Python implementation of :mod:`opweave.tensor.blockwise`: ``Blockwise``.

A Blockwise with a ``gufunc_spec`` (its own or its core Op's) calls the NumPy function it
names on the whole batch. Otherwise a node runs its core Op once per batch index, through
the core Op's Python implementation (its own ``perform``, or the one the
``opweave_implementation`` hook gives, as the ``py`` linker finds it) applied to a core
node of placeholders, and the results are stacked into the outputs. The core node and
implementation are looked up on the first call and kept on the node's ``tag``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.node_shapes import concrete_output_shapes
from opweave_python.thunk import find_perform

__all__ = ["PERFORMS", "blockwise_perform"]

#: The ``tag`` attribute holding a node's ``(core node, core implementation)``.
TAG = "blockwise_core"


def _core_runner(op: Blockwise, node: Apply) -> tuple[Apply, Callable[..., None]]:
    """The core node and the Python implementation of the core Op (found once per node)."""
    found = getattr(node.tag, TAG, None)
    if found is None:
        core_node = op.core_node(node)
        perform = find_perform(op.core_op, core_node)
        if perform is None:
            raise NotImplementedError(
                f"{op}: no Python implementation of the core Op {op.core_op} "
                f"({type(op.core_op).__name__})"
            )
        found = (core_node, perform)
        setattr(node.tag, TAG, found)
    return found


def _batch_shape(op: Blockwise, node: Apply, inputs: Sequence[np.ndarray]) -> tuple[int, ...]:
    """The batch shape of the values; only dimensions of static length 1 broadcast.

    Raises
    ------
    ValueError
        Naming the inputs whose batch lengths differ.
    """
    batch = op.batch_ndim(node)
    shape = []
    for d in range(batch):
        lengths = {
            i: x.shape[d]
            for i, (x, var) in enumerate(zip(inputs, node.inputs, strict=True))
            if var.type.shape[d] != 1
        }
        if len(set(lengths.values())) > 1:
            raise ValueError(
                f"{op}: the inputs' batch dimension {d} has different lengths {lengths} "
                "(input: length); only dimensions of static length 1 broadcast"
            )
        shape.append(next(iter(lengths.values()), 1))
    return tuple(shape)


def _empty_core_shapes(
    core_node: Apply, arrays: Sequence[np.ndarray], batch: int
) -> list[tuple[int, ...]]:
    """The core outputs' shapes for an empty batch, where the core Op never runs: from the
    core Op's ``infer_shape`` given the inputs' core shapes (NumPy's gufuncs give the same
    shapes), else the outputs' static lengths, 0 where unknown."""
    found = concrete_output_shapes(core_node, [x.shape[batch:] for x in arrays])
    if found is not None:
        return found
    return [tuple(0 if n is None else int(n) for n in o.type.shape) for o in core_node.outputs]


def _gufunc(op: Blockwise) -> Callable[..., Any] | None:
    """The NumPy function named by the Op's (or its core Op's) ``gufunc_spec``, or ``None``.

    Raises
    ------
    ValueError
        If the spec names nothing importable.
    """
    spec = op.gufunc_spec or getattr(op.core_op, "gufunc_spec", None)
    if spec is None:
        return None
    path = spec[0]
    module_name, _, attr = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"{op}: cannot import the gufunc {path!r} of its gufunc_spec") from exc


def blockwise_perform(
    op: Blockwise, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]
) -> None:
    """Call the ``gufunc_spec`` function on the whole batch when there is one; else loop
    the core Op's implementation over the batch indices and stack the results."""
    batch_shape = _batch_shape(op, node, inputs)
    gufunc = _gufunc(op)
    if gufunc is not None:
        values = gufunc(*inputs)
        values = (values,) if len(node.outputs) == 1 else tuple(values)
        for cell, value, out in zip(output_storage, values, node.outputs, strict=True):
            cell[0] = np.asarray(value, dtype=out.type.dtype)
        return
    core_node, perform = _core_runner(op, node)
    batch = op.batch_ndim(node)
    arrays = [np.asarray(x) for x in inputs]
    core_batched = [np.broadcast_to(x, batch_shape + x.shape[batch:]) for x in arrays]
    results: list[np.ndarray | None] = [None] * len(node.outputs)
    for index in np.ndindex(*batch_shape):
        args = [x[index] for x in core_batched]
        cells: list[list[Any]] = [[None] for _ in node.outputs]
        perform(core_node, args, cells)
        for k, (cell, out) in enumerate(zip(cells, node.outputs, strict=True)):
            value = np.asarray(cell[0])
            if results[k] is None:
                results[k] = np.empty(batch_shape + value.shape, dtype=out.type.dtype)
            elif results[k].shape[batch:] != value.shape:  # type: ignore[union-attr]
                raise ValueError(
                    f"{op}: the core Op's output {k} has shape {value.shape} at batch index "
                    f"{index}, {results[k].shape[batch:]} before; the outputs must not "  # type: ignore[union-attr]
                    "change shape along the batch"
                )
            results[k][index] = value  # type: ignore[index]
    missing = any(r is None for r in results)
    empty = _empty_core_shapes(core_node, arrays, batch) if missing else []
    for k, (cell, out) in enumerate(zip(output_storage, node.outputs, strict=True)):
        value = results[k]
        if value is None:  # an empty batch: the core Op never ran
            value = np.empty(batch_shape + empty[k], dtype=out.type.dtype)
        cell[0] = value


#: Op class -> implementation, for the tables merged in :mod:`opweave_python.impls`.
PERFORMS = MappingProxyType({Blockwise: blockwise_perform})
