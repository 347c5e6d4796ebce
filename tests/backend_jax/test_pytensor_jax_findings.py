"""The ``jax`` linker on the graphs of PyTensor's JAX-backend tests: run-time broadcasting
refused as on the ``py`` linker, whole-array updates XLA's CPU compiler aborted on, boolean
masks known only when called, and the random variables PyTensor's JAX backend draws.

Values are compared with NumPy/SciPy and with the ``py`` linker.
"""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest
import scipy.stats as st  # type: ignore[import-untyped]
from scipy import special

import opweave
import opweave.tensor as pt
from opweave.tensor.random import basic as rb


def _fn(inputs: list[Any], outputs: Any, linker: str) -> Any:
    mode = opweave.Mode(linker=linker)
    return opweave.function(inputs, outputs, mode=mode, on_unused_input="ignore")


# -- run-time broadcasting: refused as on the py linker ------------------------------------


def _both_refuse(inputs: list[Any], output: Any, args: list[Any], match: str) -> None:
    for linker in ("py", "jax"):
        with pytest.raises(ValueError, match=match):
            _fn(inputs, output, linker)(*args)


def test_alloc_refuses_run_time_broadcasting_and_broadcasts_static_ones() -> None:
    x = pt.vector("x", shape=(None,))
    out = pt.alloc(x, 5, 3)
    _both_refuse([x], out, [np.zeros(1)], "run-time broadcasting is not allowed")
    value = np.arange(3.0)
    np.testing.assert_array_equal(_fn([x], out, "jax")(value), np.broadcast_to(value, (5, 3)))
    one = pt.alloc(pt.specify_shape(x, (1,)), 5, 3)
    np.testing.assert_array_equal(_fn([x], one, "jax")(np.ones(1)), np.ones((5, 3)))


def test_matmul_refuses_batch_lengths_that_only_broadcast_at_run_time() -> None:
    a, b = pt.tensor("a", shape=(None, 3, 5)), pt.tensor("b", shape=(None, 5, 3))
    _both_refuse([a, b], a @ b, [np.ones((1, 3, 5)), np.ones((2, 5, 3))], "batch shapes")
    rng = np.random.default_rng(0)
    av, bv = rng.normal(size=(2, 3, 5)), rng.normal(size=(2, 5, 3))
    np.testing.assert_allclose(_fn([a, b], a @ b, "jax")(av, bv), np.matmul(av, bv), rtol=1e-12)
    c = pt.tensor("c", shape=(1, 3, 5))
    cv = rng.normal(size=(1, 3, 5))
    np.testing.assert_allclose(_fn([c, b], c @ b, "jax")(cv, bv), np.matmul(cv, bv), rtol=1e-12)


@pytest.mark.parametrize("set_", [True, False], ids=["set", "inc"])
@pytest.mark.parametrize("form", ["basic", "advanced1", "advanced"])
def test_subtensor_updates_refuse_run_time_broadcasting(set_: bool, form: str) -> None:
    x = pt.matrix("x", shape=(None, None))
    y = pt.tensor("y", shape=(None,) * (1 if form == "advanced" else 2))
    target = {
        "basic": x[1:4],
        "advanced1": x[[0, 2, 3]],
        "advanced": x[np.array([0, 2, 3]), np.array([0, 1, 1])],
    }[form]
    update = pt.set_subtensor if set_ else pt.inc_subtensor
    out = update(target, y)
    small = np.ones((1,) * y.type.ndim)
    _both_refuse([x, y], out, [np.zeros((5, 3)), small], "run-time broadcasting is not allowed")


def test_advanced_inc_subtensor1_still_broadcasts_static_ones() -> None:
    x, y = pt.matrix("x"), pt.tensor("y", shape=(1, None))
    out = pt.inc_subtensor(x[[0, 2, 2]], y)
    xv, yv = np.zeros((4, 3)), np.arange(3.0).reshape(1, 3)
    want = xv.copy()
    np.add.at(want, [0, 2, 2], yv)
    np.testing.assert_array_equal(_fn([x, y], out, "jax")(xv, yv), want)


# -- whole-array updates followed by a reversal ---------------------------------------------

_ABORTING = """
import numpy as np
import opweave
import opweave.tensor as pt

mode = opweave.Mode(linker="jax")
x = pt.dscalar("x")
xs = opweave.scan(lambda prev: prev**2, outputs_info=[x], n_steps=4, return_updates=False)
g = opweave.grad(xs[-1], x)
gg = opweave.grad(g, x)
print(*opweave.function([x], [xs[-1], g, gg], mode=mode)(0.95))
v = pt.dvector("v")
outs = [pt.inc_subtensor(pt.zeros(4)[:], v)[::-1], pt.set_subtensor(pt.zeros(4)[0:4], v)[::-1]]
for out in opweave.function([v], outs, mode=mode)(np.arange(4.0)):
    print(*out)
"""


