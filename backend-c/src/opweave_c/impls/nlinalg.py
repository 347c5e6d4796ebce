"""The Ops of :mod:`opweave.tensor.nlinalg` have no C code: they call LAPACK through NumPy.

They are registered so that the table covers them: the factory answers ``None`` for
every node, so ``cvm`` runs these nodes with the Python backend's implementations and
the ``c`` linker, which needs C for every node, raises ``MissingCCodeError``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.nlinalg import (
    QR,
    SVD,
    Det,
    Eig,
    Eigh,
    Lstsq,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    TensorInv,
    TensorSolve,
)
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        cls: python_only
        for cls in (
            Det,
            Eig,
            Eigh,
            Lstsq,
            MatrixInverse,
            MatrixPinv,
            QR,
            SLogDet,
            SVD,
            TensorInv,
            TensorSolve,
        )
    }
)
