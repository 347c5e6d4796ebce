"""C code of Softmax, LogSoftmax and SoftmaxGrad: the values, dtypes and errors of the
Python backend on the ``c`` and ``cvm`` linkers, and the MLP step of the benchmarks
compiled whole with ``linker="c"``."""

from __future__ import annotations

import gc
import sys
import warnings

import numpy as np
import pytest
from c_parity import strided

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad
from opweave.tensor.type import TensorType

MODES = {
    "py": Mode(linker="py", optimizer=None),
    "c": Mode(linker="c", optimizer=None),
    "cvm": Mode(linker="cvm", optimizer=None),
}
#: Relative and absolute tolerance per dtype: ``exp`` and ``log`` differ from NumPy's by a
#: few ulp (libmvec, or another C library); everything else is rounded as NumPy rounds it.
TOL = {"float32": (2e-5, 1e-6), "float64": (1e-12, 1e-14)}


def _run(f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's inf - inf warnings
        return f(*args)


def compiled(inputs, outputs):
    """The function on each linker; checks that ``cvm`` ran every node in C."""
    fns = {name: opweave.function(inputs, outputs, mode=mode) for name, mode in MODES.items()}
    n_nodes = len(fns["cvm"].maker.fgraph.toposort())
    assert fns["cvm"].fn.c_nodes == list(range(n_nodes))
    return fns


def check_close(fns, args, exact=()):
    """Same dtypes, shapes and NaN/inf positions as Python, values within :data:`TOL`
    (the outputs numbered in ``exact`` bit for bit)."""
    ref = _run(fns["py"], args)
    for name in ("c", "cvm"):
        got = _run(fns[name], args)
        for k, (r, g) in enumerate(zip(ref, got, strict=True)):
            where = f"output {k} on {name}"
            assert type(g) is np.ndarray and g.dtype == r.dtype and g.shape == r.shape, where
            if k in exact:
                np.testing.assert_array_equal(g, r, err_msg=where)
            else:
                rtol, atol = TOL[r.dtype.name]
                np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=where)


def _special_rows(a):
    """``a`` (rows of at least 6) with rows of -inf, +inf, NaN, huge and tiny values."""
    a = a.copy()
    a[0, :] = -np.inf
    a[1, 2] = np.inf
    a[2, 3] = np.nan
    a[3, 1] = -np.inf
    a[4, :3] = np.finfo(a.dtype).max
    a[4, 3:] = -np.finfo(a.dtype).max
    a[5, 0] = np.inf
    a[5, 1] = -np.inf
    return a


# ====================================================================== values


@pytest.fixture(scope="module", params=["float64", "float32"])
def softmax_fns(request):
    """Every Op over each axis of a matrix and a 3-d tensor, a vector and a 0-d value."""
    dt = request.param
    m = TensorType(dt, shape=(None, None))("m")
    t = TensorType(dt, shape=(None, None, None))("t")
    v = TensorType(dt, shape=(None,))("v")
    s = TensorType(dt, shape=())("s")
    outs = []
    for axis in (-1, 0, None):
        outs += [Softmax(axis)(m), LogSoftmax(axis)(m)]
    for axis in (0, 1, 2, None):
        outs += [Softmax(axis)(t), LogSoftmax(axis)(t)]
    outs += [Softmax(0)(v), LogSoftmax(-1)(v), Softmax(None)(s), LogSoftmax(0)(s)]
    return dt, compiled([m, t, v, s], outs)


def _softmax_args(dt, layout, shape2=(6, 9), shape3=(3, 4, 5), n=7, scale=10.0):
    rng = np.random.default_rng(7)
    m = (rng.normal(size=shape2) * scale).astype(dt)
    t = (rng.normal(size=shape3) * scale).astype(dt)
    v = (rng.normal(size=n) * scale).astype(dt)
    return (layout(m), layout(t), layout(v), np.array(1.5, dtype=dt))


@pytest.mark.parametrize("layout", [np.ascontiguousarray, np.asfortranarray, strided])
def test_softmax_values_match_python(softmax_fns, layout) -> None:
    dt, fns = softmax_fns
    check_close(fns, _softmax_args(dt, layout))
    check_close(fns, _softmax_args(dt, layout, shape2=(3, 300), n=1000, scale=100.0))


def test_softmax_special_values_match_python(softmax_fns) -> None:
    dt, fns = softmax_fns
    m, t, v, s = _softmax_args(dt, np.ascontiguousarray)
    m = _special_rows(m)
    t[0, 0, :] = -np.inf
    t[1, :, 2] = np.inf
    t[2, 3, 4] = np.nan
    v[:] = -np.inf
    for scalar in (np.inf, -np.inf, np.nan):
        check_close(fns, (m, t, v, np.array(scalar, dtype=dt)))
    check_close(fns, (np.ascontiguousarray(m.T), strided(t), v, s))
    out = _run(fns["c"], (m, t, v, s))
    assert np.isnan(out[0][0]).all() and np.isnan(out[1][0]).all()  # a row of -inf
    row = out[0][1]  # +inf in a row: NaN there, 0 elsewhere
    assert np.isnan(row[2]) and not row[np.arange(9) != 2].any()
    np.testing.assert_allclose(out[0][4], [1 / 3] * 3 + [0] * 6, rtol=1e-6)  # no overflow


def test_softmax_empty_inputs_give_empty_outputs(softmax_fns) -> None:
    dt, fns = softmax_fns
    for shape2, shape3, n in [((0, 4), (2, 0, 3), 0), ((5, 0), (0, 0, 0), 0)]:
        args = _softmax_args(dt, np.ascontiguousarray, shape2, shape3, n)
        check_close(fns, args)
        out = fns["c"](*args)
        assert out[0].shape == shape2 and out[6].shape == shape3


