"""C code of the general advanced indexing Ops, on the ``c`` and ``cvm`` linkers.

``AdvancedIncSubtensor`` has C for one integer vector on the leading axis (the form that
``inc_subtensor(x[idx], y, ignore_duplicates=True)`` builds), ``AdvancedSubtensor`` for one
integer array on one axis with full slices elsewhere; both give the Python backend's values
and errors. Other forms run in Python under ``cvm`` and are refused by ``c``.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from c_parity import MODES, check, compiled

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import grad
from opweave.tensor.type import TensorType
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


def test_other_forms_run_in_python_under_cvm() -> None:
    x = ot.dmatrix("x")
    mask = TensorType("bool", shape=(None,))("m")
    outs = [x[[0, 1], [1, 0]], x[mask], ot.inc_subtensor(x[[0, 0], [1, 1]], 1.0)]
    f = opweave.function([x, mask], outs, mode=Mode(linker="cvm", optimizer=None))
    order = f.maker.fgraph.toposort()
    in_python = [order[k].op for k in range(len(order)) if k not in f.fn.c_nodes]
    assert {type(op) for op in in_python} == {st.AdvancedSubtensor, st.AdvancedIncSubtensor}
    xv = np.arange(6.0).reshape(2, 3)
    mv = np.array([False, True])
    expected_inc = xv.copy()
    np.add.at(expected_inc, ([0, 0], [1, 1]), 1.0)
    for got, exp in zip(f(xv, mv), [xv[[0, 1], [1, 0]], xv[mv], expected_inc], strict=True):
        np.testing.assert_array_equal(got, exp)
    with pytest.raises(MissingCCodeError, match="AdvancedSubtensor"):
        opweave.function([x], x[[0, 1], [1, 0]], mode=MODES["c"])
