"""Special functions at the edges of their domains, on every linker, against SciPy.

Each function is evaluated at NaN, +-inf, +-0, tiny, large and negative arguments (and on
grids of such pairs for the functions of two arguments), in float32 and float64, by one
compiled function per linker (``py``, ``vm``, ``c``, ``cvm``). The values must be SciPy's
(the float32 ones: SciPy's float64 values at the float32 inputs, rounded): NaN exactly
where SciPy gives NaN, infinities of the same sign, finite values within a few units in
the last place (float32) or ``1e-9`` relative (float64). ``deg2rad`` and ``rad2deg``
keep the float dtype and give NumPy's values exactly. The default run compiles the ``py``,
``vm`` and ``c`` functions; ``OPWEAVE_RELIABILITY_LONG=1`` adds ``cvm`` (the same C code
under the VM, one module per node, which takes several seconds to compile).

Where SciPy's own algorithm gives up, the project keeps the accurate value and the case
is left out here: the Bessel functions past ``|x| = 1e9`` (SciPy reduces the phase
``x - pi/4`` in double precision, or answers NaN for a loss of precision) and ``iv`` at
subnormal ``x``, where SciPy underflows to 0. The inverses of the incomplete gamma
functions are compared on SciPy's documented domain (``a > 0``, ``0 <= y <= 1``, and the
ends ``y = 0, 1`` for every ``a >= 0``); elsewhere they are NaN.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt

sps = pytest.importorskip("scipy.special")

LONG = os.environ.get("OPWEAVE_RELIABILITY_LONG", "0") not in ("", "0")
LINKERS = ("py", "vm", "c", "cvm") if LONG else ("py", "vm", "c")
DTYPES = ("float32", "float64")
NAN, INF = np.nan, np.inf

#: Arguments of the functions of one variable.
X_UNARY = [
    NAN, INF, -INF, 0.0, -0.0, 1e-300, 1e-30, 1e-5, 0.5, 1.0, 2.0, 2.5, 10.0, 50.0, 170.0,
    200.0, 1e5, 1e30, 1e300, -1e-5, -0.5, -1.0, -2.0, -2.5, -50.0, -1e5, -1e30, -1e300,
]  # fmt: skip
#: Shape parameters of the incomplete gamma functions and their inverses.
K = [
    NAN, INF, -INF, 0.0, -0.0, 1e-300, 1e-10, 1e-5, 0.3, 0.5, 1.0, 2.5, 10.0, 50.0, 170.0,
    1e5, -0.5, -1.0,
]  # fmt: skip
#: Second arguments of the incomplete gamma functions.
X_GAMMA = [
    NAN, INF, -INF, 0.0, -0.0, 1e-300, 1e-30, 1e-5, 0.5, 1.0, 2.5, 10.0, 50.0, 200.0, 1e5,
    1e30, -1.0,
]  # fmt: skip
#: Probabilities given to the inverses.
Y = [NAN, INF, -INF, 0.0, -0.0, 1e-300, 1e-30, 0.1, 0.5, 0.9, 1.0 - 1e-7, 1.0, 1.5, -0.5]
#: Orders and arguments of the Bessel functions of two arguments.
V = [NAN, INF, -INF, 0.0, -0.0, 1e-10, 0.3, 0.5, 1.0, 1.5, 2.0, 2.5, 10.0, 50.0, -0.5, -1.0,
     -2.5]  # fmt: skip
X_BESSEL = [
    NAN, INF, -INF, 0.0, -0.0, 1e-30, 0.5, 1.0, 1.9, 2.0, 2.1, 2.5, 10.0, 50.0, 1e5,
    -0.5, -1.0, -2.5, -50.0, -1e5,
]  # fmt: skip

#: Angles given to deg2rad and rad2deg.
ANGLES = [NAN, INF, -INF, 0.0, -0.0, 1.0, -45.0, 90.5, 1e-30, 1e30, 3e38, -1e300]


#: Shape parameters and arguments of the incomplete beta function.
AB = [NAN, INF, -INF, 0.0, -0.0, 0.5, 1.0, 2.5, 1e5, -1.0]
X_BETA = [NAN, INF, -INF, 0.0, -0.0, 1e-300, 0.5, 1.0, 1.1, -0.1]

#: Points (a, b, y) of betaincinv.
BETAINCINV_POINTS = [
    (0.5, 1e-300, 0.5), (1.0, 1e-300, 0.5), (2.5, 1e-300, 0.5), (0.5, 1e-10, 0.9),
    (1e-300, 1e-10, 0.5), (2.0, 3.0, 0.25), (NAN, 1.0, 0.5), (1.0, 1.0, 1.5),
]  # fmt: skip


def _grid(*axes: list[float]) -> list[np.ndarray]:
    return [g.ravel() for g in np.meshgrid(*[np.array(a) for a in axes], indexing="ij")]


def _gamma_inverse_reference(fn: Callable[..., Any]) -> Callable[..., Any]:
    """SciPy's inverse on its documented domain, NaN outside it."""

    def reference(a: np.ndarray, y: np.ndarray) -> np.ndarray:
        inside = (y >= 0) & (y <= 1) & ((a > 0) | ((a >= 0) & ((y == 0) | (y == 1))))
        return np.where(inside, fn(a, y), NAN)

    return reference


