"""``opweave.tensor.extra_ops``: PyTensor's names and signatures, NumPy's values.

Each Op is compiled on the Python backend (and the C one, ``cvm``, when installed) and
compared with NumPy over dtypes and edge cases (empty inputs, NaN, negative axes); its
gradient is checked with finite differences (``verify_grad``) and its ``infer_shape``
against the shape of the computed output.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, grad, verify_grad
from opweave.graph.basic import Variable
from opweave.tensor import TensorType
from opweave.tensor import extra_ops as eo
from opweave.tensor.extra_ops import (
    CumOp,
    FillDiagonal,
    FillDiagonalOffset,
    RavelMultiIndex,
    Repeat,
    SearchsortedOp,
    Unique,
    UnravelIndex,
)

RNG = np.random.default_rng(11)


def linkers() -> list[str]:
    """``py``, and ``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py"]
    return ["py", "cvm"]


LINKERS = linkers()


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, linker: str = "py") -> Any:
    mode = Mode(linker=linker, optimizer=None)
    fn = opweave.function(list(inputs), outputs, mode=mode, on_unused_input="ignore")
    return fn(*values)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray]) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=Mode(linker="py"))


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Variable:
    return TensorType(dtype, shape=shape)(name)


def check_infer_shape(inputs: Sequence[Variable], out: Variable, *values: Any) -> None:
    """``out.owner.op.infer_shape`` computes the shape of the value ``out`` takes."""
    node = out.owner
    shapes = [tuple(ot.shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)
    k = node.outputs.index(out)
    expected = run(inputs, out, *values).shape
    got = run(inputs, [ot.as_tensor_variable(s) for s in inferred[k]], *values) if out.ndim else []
    assert tuple(int(v) for v in got) == expected
    # The compiled default mode answers ``out.shape`` from infer_shape too.
    assert tuple(opweave.function(list(inputs), out.shape, on_unused_input="ignore")(*values)) == (
        expected
    )


# ====================================================================== cumsum / cumprod

CUM_DTYPES = ["bool", "int8", "uint16", "int32", "int64", "float32", "float64"]


def _sample(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 5, size=shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", CUM_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -3])
def test_cumsum_cumprod_match_numpy(linker: str, dtype: str, axis: int | None) -> None:
    x = T(dtype, (None, None, None))
    xv = _sample(dtype, (2, 3, 4))
    s, p = eo.cumsum(x, axis), eo.cumprod(x, axis)
    got_s, got_p = run([x], [s, p], xv, linker=linker)
    flat = xv.reshape(-1) if axis is None else xv
    ax = 0 if axis is None else axis
    np.testing.assert_allclose(got_s, np.cumsum(flat, axis=ax, dtype=xv.dtype), rtol=1e-6)
    np.testing.assert_allclose(got_p, np.cumprod(flat, axis=ax, dtype=xv.dtype), rtol=1e-6)
    assert got_s.dtype == got_p.dtype == np.dtype(dtype)
    assert s.type == (x.type if axis is not None else TensorType(dtype, shape=(None,)))


@pytest.mark.parametrize("linker", LINKERS)
def test_cumulative_ops_keep_the_dtype_nan_and_empty(linker: str) -> None:
    x = ot.bvector("x")
    got = run([x], x.cumsum(), np.array([100, 100, 100], dtype="int8"), linker=linker)
    np.testing.assert_array_equal(got, np.array([100, -56, 44], dtype="int8"))  # wraps
    f = ot.dmatrix("f")
    fv = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, 5.0]])
    np.testing.assert_array_equal(run([f], f.cumsum(axis=1), fv, linker=linker), fv.cumsum(1))
    np.testing.assert_array_equal(run([f], f.cumprod(axis=0), fv, linker=linker), fv.cumprod(0))
    empty = np.zeros((0, 3))
    for axis in (0, 1, None):
        got = run([f], [eo.cumsum(f, axis), eo.cumprod(f, axis)], empty, linker=linker)
        assert got[0].shape == got[1].shape == np.cumsum(empty, axis).shape


