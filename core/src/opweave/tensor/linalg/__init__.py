"""Linear algebra under PyTensor's ``pytensor.tensor.linalg`` names.

The Ops and functions live in :mod:`opweave.tensor.nlinalg` (after ``numpy.linalg``),
:mod:`opweave.tensor.slinalg` (after ``scipy.linalg``) and this package's modules:
:mod:`~opweave.tensor.linalg.products` (``expm``),
:mod:`~opweave.tensor.linalg.constructors` (``block_diag``),
:mod:`~opweave.tensor.linalg.decomposition` (``lu``, ``lu_factor``, ``lu_solve``,
``pivot_to_permutation``, ``eigvalsh``, ``schur``, ``qz``, ``ordqz``) and
:mod:`~opweave.tensor.linalg.solvers` (``solve_sylvester``, the Lyapunov solvers and
``solve_discrete_are``).

``import opweave.tensor as ot`` gives them as ``ot.linalg.solve``, ``ot.linalg.cholesky``
and so on. Every Op takes batches of matrices (``(..., m, n)``) directly.

The package imports its modules when it is imported. :mod:`~opweave.tensor.nlinalg` and
:mod:`~opweave.tensor.slinalg` build on none of them, so the package's modules can build
on those two without an import circle; this package, above them all, gives
:mod:`~opweave.tensor.slinalg` PyTensor's ``schur``, ``qz`` and ``ordqz`` from
:mod:`~opweave.tensor.linalg.decomposition.schur`.
"""

from __future__ import annotations

from opweave.tensor import slinalg as _slinalg
from opweave.tensor.linalg.constructors import BlockDiagonal, block_diag
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh, eigvalsh
from opweave.tensor.linalg.decomposition.lu import (
    LU,
    LUFactor,
    PivotToPermutations,
    lu,
    lu_factor,
    lu_solve,
    pivot_to_permutation,
)
from opweave.tensor.linalg.decomposition.schur import QZ, Schur, ordqz, qz, schur
from opweave.tensor.linalg.products import Expm, expm
from opweave.tensor.linalg.solvers.linear_control import (
    SolveSylvester,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
)
from opweave.tensor.linalg.solvers.riccati import SolveDiscreteARE, solve_discrete_are
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
    det,
    eig,
    eigh,
    inv,
    kron,
    lstsq,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    svd,
    tensorinv,
    tensorsolve,
    trace,
)
from opweave.tensor.slinalg import (
    Cholesky,
    CholeskySolve,
    Solve,
    SolveBase,
    SolveTriangular,
    cho_factor,
    cho_solve,
    cholesky,
    solve,
    solve_triangular,
)


def _give_slinalg_the_schur_names() -> None:
    """PyTensor's ``pytensor.tensor.slinalg`` gives ``schur``, ``qz``, ``ordqz`` and their
    Ops too: this package, which sits above ``slinalg`` and the module that defines them
    (and builds on ``slinalg``), sets them there."""
    names = {"QZ": QZ, "Schur": Schur, "ordqz": ordqz, "qz": qz, "schur": schur}
    for name, value in names.items():
        setattr(_slinalg, name, value)


_give_slinalg_the_schur_names()

__all__ = [
    "LU",
    "QR",
    "QZ",
    "SVD",
    "BlockDiagonal",
    "Cholesky",
    "CholeskySolve",
    "Det",
    "Eig",
    "Eigh",
    "Eigvalsh",
    "Expm",
    "LUFactor",
    "Lstsq",
    "MatrixInverse",
    "MatrixPinv",
    "PivotToPermutations",
    "SLogDet",
    "Schur",
    "Solve",
    "SolveBase",
    "SolveDiscreteARE",
    "SolveSylvester",
    "SolveTriangular",
    "TensorInv",
    "TensorSolve",
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eig",
    "eigh",
    "eigvalsh",
    "expm",
    "inv",
    "kron",
    "lstsq",
    "lu",
    "lu_factor",
    "lu_solve",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "ordqz",
    "pinv",
    "pivot_to_permutation",
    "qr",
    "qz",
    "schur",
    "slogdet",
    "solve",
    "solve_continuous_lyapunov",
    "solve_discrete_are",
    "solve_discrete_lyapunov",
    "solve_sylvester",
    "solve_triangular",
    "svd",
    "tensorinv",
    "tensorsolve",
    "trace",
]
