"""The Ops of :mod:`opweave.tensor.slinalg` have no C code: they call LAPACK through NumPy.
Nor have those of the modules built on it that :mod:`opweave.tensor.linalg` re-exports
(``linalg.products``, ``linalg.constructors``, ``linalg.decomposition``,
``linalg.solvers``): NumPy (or SciPy, for
the Schur forms) factorizations and solves, covered here too.

They are registered so that the table covers them: the factory answers ``None`` for
every node, so ``cvm`` runs these nodes with the Python backend's implementations and
the ``c`` linker, which needs C for every node, raises ``MissingCCodeError``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.tensor.linalg.constructors import BlockDiagonal
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.linalg.decomposition.lu import LU, LUFactor, PivotToPermutations
from opweave.tensor.linalg.decomposition.schur import QZ, Schur
from opweave.tensor.linalg.products import Expm
from opweave.tensor.linalg.solvers.linear_control import SolveSylvester
from opweave.tensor.linalg.solvers.riccati import SolveDiscreteARE
from opweave.tensor.slinalg import Cholesky, CholeskySolve, Solve, SolveBase, SolveTriangular
from opweave_c.impls.common import python_only

__all__ = ["C_OPS"]


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        cls: python_only
        for cls in (
            Cholesky,
            CholeskySolve,
            Solve,
            SolveBase,
            SolveTriangular,
            Expm,
            BlockDiagonal,
            LU,
            LUFactor,
            PivotToPermutations,
            Eigvalsh,
            Schur,
            QZ,
            SolveSylvester,
            SolveDiscreteARE,
        )
    }
)