def test_gradients_of_a_scan_compile_where_xla_aborted() -> None:
    # XLA's CPU compiler aborts the process (``Invalid binary instruction opcode map``) on
    # ``zeros(4).at[:].add(u)[::-1]``, which the second derivative of a scan made: run in a
    # process of its own.
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_ABORTING)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if not line.startswith("opweave:")]
    values, added, set_ = ([float(t) for t in line.split()] for line in lines[-3:])
    np.testing.assert_allclose(values, [0.95**16, 16 * 0.95**15, 240 * 0.95**14], rtol=1e-12)
    np.testing.assert_array_equal(added, np.arange(4.0)[::-1])
    np.testing.assert_array_equal(set_, np.arange(4.0)[::-1])


_INDEXES = {
    "slice": lambda t, i: t[1:3],
    "reversed": lambda t, i: t[::-1],
    "reversed-int": lambda t, i: t[:, ::-1, 1],
    "negative-int": lambda t, i: t[-1, 1:4],
    "variable-int": lambda t, i: t[1:, i, ::-1],
    "step-2": lambda t, i: t[::2, 1],
    "reversed-bounds": lambda t, i: t[-1:-5:-1, 2:],
    "empty": lambda t, i: t[2:2],
}


@pytest.mark.parametrize("set_", [True, False], ids=["set", "inc"])
@pytest.mark.parametrize("name", list(_INDEXES))
def test_basic_updates_match_numpy(name: str, set_: bool) -> None:
    x, i = pt.tensor3("x"), pt.iscalar("i")
    rng = np.random.default_rng(1)
    xv = rng.normal(size=(4, 5, 3))
    region = _INDEXES[name]
    y = pt.tensor("y", shape=(None,) * region(x, i).type.ndim)
    update = pt.set_subtensor if set_ else pt.inc_subtensor
    jax_fn = _fn([x, y, i], update(region(x, i), y), "jax")
    py_fn = _fn([x, y, i], update(region(x, i), y), "py")
    for iv in (1, -2):
        want = xv.copy()
        yv = rng.normal(size=region(want, iv).shape)
        if set_:
            region(want, iv)[...] = yv
        else:
            region(want, iv)[...] += yv
        got = jax_fn(xv, yv, iv)
        np.testing.assert_allclose(got, want, rtol=1e-15)
        np.testing.assert_allclose(got, py_fn(xv, yv, iv), rtol=1e-15)


# -- boolean masks known only when the function is called ----------------------------------


@pytest.mark.parametrize("set_", [True, False], ids=["set", "inc"])
def test_boolean_mask_update_with_a_scalar_value(set_: bool) -> None:
    x, x3 = pt.matrix("x"), pt.tensor3("x3")
    rng = np.random.default_rng(2)
    xv, x3v = rng.normal(size=(4, 5)), rng.normal(size=(4, 5, 2))
    update = pt.set_subtensor if set_ else pt.inc_subtensor
    for var, value, mask_of in ((x, xv, lambda t: t > 0), (x3, x3v, lambda t: t[:, :, 0] > 0)):
        out = update(var[mask_of(var)], 1.5)
        want = value.copy()
        if set_:
            want[mask_of(value)] = 1.5
        else:
            want[mask_of(value)] += 1.5
        got = _fn([var], out, "jax")(value)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, _fn([var], out, "py")(value))


# -- complex powers ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_zero_to_a_power_of_positive_real_part(dtype: str) -> None:
    # NumPy: 0 ** z is 0 for Re(z) > 0, NaN for other non-zero z, 1 for z = 0; XLA gave NaN
    # for every z that is not real.
    x, y = pt.vector("x", dtype=dtype), pt.vector("y", dtype=dtype)
    xs = np.array([0, 0, 0, 0, 0, 0, 1 + 1j], dtype)
    ys = np.array([0, 2, 0.3 - 1.2j, -0.3 + 1j, 1j, 1e-3 + 5j, 0.5j], dtype)
    with np.errstate(invalid="ignore"):
        power = np.power(xs, ys)
    # alone, and fused with other scalar Ops into a Composite
    for out, want in ((x**y, power), (pt.mul(pt.exp(x**y), 2), np.exp(power) * 2)):
        got = _fn([x, y], out, "jax")(xs, ys)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(got, want.astype(dtype), rtol=1e-6)
        np.testing.assert_allclose(got, _fn([x, y], out, "py")(xs, ys), rtol=1e-6)


# -- special functions ------------------------------------------------------------------------


