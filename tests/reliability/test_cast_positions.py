"""A float converts to an integer dtype the same way at every position of an array.

NumPy's own conversion of NaN and out-of-range floats to ``uint32`` depends on the
position (its vectorized loop and its scalar tail loop disagree), so the kernels do not
rely on it: every linker gives one value per input value, whatever the array's length,
strides or the element's position, and the same value as every other linker.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.link.lookup import available_linkers

#: One linker per family of kernels (``vm`` runs ``py``'s, ``cvm`` ``c``'s), where installed.
LINKERS = [name for name in ("py", "c", "jax") if name in available_linkers()]
VALUES = [np.nan, np.inf, -np.inf, 1e20, -1e20, 3e9, -3e9, 2.0**32 + 5, -(2.0**32) - 5, -1.5]
TARGETS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


@pytest.mark.parametrize("dst", TARGETS)
@pytest.mark.parametrize("src", ["float64", "float32"])
def test_every_position_and_linker_gives_one_value(src: str, dst: str) -> None:
    x = ot.vector("x", dtype=src)
    functions = {
        name: opweave.function([x], ot.cast(x, dst), mode=Mode(linker=name)) for name in LINKERS
    }
    for value in VALUES:
        seen: dict[str, set[int]] = {}
        for length in (1, 2, 3, 5, 8, 9, 17):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                contiguous = np.full(length, value, dtype=src)
                strided = np.full(2 * length, value, dtype=src)[::2]
            for name, fn in functions.items():
                for arr in (contiguous, strided):
                    seen.setdefault(name, set()).update(int(v) for v in fn(arr))
        by_linker = {name: sorted(values) for name, values in seen.items()}
        assert all(len(v) == 1 for v in by_linker.values()), (value, by_linker)
        assert len({v[0] for v in by_linker.values()}) == 1, (value, by_linker)


def test_float_to_uint32_keeps_in_range_values_and_wraps_small_negatives() -> None:
    x = ot.dvector("x")
    values = np.array([0.0, 1.9, 4294967295.0, 2.0**31, 2.0**31 - 1, -1.0, -2.5])
    for name in LINKERS:
        got = opweave.function([x], ot.cast(x, "uint32"), mode=Mode(linker=name))(values)
        want = np.array([0, 1, 4294967295, 2**31, 2**31 - 1, 2**32 - 1, 2**32 - 2], np.uint32)
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("dst", ["int32", "int64", "uint8", "uint32"])
def test_a_float_sum_stored_as_integers_converts_alike_on_every_linker(dst: str) -> None:
    """A float accumulation converted to an integer output (NaN, beyond the range, inside
    it) gives the same integers on every linker, along either axis."""
    x = ot.dmatrix("x")
    values = np.full((4, 9), np.nan)
    values[1], values[2], values[3] = -3e9, 1e20, 2.5
    for axis in (0, 1):
        got = {
            name: opweave.function([x], ot.sum(x, axis=axis, dtype=dst), mode=Mode(linker=name))(
                values
            )
            for name in LINKERS
        }
        first = next(iter(got.values()))
        for name, result in got.items():
            np.testing.assert_array_equal(result, first, err_msg=f"{name}, axis {axis}")
