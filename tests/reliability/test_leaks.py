"""No compiled function leaks references across calls or keeps its caller's arrays alive
(DESIGN.md section 7)."""

from __future__ import annotations

import gc
import sys
import weakref

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import In, Mode

LINKERS = ("py", "vm", "c", "cvm")
C_LINKERS = ("c", "cvm")
N_CALLS = 2000
DTYPES = ("float64", "int64", "float32")


def dtype_refs_after(fn, dtype: str) -> int:
    """How many references to ``np.dtype(dtype)`` ``fn()`` called N_CALLS times adds."""
    descr = np.dtype(dtype)
    fn()  # warm up: caches, lazily created objects
    gc.collect()
    before = sys.getrefcount(descr)
    for _ in range(N_CALLS):
        fn()
    gc.collect()
    return sys.getrefcount(descr) - before


# ---------------------------------------------------------------------- dtype descriptors


@pytest.mark.parametrize("linker", C_LINKERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_typed_functions_leak_no_dtype_reference(linker: str, dtype: str) -> None:
    """A ScalarType output is boxed with ``PyArray_Scalar``, which does not steal the
    descriptor it is given."""
    x, y = ps.get_scalar_type(dtype)("x"), ps.get_scalar_type(dtype)("y")
    f = opweave.function([x, y], x * y + x, mode=Mode(linker=linker))
    a, b = np.dtype(dtype).type(2), np.dtype(dtype).type(3)
    assert f(a, b) == 8 and f(a, b).dtype == np.dtype(dtype)
    assert dtype_refs_after(lambda: f(a, b), dtype) == 0


@pytest.mark.parametrize("linker", C_LINKERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_functions_leak_no_dtype_reference(linker: str, dtype: str) -> None:
    x = ot.vector("x", dtype=dtype)
    f = opweave.function([x], [x * x, (x + x).sum()], mode=Mode(linker=linker))
    v = np.arange(5, dtype=dtype)
    assert dtype_refs_after(lambda: f(v), dtype) == 0


@pytest.mark.parametrize("linker", C_LINKERS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_refused_strict_inputs_leak_no_dtype_reference(linker: str, dtype: str) -> None:
    """The refusal of an array of the wrong dtype (a strict input: no filter converts it)
    releases the descriptor it names in its message."""
    x = ot.vector("x", dtype=dtype)
    f = opweave.function([In(x, strict=True)], x * 2, mode=Mode(linker=linker))
    wrong = np.arange(3, dtype="int8")

    def refused() -> None:
        with pytest.raises(TypeError, match=r"bad input argument 0 \(name 'x'\)"):
            f(wrong)

    assert dtype_refs_after(refused, dtype) == 0


@pytest.mark.parametrize("linker", C_LINKERS)
def test_refused_lenient_inputs_leak_no_dtype_reference(linker: str) -> None:
    x = ot.vector("x", dtype="int64")
    f = opweave.function([x], x * 2, mode=Mode(linker=linker))
    lossy = np.arange(3, dtype="float64")

    def refused() -> None:
        with pytest.raises(TypeError, match=r"bad input argument 0 \(name 'x'\)"):
            f(lossy)

    assert dtype_refs_after(refused, "int64") == 0
    assert dtype_refs_after(refused, "float64") == 0


# ---------------------------------------------------------------------- the caller's arrays


@pytest.mark.parametrize("linker", LINKERS)
def test_inputs_are_not_kept_alive_after_a_call(linker: str) -> None:
    x, y = ot.matrix("x"), ot.matrix("y")
    f = opweave.function([x, y], [x * y + 1, (x - y).sum(axis=0)], mode=Mode(linker=linker))
    a, b = np.ones((2, 3)), np.full((2, 3), 2.0)
    before_a, before_b = sys.getrefcount(a), sys.getrefcount(b)
    out = f(a, b)
    assert sys.getrefcount(a) == before_a and sys.getrefcount(b) == before_b
    out = f(x=a, y=b)  # the generic call path
    assert sys.getrefcount(a) == before_a and sys.getrefcount(b) == before_b
    np.testing.assert_array_equal(out[0], 3.0)


@pytest.mark.parametrize("linker", LINKERS)
def test_inputs_are_not_kept_alive_after_a_failed_call(linker: str) -> None:
    x, y = ot.vector("x"), ot.vector("y")
    f = opweave.function([x, y], x + y, mode=Mode(linker=linker))
    a, b = np.ones(3), np.ones(4)
    before = sys.getrefcount(a)
    with pytest.raises(ValueError):
        f(a, b)
    assert sys.getrefcount(a) == before


@pytest.mark.parametrize("linker", LINKERS)
def test_an_input_dies_when_the_caller_drops_it(linker: str) -> None:
    x = ot.vector("x")
    f = opweave.function([x], x * 2.0, mode=Mode(linker=linker))
    a = np.arange(4.0)
    ref = weakref.ref(a)
    np.testing.assert_array_equal(f(a), [0.0, 2.0, 4.0, 6.0])
    del a
    assert ref() is None
    # An ndarray subclass: filtered into a plain view, which must not outlive the call.
    sub = np.arange(4.0).view(type("Sub", (np.ndarray,), {}))
    ref = weakref.ref(sub)
    f(sub)
    del sub
    assert ref() is None


@pytest.mark.parametrize("linker", LINKERS)
def test_defaults_and_shared_values_are_kept(linker: str) -> None:
    x, y = ot.vector("x"), ot.vector("y")
    s = opweave.shared(np.ones(3), name="s")
    acc = ot.vector("acc")
    f = opweave.function(
        [x, In(y, value=np.full(3, 10.0)), In(acc, value=np.zeros(3), update=acc + x)],
        x + y + s + acc,
        mode=Mode(linker=linker),
    )
    a = np.ones(3)
    np.testing.assert_array_equal(f(a), 12.0)
    np.testing.assert_array_equal(f(a), 13.0)  # acc carried over, y's default kept
    np.testing.assert_array_equal(f(x=a), 14.0)
    np.testing.assert_array_equal(f(a, np.zeros(3)), 5.0)
    np.testing.assert_array_equal(f(a), 16.0)  # y back to its default
    assert sys.getrefcount(a) == 2


# ---------------------------------------------------------------------- memory over many calls


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")
@pytest.mark.parametrize("linker", LINKERS)
def test_memory_stays_flat_over_many_calls_and_refusals(linker: str) -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    s = ot.dscalar("s")
    f = opweave.function([x, y, s], [ot.exp(x) * y + s, ot.sum(x * y)], mode=Mode(linker=linker))
    a, b = np.ones(1000), np.arange(1000.0)
    outputs = f(a, b, 2.0)
    before_refs = [sys.getrefcount(v) for v in (a, b)]

    def burst() -> None:
        for _ in range(2000):
            f(a, b, 2.0)
        for bad in ("x", None, np.ones((2, 2))):  # the refusal paths
            for _ in range(300):
                with pytest.raises(TypeError):
                    f(a, bad, 2.0)

    burst()  # warm up: caches, reused output buffers
    gc.collect()
    start = _rss_bytes()
    for _ in range(3):
        burst()
    gc.collect()
    grown = _rss_bytes() - start
    # 7,500 calls holding 8 kB arrays: a per-call leak of one array would be 60 MB.
    assert grown < 4 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 7,500 calls"
    assert [sys.getrefcount(v) for v in (a, b)] == before_refs
    np.testing.assert_allclose(outputs[1], np.sum(a * b))
