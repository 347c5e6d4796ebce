"""Rewrites only the ``jax`` linker runs (tag ``jax``, the linker's ``rewrite_tags``).

XLA compiles for fixed shapes, so ``x[mask]`` with a ``mask`` computed from the inputs has
no length to compile for. Its sum does: ``sum(x[mask])`` is ``sum(where(mask, x, 0))``.
PyTensor's JAX backend makes the same replacements under the same names (and serves them
at ``pytensor.tensor.rewriting.jax``, as this module is served at
``opweave.tensor.rewriting.jax``). One phase, ``jax_boolean_indexing`` (position 2.5:
after ``specialize``, before the elementwise fusion), runs them from the inputs to the
outputs:

======================================  ==========================================================
node rewriter                           replaces
======================================  ==========================================================
``local_elemwise_of_boolean_indexing``  ``f(x[mask], c)`` with ``c`` scalars (or of lengths 1) by
                                        ``f(x, c)[mask]``, so that ``sum(x[mask] ** 2)`` reaches
                                        the next entry
``boolean_indexing_sum``                ``sum(x[mask])`` (over every axis) by
                                        ``sum(switch(mask, x, 0))``
``boolean_indexing_set_or_inc``         ``set_subtensor(x[mask], y)`` by ``switch(mask, y, x)``
                                        and ``inc_subtensor(x[mask], y)`` by
                                        ``switch(mask, x + y, x)``, for a scalar ``y``
======================================  ==========================================================

Each checks that ``mask``'s lengths are ``x``'s (an ``IndexError`` otherwise, as NumPy's
indexing), since ``switch`` would broadcast a mask of length 1.

The sum adds the same values in another order (zeros between them), so it may differ from
the other linkers' in the last bits, and the sum of nothing but ``-0.0`` is ``0.0``.
"""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Apply, Variable
from opweave.graph.rewriting import copy_stack_trace, in2out, node_rewriter
from opweave.raise_op import CheckAndRaise
from opweave.tensor import basic as ptb
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.math import and_, eq, switch
from opweave.tensor.reductions import Sum
from opweave.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor
from opweave.tensor.type import TensorType

__all__ = [
    "JAX_TAG",
    "boolean_indexing_set_or_inc",
    "boolean_indexing_sum",
    "local_elemwise_of_boolean_indexing",
    "register_jax_rewrites",
]

#: The tag of these rewrites, which the ``jax`` linker adds to its compilations.
JAX_TAG = "jax"


def _boolean_mask_read(var: Variable) -> tuple[Any, Any] | None:
    """``(x, mask)`` when ``var`` is ``x[mask]`` with one boolean ``mask`` (its leading
    axes), else ``None``."""
    owner = var.owner
    if owner is None or type(owner.op) is not AdvancedSubtensor:
        return None
    # The mask alone: ``x[mask, 0]`` and ``x[:, mask]`` keep other entries in ``idx_list``.
    if len(owner.op.idx_list) != 1 or len(owner.inputs) != 2:
        return None
    x, mask = owner.inputs
    if not isinstance(mask.type, TensorType) or mask.type.dtype != "bool":
        return None
    if not isinstance(x.type, TensorType) or not 0 < mask.type.ndim <= x.type.ndim:
        return None
    return x, mask


def _checked_mask(x: Any, mask: Any) -> Any:
    """``mask`` once its lengths are checked against ``x``'s leading ones (``switch`` would
    broadcast a length-1 mask where NumPy's indexing raises), with axes of length 1 added
    for ``x``'s other axes, ready for ``switch(mask, ..., x)``."""
    lengths = [eq(mask.shape[k], x.shape[k]) for k in range(mask.type.ndim)]
    same = lengths[0]
    for more in lengths[1:]:
        same = and_(same, more)
    check = CheckAndRaise(IndexError, "boolean index did not match the indexed array's shape")
    checked: Any = check(mask, same)
    extra = x.type.ndim - mask.type.ndim
    if extra:
        return checked.dimshuffle(*range(mask.type.ndim), *(["x"] * extra))
    return checked


