"""NumPy implementation of :mod:`opweave.tensor.linalg.products`: the matrix exponential.

Scaling and squaring with a diagonal Padé approximant, after Higham (2005), "The scaling
and squaring method for the matrix exponential revisited": the smallest degree of 3, 5,
7 and 9 whose threshold ``theta_m`` bounds the 1-norm of ``A``, else degree 13 after
scaling ``A`` by ``2**-s`` so that its norm is at most ``theta_13``, and squaring ``s``
times. Computed in double precision (``float64``/``complex128``) and cast to the output's
dtype; matrix by matrix over the batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from opweave.graph.basic import Apply
from opweave.tensor.linalg.products import Expm
from opweave_python.impls.slinalg import check_square

__all__ = ["PERFORMS", "expm_pade", "expm_perform"]

#: Degree -> the coefficients ``b_0 .. b_m`` of the diagonal Padé approximant.
_PADE: dict[int, tuple[float, ...]] = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (
        17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
        2162160.0, 110880.0, 3960.0, 90.0, 1.0,
    ),
    13: (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
        1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
        33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
    ),
}  # fmt: skip
#: Degree -> ``theta_m``, the largest 1-norm for which the degree-m approximant is
#: accurate to double precision (Higham 2005, Table 2.3).
_THETA = {
    3: 1.495585217958292e-2,
    5: 2.539398330063230e-1,
    7: 9.504178996162932e-1,
    9: 2.097847961257068e0,
    13: 5.371920351148152e0,
}


def _pade_terms(a: np.ndarray, degree: int) -> tuple[np.ndarray, np.ndarray]:
    """``(U, V)``: the odd and even parts of the degree-``degree`` Padé numerator."""
    b = _PADE[degree]
    ident = np.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    if degree < 13:
        powers = [ident, a2]
        while len(powers) <= degree // 2:
            powers.append(powers[-1] @ a2)
        odd = sum(b[2 * k + 1] * p for k, p in enumerate(powers))
        even = sum(b[2 * k] * p for k, p in enumerate(powers))
        return a @ odd, even
    a4 = a2 @ a2
    a6 = a4 @ a2
    odd = a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
    even = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
    return a @ (odd + b[1] * ident), even + b[0] * ident


def expm_pade(a: np.ndarray) -> np.ndarray:
    """The exponential of one square matrix (double precision); NaN if ``a`` is not finite."""
    if a.size == 0:
        return a.copy()
    if not np.all(np.isfinite(a)):
        return np.full_like(a, np.nan)
    norm = np.linalg.norm(a, 1)
    for degree in (3, 5, 7, 9):
        if norm <= _THETA[degree]:
            u, v = _pade_terms(a, degree)
            return np.linalg.solve(v - u, v + u)
    squarings = max(0, int(np.ceil(np.log2(norm / _THETA[13]))))
    u, v = _pade_terms(a / 2.0**squarings, 13)
    x = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        x = x @ x
    return x


def expm_perform(op: Expm, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
    """:func:`expm_pade` of each matrix of the batch."""
    dtype = np.dtype(node.outputs[0].type.dtype)
    work = np.complex128 if dtype.kind == "c" else np.float64
    a = np.asarray(inputs[0], dtype=work)
    check_square(op, a, "A")
    result = np.empty(a.shape, dtype=work)
    for idx in np.ndindex(*a.shape[:-2]):
        result[idx] = expm_pade(a[idx])
    out[0][0] = result.astype(dtype, copy=False)


#: Op class -> ``perform(op, node, inputs, output_storage)``. Read-only.
PERFORMS: MappingProxyType[type, Callable[..., None]] = MappingProxyType({Expm: expm_perform})
