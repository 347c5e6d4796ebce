"""C code of Reshape and SpecifyShape: the values, dtypes, views and errors of the Python
backend, on the ``c`` and ``cvm`` linkers."""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest
from c_parity import DTYPES, MODES, check, compiled, linked

import opweave
import opweave.tensor as ot
from opweave.tensor.shape import Reshape
from opweave.tensor.type import TensorType
from opweave_c.linkers import CLinker, CVMLinker
from opweave_c.linkers.c_linker import MissingCCodeError


def _layouts(a):
    """``a`` as C-contiguous, Fortran-ordered and strided (a view of a bigger array)."""
    big = np.zeros((a.shape[0] * 2, a.shape[1] * 3), dtype=a.dtype)
    big[::2, ::3] = a
    return [a, np.asfortranarray(a), big[::2, ::3]]


# ====================================================================== Reshape


@pytest.fixture(scope="module")
def reshape_fns():
    xs = [TensorType(d, shape=(None, None))(f"x_{d}") for d in DTYPES]
    s = ot.lvector("s")
    outs = [x.reshape(s, ndim=2) for x in xs] + [xs[0].reshape((-1,)), xs[-1].reshape((2, -1, 2))]
    return compiled([*xs, s], outs)


@pytest.mark.parametrize("shape", [[2, 6], [-1, 3], [12, 1], [4, -1], [1, 12]])
def test_reshape_values_over_dtypes_and_layouts(reshape_fns, shape) -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 100, size=(3, 4))
    for layout in range(3):
        arrays = [_layouts(base.astype(d))[layout] for d in DTYPES]
        check(reshape_fns, [(*arrays, shape)])


def test_reshape_errors_match_python(reshape_fns) -> None:
    arrays = [np.ones((3, 4), dtype=d) for d in DTYPES]
    cases = [(*arrays, s) for s in ([5, 2], [-1, -1], [-2, 6], [2, 3, 2], [5], [-1, 5], [0, -1])]
    check(reshape_fns, cases)
    with pytest.raises(ValueError, match=r"Reshape\{2\}: cannot reshape array of size 12"):
        reshape_fns["c"](*arrays, [5, 2])
    with pytest.raises(ValueError, match=r"the new shape .* has 3 entries, not 2"):
        reshape_fns["cvm"](*arrays, [2, 3, 2])


def test_reshape_to_and_from_zero_dims_and_empty() -> None:
    x = ot.dvector("x")
    s = ot.ivector("s")
    y = ot.dscalar("y")
    outs = [Reshape(0)(x, s), Reshape(3)(y, [1, 1, 1]), Reshape(2)(x, [0, -1])]
    fns = compiled([x, s, y], outs)
    check(
        fns,
        [
            (np.array([4.0]), np.zeros(0, dtype="int32"), np.float64(2.0)),
            (np.zeros(0), np.zeros(0, dtype="int32"), np.float64(2.0)),
            (np.array([1.0, 2.0]), np.zeros(0, dtype="int32"), np.float64(2.0)),
        ],
    )


@pytest.mark.parametrize("linker_cls", [CLinker, CVMLinker])
def test_reshape_is_a_view_exactly_when_numpy_makes_one(linker_cls) -> None:
    x = ot.fmatrix("x")
    s = ot.lvector("s")
    n = ot.lscalar("n")
    run = linked(linker_cls, [x, s, n], [x.reshape(s, ndim=2), ot.specify_shape(x, (n, None))])
    a = np.arange(24, dtype="float32").reshape(4, 6)
    for arr, shape in [
        (a, [6, 4]),  # contiguous: a view
        (a.T, [4, 6]),  # transposed: NumPy copies
        (a[:, ::2], [2, 6]),  # strided rows: a copy
        (a[::2], [1, 12]),  # whole rows skipped: still a view
        (np.asfortranarray(a), [4, 6]),  # same shape: a view
    ]:
        r, same = run(arr, np.array(shape), np.array(arr.shape[0]))
        expect = np.reshape(arr, shape)
        np.testing.assert_array_equal(r, expect)
        assert np.shares_memory(r, arr) == np.shares_memory(expect, arr), (arr.strides, shape)
        assert same is arr  # SpecifyShape returns its input itself


