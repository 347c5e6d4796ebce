"""Products of a sparse matrix with a dense vector or a dense product, kept to the sparse
matrix's structure (PyTensor's ``mul_s_v``, ``col_scale``, ``row_scale`` and
``sampling_dot``; :mod:`opweave.sparse.math` exports them).

Each is a :class:`~opweave.sparse.basic.SparseDenseMultiply` (``mul_s_d``), which stores
its result where the sparse operand stores, so the results and gradients are those of the
elementwise definitions.
"""

from __future__ import annotations

from typing import Any

from opweave.graph.basic import Variable
from opweave.sparse.basic import mul_s_d, sparse_input
from opweave.tensor import math as tm
from opweave.tensor.basic import as_tensor_variable

__all__ = ["col_scale", "mul_s_v", "row_scale", "sampling_dot"]


def dense_operand(y: Any, ndim: int, who: str, what: str) -> Any:
    """``y`` as a dense tensor of ``ndim`` dimensions, or raise a ``TypeError`` naming
    ``who`` and the input ``what``."""
    y = as_tensor_variable(y)
    if y.ndim != ndim:
        kind = "vector" if ndim == 1 else "matrix"
        raise TypeError(f"{who}: input {what} must be a dense {kind}, got {y} of type {y.type!r}")
    return y


def _mul(x: Variable, y: Variable) -> Variable:
    product = mul_s_d(x, y)
    assert isinstance(product, Variable)
    return product


def mul_s_v(x: Any, y: Any) -> Variable:
    """``x * y`` for a sparse matrix ``x`` and a dense vector ``y`` (one value per column),
    sparse, stored where ``x`` stores.

    Raises
    ------
    TypeError
        If ``x`` is not sparse or ``y`` not a dense vector.
    """
    x = sparse_input(x, "mul_s_v")
    return _mul(x, dense_operand(y, 1, "mul_s_v", "y").dimshuffle("x", 0))


def col_scale(x: Any, s: Any) -> Variable:
    """Each column ``j`` of the sparse matrix ``x`` scaled by ``s[j]`` (sparse).

    Raises
    ------
    TypeError
        If ``x`` is not sparse or ``s`` not a dense vector.
    """
    x = sparse_input(x, "col_scale")
    return _mul(x, dense_operand(s, 1, "col_scale", "s").dimshuffle("x", 0))


def row_scale(x: Any, s: Any) -> Variable:
    """Each row ``i`` of the sparse matrix ``x`` scaled by ``s[i]`` (sparse).

    Raises
    ------
    TypeError
        If ``x`` is not sparse or ``s`` not a dense vector.
    """
    x = sparse_input(x, "row_scale")
    return _mul(x, dense_operand(s, 1, "row_scale", "s").dimshuffle(0, "x"))


def sampling_dot(x: Any, y: Any, p: Any) -> Variable:
    """``p * (x @ y.T)`` at ``p``'s stored positions: the dense matrices ``x`` and ``y``'s
    product sampled by the sparse matrix ``p`` (sparse, in ``p``'s format).

    The dense product is formed whole (``x.shape[0]`` by ``y.shape[0]`` values) before it
    is sampled.

    Raises
    ------
    TypeError
        If ``x`` or ``y`` is not a dense matrix, or ``p`` is not sparse.
    """
    x = dense_operand(x, 2, "sampling_dot", "x")
    y = dense_operand(y, 2, "sampling_dot", "y")
    p = sparse_input(p, "sampling_dot", "p")
    return _mul(p, tm.dot(x, y.T))
