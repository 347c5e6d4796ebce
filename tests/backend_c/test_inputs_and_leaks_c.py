"""Bad inputs through generated C get clear errors, and compiled functions do not leak."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.type import TensorType
from opweave_double import add, double, mul

C = Mode(linker="c")


@pytest.fixture(scope="module")
def copy_fn():
    """``x -> (copy of x, shape of x)`` on a float64 vector, all in C."""
    x = ot.dvector("x")
    return opweave.function([x], [x, x.shape], mode=C)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (np.zeros((2, 2)), TypeError, "expected 1 dimension"),
        (None, TypeError, "cannot hold None"),
        ("abc", TypeError, "expected"),
        (object(), TypeError, "expected"),
        ([[1.0], [2.0, 3.0]], ValueError, None),
    ],
)
def test_bad_inputs_are_refused_by_name(copy_fn, value, error, message) -> None:
    with pytest.raises(error, match=message) as info:
        copy_fn(value)
    assert "bad input argument 0 (name 'x')" in str(info.value)
    assert "TensorType(float64, shape=(None,))" in str(info.value)


def test_conversions_follow_filter(copy_fn) -> None:
    out, shape = copy_fn([1, 2, 3])  # lists and ints convert exactly as on vm
    assert out.dtype == np.float64 and list(out) == [1.0, 2.0, 3.0] and list(shape) == [3]
    strided = np.arange(10.0)[::3]
    out, _ = copy_fn(strided)
    assert list(out) == [0.0, 3.0, 6.0, 9.0] and not np.shares_memory(out, strided)
    swapped = np.arange(3.0).astype(">f8")
    assert list(copy_fn(swapped)[0]) == [0.0, 1.0, 2.0]


def test_lossy_dtype_and_static_shape_are_refused() -> None:
    i = ot.ivector("i")
    f = opweave.function([i], i.shape, mode=C)
    with pytest.raises(TypeError, match="argument 0 \\(name 'i'\\)"):
        f(np.array([1.5, 2.0]))
    assert list(f(np.array([1, 2], dtype="int32"))) == [2]
    s = TensorType("float64", shape=(3,))("s")
    g = opweave.function([s], s.shape, mode=C)
    with pytest.raises((TypeError, ValueError), match="argument 0 \\(name 's'\\)"):
        g(np.zeros(4))
    assert list(g(np.zeros(3))) == [3]


def test_unfiltered_values_are_checked_in_c(copy_fn) -> None:
    """Values that no Python filter saw (written into the input cell, the graph run
    directly): the C extraction's own checks refuse bad ones without crashing."""
    x = ot.dvector("x")
    f = opweave.function([x], [x, x.shape], mode=C)
    f.trust_input = True
    (cell,) = f.input_cells
    for bad, msg in [
        (None, "got None"),
        ("abc", "expected a NumPy array"),
        (np.zeros((2, 2)), "expects 1 dimensions"),
        (np.zeros(3, dtype="int64"), "expects dtype"),
    ]:
        cell[0] = bad
        with pytest.raises(TypeError, match=msg):
            f.fn()
    assert list(f(x=np.ones(2))[0]) == [1.0, 1.0]
    assert list(f(np.ones(3))[1]) == [3]


def test_double_converts_ints_on_c_as_on_vm_unless_strict() -> None:
    x, y = double("x"), double("y")
    for mode in (C, Mode(linker="vm")):
        assert opweave.function([x, y], add(x, y), mode=mode)(1.0, 2) == 3.0
        strict = opweave.function([x, opweave.In(y, strict=True)], add(x, y), mode=mode)
        with pytest.raises(TypeError, match="Expected a float!"):
            strict(1.0, 2)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_no_leaks_over_100000_calls(copy_fn) -> None:
    x, y, z = double("x"), double("y"), double("z")
    f = opweave.function([x, y, z], mul(add(x, y), z), mode=C)
    s = ot.dscalar("s")
    g = opweave.function([s], s * 2.0, mode=C)  # Python floats become 0-d arrays in C
    v = ot.dvector("v")
    # A fused loop whose dropped result is reused, and a reduction's fresh 0-d result.
    h = opweave.function([v], [ot.exp(v) * 2.0, ot.sum(v**2)], mode=C)
    a, b, c = 1.5, 2.5, 3.5
    arr = np.arange(5.0)
    for _ in range(1000):
        f(a, b, c)
        g(a)
        copy_fn(arr)
        h(arr)
    refs = [sys.getrefcount(val) for val in (a, b, c, arr)]
    rss = _rss_bytes()
    for _ in range(100_000):
        f(a, b, c)
        g(a)
        copy_fn(arr)
        h(arr)
    assert [sys.getrefcount(val) for val in (a, b, c, arr)] == refs
    assert _rss_bytes() - rss < 4 * 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
def test_no_leaks_on_the_failure_path() -> None:
    x, y = double("x"), double("y")
    f = opweave.function([x, y], add(x, y), mode=C)
    bad = "7"  # refused by Double.filter, called from the generated C
    for _ in range(200):
        with pytest.raises(TypeError):
            f(1.0, bad)
    ref = sys.getrefcount(bad)
    rss = _rss_bytes()
    for _ in range(20_000):
        try:
            f(1.0, bad)
        except TypeError:
            pass
    assert sys.getrefcount(bad) == ref
    assert _rss_bytes() - rss < 4 * 2**20


def test_python_floats_for_float64_scalars_are_converted_in_c_as_filter_does() -> None:
    x, y = ot.dscalar("x"), ot.dscalar("y")
    f = opweave.function([x, y], x * y, mode=C)
    out = f(1.5, 4.0)
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == ()
    assert out == 6.0
    assert f(3, np.float64(2.0)) == 6.0  # an int and a NumPy scalar go through filter
    with pytest.raises(TypeError, match=r"bad input argument 1 \(name 'y'\)"):
        f(1.0, "abc")


def test_strict_inputs_take_only_exact_values_in_c() -> None:
    x, y = ot.dscalar("x"), ot.dscalar("y")
    f = opweave.function([opweave.In(x, strict=True), y], x + y, mode=C)
    assert f(np.array(1.0), 2.0) == 3.0
    with pytest.raises(TypeError, match=r"bad input argument 0 \(name 'x'\).*got float"):
        f(1.0, 2.0)
    with pytest.raises(TypeError, match="expects dtype"):
        f(np.array(1, dtype="int64"), 2.0)