def test_cumop_nodes_and_errors() -> None:
    x = ot.dtensor3("x")
    assert ot.cumsum(x, -1).owner.op == CumOp(2, "add")
    assert str(CumOp(1, "mul")) == "Cumprod{axis=1}" and str(CumOp(0)) == "Cumsum{axis=0}"
    assert x.cumprod(1).owner.op == CumOp(1, "mul")
    with pytest.raises(np.exceptions.AxisError):
        eo.cumsum(x, axis=3)
    with pytest.raises(ValueError, match='Unknown mode "max"'):
        CumOp(0, "max")
    with pytest.raises(ValueError, match="non-negative"):
        CumOp(-1)
    with pytest.raises(TypeError, match="axis must be an integer"):
        CumOp(1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"axis\(=3\) out of bounds"):
        CumOp(3)(x)


def test_cumop_gradients_and_shape() -> None:
    xv = RNG.uniform(0.5, 2.0, size=(3, 4))
    for axis in (0, 1, None):
        verify(lambda a, axis=axis: eo.cumsum(a, axis), [xv])
        verify(lambda a, axis=axis: eo.cumprod(a, axis), [xv])
    x = ot.dmatrix("x")
    check_infer_shape([x], eo.cumsum(x, 1), xv)
    # Discrete inputs: a zero gradient.
    i = ot.lvector("i")
    g = grad(eo.cumsum(i).sum().astype("float64"), i)
    np.testing.assert_array_equal(run([i], g, np.array([1, 2])), [0.0, 0.0])
    # R_op: the derivative in a direction v.
    v = ot.dmatrix("v")
    for op in (CumOp(1, "add"), CumOp(1, "mul")):
        (jv,) = op.R_op([x], [v])
        vv = RNG.normal(size=(3, 4))
        eps = 1e-6
        f = opweave.function([x], op(x), mode=Mode(linker="py"))
        numeric = (f(xv + eps * vv) - f(xv - eps * vv)) / (2 * eps)
        np.testing.assert_allclose(run([x, v], jv, xv, vv), numeric, rtol=1e-6)


# ====================================================================== diff


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("axis", [0, -1])
def test_diff_matches_numpy(n: int, axis: int) -> None:
    x = ot.dmatrix("x")
    xv = RNG.normal(size=(4, 5))
    np.testing.assert_allclose(run([x], eo.diff(x, n, axis), xv), np.diff(xv, n, axis))
    if n:
        verify(lambda a: eo.diff(a, n, axis), [xv])
    with pytest.raises(ValueError, match="order must be non-negative"):
        eo.diff(x, -1)


# ====================================================================== searchsorted


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(linker: str, side: str) -> None:
    x, v, s = ot.dvector("x"), ot.dmatrix("v"), ot.lvector("s")
    xv = np.array([1.0, 2.0, 2.0, 3.0, np.nan])
    vv = np.array([[0.5, 2.0, 2.5], [3.0, 9.0, np.nan]])
    got = run([x, v], eo.searchsorted(x, v, side=side), xv, vv, linker=linker)
    np.testing.assert_array_equal(got, np.searchsorted(xv, vv, side=side))
    assert got.dtype == np.int64 and got.shape == vv.shape
    unsorted = np.array([3.0, 1.0, 2.0])
    order = np.argsort(unsorted)
    got = run([x, v, s], x.searchsorted(v, side, s), unsorted, vv, order, linker=linker)
    np.testing.assert_array_equal(got, np.searchsorted(unsorted, vv, side=side, sorter=order))
    scalar = run([x], eo.searchsorted(x, 2.0, side=side), xv, linker=linker)
    assert scalar.shape == () and scalar == np.searchsorted(xv, 2.0, side=side)
    empty = run([x, v], eo.searchsorted(x, v, side=side), np.zeros(0), vv, linker=linker)
    np.testing.assert_array_equal(empty, np.zeros((2, 3), dtype="int64"))


