"""Ops print under PyTensor's names (``str(pt.add(x, y).owner.op) == "Add"``), in
``str``, in ``debugprint`` and in error messages.

The expected strings are what PyTensor 3.0.7 prints for the same Ops.
"""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.printing import debugprint
from opweave.scalar import Composite
from opweave.tensor import math as tm
from opweave.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from opweave.tensor.reductions import Max, Sum


def op_of(var: object) -> str:
    return str(var.owner.op)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- Elemwise


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda x, y: ot.add(x, y), "Add"),
        (lambda x, y: x - y, "Sub"),
        (lambda x, y: x * y, "Mul"),
        (lambda x, y: x / y, "True_div"),
        (lambda x, y: x**y, "Pow"),
        (lambda x, y: -x, "Neg"),
        (lambda x, y: ot.exp(x), "Exp"),
        (lambda x, y: ot.log1p(x), "Log1p"),
        (lambda x, y: ot.sqr(x), "Sqr"),
        (lambda x, y: ot.sigmoid(x), "Sigmoid"),
        (lambda x, y: abs(x), "Abs"),
        (lambda x, y: ot.isnan(x), "Isnan"),
        (lambda x, y: x > y, "Gt"),
        (lambda x, y: ot.eq(x, y), "Eq"),
        (lambda x, y: ot.maximum(x, y), "Maximum"),
        (lambda x, y: ot.switch(x > 0, x, y), "Switch"),
        (lambda x, y: ot.fill(x, y), "Second"),
        (lambda x, y: ot.cast(x, "int32"), "Cast{int32}"),
    ],
)
def test_elemwise_prints_its_scalar_op_capitalised(build: object, name: str) -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    assert op_of(build(x, y)) == name  # type: ignore[operator]


def test_logical_elemwise_drop_the_keyword_underscore() -> None:
    a, b = ot.bmatrix("a"), ot.bmatrix("b")
    assert [op_of(ot.and_(a, b)), op_of(ot.or_(a, b))] == ["And", "Or"]


def test_elemwise_str_ignores_inplace_and_name() -> None:
    assert str(Elemwise(ps.add)) == "Add"
    assert str(tm.add_inplace) == "Add" and tm.add_inplace.destroy_map == {0: [0]}
    assert str(Elemwise(ps.exp, {0: 0})) == "Exp"
    assert str(Elemwise(ps.mul, name="my_mul")) == "Mul"


def test_elemwise_of_a_composite() -> None:
    a, b = ps.float64("a"), ps.float64("b")
    one = Composite([a, b], [ps.exp(ps.add(a, b))])
    assert str(one) == str(Elemwise(one)) == "Composite{exp((i0 + i1))}"
    two = Composite([a, b], [ps.exp(ps.add(a, b)), ps.mul(a, b)])
    assert str(two) == str(Elemwise(two)) == "Composite{...}"
    cast = Composite([a, b], [ps.cast(ps.add(a, b), "int32")])
    assert str(cast) == "Composite{Cast{int32}((i0 + i1))}"
    # The Elemwise capitalises like PyTensor: the rest of the text is lowercased.
    assert str(Elemwise(cast)) == "Composite{cast{int32}((i0 + i1))}"


# ---------------------------------------------------------------------- DimShuffle


@pytest.mark.parametrize(
    ("ndim", "order", "name"),
    [
        (2, (1, 0), "MatrixTranspose"),
        (3, (0, 2, 1), "MatrixTranspose"),
        (3, (1, 0, 2), "Transpose{axes=(1, 0, 2)}"),
        (1, ("x", 0), "ExpandDims{axis=0}"),
        (2, ("x", 0, "x", 1), "ExpandDims{axes=(0, 2)}"),
        (2, (1,), "Squeeze{axis=0}"),
        (3, (1,), "Squeeze{axes=(0, 2)}"),
        (2, (1, "x", 0), "DimShuffle{order=[1,x,0]}"),
        (2, ("x", 1, 0), "DimShuffle{order=[x,1,0]}"),
        (2, (0, 1), "DimShuffle{order=[0,1]}"),
    ],
)
def test_dimshuffle_names(ndim: int, order: tuple[int | str, ...], name: str) -> None:
    assert str(DimShuffle(ndim, order)) == name


