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

The package imports the module that defines a name when the name is first asked for
(PEP 562), so that :mod:`~opweave.tensor.nlinalg` and :mod:`~opweave.tensor.slinalg` can
build on the package's modules without an import circle through this ``__init__``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: Module -> the names this package gives from it.
_HOMES: dict[str, tuple[str, ...]] = {
    "opweave.tensor.linalg.constructors": (
        "block_diag",
        "BlockDiagonal",
    ),
    "opweave.tensor.linalg.decomposition.eigen": (
        "Eigvalsh",
        "eigvalsh",
    ),
    "opweave.tensor.linalg.decomposition.lu": (
        "LU",
        "lu",
        "lu_factor",
        "lu_solve",
        "LUFactor",
        "pivot_to_permutation",
        "PivotToPermutations",
    ),
    "opweave.tensor.linalg.decomposition.schur": (
        "ordqz",
        "QZ",
        "qz",
        "Schur",
        "schur",
    ),
    "opweave.tensor.linalg.products": (
        "Expm",
        "expm",
    ),
    "opweave.tensor.linalg.solvers.linear_control": (
        "solve_continuous_lyapunov",
        "solve_discrete_lyapunov",
        "solve_sylvester",
        "SolveSylvester",
    ),
    "opweave.tensor.linalg.solvers.riccati": (
        "solve_discrete_are",
        "SolveDiscreteARE",
    ),
    "opweave.tensor.nlinalg": (
        "Det",
        "det",
        "Eig",
        "eig",
        "Eigh",
        "eigh",
        "inv",
        "kron",
        "Lstsq",
        "lstsq",
        "matrix_dot",
        "matrix_inverse",
        "matrix_power",
        "MatrixInverse",
        "MatrixPinv",
        "norm",
        "pinv",
        "QR",
        "qr",
        "SLogDet",
        "slogdet",
        "SVD",
        "svd",
        "TensorInv",
        "tensorinv",
        "TensorSolve",
        "tensorsolve",
        "trace",
    ),
    "opweave.tensor.slinalg": (
        "cho_factor",
        "cho_solve",
        "Cholesky",
        "cholesky",
        "CholeskySolve",
        "Solve",
        "solve",
        "solve_triangular",
        "SolveBase",
        "SolveTriangular",
    ),
}

_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
