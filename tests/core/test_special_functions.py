"""The special functions: scalar Ops of ``opweave.scalar.math`` and their elementwise
tensor versions in ``opweave.tensor.special``.

Values are checked against identities and known constants (``psi(1) = -euler_gamma``,
``polygamma(2, 1) = -2 zeta(3)``, ``gammainc(1, x) = 1 - exp(-x)`` ...) and against the
:mod:`math` module, over dtypes and edge cases (poles, infinities, NaN, the ends of the
domain); gradients with finite differences. The Python backend is always checked, the C
one (``cvm``, the functions inside fused elementwise loops) when installed.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, grad, verify_grad
from opweave.graph.basic import Variable
from opweave.tensor import special as sp
from opweave.tensor.elemwise import Elemwise

RNG = np.random.default_rng(5)
EULER = 0.5772156649015329
APERY = 1.2020569031595942  # zeta(3)


def linkers() -> list[str]:
    """``py``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py"]
    return ["py", "cvm"]


LINKERS = linkers()


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, linker: str = "py") -> Any:
    mode = Mode(linker=linker)  # the default rewrites: elementwise graphs are fused
    fn = opweave.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")
    return fn(*values)


def values(fn: Callable[..., Any], *arrays: Any, linker: str = "py") -> Any:
    """``fn`` applied to float64 vectors holding ``arrays``."""
    arrays = [np.asarray(a, dtype="float64") for a in arrays]
    xs = [ot.dvector(f"x{k}") for k in range(len(arrays))]
    return run(xs, fn(*xs), *arrays, linker=linker)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray]) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=Mode(linker="py"))


def close(got: Any, expected: Any, rtol: float = 1e-13, atol: float = 1e-15) -> None:
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)


def same(got: Any, expected: Any) -> None:
    """Equal, NaNs included, and infinities with their signs."""
    np.testing.assert_array_equal(got, np.asarray(expected, dtype="float64"))


# ====================================================================== gamma functions


@pytest.mark.parametrize("linker", LINKERS)
def test_gammaln_and_gamma(linker: str) -> None:
    n = np.arange(1.0, 25.0)
    close(
        values(sp.gammaln, n, linker=linker),
        [math.log(float(math.factorial(int(k) - 1))) for k in n],
    )
    close(values(sp.gamma, n, linker=linker), [float(math.factorial(int(k) - 1)) for k in n])
    x = np.concatenate([RNG.uniform(0.01, 60, 50), -RNG.uniform(0.01, 30, 50) - 0.5])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    close(values(sp.gammaln, x, linker=linker), [math.lgamma(v) for v in x], rtol=1e-11, atol=1e-14)
    close(values(sp.gamma, x, linker=linker), [math.gamma(v) for v in x], rtol=1e-12)
    close(values(sp.gammaln, [0.5], linker=linker), [math.log(math.sqrt(math.pi))])
    same(
        values(sp.gammaln, [0.0, -0.0, -3.0, np.inf, np.nan], linker=linker),
        [np.inf] * 4 + [np.nan],
    )
    same(
        values(sp.gamma, [0.0, -0.0, -3.0, -np.inf, 200.0, np.nan], linker=linker),
        [np.inf, -np.inf, np.nan, np.nan, np.inf, np.nan],
    )
    close(values(sp.factorial, [0, 5, 10], linker=linker), [1, 120, 3628800])
    close(values(sp.poch, [2.5], [3.0], linker=linker), [2.5 * 3.5 * 4.5])


