"""Shared sparse matrices (PyTensor's ``pytensor.sparse.sharedvar`` names;
``opweave.sparse.shared`` is :func:`sparse_constructor`)."""

from __future__ import annotations

import copy
from typing import Any

from opweave.compile.sharedvalue import SharedVariable
from opweave.sparse.type import SPARSE_FORMATS, SparseTensorType, _is_sparse_value
from opweave.sparse.variable import SparseVariable

__all__ = ["SparseTensorSharedVariable", "sparse_constructor"]


class SparseTensorSharedVariable(SharedVariable, SparseVariable):
    """A shared variable holding a SciPy sparse matrix (with the sparse operators)."""


def sparse_constructor(
    value: Any,
    name: str | None = None,
    strict: bool = False,
    allow_downcast: bool | None = None,
    borrow: bool = False,
    format: str | None = None,
) -> SparseTensorSharedVariable:
    """A shared variable initialised with the SciPy sparse matrix ``value``.

    Parameters
    ----------
    value
        A SciPy sparse matrix; its dtype becomes the variable's.
    name
        Optional name.
    strict, allow_downcast
        As for :func:`opweave.shared`: how ``set_value`` checks later values.
    borrow
        Keep ``value`` itself instead of a copy.
    format
        ``"csr"`` or ``"csc"`` (default: ``value``'s format, CSR for other formats).

    Raises
    ------
    TypeError
        If ``value`` is not a SciPy sparse matrix.
    """
    if not _is_sparse_value(value):
        raise TypeError(
            f"sparse shared: expected a scipy.sparse matrix, got {type(value).__name__} "
            f"{repr(value)[:60]} (use opweave.shared for dense arrays)"
        )
    if format is None:
        format = value.format if value.format in SPARSE_FORMATS else "csr"
    type_ = SparseTensorType(format, value.dtype)
    if not borrow:
        value = copy.deepcopy(value)
    return SparseTensorSharedVariable(
        type_, value, strict=strict, allow_downcast=allow_downcast, name=name
    )
