"""``opweave.xtensor.reduction``: reductions and running folds over named dimensions,
compiled (their lowering to the tensor library's reductions and ``CumOp``) and compared
with NumPy over the axes where those dimensions sit."""

from __future__ import annotations

import re

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
from opweave.compile.mode import Mode
from opweave.tensor.extra_ops import CumOp
from opweave.tensor.reductions import Max, Sum
from opweave.xtensor import reduction as xr
from opweave.xtensor import xtensor
from opweave.xtensor.basic import XOp
from opweave.xtensor.reduction import XCumReduce, XReduce

MODES = [None, "FAST_COMPILE", Mode(linker="py"), Mode(linker="c")]
MODE_IDS = ["default", "fast_compile", "py", "c"]

DIMS = ("a", "b", "c")
#: Each ``dim`` argument and the NumPy axes it stands for (``None``: all of them).
DIM_CASES = [(None, None), (..., None), ("b", (1,)), (("c", "a"), (2, 0)), (["a", "b", "c"], None)]
REDUCTIONS = ("sum", "prod", "max", "min", "all", "any", "mean")


def _fn(inputs, outputs, mode=None):
    f = opweave.function(inputs, outputs, mode=mode)
    assert not [node for node in f.maker.fgraph.toposort() if isinstance(node.op, XOp)]
    return f


def _value(rng: np.random.Generator) -> np.ndarray:
    # Small values near 1, some exact zeros: products stay finite, all/any both vary.
    v = rng.uniform(0.5, 1.5, size=(2, 3, 4))
    v[0, 1, :] = 0.0
    v[1, :, 2] = 0.0
    return v


def _kept(axes):
    return () if axes is None else tuple(d for i, d in enumerate(DIMS) if i not in axes)


def _np_cum(fn, v, axes):
    for axis in range(v.ndim) if axes is None else axes:
        v = fn(v, axis=axis)
    return v


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_reductions_equal_numpy(mode) -> None:
    x = xtensor("x", dims=DIMS, shape=(2, 3, 4), dtype="float64")
    outs, expected = [], []
    v = _value(np.random.default_rng(1))
    for dim, axes in DIM_CASES:
        for name in REDUCTIONS:
            out = getattr(xr, name)(x, dim)
            assert out.type.dims == _kept(axes)
            outs.append(out)
            expected.append(getattr(np, name)(v, axis=axes))
        for name in ("cumsum", "cumprod"):
            out = getattr(xr, name)(x, dim)
            assert out.type.dims == DIMS
            outs.append(out)
            expected.append(_np_cum(getattr(np, name), v, axes))
    results = _fn([x], outs, mode=mode)(v)
    for out, res, exp in zip(outs, results, expected, strict=True):
        assert res.shape == np.shape(exp)
        assert res.dtype == out.type.dtype
        np.testing.assert_allclose(res, exp, rtol=1e-12)


def test_methods_call_the_functions() -> None:
    x = xtensor("x", dims=DIMS, shape=(2, 3, 4), dtype="float64")
    v = _value(np.random.default_rng(2))
    outs = [x.sum(), x.max("a"), x.any(("b", "c")), x.mean("c"), x.cumsum("b"), x.cumprod()]
    outs += [x.std("a", ddof=1), x.var()]
    results = _fn([x], outs)(v)
    expected = [v.sum(), v.max(0), v.any((1, 2)), v.mean(2), v.cumsum(1)]
    expected += [_np_cum(np.cumprod, v, None), v.std(0, ddof=1), v.var()]
    for res, exp in zip(results, expected, strict=True):
        np.testing.assert_allclose(res, exp, rtol=1e-12)


@pytest.mark.parametrize("mode", [None, "FAST_COMPILE"], ids=["default", "fast_compile"])
def test_var_and_std_with_ddof_equal_numpy(mode) -> None:
    x = xtensor("x", dims=DIMS, shape=(None, 3, 5), dtype="float64")
    v = np.random.default_rng(3).normal(size=(4, 3, 5))
    outs, expected = [], []
    for dim, axes in DIM_CASES:
        for ddof in (0, 1, 2):
            outs += [xr.var(x, dim, ddof=ddof), xr.std(x, dim, ddof=ddof)]
            expected += [np.var(v, axis=axes, ddof=ddof), np.std(v, axis=axes, ddof=ddof)]
    results = _fn([x], outs, mode=mode)(v)
    for out, res, exp in zip(outs, results, expected, strict=True):
        assert out.type.dtype == "float64"
        np.testing.assert_allclose(res, exp, rtol=1e-10)


