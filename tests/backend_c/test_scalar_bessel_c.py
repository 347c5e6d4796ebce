"""C code of ``jv``, ``kve``, ``hyp2f1``, ``betaincinv`` and ``owens_t``: the values and
dtypes of the Python backend on the ``c`` and ``cvm`` linkers, in Elemwise loops, fused
Composites and scalar-level graphs.

The C helpers run the Python backend's algorithms in the same order of operations and
reproduce CPython's own ``math.lgamma``/``math.gamma``; every other function they call is
the C library's, which CPython calls too, so the values agree bit for bit.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from c_parity import MODES

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.scalar import bessel, hyp2f1, probability
from opweave.scalar.composite import Composite
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType
from opweave_c.linkers.c_linker import MissingCCodeError

INF, NAN = np.inf, np.nan

#: name -> (the Elemwise, its scalar Op class, its number of inputs)
OPS: dict[str, tuple[Any, type, int]] = {
    "jv": (ot.jv, bessel.Jv, 2),
    "kve": (ot.kve, bessel.Kve, 2),
    "hyp2f1": (ot.hyp2f1, hyp2f1.Hyp2F1, 4),
    "betaincinv": (ot.betaincinv, probability.BetaIncInv, 3),
    "owens_t": (ot.owens_t, probability.OwensT, 2),
}

#: name -> the values of each input; every combination is one element. The edges of each
#: domain, and points on both sides of where the algorithms switch (no input where the
#: Python backend raises).
AXES: dict[str, tuple[list[float], ...]] = {
    # orders: integers of both signs (parity), half-integers, negative non-integers
    # (J_{-v} from J_v and Y_v), large orders (series, Steed's recurrence over ~40 orders);
    # arguments: 0, tiny, the series up to 2, Steed's method, Hankel's expansion from 25
    # (or v**2 / 2), its far phase from 1e15, negative x
    "jv": (
        [0.0, 1.0, 2.0, -1.0, -2.0, 3.0, 0.5, -0.5, -2.5, 2.5, 10.0, 40.5, 100.0, -7.3],
        [0.0, -0.0, 1e-300, 0.5, 1.9, 2.0, 2.1, 5.0, 10.0, 24.9, 25.0, 30.0, 60.0, 1e3],
    ),
    # Temme's series below x = 2, the continued fraction from 2, the recurrence up to 400
    "kve": (
        [0.0, 0.5, -0.5, 0.3, 0.05, 1.0, 2.7, -3.0, 10.0, 50.2, 1e-12, 400.0],
        [0.0, -1.0, 1e-300, 1e-5, 0.5, 1.99, 2.0, 2.01, 10.0, 100.0, 1e5],
    ),
    # terminating series (a or b a non-positive integer), the series up to z = 0.9, the
    # connection formula above it (integer c - a - b: its logarithmic limit, and Euler's
    # transformation where c - a - b < 0), Pfaff's transformation for z < 0, z = 1, z > 1
    "hyp2f1": (
        [1.0, 0.5, -2.0, -3.5, 2.3, 0.0],
        [1.5, -1.0, 3.0, 0.25],
        [2.5, 3.0, -2.0, 1.5, 4.8],
        [-5.0, -0.5, 0.0, 0.3, 0.9, 0.95, 0.999, 1.0, 1.5],
    ),
    # both branches of the first guess (a, b >= 1 or not), y above 1/2 (solved from 1 - y)
    "betaincinv": (
        [0.5, 1.0, 2.0, 10.0, 0.05, 0.0, -1.0],
        [0.5, 1.0, 3.0, 50.0],
        [0.0, 1e-10, 0.01, 0.3, 0.5, 0.7, 0.999, 1.0, -0.1, 1.1],
    ),
    # quadrature for |a| <= 1 (one to six panels), the identity beyond, h**2 / 2 > 745
    "owens_t": (
        [0.0, -0.0, 0.5, -1.0, 2.0, 5.0, 40.0, 1e3],
        [0.0, 0.3, -0.3, 1.0, -1.0, 2.0, 10.0, 1e6],
    ),
}

#: Inputs with NaN and infinities, one row per element (added to every grid).
SPECIAL_ROWS: dict[str, list[tuple[float, ...]]] = {
    "jv": [
        (NAN, 1.0), (1.0, NAN), (INF, 1.0), (-INF, 1.0), (1.0, INF), (1.0, -INF),
        (0.5, 1e16), (-0.5, 1e19), (3.0, -30.0), (2.5, -1.0), (-2.5, 0.0), (-0.5, 0.0),
    ],
    "kve": [(NAN, 1.0), (1.0, NAN), (INF, 1.0), (1.0, INF), (-INF, 3.0), (1e300, 3.0)],
    "hyp2f1": [
        (NAN, 1.0, 2.0, 0.5), (1.0, 1.0, INF, 0.5), (1.0, 2.0, 3.0, -INF),
        (-3.0, 1.5, -5.0, 0.5), (-3.0, 1.5, -2.0, 0.5), (1.0, 2.0, 0.0, 0.5),
    ],
    "betaincinv": [
        (NAN, 1.0, 0.5), (1.0, NAN, 0.5), (1.0, 1.0, NAN), (INF, 2.0, 0.5), (2.0, INF, 0.5),
        (INF, INF, 0.5), (2.0, 3.0, 1e-300),
    ],
    "owens_t": [
        (NAN, 1.0), (1.0, NAN), (INF, 0.5), (-INF, 2.0), (1.0, INF), (-1.0, -INF), (0.0, INF),
    ],
}  # fmt: skip


def _inputs(name: str, dtype: str) -> list[np.ndarray]:
    """The grid of ``name`` and its special rows, one flat array per input."""
    axes = AXES[name]
    columns = [g.ravel() for g in np.meshgrid(*[np.asarray(a) for a in axes])]
    rows = np.asarray(SPECIAL_ROWS[name], dtype="float64").T
    with np.errstate(over="ignore"):  # 1e300 is inf in float32
        return [np.concatenate([c, r]).astype(dtype) for c, r in zip(columns, rows, strict=True)]


def _run(f: Any, *args: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


def _assert_same(got: np.ndarray, ref: np.ndarray, where: str) -> None:
    """Same type, dtype and shape, NaN and infinities at the same places, and values within
    ``1e-13`` (``float64``) or one ulp (``float32``) of each other."""
    assert type(got) is type(ref) and got.dtype == ref.dtype and got.shape == ref.shape, where
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=where)
    finite = np.isfinite(ref)
    np.testing.assert_array_equal(got[~finite], ref[~finite], err_msg=where)
    g, r = got[finite], ref[finite]
    if got.dtype == np.float32:
        assert (np.abs(g - r) <= np.spacing(np.abs(r))).all(), where
    else:
        np.testing.assert_allclose(g, r, rtol=1e-13, atol=1e-300, err_msg=where)


@pytest.fixture(scope="module", params=["float64", "float32"])
def compiled(request: Any) -> tuple[str, dict[str, Any]]:
    """All five functions of vectors of one dtype, as one function per linker."""
    dtype = request.param
    inputs, outputs = [], []
    for name, (fn, _, nin) in OPS.items():
        xs = [TensorType(dtype, shape=(None,))(f"{name}{k}") for k in range(nin)]
        inputs += xs
        outputs.append(fn(*xs))
    modes = {"vm": Mode(linker="vm", optimizer=None), **MODES}
    fns = {name: opweave.function(inputs, outputs, mode=mode) for name, mode in modes.items()}
    n_nodes = len(fns["cvm"].maker.fgraph.toposort())
    assert fns["cvm"].fn.c_nodes == list(range(n_nodes))  # every node in C
    return dtype, fns


def _all_inputs(dtype: str) -> list[np.ndarray]:
    """The inputs of every function, each grid padded to one common length."""
    grids = {name: _inputs(name, dtype) for name in OPS}
    size = max(len(g[0]) for g in grids.values())
    return [np.resize(column, size) for g in grids.values() for column in g]


def test_values_match_the_python_backend(compiled: tuple[str, dict[str, Any]]) -> None:
    dtype, fns = compiled
    args = _all_inputs(dtype)
    ref = _run(fns["vm"], *args)
    assert [r.dtype.name for r in ref] == [dtype] * len(OPS)
    for linker in ("c", "cvm"):
        got = _run(fns[linker], *args)
        for name, g, r in zip(OPS, got, ref, strict=True):
            _assert_same(g, r, f"{name} on {linker} ({dtype})")


def test_values_are_the_python_backends_bit_for_bit(
    compiled: tuple[str, dict[str, Any]],
) -> None:
    """Same algorithms, same order of operations, same ``lgamma`` and ``gamma``."""
    dtype, fns = compiled
    args = _all_inputs(dtype)
    ref = _run(fns["vm"], *args)
    for linker in ("c", "cvm"):
        for name, g, r in zip(OPS, _run(fns[linker], *args), ref, strict=True):
            np.testing.assert_array_equal(g, r, err_msg=f"{name} on {linker} ({dtype})")
            numbers = ~np.isnan(r)
            assert (np.signbit(g[numbers]) == np.signbit(r[numbers])).all(), name  # zeros


def test_random_values_match_the_python_backend(compiled: tuple[str, dict[str, Any]]) -> None:
    dtype, fns = compiled
    rng = np.random.default_rng(31)
    n = 300
    v, x = rng.uniform(-12, 12, n), rng.exponential(8, n)
    a, b = rng.uniform(-4, 4, n), rng.uniform(-4, 4, n)
    c, z = rng.uniform(0.2, 6, n), rng.uniform(-6, 0.999, n)
    pa, pb, y = rng.uniform(0.05, 20, n), rng.uniform(0.05, 20, n), rng.uniform(0, 1, n)
    h, slope = rng.normal(0, 3, n), rng.normal(0, 4, n)
    args = [t.astype(dtype) for t in (v, x, v, x, a, b, c, z, pa, pb, y, h, slope)]
    ref = _run(fns["vm"], *args)
    for linker in ("c", "cvm"):
        for name, g, r in zip(OPS, _run(fns[linker], *args), ref, strict=True):
            _assert_same(g, r, f"{name} on {linker} ({dtype})")


# ====================================================================== against SciPy


def test_values_agree_with_scipy() -> None:
    """A sanity check of the C values against SciPy, away from the edges where the Python
    backend's conventions differ (``kve(v, inf)``)."""
    sps = pytest.importorskip("scipy.special")
    cases = {
        "jv": (sps.jv, [[-7.5, -2.5, -1.0, 0.0, 0.5, 3.0, 10.0, 25.5], [0.1, 1.9, 5.0, 30.0]]),
        "kve": (sps.kve, [[-3.0, 0.0, 0.3, 1.0, 2.7, 12.5], [1e-3, 0.5, 1.99, 2.01, 40.0]]),
        "hyp2f1": (
            sps.hyp2f1,
            [[0.3, 1.0, 2.5], [-1.5, 0.6, 1.2], [0.7, 2.0, 4.8], [-20.0, -0.5, 0.3, 0.95]],
        ),
        "betaincinv": (sps.betaincinv, [[0.1, 1.0, 2.5, 50.0], [0.2, 3.0], [1e-8, 0.3, 0.99]]),
        "owens_t": (sps.owens_t, [[-3.0, 0.0, 0.5, 2.0, 10.0], [-5.0, 0.2, 1.0, 1.001, 1e3]]),
    }
    for name, (reference, axes) in cases.items():
        fn, _, nin = OPS[name]
        xs = [ot.dvector(f"x{k}") for k in range(nin)]
        f = opweave.function(xs, fn(*xs), mode=Mode(linker="cvm"))
        assert f.fn.c_nodes == [0]
        args = [g.ravel() for g in np.meshgrid(*[np.asarray(a) for a in axes])]
        np.testing.assert_allclose(f(*args), reference(*args), rtol=1e-9, atol=1e-15, err_msg=name)


