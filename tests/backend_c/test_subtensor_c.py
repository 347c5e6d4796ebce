"""C code of Subtensor, IncSubtensor, AdvancedSubtensor1 and AdvancedIncSubtensor1: the values,
dtypes, views and errors of the Python backend, on the ``c`` and ``cvm`` linkers."""

from __future__ import annotations

import gc
import itertools
import re
import sys

import numpy as np
import pytest
from c_parity import MODES, check, compiled, linked, strided

import opweave
import opweave.tensor as ot
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor1,
    IncSubtensor,
    advanced_inc_subtensor1,
    advanced_set_subtensor1,
    inc_subtensor,
    set_subtensor,
)
from opweave.tensor.type import TensorType
from opweave_c.linkers import CLinker, CVMLinker
from opweave_c.linkers.c_linker import MissingCCodeError

DTYPES = ["bool", "int8", "uint16", "int32", "uint64", "float32", "float64"]


# ====================================================================== Subtensor


@pytest.fixture(scope="module")
def subtensor_fns():
    xs = [TensorType(d, shape=(None, None, None))(f"x_{d}") for d in DTYPES]
    i = ot.lscalar("i")
    j = ot.iscalar("j")
    k = ot.scalar("k", dtype="int8")
    u = ot.scalar("u", dtype="uint16")
    outs = []
    for x in xs:
        outs += [x[1:, i], x[::-1, j:k:-1], x[i, u:]]
    x = xs[-1]
    outs += [
        x[-1, -2, ::2],
        x[j::k],
        x[i:j, ::k, u],
        x[:, -3:],
        x[i, j, k],
        x[::-2, :i:-1],
        x[::u],
        x[2:-1:2, k:, -1],
    ]
    return compiled([*xs, i, j, k, u], outs)


def _index_cases():
    return [(1, 2, -1, 1), (0, 3, 1, 0), (-1, -2, -3, 2), (2, 0, 2, 5), (-3, 1, 1, 3)]


@pytest.mark.parametrize("layout", ["contiguous", "strided", "fortran"])
def test_subtensor_values_over_dtypes_and_indices(subtensor_fns, layout) -> None:
    base = np.random.default_rng(1).integers(0, 50, size=(3, 4, 5))
    arrays = [base.astype(d) for d in DTYPES]
    if layout == "strided":
        arrays = [strided(a) for a in arrays]
    elif layout == "fortran":
        arrays = [np.asfortranarray(a) for a in arrays]
    cases = [
        (*arrays, np.int64(i), np.int32(j), np.int8(k), np.uint16(u))
        for i, j, k, u in _index_cases()
    ]
    check(subtensor_fns, cases)


def test_subtensor_errors_match_python(subtensor_fns) -> None:
    arrays = [np.ones((3, 4, 5), dtype=d) for d in DTYPES]
    cases = [
        (*arrays, np.int64(i), np.int32(j), np.int8(k), np.uint16(u))
        for i, j, k, u in [
            (3, 1, 1, 1),  # out of range on axis 0 (x[i])
            (-4, 1, 1, 1),  # negative, out of range
            (1, 2, 0, 1),  # a zero step
            (1, 2, 1, 0),  # x[::u] with a zero step
            (2, 1, 7, 1),  # x[i, j, k]: k out of range on axis 2
            (1, 1, -1, 1),  # fine
        ]
    ]
    check(subtensor_fns, cases)
    f = subtensor_fns["c"]
    with pytest.raises(IndexError) as info:
        f(*arrays, np.int64(3), np.int32(1), np.int8(1), np.uint16(1))
    assert re.fullmatch(
        r"Subtensor\{[^}]*\}: index 3 is out of bounds for axis [01] with size [34] "
        r"\(input shape \(3, 4, 5\)\)",
        str(info.value),
    )
    with pytest.raises(ValueError) as info:
        subtensor_fns["cvm"](*arrays, np.int64(1), np.int32(2), np.int8(0), np.uint16(1))
    assert str(info.value) == "slice step cannot be zero"