@pytest.mark.parametrize(("in_dtype", "out_dtype"), [("int8", "int64"), ("uint8", "uint64")])
def test_sum_prod_and_running_folds_of_integers_do_not_overflow(in_dtype, out_dtype) -> None:
    top = np.iinfo(in_dtype).max
    x = xtensor("x", dims=("a", "b"), shape=(2, 2), dtype=in_dtype)
    v = np.full((2, 2), top, dtype=in_dtype)
    outs = [x.sum(), x.prod("a"), x.cumsum("a"), x.cumprod(("a", "b"))]
    for out in outs:
        assert out.type.dtype == out_dtype
    results = _fn([x], outs)(v)
    wide = v.astype(out_dtype)
    expected = [wide.sum(), wide.prod(0), wide.cumsum(0), wide.cumprod(0).cumprod(1)]
    for res, exp in zip(results, expected, strict=True):
        assert res.dtype == out_dtype
        np.testing.assert_array_equal(res, exp)


def test_dtypes_of_the_other_reductions() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="int16")
    flags = xtensor("f", dims=("a", "b"), shape=(2, 3), dtype="bool")
    outs = [x.max("a"), x.min(), x.all("b"), x.any(), flags.sum("a"), x.mean("b")]
    assert [o.type.dtype for o in outs] == ["int16", "int16", "bool", "bool", "int64", "float64"]
    v = np.array([[-3, 0, 7], [2, 2, -1]], dtype="int16")
    fv = np.array([[True, False, True], [True, True, False]])
    results = _fn([x, flags], outs)(v, fv)
    expected = [v.max(0), v.min(), v.all(1), v.any(), fv.sum(0), v.mean(1)]
    for res, exp in zip(results, expected, strict=True):
        np.testing.assert_array_equal(res, exp)


def test_reducing_no_dimension_is_the_identity() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="float64")
    outs = [x.sum([]), x.max(()), x.cumsum([])]
    v = np.arange(6.0).reshape(2, 3) - 2.5
    for res in _fn([x], outs)(v):
        np.testing.assert_array_equal(res, v)


def test_lowered_graph_uses_the_tensor_reductions() -> None:
    x = xtensor("x", dims=DIMS, shape=(2, 3, 4), dtype="float64")
    f = _fn([x], [x.sum(("c", "a")), x.max("b"), x.cumsum(("a", "c"))], mode="FAST_COMPILE")
    nodes = f.maker.fgraph.toposort()
    sums = [n.op for n in nodes if isinstance(n.op, Sum)]
    maxes = [n.op for n in nodes if isinstance(n.op, Max)]
    cums = sorted(n.op.axis for n in nodes if isinstance(n.op, CumOp))
    assert [tuple(op.axis) for op in sums] == [(0, 2)]
    assert [tuple(op.axis) for op in maxes] == [(1,)]
    assert cums == [0, 2]


def test_ops_ignore_the_order_of_dims() -> None:
    assert XReduce(ps.add, ("b", "a")) == XReduce(ps.add, ["a", "b"])
    assert XReduce(ps.add, ("a",)) != XReduce(ps.mul, ("a",))
    assert XCumReduce(ps.mul, ("c", "a")) == XCumReduce(ps.mul, ("a", "c"))
    x = xtensor("x", dims=DIMS, shape=(2, 3, 4))
    node = x.sum(("c", "a")).owner
    assert isinstance(node.op, XReduce)
    assert node.op.dims == ("a", "c")
    assert node.outputs[0].type.shape == (3,)


def test_unknown_dims_raise() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3))
    with pytest.raises(
        ValueError,
        match=re.escape("Reduced dims ('a', 'z') not found in array dimensions ('a', 'b')."),
    ):
        x.sum(("z", "a"))
    with pytest.raises(ValueError, match="Reduced dims"):
        xr.mean(x, "c")
    with pytest.raises(
        ValueError,
        match=re.escape("Accumulated dims ('c',) not found in array dimensions ('a', 'b')."),
    ):
        x.cumprod("c")


def test_vectorize_node_reduces_the_batched_input() -> None:
    x = xtensor("x", dims=("a", "b"), shape=(2, 3), dtype="float64")
    batched = xtensor("xb", dims=("z", "a", "b"), shape=(4, 2, 3), dtype="float64")
    v = np.random.default_rng(4).normal(size=(4, 2, 3))
    outs = []
    for out in (x.max("a"), x.cumsum("b")):
        [new] = out.owner.op.vectorize_node(out.owner, batched, new_dim="z")
        outs.append(new)
    assert [o.type.dims for o in outs] == [("z", "b"), ("z", "a", "b")]
    results = _fn([batched], outs)(v)
    np.testing.assert_allclose(results[0], v.max(1))
    np.testing.assert_allclose(results[1], v.cumsum(2))