# ====================================================================== C, not Python


@pytest.mark.parametrize("name", list(OPS))
def test_fused_loop_compiles_as_one_c_function(name: str) -> None:
    """``exp(f(...)) + 1`` fuses into one Composite, which ``cvm`` runs as one C loop, and
    which the whole-graph ``c`` linker accepts."""
    fn, cls, nin = OPS[name]
    xs = [ot.dvector(f"x{k}") for k in range(nin)]
    out = ot.exp(fn(*xs)) + 1
    f = opweave.function(xs, out, mode=Mode(linker="cvm"))
    nodes = f.maker.fgraph.toposort()
    assert len(nodes) == 1 and isinstance(nodes[0].op, Elemwise)
    composite = nodes[0].op.scalar_op
    assert isinstance(composite, Composite)
    assert any(isinstance(n.op, cls) for n in composite.fgraph.toposort())
    assert f.fn.c_nodes == [0]
    whole = opweave.function(xs, out, mode=Mode(linker="c"))
    py = opweave.function(xs, out, mode=Mode(linker="py"))
    args = [column.astype("float64") for column in _inputs(name, "float64")]
    keep = np.all([np.isfinite(a) for a in args], axis=0)
    args = [a[keep] for a in args]
    ref = _run(py, *args)
    for got in (_run(f, *args), _run(whole, *args)):
        # exp may come from a vector math library in C and from NumPy's own SIMD code
        np.testing.assert_allclose(got, ref, rtol=1e-14, atol=0)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


