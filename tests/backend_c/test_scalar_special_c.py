"""C code of the special functions of ``opweave.scalar.special`` (``erfcinv``, ``ndtri_exp``,
``i0``, ``i1``, ``iv``, ``ive``, ``j0``, ``j1``, ``betainc``, ``gammaincinv``,
``gammainccinv``): the values and dtypes of the Python backend on the ``c`` and ``cvm``
linkers, in Elemwise loops and fused Composites.

The C helpers run the Python backend's algorithms in the same order of operations; the
only difference left is ``lgamma`` (CPython computes its own, C calls the C library's).
With the C library's ``lgamma`` put into the Python backend, both agree bit for bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import warnings
from typing import Any

import numpy as np
import pytest
from c_parity import MODES

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.scalar import special as ss
from opweave.tensor import special_extra as se
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType
from opweave_c.linkers.c_linker import MissingCCodeError
from opweave_python import special_math, special_math_extra

#: name -> (the Elemwise, its number of inputs)
OPS: dict[str, tuple[Elemwise, int]] = {
    "erfcinv": (se.erfcinv, 1),
    "ndtri_exp": (se.ndtri_exp, 1),
    "i0": (se.i0, 1),
    "i1": (se.i1, 1),
    "iv": (se.iv, 2),
    "ive": (se.ive, 2),
    "j0": (se.j0, 1),
    "j1": (se.j1, 1),
    "betainc": (se.betainc, 3),
    "gammaincinv": (se.gammaincinv, 2),
    "gammainccinv": (se.gammainccinv, 2),
}
INF, NAN = np.inf, np.nan
RNG = np.random.default_rng(23)


def _product(*axes: Any) -> list[np.ndarray]:
    """Every combination of the values of ``axes``, as flat arrays of one length."""
    return [g.ravel() for g in np.meshgrid(*[np.asarray(a, dtype=float) for a in axes])]


def _grid() -> dict[str, list[np.ndarray]]:
    """float64 inputs of each function: the edges of its domain, the points where its
    algorithm switches, and random values (no input where the Python backend raises)."""
    u = RNG.uniform
    bessel_x = [0.0, -0.0, 1e-300, 1e-310, 0.5, -0.5, 1.0, -3.0, 20.0, -20.0, 39.9, 40.0]
    bessel_x += [40.1, -45.0, 100.0, 700.0, -709.5, 709.5, 1000.0, 1e10, INF, -INF, NAN]
    erfc_z = [0.0, -0.0, 1e-310, 1e-300, 1e-20, 0.1, 0.4999, 0.5, 0.5001, 1.0, 1.4999, 1.5]
    erfc_z += [1.5001, 1.9, 2.0 - 4e-16, 2.0, -0.1, 2.1, INF, -INF, NAN]
    ln2 = np.log(2.0)
    ndtri_y = [0.0, -0.0, -1e-300, -1e-20, -ln2 + 1e-12, -ln2, -ln2 - 1e-12, -2 * ln2 + 1e-12]
    ndtri_y += [-2 * ln2, -2 * ln2 - 1e-12, -1.0, -40.0, -1e3, -1e10, -1e300, -1.7e308]
    ndtri_y += [0.1, INF, -INF, NAN]
    j_x = [0.0, -0.0, 1e-300, 1.9999999, 2.0, -2.0, 2.0000001, 24.999, 25.0, -25.0, 25.0000001]
    j_x += [30.0, 1e4, 1e10, 1e300, 1.7e308, -1.7e308, INF, -INF, NAN]
    orders = [0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 0.5, -0.5, 2.5, -2.5, 7.3, 30.0, 100.0, 1e3, INF]
    orders += [NAN]
    shapes = [1e-3, 0.1, 0.5, 1.0, 2.5, 10.0, 100.0, 1e4, 0.0, -1.0, INF, NAN]
    beta_x = [0.0, 1e-300, 1e-10, 0.1, 0.3, 0.5, 0.7, 0.9, 1 - 1e-10, 1.0, -0.1, 1.1, NAN]
    gamma_k = [1e-3, 0.05, 0.3, 0.9, 1.0, 1.5, 3.0, 10.0, 100.0, 1e4, 0.0, -1.0, INF, NAN]
    gamma_y = [0.0, 1e-300, 1e-100, 1e-20, 1e-8, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-8]
    gamma_y += [1 - 1e-15, 1.0, -0.1, 1.1, NAN, *u(0, 1, 4)]
    bessel = [*bessel_x, *u(-100, 100, 40)]
    iv_x = [*bessel_x, *u(-60, 60, 6)]
    return {
        "erfcinv": [np.array([*erfc_z, *u(0, 2, 40), *10 ** u(-300, 0, 20)])],
        "ndtri_exp": [np.array([*ndtri_y, *-u(0, 50, 40), *-(10 ** u(-10, 300, 20))])],
        "i0": [np.array(bessel)],
        "i1": [np.array(bessel)],
        "iv": _product(orders, iv_x),
        "ive": _product(orders, iv_x),
        "j0": [np.array([*j_x, *u(-60, 60, 40)])],
        "j1": [np.array([*j_x, *u(-60, 60, 40)])],
        "betainc": _product(shapes, shapes, beta_x),
        "gammaincinv": _product(gamma_k, gamma_y),
        "gammainccinv": _product(gamma_k, gamma_y),
    }


GRID = _grid()


def _flat_args(grid: dict[str, list[np.ndarray]], dtype: str) -> list[np.ndarray]:
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return [a.astype(dtype) for name in OPS for a in grid[name]]


def _run(fn: Any, args: list[np.ndarray]) -> list[np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args)


@pytest.fixture(scope="module", params=["float64", "float32"])
def special_fns(request) -> tuple[str, dict[str, Any]]:
    """Every function of its own vector inputs, on ``py``, ``c`` and ``cvm`` (no fusion)."""
    dtype = request.param
    inputs, outputs = [], []
    for name, (op, nin) in OPS.items():
        args = [TensorType(dtype, shape=(None,))(f"{name}_{k}") for k in range(nin)]
        inputs += args
        outputs.append(op(*args))
    fns = {name: opweave.function(inputs, outputs, mode=mode) for name, mode in MODES.items()}
    assert fns["cvm"].fn.c_nodes == list(range(len(OPS)))  # every node runs in C
    return dtype, fns


def _same_nan(got: np.ndarray, ref: np.ndarray, where: str) -> None:
    assert got.dtype == ref.dtype and got.shape == ref.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=where)


def _within_ulp(got: np.ndarray, ref: np.ndarray, where: str) -> None:
    """``got`` is ``ref`` or one of its neighbours (the same NaN, the same infinities)."""
    _same_nan(got, ref, where)
    ok = (got == ref) | np.isnan(ref)
    with np.errstate(invalid="ignore"):
        near = np.isfinite(ref) & (np.abs(got - ref) <= np.spacing(np.abs(ref)))
    assert (ok | near).all(), f"{where}: {got[~(ok | near)]} != {ref[~(ok | near)]}"


def _ill_conditioned(name: str, inputs: list[np.ndarray]) -> np.ndarray:
    """Where the last bits of ``lgamma`` of the shapes are amplified: ``betainc`` with a
    shape of 1e4 (``lgamma`` near 8e4 cancels) or 1e-3 (``lgamma(a + b) - lgamma(b)``
    cancels), the inverses with ``k = 1e-3`` (divided by ``k``). Elsewhere ``false``."""
    if name == "betainc":
        a, b = inputs[0], inputs[1]
        return (np.maximum(a, b) > 100) | (np.minimum(a, b) < 0.01)
    if name in ("gammaincinv", "gammainccinv"):
        return inputs[0] < 0.01
    return np.zeros(inputs[0].shape, dtype=bool)


def test_every_node_runs_in_c_and_matches_python(special_fns) -> None:
    """Within 1e-12 (float64; 1e-8 where ill-conditioned) or one ulp (float32) of the
    Python backend, the same NaN and infinities."""
    dtype, fns = special_fns
    args = _flat_args(GRID, dtype)
    ref = _run(fns["py"], args)
    for linker in ("c", "cvm"):
        got = _run(fns[linker], args)
        for name, g, r in zip(OPS, got, ref, strict=True):
            where = f"{name} {dtype} on {linker}"
            if dtype == "float32":
                _within_ulp(g, r, where)
                continue
            _same_nan(g, r, where)
            loose = _ill_conditioned(name, GRID[name])
            np.testing.assert_allclose(g[~loose], r[~loose], rtol=1e-12, atol=0, err_msg=where)
            np.testing.assert_allclose(g[loose], r[loose], rtol=1e-8, atol=0, err_msg=where)


def _libm_lgamma() -> Any:
    path = ctypes.util.find_library("m")
    if path is None:
        pytest.skip("no C math library found to load lgamma from")
    libm = ctypes.CDLL(path)
    libm.lgamma.restype = ctypes.c_double
    libm.lgamma.argtypes = [ctypes.c_double]

    def lgamma(x: float) -> float:
        if 3.0 <= x <= 1024.0 and x == int(x):  # both backends round these once
            return special_math._lgamma_integer(int(x))
        return libm.lgamma(x)  # type: ignore[no-any-return]

    return lgamma


def test_c_runs_the_python_algorithms_bit_for_bit(special_fns, monkeypatch) -> None:
    """With the C library's ``lgamma`` in the Python backend (at other points than the
    integers, where both round ``log((n - 1)!)`` once), every value is the same."""
    dtype, fns = special_fns
    lgamma = _libm_lgamma()
    monkeypatch.setattr(special_math, "gammaln", lgamma)
    monkeypatch.setattr(special_math_extra, "gammaln", lgamma)
    args = _flat_args(GRID, dtype)
    ref = _run(fns["py"], args)
    got = _run(fns["cvm"], args)
    for name, g, r in zip(OPS, got, ref, strict=True):
        _same_nan(g, r, name)
        np.testing.assert_array_equal(g, r, err_msg=f"{name} {dtype}")


def test_edge_values(special_fns) -> None:
    """The values at the edges of the domains (those of SciPy)."""
    dtype, fns = special_fns
    cases = {
        "erfcinv": ([[0.0, 1.0, 2.0, -0.5, 2.5, NAN]], [INF, 0.0, -INF, NAN, NAN, NAN]),
        "ndtri_exp": ([[0.0, -INF, 0.5, NAN]], [INF, -INF, NAN, NAN]),
        "i0": ([[0.0, INF, -INF, NAN]], [1.0, NAN, NAN, NAN]),
        "i1": ([[0.0, INF, -INF, NAN]], [0.0, NAN, NAN, NAN]),
        "iv": (
            [[0.0, 1.0, 2.0, 0.5, -0.5, 3.0], [0.0, 0.0, -INF, -1.0, 0.0, -INF]],
            [1.0, 0.0, NAN, NAN, INF, NAN],
        ),
        "ive": ([[0.0, 1.0, 0.5, NAN], [0.0, INF, -2.0, 1.0]], [1.0, NAN, NAN, NAN]),
        "j0": ([[0.0, INF, -INF, NAN]], [1.0, NAN, NAN, NAN]),
        "j1": ([[0.0, INF, -INF, NAN]], [0.0, NAN, NAN, NAN]),
        "betainc": (
            [[1.0, 2.0, 0.0, 1.0, INF], [1.0, 3.0, 1.0, 1.0, 1.0], [0.0, 1.0, 0.5, 1.5, 0.5]],
            [0.0, 1.0, 1.0, NAN, 0.0],
        ),
        "gammaincinv": (
            [[2.0, 2.0, 0.0, 2.0, INF], [0.0, 1.0, 0.5, 1.5, 0.5]],
            [0.0, INF, NAN, NAN, NAN],
        ),
        "gammainccinv": (
            [[2.0, 2.0, -1.0, 2.0, NAN], [1.0, 0.0, 0.5, -0.5, 0.5]],
            [0.0, INF, NAN, NAN, NAN],
        ),
    }
    args = [np.array(a, dtype=dtype) for name in OPS for a in cases[name][0]]
    got = _run(fns["cvm"], args)
    for name, g in zip(OPS, got, strict=True):
        np.testing.assert_array_equal(g, np.array(cases[name][1], dtype=dtype), err_msg=name)


def test_values_agree_with_scipy(special_fns) -> None:
    """A sanity check against SciPy on well-conditioned parts of the domains (float32:
    SciPy's float64 values at the float32 inputs, rounded)."""
    sc = pytest.importorskip("scipy.special")
    dtype, fns = special_fns
    u = RNG.uniform
    x = u(-100, 100, 50)
    grid = {
        "erfcinv": [np.array([*u(0, 2, 50), 1e-300, 1e-100, 2 - 1e-10])],
        "ndtri_exp": [np.array([*-u(0, 50, 50), -1e-300, -1e4, -1e100])],
        "i0": [np.array([*x, 0.0, 40.1, 39.9, 700.0])],
        "i1": [np.array([*x, 0.0, 40.1, 39.9, 700.0])],
        "iv": _product([0, 1, 2, 0.5, 2.5, -0.5, -1.5, 5, 10, -3, 7.3], [*u(0, 60, 10), 100.0]),
        "ive": _product([0, 1, 3, 0.5, -2.5, 6.2], [*u(-60, 60, 10), 500.0, -500.0]),
        "j0": [np.array([*u(-60, 60, 50), 0.0, 2.0, 2.0001, 25.0, 25.0001, 1e4])],
        "j1": [np.array([*u(-60, 60, 50), 0.0, 2.0, 2.0001, 25.0, 25.0001, 1e4])],
        "betainc": _product([0.1, 0.5, 1, 2, 5, 20, 100], [0.1, 1, 3, 50], [0.001, 0.3, 0.8]),
        "gammaincinv": _product([0.05, 0.3, 1, 1.5, 10, 300], [1e-30, 1e-8, 0.2, 0.5, 0.99]),
        "gammainccinv": _product([0.05, 0.3, 1, 1.5, 10, 300], [1e-30, 1e-8, 0.2, 0.5, 0.99]),
    }
    args = _flat_args(grid, dtype)
    got = _run(fns["cvm"], args)
    for name, g in zip(OPS, got, strict=True):
        with np.errstate(over="ignore"):  # to inf in float32
            inputs = [a.astype(dtype).astype("float64") for a in grid[name]]
            ref = getattr(sc, name)(*inputs).astype(dtype)
        atol = 1e-13 if name in ("j0", "j1") else 0.0  # near the zeros
        rtol = 1e-11 if dtype == "float64" else 1e-6
        np.testing.assert_allclose(g, ref, rtol=rtol, atol=atol, err_msg=f"{name} {dtype}")


# ====================================================================== fusion, dtypes


def _all_in_one(inputs: list[Any]) -> Any:
    v, x, a = inputs
    y = x * 0.9 + 0.05  # in (0, 1)
    terms = [
        se.erfcinv(y),
        se.ndtri_exp(-y),
        se.i0(x),
        se.i1(x),
        se.iv(v, x),
        se.ive(v, x),
        se.j0(x),
        se.j1(x),
        se.betainc(a, v, y),
        se.gammaincinv(a, y),
        se.gammainccinv(a, y),
    ]
    out = ot.exp(terms[0])
    for term in terms[1:]:
        out = out + ot.exp(term)
    return out + 1


def _scalar_ops(node: Any) -> set[type]:
    return {type(n.op) for n in node.op.scalar_op.fgraph.toposort()}


def test_fused_graph_runs_as_one_c_loop_and_whole_graph_c_accepts_it() -> None:
    inputs = [ot.dvector("v"), ot.dvector("x"), ot.dvector("a")]
    out = _all_in_one(inputs)
    fns = {
        linker: opweave.function(inputs, out, mode=Mode(linker=linker))
        for linker in ("vm", "cvm", "c")
    }
    nodes = fns["cvm"].maker.fgraph.toposort()
    assert len(nodes) == 1 and isinstance(nodes[0].op, Elemwise)
    expected = {ss.Erfcinv, ss.NdtriExp, ss.I0, ss.I1, ss.Iv, ss.Ive, ss.J0, ss.J1}
    expected |= {ss.BetaInc, ss.GammaIncInv, ss.GammaIncCInv}
    assert expected <= _scalar_ops(nodes[0])
    assert fns["cvm"].fn.c_nodes == [0]
    args = [RNG.uniform(0.5, 4, 300), RNG.uniform(0, 1, 300), RNG.uniform(0.5, 5, 300)]
    ref = fns["vm"](*args)
    for linker in ("cvm", "c"):
        np.testing.assert_allclose(fns[linker](*args), ref, rtol=1e-12, err_msg=linker)


def test_float16_has_no_c_code_and_runs_in_python_under_cvm() -> None:
    """No C for float16 (alone, or beside float32): ``c`` refuses the graph, ``cvm`` runs
    the nodes in Python."""
    v, x, a = (TensorType("float16", shape=(None,))(n) for n in "vxa")
    f = ot.fvector("f")
    outs = [se.j0(x), se.iv(v, x), se.betainc(a, v, x), se.gammaincinv(a, x), se.ive(v, f)]
    for out in outs:
        with pytest.raises(MissingCCodeError, match="has no C implementation"):
            opweave.function([v, x, a, f], out, mode=Mode(linker="c"), on_unused_input="ignore")
    cvm = opweave.function([v, x, a, f], outs, mode=Mode(linker="cvm"))
    assert cvm.fn.c_nodes == []
    args = [np.array([1.0, 2.0], dtype="float16"), np.array([0.25, 0.5], dtype="float16")]
    args += [np.array([1.5, 3.0], dtype="float16"), np.array([0.5, 3.0], dtype="float32")]
    ref = opweave.function([v, x, a, f], outs, mode=Mode(linker="vm"))(*args)
    for g, r in zip(cvm(*args), ref, strict=True):
        assert g.dtype == r.dtype
        np.testing.assert_array_equal(g, r)
    assert [r.dtype.name for r in ref] == ["float16"] * 4 + ["float32"]


def test_integer_and_mixed_inputs_are_upcast_as_in_python() -> None:
    """Integers count as the float wide enough for them (8 and 16 bits: float32, wider:
    float64), then the dtypes are promoted."""

    def vec(dtype: str, name: str) -> Any:
        return TensorType(dtype, shape=(None,))(name)

    b, h, i, q = vec("int8", "b"), vec("int16", "h"), vec("int32", "i"), vec("int64", "q")
    u, f = vec("uint8", "u"), vec("float32", "f")
    flag = vec("bool", "flag")
    outs = [
        se.erfcinv(b),
        se.ndtri_exp(q),
        se.i0(h),
        se.j1(i),
        se.iv(b, h),
        se.ive(b, i),
        se.betainc(u, h, f),
        se.gammaincinv(u, f),
        se.gammainccinv(q, f),
        se.j0(flag),
    ]
    expected = ["float32", "float64", "float32", "float64", "float32", "float64", "float32"]
    expected += ["float32", "float64", "float32"]
    assert [o.dtype for o in outs] == expected
    inputs = [b, h, i, q, u, f, flag]
    fns = {name: opweave.function(inputs, outs, mode=mode) for name, mode in MODES.items()}
    assert fns["cvm"].fn.c_nodes == list(range(len(outs)))
    args = [
        np.array([0, 1, 2, -3, 5], dtype="int8"),
        np.array([0, 3, -7, 300, 41], dtype="int16"),
        np.array([0, -5, 30, 100000, 7], dtype="int32"),
        np.array([0, -1, -40, -(2**62), 3], dtype="int64"),
        np.array([1, 2, 0, 200, 9], dtype="uint8"),
        np.array([0.5, 0.25, 0.75, 0.1, 1.0], dtype="float32"),
        np.array([True, False, True, False, True]),
    ]
    ref = _run(fns["py"], args)
    for linker in ("c", "cvm"):
        for k, (g, r) in enumerate(zip(_run(fns[linker], args), ref, strict=True)):
            where = f"output {k} on {linker}"
            assert g.dtype == r.dtype == np.dtype(expected[k]), where
            if g.dtype == np.float32:
                _within_ulp(g, r, where)
            else:
                _same_nan(g, r, where)
                np.testing.assert_allclose(g, r, rtol=1e-12, atol=0, err_msg=where)


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_extreme_arguments_give_the_limits_without_raising(linker: str) -> None:
    """The smallest subnormal, huge arguments and infinite orders: the Python backend once
    raised (``log(0)``, ``exp`` overflow, ``floor(-inf)``) where the limit is known."""
    v, x = ot.dvector("v"), ot.dvector("x")
    fn = opweave.function(
        [v, x],
        [ot.iv(v, x), ot.ive(v, x), ot.i0(x), ot.i1(x)],
        mode=opweave.Mode(linker=linker),
    )
    tiny, huge = 5e-324, 1e308
    iv, ive, i0, i1 = _run(
        fn, [np.array([0.0, 0.0, INF, -INF, 2.5]), np.array([tiny, huge, 2.0, 2.0, huge])]
    )
    np.testing.assert_array_equal(iv, [1.0, INF, 0.0, 0.0, INF])
    assert ive[0] == 1.0 and np.isnan(ive[2]) and np.isnan(ive[3])
    np.testing.assert_array_equal(i0, [1.0, INF, i0[2], i0[2], INF])
    assert i1[0] == tiny and i1[1] == INF
