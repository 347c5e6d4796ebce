"""What the linker tests of the linear-algebra Ops share: the linkers and dtypes, the
layouts of an input, running a function quietly, and comparing results between linkers
and with NumPy or SciPy."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

LINKERS = ("py", "vm", "c", "cvm")
DTYPES = ("float32", "float64")
NAN, INF = np.nan, np.inf

#: 3 x 2 matrices (the grids of ``qr`` and ``lstsq`` add their own).
TALL: dict[str, list[list[float]]] = {
    "general": [[0.3, -1.7], [2.2, 0.9], [-0.4, 1.1]],
    "rank-one": [[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]],
    "zero": [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0], [-0.0, -0.0], [-0.0, -0.0]],
    "zero-column": [[1.0, 0.0], [2.0, -0.0], [0.5, 0.0]],
    "inf": [[INF, 1.0], [2.0, 3.0], [0.0, 1.0]],
    "huge": [[1e30, 0.0], [0.0, 1e30], [1e29, 0.0]],
    "tiny": [[1e-30, 0.0], [0.0, -1e-30], [0.0, 1e-31]],
}

#: Finite symmetric 3 x 3 matrices (one triangle is read).
SYMMETRIC: dict[str, list[list[float]]] = {
    "identity": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
    "repeated": [[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -1.0]],
    "zeros": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "negative-zeros": [[-0.0, -0.0, -0.0], [-0.0, -0.0, -0.0], [-0.0, -0.0, -0.0]],
    "general": [[0.3, -1.7, 2.0], [-1.7, 0.9, 0.1], [2.0, 0.1, -4.0]],
    "huge": [[1e30, 1e29, 0.0], [1e29, 1e30, 0.0], [0.0, 0.0, 1.0]],
    "tiny": [[1e-30, 0.0, 0.0], [0.0, -1e-30, 0.0], [0.0, 0.0, 1.0]],
}


def layouts(a: np.ndarray) -> list[np.ndarray]:
    """``a`` contiguous, as a view with strided rows, and Fortran-ordered (the transpose
    of a transposed copy)."""
    wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
    wide[..., ::2] = a
    fortran = np.swapaxes(np.ascontiguousarray(np.swapaxes(a, -1, -2)), -1, -2)
    return [a, wide[..., ::2], fortran]


def stacked(matrices: dict[str, Any], dtype: str, lead: tuple[int, int]) -> list[np.ndarray]:
    """The ``matrices`` in one batch, that batch reshaped to the leading axes ``lead``, and
    an empty batch of them."""
    a = np.array(list(matrices.values()), dtype=dtype)
    return [a, a.reshape(*lead, *a.shape[1:]), np.zeros((0, *a.shape[1:]), dtype=dtype)]


def empty_batches(dtype: str) -> list[np.ndarray]:
    """Batches of matrices without entries: none of their rows, of their columns, of
    either."""
    return [np.zeros(shape, dtype=dtype) for shape in ((2, 0, 3), (2, 3, 0), (1, 0, 0))]


def run(f: Callable[..., Any], *args: Any) -> Any:
    """``f(*args)`` without its ``RuntimeWarning``s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


def outcome(f: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """``("ok", f(*args))``, or ``("error", (type, first line of the message))``."""
    try:
        return "ok", run(f, *args)
    except Exception as exc:
        return "error", (type(exc), str(exc).split("\n")[0])


def same_bits(ref: np.ndarray, got: np.ndarray, where: str, *, nan_signs: bool = False) -> None:
    """The same dtype, shape and values, NaN at the same places and every other value of
    the same sign (zeros included); with ``nan_signs`` NaN's sign too (elsewhere it is not
    a value: x86 picks it by operand order)."""
    assert got.dtype == ref.dtype and got.shape == ref.shape, where
    np.testing.assert_array_equal(got, ref, err_msg=where)
    if nan_signs:
        np.testing.assert_array_equal(np.signbit(got), np.signbit(ref), err_msg=where)
    else:
        numbers = ~np.isnan(ref)
        np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(ref[numbers]), where)


def same_outcome(
    ref: tuple[str, Any], got: tuple[str, Any], where: str, *, signs: bool = False
) -> None:
    """Two :func:`outcome`\\ s agree: the same error, or values of the same dtype, shape
    and bits (with ``signs``, every value but NaN of the same sign)."""
    assert ref[0] == got[0], f"{where}: {ref} != {got}"
    if ref[0] == "error":
        assert ref[1] == got[1], where
        return
    for r, g in zip(ref[1], got[1], strict=True):
        assert r.dtype == g.dtype and r.shape == g.shape, where
        np.testing.assert_array_equal(r, g, err_msg=where)
        if signs:
            same_bits(r, g, where)


def close_to(
    got: np.ndarray,
    want: Any,
    where: str,
    *,
    rtol32: float = 2e-5,
    floor: float = 0.0,
    exact_dtype: bool = False,
) -> None:
    """``got`` is ``want`` (NumPy's or SciPy's result) within rounding: the same shape, NaN
    at the same places, the finite values within ``rtol`` (``rtol32`` for float32, 1e-9
    for float64) of the largest finite magnitude (at least ``floor``). ``exact_dtype``:
    ``want`` has ``got``'s dtype and its zeros their signs; else it is cast to that dtype."""
    want = np.asarray(want) if exact_dtype else np.asarray(want, dtype=got.dtype)
    assert got.dtype == want.dtype and got.shape == want.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    if exact_dtype:
        zeros = want == 0
        np.testing.assert_array_equal(
            np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=where
        )
    finite = np.isfinite(want)
    rtol = rtol32 if got.dtype == np.float32 else 1e-9
    scale = float(np.max(np.abs(want[finite]), initial=floor))
    np.testing.assert_allclose(
        got[finite], want[finite], rtol=rtol, atol=rtol * scale, err_msg=where
    )
