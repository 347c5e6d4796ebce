"""The deferred checks of a ``jax``-linker function (conditions on the input values, read
back as one integer per call): the first failing check in the graph's order raises its own
exception, whichever trace of the function ran."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.raise_op import Assert, CheckAndRaise

JAX = opweave.Mode(linker="jax")
PY = opweave.Mode(linker="py")


def _checked_graph() -> tuple[list[pt.TensorVariable], pt.TensorVariable]:
    x, i = pt.dvector("x"), pt.lvector("i")
    y = Assert("x is not positive")(x, pt.all(x > 0))
    y = CheckAndRaise(ValueError, "x has a value above 100")(y, pt.all(y < 100))
    return [x, i], y[i].sum() * 2.0


@pytest.mark.parametrize(
    ("x", "i", "error", "message"),
    [
        ([1.0, 2.0, 3.0], [0, 2], None, None),
        ([-1.0, 2.0, 3.0], [0, 2], AssertionError, "x is not positive"),
        ([1.0, 200.0, 3.0], [0, 2], ValueError, "x has a value above 100"),
        ([1.0, 2.0, 3.0], [0, 7], IndexError, "out of bounds"),
        # Several fail: the first in the graph's order raises, as on the py linker.
        ([-1.0, 200.0, 3.0], [0, 7], AssertionError, "x is not positive"),
        ([1.0, 200.0, 3.0], [0, 7], ValueError, "x has a value above 100"),
    ],
)
def test_the_first_failing_check_raises_as_on_the_py_linker(
    x: list[float], i: list[int], error: type[Exception] | None, message: str | None
) -> None:
    inputs, out = _checked_graph()
    jax_fn = opweave.function(inputs, out, mode=JAX)
    py_fn = opweave.function(inputs, out, mode=PY)
    args = (np.array(x), np.array(i))
    if error is None:
        np.testing.assert_array_equal(jax_fn(*args), py_fn(*args))
        return
    with pytest.raises(error, match=message):
        py_fn(*args)
    with pytest.raises(error, match=message):
        jax_fn(*args)


def test_each_trace_names_its_own_checks() -> None:
    # A trace per input length; the calls alternate between the compiled versions.
    inputs, out = _checked_graph()
    f = opweave.function(inputs, out, mode=JAX)
    short, long = np.array([1.0, 2.0]), np.arange(1.0, 6.0)
    np.testing.assert_array_equal(f(short, np.array([1])), 4.0)
    np.testing.assert_array_equal(f(long, np.array([4])), 10.0)
    with pytest.raises(IndexError, match="size 2"):
        f(short, np.array([3]))
    with pytest.raises(IndexError, match="size 5"):
        f(long, np.array([5]))
    with pytest.raises(AssertionError, match="x is not positive"):
        f(-short, np.array([0]))


def test_a_graph_without_checks_returns_no_code() -> None:
    x = pt.dvector("x")
    f = opweave.function([x], x * 2.0, mode=JAX)
    outputs, code = f.fn.jitted(np.arange(3.0))
    assert code is None
    np.testing.assert_array_equal(np.asarray(outputs[0]), [0.0, 2.0, 4.0])
