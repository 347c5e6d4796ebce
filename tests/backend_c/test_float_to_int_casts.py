"""Float to integer casts give NumPy's x86-64 results on the C linkers, NaN and out-of-range
values included (C leaves those conversions undefined; the generated code spells them out)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot

VALUES = [-1.0, np.nan, 300.0, 1e10, -1e10, 3.7, -3.7, 3e9, 2.0**63, 2.0**64, -(2.0**63)]
VALUES += [65535.9, 70000.0, -129.5, np.inf, -np.inf]
TARGETS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def numpy_cast(values: np.ndarray, dtype: str) -> np.ndarray:
    """NumPy's ``astype`` with its invalid-value warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return values.astype(dtype)


def compared(dtype: str) -> np.ndarray:
    """Positions compared: all but ``-inf`` to ``uint32``, which NumPy maps to 0 alone."""
    keep = np.ones(len(VALUES), bool)
    if dtype == "uint32":
        keep[VALUES.index(-np.inf)] = False
    return keep


@pytest.mark.parametrize("linker", ["c", "cvm"])
@pytest.mark.parametrize("source", ["float64", "float32"])
@pytest.mark.parametrize("target", TARGETS)
def test_cast_matches_numpy(linker: str, source: str, target: str) -> None:
    x = ot.vector("x", dtype=source)
    f = opweave.function([x], ot.cast(x, target), mode=opweave.Mode(linker=linker))
    values = np.array(VALUES, dtype=source)
    keep = compared(target)
    np.testing.assert_array_equal(f(values)[keep], numpy_cast(values, target)[keep])


def test_fused_cast_of_a_float_expression_matches_numpy() -> None:
    """Inside a fused loop too: ``-1`` wraps to 255, NaN gives 0 in uint8."""
    x = ot.dvector("x")
    f = opweave.function([x], ot.cast(x * 2.0 - 1.0, "uint8"), mode=opweave.Mode(linker="cvm"))
    values = np.array([0.0, np.nan, 150.0, 0.4])
    assert f(values).tolist() == numpy_cast(values * 2.0 - 1.0, "uint8").tolist()
    assert f(values).tolist() == [255, 0, 43, 0]
