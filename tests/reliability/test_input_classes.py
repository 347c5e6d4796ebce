"""Every linker treats every input class the same (DESIGN.md section 7).

Instances of ndarray subclasses become plain ndarrays (``numpy.matrix`` would make ``*`` a
matrix product and keep reductions 2-d); masked arrays are refused with a ``TypeError``
naming the input, since their mask would be lost; strict inputs take plain ndarrays only.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import In, Mode
from opweave.tensor.type import TensorType

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

LINKERS = ("py", "vm", "c", "cvm")

with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.masked_array([[1.0, 2.0], [3.0, 4.0]], mask=[[True, False], [False, False]])


def compile_(inputs, outputs, linker: str):
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))


# ---------------------------------------------------------------------- TensorType.filter


def test_filter_views_matrix_as_plain_ndarray_without_copy() -> None:
    t = TensorType("float64", shape=(None, None))
    out = t.filter(MATRIX)
    assert type(out) is np.ndarray
    assert np.shares_memory(out, MATRIX)
    np.testing.assert_array_equal(out, np.asarray(MATRIX))


def test_filter_converts_the_dtype_of_a_subclass_instance() -> None:
    t = TensorType("float64", shape=(None, None))
    out = t.filter(np.matrix([[1, 2], [3, 4]], dtype="int32"))
    assert type(out) is np.ndarray and out.dtype == np.float64


def test_filter_refuses_masked_arrays_and_strict_subclasses() -> None:
    t = TensorType("float64", shape=(None, None))
    with pytest.raises(TypeError, match="masked arrays"):
        t.filter(MASKED)
    with pytest.raises(TypeError, match=r"\(strict\) expected a numpy.ndarray.*subclass matrix"):
        t.filter(MATRIX, strict=True)
    plain = np.ones((2, 2))
    assert t.filter(plain, strict=True) is plain


def test_filter_views_memmap_as_plain_ndarray(tmp_path: Path) -> None:
    mm = np.memmap(tmp_path / "a.bin", dtype="float64", mode="w+", shape=(3,))
    mm[:] = [1.0, 2.0, 3.0]
    out = TensorType("float64", shape=(None,)).filter(mm)
    assert type(out) is np.ndarray and np.shares_memory(out, mm)


# ---------------------------------------------------------------------- compiled functions


@pytest.mark.parametrize("linker", LINKERS)
def test_matrix_inputs_are_elementwise_on_every_linker(linker: str) -> None:
    x, y = ot.matrix("x"), ot.matrix("y")
    f = compile_([x, y], x * y + 1, linker)
    out = f(MATRIX, np.eye(2))
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [[2.0, 1.0], [1.0, 5.0]])
    # Both arguments matrices, and by keyword (the generic call path).
    np.testing.assert_array_equal(f(x=MATRIX, y=np.asmatrix(np.eye(2))), [[2.0, 1.0], [1.0, 5.0]])


@pytest.mark.parametrize("linker", LINKERS)
def test_reductions_of_matrix_inputs_drop_the_axis_on_every_linker(linker: str) -> None:
    x = ot.matrix("x")
    f = compile_([x], [x.sum(axis=0), x.sum()], linker)
    col, total = f(MATRIX)
    assert type(col) is np.ndarray and col.shape == (2,)
    np.testing.assert_array_equal(col, [4.0, 6.0])
    assert total == 10.0


@pytest.mark.parametrize("linker", LINKERS)
def test_integer_matrix_is_converted_on_every_linker(linker: str) -> None:
    x = ot.matrix("x")
    f = compile_([x], x * x, linker)
    out = f(np.matrix([[1, 2], [3, 4]]))
    assert type(out) is np.ndarray and out.dtype == np.float64
    np.testing.assert_array_equal(out, [[1.0, 4.0], [9.0, 16.0]])


@pytest.mark.parametrize("linker", LINKERS)
def test_masked_arrays_are_refused_naming_the_input_on_every_linker(linker: str) -> None:
    x, y = ot.matrix("x"), ot.matrix("y")
    f = compile_([x, y], x + y, linker)
    with pytest.raises(TypeError, match=r"(?s)bad input argument 1 \(name 'y'\).*masked arrays"):
        f(np.ones((2, 2)), MASKED)
    with pytest.raises(TypeError, match=r"(?s)bad input argument 0 \(name 'x'\).*masked arrays"):
        f(x=MASKED, y=np.ones((2, 2)))
    np.testing.assert_array_equal(f(np.ones((2, 2)), np.ones((2, 2))), 2.0)


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("value", [MATRIX, MASKED], ids=["matrix", "masked"])
def test_strict_inputs_refuse_subclasses_alike_on_every_linker(linker: str, value) -> None:
    x = ot.matrix("x")
    f = compile_([In(x, strict=True)], x * 2.0, linker)
    name = type(value).__name__
    with pytest.raises(
        TypeError,
        match=rf"(?s)bad input argument 0 \(name 'x'\).*\(strict\) expected a numpy.ndarray, "
        rf"got an instance of the ndarray subclass {name}",
    ):
        f(value)
    np.testing.assert_array_equal(f(np.ones((2, 2))), 2.0)


@pytest.mark.parametrize("linker", LINKERS)
def test_memmap_inputs_work_on_every_linker(linker: str, tmp_path: Path) -> None:
    mm = np.memmap(tmp_path / "a.bin", dtype="float64", mode="w+", shape=(4,))
    mm[:] = [1.0, 2.0, 3.0, 4.0]
    x = ot.vector("x")
    f = compile_([x], x * 2.0, linker)
    out = f(mm)
    assert type(out) is np.ndarray
    np.testing.assert_array_equal(out, [2.0, 4.0, 6.0, 8.0])


def test_shared_variables_store_matrices_as_plain_ndarrays() -> None:
    s = opweave.shared(np.zeros((2, 2)), name="s")
    s.set_value(MATRIX)
    assert type(s.get_value(borrow=True)) is np.ndarray
    with pytest.raises(TypeError, match="masked"):
        s.set_value(MASKED)
