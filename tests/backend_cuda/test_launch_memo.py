"""Launches remembered per operand layout (``LaunchMemo``, ``bind``): a second call with
other arrays of the same layout reads the new arrays, and arrays passed twice, in place or
not, never share a remembered launch with distinct arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave.scalar as ps
from opweave.tensor.type import TensorType
from opweave_cuda.kernels import elemwise_kernel, reduction_kernel
from opweave_cuda.kernels.runtime import BoundLaunch, LaunchMemo, bind


def _tt(dtype: str, ndim: int) -> TensorType:
    return TensorType(dtype, (None,) * ndim)


class _Layout:
    """An array-like with only what a layout key reads."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> None:
        self.shape, self.strides, self.dtype = shape, strides, np.dtype(dtype)


def test_keys_tell_layouts_and_aliasing_apart() -> None:
    a, b = _Layout((4, 3), (12, 4), "float32"), _Layout((4, 3), (12, 4), "float32")
    key = LaunchMemo.key
    assert key([a, b]) == key([b, a])
    assert key([a, a]) != key([a, b])
    assert key([a, b, a]) != key([a, b, b])
    assert key([a, b]) != key([a, _Layout((4, 3), (4, 16), "float32")])
    assert key([a, b]) != key([a, _Layout((4, 3), (24, 8), "float64")])
    assert key([a, b]) != key([a, _Layout((3, 4), (16, 4), "float32")])


def test_memo_is_bounded_and_says_when_it_has_not_seen_a_layout() -> None:
    memo = LaunchMemo(size=2)
    assert memo.get(("x",)) is LaunchMemo.UNSEEN
    memo.put(("x",), None)
    assert memo.get(("x",)) is None
    memo.put(("y",), 1)
    memo.put(("z",), 2)
    assert len(memo) <= 2
    assert memo.get(("z",)) == 2
    made: list[int] = []
    a = _Layout((4,), (8,), "float64")
    for _ in range(3):
        assert memo.remembered([a], lambda: made.append(1) or "launch") == "launch"
    assert made == [1]  # made once, then remembered


def test_bind_refuses_an_array_that_is_not_an_operand() -> None:
    kernel = elemwise_kernel(ps.add, [_tt("float32", 1)] * 2, [_tt("float32", 1)])
    x = np.zeros(4, "float32")
    values = [4, x, 1, x, 1, np.zeros(4, "float32")]
    with pytest.raises(ValueError, match="array argument 5 is not one of the operands"):
        bind(kernel.contiguous, (1, 1, 1), (4, 1, 1), values, [x])
    with pytest.raises(TypeError, match="takes 6 arguments, got 2"):
        bind(kernel.contiguous, (1, 1, 1), (4, 1, 1), [4, x], [x])
    assert bind(kernel.contiguous, (0, 1, 1), (4, 1, 1), [0, x, 1, x, 1, x], [x]) is None


@pytest.fixture(scope="module")
def gpuarray() -> Any:
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


@pytest.mark.cuda
@pytest.mark.parametrize("layout", ["contiguous", "row", "transposed"])
def test_second_call_of_a_layout_reads_the_new_arrays(gpuarray: Any, layout: str) -> None:
    kernel = elemwise_kernel(ps.sub, [_tt("float32", 2)] * 2, [_tt("float32", 2)])
    rng = np.random.default_rng(0)
    seen = []
    for _ in range(3):
        x = rng.standard_normal((5, 7), dtype=np.float32)
        y = rng.standard_normal((1, 7) if layout == "row" else (5, 7), dtype=np.float32)
        gx = gpuarray.to_gpu(x.T.copy()).T if layout == "transposed" else gpuarray.to_gpu(x)
        gy, out = gpuarray.to_gpu(y), gpuarray.empty((5, 7), "float32")
        kernel([gx, gy], [out])
        np.testing.assert_allclose(out.get(), x - y, rtol=1e-6)
        seen.append(len(kernel._memo))
    assert seen == [1, 1, 1]


@pytest.mark.cuda
def test_one_array_passed_twice_does_not_serve_two_arrays(gpuarray: Any) -> None:
    kernel = elemwise_kernel(ps.sub, [_tt("float64", 1)] * 2, [_tt("float64", 1)])
    a, b = np.arange(6.0), np.arange(6.0) ** 2
    ga, gb, out = gpuarray.to_gpu(a), gpuarray.to_gpu(b), gpuarray.empty(6, "float64")
    kernel([ga, ga], [out])
    np.testing.assert_array_equal(out.get(), np.zeros(6))
    kernel([ga, gb], [out])
    np.testing.assert_array_equal(out.get(), a - b)
    # in place: the output is the first input, then a distinct array of that layout
    inplace = elemwise_kernel(ps.exp, [_tt("float64", 1)], [_tt("float64", 1)], {0: 0})
    inplace([ga], [ga])
    np.testing.assert_allclose(ga.get(), np.exp(a))
    other = gpuarray.empty(6, "float64")
    inplace([gb], [other])
    np.testing.assert_allclose(other.get(), np.exp(b))
    np.testing.assert_array_equal(gb.get(), b)


@pytest.mark.cuda
@pytest.mark.parametrize(("shape", "axes"), [((6, 40), (0,)), ((3, 1000, 1000), (0, 1, 2))])
def test_reductions_remember_their_launches(
    gpuarray: Any, shape: tuple[int, ...], axes: tuple[int, ...]
) -> None:
    """A column reduction (one bound launch) and a split full reduction (a remembered
    choice, two launches through a scratch array), each called twice with new arrays."""
    ndim = len(shape)
    kernel = reduction_kernel(ps.add, axes, _tt("float64", ndim), _tt("float64", ndim - len(axes)))
    rng = np.random.default_rng(1)
    for _ in range(2):
        x = rng.uniform(0.5, 2.0, size=shape)
        expected = x.sum(axis=axes)
        out = gpuarray.empty(expected.shape, "float64")
        kernel(gpuarray.to_gpu(x), out)
        np.testing.assert_allclose(out.get(), expected, rtol=1e-12)
    (remembered,) = kernel._memo._made.values()
    assert isinstance(remembered, BoundLaunch) == (len(axes) == 1)