def test_searchsorted_types_gradient_and_errors() -> None:
    x, v = ot.dvector("x"), T("float64", (2, None), "v")
    out = eo.searchsorted(x, v)
    assert out.type == TensorType("int64", shape=(2, None))
    assert out.owner.op == SearchsortedOp("left")
    check_infer_shape([x, v], out, np.arange(5.0), np.ones((2, 3)))
    g = grad(out.astype("float64").sum(), [x, v])
    xv, vv = np.arange(5.0), np.ones((2, 3))
    for value in run([x, v], g, xv, vv):
        np.testing.assert_array_equal(value, np.zeros_like(value))
    with pytest.raises(ValueError, match="'middle' is an invalid value"):
        SearchsortedOp("middle")
    with pytest.raises(TypeError, match="x must be a vector"):
        eo.searchsorted(ot.dmatrix("m"), v)
    with pytest.raises(TypeError, match="sorter must be an integer tensor"):
        eo.searchsorted(x, v, sorter=ot.dvector("s"))


# ====================================================================== repeat


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["bool", "int16", "float32", "float64"])
def test_repeat_matches_numpy(linker: str, dtype: str) -> None:
    x = T(dtype, (None, None))
    xv = _sample(dtype, (3, 4))
    r = ot.lvector("r")
    cases: list[tuple[Any, Any, Any]] = [
        (eo.repeat(x, r, axis=0), [1, 0, 3], 0),
        (x.repeat(r, axis=-1), [2, 2, 0, 1], -1),
        (eo.repeat(x, r, axis=1), [2], 1),  # one count for every element
        (eo.repeat(x, r), [1] * 12, None),
    ]
    for out, counts, axis in cases:
        got = run([x, r], out, xv, np.array(counts), linker=linker)
        np.testing.assert_array_equal(got, np.repeat(xv, counts, axis=axis))
        assert got.dtype == xv.dtype
    for count, axis in [(3, 0), (2, -1), (0, 1), (2, None)]:
        got = run([x], eo.repeat(x, count, axis=axis), xv, linker=linker)
        np.testing.assert_array_equal(got, np.repeat(xv, count, axis=axis))


def test_repeat_static_shapes_gradient_and_errors() -> None:
    x = T("float64", (3, 4))
    assert eo.repeat(x, [1, 2, 3], axis=0).type.shape == (6, 4)
    assert eo.repeat(x, [2, 2, 2, 2], axis=1).owner.op == Repeat(1)
    out = Repeat(1)(x, ot.constant(np.array([2])))
    assert out.type.shape == (3, 8)
    assert eo.repeat(x, 3, axis=1).type.shape[0] == 3
    xv = RNG.normal(size=(3, 4))
    r = ot.lvector("r")
    dyn = T("float64", (None, None))
    check_infer_shape([dyn, r], Repeat(0)(dyn, r), xv, np.array([2, 0, 1]))
    check_infer_shape([dyn, r], Repeat(0)(dyn, r), xv, np.array([2]))
    verify(lambda a: eo.repeat(a, [1, 0, 3], axis=0), [xv])
    verify(lambda a: eo.repeat(a, [2, 1, 1, 3], axis=1), [xv])
    verify(lambda a: eo.repeat(a, 2, axis=1), [xv])
    verify(lambda a: eo.repeat(a, 2), [xv])
    with pytest.raises(ValueError, match="should not exceed 1"):
        eo.repeat(x, np.ones((2, 2), dtype=int))
    with pytest.raises(TypeError, match="repeats must be integers"):
        eo.repeat(x, [1.5, 2.0, 1.0], axis=0)
    with pytest.raises(ValueError, match="positive integer axis"):
        Repeat(-1)
    with pytest.raises(ValueError, match="must have 1 dimension"):
        Repeat(0)(x, ot.lscalar("n"))
    with pytest.raises(TypeError, match="other than uint64"):
        Repeat(0)(x, TensorType("uint64", shape=(None,))("u"))
    with pytest.raises(ValueError):  # NumPy's: counts do not match the axis
        run([dyn, r], Repeat(0)(dyn, r), xv, np.array([1, 2]))


