"""C code of the reductions (CAReduce: Sum, Prod, Max, Min, All, Any, bare CAReduce; Argmax,
Argmin): the values, dtypes and errors of the Python backend over dtypes, axes, strides and
empty inputs, on the ``c`` linker (which fails to compile a node without C) and ``cvm``."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.elemwise import CAReduce
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import Argmax, Argmin, Max, Sum

PY = Mode(linker="py", optimizer=None)
C = Mode(linker="c", optimizer=None)
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
#: Axis arguments tried; each dtype gets a few of them (every one is used somewhere).
AXES = [None, 0, 1, 2, -1, (0, 2), (0, 1), (1, 2), (), (-3, -1)]
RNG = np.random.default_rng(1234)


def _outcome(f, args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return "ok", f(*args)
    except Exception as exc:
        return "error", (type(exc), str(exc))


def _same(ref, got, where, rtol=0.0):
    assert ref[0] == got[0], f"{where}: {ref} != {got}"
    if ref[0] == "error":
        assert ref[1] == got[1], where
        return
    for r, g in zip(ref[1], got[1], strict=True):
        assert type(r) is type(g), where
        assert r.dtype == g.dtype and r.shape == g.shape, f"{where}: {r!r} != {g!r}"
        if rtol and r.dtype.kind == "f":
            np.testing.assert_allclose(g, r, rtol=rtol, atol=0, err_msg=where)
        else:
            np.testing.assert_array_equal(g, r, err_msg=where)


def check(inputs, outputs, cases, rtol=0.0, mode=C):
    """Compile on ``mode`` and ``py``; every case gives the same values or error in both."""
    fc = opweave.function(inputs, outputs, mode=mode)
    fp = opweave.function(inputs, outputs, mode=PY)
    for args in cases:
        for _ in range(2):  # the second call may reuse the previous outputs' memory
            _same(_outcome(fp, args), _outcome(fc, args), f"{outputs} on {args!r}", rtol)
    return fc


def _values(dtype, shape):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    if dtype.startswith("float"):
        return RNG.normal(size=shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def _layouts(a):
    """``a`` as it is, transposed (Fortran order), step-sliced and reversed, and broadcast
    (zero strides)."""
    wide = np.concatenate([a, a[::-1]], axis=2)
    return [
        a,
        np.asfortranarray(a),
        wide[:, ::-1, ::2],
        a[::-1, :, ::-1],
        np.broadcast_to(a[:1], a.shape),
    ]


def test_integer_and_bool_dtypes_every_op_and_axis():
    # One graph for every integer dtype and bool: full-range values, so sums and products
    # wrap around exactly as NumPy's.
    inputs, outputs = [], []
    for k, dtype in enumerate(["bool", *INT_DTYPES]):
        x = ot.tensor(f"x_{dtype}", dtype=dtype, shape=(None, None, None))
        ax_a, ax_b = AXES[k % len(AXES)], AXES[(k + 3) % len(AXES)]
        inputs.append(x)
        outputs += [
            ot.sum(x),
            ot.sum(x, axis=ax_a),
            ot.prod(x, axis=ax_b),
            ot.max(x, axis=ax_a),
            ot.min(x, axis=ax_b),
            ot.argmax(x, axis=ax_b),
            ot.argmin(x, axis=ax_a),
        ]
        if dtype == "bool":
            outputs += [ot.all(x, axis=ax_a), ot.any(x, axis=ax_b), ot.all(x), ot.any(x)]
    shapes = [(3, 4, 5), (1, 6, 1), (2, 3, 70)]
    cases = []
    for shape in shapes:
        arrays = [_layouts(_values(x.type.dtype, shape)) for x in inputs]
        cases += [[arrs[j] for arrs in arrays] for j in range(5)]
    # A bool input that is all True / all False somewhere.
    allsame = [np.ones((2, 3, 4), bool)] + [_values(x.type.dtype, (2, 3, 4)) for x in inputs[1:]]
    allsame[0][1] = False
    check(inputs, outputs, [*cases, allsame])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_dtypes_every_op_and_axis(dtype):
    x = ot.tensor("x", dtype=dtype, shape=(None, None, None))
    axes = [None, 0, 2, -1, (0, 2), (1, 2), ()]
    outputs = []
    for ax in axes:
        outputs += [
            ot.sum(x, axis=ax),
            ot.prod(x, axis=ax),
            ot.max(x, axis=ax),
            ot.min(x, axis=ax),
            ot.argmax(x, axis=ax),
            ot.argmin(x, axis=ax),
        ]
    cases = [[a] for a in _layouts(_values(dtype, (3, 4, 5)))]
    cases += [[a] for a in _layouts(_values(dtype, (4, 3, 300)))]  # rows over 128 (pairwise)
    special = _values(dtype, (3, 4, 5))
    special[0, 1, 2] = np.nan
    special[2, 0, 0] = np.nan
    special[1, 2, 3] = np.inf
    special[1, 3, :] = -np.inf
    special[2, 3, 4] = -0.0
    cases += [[a] for a in _layouts(special)]
    ties = np.zeros((3, 4, 5), dtype)  # argmax/argmin take the first of equal values
    ties[:, 1:3, 2:] = 1.0
    cases += [[ties], [ties[::-1, ::-1, ::-1]], [np.full((2, 2, 3), np.nan, dtype)]]
    # Long contiguous and strided rows (the vectorised kernels, blocks of 256 for argmax).
    long = _values(dtype, (2, 3, 5000))
    long[1, 2, 4321] = 50.0
    long[0, 1, 3000] = -50.0
    cases += [[long], [long[:, :, ::-3]], [np.asfortranarray(long)]]
    with_nan = long.copy()
    with_nan[1, 1, 2500] = np.nan
    cases += [[with_nan], [with_nan.transpose(1, 0, 2).copy().transpose(1, 0, 2)]]
    check([x], outputs, cases, rtol=2e-6 if dtype == "float32" else 1e-13)


def test_sums_are_accurate_and_handle_signed_zeros():
    x = ot.dvector("x")
    x32 = ot.fvector("x32")
    f = opweave.function([x, x32], [ot.sum(x), ot.sum(x32, dtype="float32")], mode=C)
    v = RNG.normal(size=1_000_003) * np.exp(RNG.normal(size=1_000_003) * 5)
    got, got32 = f(v, v.astype(np.float32))
    exact = math.fsum(v)
    assert abs(got - exact) <= 1e-13 * np.abs(v).sum()
    assert got32.dtype == np.float32
    assert abs(float(got32) - math.fsum(v.astype(np.float32))) <= 1e-6 * np.abs(v).sum()
    zeros = np.array([-0.0, -0.0])
    neg0 = f(zeros, np.zeros(1, np.float32))[0]
    # as numpy.sum (which starts from +0.0: a sum of negative zeros is +0.0)
    assert neg0 == 0.0 and math.copysign(1.0, neg0) == math.copysign(1.0, np.sum(zeros))
    empty = f(np.zeros(0), np.zeros(0, np.float32))[0]
    assert empty == 0.0 and math.copysign(1.0, empty) == 1.0


def test_dtype_and_acc_dtype_options_and_bare_careduce():
    x8 = ot.tensor("x8", dtype="int8", shape=(None, None))
    xf = ot.fmatrix("xf")
    xi = ot.lmatrix("xi")
    xu = ot.tensor("xu", dtype="uint16", shape=(None, None))
    s = ot.dscalar("s")
    outputs = [
        ot.sum(x8, axis=1, dtype="int8", acc_dtype="int8"),  # wraps in int8
        ot.sum(x8, dtype="float64"),
        ot.sum(x8, axis=0, dtype="int16"),
        ot.prod(x8, axis=1, dtype="float32"),
        ot.sum(xf, axis=0, dtype="float32", acc_dtype="float32"),
        ot.sum(xf, axis=1, dtype="float64"),
        ot.prod(xf, axis=0, dtype="float64"),
        ot.max(xf, axis=1),
        Sum(axis=1, dtype="bool")(x8),  # a bool sum: logical or
        Max(axis=0, dtype="float64", acc_dtype="float64")(xf),
        CAReduce(ps.xor, axis=1)(xi),
        CAReduce(ps.and_, axis=0)(xu),
        CAReduce(ps.or_)(xu),
        ot.sum(s),
        ot.max(s),
        ot.argmax(s),
        Argmin(())(xf),
    ]
    cases = []
    for shape in [(4, 6), (1, 300)]:
        a8, af = _values("int8", shape), _values("float32", shape)
        ai, au = _values("int64", shape), _values("uint16", shape)
        cases.append([a8, af, ai, au, np.float64(2.5)])
        cases.append([a8.T.copy().T, af[::-1], ai[:, ::-1], au.T.copy().T, np.float64(-1.0)])
    check([x8, xf, xi, xu, s], outputs, cases, rtol=1e-6)


def test_empty_inputs():
    x = ot.tensor("x", dtype="float32", shape=(None, None, None))
    b = ot.tensor("b", dtype="bool", shape=(None, None, None))
    outputs = [ot.sum(x, axis=ax) for ax in [None, 0, 1, (0, 2), ()]]
    outputs += [ot.prod(x, axis=1), ot.max(x, axis=()), ot.all(b, axis=0), ot.any(b)]
    shapes = [(0, 3, 2), (3, 0, 2), (0, 0, 0)]
    check([x, b], outputs, [[np.zeros(s, "float32"), np.zeros(s, bool)] for s in shapes])


@pytest.mark.parametrize(
    "build",
    [lambda x: ot.max(x, axis=1), lambda x: ot.min(x), lambda x: ot.argmax(x, axis=1)],
    ids=["max", "min", "argmax"],
)
def test_empty_reductions_without_identity_raise_like_numpy(build):
    x = ot.dtensor3("x")
    cases = [[np.zeros(s)] for s in [(3, 0, 2), (0, 3, 2), (0, 0, 0), (2, 3, 1)]]
    f = check([x], [build(x)], cases)
    with pytest.raises(ValueError, match=r"zero-size array|empty sequence"):
        f(np.zeros((2, 0, 2)))


def test_argmax_over_several_axes_with_an_empty_kept_axis():
    # NumPy's answer (the Python backend's reshape fails on this case).
    x = ot.dtensor3("x")
    f = opweave.function([x], [Argmax((0, 2))(x), Argmin((0, 2))(x)], mode=C)
    a = RNG.normal(size=(3, 4, 5))
    expect_max = a.transpose(1, 0, 2).reshape(4, -1).argmax(axis=1)
    expect_min = a.transpose(1, 0, 2).reshape(4, -1).argmin(axis=1)
    got = f(a)
    np.testing.assert_array_equal(got[0], expect_max)
    np.testing.assert_array_equal(got[1], expect_min)
    empty = f(np.zeros((3, 0, 5)))
    assert [(e.shape, e.dtype) for e in empty] == [((0,), np.int64)] * 2
    with pytest.raises(ValueError, match="of an empty sequence"):
        f(np.zeros((0, 4, 5)))


def test_cvm_runs_reductions_in_c_after_rewrites():
    x = ot.dmatrix("x")
    y = ot.lmatrix("y")
    outs = [ot.sum(x**2, axis=1), ot.max(ot.exp(x)), ot.argmin(y, axis=0), ot.mean(x, axis=0)]
    f = opweave.function([x, y], outs, mode=Mode(linker="cvm"))
    fp = opweave.function([x, y], outs, mode=Mode(linker="py"))
    order = f.maker.fgraph.toposort()
    reductions = [k for k, n in enumerate(order) if isinstance(n.op, CAReduce | Argmax | MapReduce)]
    assert len(reductions) == 4
    # sum(x ** 2) and max(exp(x)) are reductions of maps: one loop each, in C too.
    assert sum(isinstance(n.op, MapReduce) for n in order) == 2
    assert set(reductions) <= set(f.fn.c_nodes)
    args = [RNG.normal(size=(5, 7)), RNG.integers(-9, 9, size=(5, 7))]
    for got, ref in zip(f(*args), fp(*args), strict=True):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-13)


def test_results_do_not_alias_inputs_or_earlier_results():
    x = ot.dmatrix("x")
    f = opweave.function([x], [ot.sum(x, axis=()), ot.max(x, axis=0)], mode=C)
    a = RNG.normal(size=(3, 4))
    first = f(a)
    keep = [r.copy() for r in first]
    assert not np.shares_memory(first[0], a)
    f(a * 2)
    for r, k in zip(first, keep, strict=True):
        np.testing.assert_array_equal(r, k)
