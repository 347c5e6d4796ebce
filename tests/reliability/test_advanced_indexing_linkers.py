"""Advanced indexing on every linker: ``py``, ``c`` (the whole graph in C) and ``cvm`` give
the same values, dtypes and errors, and the values are NumPy's, bit for bit.

Each case is an index mixing slices (constant or symbolic bounds), integers (constant or
symbolic), integer arrays of several dimensions and dtypes, and boolean masks, in every
position. One function per case reads ``x[idx]`` and updates ``x[idx]`` the three ways
(set, ``numpy.add.at``, ``x[idx] += y``) for several dtypes of ``x``, and runs on variants
of the inputs: non-contiguous ``x``, negative, repeated, empty and out-of-range indices,
masks of the wrong shape, index arrays that do not broadcast, a zero slice step.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from c_parity import MODES, linked, strided

import opweave
import opweave.tensor as ot
from opweave.tensor.type import TensorType
from opweave_c.linkers import CLinker, CVMLinker

st = sys.modules["opweave.tensor.subtensor"]

DTYPES = ("float64", "int32", "uint8", "bool")
KINDS = ("take", "set", "add_at", "once")


@dataclass(frozen=True)
class Sym:
    """A symbolic index part: an input of ``dtype`` and rank ``ndim``."""

    dtype: str
    ndim: int


@dataclass
class Case:
    """An index (entries: ints, slices, :class:`Sym`) over ``x`` of ``shape``; the
    variants give the symbolic parts' values, in order (the first one must be valid)."""

    name: str
    shape: tuple[int, ...]
    entries: tuple[Any, ...]
    variants: list[tuple[Any, ...]] = field(default_factory=list)


def _i(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


S = Sym("int64", 0)
V = Sym("int64", 1)
M2 = Sym("int64", 2)
B1 = Sym("bool", 1)
B2 = Sym("bool", 2)

CASES = [
    Case(
        "two_vectors_adjacent",
        (4, 5, 3),
        (V, V),
        [
            (_i(0, 1, -1), _i(2, 2, 4)),
            (_i(1, 1, 1), _i(0, 0, 0)),
            (_i(), _i()),
            (_i(0, 4), _i(0, 0)),
        ],
    ),
    Case(
        "vector_slice_matrix_not_adjacent",
        (4, 5, 6),
        (V, slice(1, None, 2), M2),
        [
            (_i(0, -1, 2), np.array([[0, 5, -6], [1, 1, 1]])),
            (_i(3, 3), np.array([[2], [2]])),
            (_i(0, 1), np.array([[6, 0]])),  # out of range on axis 2
            (_i(0, 1), np.array([[0, 1, 2]])),  # does not broadcast
            (np.zeros(0, np.int64), np.zeros((0, 1), np.int64)),
        ],
    ),
    Case(
        "slice_then_arrays_then_slice",
        (3, 4, 5, 2),
        (slice(None, None, -1), np.uint16, V, slice(0, 1)),
        [(np.array([[0, 3], [1, 1]], np.uint16), _i(-1, 4)), (np.array([[4]], np.uint16), _i(0))],
    ),
    Case(
        "integer_between_arrays",
        (4, 3, 5),
        (V, 1, V),
        [(_i(0, 3, 3), _i(1, -5, 1)), (_i(0), _i(5)), (_i(-5), _i(0))],
    ),
    Case(
        "symbolic_integer_and_slice_bounds",
        (4, 5, 6),
        (S, V, slice(S, S, S)),
        [
            (-1, _i(0, 4, 4), 1, 5, 2),
            (0, _i(2, 2), -1, -7, -2),
            (4, _i(0), 0, 9, 1),  # the integer out of range
            (0, _i(0), 0, 3, 0),  # zero step
            (3, _i(), -100, 100, 3),
        ],
    ),
    Case(
        "integer_slice_array_not_adjacent",
        (3, 4, 5),
        (2, slice(None), V),
        [(_i(0, 4, 4),), (_i(),), (_i(-6),)],
    ),
    Case(
        "mask_alone",
        (4, 3),
        (B2,),
        [
            (np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0]], bool),),
            (np.zeros((4, 3), bool),),
            (np.ones((4, 2), bool),),  # the wrong shape
        ],
    ),
    Case(
        "mask_and_array",
        (4, 5, 2),
        (slice(None), B1, V),
        [
            (np.array([1, 0, 1, 1, 0], bool), _i(1, 0, 1)),
            (np.array([1, 0, 0, 0, 0], bool), _i(-2, 1)),
            (np.array([1, 0, 1, 1, 0], bool), _i(1, 0)),  # does not broadcast
            (np.array([1, 0, 1], bool), _i(0)),  # the wrong length
            (np.array([1, 0, 1, 1, 0], bool), _i(2)),  # out of range, before the mask check
        ],
    ),
    Case(
        "unsigned_and_narrow_arrays",
        (6, 7),
        (np.uint64, np.int8),
        [
            (np.array([[5, 0, 5]], np.uint64), np.array([[-7], [6]], np.int8)),
            (np.array([2**63 + 3], np.uint64), np.array([0], np.int8)),
        ],
    ),
    Case(
        "scalars_only",
        (3, 4),
        (S, slice(1, 3)),
        [(2,), (-3,), (3,)],
    ),
]


