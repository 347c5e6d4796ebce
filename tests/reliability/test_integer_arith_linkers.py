"""Integer powers and integer sums/products give NumPy's values on every linker.

``py``, ``vm``, ``c`` and ``cvm`` run the same graphs and are compared with NumPy where
NumPy defines the value, and with the documented rule of :class:`opweave.scalar.basic.Pow`
where it does not (negative integer exponents, which NumPy refuses, computed here from
Python's exact rationals):

* integer powers of two arrays wrap around element by element in the output dtype (NumPy's
  result for two arrays), a constant exponent no wider than the base in the base's dtype
  (NumPy's ``x ** 2`` for a Python ``2``), an element with a negative exponent not
  disturbing the others;
* a negative exponent gives the real power truncated towards zero, ``0`` for a zero base;
* ``sum``/``prod`` with an integer ``dtype`` are exact modulo that dtype's range, as
  NumPy's, even where the accumulation dtype is a float (signed input, unsigned output);
* a float sum stored into an integer output converts as NumPy's casts do on every linker.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.tensor.map_reduce import MapReduce

LINKERS = ["py", "vm", "c", "cvm"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
#: (base, exponent) dtype pairs: every dtype with itself, and mixed pairs whose output
#: dtype is wider than the base's (so that the dtype the power wraps in matters).
POW_PAIRS = [(d, d) for d in INTS] + [
    ("uint8", "int8"),
    ("int8", "uint8"),
    ("uint16", "int8"),
    ("uint32", "int16"),
    ("uint8", "uint16"),
    ("int8", "int64"),
    ("int16", "uint32"),
]


def _bases(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    values = [0, 1, 2, 3, 7, 100, 127, int(info.max), int(info.max) - 1, 5, 6, 2, 3, 1, 0, 2]
    if info.min < 0:
        values[9:14] = [-1, -2, -3, int(info.min), -1]
    return np.array(values, dtype=dtype)


def _exponents(dtype: str) -> np.ndarray:
    values = [0, 1, 2, 3, 5, 8, 7, 2, 3, 63, 64, 1, 4, 9, 1, 65]
    if np.iinfo(dtype).min < 0:
        values[10:16] = [-1, -2, -3, -1, -5, -7]
    return np.array(values, dtype=dtype)


def _wrap_dtype(base: str, exponent: str) -> np.dtype[Any]:
    """The dtype a power of two integer arrays wraps around in: the output's."""
    return np.result_type(base, exponent)


def _expected_power(x: np.ndarray, y: np.ndarray, out_dtype: str) -> np.ndarray:
    """The documented values, from Python's exact integers and rationals."""
    wrap = _wrap_dtype(x.dtype.name, y.dtype.name)
    values = []
    for xi, yi in zip(x.tolist(), y.tolist(), strict=True):
        if yi >= 0:
            exact = xi**yi
        elif xi == 0:
            exact = 0
        else:
            exact = math.trunc(Fraction(xi) ** yi)
        values.append(np.array(exact % 2**64, dtype=np.uint64).astype(wrap))
    return np.array(values, dtype=wrap).astype(out_dtype)


@pytest.fixture(scope="module")
def power_functions() -> dict[str, tuple[list[Any], Callable[..., Any]]]:
    """One function per linker computing every pair of :data:`POW_PAIRS`."""
    inputs, outputs = [], []
    for k, (db, de) in enumerate(POW_PAIRS):
        x, y = ot.vector(f"x{k}", dtype=db), ot.vector(f"y{k}", dtype=de)
        inputs += [x, y]
        outputs.append(x**y)
    return {
        linker: (outputs, opweave.function(inputs, outputs, mode=opweave.Mode(linker=linker)))
        for linker in LINKERS
    }


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_powers_follow_numpy_and_the_negative_exponent_rule(
    power_functions: dict[str, tuple[list[Any], Callable[..., Any]]], linker: str
) -> None:
    outputs, f = power_functions[linker]
    args = []
    for db, de in POW_PAIRS:
        args += [_bases(db), _exponents(de)]
    results = f(*args)
    for (db, de), out, got in zip(POW_PAIRS, outputs, results, strict=True):
        x, y = _bases(db), _exponents(de)
        where = f"{linker}: {db} ** {de}"
        assert got.dtype == out.type.dtype, where
        np.testing.assert_array_equal(got, _expected_power(x, y, out.type.dtype), err_msg=where)
        if db == de:  # NumPy defines the non-negative exponents
            keep = y >= 0
            np.testing.assert_array_equal(got[keep], np.power(x[keep], y[keep]), err_msg=where)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_negative_exponent_leaves_the_other_elements_wrapping(linker: str) -> None:
    a, b = ot.vector("a", dtype="int8"), ot.vector("b", dtype="int8")
    c, d = ot.lvector("c"), ot.lvector("d")
    f = opweave.function([a, b, c, d], [a**b, c**d], mode=opweave.Mode(linker=linker))
    small, big = f(
        np.array([127, 2], "int8"),
        np.array([7, -1], "int8"),
        np.array([-(2**63), 3, 0, -1], "int64"),
        np.array([3, 41, -1, -3], "int64"),
    )
    assert small[0] == np.power(np.int8(127), np.int8(7))
    assert small.tolist() == [127, 0]
    assert big[:2].tolist() == np.power(np.array([-(2**63), 3]), np.array([3, 41])).tolist()
    assert big[2:].tolist() == [0, -1]


