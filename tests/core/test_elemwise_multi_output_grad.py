"""Gradients through an Elemwise of a scalar Op with a float and an int output.

``SquareAndSign`` computes ``(x * x, sign(x))``: a float64 output and an int64 one. Its
gradient goes through the float output only; the int output is locally constant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable
from opweave.graph.type import DisconnectedType, NullType
from opweave.scalar import ScalarOp
from opweave.scalar.rules import specific_out
from opweave.tensor.elemwise import Elemwise

POINT = np.array([1.5, -2.0, 0.25, 3.0])


class SquareAndSign(ScalarOp):
    """``(x * x, sign(x))``: float64 and int64 outputs."""

    nin = 1
    nout = 2

    def __init__(self) -> None:
        super().__init__(specific_out(ps.float64, ps.int64), name="square_and_sign")

    def impl(self, x: object) -> tuple[object, object]:
        return np.square(x), np.sign(x).astype("int64")

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        (x,) = inputs
        g_square, _g_sign = output_grads
        if isinstance(g_square.type, DisconnectedType):
            return [x * 0.0]  # type: ignore[operator]
        return [g_square * (x * 2.0)]  # type: ignore[operator]


class UndefinedThroughSign(SquareAndSign):
    """The same values; the gradient through the int output is reported undefined."""

    def L_op(
        self,
        inputs: Sequence[Variable],
        outputs: Sequence[Variable],
        output_grads: Sequence[Variable],
    ) -> list[Variable]:
        (x,) = inputs
        g_square, _g_sign = output_grads
        if isinstance(g_square.type, DisconnectedType):
            return [ps.grad_undefined(self, 0, x, "undefined through the sign")]
        return [g_square * (x * 2.0)]  # type: ignore[operator]


square_and_sign = Elemwise(SquareAndSign())


def test_the_two_outputs_have_a_float_and_an_int_dtype() -> None:
    x = ot.dvector("x")
    square, sign = square_and_sign(x)
    assert (square.type.dtype, sign.type.dtype) == ("float64", "int64")
    f = opweave.function([x], [square, sign])
    got_square, got_sign = f(POINT)
    np.testing.assert_allclose(got_square, POINT**2)
    np.testing.assert_array_equal(got_sign, np.sign(POINT).astype("int64"))


def test_grad_of_the_float_output_uses_the_scalar_ops_gradient() -> None:
    x = ot.dvector("x")
    square, _ = square_and_sign(x)
    g = opweave.grad(square.sum(), x)
    np.testing.assert_allclose(opweave.function([x], g)(POINT), 2.0 * POINT)


def test_grad_with_a_weighted_cost_and_a_broadcast_input() -> None:
    x = ot.dvector("x")
    w = ot.dmatrix("w")
    row = ot.matrix("row", dtype="float64", shape=(1, None))
    square, _ = square_and_sign(row)
    cost = (square * w).sum() + (square_and_sign(x)[0] ** 2).sum()
    gx, grow = opweave.grad(cost, [x, row])
    f = opweave.function([x, row, w], [gx, grow])
    wv = np.arange(8.0).reshape(2, 4)
    rv = POINT[None, :]
    got_x, got_row = f(POINT, rv, wv)
    np.testing.assert_allclose(got_x, 4.0 * POINT**3)
    np.testing.assert_allclose(got_row, 2.0 * rv * wv.sum(axis=0, keepdims=True))


def test_verify_grad_agrees_with_finite_differences() -> None:
    verify_grad(lambda x: square_and_sign(x)[0], [POINT], rng=np.random.default_rng(7))


def test_only_the_int_output_reaching_the_cost_gives_a_zero_gradient() -> None:
    x = ot.dvector("x")
    _, sign = square_and_sign(x)
    g = opweave.grad((sign * 3).sum(), x)
    assert g.type.dtype == "float64"
    np.testing.assert_array_equal(opweave.function([x], g)(POINT), np.zeros(4))


def test_an_undefined_gradient_through_the_int_output_stays_undefined() -> None:
    op = Elemwise(UndefinedThroughSign())
    x = ot.dvector("x")
    _, sign = op(x)
    g = opweave.grad(sign.sum(), x, null_gradients="return")
    assert isinstance(g.type, NullType)
    # Through the float output the gradient is the real one.
    square, _ = op(x)
    g2 = opweave.grad(square.sum(), x)
    np.testing.assert_allclose(opweave.function([x], g2)(POINT), 2.0 * POINT)


def test_the_int_input_of_a_mixed_op_gets_a_float_gradient() -> None:
    i = ot.lvector("i")
    square, _ = square_and_sign(i)
    g = opweave.grad(square.sum(), i)
    assert g.type.dtype == "float64"
    iv = np.array([1, -2, 3], dtype="int64")
    np.testing.assert_allclose(opweave.function([i], g)(iv), 2.0 * iv)


@pytest.mark.parametrize("outputs", [("float",), ("int",)])
def test_single_output_ops_keep_their_rules(outputs: tuple[str, ...]) -> None:
    x = ot.dvector("x")
    if outputs == ("float",):
        g = opweave.grad(ot.exp(x).sum(), x)
        np.testing.assert_allclose(opweave.function([x], g)(POINT), np.exp(POINT))
    else:
        g = opweave.grad(ot.cast(ot.floor(x), "int64").sum(), x)
        np.testing.assert_array_equal(opweave.function([x], g)(POINT), np.zeros(4))