def test_float16_has_no_c_code() -> None:
    """As for the other scalar Ops: ``cvm`` runs ``float16`` nodes in Python and ``c``
    refuses the graph."""
    v, x = TensorType("float16", shape=(None,))("v"), TensorType("float16", shape=(None,))("x")
    out = ot.jv(v, x)
    f = opweave.function([v, x], out, mode=Mode(linker="cvm", optimizer=None))
    assert f.fn.c_nodes == []
    args = (np.array([0.0, 1.5, -2.0], "float16"), np.array([1.0, 3.0, 30.0], "float16"))
    py = opweave.function([v, x], out, mode=Mode(linker="py", optimizer=None))
    np.testing.assert_array_equal(f(*args), py(*args))
    with pytest.raises(MissingCCodeError):
        opweave.function([v, x], out, mode=Mode(linker="c", optimizer=None))


# ====================================================================== dtypes


@pytest.mark.parametrize(
    ("dtypes", "expected"),
    [
        (("int8", "int8"), "float32"),
        (("uint16", "bool"), "float32"),
        (("int64", "uint8"), "float64"),
        (("int16", "float32"), "float32"),
    ],
)
def test_integer_inputs_are_upcast_as_the_python_backend_does(
    dtypes: tuple[str, str], expected: str
) -> None:
    first, second = dtypes
    values = {
        "bool": np.array([0, 1, 1, 0, 1, 1], dtype=bool),
        "float32": np.array([0.5, 2.0, 0.25, 1.5, 7.0, 0.75], dtype="float32"),
        "float64": np.array([0.5, 2.0, 0.25, 1.5, 7.0, 0.75]),
    }

    def data(dtype: str, offset: int) -> np.ndarray:
        if dtype in values:
            return values[dtype]
        return (np.arange(6) + offset).astype(dtype)

    ins = [TensorType(d, shape=(None,))(f"x{k}") for k, d in enumerate((first, second))]
    a, b = ins
    outs = [
        ot.jv(a, b), ot.kve(a, b), ot.owens_t(a, b), ot.hyp2f1(a, a, b, b),
        ot.betaincinv(b + 1, b + 2, ot.true_div(a, 8)),
    ]  # fmt: skip
    fns = {
        name: opweave.function(ins, outs, mode=Mode(linker=name, optimizer=None))
        for name in ("py", "cvm")
    }
    assert fns["cvm"].fn.c_nodes == list(range(len(fns["cvm"].maker.fgraph.toposort())))
    args = (data(first, -2), data(second, 0))
    ref = _run(fns["py"], *args)
    assert [r.dtype.name for r in ref[:4]] == [expected] * 4
    for k, (g, r) in enumerate(zip(_run(fns["cvm"], *args), ref, strict=True)):
        assert g.dtype == r.dtype, k
        np.testing.assert_array_equal(g, r, err_msg=f"output {k}")