# ====================================================================== unique


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_unique_matches_numpy(linker: str, axis: int | None) -> None:
    x = ot.dmatrix("x")
    xv = np.array([[1.0, 2.0, 1.0], [3.0, 2.0, 3.0], [1.0, 2.0, 1.0]])
    outs = eo.unique(x, True, True, True, axis=axis)
    got = run([x], outs, xv, linker=linker)
    expected = np.unique(xv, True, True, True, axis=axis)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e.reshape(-1) if g.ndim == 1 else e)
    assert [g.dtype for g in got[1:]] == [np.int64] * 3
    assert len(outs) == 4
    for out in outs:
        check_infer_shape([x], out, xv)
    flat = eo.unique(x, return_inverse=True)[1]
    np.testing.assert_array_equal(run([x], flat, xv, linker=linker), [0, 1, 0, 2, 1, 2, 0, 1, 0])


def test_unique_edge_cases_and_types() -> None:
    x = ot.dvector("x")
    np.testing.assert_array_equal(
        run([x], eo.unique(x), np.array([np.nan, 1.0, np.nan])), [1, np.nan]
    )
    assert run([x], eo.unique(x), np.zeros(0)).shape == (0,)
    assert isinstance(eo.unique(x), Variable)  # one output: not a list
    m = T("int32", (4, 3), "m")
    assert eo.unique(m, axis=0).type == TensorType("int32", shape=(None, 3))
    assert eo.unique(m, return_counts=True)[1].type == TensorType("int64", shape=(None,))
    assert eo.unique(m, axis=-1).owner.op == Unique(axis=1)
    with pytest.raises(ValueError, match="Axis cannot be negative"):
        Unique(axis=-1)
    with pytest.raises(ValueError, match="out of range"):
        Unique(axis=2)(m)
    with pytest.raises(NullTypeGradError, match="unique has no gradient"):
        grad(eo.unique(x).sum(), x)


# ====================================================================== diagonals


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2), (3, 3, 3), (0, 4)])
def test_fill_diagonal_matches_numpy(linker: str, shape: tuple[int, ...]) -> None:
    a = T("float64", (None,) * len(shape), "a")
    av = RNG.normal(size=shape)
    got = run([a], eo.fill_diagonal(a, 7), av, linker=linker)
    expected = av.copy()
    np.fill_diagonal(expected, 7)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(run([a], a, av), av)  # the input is not changed


@pytest.mark.parametrize("linker", LINKERS)
def test_fill_diagonal_dtypes_and_errors(linker: str) -> None:
    i = ot.imatrix("i")
    got = run([i], eo.fill_diagonal(i, np.int8(-3)), np.ones((2, 3), dtype="int32"), linker=linker)
    np.testing.assert_array_equal(got, [[-3, 1, 1], [1, -3, 1]])
    assert got.dtype == np.int32
    with pytest.raises(TypeError, match="type of second parameter must be the same"):
        eo.fill_diagonal(i, 1.5)
    with pytest.raises(TypeError, match="at least two dimensions"):
        eo.fill_diagonal(ot.dvector("v"), 1.0)
    with pytest.raises(TypeError, match="must be a scalar"):
        eo.fill_diagonal(i, ot.ivector("w"))
    cube = ot.dtensor3("c")
    with pytest.raises(ValueError, match="All dimensions of input must be of equal length"):
        run([cube], eo.fill_diagonal(cube, 1.0), np.zeros((2, 3, 2)), linker=linker)


