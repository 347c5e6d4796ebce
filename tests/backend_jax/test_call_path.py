"""The call of a ``jax``-linker function: arguments straight to the jitted function (the
fast call), each still checked by its Type, outputs as NumPy arrays the caller owns."""

from __future__ import annotations

import threading
from typing import Any

import jax
import numpy as np
import pytest
from host_ops import host_hypot

import opweave
import opweave.tensor as pt
from opweave.compile.io import In, Out
from opweave.graph.utils import NoImplementationError
from opweave.raise_op import Assert

JAX = opweave.Mode(linker="jax")


def _fused() -> Any:
    x, y, z = pt.dvectors("x", "y", "z")
    return opweave.function([x, y, z], pt.exp(x) * y + z, mode=JAX)


def _expected(x: Any, y: Any, z: Any) -> Any:
    return np.exp(np.asarray(x, dtype="float64")) * y + z


def test_arguments_of_every_kind_give_the_values_of_the_graph() -> None:
    f = _fused()
    x, y, z = np.linspace(-1.0, 1.0, 5), np.arange(5.0), np.full(5, 0.5)
    for args in (
        (x, y, z),
        (list(x), y, z),  # filtered into an array
        (x.astype("float32"), y, z),  # upcast by the Type's filter
        (jax.device_put(x), jax.device_put(y), z),  # JAX arrays stay on the device
        (x[::-1].copy()[::-1], np.arange(10.0)[::2], z),  # strided
    ):
        np.testing.assert_allclose(f(*args), _expected(*args), rtol=1e-15)


def test_a_misaligned_array_is_read_right() -> None:
    f = _fused()
    raw = np.zeros(5 * 8 + 1, dtype=np.uint8)
    x = raw[1:].view("float64")
    x[...] = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert not x.flags.aligned
    np.testing.assert_allclose(f(x, np.ones(5), np.zeros(5)), np.exp(x), rtol=1e-15)


def test_python_floats_and_numpy_scalars_agree_for_float64_scalars() -> None:
    a, b, c = pt.dscalars("a", "b", "c")
    f = opweave.function([a, b, c], (a + b) * c, mode=JAX)
    for args in ((1.5, 2.0, 3.0), (np.float64(1.5), np.asarray(2.0), 3), (1.5, 2, np.float32(3))):
        out = f(*args)
        assert type(out) is np.ndarray and out.dtype == "float64" and out.shape == ()
        assert out == 10.5


def test_a_python_float_for_a_float64_scalar_is_not_computed_in_a_narrower_dtype() -> None:
    # JAX takes a Python float as a weakly typed scalar, which a switch with a float32
    # branch would round to float32; the Type says float64.
    a, x = pt.dscalar("a"), pt.fvector("x")
    f = opweave.function([a, x], pt.switch(pt.gt(x, 2), x, a), mode=JAX)
    xv = np.array([1.0, 3.0, 7.0], dtype="float32")
    expected = np.where(xv > 2, xv.astype("float64"), 0.1)
    for scale in (0.1, np.float64(0.1)):
        out = f(scale, xv)
        assert out.dtype == "float64"
        np.testing.assert_array_equal(out, expected)


def test_nothing_keeps_a_returned_output_alive() -> None:
    # A kept result would hold its device buffer until the next call, so that every
    # call wrote into fresh memory.
    import weakref

    f = _fused()
    x = np.linspace(0.0, 1.0, 100_000)
    out = f(x, x, x)
    np.testing.assert_allclose(out, _expected(x, x, x), rtol=1e-15)
    ref = weakref.ref(out)
    del out
    assert ref() is None


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.ones((2, 2)), r"bad input argument 0 \(name 'x'\).*TensorType\(float64"),
        (jax.numpy.ones((2, 2)), r"(?s)bad input argument 0 \(name 'x'\).*wrong rank"),
        ("text", r"bad input argument 0 \(name 'x'\)"),
    ],
)
def test_a_refused_argument_names_its_input(bad: Any, match: str) -> None:
    f = _fused()
    with pytest.raises(TypeError, match=match):
        f(bad, np.ones(3), np.ones(3))


def test_a_wrong_number_of_arguments_is_refused() -> None:
    f = _fused()
    with pytest.raises(TypeError, match="takes 3 inputs, got 4"):
        f(np.ones(3), np.ones(3), np.ones(3), np.ones(3))