def _without_huge_x(values: list[float]) -> list[float]:
    return [v for v in values if not abs(v) > 1e9 or np.isinf(v)]


@dataclass(frozen=True)
class Case:
    """One function: how to build it, SciPy's values, and its arguments."""

    name: str
    build: Callable[..., Any]
    reference: Callable[..., Any]
    args: tuple[np.ndarray, ...]
    #: Where SciPy's value is not the reference (``None``: everywhere it is).
    skip: Callable[..., Any] | None = None
    #: Whether the reference takes the float64 values of the inputs (else their own dtype).
    widen: bool = True
    #: Relative tolerance (``None``: a few units in the last place, or 1e-9 in float64).
    rtol: float | None = None


def _unary(name: str, build: Callable[..., Any], ref: Callable[..., Any], xs: list[float]) -> Case:
    return Case(name, build, ref, (np.array(xs),))


def _binary(
    name: str,
    build: Callable[..., Any],
    ref: Callable[..., Any],
    a: list[float],
    b: list[float],
    skip: Callable[..., Any] | None = None,
) -> Case:
    return Case(name, build, ref, tuple(_grid(a, b)), skip)


def _underflowed(regularized: Callable[..., Any]) -> Callable[..., Any]:
    """Where ``regularized`` underflows float64 (below its smallest normal number) at a
    finite nonzero ``x`` while ``gamma(k)`` is large: there SciPy's product with ``gamma``
    has lost its digits (or is 0), so it is no reference."""

    def skip(k: np.ndarray, x: np.ndarray) -> np.ndarray:
        small = np.abs(regularized(k, x)) < np.finfo(np.float64).tiny
        return small & (np.abs(sps.gamma(k)) > 1) & np.isfinite(x) & (x != 0)

    return skip


