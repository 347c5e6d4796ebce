"""``CheckAndRaise`` / ``Assert`` (opweave.raise_op) on every linker: values, views,
exceptions and messages, gradients and shapes."""

from __future__ import annotations

import re

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile.mode import Mode
from opweave.graph.basic import Constant
from opweave.raise_op import Assert, CheckAndRaise, assert_op

LINKERS = ["py", "vm", "cvm", "c"]


class ParameterError(ValueError):
    """A module-level exception class, as user code defines them."""


def _compile(inputs, outputs, linker):
    if linker in ("c", "cvm"):
        impls = pytest.importorskip(
            "opweave_c.impls", reason="the C backend (opweave-c) is not installed"
        )
        if linker == "c" and impls.C_OPS.lookup(CheckAndRaise) is None:
            pytest.skip("the C backend's table has no CheckAndRaise entry (opweave_c.impls)")
    return opweave.function(inputs, outputs, mode=Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize(
    ("op", "exc_type", "msg"),
    [
        (CheckAndRaise(ValueError, 'bad "x" 100%'), ValueError, 'bad "x" 100%'),
        (Assert("x must be positive"), AssertionError, "x must be positive"),
        (CheckAndRaise(ParameterError, "sigma > 0"), ParameterError, "sigma > 0"),
    ],
)
def test_passes_the_value_or_raises_the_exception(linker, op, exc_type, msg) -> None:
    x = ot.dvector("x")
    checked = op(x, ot.all(ot.gt(x, 0)), ot.gt(x.shape[0], 1))
    f = _compile([x], [checked * 2, checked], linker)
    good = np.array([1.0, 2.5])
    doubled, same = f(good)
    np.testing.assert_array_equal(doubled, good * 2)
    np.testing.assert_array_equal(same, good)
    with pytest.raises(exc_type, match=re.escape(msg)) as info:
        f(np.array([-1.0, 2.0]))
    assert type(info.value) is exc_type
    with pytest.raises(exc_type):
        f(np.array([3.0]))  # the second condition fails


@pytest.mark.parametrize("linker", LINKERS)
def test_conditions_of_other_dtypes_are_cast_to_bool(linker) -> None:
    x = ot.dscalar("x")
    n = ot.lscalar("n")
    f = _compile([x, n], CheckAndRaise(ValueError, "n is zero")(x, n), linker)
    assert f(1.5, 3) == 1.5
    with pytest.raises(ValueError, match="n is zero"):
        f(1.5, 0)


def test_graph_structure_props_and_printing() -> None:
    x = ot.dmatrix("x")
    op = CheckAndRaise(ValueError, "m")
    out = op(x, ot.all(ot.ge(x, 0)))
    node = out.owner
    assert node.op is op and node.inputs[0] is x
    assert node.inputs[1].type.dtype == "bool" and node.inputs[1].type.ndim == 0
    assert out.type == x.type
    assert op.view_map == {0: [0]}
    assert op == CheckAndRaise(ValueError, "m") and hash(op) == hash(CheckAndRaise(ValueError, "m"))
    assert op != CheckAndRaise(TypeError, "m") and op != CheckAndRaise(ValueError, "n")
    assert op.__props__ == ("msg", "exc_type") and op._props_dict() == {
        "msg": "m",
        "exc_type": ValueError,
    }
    assert str(op) == "CheckAndRaise{raises=ValueError, msg='m'}"
    assert str(Assert("a" * 40)) == "Assert{msg='" + "a" * 27 + "...'}"
    assert isinstance(assert_op, Assert) and assert_op.exc_type is AssertionError
    assert op.connection_pattern(node) == [[True], [False]]


def test_a_subclass_with_more_props_keeps_them() -> None:
    class Check(CheckAndRaise):
        __props__ = ("msg", "exc_type", "can_be_replaced")

        def __init__(self, msg: str = "", can_be_replaced: bool = False) -> None:
            super().__init__(ParameterError, msg)
            self.can_be_replaced = can_be_replaced

        def __str__(self) -> str:
            return f"Check{{{self.msg}}}"

    assert Check("a", True) != Check("a", False) and Check("a") == Check("a")
    x = ot.dvector("x")
    out = Check("x > 0")(x, ot.all(ot.gt(x, 0)))
    assert str(out.owner.op) == "Check{x > 0}"
    f = opweave.function([x], out, mode=Mode(linker="py"))
    with pytest.raises(ParameterError, match="x > 0"):
        f(np.array([-1.0]))


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="Exception subclass"):
        CheckAndRaise(int)
    x = ot.dvector("x")
    with pytest.raises(TypeError, match=r"condition 0 .* must be a scalar"):
        assert_op(x, ot.gt(x, 0))


def test_gradient_passes_through_and_shape_is_the_values() -> None:
    x = ot.dvector("x")
    out = CheckAndRaise(ValueError, "m")(x, ot.all(ot.gt(x, 0)))
    g = opweave.grad(ot.sum(out**2), x)
    f = opweave.function([x], [g, out.shape], mode=Mode(linker="py"))
    value = np.array([1.0, 2.0, 3.0])
    grad, shape = f(value)
    np.testing.assert_allclose(grad, 2 * value)
    np.testing.assert_array_equal(shape, [3])


def test_constant_folding_only_when_every_condition_holds() -> None:
    op = Assert("m")
    x = ot.dvector("x")
    holds = op(x, ot.constant(True))
    fails = op(x, ot.constant(False))
    assert op.do_constant_folding(None, holds.owner)
    assert not op.do_constant_folding(None, fails.owner)
    assert isinstance(holds.owner.inputs[1], Constant)
    folded = opweave.function([], Assert("never")(ot.constant(np.ones(2)), ot.constant(False)))
    with pytest.raises(AssertionError, match="never"):
        folded()