@pytest.mark.parametrize("linker", LINKERS)
def test_digamma(linker: str) -> None:
    close(
        values(sp.psi, [1.0, 0.5, 2.0], linker=linker),
        [-EULER, -EULER - 2 * math.log(2), 1 - EULER],
    )
    assert sp.digamma is sp.psi
    x = np.concatenate([RNG.uniform(1e-3, 50, 100), RNG.uniform(-20, -1e-3, 100), [1e-300, 1e10]])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    psi_x, psi_x1 = values(sp.psi, x, linker=linker), values(sp.psi, x + 1, linker=linker)
    close(psi_x1, psi_x + 1 / x, rtol=1e-12, atol=1e-12)  # psi(x + 1) = psi(x) + 1 / x
    # Reflection: psi(1 - x) - psi(x) = pi / tan(pi x).
    close(
        values(sp.psi, 1 - x, linker=linker) - psi_x,
        np.pi / np.tan(np.pi * x),
        rtol=1e-9,
        atol=1e-9,
    )
    close(values(sp.psi, [1e-300], linker=linker), [-1e300])
    close(values(sp.psi, [1e10], linker=linker), [math.log(1e10) - 0.5e-10])
    same(
        values(sp.psi, [0.0, -0.0, -2.0, np.inf, -np.inf, np.nan], linker=linker),
        [-np.inf, np.inf, np.nan, np.inf, np.nan, np.nan],
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_trigamma_and_polygamma(linker: str) -> None:
    close(values(sp.tri_gamma, [1.0, 0.5], linker=linker), [np.pi**2 / 6, np.pi**2 / 2])
    x = np.concatenate([RNG.uniform(1e-2, 40, 60), RNG.uniform(-10, -1e-2, 60)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    tri = values(sp.tri_gamma, x, linker=linker)
    close(tri, values(sp.tri_gamma, x + 1, linker=linker) + 1 / x**2, rtol=1e-12)
    same(
        values(sp.tri_gamma, [0.0, -4.0, np.inf, np.nan], linker=linker),
        [np.inf, np.inf, 0.0, np.nan],
    )
    n, v = ot.lscalar("n"), ot.dvector("v")
    pg = sp.polygamma(n, v)
    assert pg.dtype == "float64"

    def polygamma(order: int, at: Any) -> Any:
        return run([n, v], pg, order, np.asarray(at, dtype="float64"), linker=linker)

    close(polygamma(2, [1.0]), [-2 * APERY])
    close(polygamma(3, [1.0]), [np.pi**4 / 15])
    close(polygamma(0, x), values(sp.psi, x, linker=linker))
    close(polygamma(1, x), tri)
    positive = x[x > 0]
    for order in (2, 3, 5):
        step = (-1) ** order * math.factorial(order) / positive ** (order + 1)
        close(polygamma(order, positive + 1) - polygamma(order, positive), step, rtol=1e-10)
    # psi''(1/2) = -14 zeta(3), and the recurrence below 0.
    close(
        polygamma(2, [0.5, -0.5, -1.5]), [-14 * APERY, 16 - 14 * APERY, 16 + 16 / 27 - 14 * APERY]
    )
    same(polygamma(2, [0.0, -1.0, np.inf]), [-np.inf, -np.inf, 0.0])
    same(polygamma(-1, [1.0]), [np.nan])


# ====================================================================== exponentials, logs


@pytest.mark.parametrize("linker", LINKERS)
def test_log1mexp_xlogx_xlogy0(linker: str) -> None:
    x = -RNG.uniform(1e-3, 30, 100)
    close(values(sp.log1mexp, x, linker=linker), [math.log(1 - math.exp(v)) for v in x], rtol=1e-12)
    close(values(sp.log1mexp, [-1e-20, -50.0], linker=linker), [math.log(1e-20), -math.exp(-50)])
    same(
        values(sp.log1mexp, [0.0, 1.0, -np.inf, np.nan], linker=linker),
        [-np.inf, np.nan, 0.0, np.nan],
    )
    p = RNG.uniform(0, 5, 50)
    close(values(sp.xlogx, p, linker=linker), p * np.log(p), rtol=1e-14)
    same(values(sp.xlogx, [0.0, -1.0], linker=linker), [0.0, np.nan])
    q = RNG.uniform(0, 5, 50)
    close(values(sp.xlogy0, p, q, linker=linker), p * np.log(q), rtol=1e-14)
    same(values(sp.xlogy0, [0.0, 0.0, 2.0], [0.0, -1.0, 0.0], linker=linker), [0.0, 0.0, -np.inf])
    assert sp.xlogy is sp.xlogy0
    close(values(sp.xlog1py, [0.0, 2.0], [-1.0, 0.5], linker=linker), [0.0, 2 * math.log1p(0.5)])
    z = RNG.uniform(-30, 30, 50)
    close(values(sp.log1pexp, z, linker=linker), np.logaddexp(0, z), rtol=1e-14)
    prob = RNG.uniform(1e-3, 1 - 1e-3, 50)
    close(values(sp.logit, prob, linker=linker), np.log(prob / (1 - prob)), rtol=1e-14)
    close(values(lambda t: ot.expit(sp.logit(t)), prob, linker=linker), prob, rtol=1e-13)


@pytest.mark.parametrize("linker", LINKERS)
def test_betaln_and_beta(linker: str) -> None:
    a, b = RNG.uniform(0.1, 30, 40), RNG.uniform(0.1, 30, 40)
    expected = [math.lgamma(u) + math.lgamma(v) - math.lgamma(u + v) for u, v in zip(a, b)]
    close(values(sp.betaln, a, b, linker=linker), expected, rtol=1e-10, atol=1e-12)
    close(values(sp.beta, [2.0, 0.5], [3.0, 0.5], linker=linker), [1 / 12, math.pi])


# ====================================================================== error functions


@pytest.mark.parametrize("linker", LINKERS)
def test_erfinv(linker: str) -> None:
    u = np.concatenate([RNG.uniform(-1, 1, 200), [0.5, -0.99, 1e-300, 0.9999999]])
    y = values(sp.erfinv, u, linker=linker)
    close([math.erf(v) for v in y], u, rtol=2e-15, atol=1e-300)
    tail = 10.0 ** -np.arange(2, 16)  # 1 - tail is exact: erfc(erfinv(1 - d)) = d
    close([math.erfc(v) for v in values(sp.erfinv, 1 - tail, linker=linker)], tail, rtol=1e-13)
    same(
        values(sp.erfinv, [1.0, -1.0, 1.5, -2.0, 0.0, np.nan], linker=linker),
        [np.inf, -np.inf, np.nan, np.nan, 0.0, np.nan],
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_erfcx(linker: str) -> None:
    x = RNG.uniform(-5, 5, 100)
    close(
        values(sp.erfcx, x, linker=linker), [math.exp(v * v) * math.erfc(v) for v in x], rtol=1e-12
    )
    big = np.array([30.0, 100.0, 1e10])
    # The asymptotic series 1 / (x sqrt(pi)) * sum((-1)**k (2k - 1)!! / (2 x**2)**k).
    terms = [(-1) ** k * math.prod(range(1, 2 * k, 2)) / (2 * big**2) ** k for k in range(8)]
    series = sum(terms) / (big * math.sqrt(math.pi))
    close(values(sp.erfcx, big, linker=linker), series, rtol=1e-9)
    same(
        values(sp.erfcx, [0.0, np.inf, -np.inf, -30.0, np.nan], linker=linker),
        [1.0, 0.0, np.inf, np.inf, np.nan],
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_gammainc_and_gammaincc(linker: str) -> None:
    x = np.concatenate([RNG.uniform(0, 40, 100), [1e-300, 0.5, 1.0, 2.0]])
    ones = np.ones_like(x)
    close(values(sp.gammainc, ones, x, linker=linker), -np.expm1(-x), rtol=1e-13, atol=1e-16)
    close(values(sp.gammaincc, ones, x, linker=linker), np.exp(-x), rtol=1e-12, atol=1e-300)
    close(
        values(sp.gammainc, 0.5 * ones, x, linker=linker),
        [math.erf(math.sqrt(v)) for v in x],
        rtol=1e-12,
    )
    for k in (3, 7, 20):
        q = np.exp(-x) * sum(x**i / math.factorial(i) for i in range(k))
        close(values(sp.gammaincc, k * ones, x, linker=linker), q, rtol=1e-11, atol=1e-300)
        p = values(sp.gammainc, k * ones, x, linker=linker)
        close(p + values(sp.gammaincc, k * ones, x, linker=linker), ones, rtol=1e-14)
    k_edge = [0.0, 0.0, 1.0, 1.0, -1.0, 1.0, np.inf, 2.0]
    x_edge = [0.0, 1.0, 0.0, np.inf, 1.0, -1.0, 1.0, np.nan]
    same(
        values(sp.gammainc, k_edge, x_edge, linker=linker),
        [np.nan, 1, 0, 1, np.nan, np.nan, 0, np.nan],
    )
    same(
        values(sp.gammaincc, k_edge, x_edge, linker=linker),
        [np.nan, 0, 1, 0, np.nan, np.nan, 1, np.nan],
    )
    close(values(sp.gammau, [1.0], [2.0], linker=linker), [math.exp(-2)])
    close(values(sp.gammal, [1.0], [2.0], linker=linker), [1 - math.exp(-2)])


# ====================================================================== dtypes, graphs


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("dtype", "out"),
    [("int8", "float32"), ("int32", "float64"), ("float32", "float32"), ("bool", "float32")],
)
def test_discrete_and_float32_inputs(linker: str, dtype: str, out: str) -> None:
    x = ot.TensorType(dtype, shape=(None,))("x")
    xv = np.array([1, 2, 3, 1], dtype=dtype)
    for fn, ref in [
        (sp.gammaln, math.lgamma),
        (sp.psi, lambda v: values(sp.psi, [v])[0]),
        (sp.xlogx, lambda v: v * math.log(v)),
        (sp.erfcx, lambda v: math.exp(v * v) * math.erfc(v)),
    ]:
        got = run([x], fn(x), xv, linker=linker)
        assert got.dtype == out and fn(x).dtype == out
        expected = np.array([ref(float(v)) for v in xv]).astype(out)
        np.testing.assert_allclose(got, expected, rtol=1e-6 if out == "float32" else 1e-12)


def test_scalar_ops_types_and_errors() -> None:
    assert isinstance(sp.gammaln, Elemwise) and sp.gammaln.scalar_op is ps.gammaln
    assert sp.gammaln == Elemwise(ps.gammaln)
    for op in (
        ps.gamma,
        ps.gammaln,
        ps.psi,
        ps.tri_gamma,
        ps.log1mexp,
        ps.xlogx,
        ps.erfinv,
        ps.erfcx,
    ):
        assert type(op) in ps.SCALAR_OP_CLASSES
        assert op(ps.float32("f")).type == ps.float32
        assert op(ps.int64("i")).type == ps.float64
    assert ps.polygamma(ps.int8("n"), ps.float32("f")).type == ps.float32
    with pytest.raises(TypeError, match="order n of polygamma must be an integer"):
        ps.polygamma(ps.float64("n"), ps.float64("x"))
    with pytest.raises(TypeError, match="complex"):
        ps.gammaln(ps.complex128("z"))
    n, v = ot.lscalar("n"), ot.dvector("v")
    with pytest.raises(NullTypeGradError, match="order of polygamma is an integer"):
        grad(sp.polygamma(n, v).sum(), n)
    k = ot.dvector("k")
    # the gradient in the shape k is the elementwise ``gammainc_grad`` (no longer missing)
    fk = opweave.function([k, v], grad(sp.gammainc(k, v).sum(), k))
    assert any("gammainc_der" in str(node.op) for node in fk.maker.fgraph.toposort())


def test_scalar_graphs_compute_on_scalars() -> None:
    x = ps.float64("x")
    fn = opweave.function([x], [ps.gammaln(x), ps.psi(x), ps.erfinv(ps.erf(x))])
    got = fn(0.3)
    close(got, [math.lgamma(0.3), values(sp.psi, [0.3])[0], 0.3], rtol=1e-14)


# ====================================================================== gradients


def test_gradients_match_finite_differences() -> None:
    pos = RNG.uniform(0.5, 4.0, size=(3, 4))
    verify(sp.gammaln, [pos])
    verify(sp.gamma, [pos])
    verify(sp.psi, [pos])
    verify(sp.tri_gamma, [pos])
    verify(lambda a: sp.polygamma(2, a), [pos])
    verify(sp.xlogx, [pos])
    verify(sp.xlogy0, [pos, pos[::-1]])
    verify(sp.erfcx, [RNG.uniform(-2.0, 5.0, size=(3, 4))])
    verify(sp.erfinv, [RNG.uniform(-0.9, 0.9, size=(3, 4))])
    verify(sp.log1mexp, [-pos])
    verify(lambda a: sp.gammainc(2.5, a), [pos])
    verify(lambda a: sp.gammaincc(0.7, a), [pos])
    verify(sp.betaln, [pos, pos.T.copy().reshape(3, 4)])
    verify(sp.logit, [RNG.uniform(0.1, 0.9, size=(3, 4))])


def test_log1mexp_gradient_at_zero_is_minus_infinity() -> None:
    x = ot.dvector("x")
    g = run([x], grad(sp.log1mexp(x).sum(), x), np.array([0.0, -1.0]))
    assert g[0] == -np.inf
    close(g[1:], [-1 / math.expm1(1.0)])


def test_special_functions_fuse_into_one_loop() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = sp.gammaln(x) + sp.psi(y) * sp.xlogy0(x, y) - sp.log1mexp(-x)
    fn = opweave.function([x, y], out)
    nodes = fn.maker.fgraph.toposort()
    assert len(nodes) == 1 and isinstance(nodes[0].op, Elemwise)
    xv, yv = RNG.uniform(0.5, 3, 20), RNG.uniform(0.5, 3, 20)
    expected = (
        values(sp.gammaln, xv) + values(sp.psi, yv) * xv * np.log(yv) - np.log(-np.expm1(-xv))
    )
    close(fn(xv, yv), expected, rtol=1e-13)
