"""Elementwise lowerings against the ``py`` linker on edge values.

Bit for bit where XLA and NumPy compute the same IEEE operation (arithmetic, comparisons,
rounding, ``sqrt``, ``log``...); within a few units in the last place where XLA's math
library differs from the C library NumPy calls (the per-Op tolerances below, which
``docs/backend-jax.md`` lists too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise

from .conftest import assert_same, compile_both

EDGES = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -1e-30, 0.3, -0.3, 0.5, -0.5, 1.5, 2.5]
EDGES += [-2.5, 0.999, -0.999, 1.0, -1.0, 3.7, -3.7, 20.0, -20.0, 100.0, 700.0, -700.0, 1e10]

#: Exact: the same IEEE operation on both sides.
EXACT = ["neg", "abs", "sign", "sqr", "sqrt", "floor", "ceil", "trunc", "round"]
EXACT += ["round_half_away_from_zero", "isnan", "isinf", "reciprocal"]

#: Relative tolerances (float64, float32) where XLA's math library is not the C library's.
TOLERANCES: dict[str, tuple[float, float]] = {
    "exp": (1e-15, 1e-6),
    "exp2": (4e-15, 4e-6),
    "expm1": (1e-15, 1e-6),
    "log": (1e-15, 1e-6),
    "log2": (1e-15, 1e-6),
    "log10": (1e-15, 1e-6),
    "log1p": (1e-15, 1e-6),
    "sin": (1e-15, 1e-6),
    "cos": (1e-15, 1e-6),
    "tan": (1e-15, 1e-6),
    "arcsin": (1e-15, 1e-6),
    "arccos": (1e-15, 1e-6),
    "arctan": (1e-15, 1e-6),
    "sinh": (1e-13, 1e-6),
    "cosh": (1e-13, 1e-6),
    "tanh": (1e-15, 1e-6),
    "arcsinh": (1e-15, 1e-6),
    "arccosh": (1e-15, 1e-6),
    "arctanh": (1e-15, 1e-6),
    "sigmoid": (1e-15, 1e-6),
    "softplus": (1e-15, 1e-6),
    "log1mexp": (4e-15, 1e-6),
    "erf": (1e-15, 1e-6),
    "erfc": (1e-15, 1e-6),
    "erfinv": (4e-15, 1e-6),
    "erfcx": (1e-15, 1e-6),
    "gamma": (1e-13, 4e-6),
    "psi": (1e-13, 4e-6),
    "tri_gamma": (1e-14, 4e-6),
    "i0": (1e-15, 1e-6),
    "i1": (1e-15, 1e-6),
    "xlogx": (1e-15, 1e-6),
}


def _fn(name: str) -> Callable[[Any], Any]:
    return getattr(pt, name)  # type: ignore[no-any-return]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", EXACT)
def test_exact_unary_ops_are_bit_for_bit(same_as_py: Any, name: str, dtype: str) -> None:
    x = pt.vector("x", dtype=dtype)
    same_as_py([x], [_fn(name)(x)], [np.array(EDGES, dtype=dtype)])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(TOLERANCES))
def test_library_unary_ops_within_tolerance(same_as_py: Any, name: str, dtype: str) -> None:
    x = pt.vector("x", dtype=dtype)
    rtol = TOLERANCES[name][0 if dtype == "float64" else 1]
    same_as_py([x], [_fn(name)(x)], [np.array(EDGES, dtype=dtype)], rtol=rtol)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gammaln_within_tolerance_away_from_its_roots(same_as_py: Any, dtype: str) -> None:
    # Near its roots 1 and 2 the value is tiny, so only an absolute bound means anything.
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, 0.3, -0.3, 3.7, -3.7, 20.0, 1e10])
    x = pt.vector("x", dtype=dtype)
    same_as_py(
        [x], [pt.gammaln(x)], [values.astype(dtype)], rtol=1e-11 if dtype == "float64" else 2e-6
    )


BINARY_FLOAT_EXACT = ["add", "sub", "mul", "true_div", "maximum", "minimum", "lt", "gt"]
BINARY_FLOAT_EXACT += ["le", "ge", "eq", "neq"]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", BINARY_FLOAT_EXACT)
def test_binary_float_ops_bit_for_bit(same_as_py: Any, name: str, dtype: str) -> None:
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    a = np.array(EDGES, dtype=dtype)
    b = np.roll(a, 5)
    same_as_py([x, y], [getattr(pt, name)(x, y)], [a, b])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pow_and_arctan2(same_as_py: Any, dtype: str) -> None:
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    a = np.array(EDGES, dtype=dtype)
    b = np.array(
        [0.0, -0.0, 2.0, 0.5, -1.0, 3.0, np.nan, np.inf, -np.inf, 1.0, 0.3, -2.5, 7.0] * 2,
        dtype=dtype,
    )
    rtol = 1e-15 if dtype == "float64" else 1e-6
    same_as_py([x, y], [x**y, pt.arctan2(x, y)], [a, b], rtol=rtol)


INT_BINARY = ["add", "sub", "mul", "int_div", "mod", "maximum", "minimum"]
INT_BINARY += ["bitwise_and", "bitwise_or", "bitwise_xor", "lt", "eq"]


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8"])
@pytest.mark.parametrize("name", INT_BINARY)
def test_integer_ops_at_the_extremes(same_as_py: Any, name: str, dtype: str) -> None:
    info = np.iinfo(dtype)
    values = sorted({info.min, info.min + 1, -7, -1, 0, 1, 2, 7, info.max - 1, info.max})
    a = np.array([v for v in values if info.min <= v <= info.max], dtype=dtype)
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    fn = getattr(pt, name, None) or getattr(pt, {"int_div": "floor_div"}.get(name, name))
    aa, bb = np.repeat(a, len(a)), np.tile(a, len(a))  # every pair, zero divisors included
    with np.errstate(all="ignore"):
        same_as_py([x, y], [fn(x, y)], [aa, bb])


def test_integer_pow_wraps_and_truncates_negative_exponents(same_as_py: Any) -> None:
    x, y = pt.vector("x", dtype="int32"), pt.vector("y", dtype="int32")
    a = np.array([2, -2, 3, 1, -1, 0, 7, 2, -1, 1, 5], dtype="int32")
    b = np.array([31, 31, 25, -3, -3, 0, 0, -1, -2, 1000, 3], dtype="int32")
    same_as_py([x, y], [x**y], [a, b])


@pytest.mark.parametrize(("src", "dst"), [("float64", "int32"), ("float32", "float64")])
def test_cast(same_as_py: Any, src: str, dst: str) -> None:
    x = pt.vector("x", dtype=src)
    values = np.array([0.0, -0.0, 1.5, -1.5, 2.5, 1e5, -7.9], dtype=src)
    same_as_py([x], [pt.cast(x, dst)], [values])


FLOAT_EDGES = [np.nan, np.inf, -np.inf, 1e20, -1e20, 3e9, -3e9, 70000.7, -70000.7, 300.5]
FLOAT_EDGES += [-300.5, 2.0**31, -(2.0**31), 2.0**32 + 5, 2.0**63, -(2.0**63), 2.0**64, -0.0]


@pytest.mark.parametrize("src", ["float64", "float32"])
@pytest.mark.parametrize(
    "dst", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
)
def test_float_to_int_casts_of_nan_and_out_of_range_values(
    same_as_py: Any, src: str, dst: str
) -> None:
    """NaN, infinities and values outside the target's range convert as on the py and c
    linkers (NumPy's result on this machine), not as XLA's saturating conversion."""
    x = pt.vector("x", dtype=src)
    rng = np.random.default_rng(7)
    spread = rng.standard_normal(400) * 10.0 ** rng.uniform(0, 21, 400)
    with np.errstate(all="ignore"):
        values = np.concatenate([FLOAT_EDGES, spread]).astype(src)
    same_as_py([x], [pt.cast(x, dst)], [values])


def test_switch_clip_and_logic(same_as_py: Any) -> None:
    x, y = pt.dvector("x"), pt.dvector("y")
    a = np.array(EDGES)
    b = np.roll(a, 3)
    outs = [pt.switch(x > y, x, y), pt.clip(x, -1.0, 2.0), pt.and_(x > 0, y < 0)]
    outs += [pt.or_(pt.isnan(x), pt.isinf(y)), pt.xor(x > 0, y > 0), pt.invert(x > 0)]
    same_as_py([x, y], outs, [a, b])


def test_empty_and_non_contiguous_inputs(same_as_py: Any) -> None:
    x, m = pt.dvector("x"), pt.dmatrix("m")
    base = np.arange(24.0).reshape(4, 6) - 11.5
    same_as_py([x, m], [pt.exp(x) * 2 - 1, m * 2 + m.T.T], [np.zeros(0), np.zeros((0, 3))])
    same_as_py([x, m], [x * 3 + 1, pt.abs(m) - m], [base[:, 0], base[::2, ::-3]])
    same_as_py([x, m], [x + m], [base[1, ::2], base[::2, ::2]])


def test_broadcasting_rule_on_unknown_lengths() -> None:
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    f, _ = compile_both([x, y], [x + y])
    with pytest.raises(ValueError, match="do not match on axis 0"):
        f(np.ones((1, 3)), np.ones((4, 3)))


def test_fused_composite_is_lowered() -> None:
    x, y = pt.fvector("x"), pt.fvector("y")
    out = pt.exp(x) * y + pt.log1p(pt.sqr(x)) - pt.sigmoid(y) / 3
    f, g = compile_both([x, y], [out], "fast_run")
    ops = [node.op for node in f.maker.fgraph.toposort()]
    assert any(isinstance(op, Elemwise) and isinstance(op.scalar_op, Composite) for op in ops)
    a = np.linspace(-3, 3, 17, dtype="float32")
    assert_same(f(a, a[::-1].copy())[0], g(a, a[::-1].copy())[0], 2e-6, "composite")


def test_special_functions_of_two_arguments(same_as_py: Any) -> None:
    k, x = pt.dvector("k"), pt.dvector("x")
    a = np.array([0.5, 1.0, 2.0, 3.5, 10.0])
    b = np.array([0.1, 1.0, 2.5, 3.5, 30.0])
    outs = [pt.gammainc(k, x), pt.gammaincc(k, x), pt.xlogy0(k, x)]
    same_as_py([k, x], outs, [a, b], rtol=1e-13)


def test_float_output_dtype_is_kept() -> None:
    x = pt.fvector("x")
    f = opweave.function([x], pt.exp(x) + 1, mode="JAX")
    assert f(np.ones(3, dtype="float32")).dtype == np.float32