@pytest.mark.parametrize("dtype", ["float64", "float32", "int16"])
def test_scalar_variables_in_c(dtype: str) -> None:
    """Scalar-level nodes (ScalarType variables) get the same C code."""
    st = ps.get_scalar_type(dtype)
    a, b, c, d = st("a"), st("b"), st("c"), st("d")
    outs = [
        bessel.jv(a, b), bessel.kve(a, b), hyp2f1.hyp2f1(a, b, c, d),
        probability.betaincinv(a, b, c), probability.owens_t(a, b),
    ]  # fmt: skip
    fc = opweave.function([a, b, c, d], outs, mode=Mode(linker="c", optimizer=None))
    fp = opweave.function([a, b, c, d], outs, mode=Mode(linker="py", optimizer=None))
    points = [(2, 3, 1, 0), (1, 2, 0, -1), (3, 1, 1, 0)]
    if dtype.startswith("float"):
        points += [(0.5, 2.5, 0.25, 0.95), (-1.5, 0.75, 0.5, -3.0), (NAN, 1.0, 0.5, 0.5)]
    for point in points:
        args = [np.asarray(p, dtype=dtype)[()] for p in point]
        for name, g, r in zip(OPS, _run(fc, *args), _run(fp, *args), strict=True):
            assert type(g) is type(r), (name, point)
            np.testing.assert_array_equal(g, r, err_msg=f"{name} at {point}")


def test_loops_whose_length_the_arguments_set_stop_with_nan() -> None:
    """Over ten million steps (where the Python backend would run for minutes): NaN."""
    v, x = ot.dvectors("v", "x")
    outs = [ot.kve(v, x), ot.hyp2f1(v, 1.0, 2.0, ot.true_div(x, x) * 0.5), ot.jv(v, x)]
    f = opweave.function([v, x], outs, mode=Mode(linker="cvm", optimizer=None))
    assert f.fn.c_nodes == list(range(len(f.maker.fgraph.toposort())))
    kve, poly, jv = f(np.array([1e300, -1e9, 4e7, 3.5]), np.array([1e300, 1e4, 1e4, 7.0]))
    # the recurrence over 1e300 orders, the polynomial of 1e9 terms, Steed's recurrence
    # over 4e7 orders
    assert np.isnan(kve[0]) and np.isnan(poly[1]) and np.isnan(jv[2])
    py = opweave.function([v, x], outs, mode=Mode(linker="py", optimizer=None))
    expected = py(np.array([3.5]), np.array([7.0]))
    np.testing.assert_array_equal([kve[3], poly[3], jv[3]], np.concatenate(expected))
