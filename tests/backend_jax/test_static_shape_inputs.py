"""Integer scalar inputs used as shapes, sizes and lengths: the ``jax`` linker makes them
static arguments of ``jax.jit`` (traced once per value), as PyTensor's JAX linker does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.scan import scan

JAX = opweave.Mode(linker="jax")


def _static_of(fn: Any) -> tuple[int, ...]:
    """The positions of the inputs ``fn``'s jitted program takes as static arguments."""
    return tuple(fn.fn.jitted.static)


def test_reshape_to_lengths_given_as_inputs(same_as_py: Any) -> None:
    a, n = pt.dvector("a"), pt.iscalar("n")
    out = pt.reshape(a, (n, n)) * 2.0
    same_as_py([a, n], [out], [np.arange(4.0), 2])
    same_as_py([a, n], [out], [np.arange(9.0), np.int32(3)])


def test_one_trace_per_value_and_the_right_lengths_each_time() -> None:
    n = pt.lscalar("n")
    f = opweave.function([n], [pt.zeros((n, 2)) + n, pt.arange(n), pt.eye(n)], mode=JAX)
    for value in (3, 1, 3, 0, 4):
        zeros, arange, eye = f(value)
        np.testing.assert_array_equal(zeros, np.full((value, 2), float(value)))
        np.testing.assert_array_equal(arange, np.arange(value))
        np.testing.assert_array_equal(eye, np.eye(value))
        assert arange.dtype == np.dtype("int64")
    assert _static_of(f) == (0,)


def test_an_input_used_as_a_length_and_as_a_value(same_as_py: Any) -> None:
    n, a = pt.lscalar("n"), pt.dvector("a")
    outs = [pt.alloc(a[n], n), a * n, pt.zeros(n).sum() + n]
    same_as_py([n, a], outs, [2, np.arange(4.0)])
    same_as_py([n, a], outs, [np.int64(3), np.arange(5.0)])


def test_only_the_inputs_above_the_node_that_needs_them_become_static() -> None:
    n, i, a = pt.lscalar("n"), pt.lscalar("i"), pt.dvector("a")
    f = opweave.function([n, i, a], pt.zeros(n) + a[i], mode=JAX)
    np.testing.assert_array_equal(f(3, 1, np.array([5.0, 7.0])), np.full(3, 7.0))
    np.testing.assert_array_equal(f(2, 0, np.array([5.0, 7.0])), np.full(2, 5.0))
    assert _static_of(f) == (0,)


def test_random_sizes_given_as_inputs() -> None:
    d0, d1 = pt.lscalar("d0"), pt.lscalar("d1")
    rng = opweave.shared(np.random.default_rng(5))
    f = opweave.function([d0, d1], pt.random.normal(0.0, 1.0, size=[d0, d1], rng=rng), mode=JAX)
    assert f(2, 3).shape == (2, 3)
    assert f(np.array(4), np.array(5)).shape == (4, 5)
    g = opweave.function([d0], pt.random.normal(0.0, 1.0, size=d0, rng=rng), mode=JAX)
    assert g(7).shape == (7,)


def test_scan_steps_given_as_an_input(same_as_py: Any) -> None:
    k, x0 = pt.lscalar("k"), pt.dscalar("x0")
    ys = scan(lambda x: x * 2.0 + 1.0, outputs_info=[x0], n_steps=k, return_updates=False)
    same_as_py([k, x0], [ys], [5, np.float64(0.5)])
    same_as_py([k, x0], [ys], [2, np.float64(-1.0)])


def test_a_bad_value_for_a_static_input_is_refused_by_its_type() -> None:
    n = pt.iscalar("n")
    f = opweave.function([n], pt.zeros(n), mode=JAX)
    with pytest.raises(TypeError, match="int32"):
        f(2.5)


def test_float_lengths_are_still_refused() -> None:
    x = pt.dscalar("x")
    f = opweave.function([x], pt.arange(x), mode=opweave.Mode(linker="jax", optimizer=None))
    with pytest.raises(NotImplementedError, match="must be known when the graph is compiled"):
        f(10.0)


def test_graphs_without_integer_scalars_are_jitted_directly() -> None:
    import jax

    x = pt.dvector("x")
    f = opweave.function([x], x * 2.0, mode=JAX)
    np.testing.assert_array_equal(f(np.arange(3.0)), np.arange(3.0) * 2.0)
    assert isinstance(f.fn.jitted, type(jax.jit(lambda v: v)))


def test_random_size_given_as_an_integer_vector() -> None:
    shape = pt.tensor("shape", dtype="int64", shape=(2,))
    rng = opweave.shared(np.random.default_rng(5))
    f = opweave.function([shape], pt.random.normal(0.0, 1.0, size=shape, rng=rng), mode=JAX)
    assert f(np.array([2, 3])).shape == (2, 3)
    assert f([4, 5]).shape == (4, 5)
    assert _static_of(f) == (0,)


def test_reshape_to_a_shape_given_as_a_vector(same_as_py: Any) -> None:
    a, shape = pt.dvector("a"), pt.tensor("shape", dtype="int64", shape=(2,))
    same_as_py([a, shape], [pt.reshape(a, shape, ndim=2)], [np.arange(6.0), np.array([3, 2])])
    same_as_py([a, shape], [pt.reshape(a, shape, ndim=2)], [np.arange(6.0), np.array([1, 6])])


def test_a_length_kept_in_a_shared_variable() -> None:
    # PyMC keeps the lengths of mutable dimensions in shared integer scalars.
    n = opweave.shared(np.int64(3), name="n")
    x = pt.dvector("x")
    f = opweave.function([x], pt.zeros(n) + x[0], mode=JAX)
    np.testing.assert_array_equal(f(np.array([2.0])), np.full(3, 2.0))
    n.set_value(np.int64(5))
    np.testing.assert_array_equal(f(np.array([2.0])), np.full(5, 2.0))


def test_a_shared_length_the_function_updates_is_refused() -> None:
    # Its buffer is donated to the update: it cannot also be a static argument.
    m = opweave.shared(np.int64(2), name="m")
    f = opweave.function([], pt.zeros(m), updates={m: m + 1}, mode=JAX)
    with pytest.raises(NotImplementedError, match="must be known when the graph is compiled"):
        f()


def test_index_vectors_of_unknown_length_are_not_made_static() -> None:
    # Their values may change at every call: a program per value would compile each time.
    i = pt.lvector("i")
    f = opweave.function([i], pt.bincount(i), mode=opweave.Mode(linker="jax", optimizer=None))
    with pytest.raises(NotImplementedError, match="must be known when the graph is compiled"):
        f(np.array([0, 1, 1]))
