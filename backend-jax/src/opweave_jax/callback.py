"""A node without a JAX lowering run by the Python kernels, through ``jax.pure_callback``.

With ``config.jax__python_fallback`` on, the ``jax`` linker lowers a node it has no
lowering for to a host callback instead of refusing it (:func:`python_callback`): XLA stops
at the node, hands its inputs to the node's ``py`` kernel (the node compiled alone with the
``py`` linker) and takes its outputs back. The function still runs under ``jax.jit``, but
the callback is not differentiable by JAX, runs on the host (a GPU's values travel to the
CPU and back), and cannot be batched by ``jax.vmap`` faster than one call per element.

XLA must know the outputs' shapes when it traces: they come from the output Types' static
shapes, else from the Op's ``infer_shape`` given the inputs' static shapes. A node whose
output shapes depend on its input values (``Unique``, ``nonzero`` ...) cannot be run this
way and is still refused, saying why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from opweave.graph.basic import Apply, Constant, Variable, graph_inputs
from opweave.graph.utils import NoImplementationError
from opweave.tensor.node_shapes import concrete_output_shapes

__all__ = ["python_callback"]


def _python_function(node: Apply) -> Callable[..., Any]:
    """``node`` compiled alone with the ``py`` linker, on fresh inputs."""
    from opweave.compile.function import function
    from opweave.compile.mode import Mode

    fresh = [v if isinstance(v, Constant) else v.type() for v in node.inputs]
    clone = node.clone_with_new_inputs(fresh)
    free = [v for v in fresh if not isinstance(v, Constant)]
    return function(free, list(clone.outputs), mode=Mode(linker="py", optimizer=None))


def _output_shapes(node: Apply, shapes: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """The outputs' shapes for inputs of ``shapes``: the output Types' static shapes, else
    the Op's ``infer_shape`` (which :func:`_check_shapes_follow_shapes` checked when the
    function was linked).

    Raises
    ------
    NoImplementationError
        When they cannot be known without the input values.
    """
    static = [getattr(out.type, "shape", ()) for out in node.outputs]
    if all(s is not None and all(d is not None for d in s) for s in static):
        return [tuple(int(d) for d in s) for s in static]
    found = concrete_output_shapes(node, shapes)
    if found is None:
        raise NoImplementationError(
            f"jax linker: {node.op} has no jax lowering, and its output shapes for inputs "
            f"of shapes {list(shapes)} cannot be found from those shapes to run it through a "
            "Python callback"
        )
    return found


def _check_shapes_follow_shapes(node: Apply) -> None:
    """Raise :class:`NoImplementationError` unless the Op's ``infer_shape`` gives its output
    shapes from its input shapes alone (checked with symbolic input lengths)."""
    from opweave.tensor.basic import as_tensor_variable
    from opweave.tensor.type import lscalar

    lengths = [[lscalar() for _ in range(getattr(v.type, "ndim", 0))] for v in node.inputs]
    infer = getattr(node.op, "infer_shape", None)
    try:
        dims = infer(None, node, lengths) if infer is not None else None
        flat = [as_tensor_variable(d) for out in dims or () for d in out]
    except Exception as exc:
        raise NoImplementationError(
            f"jax linker: {node.op} has no jax lowering, and its output shapes cannot be "
            f"found from its input shapes ({type(exc).__name__}: {exc}) to run it through a "
            "Python callback"
        ) from exc
    if dims is None:
        raise NoImplementationError(
            f"jax linker: {node.op} has no jax lowering, and its output shapes cannot be "
            "known without its values (no infer_shape) to run it through a Python callback"
        )
    allowed = {id(v) for row in lengths for v in row}
    if any(not isinstance(v, Constant) and id(v) not in allowed for v in graph_inputs(flat)):
        raise NoImplementationError(
            f"jax linker: {node.op} has no jax lowering, and its output shapes depend on its "
            "input values, which XLA needs before it runs: it cannot run through a Python "
            "callback either"
        )


def python_callback(node: Apply) -> Callable[..., Any]:
    """The lowering of ``node`` through ``jax.pure_callback`` of its ``py`` kernel.

    Raises
    ------
    NoImplementationError
        For a node whose inputs or outputs are not tensors or scalars (``jax`` passes only
        those through a callback), when its output shapes depend on its input values, and
        when building its ``py`` function fails.
    """
    for var in (*node.inputs, *node.outputs):
        if getattr(var.type, "dtype", None) is None or not hasattr(var.type, "ndim"):
            raise NoImplementationError(
                f"jax linker: {node.op} has no jax lowering, and its {_role(node, var)} {var} "
                f"of type {var.type} cannot pass through a Python callback"
            )
    static = [getattr(out.type, "shape", ()) for out in node.outputs]
    if not all(s is not None and all(d is not None for d in s) for s in static):
        _check_shapes_follow_shapes(node)
    try:
        run = _python_function(node)
    except Exception as exc:
        raise NoImplementationError(
            f"jax linker: {node.op} has no jax lowering, and running it through the Python "
            f"kernels failed to compile: {type(exc).__name__}: {exc}"
        ) from exc
    free = [k for k, v in enumerate(node.inputs) if not isinstance(v, Constant)]
    dtypes = [np.dtype(out.type.dtype) for out in node.outputs]  # type: ignore[attr-defined]

    def host(*values: Any) -> tuple[np.ndarray, ...]:
        outs = run(*values)
        outs = outs if isinstance(outs, list) else [outs]
        return tuple(np.asarray(o, dtype=d) for o, d in zip(outs, dtypes, strict=True))

    def lowered(*values: Any) -> Any:
        shapes = [tuple(np.shape(v)) for v in values]
        result = [
            jax.ShapeDtypeStruct(shape, dtype)
            for shape, dtype in zip(_output_shapes(node, shapes), dtypes, strict=True)
        ]
        outs = jax.pure_callback(host, tuple(result), *[values[k] for k in free])
        return outs[0] if len(outs) == 1 else tuple(outs)

    return lowered


def _role(node: Apply, var: Variable) -> str:
    return "input" if var in node.inputs else "output"