def test_softmax_grad_matches_python_bit_for_bit() -> None:
    """No ``exp`` involved: NumPy's pairwise and row-by-row sums are reproduced exactly."""
    m, dm = ot.dmatrices("m", "dm")
    t, dt3 = ot.ftensor3("t"), ot.ftensor3("dt3")
    row = TensorType("float64", shape=(1, None))("row")
    col = TensorType("float64", shape=(None, 1))("col")
    fm = ot.fmatrix("fm")
    outs = [SoftmaxGrad(a)(dm, m) for a in (-1, 0, None)]
    outs += [SoftmaxGrad(a)(dt3, t) for a in (0, 1, 2, None)]
    outs += [SoftmaxGrad(-1)(row, m), SoftmaxGrad(0)(col, m)]  # broadcasting
    outs += [SoftmaxGrad(1)(m, fm), SoftmaxGrad(0)(fm, m)]  # mixed dtypes
    fns = compiled([m, dm, t, dt3, row, col, fm], outs)
    rng = np.random.default_rng(11)
    for shape in [(5, 300), (37, 4), (0, 3)]:
        a, b = rng.normal(size=shape), rng.normal(size=shape)
        c, d = (rng.normal(size=(4, 150, 3)).astype("float32") for _ in range(2))
        r, k = rng.normal(size=(1, shape[1])), rng.normal(size=(shape[0], 1))
        f32 = rng.normal(size=shape).astype("float32")
        args = (a, b, c, d, r, k, f32)
        check_close(fns, args, exact=range(len(outs)))
        check_close(fns, (np.asfortranarray(a), strided(b), strided(c), d, r, k, f32))
        if a.size:
            a[0, 0], b[1, 1] = np.inf, np.nan
        check_close(fns, (a, b, c, d, r, k, f32), exact=range(len(outs)))
    out = fns["c"](*args)
    assert [o.dtype.name for o in out[-2:]] == ["float32", "float64"]


def test_softmax_grad_broadcast_error_matches_python() -> None:
    dy = TensorType("float64", shape=(None, None))("dy")
    sm = TensorType("float32", shape=(None, None))("sm")
    fns = compiled([dy, sm], SoftmaxGrad(-1)(dy, sm))
    args = (np.ones((2, 3)), np.ones((2, 4), dtype="float32"))
    messages = set()
    for name in MODES:
        with pytest.raises(ValueError) as info:
            fns[name](*args)
        messages.add(str(info.value))
    assert messages == {"operands could not be broadcast together with shapes (2,3) (2,4) "}


def test_softmax_without_vector_math_matches_python() -> None:
    with opweave.config.change_flags(c__vector_math=False):
        x = ot.dmatrix("x")
        fns = compiled([x], [Softmax(-1)(x), LogSoftmax(0)(x)])
    a = _special_rows(np.random.default_rng(5).normal(size=(6, 40)) * 30)
    check_close(fns, (a,))


def test_no_reference_leaks() -> None:
    x = ot.dmatrix("x")
    dy = ot.dmatrix("dy")
    outs = [Softmax(0)(x), LogSoftmax(-1)(x), SoftmaxGrad(-1)(dy, x)]
    good = (np.ones((3, 4)), np.ones((3, 4)))
    bad = (np.ones((3, 4)), np.ones((3, 5)))
    strided_args = (strided(np.ones((3, 4))), np.ones((1, 4)))
    for name in ("c", "cvm"):
        f = opweave.function([x, dy], outs, mode=MODES[name])

        def calls(n, f=f):
            for _ in range(n):
                f(*good)
                f(*strided_args)
                with pytest.raises(ValueError):
                    f(*bad)
            gc.collect()

        calls(2)
        watched = [*good, *bad, *strided_args]
        refs = [sys.getrefcount(a) for a in watched]
        calls(300)
        assert [sys.getrefcount(a) for a in watched] == refs


# ====================================================================== the MLP step


def _mlp(data, linker):
    """The MLP SGD step of ``benchmarks/opweave_side.py`` (``mlp_graph``), compiled with
    the default rewrites and ``linker``."""
    w1, b1, w2, b2 = params = [opweave.shared(p.copy()) for p in data[2:]]
    x, t = ot.dmatrix("x"), ot.dmatrix("t")
    h = ot.tanh(ot.dot(x, w1) + b1)
    loss = -ot.mean(ot.sum(t * ot.log_softmax(ot.dot(h, w2) + b2, axis=-1), axis=1))
    grads = opweave.grad(loss, params)
    updates = [(p, p - 0.1 * g) for p, g in zip(params, grads, strict=True)]
    f = opweave.function([x, t], loss, updates=updates, mode=Mode(linker=linker))
    return f, params


def test_mlp_step_compiles_with_the_c_linker_and_matches_python() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 12))
    onehot = np.eye(5)[rng.integers(0, 5, size=16)]
    w1, w2 = rng.normal(scale=0.3, size=(12, 8)), rng.normal(scale=0.3, size=(8, 5))
    data = (x, onehot, w1, np.zeros(8), w2, np.zeros(5))
    results = {}
    for linker in ("py", "c"):
        f, params = _mlp(data, linker)
        ops = {type(n.op) for n in f.maker.fgraph.toposort()}
        assert LogSoftmax in ops
        losses = [float(f(x, onehot)) for _ in range(3)]
        results[linker] = (losses, [p.get_value() for p in params])
    (ref_losses, ref_params), (c_losses, c_params) = results["py"], results["c"]
    np.testing.assert_allclose(c_losses, ref_losses, rtol=1e-12)
    assert c_losses[2] < c_losses[0]  # the steps train
    for r, g in zip(ref_params, c_params, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-13)