def test_subtensor_bounds_far_out_of_range_clamp_like_python() -> None:
    x = ot.dmatrix("x")
    a = ot.lscalar("a")
    b = ot.scalar("b", dtype="uint64")
    c = ot.scalar("c", dtype="int8")
    outs = [x[a:b], x[b:a:-1], x[:, a::c], x[a], x[-5], x[:, b]]
    fns = compiled([x, a, b, c], outs)
    m = np.arange(12.0).reshape(3, 4)
    big, huge = np.iinfo("int64").max, np.uint64(2**64 - 1)
    cases = [
        (m, np.int64(-(2**63)), huge, np.int8(-128)),
        (m, np.int64(big), np.uint64(1), np.int8(1)),
        (m, np.int64(-2), np.uint64(2), np.int8(-1)),
        (m, np.int64(1), np.uint64(2), np.int8(1)),
    ]
    check(fns, cases)  # x[-5] fails: the error is NumPy's IndexError, named by the Op
    y = ot.dvector("y")
    g = compiled([y, b, c], [y[b:], y[c:b:c], y[b]])
    v = np.arange(5.0)
    check(g, [(v, np.uint64(2), np.int8(-1)), (v, huge, np.int8(2)), (v, huge, np.int8(-2))])


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_subtensor_returns_views(linker_cls) -> None:
    x = ot.ftensor3("x")
    i = ot.lscalar("i")
    outs = [x[1:][::2], x[i, ::-1], x[i, 0, i], x[:, i:]]
    run = linked(linker_cls, [x, i], outs)
    a = np.arange(60, dtype="float32").reshape(3, 4, 5)
    for arr in (a, strided(a), np.asfortranarray(a)):
        results = run(arr, np.array(1))
        expected = [arr[1:][::2], arr[1, ::-1], arr[1, 0, 1], arr[:, 1:]]
        for r, e in zip(results, expected, strict=True):
            assert isinstance(r, np.ndarray) and r.shape == e.shape and r.strides == e.strides
            np.testing.assert_array_equal(r, e)
            assert np.shares_memory(r, arr)
            assert r.flags.writeable
    ro = a.copy()
    ro.flags.writeable = False
    assert not any(r.flags.writeable for r in run(ro, np.array(2)))


# ====================================================================== IncSubtensor


@pytest.fixture(scope="module")
def inc_fns():
    x = ot.fmatrix("x")
    xi = ot.matrix("xi", dtype="int16")
    xb = ot.matrix("xb", dtype="bool")
    y = ot.dvector("y")
    yi = ot.vector("yi", dtype="int8")
    yb = ot.vector("yb", dtype="bool")
    z = TensorType("float32", shape=(1, None))("z")
    i = ot.lscalar("i")
    outs = [
        set_subtensor(x[i, 1:], y),
        inc_subtensor(x[::-1, i], y[:3]),
        inc_subtensor(xi[1:, i], yi),
        set_subtensor(xi[i], 7),
        inc_subtensor(xb[:, ::2], yb),
        set_subtensor(xb[i, i], True),
        inc_subtensor(x[1:], z),  # statically broadcastable rows
        inc_subtensor(x[i:, :2], 2.5),
    ]
    return compiled([x, xi, xb, y, yi, yb, z, i], outs)


def _inc_args(i=1, ylen=4, ylen_i=2, ylen_b=3, zlen=5, layout=np.ascontiguousarray):
    rng = np.random.default_rng(2)
    x = layout(rng.normal(size=(3, 5)).astype("float32"))
    xi = layout(rng.integers(-100, 100, size=(3, 5)).astype("int16"))
    xb = layout(rng.integers(0, 2, size=(3, 5)).astype("bool"))
    y = rng.normal(size=ylen)
    yi = rng.integers(-100, 100, size=ylen_i).astype("int8")
    yb = rng.integers(0, 2, size=ylen_b).astype("bool")
    z = rng.normal(size=(1, zlen)).astype("float32")
    return (x, xi, xb, y, yi, yb, z, np.int64(i))


@pytest.mark.parametrize("layout", [np.ascontiguousarray, np.asfortranarray, strided])
def test_inc_subtensor_values(inc_fns, layout) -> None:
    check(inc_fns, [_inc_args(i, layout=layout) for i in (0, 1, 2, -1, -3)])


