"""Elementwise comparisons of sparse matrices (PyTensor's ``pytensor.sparse.math`` names
``eq``, ``neq``, ``lt``, ``gt``, ``le`` and ``ge``, and the ``<``, ``>``, ``<=``, ``>=``
operators of sparse variables).

As in PyTensor, the result is a ``uint8`` matrix of 0s and 1s: sparse, in the format of
the first sparse operand, when both operands are sparse (a 1 stored where the comparison
holds, as SciPy's comparisons store ``True``), dense when one operand is dense. The values
are computed from the dense forms with the tensor comparisons, so they are exactly
NumPy's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opweave.graph.basic import Variable
from opweave.sparse.basic import (
    SparseFromDense,
    as_sparse_variable,
    dense_from_sparse,
    is_sparse_variable,
)
from opweave.sparse.type import _is_sparse_value
from opweave.tensor import math as tm
from opweave.tensor.basic import as_tensor_variable

__all__ = ["eq", "ge", "gt", "le", "lt", "neq"]

#: The dtype of comparison results (PyTensor's).
COMPARISON_DTYPE = "uint8"


def _operand(x: Any) -> Variable:
    if _is_sparse_value(x):
        return as_sparse_variable(x)
    if isinstance(x, Variable):
        return x
    return as_tensor_variable(x)


def _comparison(name: str, symbol: str) -> Callable[[Any, Any], Variable]:
    dense_comparison = getattr(tm, name)

    def compare(x: Any, y: Any) -> Variable:
        x, y = _operand(x), _operand(y)
        x_sparse, y_sparse = is_sparse_variable(x), is_sparse_variable(y)
        if not (x_sparse or y_sparse):
            raise TypeError(f"sparse {name}: at least one operand must be sparse, got {x} and {y}")
        dense_x = dense_from_sparse(x) if x_sparse else x
        dense_y = dense_from_sparse(y) if y_sparse else y
        result = tm.cast(dense_comparison(dense_x, dense_y), COMPARISON_DTYPE)
        if x_sparse and y_sparse:
            fmt: str = getattr(x.type, "format", "csr")
            sparse_result: Variable = SparseFromDense(fmt)(result)
            return sparse_result
        dense_result: Variable = result
        return dense_result

    compare.__name__ = name
    compare.__doc__ = (
        f"``x {symbol} y`` elementwise, where at least one operand is sparse: ``uint8`` 0s "
        "and 1s, sparse (in ``x``'s format) when both are sparse, else dense.\n\n"
        "Raises\n------\nTypeError\n    If neither operand is sparse.\n"
    )
    return compare


eq = _comparison("eq", "==")
neq = _comparison("neq", "!=")
lt = _comparison("lt", "<")
gt = _comparison("gt", ">")
le = _comparison("le", "<=")
ge = _comparison("ge", ">=")
