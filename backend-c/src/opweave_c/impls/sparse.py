"""The Ops of :mod:`opweave.sparse` have no C code: their values are SciPy matrices.

They are registered so that the table covers them: ``cvm`` runs their nodes through the
Python backend's implementations, and the whole-graph ``c`` linker refuses a graph with
sparse variables (use ``cvm``).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.sparse.basic import (
    CSM,
    Cast,
    ConstructSparseFromList,
    CSMGrad,
    CSMProperties,
    DenseFromSparse,
    Diag,
    EnsureSortedIndices,
    GetItem2d,
    GetItem2Lists,
    GetItem2ListsGrad,
    GetItemList,
    GetItemListGrad,
    GetItemScalar,
    Remove0,
    SparseBlockDiagonal,
    SparseDenseMultiply,
    SparseFromDense,
    SparseSparseMultiply,
    Stack,
    StructuredUnary,
    Transpose,
)
from opweave.sparse.math import (
    AddSD,
    AddSS,
    Dot,
    SpSum,
    StructuredAddSV,
    StructuredDot,
    TrueDot,
)
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]

#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        cls: python_only
        for cls in (
            AddSD,
            AddSS,
            Cast,
            CSM,
            CSMGrad,
            CSMProperties,
            ConstructSparseFromList,
            DenseFromSparse,
            Diag,
            Dot,
            EnsureSortedIndices,
            GetItem2d,
            GetItem2Lists,
            GetItem2ListsGrad,
            GetItemList,
            GetItemListGrad,
            GetItemScalar,
            Remove0,
            SparseBlockDiagonal,
            SparseDenseMultiply,
            SparseFromDense,
            SparseSparseMultiply,
            SpSum,
            Stack,
            StructuredAddSV,
            StructuredDot,
            StructuredUnary,
            Transpose,
            TrueDot,
        )
    }
)