def test_inc_subtensor_errors_match_python(inc_fns) -> None:
    cases = [
        _inc_args(i=3),  # out of range
        _inc_args(i=-4),
        _inc_args(ylen=5),  # y does not fit x[i, 1:]
        _inc_args(ylen=1),  # run-time broadcasting of y is refused
        _inc_args(ylen_i=1),
        _inc_args(ylen_b=1),
        _inc_args(zlen=1),
    ]
    check(inc_fns, cases)
    with pytest.raises(ValueError) as info:
        inc_fns["c"](*_inc_args(ylen=1))
    assert re.match(
        r"(Inc|Set)Subtensor\{[^}]*\}: run-time broadcasting is not allowed: dimension 0 of "
        r"the value has length 1 but its static length is unknown, and the target has length 3",
        str(info.value),
    )


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_inplace_inc_subtensor_writes_into_its_input(linker_cls) -> None:
    x, x2 = ot.dmatrix("x"), ot.dmatrix("x2")
    y = ot.dvector("y")
    i = ot.lscalar("i")
    idx = ot.lscalar().type
    outs = [
        IncSubtensor((slice(1, None), idx), inplace=True)(x, y, i),
        IncSubtensor((idx, slice(2, None)), set_instead_of_inc=True)(x2, y, i),
    ]
    run = linked(linker_cls, [x, x2, y, i], outs)
    a, b = np.zeros((3, 4)), np.zeros((3, 4))
    inplace, copy = run(a, b, np.array([1.0, 2.0]), np.array(-1))
    assert inplace is a and list(a[:, -1]) == [0.0, 1.0, 2.0] and a.sum() == 3.0
    assert not np.shares_memory(copy, b) and list(copy[-1]) == [0.0, 0.0, 1.0, 2.0]
    assert not b.any()


# ====================================================================== AdvancedSubtensor1


@pytest.fixture(scope="module")
def take_fns():
    xs = [TensorType(d, shape=(None, None))(f"x_{d}") for d in DTYPES]
    il = ot.lvector("il")
    ii = ot.vector("ii", dtype="int8")
    iu = ot.vector("iu", dtype="uint32")
    outs = [x[il] for x in xs] + [xs[-1][ii], xs[0][iu], xs[1][iu]]
    return compiled([*xs, il, ii, iu], outs)


def test_advanced_subtensor1_values_and_errors(take_fns) -> None:
    base = np.random.default_rng(3).integers(0, 9, size=(4, 3))
    cases = []
    for layout in (np.ascontiguousarray, np.asfortranarray, strided):
        arrays = [layout(base.astype(d)) for d in DTYPES]
        for il, ii, iu in [
            ([0, -1, 2, 2], [3, -4], [1]),
            ([], [], []),
            ([1], [0, 0, 0], [3, 2, 1, 0]),
        ]:
            cases.append(
                (
                    *arrays,
                    np.array(il, dtype="int64"),
                    np.array(ii, dtype="int8"),
                    np.array(iu, dtype="uint32"),
                )
            )
    arrays = [base.astype(d) for d in DTYPES]
    for il, ii, iu in [([0, 4], [0], [0]), ([-5], [0], [0]), ([0], [-5], [0]), ([0], [0], [9])]:
        cases.append(
            (
                *arrays,
                np.array(il, dtype="int64"),
                np.array(ii, dtype="int8"),
                np.array(iu, dtype="uint32"),
            )
        )
    check(take_fns, cases)
    with pytest.raises(IndexError, match=r"^AdvancedSubtensor1: index 4 is out of bounds"):
        take_fns["c"](*cases[-4])


# ====================================================================== AdvancedIncSubtensor1


@pytest.fixture(scope="module")
def adv_inc_fns():
    x = ot.dmatrix("x")
    x3 = ot.ftensor3("x3")
    xi = ot.matrix("xi", dtype="int8")
    xu = ot.vector("xu", dtype="uint16")
    xb = ot.matrix("xb", dtype="bool")
    y = ot.dmatrix("y")
    yv = ot.dvector("yv")
    y3 = ot.ftensor3("y3")
    yi = ot.matrix("yi", dtype="int8")
    yrow = TensorType("float32", shape=(1, None))("yrow")
    yb = ot.vector("yb", dtype="bool")
    il = ot.lvector("il")
    ii = ot.vector("ii", dtype="int8")
    iu = ot.vector("iu", dtype="uint32")
    outs = [
        advanced_inc_subtensor1(x, y, il),  # repeated rows accumulate
        advanced_set_subtensor1(x, y, il),  # the last of repeated rows wins
        advanced_inc_subtensor1(x, yv, ii),  # one row broadcast to every index
        advanced_set_subtensor1(x, 2.5, iu),
        advanced_inc_subtensor1(x, yrow, il),  # float32 rows, statically broadcast
        advanced_inc_subtensor1(x3, y3, ii),
        advanced_set_subtensor1(x3, y3[0], iu),  # one block to every index
        advanced_inc_subtensor1(xi, yi, il),  # int8 sums wrap around
        advanced_inc_subtensor1(xu, 40000, ii),
        advanced_set_subtensor1(xu, xu[-1], il),
        advanced_inc_subtensor1(xb, yb, iu),  # bool "sums" are or
        advanced_set_subtensor1(xb, False, il),
    ]
    return compiled([x, x3, xi, xu, xb, y, yv, y3, yi, yrow, yb, il, ii, iu], outs)


