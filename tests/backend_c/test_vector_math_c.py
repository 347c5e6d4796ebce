"""Vectorised math calls (glibc's libmvec) in C loops: used where available, within 4 ulp,
IEEE special values unchanged, and off on request."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave_c.vector_math import vector_math_code

FUNCTIONS = ["exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tanh", "sinh"]


def _vector_math_available() -> bool:
    with opweave.config.change_flags(c__vector_math=True):
        return vector_math_code() is not None


needs_libmvec = pytest.mark.skipif(
    not _vector_math_available(),
    reason="needs x86-64 Linux with glibc's libmvec and a processor with AVX2 and FMA",
)


def _values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 1.0, -1.0, 700.0, -740.0]
    wide = rng.standard_normal(4093) * 30.0
    return np.concatenate([special, wide, rng.uniform(0.0, 3.0, 4093)]).astype(dtype)


def _compile(dtype: str, compiledir: Path):
    x = ot.vector("x", dtype=dtype)
    outs = [getattr(ot, name)(x) for name in FUNCTIONS]
    with opweave.config.change_flags(compiledir=str(compiledir)):
        return opweave.function([x], outs, mode=Mode(linker="c", optimizer=None))


def test_off_means_no_declarations_and_no_flags() -> None:
    with opweave.config.change_flags(c__vector_math=False):
        assert vector_math_code() is None


@needs_libmvec
def test_declarations_and_flags_when_available() -> None:
    with opweave.config.change_flags(c__vector_math=True):
        code = vector_math_code()
    assert code is not None
    assert "#pragma omp declare simd notinbranch\nextern double exp(double);" in code.support_code
    assert "extern float tanhf(float);" in code.support_code
    assert {"-mavx2", "-mfma", "-fopenmp-simd"} <= set(code.compile_args)
    assert code.libraries == ("mvec",)
    assert code.level in ("avx2", "avx512")
    assert ("-mavx512f" in code.compile_args) == (code.level == "avx512")


def _main_loop_symbol(name: str, dtype: str) -> bytes:
    """The libmvec variant that the main loop of a ``name`` over ``dtype`` calls at this
    machine's level: ``_ZGVeN8v_exp`` with AVX-512, ``_ZGVdN4v_exp`` with AVX2..."""
    code = vector_math_code()
    assert code is not None
    letter, widths = ("e", (8, 16)) if code.level == "avx512" else ("d", (4, 8))
    suffix = "f" if dtype == "float32" else ""
    width = widths[1] if dtype == "float32" else widths[0]
    return f"_ZGV{letter}N{width}v_{name}{suffix}".encode()


@needs_libmvec
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_loops_call_the_vector_functions_within_4_ulp(dtype: str, tmp_path: Path) -> None:
    with opweave.config.change_flags(c__vector_math=True):
        f = _compile(dtype, tmp_path)
        symbol = _main_loop_symbol("exp", dtype)
    modules = [p.read_bytes() for p in tmp_path.rglob("*.so")]
    assert any(symbol in m for m in modules), f"exp not vectorised ({symbol!r} not called)"
    x = _values(dtype)
    with np.errstate(all="ignore"):
        for name, got in zip(FUNCTIONS, f(x), strict=True):
            expected = getattr(np, name)(x)
            assert got.dtype == np.dtype(dtype)
            finite = np.isfinite(expected)
            # IEEE special results (NaN, infinities, zeros and their signs) are exact.
            np.testing.assert_array_equal(got[~finite], expected[~finite], err_msg=name)
            zeros = expected == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]))
            # float32 results are computed in float32 by both, through different algorithms.
            np.testing.assert_array_max_ulp(got[finite], expected[finite], maxulp=4)


def test_off_gives_the_scalar_library_results(tmp_path: Path) -> None:
    """With vector math off, float64 loops give the C library's scalar results to the last
    bit (those of Python's ``math`` module)."""
    with opweave.config.change_flags(c__vector_math=False):
        f = _compile("float64", tmp_path)
    assert not any(b"_ZGV" in p.read_bytes() for p in tmp_path.rglob("*.so"))
    x = _values("float64")[11:]  # finite arguments: math raises where C returns inf/nan
    x = x[(x > 0.0) & (x < 700.0)]
    for name, got in zip(FUNCTIONS, f(x), strict=True):
        expected = np.array([getattr(math, name)(v) for v in x.tolist()])
        np.testing.assert_array_equal(got, expected, err_msg=name)