CASES = (
    _unary("gamma", pt.gamma, sps.gamma, X_UNARY),
    _unary("gammaln", pt.gammaln, sps.gammaln, X_UNARY),
    _unary("psi", pt.psi, sps.psi, X_UNARY),
    _unary("tri_gamma", pt.tri_gamma, lambda x: sps.polygamma(1, x), X_UNARY),
    _unary("erf", pt.erf, sps.erf, X_UNARY),
    _unary("erfc", pt.erfc, sps.erfc, X_UNARY),
    _unary("erfcx", pt.erfcx, sps.erfcx, X_UNARY),
    _unary("erfinv", pt.erfinv, sps.erfinv, X_UNARY),
    _unary("erfcinv", pt.erfcinv, sps.erfcinv, X_UNARY),
    _unary("ndtri_exp", pt.ndtri_exp, sps.ndtri_exp, X_UNARY),
    _unary("xlogx", pt.xlogx, lambda x: sps.xlogy(x, x), X_UNARY),
    _unary("i0", pt.i0, sps.i0, X_UNARY),
    _unary("i1", pt.i1, sps.i1, X_UNARY),
    _unary("j0", pt.j0, sps.j0, _without_huge_x(X_UNARY)),
    _unary("j1", pt.j1, sps.j1, _without_huge_x(X_UNARY)),
    _binary("gammainc", pt.gammainc, sps.gammainc, K, X_GAMMA),
    _binary("gammaincc", pt.gammaincc, sps.gammaincc, K, X_GAMMA),
    _binary(
        "gammal",
        pt.gammal,
        lambda k, x: sps.gamma(k) * sps.gammainc(k, x),
        K,
        X_GAMMA,
        skip=_underflowed(sps.gammainc),
    ),
    _binary(
        "gammau",
        pt.gammau,
        lambda k, x: sps.gamma(k) * sps.gammaincc(k, x),
        K,
        X_GAMMA,
        skip=_underflowed(sps.gammaincc),
    ),
    _binary("gammaincinv", pt.gammaincinv, _gamma_inverse_reference(sps.gammaincinv), K, Y),
    _binary("gammainccinv", pt.gammainccinv, _gamma_inverse_reference(sps.gammainccinv), K, Y),
    _binary("xlogy0", pt.xlogy0, sps.xlogy, X_GAMMA, X_GAMMA),
    _binary("iv", pt.iv, sps.iv, V, X_BESSEL),
    _binary("ive", pt.ive, sps.ive, V, X_BESSEL),
    _binary("jv", pt.jv, sps.jv, V, X_BESSEL),
    _binary("kve", pt.kve, sps.kve, V, [x for x in X_BESSEL if x != INF]),
    Case("betainc", pt.betainc, sps.betainc, tuple(_grid(AB, AB, X_BETA))),
    # tiny shape parameters, where the solution is near 1 (the Python backend once raised)
    Case(
        "betaincinv",
        pt.betaincinv,
        sps.betaincinv,
        tuple(np.array(v) for v in zip(*BETAINCINV_POINTS, strict=True)),
    ),
    Case("deg2rad", pt.deg2rad, np.deg2rad, (np.array(ANGLES),), widen=False, rtol=0.0),
    Case("rad2deg", pt.rad2deg, np.rad2deg, (np.array(ANGLES),), widen=False, rtol=0.0),
)


def _inputs(case: Case, dtype: str) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # 1e300 -> inf in float32
        return [a.astype(dtype) for a in case.args]


def _expected(case: Case, dtype: str) -> np.ndarray:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        args = _inputs(case, dtype)
        if case.widen:
            args = [a.astype(np.float64) for a in args]
        return np.asarray(case.reference(*args)).astype(dtype)


@pytest.fixture(scope="module")
def values() -> dict[str, dict[tuple[str, str], np.ndarray]]:
    """``{linker: {(case, dtype): values}}``: every case and dtype computed by one function
    per linker."""
    variables: list[Any] = []
    outputs: list[Any] = []
    arrays: list[np.ndarray] = []
    keys: list[tuple[str, str]] = []
    for dtype in DTYPES:
        for case in CASES:
            ins = [
                pt.vector(f"{case.name}_{k}_{dtype}", dtype=dtype) for k in range(len(case.args))
            ]
            variables += ins
            arrays += _inputs(case, dtype)
            outputs.append(case.build(*ins))
            keys.append((case.name, dtype))
    result = {}
    for linker in LINKERS:
        fn = opweave.function(variables, outputs, mode=opweave.Mode(linker=linker))
        result[linker] = dict(zip(keys, fn(*arrays), strict=True))
    return result


def _mismatches(case: Case, got: np.ndarray, dtype: str) -> list[str]:
    args = _inputs(case, dtype)
    g, w = got.astype(np.float64), _expected(case, dtype).astype(np.float64)
    rtol = 8 * np.finfo(got.dtype).eps if got.dtype == np.float32 else 1e-9
    tiny = np.finfo(got.dtype).tiny
    if case.rtol is not None:
        rtol, tiny = case.rtol, 0.0
    with np.errstate(invalid="ignore"):
        ok = (np.isnan(g) & np.isnan(w)) | (g == w)
        ok |= np.isfinite(g) & np.isfinite(w) & (np.abs(g - w) <= rtol * np.abs(w) + tiny)
        if case.skip is not None:
            ok |= case.skip(*[a.astype(np.float64) for a in args])
    return [
        f"{tuple(float(a[i]) for a in args)}: {g[i]!r}, SciPy {w[i]!r}" for i in np.flatnonzero(~ok)
    ]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_special_function_edges_match_scipy(
    values: dict[str, dict[tuple[str, str], np.ndarray]], case: Case, linker: str, dtype: str
) -> None:
    got = values[linker][case.name, dtype]
    assert got.dtype == np.dtype(dtype)
    bad = _mismatches(case, got, dtype)
    assert not bad, f"{case.name} on {linker} in {dtype}: " + "; ".join(bad[:10])