def _adv_inc_args(
    il=(0, -1, 2, 0, 0), ii=(1, -3, 1, 1, 1), iu=(3, 0, 0, 2, 0), layout=None, **sizes
):
    """Arguments for :func:`adv_inc_fns`; ``sizes`` overrides a value's leading length."""
    layout = layout or np.ascontiguousarray
    rng = np.random.default_rng(4)
    m, n = len(il), sizes.get("n", 3)
    vals = {
        "x": rng.normal(size=(4, 3)),
        "x3": rng.normal(size=(4, 2, 3)).astype("float32"),
        "xi": rng.integers(-128, 128, size=(4, 3)).astype("int8"),
        "xu": rng.integers(0, 60000, size=4).astype("uint16"),
        "xb": rng.integers(0, 2, size=(4, 3)).astype("bool"),
        "y": rng.normal(size=(sizes.get("y", m), 3)),
        "yv": rng.normal(size=sizes.get("yv", n)),
        "y3": rng.normal(size=(sizes.get("y3", m), 2, 3)).astype("float32"),
        "yi": rng.integers(60, 128, size=(m, 3)).astype("int8"),
        "yrow": rng.normal(size=(1, n)).astype("float32"),
        "yb": rng.integers(0, 2, size=3).astype("bool"),
    }
    vals = {k: layout(v) for k, v in vals.items()}
    return (
        *vals.values(),
        np.array(il, dtype="int64"),
        np.array(ii, dtype="int8"),
        np.array(iu, dtype="uint32"),
    )


@pytest.mark.parametrize("layout", [np.ascontiguousarray, np.asfortranarray, strided])
def test_advanced_inc_subtensor1_values(adv_inc_fns, layout) -> None:
    cases = [
        _adv_inc_args(layout=layout),
        _adv_inc_args((3, 3, 3, 3, 3), (-4, -4, 0, 3, 2), (1, 1, 1, 1, 1), layout=layout),
        _adv_inc_args((), (), (), layout=layout),
    ]
    check(adv_inc_fns, cases)
    out = adv_inc_fns["c"](*cases[0])
    x, y = cases[0][0], cases[0][5]
    np.testing.assert_array_equal(out[0][0], x[0] + y[0] + y[3] + y[4])
    np.testing.assert_array_equal(out[1][0], y[4])
    assert out[7].dtype == np.int8 and out[10].dtype == np.bool_


def test_advanced_inc_subtensor1_errors_match_python(adv_inc_fns) -> None:
    cases = [
        _adv_inc_args(il=(0, 4, 0, 0, 0)),  # out of range
        _adv_inc_args(il=(0, -5, 9, 0, 0)),  # the first bad index is named
        _adv_inc_args(ii=(0, 0, -5, 0, 0)),
        _adv_inc_args(iu=(0, 0, 0, 0, 4)),
        _adv_inc_args(y=4),  # y does not fit the indexed rows
        _adv_inc_args(yv=2),
        _adv_inc_args(yv=1),  # run-time broadcasting is refused
        _adv_inc_args(y3=1),
    ]
    check(adv_inc_fns, cases)
    with pytest.raises(IndexError) as info:
        adv_inc_fns["c"](*cases[1])
    assert re.fullmatch(
        r"Advanced(Inc|Set)Subtensor1: index -5 is out of bounds for axis 0 with size 4",
        str(info.value),
    )
    with pytest.raises(ValueError) as info:
        adv_inc_fns["cvm"](*cases[4])
    assert re.fullmatch(
        r"Advanced(Inc|Set)Subtensor1: cannot broadcast a value of shape \(4, 3\) to \(5, 3\)",
        str(info.value),
    )


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_inplace_advanced_inc_subtensor1_writes_into_its_input(linker_cls) -> None:
    x, x2 = ot.dmatrix("x"), ot.dmatrix("x2")
    y = ot.dvector("y")
    il = ot.lvector("il")
    outs = [
        AdvancedIncSubtensor1(inplace=True)(x, y, il),
        AdvancedIncSubtensor1(inplace=True, set_instead_of_inc=True)(x2, y, il),
    ]
    run = linked(linker_cls, [x, x2, y, il], outs)
    a, b = np.zeros((3, 2)), np.zeros((3, 2))
    inc, put = run(a, b, np.array([1.0, 2.0]), np.array([-1, 0, -1]))
    assert inc is a and a.tolist() == [[1.0, 2.0], [0.0, 0.0], [2.0, 4.0]]
    assert put is b and b.tolist() == [[1.0, 2.0], [0.0, 0.0], [1.0, 2.0]]
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        run(a, b, np.array([1.0, 2.0]), np.array([0, 3]))
    assert a.tolist() == [[1.0, 2.0], [0.0, 0.0], [2.0, 4.0]]  # checked before writing
    b.flags.writeable = False
    with pytest.raises(ValueError, match=r"^assignment destination is read-only"):
        run(a, b, np.array([1.0, 2.0]), np.array([0]))


