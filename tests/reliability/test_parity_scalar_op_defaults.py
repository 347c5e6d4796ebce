"""Scalar Ops built without their usual arguments, as PyTensor code builds them.

* ``Second()`` (no output-type rule given) takes the second input's type, like
  ``second``, so ``Elemwise(Second())`` fills like :func:`numpy.broadcast_to`.
* A ``ScalarOp`` subclass whose ``__init__`` does not call ScalarOp's has no ``name``
  and prints as its class; its gradient, with one input marked not implemented, still
  builds. Its kernel is its ``impl``, so it has no C code and the ``c`` linker, which
  compiles the whole graph to C, is left out for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.scalar as ps
import opweave.tensor as pt
from opweave.gradient import grad_not_implemented
from opweave.tensor.elemwise import Elemwise


class TimesN(ps.ScalarOp):
    """``x * n``, with no gradient in ``n``."""

    nin = 2

    def __init__(self) -> None:
        self.output_types_preference = ps.upgrade_to_float

    def impl(self, n: Any, x: Any) -> Any:
        return x * n

    def grad(self, inputs: Sequence[Any], output_grads: Sequence[Any]) -> list[Any]:
        n, _ = inputs
        (gz,) = output_grads
        return [grad_not_implemented(self, 0, n), gz * n]


@pytest.mark.parametrize("linker", usable_linkers())
def test_second_without_a_rule_fills(linker: str) -> None:
    assert ps.Second() == ps.second
    x = pt.matrix("x", dtype="float32")
    y = pt.tensor("y", dtype="float64", shape=(1, 1))
    out = Elemwise(ps.Second())(x, y)
    assert out.dtype == "float64"
    fn = opweave.function([x, y], out, mode=opweave.Mode(linker=linker))
    xv, yv = np.zeros((2, 3), dtype="float32"), np.array([[2.5]])
    got = fn(xv, yv)
    np.testing.assert_array_equal(got, np.broadcast_to(yv, xv.shape))
    assert got.dtype == np.float64


@pytest.mark.parametrize("linker", [n for n in usable_linkers() if n in ("py", "vm", "cvm")])
def test_scalar_op_without_base_init(linker: str) -> None:
    op = TimesN()
    assert str(op) == "TimesN"
    x = pt.vector("x")
    out = Elemwise(op)(2, x)
    g = opweave.grad(out.sum(), x)
    fn = opweave.function([x], [out, g], mode=opweave.Mode(linker=linker))
    xv = np.array([0.5, -3.0, 4.0])
    value, slope = fn(xv)
    np.testing.assert_array_equal(value, np.multiply(xv, 2))
    np.testing.assert_array_equal(slope, np.full_like(xv, 2.0))