@node_rewriter([Sum])
def boolean_indexing_sum(fgraph: Any, node: Apply) -> list[Variable] | None:
    """``sum(x[mask])`` over every axis -> ``sum(switch(mask, x, 0))``."""
    [operand] = node.inputs
    out = node.outputs[0]
    if out.type.ndim != 0:  # type: ignore[attr-defined]
        return None
    found = _boolean_mask_read(operand)
    if found is None:
        return None
    x, mask = found
    mask = _checked_mask(x, mask)
    masked = switch(mask, x, ptb.constant(0, dtype=x.type.dtype))
    op: Any = node.op
    total: Any = Sum(axis=None, dtype=op.dtype, acc_dtype=op.acc_dtype)(masked)
    if total.type != out.type:
        return None
    copy_stack_trace(out, total)
    return [total]


def _as_scalar(var: Variable, ndim: int) -> Variable | None:
    """``var`` as a 0-d tensor when it is one, or of ``ndim`` axes all of length 1."""
    typ = var.type
    if not isinstance(typ, TensorType):
        return None
    if typ.ndim == 0:
        return var
    if typ.ndim == ndim and all(length == 1 for length in typ.shape):
        return var.dimshuffle()  # type: ignore[attr-defined,no-any-return]
    return None


@node_rewriter([Elemwise])
def local_elemwise_of_boolean_indexing(fgraph: Any, node: Apply) -> list[Variable] | None:
    """``f(x[mask], c, ...)`` -> ``f(x, c, ...)[mask]`` for scalar ``c``."""
    if len(node.outputs) != 1:
        return None
    reads = [(k, found) for k, var in enumerate(node.inputs) if (found := _boolean_mask_read(var))]
    if len(reads) != 1:
        return None
    [(k, (x, mask))] = reads
    ndim = node.outputs[0].type.ndim  # type: ignore[attr-defined]
    inputs: list[Variable] = []
    for j, var in enumerate(node.inputs):
        if j == k:
            inputs.append(x)
            continue
        scalar = _as_scalar(var, ndim)
        if scalar is None:
            return None
        inputs.append(scalar)
    whole: Any = node.op(*inputs)
    if not isinstance(whole, Variable) or whole.type.ndim != x.type.ndim:
        return None
    out = whole[mask]  # type: ignore[index]
    if out.type != node.outputs[0].type:
        return None
    copy_stack_trace(node.outputs[0], out)
    return [out]


def _scalar_value(var: Variable) -> Variable | None:
    """``var`` as a 0-d tensor when it is one, or has only axes of length 1."""
    typ = var.type
    if isinstance(typ, TensorType) and all(length == 1 for length in typ.shape):
        return _as_scalar(var, typ.ndim)
    return None


@node_rewriter([AdvancedIncSubtensor])
def boolean_indexing_set_or_inc(fgraph: Any, node: Apply) -> list[Variable] | None:
    """``set_subtensor(x[mask], y)`` -> ``switch(mask, y, x)`` and
    ``inc_subtensor(x[mask], y)`` -> ``switch(mask, x + y, x)``, for a scalar ``y``."""
    if len(node.inputs) != 3 or len(node.op.idx_list) != 1:  # type: ignore[attr-defined]
        return None
    x, y, mask = node.inputs
    if not isinstance(mask.type, TensorType) or mask.type.dtype != "bool":
        return None
    if not isinstance(x.type, TensorType) or not 0 < mask.type.ndim <= x.type.ndim:
        return None
    value = _scalar_value(y)
    if value is None:
        return None
    value = value.astype(x.type.dtype)  # type: ignore[attr-defined]
    mask = _checked_mask(x, mask)
    new = value if node.op.set_instead_of_inc else (x + value).astype(x.type.dtype)  # type: ignore[attr-defined]
    out: Any = switch(mask, new, x)
    if out.type != node.outputs[0].type:
        return None
    copy_stack_trace(node.outputs[0], out)
    return [out]


def register_jax_rewrites(db: Any) -> None:
    """Register the phase ``jax_boolean_indexing`` in ``db``, tagged ``jax`` only (a
    compile with the ``jax`` linker runs it, no other does).

    Parameters
    ----------
    db
        The database being built for one compilation (with the standard phases).
    """
    db.register(
        "jax_boolean_indexing",
        in2out(
            local_elemwise_of_boolean_indexing,
            boolean_indexing_sum,
            boolean_indexing_set_or_inc,
            name="jax_boolean_indexing",
        ),
        JAX_TAG,
        position=2.5,
    )