# ====================================================================== fallback and leaks


def test_what_stays_in_python() -> None:
    h = ot.tensor("h", dtype="float16", shape=(None,))
    x = ot.dvector("x")
    il = ot.lvector("il")
    y = ot.dvector("y")
    hy = ot.tensor("hy", dtype="float16", shape=(None,))
    outs = [h[1:], advanced_inc_subtensor1(x, y, il), advanced_inc_subtensor1(h, hy, il)]
    f = opweave.function([h, x, il, y, hy], outs, mode=MODES["cvm"])
    nodes = f.maker.fgraph.toposort()
    in_c = [nodes[k] for k in f.fn.c_nodes]
    assert [type(n.op) for n in in_c] == [AdvancedIncSubtensor1]
    assert in_c[0].inputs[0].type.dtype == "float64"
    half = np.ones(2, dtype="float16")
    r = f(np.ones(3, dtype="float16"), np.zeros(3), np.array([0, 0]), np.ones(2), half)
    assert list(r[0]) == [1.0, 1.0] and list(r[1]) == [2.0, 0.0, 0.0]
    assert list(r[2]) == [3.0, 1.0, 1.0]
    with pytest.raises(MissingCCodeError, match=r"Subtensor\{1:\} has no C"):
        opweave.function([h], h[1:], mode=MODES["c"])


def test_no_reference_leaks(subtensor_fns, inc_fns, adv_inc_fns) -> None:
    arrays = [np.ones((3, 4, 5), dtype=d) for d in DTYPES]
    good = (*arrays, np.int64(1), np.int32(2), np.int8(-1), np.uint16(1))
    bad = (*arrays, np.int64(9), np.int32(2), np.int8(-1), np.uint16(1))
    inc_good, inc_bad = _inc_args(), _inc_args(ylen=5)
    adv_good = _adv_inc_args(layout=strided)
    adv_bads = [_adv_inc_args(il=(0, 4, 0, 0, 0)), _adv_inc_args(y=4), _adv_inc_args(yv=1)]
    for name in ("c", "cvm"):
        f, g, h = subtensor_fns[name], inc_fns[name], adv_inc_fns[name]

        def calls(n, f=f, g=g, h=h):
            for _ in range(n):
                f(*good)
                g(*inc_good)
                h(*adv_good)
                for fn, args in ((f, bad), (g, inc_bad), *((h, b) for b in adv_bads)):
                    try:
                        fn(*args)
                    except (IndexError, ValueError):
                        pass
            gc.collect()

        calls(1)
        watched = [*arrays, *inc_good, *adv_good]
        refs = [sys.getrefcount(a) for a in watched]
        calls(1000)
        assert [sys.getrefcount(a) for a in watched] == refs


def test_every_index_kind_combination_compiles_once() -> None:
    """All constant/symbolic mixes of a slice's bounds, in one graph."""
    x = ot.dvector("x")
    a, b, c = ot.lscalar("a"), ot.lscalar("b"), ot.lscalar("c")
    choices = [(1, a), (-2, b), (None, c)]
    outs = [x[s:t:p] for s, t, p in itertools.product(*choices)]
    fns = compiled([x, a, b, c], outs)
    v = np.arange(7.0)
    check(fns, [(v, np.int64(p), np.int64(q), np.int64(r)) for p, q, r in [(1, 5, 2), (-1, 0, -2)]])