def test_upper_incomplete_gamma_at_small_shapes() -> None:
    # Q(a, x) is about a * E1(x) for a small shape: XLA's 1 - P lost every digit of it (and
    # went below zero: Q(1e-300, 0.5) = -2.4e-14), and gammau = Q * gamma(a) with it.
    k, x = pt.dvector("k"), pt.dvector("x")
    ks = np.array([1e-300, 1e-20, 1e-10, 1e-5, 5e-4, 1e-300, 1e-8, 0.3, 1e-6])
    xs = np.array([0.5, 0.5, 0.5, 0.9, 1e-3, 30.0, 0.0, 0.5, 1.0000005])
    outs = [pt.gammaincc(k, x), pt.gammau(k, x), pt.gammainc(k, x)]
    got = _fn([k, x], outs, "jax")(ks, xs)
    want = [special.gammaincc(ks, xs), special.gammaincc(ks, xs) * special.gamma(ks)]
    want.append(special.gammainc(ks, xs))
    for g, w, p in zip(got, want, _fn([k, x], outs, "py")(ks, xs), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=0)
        np.testing.assert_allclose(g, p, rtol=1e-12, atol=0)


def test_upper_incomplete_gamma_in_float32() -> None:
    k, x = pt.fvector("k"), pt.fvector("x")
    ks, xs = np.array([1e-30, 1e-5], np.float32), np.array([0.5, 0.5], np.float32)
    got = _fn([k, x], pt.gammaincc(k, x), "jax")(ks, xs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, special.gammaincc(ks, xs), rtol=1e-5)


def test_owens_t_far_in_the_tail() -> None:
    # JAX's owens_t lost up to 66% of T(h, a) for h in [7, 37] and a in [0.2, 1.08].
    h, a = pt.dvector("h"), pt.dvector("a")
    heights = np.concatenate([np.linspace(-30.0, 30.0, 25), [np.inf, -np.inf]])
    grid = np.meshgrid(heights, np.linspace(-1.5, 1.5, 31))
    hs, as_ = grid[0].ravel(), grid[1].ravel()
    got = _fn([h, a], pt.owens_t(h, a), "jax")(hs, as_)
    np.testing.assert_allclose(got, special.owens_t(hs, as_), rtol=1e-10, atol=0)
    np.testing.assert_allclose(got, _fn([h, a], pt.owens_t(h, a), "py")(hs, as_), rtol=1e-10)


# -- random variables -------------------------------------------------------------------------


def _draw(out: Any) -> np.ndarray:
    return np.asarray(_fn([], out, "jax")())


@pytest.mark.parametrize(
    ("make", "cdf"),
    [
        (lambda g: rb.wald(1.5, 2.0, size=20000, rng=g), st.invgauss(0.75, scale=2.0).cdf),
        (
            lambda g: rb.gengamma(2.0, 1.5, 3.0, size=20000, rng=g),
            st.gengamma(2.0 / 1.5, 1.5, scale=3.0).cdf,
        ),
        (
            lambda g: rb.triangular(-1.0, 0.5, 2.0, size=20000, rng=g),
            st.triang(0.5, loc=-1.0, scale=3.0).cdf,
        ),
    ],
    ids=["wald", "gengamma", "triangular"],
)
def test_continuous_draws_follow_scipy(make: Any, cdf: Any) -> None:
    draws = _draw(make(opweave.shared(np.random.default_rng(3))))
    assert draws.shape == (20000,) and draws.dtype == np.float64
    assert st.kstest(draws, cdf).pvalue > 1e-3


@pytest.mark.parametrize(
    ("make", "dist"),
    [
        (lambda g: rb.negative_binomial(3.0, 0.4, size=20000, rng=g), st.nbinom(3.0, 0.4)),
        (lambda g: rb.betabinom(10, 2.0, 3.0, size=20000, rng=g), st.betabinom(10, 2.0, 3.0)),
    ],
    ids=["negative_binomial", "betabinom"],
)
def test_discrete_draws_follow_scipy(make: Any, dist: Any) -> None:
    draws = _draw(make(opweave.shared(np.random.default_rng(4))))
    assert draws.shape == (20000,) and draws.dtype == np.int64
    counts = np.arange(30)
    frequencies = np.array([(draws == k).mean() for k in counts])
    np.testing.assert_allclose(frequencies, dist.pmf(counts), atol=0.012)
    assert abs(draws.mean() - dist.mean()) < 4 * dist.std() / np.sqrt(draws.size)


def test_numpyro_flag_is_served() -> None:
    # PyTensor's ``pytensor.link.jax.dispatch.random.numpyro_available``.
    module = importlib.import_module("opweave.link.jax.dispatch.random")
    assert module.numpyro_available is (importlib.util.find_spec("numpyro") is not None)
