"""``opweave.xtensor.indexing``: positional and labeled indexing (basic, vectorized and
orthogonal, as xarray), updates of indexed parts, ``head``/``tail``/``thin``/``diff``,
compiled (their lowering to tensor indexing) and compared with NumPy indexing on
explicitly laid-out index arrays."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.xtensor import indexing as xi
from opweave.xtensor import xtensor
from opweave.xtensor.basic import XOp
from opweave.xtensor.indexing import Index, IndexUpdate

MODES = [None, "FAST_COMPILE", Mode(linker="py"), Mode(linker="c")]
MODE_IDS = ["default", "fast_compile", "py", "c"]


def _fn(inputs, outputs, mode=None):
    f = opweave.function(inputs, outputs, mode=mode)
    assert not [node for node in f.maker.fgraph.toposort() if isinstance(node.op, XOp)]
    return f


def _x(shape=(3, 5, 7), dims=("a", "b", "c")):
    x = xtensor("x", dims=dims, shape=shape, dtype="float64")
    return x, np.arange(np.prod(shape), dtype="float64").reshape(shape)


def _check(inputs, values, outs, expected, mode=None):
    results = _fn(inputs, outs, mode=mode)(*values)
    for out, res, exp in zip(outs, results, expected, strict=True):
        assert res.shape == exp.shape
        assert res.dtype == out.type.dtype
        assert all(s is None or s == n for s, n in zip(out.type.shape, res.shape, strict=True))
        np.testing.assert_array_equal(res, exp)


# ------------------------------------------------------------------ basic indexing

BASIC_CASES = [
    ((0,), ("b", "c")),
    ((slice(1, None),), ("a", "b", "c")),
    ((slice(None, None, -1), -1), ("a", "c")),
    ((-2, slice(4, 0, -2), slice(None, -3)), ("b", "c")),
    ((Ellipsis, 2), ("a", "b")),
    ((1, Ellipsis, slice(None, None, -3)), ("b", "c")),
    ((), ("a", "b", "c")),
]


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_basic_indexing_equals_numpy(mode) -> None:
    x, v = _x()
    outs = [x[idx] for idx, _ in BASIC_CASES]
    for out, (_, dims) in zip(outs, BASIC_CASES, strict=True):
        assert out.type.dims == dims
    _check([x], [v], outs, [v[idx] for idx, _ in BASIC_CASES], mode=mode)


def test_labeled_basic_indexing_equals_numpy() -> None:
    x, v = _x()
    outs = [
        x.isel(c=-1, a=slice(None, None, -2)),
        x.isel({"b": 3}),
        x[{"c": slice(2, 6, 3), "a": 0}],
        x.isel(),
        x.isel({"z": 0}, missing_dims="ignore"),
    ]
    expected = [v[::-2, :, -1], v[:, 3], v[0, :, 2:6:3], v, v]
    _check([x], [v], outs, expected)


def test_static_shape_of_slices() -> None:
    x, _ = _x()
    assert x[1:, ::-2, 10:].type.shape == (2, 3, 0)
    assert x[0, ::-1].type.shape == (5, 7)
    n = ot.lscalar("n")
    assert x[:n].type.shape == (None, 5, 7)
    y = xtensor("y", dims=("a",), shape=(None,))
    assert y[1:].type.shape == (None,)


# ------------------------------------------------------------------ array indices


def test_unlabeled_and_labeled_vectors() -> None:
    x, v = _x()
    i = ot.lvector("i")
    iv = np.array([2, 0, 2, -1])
    outs = [x[i], x[:, [4, 0]], x[("new", i),], x[:, (["new"], i)], x[np.array([1, 1])]]
    dims = [("a", "b", "c"), ("a", "b", "c"), ("new", "b", "c"), ("a", "new", "c")]
    for out, d in zip(outs, dims, strict=False):
        assert out.type.dims == d
    expected = [v[iv], v[:, [4, 0]], v[iv], v[:, iv], v[[1, 1]]]
    _check([x, i], [v, iv], outs, expected)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_vectorized_and_orthogonal_indexing(mode) -> None:
    x, v = _x()
    i = xtensor("i", dims=("d",), shape=(None,), dtype="int64")
    j = xtensor("j", dims=("e",), shape=(None,), dtype="int64")
    iv, jv = np.array([0, 2, 1, 1]), np.array([4, -1, 0])
    outs = [
        x[i, :, i],  # one output dim: pointwise
        x[:, i, j],  # two output dims: every combination
        x[i, j],
        x.isel(c=j, a=i),  # array indices separated by a slice
    ]
    dims = [("d", "b"), ("a", "d", "e"), ("d", "e", "c"), ("d", "b", "e")]
    assert [o.type.dims for o in outs] == dims
    expected = [
        v[iv, :, iv],
        v[:, iv[:, None], jv[None, :]],
        v[iv[:, None], jv[None, :]],
        np.transpose(v[iv[:, None], :, jv[None, :]], (0, 2, 1)),
    ]
    _check([x, i, j], [v, iv, jv], outs, expected, mode=mode)


def test_vector_labeled_with_an_indexed_dim_pairs_with_a_slice() -> None:
    x, v = _x((4, 6), ("a", "b"))
    i = ot.lvector("i")
    iv = np.array([3, 0, 1])
    outs = [x[("b", i), 1:4], x[("b", i), ::-2]]
    assert outs[0].type.dims == ("b",)
    k = np.arange(3)
    expected = [v[iv, 1 + k], v[iv, 5 - 2 * k]]
    _check([x, i], [v, iv], outs, expected)


def test_vector_labeled_with_an_unindexed_dim_pairs_with_it() -> None:
    x, v = _x((4, 3), ("a", "b"))
    j = xtensor("j", dims=("b",), shape=(3,), dtype="int64")
    jv = np.array([3, 3, 0])
    out = x[j]
    assert out.type.dims == ("b",)
    _check([x, j], [v, jv], [out], [v[jv, np.arange(3)]])


def test_matrix_indices_and_separated_array_indices() -> None:
    x, v = _x()
    ab = xtensor("ab", dims=("a", "b"), shape=(4, 2), dtype="int64")
    cd = xtensor("cd", dims=("c", "d"), shape=(4, 3), dtype="int64")
    abv = np.array([[0, 1], [1, 2], [0, 2], [-1, -2]])
    cdv = np.array([[1, 2, 3], [0, 4, 5], [2, 6, -1], [3, -2, 0]])
    out = x[ab, 1:3, cd]
    assert out.type.dims == ("a", "b", "c", "d")
    # The slice on b pairs up with ab's b; cd's dims combine with ab's in every way.
    bx = np.arange(1, 3)
    exp = v[abv[:, :, None, None], bx[None, :, None, None], cdv[None, None, :, :]]
    _check([x, ab, cd], [v, abv, cdv], [out], [exp])


def test_scalar_indices_among_array_indices() -> None:
    x, v = _x()
    i = xtensor("i", dims=("d",), shape=(4,), dtype="int64")
    s = xtensor("s", dims=(), shape=(), dtype="int64")
    iv, sv = np.array([0, 2, 1, 1]), np.array(2)
    outs = [x[:, i, s], x[s, 1:4, i.rename(d="b")[:3]], x[i.rename(d="q")[:3], 2:, s]]
    assert [o.type.dims for o in outs] == [("a", "d"), ("b",), ("q", "b")]
    k = np.arange(3)
    expected = [v[:, iv, 2], v[2, 1 + k, iv[:3]], v[iv[:3], 2:, 2]]
    _check([x, i, s], [v, iv, sv], outs, expected)


def test_boolean_vectors_select_where_true() -> None:
    x, v = _x((5, 3), ("a", "b"))
    m = xtensor("m", dims=("a",), shape=(5,), dtype="bool")
    j = xtensor("j", dims=("q",), shape=(2,), dtype="int64")
    mv = np.array([True, False, True, True, False])
    jv = np.array([2, 0])
    outs = [x[m], x[:, [False, True, True]], x[m, j]]
    assert [o.type.dims for o in outs] == [("a", "b"), ("a", "b"), ("a", "q")]
    expected = [v[mv], v[:, [False, True, True]], v[np.flatnonzero(mv)[:, None], jv[None, :]]]
    _check([x, m, j], [v, mv, jv], outs, expected)


# ------------------------------------------------------------------ updates


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_set_and_inc_of_slices(mode) -> None:
    x, v = _x((6, 5), ("a", "b"))
    y = xtensor("y", dims=("a", "b"), shape=(3, 3), dtype="float64")
    yv = np.random.default_rng(0).normal(size=(3, 3))
    view = x[1:-2, ::-2]
    outs = [view.set(y), view.inc(y), view.inc(y.T), view.set(y.isel(a=0)), view.inc(2.0)]
    expected = []
    for value, how in ((yv, "set"), (yv, "inc"), (yv, "inc"), (yv[0], "set"), (2.0, "inc")):
        e = v.copy()
        if how == "set":
            e[1:-2, ::-2] = value
        else:
            e[1:-2, ::-2] += value
        expected.append(e)
    _check([x, y], [v, yv], outs, expected, mode=mode)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_inc_with_repeated_indices_adds_every_repeat(mode) -> None:
    x, v = _x((4, 5), ("a", "b"))
    i = xtensor("i", dims=("d",), shape=(None,), dtype="int64")
    y = xtensor("y", dims=("d",), shape=(None,), dtype="float64")
    iv, yv = np.array([1, 3, 1, 1, -1]), np.array([1.0, 10.0, 100.0, 1000.0, 0.5])
    outs = [x.isel(b=i).inc(y), xi.inc_value(x[i, 2], y), x[i].inc(y)]
    e0, e1, e2 = v.copy(), v.copy(), v.copy()
    np.add.at(e0, (slice(None), iv), yv[None, :])
    np.add.at(e1, (iv, 2), yv)
    np.add.at(e2, iv, yv[:, None])
    _check([x, i, y], [v, iv, yv], outs, [e0, e1, e2], mode=mode)


def test_set_with_repeated_indices() -> None:
    x, v = _x((4, 5), ("a", "b"))
    i = xtensor("i", dims=("d",), shape=(None,), dtype="int64")
    y = xtensor("y", dims=("a",), shape=(4,), dtype="float64")
    iv, yv = np.array([3, 0, 3, 3]), np.array([-1.0, -2.0, -3.0, -4.0])
    outs = [x.isel(b=i).set(y), xi.set_value(x[:, i], -7.0)]
    e0, e1 = v.copy(), v.copy()
    e0[:, iv] = yv[:, None]
    e1[:, iv] = -7.0
    _check([x, i, y], [v, iv, yv], outs, [e0, e1])


def test_vectorized_and_separated_updates() -> None:
    x, v = _x((2, 3, 5, 7), ("a", "b", "c", "d"))
    y = xtensor("y", dims=("c", "b"), shape=(5, 4), dtype="float64")
    yv = np.random.default_rng(1).normal(size=(5, 4))
    # b is indexed by two vectors (pointwise); the slice on c separates them.
    view = x[:, [0, 1, 2, 2], :, ("b", [0, 1, 1, 2])]
    assert view.type.dims == ("a", "b", "c")
    bi, di = np.array([0, 1, 2, 2]), np.array([0, 1, 1, 2])
    e_set, e_inc = v.copy(), v.copy()
    # NumPy puts the separated array indices' dim (b) first: the value is laid out (b, a, c).
    e_set[:, bi, :, di] = yv.T[:, None, :]
    np.add.at(e_inc, (slice(None), bi, slice(None), di), yv.T[:, None, :])
    outs = [view.set(y), view.inc(y)]
    _check([x, y], [v, yv], outs, [e_set, e_inc])


def test_update_value_with_new_dim_from_index() -> None:
    x, v = _x((5, 5), ("a", "b"))
    i = xtensor("i", dims=("d",), shape=(None,), dtype="int64")
    y = xtensor("y", dims=("d",), shape=(3,), dtype="float64")
    iv, yv = np.array([0, 2, 3]), np.array([-1.0, -2.0, -3.0])
    e = v.copy()
    e[iv] = yv[:, None]
    _check([x, i, y], [v, iv, yv], [x[i].set(y)], [e])


def test_empty_indices_update_the_whole_tensor() -> None:
    x, v = _x((2, 3), ("a", "b"))
    outs = [x[()].inc(1.0), x[...].set(-1.0), x.isel({"c": 0}, missing_dims="ignore").inc(x)]
    _check([x], [v], outs, [v + 1, np.full_like(v, -1.0), 2 * v])
    assert isinstance(outs[0].owner.op, IndexUpdate)
    assert outs[0].owner.op == IndexUpdate("inc")


# ------------------------------------------------------------------ head, tail, thin, diff


def test_head_tail_thin_equal_numpy() -> None:
    x, v = _x((7, 9), ("a", "b"))
    outs = [x.head(), x.head(2), x.head(b=3), x.tail(), x.tail({"a": 2}), x.tail(b=0)]
    outs += [x.thin(3), x.thin({"b": 4}), xi.head(x, a=1)]
    expected = [v[:5, :5], v[:2, :2], v[:, :3], v[-5:, -5:], v[-2:], v[:, 9:]]
    expected += [v[::3, ::3], v[:, ::4], v[:1]]
    _check([x], [v], outs, expected)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_diff_equals_numpy(n) -> None:
    x = xtensor("x", dims=("a", "b"), shape=(6, None), dtype="float64")
    v = np.random.default_rng(n).normal(size=(6, 8)) ** 3
    outs = [x.diff("a", n=n), xi.diff(x, "b", n)]
    results = _fn([x], outs)(v)
    np.testing.assert_allclose(results[0], np.diff(v, n=n, axis=0))
    np.testing.assert_allclose(results[1], np.diff(v, n=n, axis=1))
    assert outs[0].type.shape == (6 - n, None)


def test_head_tail_thin_argument_errors() -> None:
    x, _ = _x((7, 9), ("a", "b"))
    with pytest.raises(TypeError, match="thin\\(\\) indexers must be either dict-like"):
        x.thin()
    with pytest.raises(ValueError, match="Cannot pass both indexers and indexers_kwargs to head"):
        x.head({"a": 1}, b=2)
    with pytest.raises(ValueError, match="Cannot pass both indexers and indexers_kwargs to isel"):
        x.isel({"a": 1}, b=2)


# ------------------------------------------------------------------ errors


def test_isel_missing_dims() -> None:
    x, _ = _x((2, 3), ("a", "b"))
    with pytest.raises(
        ValueError, match=re.escape("Dimension c does not exist. Expected one of ('a', 'b')")
    ):
        x.isel(c=0)
    with pytest.warns(UserWarning, match="Dimension c does not exist"):
        out = x.isel(c=0, a=1, missing_dims="warn")
    assert out.type.dims == ("b",)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.isel(c=0, missing_dims="ignore").type.dims == ("a", "b")
    with pytest.raises(ValueError, match="Unrecognized options nope for missing_dims argument"):
        x.isel(a=0, missing_dims="nope")
    with pytest.raises(TypeError, match=re.escape("Ellipsis (...) is an invalid labeled index")):
        x.isel(a=...)


def test_invalid_indices_raise() -> None:
    x, _ = _x((2, 3), ("a", "b"))
    with pytest.raises(TypeError, match="do not support indexing with None"):
        x[None]
    with pytest.raises(IndexError, match="Too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="an index can only have a single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(TypeError, match="Numerical indices must be integers or boolean"):
        x[np.array([0.5])]
    with pytest.raises(
        IndexError, match="Unlabeled multi-dimensional array cannot be used for indexing"
    ):
        x[np.zeros((2, 2), dtype="int64")]


def test_invalid_labels_raise() -> None:
    x, _ = _x((5, 7), ("a", "b"))
    i = xtensor("i", dims=("c",), shape=(4,), dtype="int64")
    with pytest.raises(
        IndexError,
        match=re.escape(
            "Giving a dimension name to an XTensorVariable indexer is not supported: "
            "('d', i). Use .rename() instead."
        ),
    ):
        x[("d", i),]
    with pytest.raises(
        IndexError,
        match=re.escape(
            "Boolean indexer should be unlabeled or on the same dimension to the indexed "
            "array. Indexer is on ('c',) but the target dimension is a."
        ),
    ):
        x[i.astype("bool")]
    m = xtensor("m", dims=("a", "b"), shape=(5, 7), dtype="bool")
    with pytest.raises(NotImplementedError, match="Only 1d boolean indexing arrays"):
        x[m]
    j = xtensor("j", dims=("b",), shape=(4,), dtype="int64")
    k = xtensor("k", dims=("b",), shape=(1,), dtype="int64")
    with pytest.raises(IndexError, match="Dimension of indexers mismatch for dim b"):
        x[j, k]
    with pytest.raises(IndexError, match="Dimension of indexers mismatch for dim b"):
        x[j]


def test_invalid_updates_raise() -> None:
    x, _ = _x((5, 7), ("a", "b"))
    with pytest.raises(
        ValueError, match="set can only be called on the output of an index \\(or isel\\)"
    ):
        (x + 1).set(0.0)
    with pytest.raises(ValueError, match="inc can only be called on the output of an index"):
        x.inc(0.0)
    y = xtensor("y", dims=("a", "z"), shape=(5, 1))
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Value dimensions ('a', 'z') must be a subset of the indexed dimensions ('a', 'b')"
        ),
    ):
        x[:, 1:].set(y)
    with pytest.raises(ValueError, match="mode must be 'set' or 'inc'"):
        IndexUpdate("mul")


def test_index_node_keeps_only_useful_indices() -> None:
    x, _ = _x()
    node = x[0, :, :].owner
    assert isinstance(node.op, Index)
    assert len(node.inputs) == 2
    assert len(x[..., :].owner.inputs) == 1
    assert len(x[:, 1:].owner.inputs) == 3


def test_vectorize_node_indexes_each_batch() -> None:
    x, v = _x((3, 5), ("a", "b"))
    i = xtensor("i", dims=("k",), shape=(2,), dtype="int64")
    xb = xtensor("xb", dims=("z", "a", "b"), shape=(4, 3, 5), dtype="float64")
    ib = xtensor("ib", dims=("z", "k"), shape=(4, 2), dtype="int64")
    yb = xtensor("yb", dims=("z", "k"), shape=(4, 2), dtype="float64")
    rng = np.random.default_rng(5)
    xv = rng.normal(size=(4, 3, 5))
    iv = np.array([[0, 4], [1, 1], [3, 2], [4, 4]])
    yv = rng.normal(size=(4, 2))
    view = x.isel(b=i)
    _, full, _ = view.owner.inputs  # the slice of a, then the index of b
    [batched_view] = view.owner.op.vectorize_node(view.owner, xb, full, ib, new_dim="z")
    y = xtensor("y", dims=("k",), shape=(2,), dtype="float64")
    upd = view.inc(y)
    [batched_upd] = upd.owner.op.vectorize_node(upd.owner, x, yb, full, ib, new_dim="z")
    assert batched_view.type.dims == ("z", "a", "k")
    assert batched_upd.type.dims == ("a", "b", "z")
    res_view, res_upd = _fn([xb, ib, yb, x], [batched_view, batched_upd])(xv, iv, yv, v)
    exp_view = np.stack([xv[z][:, iv[z]] for z in range(4)])
    exp_upd = np.stack([v.copy() for _ in range(4)], axis=-1)
    for z in range(4):
        np.add.at(exp_upd[..., z], (slice(None), iv[z]), yv[z][None, :])
    np.testing.assert_array_equal(res_view, exp_view)
    np.testing.assert_allclose(res_upd, exp_upd)
