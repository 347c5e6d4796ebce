"""NumPy implementation of :mod:`opweave.tensor.linalg.decomposition.eigen`: eigenvalues of
symmetric/Hermitian matrices, ``numpy.linalg.eigvalsh`` of the triangle read; with ``b``,
of the standard problem ``L^-1 a L^-H`` for ``b = L L^H`` (LAPACK ``sygv``'s reduction)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave_python.impls.slinalg import check_square, triangular_solve

__all__ = ["PERFORMS", "eigvalsh_perform"]


def _from_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
    """The Hermitian matrices that one triangle of ``a`` describes."""
    part = np.tril(a, -1) if lower else np.triu(a, 1)
    return (np.tril(a) if lower else np.triu(a)) + np.swapaxes(part, -1, -2).conj()


def eigvalsh_perform(
    op: Eigvalsh, node: Apply, inputs: Sequence[Any], out: list[list[Any]]
) -> None:
    """The ascending eigenvalues; ``b`` not positive definite raises ``LinAlgError``."""
    real = np.dtype(node.outputs[0].type.dtype)
    work = np.result_type(real, *(np.asarray(x).dtype for x in inputs))
    if work.kind not in "fc":
        work = real
    a = np.asarray(inputs[0], dtype=work)
    check_square(op, a, "a")
    if len(inputs) == 1:
        w = np.linalg.eigvalsh(a, UPLO="L" if op.lower else "U")
    else:
        b = np.asarray(inputs[1], dtype=work)
        check_square(op, b, "b")
        if a.shape != b.shape:
            raise ValueError(f"{op}: a has shape {a.shape} but b has {b.shape}")
        try:
            factor = np.linalg.cholesky(_from_triangle(b, op.lower))
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(f"{op}: b is not positive definite") from None
        left = triangular_solve(factor, _from_triangle(a, op.lower), lower=True)
        right = triangular_solve(factor, np.swapaxes(left, -1, -2).conj(), lower=True)
        w = np.linalg.eigvalsh(np.swapaxes(right, -1, -2).conj(), UPLO="L")
    out[0][0] = np.asarray(w, dtype=real)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType(
    {Eigvalsh: eigvalsh_perform}
)
