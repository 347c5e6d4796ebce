"""C code of the general advanced indexing Ops, on the ``c`` and ``cvm`` linkers.

``AdvancedIncSubtensor`` has a row loop for one integer vector on the leading axis (the form
that ``inc_subtensor(x[idx], y, ignore_duplicates=True)`` builds), ``AdvancedSubtensor`` a
take for one integer array on one axis with full slices elsewhere; every other index
(several arrays, masks, integers and slices anywhere) runs the general advanced indexing.
All give the Python backend's values and errors. The differential test over many indices
is ``tests/reliability/test_advanced_indexing_linkers.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
from c_parity import MODES, check, compiled, strided

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import grad
from opweave.link.capabilities import IMPLEMENTED
from opweave.link.implementations import entry_capability
from opweave.tensor.type import TensorType
from opweave_c.impls import c_code_for
from opweave_c.impls.advanced_indexing import AdvancedIndexTakeC, AdvancedIndexUpdateC
from opweave_c.impls.subtensor import C_OPS as SUBTENSOR_C_OPS
from opweave_c.impls.subtensor import AdvancedIncSubtensor1C, AdvancedTakeC
from opweave_c.linkers.c_linker import MissingCCodeError

st = sys.modules["opweave.tensor.subtensor"]


def _update(kind: str, view, y):
    if kind == "set":
        return ot.set_subtensor(view, y)
    return ot.inc_subtensor(view, y, ignore_duplicates=kind == "once")


@pytest.mark.parametrize("dtype", ["float64", "int32", "float32"])
def test_ignore_duplicates_and_defaults_match_python(dtype) -> None:
    x1 = TensorType(dtype, shape=(None,))("x1")
    x2 = TensorType(dtype, shape=(None, None))("x2")
    x3 = TensorType(dtype, shape=(None, None, None))("x3")
    i = ot.lvector("i")
    y2 = TensorType(dtype, shape=(None, None))("y2")
    outs = []
    for kind in ("set", "once", "acc"):
        outs += [
            _update(kind, x1[i], np.asarray(2, dtype=dtype)),
            _update(kind, x2[i], y2),
            _update(kind, x3[i], np.asarray(1, dtype=dtype)),
            _update(kind, x2[:, i], np.asarray(3, dtype=dtype)),
        ]
    once = [o for o in outs if isinstance(o.owner.op, st.AdvancedIncSubtensor)]
    assert len(once) == 3  # the axis-1 update goes through a transpose
    fns = compiled([x1, x2, x3, i, y2], outs)
    rng = np.random.default_rng(3)

    def case(ilist, ny):
        return (
            rng.integers(-5, 5, size=4).astype(dtype),
            rng.integers(-5, 5, size=(4, 4)).astype(dtype),
            rng.integers(-5, 5, size=(4, 2, 3)).astype(dtype),
            np.asarray(ilist, dtype=np.int64),
            rng.integers(-5, 5, size=(ny, 4)).astype(dtype),
        )

    check(
        fns,
        [
            case([0, 1, 0], 3),
            case([3, -1, 3, -4, 0], 5),
            case([], 0),
            case([2, 2, 2, 2], 4),
            case([0, 4], 2),  # out of bounds: the same IndexError everywhere
            case([0, 1], 3),  # a value of the wrong length: the same ValueError
        ],
    )
    args = case([0, 1, 0], 3)
    x1v, x2v, x3v, iv, y2v = args
    expected = []
    for kind in ("set", "once", "acc"):
        for a, key, v in [
            (x1v, iv, 2),
            (x2v, iv, y2v),
            (x3v, iv, 1),
            (x2v, (slice(None), iv), 3),
        ]:
            r = a.copy()
            if kind == "set":
                r[key] = v
            elif kind == "once":
                r[key] += np.asarray(v, dtype=dtype)
            else:
                np.add.at(r, key, np.asarray(v, dtype=dtype))
            expected.append(r)
    for got, exp in zip(fns["c"](*args), expected, strict=True):
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got, exp)


def test_advanced_take_matches_python() -> None:
    x = TensorType("float64", shape=(None, None, None))("x")
    j = ot.lmatrix("j")
    u = TensorType("uint64", shape=(None,))("u")
    outs = [x[j], x[:, j], st.advanced_subtensor(x, slice(None), slice(None), u)]
    outs.append(st.advanced_subtensor(x, u))
    assert all(isinstance(o.owner.op, st.AdvancedSubtensor) for o in outs)
    fns = compiled([x, j, u], outs)
    xv = np.arange(60.0).reshape(3, 4, 5)
    check(
        fns,
        [
            (xv, np.array([[0, -1], [2, 1]]), np.array([0, 2], dtype=np.uint64)),
            (xv, np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.uint64)),
            (xv, np.array([[0, 3]]), np.array([0], dtype=np.uint64)),  # 3: bad on axis 0
            (xv, np.array([[0, -4]]), np.array([0], dtype=np.uint64)),
            (xv, np.array([[0]]), np.array([2**63 + 1], dtype=np.uint64)),
            (xv[:, ::-1, ::2], np.array([[1]]), np.array([2], dtype=np.uint64)),
        ],
    )
    got = fns["cvm"](xv, np.array([[0, -1], [2, 1]]), np.array([0, 2], dtype=np.uint64))
    np.testing.assert_array_equal(got[1], xv[:, [[0, -1], [2, 1]]])


@pytest.mark.parametrize("kind", ["set", "once"])
def test_last_write_gradients_compile_to_c(kind) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    i = ot.lvector("i")
    out = _update(kind, x[i], y)
    w = ot.dmatrix("w")
    gx, gy = grad(ot.sum(out * w), [x, y])
    fns = compiled([x, y, i, w], [gx, gy])
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    check(fns, [(xv, rng.standard_normal((4, 2)), np.array([0, 2, 0, -1]), wv)])
    _, got_gy = fns["c"](xv, np.ones((3, 2)), np.array([0, 1, 0]), wv)
    np.testing.assert_array_equal(got_gy, [[0, 0], wv[1], wv[0]])


def test_general_forms_compile_to_c() -> None:
    x = ot.dmatrix("x")
    mask = TensorType("bool", shape=(None,))("m")
    outs = [x[[0, 1], [1, 0]], x[mask], ot.inc_subtensor(x[[0, 0], [1, 1]], 1.0)]
    fns = compiled([x, mask], outs)
    ops = {type(node.op) for node in fns["c"].maker.fgraph.toposort()}
    assert ops == {st.AdvancedSubtensor, st.AdvancedIncSubtensor}
    impls = {type(c_code_for(node.op, node)) for node in fns["c"].maker.fgraph.toposort()}
    assert impls == {AdvancedIndexTakeC, AdvancedIndexUpdateC}
    xv = np.arange(6.0).reshape(2, 3)
    mv = np.array([False, True])
    expected_inc = xv.copy()
    np.add.at(expected_inc, ([0, 0], [1, 1]), 1.0)
    for got, exp in zip(fns["c"](xv, mv), [xv[[0, 1], [1, 0]], xv[mv], expected_inc], strict=True):
        np.testing.assert_array_equal(got, exp)
    check(fns, [(xv, mv), (xv, np.array([True])), (strided(xv), np.array([True, True]))])


def test_fast_paths_are_kept() -> None:
    x = ot.dtensor3("x")
    i = ot.lvector("i")
    take = st.advanced_subtensor(x, slice(None), i)
    inc = ot.inc_subtensor(x[i], 1.0, ignore_duplicates=True)
    assert isinstance(inc.owner.op, st.AdvancedIncSubtensor)
    assert isinstance(c_code_for(take.owner.op, take.owner), AdvancedTakeC)
    assert isinstance(c_code_for(inc.owner.op, inc.owner), AdvancedIncSubtensor1C)


def test_advanced_indexing_is_complete_in_c() -> None:
    for cls in (st.AdvancedSubtensor, st.AdvancedIncSubtensor):
        assert entry_capability(SUBTENSOR_C_OPS[cls]) == IMPLEMENTED, cls


def test_float16_and_complex_run_in_python_under_cvm() -> None:
    outs = []
    ins = []
    for dtype in ("float16", "complex128"):
        x = TensorType(dtype, shape=(None, None))(f"x_{dtype}")
        ins.append(x)
        outs += [x[[0, 1], [1, 0]], ot.inc_subtensor(x[[0, 0], [1, 1]], 1)]
    f = opweave.function(ins, outs, mode=Mode(linker="cvm", optimizer=None))
    assert f.fn.c_nodes == []
    a, b = np.arange(6, dtype="float16").reshape(2, 3), np.arange(6) * (1 + 1j)
    got = f(a, b.reshape(2, 3))
    np.testing.assert_array_equal(got[0], a[[0, 1], [1, 0]])
    np.testing.assert_array_equal(got[3][0, 1], 1 + 1j + 2)
    with pytest.raises(MissingCCodeError, match="AdvancedSubtensor"):
        opweave.function(ins[:1], outs[0], mode=MODES["c"])


def test_gradients_through_advanced_indexing_compile_to_c() -> None:
    x = ot.dtensor3("x")
    i, j = ot.lvector("i"), ot.lmatrix("j")
    m = TensorType("bool", shape=(None,))("m")
    reads = [x[i, :, j], x[1:, i, j], x[i, 1, ::-1], x[:, m]]
    assert all(isinstance(r.owner.op, st.AdvancedSubtensor) for r in reads)
    ws = [TensorType("float64", shape=(None,) * r.ndim)(f"w{k}") for k, r in enumerate(reads)]
    cost = sum(ot.sum(r * w) for r, w in zip(reads, ws, strict=True))
    g = grad(cost, x)
    py_nodes = opweave.function([x, i, j, m, *ws], g, mode=MODES["py"]).maker.fgraph.toposort()
    assert any(isinstance(node.op, st.AdvancedIncSubtensor) for node in py_nodes)
    fns = compiled([x, i, j, m, *ws], g)
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((3, 4, 5))
    iv, jv = np.array([0, 2, 2]), np.array([[1, -1, 1], [0, 0, 3]])
    mv = np.array([True, False, True, True])
    keys: list[tuple[Any, ...]] = [
        (iv, slice(None), jv),
        (slice(1, None), iv, jv),
        (iv, 1, slice(None, None, -1)),
        (slice(None), mv),
    ]
    wvs = [rng.standard_normal(xv[k].shape) for k in keys]
    check(fns, [(xv, iv, jv, mv, *wvs), (xv, iv, jv + 7, mv, *wvs)])
    expected = np.zeros_like(xv)
    for k, w in zip(keys, wvs, strict=True):
        np.add.at(expected, k, w)
    np.testing.assert_allclose(fns["c"](xv, iv, jv, mv, *wvs), expected, rtol=1e-14)


def _views(v: Any) -> list[Any]:
    """``v`` and views of it in other memory orders (as the graph computes them)."""
    return [v, v[::-1, ::-1], v.T, v[:, ::-1], v[::-1]]


@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_repeated_writes_keep_numpys_last_in_any_layout(idx_dtype: str) -> None:
    """Without a subspace NumPy writes in the memory order of the index arrays and the
    value (an NpyIter in K order): the C code keeps the same last write, when setting and
    when adding once (``ignore_duplicates``)."""
    x = ot.dmatrix("x")
    i = TensorType(idx_dtype, shape=(None, None))("i")
    y = ot.dmatrix("y")
    k = ot.lvector("k")
    outs = []
    for iv in _views(i):
        for yv in _views(y):
            outs.append(ot.set_subtensor(x[iv, k[0]], yv))
            outs.append(ot.inc_subtensor(x[iv, k[0]], yv, ignore_duplicates=True))
    fns = compiled([x, i, y, k], outs)
    rng = np.random.default_rng(2)
    xv = np.zeros((3, 2))
    ivs = rng.integers(0, 3, size=(4, 4)).astype(idx_dtype)
    yvs = rng.permutation(16).reshape(4, 4).astype("float64")
    args = (xv, ivs, yvs, np.array([1]))
    check(fns, [args])
    got = fns["c"](*args)
    n = 0
    for iv in _views(ivs):
        for yv in _views(yvs):
            exp = xv.copy()
            exp[iv, 1] = yv
            np.testing.assert_array_equal(got[n], exp)
            exp = xv.copy()
            exp[iv, 1] += yv
            np.testing.assert_array_equal(got[n + 1], exp)
            n += 2
