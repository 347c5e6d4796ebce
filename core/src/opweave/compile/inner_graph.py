"""Helpers for Ops that carry a graph of their own (:class:`~opweave.compile.builders.OpFromGraph`).

- :func:`construct_inner_fgraph`: the inner :class:`~opweave.graph.fg.FunctionGraph` of
  nominal stand-ins of the given inputs, with the shared variables the outputs use turned into
  extra inputs (as PyTensor's ``OpFromGraph`` does);
- :func:`io_connection_pattern` (from :mod:`opweave.graph.op`): which inputs each output
  truly depends on, through the ``connection_pattern`` of every node in between;
- :func:`infer_inner_shapes`: the symbolic shapes of a graph's outputs from the shapes of
  its inputs, by asking each node's ``infer_shape`` in turn (nothing is computed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opweave.compile.sharedvalue import SharedVariable
from opweave.graph.basic import Constant, NominalVariable, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.op import io_connection_pattern
from opweave.graph.replace import clone_replace
from opweave.graph.traversal import graph_inputs, io_toposort
from opweave.graph.utils import MissingInputError

__all__ = ["construct_inner_fgraph", "infer_inner_shapes", "io_connection_pattern"]


def construct_inner_fgraph(
    inputs: Sequence[Variable], outputs: Sequence[Variable]
) -> tuple[FunctionGraph, list[SharedVariable]]:
    """Build the inner graph of ``outputs`` over nominal stand-ins of ``inputs``.

    Parameters
    ----------
    inputs
        The explicit inputs. A variable given twice stands for one input: only its last
        copy is used by the inner graph.
    outputs
        The outputs, computed from ``inputs``, constants and shared variables.

    Returns
    -------
    tuple
        ``(fgraph, shared_inputs)``: the inner graph (its inputs are one nominal variable
        per explicit input, then one per shared variable the outputs use) and those shared
        variables, in the order of the extra inputs.

    Raises
    ------
    MissingInputError
        If the outputs depend on a root that is neither an input, a constant nor a shared
        variable.
    """
    explicit = set(inputs)
    shared_inputs: list[SharedVariable] = []
    for var in graph_inputs(outputs, blockers=inputs):
        if var in explicit or isinstance(var, Constant):
            continue
        if isinstance(var, SharedVariable):
            shared_inputs.append(var)
            continue
        raise MissingInputError(
            f"OpFromGraph: the outputs depend on {var} (Type {var.type}), which is not among "
            "the inputs; add it to the inputs",
            variable=var,
        )
    originals = [*inputs, *shared_inputs]
    # Nominal inputs, as PyTensor's: input ``i`` of Type ``t`` is ``NominalVariable(i, t)``
    # in every copy of the inner graph (a clone keeps them), so code holding
    # ``op.inner_inputs`` can still replace them in ``op.fgraph.clone()``.
    dummies: list[Variable] = [NominalVariable(i, var.type) for i, var in enumerate(originals)]
    replace = dict(zip(originals, dummies, strict=True))
    inner_outputs = clone_replace(list(outputs), replace=replace) if outputs else []
    fgraph = FunctionGraph(dummies, inner_outputs, clone=False)
    return fgraph, shared_inputs


def _shape_of_variable(var: Variable) -> tuple[Any, ...] | None:
    """``var.shape[i]`` for each axis of a variable with ``ndim``; ``None`` otherwise.

    The outer graph's shape rewrites answer these from static lengths or ``infer_shape``
    where they can.
    """
    ndim = getattr(var.type, "ndim", None)
    if not isinstance(ndim, int):
        return None
    shape = getattr(var, "shape", None)
    if shape is None or not isinstance(shape, Variable):
        return None
    symbolic: Any = shape  # a shape vector: indexable
    return tuple(symbolic[i] for i in range(ndim))


def infer_inner_shapes(
    inputs: Sequence[Variable],
    outputs: Sequence[Variable],
    input_shapes: Sequence[Sequence[Any] | None],
) -> list[tuple[Any, ...] | None]:
    """The shapes of ``outputs`` given the shapes of ``inputs``, without computing them.

    Each node between ``inputs`` and ``outputs`` is asked for ``op.infer_shape(None,
    node, shapes)``; a node that does not define it (or fails) gives ``v.shape[i]`` for its
    outputs, which computes them only if the outer graph cannot answer that either.

    Parameters
    ----------
    inputs, outputs
        The graph's boundary.
    input_shapes
        One tuple of symbolic lengths per input (``None`` for an input without a shape).

    Returns
    -------
    list
        One tuple of lengths per output (``None`` for an output without a shape). The
        lengths may still refer to ``inputs``: substitute them as needed.

    Raises
    ------
    ValueError
        If an input's shape has a number of lengths other than its ``ndim``.
    """
    shape_of: dict[Variable, tuple[Any, ...] | None] = {}
    for i, (inp, shp) in enumerate(zip(inputs, input_shapes, strict=True)):
        ndim = getattr(inp.type, "ndim", None)
        if shp is not None and isinstance(ndim, int) and len(shp) != ndim:
            raise ValueError(
                f"infer_shape: input {i} ({inp}) has {ndim} dimensions but its shape has "
                f"{len(shp)} lengths"
            )
        shape_of[inp] = None if shp is None else tuple(shp)

    def known(var: Variable) -> tuple[Any, ...] | None:
        if var not in shape_of:
            shape_of[var] = _shape_of_variable(var)
        return shape_of[var]

    for node in io_toposort(inputs, outputs):
        in_shapes = [known(v) for v in node.inputs]
        out_shapes: Any = None
        infer = getattr(node.op, "infer_shape", None)
        if infer is not None:
            try:
                out_shapes = infer(None, node, in_shapes)
            except Exception:  # not defined, or not for these inputs: fall back
                out_shapes = None
        if not isinstance(out_shapes, list | tuple) or len(out_shapes) != len(node.outputs):
            out_shapes = [_shape_of_variable(o) for o in node.outputs]
        for out, shp in zip(node.outputs, out_shapes, strict=True):
            shape_of[out] = None if shp is None else tuple(shp)
    return [known(out) for out in outputs]