def test_fill_diagonal_gradient_and_shape() -> None:
    for shape in [(3, 3), (2, 4), (4, 2), (2, 2, 2)]:
        av = RNG.normal(size=shape)
        verify(lambda a, v: eo.fill_diagonal(a, v), [av, np.array(0.7)])
    a = ot.dmatrix("a")
    check_infer_shape([a], eo.fill_diagonal(a, 1.0), np.zeros((2, 5)))
    assert eo.fill_diagonal(a, 1.0).owner.op == FillDiagonal()


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_fill_diagonal_offset_matches_numpy(linker: str, shape: tuple[int, int]) -> None:
    a, o = ot.dmatrix("a"), ot.lscalar("o")
    av = RNG.normal(size=shape)
    out = eo.fill_diagonal_offset(a, 9.0, o)
    for offset in range(-6, 7):
        expected = av.copy()
        rows = np.arange(shape[0])
        keep = (rows + offset >= 0) & (rows + offset < shape[1])
        expected[rows[keep], rows[keep] + offset] = 9.0
        np.testing.assert_array_equal(run([a, o], out, av, offset, linker=linker), expected)


def test_fill_diagonal_offset_gradient_types_and_errors() -> None:
    for shape, offset in [((3, 3), 1), ((2, 5), -1), ((5, 2), 2), ((3, 4), 0)]:
        av = RNG.normal(size=shape)
        verify(
            lambda a, v, offset=offset: eo.fill_diagonal_offset(a, v, offset),
            [av, np.array(0.3)],
        )
    a, o = ot.dmatrix("a"), ot.lscalar("o")
    out = eo.fill_diagonal_offset(a, 1.0, o)
    assert out.owner.op == FillDiagonalOffset() and out.type == a.type
    check_infer_shape([a, o], out, np.zeros((2, 3)), 1)
    with pytest.raises(NullTypeGradError, match="the offset is an integer"):
        grad(out.sum(), o)
    with pytest.raises(TypeError, match="exactly two dimensions"):
        eo.fill_diagonal_offset(ot.dtensor3("c"), 1.0, 0)
    with pytest.raises(TypeError, match="third parameter must be an integer"):
        eo.fill_diagonal_offset(a, 1.0, 0.5)


# ====================================================================== flat indices


def test_unravel_and_ravel_indices_match_numpy() -> None:
    i = ot.lmatrix("i")
    iv = np.array([[0, 5, 11], [7, 3, 2]])
    for order in ("C", "F"):
        coords = eo.unravel_index(i, (3, 4), order=order)
        assert len(coords) == 2 and all(c.type == i.type for c in coords)
        got = run([i], list(coords), iv)
        for g, e in zip(got, np.unravel_index(iv, (3, 4), order=order), strict=True):
            np.testing.assert_array_equal(g, e)
        back = eo.ravel_multi_index(coords, (3, 4), order=order)
        np.testing.assert_array_equal(run([i], back, iv), iv)
        check_infer_shape([i], coords[1], iv)
        check_infer_shape([i], back, iv)
    a, b = ot.lvector("a"), ot.lvector("b")
    for mode in ("wrap", "clip"):
        got = run([a, b], eo.ravel_multi_index([a, b], [3, 4], mode=mode), [5, -1], [2, 9])
        np.testing.assert_array_equal(
            got, np.ravel_multi_index(([5, -1], [2, 9]), (3, 4), mode=mode)
        )
    with pytest.raises(ValueError, match="invalid entry"):
        run([a, b], eo.ravel_multi_index([a, b], [3, 4]), [5], [0])
    with pytest.raises(TypeError, match="multi_index must be a tuple or a list"):
        eo.ravel_multi_index(a, [3])
    with pytest.raises(TypeError, match="indices must be an integer tensor"):
        eo.unravel_index(ot.dvector("d"), (3,))
    with pytest.raises(NullTypeGradError):
        grad(eo.unravel_index(a, (3, 4))[0].sum().astype("float64"), a)
    assert eo.unravel_index(a, (12,))[0].owner.op == UnravelIndex("C")
    assert eo.ravel_multi_index([a], (12,)).owner.op == RavelMultiIndex("raise", "C")


