"""C code of Alloc, MakeVector, TensorFromScalar, ScalarFromTensor, Eye, ARange, Join and
Split: the values, dtypes, views and errors of the Python backend, on ``c`` and ``cvm``."""

from __future__ import annotations

import gc
import re
import sys

import numpy as np
import pytest
from c_parity import DTYPES, MODES, check, compiled, linked

import opweave
import opweave.tensor as ot
from opweave.compile.debugmode import DebugMode
from opweave.tensor.basic import (
    ARange,
    Eye,
    Join,
    MakeVector,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
    alloc,
)
from opweave.tensor.subtensor import inc_subtensor
from opweave.tensor.type import TensorType
from opweave_c.linkers import CLinker, CVMLinker
from opweave_c.linkers.c_linker import MissingCCodeError

# ====================================================================== Alloc


@pytest.fixture(scope="module")
def alloc_fns():
    vs = [TensorType(d, shape=(None,))(f"v_{d}") for d in DTYPES]
    s = ot.fscalar("s")
    row = TensorType("int32", shape=(1, None))("row")
    n, m = ot.lscalar("n"), ot.scalar("m", dtype="uint8")
    outs = [alloc(v, n, 3) for v in vs]
    outs += [alloc(s, m, n), alloc(row, n, 4), alloc(s), alloc(row, 2, n, m)]
    return compiled([*vs, s, row, n, m], outs)


def _alloc_args(vlen=3, n=2, m=4, rowlen=4, layout=np.ascontiguousarray):
    vs = [layout(np.arange(vlen).astype(d)) for d in DTYPES]
    row = layout(np.arange(rowlen, dtype="int32").reshape(1, rowlen))
    return (*vs, np.float32(1.5), row, np.int64(n), np.uint8(m))


def test_alloc_values_and_errors(alloc_fns) -> None:
    def strided(a):
        return np.repeat(a, 2, axis=-1)[..., ::2]

    cases = [_alloc_args(), _alloc_args(layout=strided), _alloc_args(n=0, m=0, rowlen=0)]
    cases += [_alloc_args(rowlen=1, m=1), _alloc_args(n=5, m=4, vlen=3)]
    cases += [
        _alloc_args(n=-1),  # negative dimension
        _alloc_args(vlen=2),  # does not broadcast
        _alloc_args(vlen=1),  # run-time broadcasting of a length-1 dimension
        _alloc_args(rowlen=2),
        _alloc_args(rowlen=1),
    ]
    check(alloc_fns, cases)
    with pytest.raises(ValueError) as info:
        alloc_fns["c"](*_alloc_args(n=-1))
    assert re.fullmatch(r"Alloc: negative dimensions are not allowed: \(.*-1.*\)", str(info.value))


# ====================================================================== MakeVector and scalars


@pytest.fixture(scope="module")
def scalar_fns():
    xs = [TensorType(d, shape=())(f"x_{d}") for d in DTYPES]
    outs = [MakeVector(d)(x, x) for d, x in zip(DTYPES, xs, strict=True)]
    outs += [TensorFromScalar()(ScalarFromTensor()(x)) for x in xs]
    outs += [MakeVector("int64")(), MakeVector("float64")(xs[-1], 2.5, xs[-1])]
    return compiled(xs, outs)


def test_make_vector_and_scalar_round_trips(scalar_fns) -> None:
    for value in (0, 1, 7, 100):
        check(scalar_fns, [tuple(np.array(value, dtype=d) for d in DTYPES)])
    extremes = [1, -3, 65535, -7, -(2**40), 2**64 - 1, 0.1, -2.5e300]
    check(scalar_fns, [tuple(np.array(v, dtype=d) for d, v in zip(DTYPES, extremes, strict=True))])


def test_scalar_from_tensor_gives_a_numpy_scalar() -> None:
    x = ot.fscalar("x")
    s = ScalarFromTensor()(x)
    fns = compiled([x], [s, TensorFromScalar()(s)])
    for name in ("c", "cvm"):
        got, again = fns[name](np.float32(0.1))
        assert type(got) is np.float32 and got == np.float32(0.1)
        assert again.shape == () and again.dtype == np.float32


# ====================================================================== Eye and ARange


