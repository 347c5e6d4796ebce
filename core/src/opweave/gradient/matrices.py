"""Jacobian and Hessian matrices: one :func:`grad` per element of a vector.

When the vector's length is known when the graph is built (its Type's static shape, or a
length ``opweave.tensor.basic.get_vector_length`` infers), the rows are unrolled in
Python, one :func:`~opweave.gradient.grad` per element, and stacked. Otherwise, as in
PyTensor, the rows are computed by a loop, :func:`opweave.scan.scan` over the indices
of the vector.

This module builds tensor graphs, so it is on the tensor floor of :mod:`opweave._layers`
(``opweave.gradient`` and ``opweave.tensor`` give its names on first use).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from opweave.configdefaults import config
from opweave.gradient._helpers import (
    as_list,
    as_variable,
    format_as,
    ndim_of,
)
from opweave.gradient.operators import pullback
from opweave.gradient.reverse import grad
from opweave.graph.basic import Variable
from opweave.graph.replace import vectorize_graph
from opweave.tensor._typing import tensor_var
from opweave.tensor.basic import arange, eye, get_vector_length, stack
from opweave.tensor.extra_ops import broadcast_to
from opweave.tensor.type import TensorType
from opweave.tensor.variable import TensorVariable

__all__ = ["hessian", "jacobian"]


def static_length(var: Variable) -> int | None:
    """The length of the vector ``var`` if it is known when the graph is built, else ``None``."""
    shape = getattr(var.type, "shape", None)
    if isinstance(shape, tuple) and shape and isinstance(shape[0], int):
        return shape[0]
    try:
        return int(get_vector_length(var))
    except Exception:
        return None


def _require_length(var: Variable, what: str) -> int:
    """``var``'s static length; ``-1`` for a tensor whose length is known only at run time
    (its rows are then computed by a scan); an error for other Types."""
    n = static_length(var)
    if n is None:
        if isinstance(var.type, TensorType):
            return -1  # a tensor: the rows are computed by a scan
        raise ValueError(
            f"{what}: the length of {var} (Type {var.type}) is not known when the graph is "
            "built; a vector that is not a tensor needs a static length to unroll one gradient "
            "per element"
        )
    if n == 0:
        raise ValueError(f"{what}: {var} has length 0; there are no rows to compute")
    return n


def _rows_scan(
    expression: Variable,
    wrt: list[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: Literal["ignore", "warn", "raise"],
) -> list[Variable]:
    """The rows of :func:`_rows` for a vector of unknown length: a scan over its indices."""
    # late: opweave.scan (same floor) builds on opweave.tensor, which re-exports jacobian
    from opweave.scan.basic import scan

    def row(i: Variable, expr: Variable, *ws: Variable) -> list[Variable]:
        return list(
            grad(
                expr[i],  # type: ignore[index]  # a tensor (ndim 1): indexable
                list(ws),
                consider_constant=consider_constant,
                disconnected_inputs=disconnected_inputs,
            )
        )

    indices = arange(expression.shape[0])  # type: ignore[attr-defined]
    rows, _ = scan(row, sequences=indices, non_sequences=[expression, *wrt], return_list=True)
    return list(rows)


def _rows(
    expression: Variable,
    n: int,
    wrt: list[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: Literal["ignore", "warn", "raise"],
) -> list[Variable]:
    """``stack([grad(expression[i], w) for i in range(n)])`` for each ``w`` in ``wrt``."""
    per_row = [
        grad(
            expression[i],  # type: ignore[index]  # a tensor (ndim 1): indexable
            wrt,
            consider_constant=consider_constant,
            disconnected_inputs=disconnected_inputs,
        )
        for i in range(n)
    ]
    return [stack([row[k] for row in per_row]) for k in range(len(wrt))]


def _rows_vectorized(
    expression: TensorVariable,
    wrt: list[Variable],
    consider_constant: Sequence[Variable] | None,
    disconnected_inputs: Literal["ignore", "warn", "raise"],
) -> list[TensorVariable]:
    """The rows of :func:`_rows` as one vector-Jacobian product, batched over the rows of
    an identity matrix (:func:`~opweave.graph.replace.vectorize_graph`), as PyTensor's
    ``jacobian(..., vectorize=True)``."""
    dtype = expression.type.dtype
    if dtype not in ("float16", "float32", "float64"):
        dtype = config.floatX
    tangent = TensorType(dtype, shape=expression.type.shape)("row_tangent")
    single: list[TensorVariable] = list(
        pullback(
            expression,
            wrt,
            tangent,
            consider_constant=consider_constant,
            disconnected_inputs=disconnected_inputs,
        )
    )
    n = expression.shape[0]
    batched: list[TensorVariable] = list(
        vectorize_graph(single, replace={tangent: eye(n, dtype=dtype)})
    )
    # a row that does not depend on the tangent (a disconnected wrt) is not batched
    return [
        broadcast_to(b, (n, *b.shape)) if b.type.ndim == s.type.ndim else b
        for s, b in zip(single, batched)
    ]


def jacobian(
    expression: Variable,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: Literal["ignore", "warn", "raise"] = "raise",
    vectorize: bool = False,
) -> Any:
    """Return the Jacobian of ``expression`` with respect to ``wrt``.

    Row ``i`` of the Jacobian of a vector with respect to ``w`` is
    ``grad(expression[i], w)``, so the result has shape ``expression.shape + w.shape``.
    For a scalar ``expression`` this is :func:`~opweave.gradient.grad`; a tensor of more
    dimensions is raveled, and the result reshaped to ``expression.shape + w.shape``.

    Parameters
    ----------
    expression
        A scalar or a tensor; a tensor whose size is not static is handled with a scan
        (see the module docstring).
    wrt
        A variable or a list/tuple of variables; the result has the same form.
    consider_constant, disconnected_inputs
        As for :func:`~opweave.gradient.grad` (applied to every row).
    vectorize
        Compute all rows with one vector-Jacobian product batched over an identity
        matrix (:func:`~opweave.graph.replace.vectorize_graph`) instead of one gradient
        per row or a scan; the values are the same.

    Returns
    -------
    Variable or list or tuple
        One Jacobian per ``wrt``.

    Raises
    ------
    ValueError
        If ``expression`` has more than one dimension, or is a non-tensor vector whose
        length is not static.
    """
    expression = as_variable(expression, "jacobian: expression")
    wrt_list, use_list, use_tuple = as_list(wrt)
    wrt_vars = [as_variable(w, f"jacobian: wrt[{i}]") for i, w in enumerate(wrt_list)]
    ndim = ndim_of(expression)
    if ndim is None or ndim == 0:
        result = grad(
            expression,
            wrt_vars,
            consider_constant=consider_constant,
            disconnected_inputs=disconnected_inputs,
        )
        return format_as(use_list, use_tuple, result)
    if ndim != 1 and isinstance(expression, TensorVariable):
        flat: list[TensorVariable] = jacobian(
            expression.ravel(),
            wrt_vars,
            consider_constant=consider_constant,
            disconnected_inputs=disconnected_inputs,
            vectorize=vectorize,
        )
        shape = tuple(expression.shape[i] for i in range(ndim))
        rows = [
            j.reshape((*shape, *tensor_var(w).shape), ndim=ndim + tensor_var(w).type.ndim)
            for j, w in zip(flat, wrt_vars)
        ]
        return format_as(use_list, use_tuple, rows)
    if ndim != 1:
        raise ValueError(
            f"jacobian: expression must be a scalar or a vector, got {expression} with ndim "
            f"{ndim}; flatten it first (a tensor of more dimensions is raveled)"
        )
    if vectorize and isinstance(expression, TensorVariable) and static_length(expression) != 1:
        rows = _rows_vectorized(expression, wrt_vars, consider_constant, disconnected_inputs)
        return format_as(use_list, use_tuple, rows)
    n = _require_length(expression, "jacobian")
    if n == -1:
        rows = _rows_scan(expression, wrt_vars, consider_constant, disconnected_inputs)
        return format_as(use_list, use_tuple, rows)
    rows = _rows(expression, n, wrt_vars, consider_constant, disconnected_inputs)
    return format_as(use_list, use_tuple, rows)


def hessian(
    cost: Variable,
    wrt: Variable | Sequence[Variable],
    consider_constant: Sequence[Variable] | None = None,
    disconnected_inputs: Literal["ignore", "warn", "raise"] = "raise",
) -> Any:
    """Return the Hessian of the scalar ``cost`` with respect to ``wrt``.

    The Hessian is the Jacobian of the gradient.

    Parameters
    ----------
    cost
        A scalar variable.
    wrt
        A vector (or scalar) variable, or a list/tuple of them; the result has the
        same form (a vector of unknown length is handled with a scan, see the module
        docstring).
    consider_constant, disconnected_inputs
        As for :func:`~opweave.gradient.grad` (applied to both differentiations).

    Returns
    -------
    Variable or list or tuple
        For each ``w``, the matrix ``d^2 cost / dw dw`` (a scalar for a scalar ``w``).

    Raises
    ------
    ValueError
        If a ``wrt`` has more than one dimension, or is a non-tensor vector whose length is
        not static.
    TypeError
        If ``cost`` is not a scalar.
    """
    cost = as_variable(cost, "hessian: cost")
    cost_ndim = ndim_of(cost)
    if cost_ndim not in (None, 0):
        raise TypeError(f"hessian: cost must be a scalar, got {cost} with ndim {cost_ndim}")
    wrt_list, use_list, use_tuple = as_list(wrt)
    hessians: list[Variable] = []
    for i, w in enumerate(wrt_list):
        w = as_variable(w, f"hessian: wrt[{i}]")
        w_ndim = ndim_of(w)
        if w_ndim not in (None, 0, 1):
            raise ValueError(
                f"hessian: wrt[{i}] ({w}) must be a scalar or a vector, got ndim {w_ndim}"
            )
        g = grad(
            cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs
        )
        if w_ndim in (None, 0):
            hessians.append(
                grad(
                    g,
                    w,
                    consider_constant=consider_constant,
                    disconnected_inputs=disconnected_inputs,
                )
            )
            continue
        n = static_length(w) or static_length(g) or _require_length(w, "hessian")
        if n == -1:
            hessians.append(_rows_scan(g, [w], consider_constant, disconnected_inputs)[0])
        else:
            hessians.append(_rows(g, n, [w], consider_constant, disconnected_inputs)[0])
    return format_as(use_list, use_tuple, hessians)
