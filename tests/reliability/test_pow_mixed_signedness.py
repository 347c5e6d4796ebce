"""Integer powers of two arrays of mixed signedness give NumPy's values on every linker.

The output dtype of ``x ** y`` is the inputs' upcast (``int8 ** uint8`` is ``int16``,
``int64 ** uint64`` is ``float64``); the power is computed in that dtype, both operands
converted to it first, as NumPy computes two arrays: ``int8 2 ** uint8 7`` is ``128``,
``int64 2 ** uint64 100`` is ``1.27e30`` and ``uint64 2 ** int64 -1`` is ``0.5``. A
constant exponent (the Python ``2`` of ``x ** 2``) keeps NumPy's ``x ** 2``: the power wraps
in the base's dtype. A negative exponent of an integer power gives the real power truncated
towards zero, ``0 ** -n`` gives 0. Both hold in fused graphs (a Composite holding the power).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot

LINKERS = ["py", "vm", "c", "cvm"]

#: (base, exponent) pairs of different signedness whose exponent is no wider than the base.
PAIRS = [
    ("int8", "uint8"),
    ("int16", "uint16"),
    ("int32", "uint32"),
    ("int64", "uint64"),
    ("uint8", "int8"),
    ("uint16", "int8"),
    ("uint16", "int16"),
    ("uint32", "int8"),
    ("uint32", "int16"),
    ("uint32", "int32"),
    ("uint64", "int8"),
    ("uint64", "int16"),
    ("uint64", "int32"),
    ("uint64", "int64"),
]


def _edges(dtype: str) -> list[int]:
    info = np.iinfo(dtype)
    values = {0, 1, 2, 3, 7, 100, int(info.max), int(info.max) - 1, int(info.min)}
    if info.min < 0:
        values |= {-1, -2, -3}
    return sorted(v for v in values if info.min <= v <= info.max)


def _operands(base: str, exponent: str) -> tuple[np.ndarray, np.ndarray]:
    """Every combination of the edge values (and small exponents) of the two dtypes."""
    exps = sorted(set(_edges(exponent)) | {4, 5, 8, 15, 31, 63, 64, 65} & set(range(128)))
    pairs = [(b, e) for b in _edges(base) for e in exps]
    x = np.array([b for b, _ in pairs], dtype=base)
    y = np.array([e for _, e in pairs], dtype=exponent)
    return x, y


def _expected(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy's power of two arrays, in their result dtype; a negative integer exponent
    gives the truncated real power (``0`` for a zero base)."""
    out = np.result_type(x, y)
    if out.kind == "f":
        with np.errstate(all="ignore"):
            return np.power(x.astype(out), y.astype(out))
    values = []
    for b, e in zip(x.tolist(), y.tolist(), strict=True):
        if e >= 0:
            exact = pow(b, e, 2**64)
        else:  # the truncated real power: 1 or -1 for a base of 1 or -1, else 0
            exact = math.trunc(Fraction(b) ** (e % 2 - 2)) if abs(b) == 1 else 0
        values.append(exact % 2**64)
    return np.array(values, dtype=np.uint64).astype(out)


@functools.cache
def _function(linker: str) -> tuple[list[Any], Any]:
    """Every pair as a lone power and inside a fused ``x ** y + 0 * x``, on ``linker``."""
    inputs, outputs = [], []
    for k, (base, exponent) in enumerate(PAIRS):
        x, y = ot.vector(f"x{k}", dtype=base), ot.vector(f"y{k}", dtype=exponent)
        inputs += [x, y]
        power = x**y
        outputs += [power, power + ot.zeros_like(power) * x]
    return outputs, opweave.function(inputs, outputs, mode=opweave.Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
def test_mixed_signedness_powers_are_computed_in_the_output_dtype(linker: str) -> None:
    outputs, f = _function(linker)
    args = [a for base, exponent in PAIRS for a in _operands(base, exponent)]
    results = f(*args)
    for k, (base, exponent) in enumerate(PAIRS):
        x, y = _operands(base, exponent)
        expected = _expected(x, y)
        for got, out, how in zip(results[2 * k : 2 * k + 2], outputs[2 * k : 2 * k + 2], "PF"):
            where = f"{linker}: {base} ** {exponent} ({'fused' if how == 'F' else 'alone'})"
            assert got.dtype == out.type.dtype == expected.dtype, where
            if expected.dtype.kind == "f":  # C's pow is within an ulp of NumPy's
                np.testing.assert_allclose(got, expected, rtol=4e-16, atol=0, err_msg=where)
            else:
                np.testing.assert_array_equal(got, expected, err_msg=where)


@pytest.mark.parametrize("linker", LINKERS)
def test_the_examples_of_the_contract(linker: str) -> None:
    a, b = ot.vector("a", dtype="int8"), ot.vector("b", dtype="uint8")
    c, d = ot.vector("c", dtype="int64"), ot.vector("d", dtype="uint64")
    u, s = ot.vector("u", dtype="uint64"), ot.vector("s", dtype="int64")
    mode = opweave.Mode(linker=linker)
    f = opweave.function([a, b, c, d, u, s], [a**b, c**d, u**s], mode=mode)
    small, big, half = f(
        np.array([2, -2], "int8"),
        np.array([7, 7], "uint8"),
        np.array([2], "int64"),
        np.array([100], "uint64"),
        np.array([2], "uint64"),
        np.array([-1], "int64"),
    )
    assert small.dtype == "int16" and small.tolist() == [128, -128]
    assert big.dtype == "float64" and big.tolist() == [2.0**100]
    assert half.dtype == "float64" and half.tolist() == [0.5]


@pytest.mark.parametrize("linker", LINKERS)
def test_a_constant_exponent_wraps_in_the_base_dtype_alone_and_fused(linker: str) -> None:
    x, y = ot.vector("x", dtype="uint8"), ot.vector("y", dtype="int8")
    mode = opweave.Mode(linker=linker)
    f = opweave.function([x, y], [x**2, x**2 + y, x**y, x**y + y], mode=mode)
    xs, ys = np.array([5, 200, 255], "uint8"), np.array([2, 2, 2], "int8")
    alone, fused, arrays, arrays_fused = f(xs, ys)
    assert alone.dtype == "int16" and alone.tolist() == [25, 64, 1]
    assert fused.tolist() == [27, 66, 3]
    assert arrays.tolist() == [25, 40000 - 65536, 65025 - 65536]
    assert arrays_fused.tolist() == [27, 40002 - 65536, 65027 - 65536]
