"""Shared variables on the ``jax`` linker: their values stay on the device between calls,
updated inputs are donated, and ``get_value``/``set_value`` keep the core's semantics
(NumPy values, copies unless borrowed)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.raise_op import Assert


def _mirror(f: Any, var: Any) -> Any:
    """The linker's device mirror of shared input ``var`` of ``f``."""
    inputs = f.maker.fgraph.inputs
    index = next(i for i, v in enumerate(inputs) if getattr(v, "container", None) is var.container)
    return f.fn.mirrors[index]


def test_a_shared_value_read_by_calls_is_copied_to_the_device_once() -> None:
    w = opweave.shared(np.arange(4.0), name="w")
    x = pt.dvector("x")
    f = opweave.function([x], x * w, mode="JAX")
    np.testing.assert_array_equal(f(np.ones(4)), np.arange(4.0))
    mirror = _mirror(f, w)
    on_device = mirror.value
    assert isinstance(on_device, jax.Array)
    np.testing.assert_array_equal(f(np.full(4, 2.0)), 2 * np.arange(4.0))
    assert mirror.value is on_device


def test_updated_values_stay_on_the_device_and_are_donated() -> None:
    w = opweave.shared(np.zeros(3), name="w")
    f = opweave.function([], [], updates=[(w, w + 1)], mode="JAX")
    f()
    mirror = _mirror(f, w)
    kept = mirror.value
    assert isinstance(kept, jax.Array)
    np.testing.assert_array_equal(np.asarray(kept), np.ones(3))
    assert mirror.host is w.get_value(borrow=True)
    index = f.maker.fgraph.inputs.index(next(v for v in f.maker.fgraph.inputs if v.name == "w"))
    assert f.fn.donate_argnums == (index,)
    f()
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])


def test_get_value_gives_numpy_copies_and_borrowed_values_stay_valid() -> None:
    w = opweave.shared(np.zeros((2, 2)), name="w")
    f = opweave.function([], [], updates=[(w, w + 1)], mode="JAX")
    f()
    copy = w.get_value()
    borrowed = w.get_value(borrow=True)
    assert type(copy) is np.ndarray and copy.flags.writeable
    assert isinstance(borrowed, np.ndarray) and not borrowed.flags.writeable
    copy[...] = 100.0
    f()
    f()
    # What was handed out keeps the value it had: the device buffers it came from are not
    # overwritten by later calls.
    np.testing.assert_array_equal(borrowed, np.ones((2, 2)))
    np.testing.assert_array_equal(copy, np.full((2, 2), 100.0))
    np.testing.assert_array_equal(w.get_value(), np.full((2, 2), 3.0))


@pytest.mark.parametrize("borrow", [False, True])
def test_set_value_between_calls_is_seen(borrow: bool) -> None:
    w = opweave.shared(np.zeros(3), name="w")
    x = pt.dvector("x")
    read = opweave.function([x], w + x, mode="JAX")
    np.testing.assert_array_equal(read(np.ones(3)), np.ones(3))
    w.set_value(np.full(3, 5.0), borrow=borrow)
    np.testing.assert_array_equal(read(np.ones(3)), np.full(3, 6.0))
    step = opweave.function([], [], updates=[(w, w * 2)], mode="JAX")
    step()
    w.set_value(np.arange(3.0), borrow=borrow)
    step()
    np.testing.assert_array_equal(w.get_value(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(read(np.zeros(3)), [0.0, 2.0, 4.0])


def test_a_value_set_into_the_old_buffer_is_seen() -> None:
    own = np.zeros(3)
    w = opweave.shared(own, name="w")
    read = opweave.function([], w * 1, mode="JAX")
    np.testing.assert_array_equal(read(), np.zeros(3))
    w.set_value(np.ones(3))  # may copy into the internal array
    np.testing.assert_array_equal(read(), np.ones(3))
    w.get_value(borrow=True)
    w.set_value(np.full(3, 7.0))
    np.testing.assert_array_equal(read(), np.full(3, 7.0))


def test_jax_and_py_functions_share_the_value() -> None:
    w = opweave.shared(np.ones(2), name="w")
    jax_step = opweave.function([], [], updates=[(w, w + 1)], mode="JAX")
    # Without in-place rewrites: the jax linker's values are read-only arrays (JAX arrays
    # are immutable), which a graph updating them in place cannot overwrite.
    py_mode = opweave.Mode(linker="py", optimizer=None)
    py_step = opweave.function([], [], updates=[(w, w * 10)], mode=py_mode)
    py_read = opweave.function([], w.sum(), mode=opweave.Mode(linker="py"))
    jax_step()
    py_step()
    assert py_read() == 40.0
    jax_step()
    py_step()
    np.testing.assert_array_equal(w.get_value(), [210.0, 210.0])


def test_two_jax_functions_updating_one_variable() -> None:
    w = opweave.shared(np.zeros(2), name="w")
    add = opweave.function([], [], updates=[(w, w + 1)], mode="JAX")
    double = opweave.function([], [], updates=[(w, w * 2)], mode="JAX")
    add()
    double()
    add()
    double()
    np.testing.assert_array_equal(w.get_value(), [6.0, 6.0])


def test_outputs_are_writable_copies_even_of_updated_values() -> None:
    w = opweave.shared(np.zeros(2), name="w")
    new = w + 1
    f = opweave.function([], [new, w], updates=[(w, new)], mode="JAX")
    out_new, out_old = f()
    assert out_new.flags.writeable and out_old.flags.writeable
    out_new[...] = -1.0
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0])
    out_new, out_old = f()
    np.testing.assert_array_equal(out_new, [2.0, 2.0])
    np.testing.assert_array_equal(out_old, [1.0, 1.0])


def test_a_failed_check_leaves_the_shared_value_as_it_was() -> None:
    w = opweave.shared(np.zeros(2), name="w")
    x = pt.dvector("x")
    checked = Assert("x must be positive")(x, pt.all(x > 0))
    f = opweave.function([x], checked.sum(), updates=[(w, w + checked)], mode="JAX")
    f(np.ones(2))
    with pytest.raises(AssertionError, match="x must be positive"):
        f(-np.ones(2))
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0])
    f(np.ones(2))
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])


def test_a_training_loop_keeps_the_py_results() -> None:
    rng = np.random.default_rng(0)
    data, target = rng.normal(size=(32, 5)), rng.normal(size=32)
    start = rng.normal(size=5)

    def train(mode: Any) -> np.ndarray:
        w = opweave.shared(start.copy(), name="w")
        X, y = pt.dmatrix("X"), pt.dvector("y")
        loss = pt.mean((X @ w - y) ** 2)
        step = opweave.function(
            [X, y], loss, updates=[(w, w - 0.05 * opweave.grad(loss, w))], mode=mode
        )
        for _ in range(5):
            step(data, target)
        return np.asarray(w.get_value())

    np.testing.assert_allclose(train("JAX"), train(opweave.Mode(linker="py")), rtol=1e-12)