def test_dimshuffle_names_of_tensor_methods() -> None:
    assert op_of(ot.dmatrix("m").T) == "MatrixTranspose"
    assert op_of(ot.dvector("v").dimshuffle("x", 0)) == "ExpandDims{axis=0}"


# ---------------------------------------------------------------------- reductions


def test_reduction_names() -> None:
    x = ot.dmatrix("x")
    assert op_of(x.sum()) == "Sum{axes=None}"
    assert op_of(x.sum(axis=0)) == "Sum{axis=0}"
    assert op_of(x.sum(axis=(0, 1))) == "Sum{axes=[0, 1]}"
    assert op_of(x.prod(axis=1)) == "Prod{axis=1}"
    assert op_of(x.max()) == "Max{axes=None}"
    assert op_of(x.max(axis=0)) == "Max{axis=0}"
    assert op_of(x.all()) == "All{axes=None}"
    assert op_of(x.any(axis=0)) == "Any{axis=0}"
    assert str(Sum(axis=(0, 1))) == "Sum{axes=[0, 1]}" and str(Max()) == "Max{axes=None}"


def test_reduction_names_show_another_accumulation_dtype() -> None:
    assert op_of(ot.dvector("x").sum(dtype="float32")) == "Sum{axes=None, acc=float64}"
    assert op_of(ot.fvector("f").sum()) == "Sum{axes=None, acc=float64}"
    assert op_of(ot.bvector("b").sum()) == "Sum{axes=None}"


def test_careduce_built_from_a_scalar_op_names_it() -> None:
    x = ot.dmatrix("x")
    assert op_of(CAReduce(ps.add, axis=(0,))(x)) == "CAReduce{add, axis=0}"
    assert op_of(CAReduce(ps.mul)(x)) == "CAReduce{mul, axes=None}"


def test_argmax_names() -> None:
    x = ot.dtensor3("x")
    assert op_of(x.argmax(axis=0)) == "Argmax{axis=(0,)}"
    assert op_of(x.argmax()) == "Argmax{axis=None}"


# ---------------------------------------------------------------------- debugprint, errors


def test_debugprint_uses_the_names() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    text = debugprint(ot.exp(x + y).sum(axis=0), file="str")
    assert text.splitlines() == [
        "Sum{axis=0} [id A]",
        " |Exp [id B]",
        " | |Add [id C]",
        " | | |x [id D]",
        " | | |y [id E]",
    ]
    assert ot.dvector("v").dimshuffle("x", 0).dprint(file="str").startswith("ExpandDims{axis=0}")


def test_debugprint_marks_inplace_and_view_ops_on_request() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = tm.add_inplace(x * 2.0, y)
    assert debugprint(out, file="str", ids="").splitlines()[0] == "Add"
    text = debugprint(out, file="str", ids="", print_destroy_map=True)
    assert text.splitlines()[0] == "Add d={0: [0]}"
    view = debugprint(ot.dmatrix("m").T, file="str", ids="", print_view_map=True)
    assert view.splitlines()[0] == "MatrixTranspose v={0: [0]}"


def test_debugprint_of_a_compiled_function_names_the_fused_node() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.exp(x) * 2.0 + x, mode=Mode(linker="py"))
    first = debugprint(f, file="str", ids="").splitlines()[0]
    assert first.startswith("Composite{") and "exp(" in first
    np.testing.assert_allclose(f(np.array([0.0, 1.0])), np.exp([0.0, 1.0]) * 2 + [0.0, 1.0])


def test_error_messages_use_the_names() -> None:
    a = ot.vector("a", dtype="float64", shape=(3,))
    b = ot.vector("b", dtype="float64", shape=(4,))
    with pytest.raises(ValueError, match=r"^Add: incompatible static shapes on axis 0"):
        ot.add(a, b)
    with pytest.raises(TypeError, match=r"^ExpandDims\{axis=0\} expects a 1-d input"):
        DimShuffle(1, ("x", 0))(ot.dmatrix("m"))
    with pytest.raises(ValueError, match=r"Sum\{axis=2\}: axis 2 is out of range"):
        Sum(axis=2)(ot.dmatrix("m"))