# ====================================================================== graph-level helpers


def test_bincount_matches_numpy() -> None:
    x, w = ot.lvector("x"), ot.dvector("w")
    xv, wv = np.array([0, 1, 1, 3, 1]), RNG.normal(size=5)
    got = run([x], eo.bincount(x), xv)
    np.testing.assert_array_equal(got, np.bincount(xv))
    assert got.dtype == np.int64
    np.testing.assert_allclose(run([x, w], eo.bincount(x, w), xv, wv), np.bincount(xv, wv))
    np.testing.assert_array_equal(
        run([x], eo.bincount(x, minlength=7), xv), np.bincount(xv, minlength=7)
    )
    small = ot.bvector("s")
    sv = np.array([2, 2, 0], dtype="int8")
    np.testing.assert_array_equal(run([small], eo.bincount(small), sv), np.bincount(sv))
    with pytest.raises(IndexError):
        run([x], eo.bincount(x, assert_nonneg=True), np.array([1, -1]))
    with pytest.raises(TypeError, match="dimension 1"):
        eo.bincount(ot.lmatrix("m"))
    with pytest.raises(TypeError, match="integer tensor"):
        eo.bincount(w)


def test_squeeze_uses_static_shapes() -> None:
    x = T("float64", (1, None, 1, 3))
    xv = RNG.normal(size=(1, 2, 1, 3))
    assert x.squeeze().type.shape == (None, 3)
    assert eo.squeeze(x, axis=-2).type.shape == (1, None, 3)
    assert eo.squeeze(x, axis=(0, 2)).type.shape == (None, 3)
    np.testing.assert_array_equal(run([x], x.squeeze(), xv), np.squeeze(xv))
    np.testing.assert_array_equal(run([x], eo.squeeze(x, 0), xv), np.squeeze(xv, 0))
    y = ot.dmatrix("y")
    assert eo.squeeze(y) is y
    with pytest.raises(ValueError, match="not known to have length 1"):
        eo.squeeze(y, axis=0)
    with pytest.raises(np.exceptions.AxisError):
        eo.squeeze(x, axis=4)
    with pytest.raises(ValueError, match="repeated axis"):
        eo.squeeze(x, axis=(0, -4))
    verify(lambda a: eo.squeeze(a), [xv])


def test_compress_broadcast_roll_and_one_hot() -> None:
    x, c = ot.dmatrix("x"), ot.bvector("c")
    xv = RNG.normal(size=(3, 4))
    cv = np.array([1, 0, 1], dtype="int8")
    np.testing.assert_array_equal(
        run([x, c], eo.compress(c, x, axis=0), xv, cv), np.compress(cv, xv, 0)
    )
    np.testing.assert_array_equal(run([x, c], c.compress(x), xv, cv), np.compress(cv, xv))
    v = ot.dvector("v")
    np.testing.assert_array_equal(
        run([v], eo.broadcast_to(v, (2, 3)), np.arange(3.0)),
        np.broadcast_to(np.arange(3.0), (2, 3)),
    )
    col = T("float64", (None, 1), "col")
    a, b = eo.broadcast_arrays(col, v)
    got = run([col, v], [a, b], np.ones((2, 1)), np.arange(3.0))
    for g, e in zip(got, np.broadcast_arrays(np.ones((2, 1)), np.arange(3.0)), strict=True):
        np.testing.assert_array_equal(g, e)
    s = ot.lscalar("s")
    for shift, axis in [(1, 0), (-2, 1), (5, None), ((1, 2), (0, 1)), (3, -1)]:
        np.testing.assert_array_equal(
            run([x], eo.roll(x, shift, axis), xv), np.roll(xv, shift, axis)
        )
    np.testing.assert_array_equal(run([x, s], eo.roll(x, s, 1), xv, -7), np.roll(xv, -7, 1))
    verify(lambda a: eo.roll(a, 2, 1), [xv])
    y = ot.lvector("y")
    got = run([y], eo.to_one_hot(y, 4, dtype="int32"), np.array([0, 3, 1]))
    np.testing.assert_array_equal(got, np.eye(4, dtype="int32")[[0, 3, 1]])