def test_outputs_are_fresh_writable_arrays_the_caller_owns() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], [x * 2, x * 2, x], mode=JAX)
    value = np.arange(3.0)
    first, second, same = f(value)
    for out in (first, second, same):
        assert type(out) is np.ndarray and out.flags.writeable and out.flags.owndata
    assert not np.shares_memory(first, second) and not np.shares_memory(same, value)
    first[...] = -1.0
    again, _, _ = f(value)
    np.testing.assert_array_equal(again, [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(second, [0.0, 2.0, 4.0])


def test_a_borrowed_output_is_a_read_only_view_and_the_others_are_copies() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], [Out(x + 1, borrow=True), x + 2], mode=JAX)
    borrowed, owned = f(np.zeros(2))
    np.testing.assert_array_equal(borrowed, [1.0, 1.0])
    assert not borrowed.flags.writeable and owned.flags.writeable
    f(np.full(2, 5.0))
    np.testing.assert_array_equal(borrowed, [1.0, 1.0])  # not overwritten by a later call


def test_keywords_and_defaults_go_through_the_same_call() -> None:
    x, y = pt.dvectors("x", "y")
    f = opweave.function([x, In(y, value=np.full(2, 10.0))], x + y, mode=JAX)
    np.testing.assert_array_equal(f(np.ones(2)), [11.0, 11.0])
    np.testing.assert_array_equal(f(y=np.zeros(2), x=np.ones(2)), [1.0, 1.0])


def test_an_input_carrying_state_is_updated_by_each_call() -> None:
    x = pt.dvector("x")
    total = pt.dvector("total")
    f = opweave.function([x, In(total, value=np.zeros(2), update=total + x)], total, mode=JAX)
    f(np.ones(2))
    f(np.ones(2))
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    np.testing.assert_array_equal(f(np.zeros(2)), [3.0, 3.0])


def test_shared_values_and_their_updates_through_the_fast_call() -> None:
    w = opweave.shared(np.zeros(2), name="w")
    x = pt.dvector("x")
    step = opweave.function([x], w + x, updates=[(w, w + x)], mode=JAX)
    read = opweave.function([x], w * x, mode=JAX)
    np.testing.assert_array_equal(step(np.ones(2)), [1.0, 1.0])
    np.testing.assert_array_equal(read(np.full(2, 2.0)), [2.0, 2.0])
    w.set_value(np.full(2, 10.0))
    np.testing.assert_array_equal(step(np.ones(2)), [11.0, 11.0])
    np.testing.assert_array_equal(read(np.ones(2)), [11.0, 11.0])


def test_a_check_known_only_at_run_time_raises_after_the_call() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], Assert("x must be positive")(x, pt.all(x > 0)), mode=JAX)
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 1.0])
    with pytest.raises(AssertionError, match="x must be positive"):
        f(-np.ones(2))


def test_calls_from_several_threads_get_their_own_results() -> None:
    w = opweave.shared(np.arange(4.0), name="w")
    x = pt.dvector("x")
    f = opweave.function([x], x * w, mode=JAX)
    results: dict[int, Any] = {}

    def work(k: int) -> None:
        for _ in range(20):
            results[k] = f(np.full(4, float(k)))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(4):
        np.testing.assert_array_equal(results[k], k * np.arange(4.0))


def test_the_linked_function_run_on_its_cells_returns_copies() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], Out(x + 1, borrow=True), mode=JAX)
    f.input_cells[0][0] = np.zeros(2)
    f.fn()
    out = f.output_cells[0][0]
    np.testing.assert_array_equal(out, [1.0, 1.0])
    assert out.flags.writeable  # only the fast call lends views


def test_an_op_without_lowering_is_refused_saying_how_to_proceed() -> None:
    x = pt.dvector("x")
    with pytest.raises(NoImplementationError) as info:
        opweave.function([x], host_hypot(2.0, x), mode=JAX)
    message = str(info.value)
    assert message.startswith(
        "the jax linker has no lowering for Op HostHypot (host_hypot, inside the "
    )
    assert "jax__python_fallback=True" in message and "linker='cvm'" in message
    assert "pip install" not in message
    cause = info.value.__cause__
    assert isinstance(cause, NoImplementationError) and "for backend 'jax'" in str(cause)
