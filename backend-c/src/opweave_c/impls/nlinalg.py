"""The Ops of :mod:`opweave.tensor.nlinalg` have no C code: they call LAPACK through NumPy.

They are registered so that the table covers them: the factory answers ``None`` for
every node, so ``cvm`` runs these nodes with the Python backend's implementations and
the ``c`` linker, which needs C for every node, raises ``MissingCCodeError``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
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

__all__ = ["C_OPS"]


def _python_only(op: Any, node: Apply) -> None:
    """No C implementation: the node runs in Python (``cvm``)."""
    return None


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        cls: _python_only
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