@pytest.fixture(scope="module")
def eye_arange_fns():
    n, m = ot.lscalar("n"), ot.iscalar("m")
    k = ot.scalar("k", dtype="int8")
    a, b, c = ot.dscalar("a"), ot.fscalar("b"), ot.lscalar("c")
    ia, ib = ot.iscalar("ia"), ot.scalar("ib", dtype="uint8")
    outs = [Eye(d)(n, m, k) for d in ("bool", "int16", "uint64", "float32", "float64")]
    outs += [
        ARange("float64")(a, b, c),
        ARange("float32")(a, b, a),
        ARange("int64")(ia, c, ib),
        ARange("int8")(ia, ib, c),
        ARange("uint16")(ib, c, ib),
        ARange("float64")(c, a, ia),
    ]
    return compiled([n, m, k, a, b, c, ia, ib], outs)


def _eye_args(n=3, m=4, k=0, a=0.5, b=7.25, c=2, ia=1, ib=3):
    return (
        np.int64(n),
        np.int32(m),
        np.int8(k),
        np.float64(a),
        np.float32(b),
        np.int64(c),
        np.int32(ia),
        np.uint8(ib),
    )


def test_eye_and_arange_values_and_errors(eye_arange_fns) -> None:
    cases = [
        _eye_args(),
        _eye_args(k=1),
        _eye_args(k=-2),
        _eye_args(k=9),
        _eye_args(k=-100),
        _eye_args(n=0, m=0),
        _eye_args(a=0.1, b=1.0, c=1, ia=-5, ib=200),
        _eye_args(a=-1.0, b=-5.0, c=-1, ia=10, ib=1),  # negative steps
        _eye_args(a=3.3, b=0.1, c=20),  # empty
        _eye_args(n=-1),  # Eye: negative dimension
        _eye_args(m=-2),
        _eye_args(c=0),  # ARange: a zero step
        _eye_args(a=0.0),
        _eye_args(ia=0, c=0),
    ]
    check(eye_arange_fns, cases)
    with pytest.raises(ValueError) as info:
        eye_arange_fns["c"](*_eye_args(n=-1, m=2))
    assert str(info.value) == "Eye: negative dimensions are not allowed: (-1, 2)"


# ====================================================================== Join and Split


@pytest.fixture(scope="module")
def join_fns():
    f32, i32 = ot.fmatrix("f32"), ot.imatrix("i32")
    u8, i64 = ot.matrix("u8", dtype="uint8"), ot.lmatrix("i64")
    bo = ot.matrix("bo", dtype="bool")
    ax = ot.lscalar("ax")
    outs = []
    for axis in (0, -1, ax):  # the axis is the first input: constant (normalized) or not
        outs += [
            Join()(axis, f32, i32),  # float64, as NumPy
            Join()(axis, u8, i64, bo),
            Join()(axis, f32, f32, f32),
        ]
    outs.append(Join()(1, u8, bo))
    return compiled([f32, i32, u8, i64, bo, ax], outs)


def _join_args(shapes=((2, 3),) * 5, layout=np.ascontiguousarray, axis=1):
    dtypes = ["float32", "int32", "uint8", "int64", "bool"]
    rng = np.random.default_rng(4)
    arrays = tuple(
        layout(rng.integers(0, 9, size=s).astype(d)) for s, d in zip(shapes, dtypes, strict=True)
    )
    return (*arrays, np.int64(axis))


def test_join_values_and_errors(join_fns) -> None:
    def strided(a):
        return np.asfortranarray(a)[::-1]

    cases = [_join_args(), _join_args(layout=strided), _join_args(layout=np.asfortranarray)]
    cases += [_join_args(axis=a) for a in (0, -1, -2)]
    cases += [_join_args(axis=a) for a in (2, -3, 2**40)]  # the symbolic axis out of range
    cases += [
        _join_args(((1, 3), (4, 3), (2, 3), (0, 3), (5, 3))),  # different lengths: an error
        _join_args(((2, 1), (2, 3), (2, 0), (2, 2), (2, 4))),  # along one axis or the other
        _join_args(((2, 3), (3, 2), (2, 3), (2, 3), (2, 3))),  # shapes do not match
    ]
    check(join_fns, cases)
    with pytest.raises(ValueError) as info:
        join_fns["c"](*_join_args(((2, 3), (2, 2), (2, 3), (2, 3), (2, 3))))
    assert str(info.value).startswith("Join: cannot join shapes [(2, 3), (2, 2)] along axis 0: ")
    with pytest.raises(ValueError) as info:
        join_fns["c"](*_join_args(axis=-3))
    assert re.fullmatch(
        r"Join: cannot join shapes \[\(2, 3\)(, \(2, 3\))+\] along axis -3: axis -3 is out "
        r"of bounds for array of dimension 2",
        str(info.value),
    )


