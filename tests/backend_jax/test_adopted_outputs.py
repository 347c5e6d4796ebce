"""Large outputs of a ``jax``-linker function are the device buffers themselves on the CPU
(no copy), and still arrays the caller owns: writable, aliasing no input, no other output
and no later result."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave_jax.adopt import MIN_BYTES

JAX = opweave.Mode(linker="jax")
N = MIN_BYTES // 8 * 2  # float64 elements: twice the size adopted from


def _aligned(n: int, align: int = 64) -> np.ndarray:
    """A float64 vector whose buffer XLA on the CPU can use in place (64-byte aligned)."""
    raw = np.empty(n + align // 8)
    start = (-raw.ctypes.data % align) // 8
    out = raw[start : start + n]
    out[...] = np.linspace(-1.0, 1.0, n)
    return out


def _unshared(a: np.ndarray, *others: np.ndarray) -> bool:
    return not any(np.shares_memory(a, b) for b in others)


@pytest.fixture(scope="module")
def cpu() -> None:
    if jax.devices()[0].platform != "cpu":
        pytest.skip("adoption is for the CPU")


def test_a_large_output_is_a_writable_view_of_its_device_buffer(cpu: None) -> None:
    x = pt.dvector("x")
    f = opweave.function([x], pt.exp(x), mode=JAX)
    a = _aligned(N)
    out = f(a)
    assert isinstance(out, np.ndarray) and out.dtype == "float64"
    assert not out.flags.owndata  # no copy: the device buffer itself
    assert isinstance(out.base.owner, jax.Array)  # type: ignore[union-attr]
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-15)
    assert out.flags.writeable
    again = f(a)
    out[...] = 7.0  # the caller's own memory: the next results do not change
    np.testing.assert_array_equal(again, f(a))
    assert _unshared(out, a, again)


def test_a_small_output_is_still_a_copy(cpu: None) -> None:
    x = pt.dvector("x")
    f = opweave.function([x], pt.exp(x), mode=JAX)
    out = f(np.ones(16))
    assert out.flags.owndata and out.flags.writeable


def test_an_input_returned_unchanged_never_shares_the_callers_memory(cpu: None) -> None:
    x = pt.dvector("x")
    f = opweave.function([x], [x, x * 1.0, pt.exp(x)], mode=JAX)
    a = _aligned(N)
    kept = a.copy()
    outs = f(a)
    for out in outs:
        assert out.flags.writeable and _unshared(out, a)
        out[...] = 0.0
    np.testing.assert_array_equal(a, kept)


def test_a_jax_array_argument_is_never_written_through_an_output(cpu: None) -> None:
    x = pt.dvector("x")
    f = opweave.function([x], [x, x + 0.0], mode=JAX)
    d = jax.device_put(_aligned(N))
    kept = np.array(d)
    for out in f(d):
        out[...] = 5.0
    np.testing.assert_array_equal(np.asarray(d), kept)


def test_one_value_returned_twice_gives_two_arrays(cpu: None) -> None:
    x = pt.dvector("x")
    y = pt.exp(x)
    f = opweave.function([x], [y, y], mode=JAX)
    first, second = f(_aligned(N))
    assert _unshared(first, second)
    first[...] = 1.0
    np.testing.assert_allclose(second, np.exp(_aligned(N)), rtol=1e-15)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_adopted_outputs_keep_their_dtype_and_shape(cpu: None, dtype: str) -> None:
    x = pt.matrix("x", dtype=dtype)
    f = opweave.function([x], x.T if dtype == "bool" else x * 2, mode=JAX)
    a = (np.arange(2 * N).reshape(2, N) % 3).astype(dtype)
    out: Any = f(a)
    expected = a.T if dtype == "bool" else a * 2
    assert out.dtype == dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    assert out.flags.writeable and _unshared(out, a)


def test_adopted_outputs_outlive_the_function(cpu: None) -> None:
    x = pt.dvector("x")
    f = opweave.function([x], pt.sqrt(pt.abs(x)), mode=JAX)
    a = _aligned(N)
    out = f(a)
    del f
    import gc

    gc.collect()
    np.testing.assert_allclose(out, np.sqrt(np.abs(a)), rtol=1e-15)