# ====================================================================== SpecifyShape


@pytest.fixture(scope="module")
def specify_fns():
    x = ot.tensor3("x", dtype="int16")
    v = ot.fvector("v")
    n = ot.lscalar("n")
    m = ot.scalar("m", dtype="uint8")
    outs = [
        ot.specify_shape(x, (n, None, m)),
        ot.specify_shape(v, (n,)),
        ot.specify_shape(x, (None, 2, None)),
    ]
    return compiled([x, v, n, m], outs)


def test_specify_shape_passes_values_through(specify_fns) -> None:
    x = np.arange(24, dtype="int16").reshape(3, 2, 4)
    cases = [
        (x, np.ones(3, dtype="float32"), 3, np.uint8(4)),
        (x[::-1, :, ::2], np.ones(6, dtype="float32")[::2], 3, np.uint8(2)),
        (np.zeros((0, 2, 0), dtype="int16"), np.zeros(0, dtype="float32"), 0, np.uint8(0)),
    ]
    check(specify_fns, cases)


def test_specify_shape_mismatches_raise_assertion_errors(specify_fns) -> None:
    x = np.zeros((3, 2, 4), dtype="int16")
    v = np.ones(3, dtype="float32")
    cases = [
        (x, v, 2, np.uint8(4)),  # dimension 0
        (x, v, 3, np.uint8(5)),  # dimension 2
        (x, v, -3, np.uint8(4)),  # a negative entry never matches
        (x, np.ones(4, dtype="float32"), 3, np.uint8(4)),  # the vector
        (np.zeros((3, 3, 4), dtype="int16"), v, 3, np.uint8(4)),  # the constant entry
    ]
    check(specify_fns, cases)
    with pytest.raises(AssertionError) as info:
        specify_fns["c"](np.zeros((3, 3, 4), dtype="int16"), v, 3, np.uint8(4))
    assert str(info.value) == (
        "SpecifyShape: dimension 1 of the input has length 3, expected 2 "
        "(input shape (3, 3, 4), specified ('?', 2, '?'))"
    )


# ====================================================================== fallback and leaks


def test_dtypes_without_c_run_in_python() -> None:
    x = ot.tensor("x", dtype="float16", shape=(None, None))
    out = ot.specify_shape(x.reshape((-1,)), (6,))
    f = opweave.function([x], out, mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    assert list(f(np.ones((2, 3), dtype="float16"))) == [1.0] * 6
    with pytest.raises(MissingCCodeError, match=r"Reshape\{1\} has no C implementation"):
        opweave.function([x], out, mode=MODES["c"])
    # A uint64 shape vector is left to Python too (NumPy refuses entries past int64).
    y = ot.dvector("y")
    u = ot.vector("u", dtype="uint64")
    with pytest.raises(MissingCCodeError, match="Reshape"):
        opweave.function([y, u], Reshape(1)(y, u), mode=MODES["c"])


def test_no_reference_leaks(reshape_fns) -> None:
    arrays = [np.ones((3, 4), dtype=d) for d in DTYPES]
    good, bad = np.array([2, 6]), np.array([5, 5])
    for name in ("c", "cvm"):
        f = reshape_fns[name]

        def calls(n, f=f):
            for _ in range(n):
                f(*arrays, good)
                try:
                    f(*arrays, bad)
                except ValueError:
                    pass
            gc.collect()

        calls(1)
        refs = [sys.getrefcount(a) for a in (*arrays, good, bad)]
        calls(2000)
        assert [sys.getrefcount(a) for a in (*arrays, good, bad)] == refs