def _symbolic(entries: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The index with its symbolic parts as inputs, and the inputs in order."""
    inputs: list[Any] = []

    def one(e: Any) -> Any:
        if isinstance(e, Sym):
            var = TensorType(e.dtype, shape=(None,) * e.ndim)()
        elif isinstance(e, type):  # an integer matrix of that dtype
            var = TensorType(np.dtype(e).name, shape=(None, None))()
        else:
            return e
        inputs.append(var)
        return var

    index = []
    for e in entries:
        if isinstance(e, slice):
            index.append(slice(one(e.start), one(e.stop), one(e.step)))
        else:
            index.append(one(e))
    return index, inputs


def _numpy_key(entries: Sequence[Any], values: Sequence[Any]) -> tuple[Any, ...]:
    it = iter(values)

    def one(e: Any) -> Any:
        if isinstance(e, Sym | type):
            v = next(it)
            return int(v) if np.ndim(v) == 0 and not isinstance(v, np.ndarray) else v
        return e

    return tuple(
        slice(one(e.start), one(e.stop), one(e.step)) if isinstance(e, slice) else one(e)
        for e in entries
    )


def _value(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6, size=shape)).astype(dtype)
    return rng.integers(0, 250, size=shape).astype(dtype)


def _build(case: Case) -> tuple[list[Any], list[Any]]:
    index, idx_inputs = _symbolic(case.entries)
    xs = [TensorType(dtype, shape=(None,) * len(case.shape))(f"x_{dtype}") for dtype in DTYPES]
    ys = []
    outs = []
    for x in xs:
        view = st.advanced_subtensor(x, *index)
        assert view.owner is not None and isinstance(view.owner.op, st.AdvancedSubtensor)
        y = TensorType(x.dtype, shape=(None,) * view.ndim)(f"y_{x.dtype}")
        ys.append(y)
        outs += [
            view,
            ot.set_subtensor(view, y),
            ot.inc_subtensor(view, y),
            ot.inc_subtensor(view, y, ignore_duplicates=True),
        ]
    return [*xs, *ys, *idx_inputs], outs


def _expected(kind: str, x: np.ndarray, key: tuple[Any, ...], y: np.ndarray) -> np.ndarray:
    if kind == "take":
        return np.array(x[key])
    r = x.copy()
    if kind == "set":
        r[key] = y
    elif kind == "add_at":
        np.add.at(r, key, y)
    else:
        r[key] += y
    return r


def _outcome(f: Callable[..., Any], args: Sequence[Any]) -> tuple[str, Any]:
    try:
        return "ok", f(*args)
    except Exception as exc:  # the comparison is of the errors' types and messages
        return "error", (type(exc), str(exc))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_linker_gives_numpy_advanced_indexing(case: Case) -> None:
    inputs, outs = _build(case)
    fns = {name: opweave.function(inputs, outs, mode=mode) for name, mode in MODES.items()}
    n_nodes = len(fns["cvm"].maker.fgraph.toposort())
    assert fns["cvm"].fn.c_nodes == list(range(n_nodes))  # every node has C
    rng = np.random.default_rng(len(case.name))
    valid = 0
    for values in case.variants:
        key = _numpy_key(case.entries, values)
        try:
            target = np.zeros(case.shape, np.uint8)[key].shape
        except (IndexError, ValueError):
            target = None
        for layout in (lambda a: a, strided):
            xs = [layout(_value(rng, case.shape, dtype)) for dtype in DTYPES]
            ys = [_value(rng, target or (0,), dtype) for dtype in DTYPES]
            args = [*xs, *ys, *values]
            ref = _outcome(fns["py"], args)
            for name in ("c", "cvm"):
                got = _outcome(fns[name], args)
                assert got[0] == ref[0], (name, values, got, ref)
                if ref[0] == "error":
                    assert got[1] == ref[1], (name, values)
                    continue
                for r, g in zip(ref[1], got[1], strict=True):
                    assert r.dtype == g.dtype and r.shape == g.shape, (name, values)
                    np.testing.assert_array_equal(g, r, err_msg=f"{name} {values}")
            if ref[0] == "error":
                assert target is None or case.name == "mask_and_array", (values, ref)
                continue
            valid += 1
            got = fns["c"](*args)
            for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
                for j, kind in enumerate(KINDS):
                    exp = _expected(kind, x, key, y)
                    out = got[4 * k + j]
                    assert out.dtype == exp.dtype and out.shape == exp.shape
                    assert out.tobytes() == np.ascontiguousarray(exp).tobytes(), (kind, x.dtype)
    assert valid >= 2  # the first variant, on both layouts


def test_duplicates_accumulate_in_order_and_last_write_wins() -> None:
    x = ot.dmatrix("x")
    i, j = ot.lmatrix("i"), ot.lvector("j")
    y = ot.dmatrix("y")
    view = x[i, j]
    outs = [
        ot.set_subtensor(view, y),
        ot.inc_subtensor(view, y),
        ot.inc_subtensor(view, y, ignore_duplicates=True),
    ]
    assert all(isinstance(o.owner.op, st.AdvancedIncSubtensor) for o in outs)
    f = opweave.function([x, i, j, y], outs, mode=MODES["c"])
    xv = np.zeros((2, 3))
    iv = np.array([[1, 1, 1], [1, 0, 1]])
    jv = np.array([2, 2, 2])
    yv = np.array([[1e16, 1.0, -1e16], [1.0, 5.0, 3.0]])
    set_, acc, once = f(xv, iv, jv, yv)
    assert set_[1, 2] == 3.0 and once[1, 2] == 3.0  # the last of the four writes to (1, 2)
    assert acc[1, 2] == ((1e16 + 1.0) - 1e16 + 1.0) + 3.0  # in index order
    assert acc[0, 2] == 5.0 and set_[0, 2] == 5.0
    assert np.count_nonzero(acc) == 2


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_inplace_update_writes_into_x_and_copy_does_not(linker_cls: type) -> None:
    x, y = ot.dmatrix("x"), ot.dvector("y")
    i = ot.lvector("i")
    for inplace in (False, True):
        op = st.AdvancedIncSubtensor(
            (slice(None), TensorType("int64", shape=(None,))), inplace=inplace
        )
        run = linked(linker_cls, [x, y, i], [op(x, y, i)])
        xv = np.zeros((2, 3))
        (got,) = run(xv, np.array([1.0, 2.0]), np.array([2, -1]))
        np.testing.assert_array_equal(got, [[0, 0, 3], [0, 0, 3]])
        assert (got is xv) == inplace
        assert bool(xv[1, 2] == 3.0) == inplace
        readonly = np.zeros((2, 3))
        readonly.flags.writeable = False
        if inplace:
            with pytest.raises(ValueError, match="assignment destination is read-only"):
                run(readonly, np.array([1.0, 2.0]), np.array([0, 1]))


@pytest.mark.parametrize("linker", ["c", "cvm"])
def test_no_reference_leaks_on_success_or_failure(linker: str) -> None:
    x, y = ot.ftensor3("x"), ot.fmatrix("y")
    i, j = ot.lvector("i"), ot.lmatrix("j")
    m = TensorType("bool", shape=(None,))("m")
    view = x[i, 1:, j]
    outs = [view, x[:, m], ot.set_subtensor(view, y), ot.inc_subtensor(view, 2.0)]
    outs.append(ot.inc_subtensor(view, y, ignore_duplicates=True))
    reversed_view = x[i[::-1], 0, j[:, ::-1]]  # written in NumPy's (memory) order
    outs.append(ot.set_subtensor(reversed_view, 2.0))
    outs.append(ot.inc_subtensor(reversed_view, 2.0, ignore_duplicates=True))
    f = opweave.function([x, y, i, j, m], outs, mode=opweave.Mode(linker=linker))
    xv = strided(np.arange(60, dtype="float32").reshape(3, 4, 5))
    iv = np.array([0, 2, 2, -1])[::-1]  # non-contiguous indices are copied
    jv = np.array([[1, 1, 4, -5]])
    mv = np.array([True, False, True, True])[::1]
    good = (xv, np.ones((4, 3), "float32"), iv, jv, mv)
    bad = [
        (xv, np.ones((4, 3), "float32"), iv, jv + 5, mv),  # out of range
        (xv, np.ones((4, 3), "float32"), iv, jv, mv[:3]),  # wrong mask
        (xv, np.ones((4, 3), "float32"), iv[:3], jv, mv),  # no broadcast
        (xv, np.ones((2, 3), "float32"), iv, jv, mv),  # wrong value shape
    ]

    def calls(good: tuple[Any, ...], bad: list[tuple[Any, ...]]) -> None:
        f(*good)
        for args in bad:
            with pytest.raises((IndexError, ValueError)):
                f(*args)

    watched = [np.dtype(d) for d in ("float32", "int64", "bool")]
    calls(good, bad)
    gc.collect()
    before = [sys.getrefcount(d) for d in watched]
    for _ in range(300):
        calls(good, bad)
    gc.collect()
    assert [sys.getrefcount(d) for d in watched] == before
    ref = weakref.ref(good[2])
    del good, bad, iv
    gc.collect()
    assert ref() is None