def test_linspace_logspace_geomspace_match_numpy() -> None:
    s, e = ot.dvector("s"), ot.dvector("e")
    sv, ev = np.array([0.0, 1.0, -2.0]), np.array([1.0, 5.0, 2.0])
    for num in (0, 1, 2, 7):
        for endpoint in (True, False):
            kw = {"endpoint": endpoint}
            np.testing.assert_allclose(
                run([], eo.linspace(-1.5, 3.0, num, dtype="float64", **kw)),
                np.linspace(-1.5, 3.0, num, **kw),
            )
            for axis in (0, -1):
                got = run([s, e], eo.linspace(s, e, num, dtype="float64", axis=axis, **kw), sv, ev)
                np.testing.assert_allclose(got, np.linspace(sv, ev, num, axis=axis, **kw))
                got = run(
                    [s, e],
                    eo.logspace(s, e, num, base=2.0, dtype="float64", axis=axis, **kw),
                    sv,
                    ev,
                )
                np.testing.assert_allclose(got, np.logspace(sv, ev, num, base=2.0, axis=axis, **kw))
            got = run([], eo.geomspace(-1.0, -1000.0, num, dtype="float64", **kw))
            np.testing.assert_allclose(got, np.geomspace(-1.0, -1000.0, num, **kw))
    samples, step = eo.linspace(0.0, 1.0, 5, retstep=True, dtype="float64")
    assert run([], step) == 0.25 and samples.dtype == "float64"
    assert eo.linspace(0.0, 1.0, 3).dtype == opweave.config.floatX
    b = ot.dvector("b")
    got = run(
        [s, e, b], eo.logspace(s, e, 4, base=b, dtype="float64", axis=1), sv, ev, [2.0, 3.0, 10.0]
    )
    np.testing.assert_allclose(got, np.logspace(sv, ev, 4, base=[2.0, 3.0, 10.0], axis=1))
    with pytest.raises(TypeError, match="base must be a scalar"):
        eo.geomspace(1.0, 10.0, 3, base=b)


def test_bartlett_broadcast_shape_and_concat_with_broadcast() -> None:
    m = ot.lscalar("m")
    for size in (-1, 0, 1, 2, 5, 8):
        np.testing.assert_allclose(run([m], eo.bartlett(m), size), np.bartlett(size))
    with pytest.raises(TypeError, match="M must be an integer tensor"):
        eo.bartlett(ot.dscalar("f"))
    x, v = ot.dmatrix("x"), ot.dvector("v")
    shape = eo.broadcast_shape(x, v)
    assert len(shape) == 2
    assert [int(d) for d in run([x, v], list(shape), np.zeros((2, 3)), np.zeros(3))] == [2, 3]
    static = eo.broadcast_shape((2, 1), (1, 3), arrays_are_shapes=True)
    assert [ot.get_underlying_scalar_constant_value(d) for d in static] == [2, 3]
    a, c = T("float64", (2, 1), "a"), T("float64", (1, 3), "c")
    got = run([a, c], eo.concat_with_broadcast([a, c], axis=0), np.ones((2, 1)), np.zeros((1, 3)))
    np.testing.assert_array_equal(got, np.concatenate([np.ones((2, 3)), np.zeros((1, 3))]))
    with pytest.raises(ValueError, match="empty list"):
        eo.concat_with_broadcast([])
    with pytest.raises(TypeError, match="same number of dimensions"):
        eo.concat_with_broadcast([a, v])
