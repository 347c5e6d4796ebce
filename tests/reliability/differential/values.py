"""Edge values per dtype, the memory layouts inputs are passed in, and the comparison rule.

Every generated value is exactly representable in its dtype. Floats include NaN, ±inf,
±0, the smallest denormal, the smallest normal and the largest finite value; integers their
minimum and maximum; complex numbers every pairing of a few real and imaginary parts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from opweave.tensor.type import all_dtypes

__all__ = [
    "ALL_DTYPES",
    "LAYOUTS",
    "agree",
    "cartesian",
    "edge_values",
]

#: Every dtype opweave's tensors take: a dtype the library adds is checked here too.
ALL_DTYPES: tuple[str, ...] = tuple(all_dtypes)

#: Finite ordinary float values (exact in float16 as well).
_FLOAT_ORDINARY = (0.5, -0.5, 1.5, -2.5, 3.0, 7.25, -100.0, 0.1)
#: Real and imaginary parts paired into complex values.
_COMPLEX_PARTS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, np.nan)


def edge_values(dtype: str) -> np.ndarray:
    """A 1-d array of the edge values of ``dtype`` (and a few ordinary ones)."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        return np.array([False, True])
    if kind in "iu":
        info = np.iinfo(dtype)
        negative = [-1, -2, -7, -100] if kind == "i" else []
        extremes_int = [info.min, info.max, info.min + 1, info.max - 1]
        return np.array([0, 1, 2, 3, 7, 100, *negative, *extremes_int], dtype=dtype)
    if kind == "f":
        info = np.finfo(dtype)
        special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, -2.0]
        extremes = [info.max, -info.max, info.smallest_normal, info.smallest_subnormal]
        extremes += [-info.smallest_subnormal]
        values = np.array(special + list(_FLOAT_ORDINARY), dtype=dtype)
        return np.concatenate([values, np.array(extremes, dtype=dtype)])
    parts = np.array(_COMPLEX_PARTS)
    re, im = np.meshgrid(parts, parts, indexing="ij")
    values = np.empty(re.size, dtype=dtype)
    values.real, values.imag = re.ravel(), im.ravel()
    return values


def cartesian(columns: Sequence[np.ndarray], limit: int | None = None) -> list[np.ndarray]:
    """Every combination of the values of ``columns`` (one array per argument, each
    ``limit`` values at most, taken evenly), as equally long 1-d arrays."""
    if limit is not None:
        columns = [
            col[np.linspace(0, len(col) - 1, min(limit, len(col))).astype(int)] for col in columns
        ]
    index = np.array(list(itertools.product(*(range(len(c)) for c in columns))))
    if index.size == 0:
        return [col[:0] for col in columns]
    return [col[index[:, k]] for k, col in enumerate(columns)]


#: How an argument is passed: a function of the 2-d C-contiguous array giving an array of
#: equal values in another memory layout.
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "contiguous": lambda a: a,
    "transposed": lambda a: np.ascontiguousarray(a.T).T,
    "strided": lambda a: np.repeat(a, 2, axis=1)[:, ::2],
    "reversed": lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],
}


def _float_agree(
    actual: np.ndarray,
    expected: np.ndarray,
    ulps: float,
    tol: np.ndarray | None,
    signed_zero: bool,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    both_nan = np.isnan(actual) & np.isnan(expected)
    same = actual == expected
    if signed_zero:
        same &= np.signbit(actual) == np.signbit(expected)
    finite = np.isfinite(actual) & np.isfinite(expected)
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        magnitude = np.abs(expected) if scale is None else scale
        ulp_tol = ulps * np.spacing(magnitude).astype(np.float64)
        tol = ulp_tol if tol is None else np.maximum(ulp_tol, tol)
    close = finite & (err <= tol)
    if signed_zero:  # a zero is expected exactly, with its sign
        close &= (expected != 0) | same
    return both_nan | same | close


def agree(
    actual: np.ndarray,
    expected: np.ndarray,
    ulps: float,
    tol: np.ndarray | None = None,
    signed_zero: bool = True,
) -> np.ndarray:
    """Elementwise: does ``actual`` match ``expected`` (given in ``actual``'s dtype)?

    Booleans and integers must be equal; floats equal with the same sign (``-0.0`` is not
    ``0.0``, unless ``signed_zero`` is false), both NaN, or, when both are finite, within
    ``ulps`` units in the last place of the expected value (or ``tol``, an absolute
    tolerance, where larger). Complex numbers compare their real and imaginary parts so,
    with units in the last place of the expected modulus.
    """
    kind = actual.dtype.kind
    if kind in "biu":
        return actual == expected
    if kind == "c":
        with np.errstate(over="ignore", invalid="ignore"):
            modulus = np.abs(expected).astype(expected.real.dtype)
        parts = [(actual.real, expected.real), (actual.imag, expected.imag)]
        agreed = [_float_agree(a, e, ulps, tol, signed_zero, modulus) for a, e in parts]
        return agreed[0] & agreed[1]
    return _float_agree(actual, expected, ulps, tol, signed_zero)