def _value_at(
    values: dict[str, dict[tuple[str, str], np.ndarray]],
    linker: str,
    name: str,
    dtype: str,
    *point: float,
) -> float:
    """The value of case ``name`` at the grid point ``point`` in ``dtype`` on ``linker``."""
    case = next(c for c in CASES if c.name == name)
    args = _inputs(case, dtype)
    where = np.logical_and.reduce([a == np.asarray(p, dtype=dtype) for a, p in zip(args, point)])
    (index,) = np.flatnonzero(where)
    return float(values[linker][name, dtype][index])


@pytest.mark.parametrize("linker", LINKERS)
def test_unregularized_incomplete_gamma_does_not_overflow_in_float32(
    values: dict[str, dict[tuple[str, str], np.ndarray]], linker: str
) -> None:
    """``gamma(50)`` (6.1e62) overflows float32; ``gammal(50, 0.5)``, ``gammal(50, 2.5)`` and
    ``gammau(50, inf)`` do not."""
    for name, x, regularized in (
        ("gammal", 0.5, sps.gammainc),
        ("gammal", 2.5, sps.gammainc),
        ("gammau", INF, sps.gammaincc),
    ):
        got = _value_at(values, linker, name, "float32", 50.0, x)
        np.testing.assert_allclose(got, sps.gamma(50.0) * regularized(50.0, x), rtol=1e-6)
    assert _value_at(values, linker, "gammau", "float32", 50.0, 0.5) == INF


def test_unregularized_incomplete_gamma_keeps_its_dtype_and_gradient() -> None:
    k, x = pt.vector("k", dtype="float32"), pt.vector("x", dtype="float32")
    lower = pt.gammal(k, x)
    assert lower.dtype == "float32" and pt.gammau(k, x).dtype == "float32"
    assert pt.gammal(pt.vector(dtype="int8"), pt.vector(dtype="int8")).dtype == "float32"
    assert pt.gammal(pt.vector(dtype="float64"), x).dtype == "float64"
    grad = opweave.grad(pt.sum(lower), x)
    assert grad.dtype == "float32"
    fn = opweave.function([k, x], grad)
    kv, xv = np.array([3.0, 50.0], dtype="float32"), np.array([2.0, 0.5], dtype="float32")
    k64, x64 = kv.astype(np.float64), xv.astype(np.float64)
    np.testing.assert_allclose(fn(kv, xv), x64 ** (k64 - 1) * np.exp(-x64), rtol=1e-5)


@pytest.mark.parametrize("build", [pt.deg2rad, pt.rad2deg], ids=["deg2rad", "rad2deg"])
def test_angle_conversions_of_other_dtypes(build: Callable[..., Any]) -> None:
    # float16 as NumPy computes it (in float32, rounded); integers widen like exp's inputs
    reference = {pt.deg2rad: np.deg2rad, pt.rad2deg: np.rad2deg}[build]
    h = pt.vector("h", dtype="float16")
    half = np.array([0.0, 1.0, -45.0, 90.5, 300.0, 60000.0, -np.inf], dtype="float16")
    got = opweave.function([h], build(h), mode=opweave.Mode(linker="py"))(half)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, reference(half), strict=True)
    assert build(pt.vector(dtype="float32")).dtype == "float32"
    assert build(pt.vector(dtype="int8")).dtype == "float32"
    assert build(pt.vector(dtype="int64")).dtype == "float64"
    assert build(pt.vector(dtype="complex64")).dtype == "complex64"
