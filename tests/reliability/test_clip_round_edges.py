"""``clip`` and ``round_half_away_from_zero`` at their edges, on every linker, against NumPy.

``clip(x, lo, hi)`` is NumPy's ``np.clip``, that is ``minimum(maximum(x, lo), hi)``: a NaN
bound (or a NaN ``x``) gives NaN, and ``hi`` wins when ``lo > hi``; integer inputs clip
exactly. ``round_half_away_from_zero`` rounds halves away from zero and keeps the sign of
``x``, so negative values that round to zero give ``-0.0``. One function per linker
(``py``, ``vm``, ``c``, ``cvm``) computes every output, in float32 and float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

FLOAT_DTYPES = ("float32", "float64")
NAN, INF = np.nan, np.inf

#: ``(x, lo, hi)`` columns: NaN bounds, a NaN ``x``, crossed bounds and ordinary values.
CLIP_ROWS = [
    (0.5, NAN, 1.0),
    (0.5, 0.0, NAN),
    (-2.0, NAN, 1.0),
    (2.0, 0.0, NAN),
    (0.5, NAN, NAN),
    (NAN, 0.0, 1.0),
    (NAN, 2.0, 0.0),
    (-0.5, 2.0, 0.0),
    (5.0, 2.0, 0.0),
    (1.0, 2.0, 0.0),
    (-INF, 0.0, 1.0),
    (INF, 0.0, 1.0),
    (0.5, -INF, INF),
    (-0.3, 0.0, 1.0),
    (0.3, 0.0, 1.0),
    (2.5, 0.0, 1.0),
]
#: Integer ``(x, lo, hi)`` columns, crossed bounds included.
INT_CLIP_ROWS = [(5, 0, 3), (-5, 0, 3), (2, 0, 3), (-1, 2, 0), (5, 2, 0), (1, 2, 0)]
ROUND_VALUES = [
    -0.0, 0.0, -0.3, 0.3, -1e-300, 1e-300, -0.5, 0.5, -0.49999997, 2.5, -2.5, 1.5, -1.5,
    -0.7, 3.4999, -3.5, 1e30, -1e30, NAN, INF, -INF,
]  # fmt: skip


def _round_half_away_reference(x: np.ndarray) -> np.ndarray:
    """Halves away from zero, the sign of ``x`` kept (NumPy only)."""
    a = np.abs(x)
    whole = np.floor(a)
    with np.errstate(invalid="ignore"):  # inf - inf
        return np.copysign(np.where(a - whole >= 0.5, whole + 1, whole), x)


def _clip_columns(dtype: str, rows: list[tuple[Any, Any, Any]]) -> list[np.ndarray]:
    return [np.array(col, dtype=dtype) for col in zip(*rows, strict=True)]


@pytest.fixture(scope="module", params=usable_linkers())
def computed(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Every output on one linker: ``("clip", dtype)`` and ``("round", dtype)`` values."""
    inputs, outputs, values, keys = [], [], [], []
    for dtype in FLOAT_DTYPES:
        x, lo, hi = (pt.vector(name, dtype=dtype) for name in ("x", "lo", "hi"))
        r = pt.vector("r", dtype=dtype)
        inputs += [x, lo, hi, r]
        outputs += [pt.clip(x, lo, hi), pt.round_half_away_from_zero(r)]
        values += [*_clip_columns(dtype, CLIP_ROWS), np.array(ROUND_VALUES, dtype=dtype)]
        keys += [("clip", dtype), ("round", dtype)]
    ix, ilo, ihi = (pt.vector(name, dtype="int32") for name in ("ix", "ilo", "ihi"))
    inputs += [ix, ilo, ihi]
    outputs.append(pt.clip(ix, ilo, ihi))
    values += _clip_columns("int32", INT_CLIP_ROWS)
    keys.append(("clip", "int32"))
    fn = opweave.function(inputs, outputs, mode=opweave.Mode(linker=request.param))
    return dict(zip(keys, fn(*values), strict=True))


def _assert_same(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_clip_propagates_nan_and_lets_hi_win_like_numpy(
    computed: dict[str, Any], dtype: str
) -> None:
    x, lo, hi = _clip_columns(dtype, CLIP_ROWS)
    got = computed[("clip", dtype)]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(np.clip(x, lo, hi)))
    assert np.isnan(got[:5]).all()  # a NaN bound gives NaN
    _assert_same(np.where(np.isnan(got), 0, got), np.nan_to_num(np.clip(x, lo, hi), nan=0))


def test_integer_clip_matches_numpy(computed: dict[str, Any]) -> None:
    x, lo, hi = _clip_columns("int32", INT_CLIP_ROWS)
    _assert_same(computed[("clip", "int32")], np.clip(x, lo, hi))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_round_half_away_from_zero_keeps_the_sign_of_zero(
    computed: dict[str, Any], dtype: str
) -> None:
    x = np.array(ROUND_VALUES, dtype=dtype)
    got = computed[("round", dtype)]
    _assert_same(got, _round_half_away_reference(x))
    assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    assert np.signbit(got[(x < 0) & (x > -0.5)]).all()  # -0.3, -1e-300 give -0.0


def test_the_clip_gradient_goes_to_what_the_output_is() -> None:
    """Inside the bounds to ``x``, below to ``lo``, above to ``hi``; with crossed bounds
    the output is ``hi`` (NumPy's clip), and so is the gradient's target."""
    x, lo, hi = pt.dvector("x"), pt.dvector("lo"), pt.dvector("hi")
    weights = np.arange(1.0, 5.0)
    cost = pt.sum(pt.clip(x, lo, hi) * weights)
    f = opweave.function([x, lo, hi], opweave.grad(cost, [x, lo, hi]))
    gx, glo, ghi = f([0.5, -1.0, 2.0, 0.5], [0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(glo, [0.0, 2.0, 0.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 3.0, 4.0])