#: Base dtypes of ``x ** 2`` and ``x ** 3`` (a Python integer exponent).
SMALL_POWER_DTYPES = ["uint8", "uint16", "uint32", "int8", "int16"]


@pytest.mark.parametrize("linker", LINKERS)
def test_power_of_a_python_integer_gives_numpys_values(linker: str) -> None:
    """``x ** 2`` types ``uint8`` as ``int16`` but holds NumPy's ``uint8`` values."""
    xs = [ot.vector(f"x_{dtype}", dtype=dtype) for dtype in SMALL_POWER_DTYPES]
    outputs = [power for x in xs for power in (x**2, x**3)]
    f = opweave.function(xs, outputs, mode=opweave.Mode(linker=linker))
    values = [
        np.array([5, 200, 255, int(np.iinfo(d).max), int(np.iinfo(d).min), 3]).astype(d)
        for d in SMALL_POWER_DTYPES
    ]
    results = f(*values)
    for k, (dtype, v) in enumerate(zip(SMALL_POWER_DTYPES, values, strict=True)):
        square, cube = results[2 * k], results[2 * k + 1]
        np.testing.assert_array_equal(square, (v**2).astype(square.dtype), err_msg=dtype)
        np.testing.assert_array_equal(cube, (v**3).astype(cube.dtype), err_msg=dtype)


#: (input dtype, output dtypes) of the reductions compared with NumPy.
REDUCTIONS = [
    ("int8", ["uint16", "uint32", "uint64"]),
    ("int64", ["uint64"]),
    ("uint8", ["int8"]),
    ("uint64", ["int64"]),
    ("bool", ["uint8"]),
]


def _reduction_input(dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, size=(4, 6)).astype(bool)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, size=(4, 6), endpoint=True, dtype=dtype)
    first = [123, -38, 109, 23, 56, -68] if info.min < 0 else [123, 38, 109, 23, 56, 68]
    values[0] = np.array(first).astype(dtype)
    values[1, :3] = [info.max, info.max, info.min]
    return values


@pytest.fixture(scope="module")
def reduction_functions() -> dict[str, tuple[list[tuple[str, str, str]], Callable[..., Any]]]:
    """One function per linker: sums and products of every pair of :data:`REDUCTIONS`, a
    product through a fused map (``MapReduce``) and a product of ``uint16`` in ``uint16``."""
    inputs, outputs, labels = [], [], []
    for in_dt, out_dts in REDUCTIONS:
        x = ot.matrix(f"x_{in_dt}", dtype=in_dt)
        inputs.append(x)
        for out_dt in out_dts:
            outputs += [ot.sum(x, axis=1, dtype=out_dt), ot.prod(x, axis=1, dtype=out_dt)]
            labels += [("sum", in_dt, out_dt), ("prod", in_dt, out_dt)]
    m = ot.matrix("m", dtype="int8")
    n = ot.matrix("n", dtype="uint16")
    inputs += [m, n]
    outputs += [
        ot.prod(m * 3, axis=1, dtype="uint16"),
        ot.prod(n, axis=1, dtype="uint16", acc_dtype="uint16"),
    ]
    labels += [("prod of x * 3", "int8", "uint16"), ("prod", "uint16", "uint16")]
    fns = {}
    for linker in LINKERS:
        f = opweave.function(inputs, outputs, mode=opweave.Mode(linker=linker))
        fns[linker] = (labels, f)
    return fns


@pytest.mark.parametrize("linker", LINKERS)
def test_sums_and_products_into_integer_dtypes_match_numpy(
    reduction_functions: dict[str, tuple[list[tuple[str, str, str]], Callable[..., Any]]],
    linker: str,
) -> None:
    labels, f = reduction_functions[linker]
    rng = np.random.default_rng(33)
    values = {in_dt: _reduction_input(in_dt, rng) for in_dt, _ in REDUCTIONS}
    m = _reduction_input("int8", rng)
    n = np.array([[65535, 65535, 3], [300, 400, 500]], dtype="uint16")
    results = f(*values.values(), m, n)
    toposort = f.maker.fgraph.toposort()
    assert any(isinstance(node.op, MapReduce) for node in toposort), "no fused map-reduce"
    values["uint16"] = n
    for (kind, in_dt, out_dt), got in zip(labels, results, strict=True):
        x = m * np.int8(3) if kind == "prod of x * 3" else values[in_dt]
        reduce = np.sum if kind == "sum" else np.prod
        expected = reduce(x, axis=1, dtype=out_dt)
        where = f"{linker}: {kind}({in_dt}, dtype={out_dt})"
        assert got.dtype == expected.dtype, where
        np.testing.assert_array_equal(got, expected, err_msg=where)


@pytest.mark.parametrize("linker", LINKERS)
def test_a_float_sum_into_an_integer_output_converts_as_numpy_casts(linker: str) -> None:
    """The sum, then NumPy's conversion (negative and out-of-range values included; not
    NaN, whose conversion NumPy's own loops do not agree on)."""
    out_dtypes = ["uint32", "uint64", "int32", "uint8"]
    x = ot.dmatrix("x")
    outputs = [ot.sum(x, axis=1, dtype=d) for d in out_dtypes]
    f = opweave.function([x], outputs, mode=opweave.Mode(linker=linker))
    values = np.array([[-6.0, 0.0], [1e10, 1.0], [3e19, 0.0], [2.0**40, 5.0], [-200.0, -0.5]])
    for out_dt, got in zip(out_dtypes, f(values), strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = values.sum(axis=1).astype(out_dt)
        np.testing.assert_array_equal(got, expected, err_msg=out_dt)