@pytest.fixture(scope="module")
def split_fns():
    x = ot.tensor3("x", dtype="int16")
    axis = ot.lscalar("axis")
    sizes = ot.ivector("sizes")
    outs = [*Split(3)(x, axis, sizes), *Split(2)(x, 0, [1, 2])]
    return compiled([x, axis, sizes], outs)


def test_split_values_and_errors(split_fns) -> None:
    x = np.arange(60, dtype="int16").reshape(3, 4, 5)
    cases = [
        (x, np.int64(1), np.array([1, 0, 3], dtype="int32")),
        (x[::-1, :, ::2], np.int64(0), np.array([3, 0, 0], dtype="int32")),
        (x, np.int64(-1), np.array([2, 2, 1], dtype="int32")),
    ]
    cases += [
        (x, np.int64(3), np.array([1, 1, 1], dtype="int32")),  # axis out of range
        (x, np.int64(0), np.array([1, 1], dtype="int32")),  # wrong number of sizes
        (x, np.int64(0), np.array([4, -1, 0], dtype="int32")),  # negative
        (x, np.int64(2), np.array([1, 1, 1], dtype="int32")),  # sum differs
    ]
    check(split_fns, cases)


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_split_returns_views(linker_cls) -> None:
    x = ot.dmatrix("x")
    axis = ot.lscalar("axis")
    run = linked(linker_cls, [x, axis], Split(3)(x, axis, [1, 2, 1]))
    a = np.arange(16.0).reshape(4, 4)
    for arr, ax in ((a, 0), (a.T, 1), (a[::-1, ::2], 0)):
        pieces = run(arr, np.array(ax))
        expect = np.split(arr, [1, 3], axis=ax)
        for p, e in zip(pieces, expect, strict=True):
            np.testing.assert_array_equal(p, e)
            assert np.shares_memory(p, arr) and p.strides == e.strides


# ====================================================================== DebugMode, fallback, leaks


def test_debugmode_agrees_with_python_on_views_and_reused_outputs() -> None:
    """DebugMode runs each node's C against Python, checks view_map and refilled outputs."""
    x = ot.dmatrix("x")
    n = ot.lscalar("n")
    v = ot.dvector("v")
    a = alloc(v, n, 3)
    s = inc_subtensor(a[1:, ::-1], x[0])
    out = [
        ot.specify_shape(s.reshape((-1,)), (None,)),
        MakeVector("int64")(n, n),
        Join()(0, x, a),
        Eye("float32")(n, 3, 1),
    ]
    f = opweave.function([x, n, v], out, mode=DebugMode(optimizer=None))
    r = f(np.ones((2, 3)), 3, np.arange(3.0))
    assert list(r[0]) == [0.0, 1.0, 2.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]


def test_what_stays_in_python() -> None:
    h = ot.tensor("h", dtype="float16", shape=(None,))
    n = ot.lscalar("n")
    f = opweave.function([h, n], [alloc(h, n, 3), Eye("float16")(n, n, 0)], mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    r = f(np.ones(3, dtype="float16"), 2)
    assert r[0].dtype == np.float16 and r[1].dtype == np.float16
    with pytest.raises(MissingCCodeError, match="Alloc"):
        opweave.function([h, n], alloc(h, n, 3), mode=MODES["c"])


def test_no_reference_leaks(alloc_fns, join_fns) -> None:
    good, bad = _alloc_args(), _alloc_args(vlen=2)
    jgood, jbad = _join_args(), _join_args(((2, 3), (2, 2), (2, 3), (2, 3), (2, 3)))
    jbad_axis = _join_args(axis=7)
    for name in ("c", "cvm"):
        f, g = alloc_fns[name], join_fns[name]

        def calls(n, f=f, g=g):
            for _ in range(n):
                f(*good)
                g(*jgood)
                for fn, args in ((f, bad), (g, jbad), (g, jbad_axis)):
                    try:
                        fn(*args)
                    except ValueError:
                        pass
            gc.collect()

        calls(1)
        watched = [*good, *jgood]
        refs = [sys.getrefcount(a) for a in watched]
        calls(1000)
        assert [sys.getrefcount(a) for a in watched] == refs
