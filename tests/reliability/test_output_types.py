"""Every linker returns values of exactly the output's Type; DebugMode catches an Op that
does not (DESIGN.md section 7)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
import opweave.tensor.math as om
from opweave.compile import Mode
from opweave.compile.debugmode import InvalidValueError
from opweave.graph.basic import Apply, Variable
from opweave.graph.op import Op
from opweave.tensor.type import TensorType

LINKERS = ("py", "vm", "c", "cvm")

BOOL_X = np.array([True, False, True, False])
BOOL_Y = np.array([True, True, False, False])

#: name -> (symbolic op, NumPy function), binary Ops on booleans without a boolean loop.
BOOL_BINARY = {
    "floor_div": (om.floor_div, np.floor_divide),
    "mod": (om.mod, np.mod),
    "pow": (om.pow, np.power),
}


def numpy_result(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


@pytest.mark.parametrize("name", sorted(BOOL_BINARY))
def test_bool_output_types_follow_numpy(name: str) -> None:
    op, np_fn = BOOL_BINARY[name]
    x, y = ot.vector("x", dtype="bool"), ot.vector("y", dtype="bool")
    assert op(x, y).type.dtype == numpy_result(np_fn, BOOL_X, BOOL_Y).dtype == np.int8
    assert op(x, x).type.dtype == "int8"
    # Mixed with an integer: the promoted integer, as NumPy.
    i = ot.vector("i", dtype="int16")
    assert op(x, i).type.dtype == "int16"


@pytest.mark.parametrize("rule_op", [ps.int_div, ps.mod])
def test_scalar_rules_give_int8_for_bools(rule_op) -> None:
    assert rule_op.output_types([ps.bool_, ps.bool_]) == (ps.int8,)
    assert rule_op.output_types([ps.bool_, ps.float32]) == (ps.float32,)
    with pytest.raises(TypeError, match="complex"):
        rule_op.output_types([ps.complex64, ps.complex64])


def test_sqr_of_bool_is_int8_as_numpy_square() -> None:
    x = ot.vector("x", dtype="bool")
    assert om.sqr(x).type.dtype == np.square(BOOL_X).dtype == np.int8


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("name", sorted(BOOL_BINARY))
def test_every_linker_returns_the_output_type_of_bool_ops(linker: str, name: str) -> None:
    op, np_fn = BOOL_BINARY[name]
    x, y = ot.vector("x", dtype="bool"), ot.vector("y", dtype="bool")
    for out in (op(x, x), op(x, y)):
        f = opweave.function([x, y], out, mode=Mode(linker=linker), on_unused_input="ignore")
        got = f(BOOL_X, BOOL_Y)
        want = numpy_result(np_fn, BOOL_X, BOOL_X if out.owner.inputs[1] is x else BOOL_Y)
        assert got.dtype == np.dtype(out.type.dtype) == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("linker", LINKERS)
def test_every_linker_returns_the_output_type_of_bool_sqr(linker: str) -> None:
    x = ot.vector("x", dtype="bool")
    f = opweave.function([x], om.sqr(x), mode=Mode(linker=linker))
    got = f(BOOL_X)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, np.square(BOOL_X))


@pytest.mark.parametrize("linker", LINKERS)
def test_every_elemwise_op_returns_its_output_dtype_on_every_linker(linker: str) -> None:
    """Each unary and binary Elemwise of ``opweave.tensor.math`` that accepts boolean and
    int8 inputs returns exactly its output dtype (where NumPy's loops for small types
    promote: ``bool // bool`` is int8)."""
    from opweave.tensor.elemwise import Elemwise

    ops = {
        n: getattr(om, n)
        for n in dir(om)
        if isinstance(getattr(om, n), Elemwise)
        and not n.endswith("inplace")
        and getattr(om, n).scalar_op.nin in (1, 2)
    }
    wrong = []
    for dtype in ("bool", "int8"):
        x, y = ot.vector("x", dtype=dtype), ot.vector("y", dtype=dtype)
        xv, yv = np.array([1, 0, 3], dtype=dtype), np.array([1, 2, 0], dtype=dtype)
        outs = []
        for name, op in sorted(ops.items()):
            try:
                out = op(x) if op.scalar_op.nin == 1 else op(x, y)
            except TypeError:
                continue  # the Op refuses this dtype
            outs.append((name, out))
        f = opweave.function(
            [x, y], [o for _, o in outs], mode=Mode(linker=linker), on_unused_input="ignore"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = f(xv, yv)
        for (name, out), value in zip(outs, values, strict=True):
            if value.dtype != np.dtype(out.type.dtype):
                wrong.append((dtype, name, out.type.dtype, str(value.dtype)))
    assert wrong == []


# ---------------------------------------------------------------------- DebugMode


class WrongDtype(Op):
    """Typed ``bool`` but returns ``int8`` (what ``bool // bool`` used to do on py/vm)."""

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [TensorType("bool", shape=x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].astype("int8")


class ReturnsMatrix(Op):
    """Typed as a float64 matrix but returns a ``numpy.matrix``."""

    __props__ = ()

    def make_node(self, x: Variable) -> Apply:
        x = ot.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            output_storage[0][0] = np.asmatrix(inputs[0] * 2.0)


def test_debugmode_catches_an_output_dtype_that_is_not_its_type() -> None:
    x = ot.vector("x", dtype="bool")
    f = opweave.function([x], WrongDtype()(x), mode="DebugMode")
    with pytest.raises(InvalidValueError, match=r"(?s)expected an ndarray of dtype bool.*int8"):
        f(BOOL_X)
    assert not TensorType("bool", shape=(None,)).is_valid_value(BOOL_X.astype("int8"))


def test_debugmode_catches_an_ndarray_subclass_output() -> None:
    x = ot.matrix("x")
    f = opweave.function([x], ReturnsMatrix()(x), mode="DebugMode")
    with pytest.raises(InvalidValueError, match="subclass matrix"):
        f(np.ones((2, 2)))


def test_debugmode_accepts_the_bool_ops() -> None:
    x, y = ot.vector("x", dtype="bool"), ot.vector("y", dtype="bool")
    outs = [om.floor_div(x, y), om.mod(x, y), om.sqr(x), om.pow(x, y)]
    f = opweave.function([x, y], outs, mode="DebugMode")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = f(BOOL_X, BOOL_Y)
    assert [v.dtype for v in values] == [np.int8] * 4
