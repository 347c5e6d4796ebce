"""Fused elementwise nodes whose floating-point constants are inputs, for shared C.

Fusion writes the constants of a chain into its ``Composite``
(``Composite{tanh(((i0 * 1.015) + 0.1)) + i1}``), so a graph of many blocks that differ
only by a constant gets as many different C functions. :func:`lift_float_constants`
gives an equivalent node that takes those constants as inputs (one broadcast element
each): its C is the same for every such block, and the constants reach the loop as
values. The elementwise C passes a one-element input to its loop as a scalar argument,
so the loop is as fast as with the literal.

Only floating-point constants are lifted: an integer literal lets the C compiler turn a
division or a modulo into cheaper operations, and an exponent lets it turn ``pow`` into
multiplications, so those stay in the code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from opweave.graph.basic import Apply, Constant, Variable
from opweave.scalar import Composite, Pow, get_scalar_type
from opweave.tensor.constructors import constant
from opweave.tensor.elemwise import Elemwise

__all__ = ["MAX_INPUTS", "constant_inputs", "lift_float_constants", "lifted_shape"]

#: A fused node with more inputs than this after lifting keeps its constants.
MAX_INPUTS = 32
_FLOATS = frozenset({"float32", "float64"})


def _liftable(node: Apply, i: int, var: Variable) -> bool:
    """Is input ``i`` of the inner ``node`` a float constant that may become an input?"""
    exponent = isinstance(node.op, Pow) and i == 1
    is_float = getattr(var.type, "dtype", None) in _FLOATS
    return isinstance(var, Constant) and is_float and not exponent


def _slot_key(var: Variable) -> tuple[tuple[str, bytes], Any]:
    """A lifted constant's identity (dtype and bits: -0.0 and NaN payloads stay apart)
    and its value."""
    value = np.asarray(var.data, dtype=var.type.dtype)  # type: ignore[attr-defined]
    return (value.dtype.name, value.tobytes()), value


def lift_float_constants(node: Apply) -> tuple[Apply, list[Constant]] | None:
    """An equivalent node taking the float constants of ``node``'s Composite as inputs.

    Parameters
    ----------
    node
        Any node.

    Returns
    -------
    tuple or None
        ``(lifted, constants)``: the new node (``node``'s inputs followed by
        ``constants``, one tensor constant of one broadcast element per distinct
        constant, in the order of :func:`lifted_shape`'s values, and outputs of the same
        Types), or ``None`` when ``node`` is not an ``Elemwise`` of a ``Composite`` with
        such constants, or would get too many inputs.
    """
    shaped = lifted_shape(node)
    if shaped is None:
        return None
    values = shaped[1]
    op: Elemwise = node.op  # type: ignore[assignment]
    composite: Composite = op.scalar_op  # type: ignore[assignment]
    # One new scalar input per distinct constant, in the order lifted_shape found them.
    slots = {
        (value.dtype.name, value.tobytes()): get_scalar_type(value.dtype.name)() for value in values
    }
    mapping: dict[Variable, Variable] = dict(zip(composite.inputs, composite.inputs, strict=True))
    for inner in composite.inner_nodes():
        new_inputs = [
            slots[_slot_key(var)[0]] if _liftable(inner, i, var) else mapping.get(var, var)
            for i, var in enumerate(inner.inputs)
        ]
        clone = inner.clone_with_new_inputs(new_inputs)
        mapping.update(zip(inner.outputs, clone.outputs, strict=True))
    lifted_composite = Composite(
        [*composite.inputs, *slots.values()], [mapping[o] for o in composite.outputs]
    )
    constants = constant_inputs(node, values)
    lifted_op = Elemwise(lifted_composite, dict(op.inplace_pattern), name=op.name)
    try:
        lifted = lifted_op.make_node(*node.inputs, *constants)
    except (TypeError, ValueError):
        return None
    if [o.type for o in lifted.outputs] != [o.type for o in node.outputs]:
        return None
    return lifted, constants


def constant_inputs(node: Apply, values: list[Any]) -> list[Constant]:
    """The tensor constants (one broadcast element each, of ``node``'s rank) holding
    ``values``: the inputs a lifted node gets after ``node``'s own."""
    ndim = len(node.outputs[0].type.shape)  # type: ignore[attr-defined]
    return [constant(np.full((1,) * ndim, v, dtype=v.dtype)) for v in values]


def lifted_shape(node: Apply) -> tuple[Any, list[Any]] | None:
    """What the lifted form of ``node`` computes, without building it, and its constants.

    Returns
    -------
    tuple or None
        ``(shape, values)``: ``shape`` is equal for two nodes exactly when their lifted
        forms compute the same thing (the inner Ops, how they connect, which constant slot
        each lifted constant fills and the literal constants, the in-place pattern);
        ``values`` are the constants in the order of :func:`lift_float_constants`'s inputs.
        ``None`` when :func:`lift_float_constants` would lift nothing.
    """
    op = node.op
    if not isinstance(op, Elemwise) or not isinstance(op.scalar_op, Composite):
        return None
    composite: Composite = op.scalar_op
    where: dict[Variable, tuple[Any, ...]] = {v: ("in", k) for k, v in enumerate(composite.inputs)}
    slots: dict[tuple[str, bytes], int] = {}
    values: list[Any] = []
    parts: list[Any] = []
    for n, inner in enumerate(composite.inner_nodes()):
        args: list[Any] = []
        for i, var in enumerate(inner.inputs):
            if _liftable(inner, i, var):
                key, value = _slot_key(var)
                if key not in slots:
                    slots[key] = len(slots)
                    values.append(value)
                args.append(("lifted", slots[key], key[0]))
            elif var in where:
                args.append(where[var])
            elif isinstance(var, Constant):
                args.append(("literal", var.type, np.asarray(var.data).tobytes()))
            else:  # pragma: no cover - a Composite's inner graph is closed
                return None
        for j, out in enumerate(inner.outputs):
            where[out] = ("node", n, j)
        parts.append((inner.op, tuple(args)))
    if not values or len(node.inputs) + len(values) > MAX_INPUTS:
        return None
    outputs = tuple(where[o] for o in composite.outputs)
    return (tuple(parts), outputs, op.inplace_pattern), values
