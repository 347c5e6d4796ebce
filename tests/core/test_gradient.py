"""``opweave.gradient``: grad (the gradient contract), Lop, Rop, jacobian, hessian.

The core algorithm is tested with the Double plugin's Ops and with toy Types and Ops
defined here (they compute in ``perform`` themselves, so no backend Op is needed).
Tests on tensors skip, naming what is missing, until ``opweave.tensor`` provides the
math, and run automatically once it does.
"""

from __future__ import annotations

import functools
import importlib
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
from opweave.gradient import (
    DisconnectedInputError,
    DisconnectedType,
    Lop,
    NullType,
    NullTypeGradError,
    Rop,
    disconnected_type,
    grad,
    grad_not_implemented,
    grad_undefined,
    hessian,
    jacobian,
)
from opweave.graph import Apply, Constant, Op, Type, Variable, generic
from opweave_double import add, div, double, mul, sub

# ====================================================================== helpers


def require(module: str, *names: str) -> Any:
    """Return ``module``, failing clearly if it lacks one of ``names``."""
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} does not provide {', '.join(missing)}"
    return mod


def require_tensor_math() -> tuple[Any, Any, Any]:
    """``(opweave.tensor, opweave.tensor.math, opweave.tensor.basic)`` or skip."""
    ot = require("opweave.tensor", "TensorType", "as_tensor_variable", "constant")
    otm = require("opweave.tensor.math", "sum", "dot", "exp", "mul", "add")
    otb = require("opweave.tensor.basic", "zeros_like", "ones_like", "stack", "cast")
    return ot, otm, otb


def evaluate(inputs: Sequence[Variable], outputs: Any, *values: Any) -> Any:
    return opweave.function(list(inputs), outputs, on_unused_input="ignore")(*values)


def evaluate_tensor(inputs: Sequence[Variable], outputs: Any, *values: Any) -> Any:
    """:func:`evaluate` for tensor graphs (the Python backend implements every tensor Op)."""
    return opweave.function(list(inputs), outputs, on_unused_input="ignore")(*values)


# ====================================================================== a toy Type with hooks


class Real(Type):
    """Python floats, with the gradient hooks ``grad_add``, ``zeros_like``, ``ones_like``."""

    def filter(self, x: Any, strict: bool = False, allow_downcast: bool | None = None) -> float:
        if strict and not isinstance(x, float):
            raise TypeError("expected a float")
        return float(x)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    def __str__(self) -> str:
        return "real"

    def grad_add(self, terms: list[Variable]) -> Variable:
        return functools.reduce(radd, terms)

    def zeros_like(self, var: Variable) -> Variable:
        return Constant(self, 0.0)

    def ones_like(self, var: Variable) -> Variable:
        return Constant(self, 1.0)


real = Real()


def as_real(x: Any) -> Variable:
    return x if isinstance(x, Variable) else Constant(real, float(x))


class RealOp(Op):
    """A single-output Op on reals from Python callables (``grad`` and ``R_op`` optional)."""

    __props__ = ("name",)

    def __init__(
        self,
        name: str,
        fn: Callable[..., float],
        grad: Callable[[list[Variable], Variable], list[Any]] | None = None,
        rop: Callable[[list[Variable], list[Any]], Any] | None = None,
    ) -> None:
        self.name = name
        self.fn = fn
        self._grad = grad
        self._rop = rop

    def make_node(self, *inputs: Any) -> Apply:
        return Apply(self, [as_real(i) for i in inputs], [real()])

    def perform(self, node: Apply, inputs: Sequence[float], out: list[list[Any]]) -> None:
        out[0][0] = float(self.fn(*inputs))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        if self._grad is None:
            return super().grad(inputs, output_grads)
        return self._grad(list(inputs), output_grads[0])

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Any]) -> list[Any]:
        if self._rop is None:
            return super().R_op(inputs, eval_points)
        return [self._rop(list(inputs), list(eval_points))]

    def __str__(self) -> str:
        return self.name


def rsum(terms: Sequence[Any]) -> Any:
    """The sum of the non-None terms (None if all are None): R_op's zero convention."""
    present = [t for t in terms if t is not None]
    return functools.reduce(radd, present) if present else None


radd = RealOp("radd", operator.add, lambda i, gz: [gz, gz], lambda i, e: rsum(e))
rmul = RealOp(
    "rmul",
    operator.mul,
    lambda i, gz: [rmul(gz, i[1]), rmul(gz, i[0])],
    lambda i, e: rsum(
        [None if e[0] is None else rmul(e[0], i[1]), None if e[1] is None else rmul(i[0], e[1])]
    ),
)
rneg = RealOp("rneg", operator.neg, lambda i, gz: [rneg(gz)], lambda i, e: rneg(e[0]))
rsin = RealOp(
    "rsin", math.sin, lambda i, gz: [rmul(gz, rcos(i[0]))], lambda i, e: rmul(rcos(i[0]), e[0])
)
rcos = RealOp(
    "rcos",
    math.cos,
    lambda i, gz: [rmul(gz, rneg(rsin(i[0])))],
    lambda i, e: rmul(rneg(rsin(i[0])), e[0]),
)
# Differentiable, but without R_op.
rexp = RealOp("rexp", math.exp, lambda i, gz: [rmul(gz, rexp(i[0]))])


# ====================================================================== chain rule


def test_chain_rule_through_double_ops() -> None:
    x, y, z, w = (double(n) for n in "xyzw")
    cost = div(mul(sub(x, y), z), w)
    gx, gy, gz, gw = grad(cost, [x, y, z, w])
    values = evaluate([x, y, z, w], [gx, gy, gz, gw], 5.0, 2.0, 3.0, 4.0)
    assert values == pytest.approx([3 / 4, -3 / 4, 3 / 4, -3 * 3 / 16])


def test_grad_of_cost_with_respect_to_itself_is_one() -> None:
    x = double("x")
    c = mul(x, 2.0)
    (g,) = grad(c, [c])
    assert isinstance(g, Constant) and g.data == 1.0


def test_result_has_the_form_of_wrt() -> None:
    x, y = double("x"), double("y")
    cost = mul(x, y)
    assert isinstance(grad(cost, x), Variable)
    assert isinstance(grad(cost, [x, y]), list)
    result = grad(cost, (x, y))
    assert isinstance(result, tuple) and len(result) == 2
    assert evaluate([x, y], list(result), 3.0, 4.0) == [4.0, 3.0]


def test_toy_type_chain_rule_with_several_uses_through_grad_add() -> None:
    x = real("x")
    cost = radd(rmul(x, x), rsin(x))  # x**2 + sin(x): x is used three times
    g = grad(cost, x)
    for value in (0.3, -1.7, 2.0):
        assert evaluate([x], g, value) == pytest.approx(2 * value + math.cos(value))


def test_double_needs_grad_add_to_sum_several_terms() -> None:
    x = double("x")
    with pytest.raises(TypeError, match=r"cannot add up the 2 gradient terms of x.*grad_add"):
        grad(mul(x, x), x)


def test_gradient_variables_are_named_after_cost_and_variable() -> None:
    x, y = real("x"), real("y")
    cost = rmul(rsin(x), y)
    cost.name = "c"
    gx, gy = grad(cost, [x, y])
    assert gx.name == "(dc/dx)" and gy.name == "(dc/dy)"
    gx2 = grad(cost, x, add_names=False)
    assert gx2.name is None


def test_deep_graph_does_not_hit_the_recursion_limit() -> None:
    x = double("x")
    out = x
    for _ in range(3000):
        out = add(out, 1.0)
    g = grad(out, x)
    assert isinstance(g, Constant) and g.data == 1.0


# ====================================================================== argument checks


def test_cost_must_be_a_scalar() -> None:
    class VecType(Type):
        ndim = 1

        def filter(self, x: Any, strict: bool = False, allow_downcast: Any = None) -> Any:
            return np.asarray(x, dtype="float64")

    v = VecType()("v")
    with pytest.raises(TypeError, match=r"cost must be a scalar \(ndim 0\).*ndim 1"):
        grad(v, v)


def test_bad_arguments() -> None:
    x = double("x")
    with pytest.raises(ValueError, match="known_grads is empty"):
        grad(None, x)
    with pytest.raises(TypeError, match=r"wrt\[1\] must be a Variable"):
        grad(mul(x, 2.0), [x, 3.0])
    with pytest.raises(TypeError, match="cost must be a Variable"):
        grad(1.0, x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid value for disconnected_inputs"):
        grad(mul(x, 2.0), x, disconnected_inputs="loud")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid value for return_disconnected"):
        grad(mul(x, 2.0), x, return_disconnected="nothing")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid value for null_gradients"):
        grad(mul(x, 2.0), x, null_gradients="nan")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot differentiate an undefined cost: why"):
        grad(NullType("why")(), x)
    with pytest.raises(TypeError, match="known_grads key"):
        grad(None, x, known_grads={1.0: x})  # type: ignore[dict-item]


# ============================================================ consider_constant, known_grads


def test_consider_constant_stops_the_gradient() -> None:
    x, y = double("x"), double("y")
    u = mul(x, 2.0)
    cost = mul(u, y)
    with pytest.raises(DisconnectedInputError, match=r"wrt\[0\] \(x\)"):
        grad(cost, [x, y], consider_constant=[u])
    gx, gy = grad(cost, [x, y], consider_constant=[u], disconnected_inputs="ignore")
    assert evaluate([x, y], [gx, gy], 3.0, 5.0) == [0.0, 6.0]
    # Without it, the gradient flows through u.
    assert evaluate([x, y], grad(cost, x), 3.0, 5.0) == 10.0


def test_known_grads_seed_intermediate_variables() -> None:
    x, g = double("x"), double("g")
    u = mul(x, 3.0)
    gx = grad(None, x, known_grads={u: g})
    assert evaluate([x, g], gx, 1.0, 5.0) == 15.0


def test_known_grads_override_the_cost_seed() -> None:
    x, s = real("x"), real("s")
    cost = rmul(x, x)
    gx = grad(cost, x, known_grads={cost: s})
    assert evaluate([x, s], gx, 3.0, 10.0) == pytest.approx(60.0)


def test_known_grads_must_be_variables() -> None:
    x = double("x")
    u = mul(x, 3.0)
    with pytest.raises(TypeError, match=r"known_grads\[mul.out\] must be a Variable"):
        grad(None, x, known_grads={u: 2.0})  # type: ignore[dict-item]


def test_lop_equals_known_grads() -> None:
    x, y, v = real("x"), real("y"), real("v")
    f = rmul(rsin(x), y)
    lop = Lop(f, [x, y], v)
    manual = grad(None, [x, y], known_grads={f: v})
    lop_values = evaluate([x, y, v], lop, 0.5, 2.0, 3.0)
    manual_values = evaluate([x, y, v], manual, 0.5, 2.0, 3.0)
    assert lop_values == pytest.approx(manual_values)
    assert lop_values == pytest.approx([3.0 * math.cos(0.5) * 2.0, 3.0 * math.sin(0.5)])
    assert isinstance(Lop(f, x, v), Variable)
    with pytest.raises(ValueError, match="f has 1 variables but eval_points has 2"):
        Lop(f, x, [v, v])


# ====================================================================== connection_pattern


class TwoOut(Op):
    """``(a, b) -> (2a, 3b)``: input 1 only affects output 1."""

    __props__ = ("declare_pattern", "honest")

    def __init__(self, declare_pattern: bool = True, honest: bool = True) -> None:
        self.declare_pattern = declare_pattern
        self.honest = honest
        self.seen_output_grads: list[list[Variable]] = []
        if declare_pattern:
            self.connection_pattern = lambda node: [[True, False], [False, True]]

    def make_node(self, a: Variable, b: Variable) -> Apply:
        return Apply(self, [a, b], [double(), double()])

    def perform(self, node: Apply, inputs: Sequence[float], out: list[list[Any]]) -> None:
        out[0][0] = 2 * inputs[0]
        out[1][0] = 3 * inputs[1]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        self.seen_output_grads.append(list(output_grads))
        ga, gb = output_grads
        terms: list[Any] = []
        for g, factor in ((ga, 2.0), (gb, 3.0)):
            if isinstance(g.type, DisconnectedType):
                terms.append(disconnected_type() if self.honest else Constant(double, 0.0))
            else:
                terms.append(mul(g, factor))
        return terms


def test_connection_pattern_is_honoured() -> None:
    a, b = double("a"), double("b")
    op = TwoOut()
    out0, _ = op(a, b)
    cost = mul(out0, 5.0)
    assert evaluate([a], grad(cost, a), 1.0) == 10.0
    with pytest.raises(DisconnectedInputError, match=r"wrt\[0\] \(b\)"):
        grad(cost, b)
    # The Op saw a DisconnectedType gradient for output 1, which does not lead to the cost.
    ga, gb = op.seen_output_grads[0]
    assert not isinstance(ga.type, DisconnectedType)
    assert isinstance(gb.type, DisconnectedType)


def test_output_grads_of_outputs_not_leading_to_the_cost_are_disconnected() -> None:
    a, b = double("a"), double("b")
    op = TwoOut(declare_pattern=False)
    out0, _ = op(a, b)
    cost = mul(out0, 5.0)
    assert evaluate([a], grad(cost, a), 1.0) == 10.0
    # Without a pattern the Op's DisconnectedType answer is what makes b disconnected.
    with pytest.raises(DisconnectedInputError, match=r"\(b\)"):
        grad(cost, b)
    assert isinstance(op.seen_output_grads[-1][1].type, DisconnectedType)


def test_op_contradicting_its_connection_pattern_is_an_error() -> None:
    a, b = double("a"), double("b")
    out0, _ = TwoOut(honest=False)(a, b)
    with pytest.raises(TypeError, match=r"input 1 \(b\); expected a DisconnectedType"):
        grad(mul(out0, 5.0), a)


def test_bad_connection_pattern_is_reported() -> None:
    a, b = double("a"), double("b")
    op = TwoOut()
    op.connection_pattern = lambda node: [[True, False]]
    out0, _ = op(a, b)
    with pytest.raises(ValueError, match=r"connection_pattern\(node\) must return one list"):
        grad(mul(out0, 5.0), a)


# ====================================================================== disconnected inputs


def test_disconnected_input_error_names_the_input() -> None:
    x, y = double("x"), double("y")
    cost = mul(x, 2.0)
    with pytest.raises(DisconnectedInputError) as info:
        grad(cost, [x, y])
    assert isinstance(info.value, ValueError)
    assert "wrt[1] (y)" in str(info.value)
    assert "not part of the computational graph" in str(info.value)


def test_disconnected_inputs_warn_and_ignore() -> None:
    x, y = double("x"), double("y")
    cost = mul(x, 2.0)
    with pytest.warns(UserWarning, match=r"wrt\[1\] \(y\)"):
        gx, gy = grad(cost, [x, y], disconnected_inputs="warn")
    assert isinstance(gy, Constant) and gy.data == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gx, gy = grad(cost, [x, y], disconnected_inputs="ignore")
    assert evaluate([x, y], [gx, gy], 1.0, 1.0) == [2.0, 0.0]


def test_return_disconnected_variants() -> None:
    x, y = real("x"), real("y")
    cost = rsin(x)
    kwargs: dict[str, Any] = {"disconnected_inputs": "ignore"}
    zero = grad(cost, y, return_disconnected="zero", **kwargs)
    assert isinstance(zero, Constant) and zero.data == 0.0
    assert grad(cost, y, return_disconnected="None", **kwargs) is None
    assert grad(cost, y, return_disconnected="none", **kwargs) is None
    disc = grad(cost, y, return_disconnected="disconnected", **kwargs)
    assert isinstance(disc.type, DisconnectedType)


def test_zero_gradient_of_a_type_without_zeros_is_a_clear_error() -> None:
    x = double("x")
    g = generic("g")
    with pytest.raises(TypeError, match=r"cannot build zeros_like\(g\).*generic"):
        grad(mul(x, 2.0), g, disconnected_inputs="ignore")


def test_none_from_op_grad_means_disconnected() -> None:
    x, y = double("x"), double("y")
    first = RealOp("first", lambda a, b: a, lambda i, gz: [gz, None])
    first.make_node = lambda a, b: Apply(first, [a, b], [double()])  # type: ignore[method-assign]
    cost = mul(first(x, y), 3.0)
    assert evaluate([x], grad(cost, x), 1.0) == 3.0
    with pytest.raises(DisconnectedInputError, match=r"\(y\)"):
        grad(cost, y)


# ====================================================================== NullType


class Step(Op):
    """``floor(x) * y``: the gradient with respect to x is undefined."""

    __props__ = ()

    def make_node(self, x: Variable, y: Variable) -> Apply:
        return Apply(self, [x, y], [double()])

    def perform(self, node: Apply, inputs: Sequence[float], out: list[list[Any]]) -> None:
        out[0][0] = math.floor(inputs[0]) * inputs[1]

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        x, _ = inputs
        (gz,) = output_grads
        floor_x = Step()(x, Constant(double, 1.0))
        return [grad_undefined(self, 0, x, "floor is a step function"), mul(gz, floor_x)]


def test_null_gradient_raises_with_its_reason_when_it_reaches_wrt() -> None:
    x, y = double("x"), double("y")
    cost = mul(Step()(mul(x, 2.0), y), 3.0)
    with pytest.raises(NullTypeGradError) as info:
        grad(cost, x)
    assert isinstance(info.value, TypeError)
    message = str(info.value)
    assert "wrt[0] (x)" in message
    assert "the gradient of Step with respect to its input 0" in message
    assert "mathematically undefined: floor is a step function" in message


def test_null_gradient_elsewhere_does_not_raise() -> None:
    x, y = double("x"), double("y")
    cost = mul(Step()(x, y), 3.0)
    gy = grad(cost, y)
    assert evaluate([x, y], gy, 2.5, 7.0) == 6.0


def test_null_gradients_return() -> None:
    x, y = double("x"), double("y")
    cost = Step()(x, y)
    gx, gy = grad(cost, [x, y], null_gradients="return")
    assert isinstance(gx.type, NullType)
    assert "floor is a step function" in gx.type.why_null
    assert evaluate([x, y], gy, 2.5, 7.0) == 2.0


def test_null_gradient_only_follows_the_connection_pattern() -> None:
    a, b, y = double("a"), double("b"), double("y")
    out0, out1 = TwoOut()(a, b)
    cost = add(mul(out0, 1.0), Step()(out1, y))  # undefined through output 1 only
    assert evaluate([a], grad(cost, a), 4.0) == 2.0
    with pytest.raises(NullTypeGradError, match="floor is a step function"):
        grad(cost, b)
    # Without a connection_pattern every input is connected to every output, so the
    # undefined gradient reaches a too (the documented failure mode).
    out0, out1 = TwoOut(declare_pattern=False)(a, b)
    cost = add(mul(out0, 1.0), Step()(out1, y))
    with pytest.raises(NullTypeGradError, match="floor is a step function"):
        grad(cost, a)


def test_grad_undefined_and_not_implemented_messages() -> None:
    x = double("x")
    undefined = grad_undefined(mul, 1, x, "a comment")
    assert isinstance(undefined.type, NullType)
    assert undefined.type.why_null == (
        "the gradient of mul with respect to its input 1 (x) is mathematically undefined: a comment"
    )
    missing = grad_not_implemented(mul, 0, x)
    assert isinstance(missing.type, NullType)
    assert missing.type.why_null == (
        "the gradient of mul with respect to its input 0 (x) is not implemented"
    )


def test_grad_not_implemented_reaches_wrt() -> None:
    x = real("x")
    lazy = RealOp("lazy", math.tan, lambda i, gz: [grad_not_implemented(lazy, 0, i[0], "todo")])
    with pytest.raises(NullTypeGradError, match=r"lazy with respect to its input 0 .* todo"):
        grad(rsin(lazy(x)), x)


# ====================================================================== what Ops must return


def test_wrong_number_of_gradient_terms() -> None:
    x, y = real("x"), real("y")
    bad = RealOp("bad2", operator.add, lambda i, gz: [gz])
    with pytest.raises(ValueError, match=r"bad2\.grad returned 1 gradient terms, but the Op has 2"):
        grad(bad(x, y), x)


def test_gradient_terms_must_be_variables_of_the_right_type() -> None:
    x = real("x")
    not_a_list = RealOp("single", math.sin, lambda i, gz: gz)  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"single\.grad must return a list or tuple"):
        grad(not_a_list(x), x)
    number = RealOp("number", math.sin, lambda i, gz: [1.0])
    with pytest.raises(TypeError, match=r"number\.grad returned float 1\.0 for input 0"):
        grad(number(x), x)
    wrong_type = RealOp("wrongtype", math.sin, lambda i, gz: [generic()])
    with pytest.raises(TypeError, match=r"gradient term of Type generic for input 0 \(x\)"):
        grad(wrong_type(x), x)


def test_op_without_grad() -> None:
    x = real("x")
    opaque = RealOp("opaque", math.sin)
    with pytest.raises(NotImplementedError, match="opaque"):
        grad(opaque(x), x)


# ====================================================================== Rop


def test_rop_through_ops_defining_r_op() -> None:
    x, y, vx, vy = (real(n) for n in ("x", "y", "vx", "vy"))
    f = rsin(rmul(x, y))
    r = Rop(f, [x, y], [vx, vy])
    value = evaluate([x, y, vx, vy], r, 0.5, 2.0, 3.0, -1.0)
    assert value == pytest.approx(math.cos(1.0) * (2.0 * 3.0 + 0.5 * -1.0))
    # Only x varies: y's eval point is zero (None inside R_op).
    rx = Rop(f, x, vx)
    assert evaluate([x, y, vx], rx, 0.5, 2.0, 3.0) == pytest.approx(math.cos(1.0) * 6.0)
    # A list f gives a list.
    r_list = Rop([f, rneg(x)], [x, y], [vx, vy])
    assert isinstance(r_list, list) and len(r_list) == 2


def test_rop_via_lop_twice_matches_r_op() -> None:
    x, y, vx, vy = (real(n) for n in ("x", "y", "vx", "vy"))
    f = rsin(rmul(x, y))
    forward = Rop(f, [x, y], [vx, vy])
    twice = Rop(f, [x, y], [vx, vy], use_op_rop_implementation=False)
    args = (0.5, 2.0, 3.0, -1.0)
    assert evaluate([x, y, vx, vy], twice, *args) == pytest.approx(
        evaluate([x, y, vx, vy], forward, *args)
    )


def test_rop_missing_r_op_names_the_op_and_the_fallback() -> None:
    x, v = real("x"), real("v")
    f = rsin(rexp(x))
    with pytest.raises(NotImplementedError, match=r"rexp does not implement R_op.*use_op_rop"):
        Rop(f, x, v)
    r = Rop(f, x, v, use_op_rop_implementation=False)
    expected = math.cos(math.exp(0.3)) * math.exp(0.3) * 2.0
    assert evaluate([x, v], r, 0.3, 2.0) == pytest.approx(expected)


def test_rop_through_double_ops_with_the_fallback() -> None:
    x, y, v = double("x"), double("y"), double("v")
    with pytest.raises(NotImplementedError, match="mul does not implement R_op"):
        Rop(mul(x, y), x, v)
    r = Rop(mul(x, y), x, v, use_op_rop_implementation=False)
    assert evaluate([x, y, v], r, 1.0, 3.0, 5.0) == 15.0


def test_rop_disconnected_outputs() -> None:
    x, y, v = real("x"), real("y"), real("v")
    f = rsin(y)
    with pytest.raises(DisconnectedInputError, match=r"f\[0\]"):
        Rop(f, x, v)
    with pytest.warns(UserWarning, match=r"f\[0\]"):
        zero = Rop(f, x, v, disconnected_outputs="warn")
    assert isinstance(zero, Constant) and zero.data == 0.0
    assert Rop(f, x, v, disconnected_outputs="ignore", return_disconnected="None") is None
    disc = Rop(f, x, v, disconnected_outputs="ignore", return_disconnected="disconnected")
    assert isinstance(disc.type, DisconnectedType)
    with pytest.raises(ValueError, match="wrt has 1 variables but eval_points has 2"):
        Rop(f, x, [v, v])


def test_rop_of_a_wrt_is_its_eval_point() -> None:
    x, v = real("x"), real("v")
    assert Rop(x, x, v) is v


def test_rop_checks_what_r_op_returns() -> None:
    x, v = real("x"), real("v")
    two = RealOp("two", math.sin, rop=lambda i, e: e[0])
    two.R_op = lambda inputs, eval_points: [eval_points[0], eval_points[0]]  # type: ignore[method-assign]
    with pytest.raises(ValueError, match=r"two\.R_op returned 2 results, but the node has 1"):
        Rop(two(x), x, v)


def test_op_with_pattern_returning_disconnected_for_a_connected_input() -> None:
    a, b = double("a"), double("b")
    op = TwoOut()
    op.grad = lambda inputs, output_grads: [None, None]  # type: ignore[method-assign]
    out0, _ = op(a, b)
    with pytest.raises(TypeError, match=r"DisconnectedType gradient for input 0 \(a\)"):
        grad(mul(out0, 5.0), a)


# ====================================================================== jacobian, hessian (toys)


class MatType(Type):
    """A toy Type with ``ndim`` and a static ``shape`` (no values needed)."""

    def __init__(self, shape: tuple[int | None, ...]) -> None:
        self.shape = shape
        self.ndim = len(shape)

    def filter(self, x: Any, strict: bool = False, allow_downcast: Any = None) -> Any:
        return np.asarray(x, dtype="float64")


def test_jacobian_and_hessian_of_scalars_on_a_toy_type() -> None:
    x = real("x")
    cost = rmul(rsin(x), x)  # x sin x
    jac = jacobian(cost, x)
    assert evaluate([x], jac, 0.7) == pytest.approx(math.sin(0.7) + 0.7 * math.cos(0.7))
    hess = hessian(cost, [x])
    assert isinstance(hess, list)
    expected = 2 * math.cos(0.7) - 0.7 * math.sin(0.7)
    assert evaluate([x], hess[0], 0.7) == pytest.approx(expected)


def test_jacobian_and_hessian_shape_limits() -> None:
    m = MatType((2, 2))("m")
    with pytest.raises(ValueError, match="must be a scalar or a vector, got m with ndim 2"):
        jacobian(m, m)
    v = MatType((None,))("v")
    with pytest.raises(ValueError, match=r"not known when the graph is built.*static length"):
        jacobian(v, v)
    x = real("x")
    with pytest.raises(ValueError, match=r"wrt\[0\] \(m\) must be a scalar or a vector"):
        hessian(rsin(x), m)
    with pytest.raises(TypeError, match="cost must be a scalar"):
        hessian(v, x)


# ====================================================================== integer rules (scalars)


class ScalarToy(Op):
    """A single-output Op on opweave scalars, from Python callables."""

    __props__ = ("name",)

    def __init__(
        self,
        name: str,
        out_dtype: str,
        fn: Callable[..., Any],
        grad: Callable[[list[Variable], Variable], list[Any]],
        pattern: list[list[bool]] | None = None,
    ) -> None:
        self.name = name
        self.out_dtype = out_dtype
        self.fn = fn
        self._grad = grad
        if pattern is not None:
            self.connection_pattern = lambda node: pattern

    def make_node(self, *inputs: Variable) -> Apply:
        from opweave.scalar import ScalarType

        return Apply(self, list(inputs), [ScalarType(self.out_dtype)()])

    def perform(self, node: Apply, inputs: Sequence[Any], out: list[list[Any]]) -> None:
        out[0][0] = np.dtype(self.out_dtype).type(self.fn(*inputs))

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        return self._grad(list(inputs), output_grads[0])

    def __str__(self) -> str:
        return self.name


@pytest.fixture
def sc() -> Any:
    return require("opweave.scalar", "ScalarType", "constant", "zeros_like", "ones_like")


def fzero(sc: Any) -> Variable:
    return sc.constant(0.0, dtype="float64")


def test_example_5_int_then_float(sc: Any) -> None:
    """Documented gradient example 5: C = 0.5 * float(y), y = int(x)."""
    x = sc.ScalarType("float64")("x")
    to_int = ScalarToy("to_int", "int64", int, lambda i, gz: [fzero(sc)])
    to_float = ScalarToy("to_float", "float64", float, lambda i, gz: [gz])
    half = ScalarToy("half", "float64", lambda a: 0.5 * a, lambda i, gz: [half(gz)])
    y = to_int(x)
    cost = half(to_float(y))
    gy, gx = grad(cost, [y, x])
    # The gradient with respect to the integer y is 0.5, a float.
    assert gy.type.dtype == "float64"
    assert float(evaluate([x], gy, 2.7)) == 0.5
    # The gradient with respect to x is 0: int(x) is integer-valued.
    assert float(evaluate([x], gx, 2.7)) == 0.0


def test_example_1_integer_product_has_zero_gradient(sc: Any) -> None:
    """Documented gradient example 1: an integer-valued function of integers is a step function."""
    x, y = sc.ScalarType("int64")("x"), sc.ScalarType("int64")("y")
    idot = ScalarToy("idot", "int64", operator.mul, lambda i, gz: [fzero(sc), fzero(sc)])
    to_float = ScalarToy("to_float", "float64", float, lambda i, gz: [gz])
    gx, gy = grad(to_float(idot(x, y)), [x, y])
    assert gx.type.dtype == "float64" and gy.type.dtype == "float64"
    assert [float(v) for v in evaluate([x, y], [gx, gy], 3, 4)] == [0.0, 0.0]


def test_example_2_float_times_integer(sc: Any) -> None:
    """Documented gradient example 2: with a float output, an integer input's gradient is
    as usual."""
    x, y = sc.ScalarType("float64")("x"), sc.ScalarType("int64")("y")
    fmul = ScalarToy(
        "fmul", "float64", operator.mul, lambda i, gz: [fmul(gz, i[1]), fmul(gz, i[0])]
    )
    gx, gy = grad(fmul(x, y), [x, y])
    assert gy.type.dtype == "float64"
    assert [float(v) for v in evaluate([x, y], [gx, gy], 1.5, 4)] == [4.0, 1.5]


def test_example_3_undefined_gradient_of_an_integer_axis(sc: Any) -> None:
    """Documented gradient example 3: argmax along axis y: undefined for y, zero for x."""
    x, y = sc.ScalarType("float64")("x"), sc.ScalarType("int64")("y")
    argmax = ScalarToy(
        "argmax",
        "int64",
        lambda a, b: 0,
        lambda i, gz: [fzero(sc), grad_undefined(argmax, 1, i[1], "fractional axis")],
    )
    to_float = ScalarToy("to_float", "float64", float, lambda i, gz: [gz])
    cost = to_float(argmax(x, y))
    assert float(evaluate([x], grad(cost, x), 1.0)) == 0.0
    with pytest.raises(NullTypeGradError, match="argmax with respect to its input 1"):
        grad(cost, y)


def test_example_4_shape_only_input_is_disconnected(sc: Any) -> None:
    """Documented gradient example 4: fill(x, y) does not depend on y's value, only on its shape."""
    x, y = sc.ScalarType("float64")("x"), sc.ScalarType("int64")("y")
    fill = ScalarToy(
        "fill",
        "float64",
        lambda a, n: a,
        lambda i, gz: [gz, disconnected_type()],
        pattern=[[True], [False]],
    )
    cost = fill(x, y)
    assert float(evaluate([x, y], grad(cost, x), 1.0, 3)) == 1.0
    with pytest.raises(DisconnectedInputError, match=r"\(y\)"):
        grad(cost, y)
    zero = grad(cost, y, disconnected_inputs="ignore")
    assert zero.type.dtype == "float64"  # floatX zeros, never integer


def test_op_returning_an_integer_gradient_is_an_error(sc: Any) -> None:
    x = sc.ScalarType("int64")("x")
    bad = ScalarToy("badint", "float64", float, lambda i, gz: [sc.constant(1, dtype="int64")])
    with pytest.raises(TypeError, match=r"badint\.grad illegally returned an integer-valued"):
        grad(bad(x), x)


def test_nonzero_gradient_through_integer_outputs_is_an_error(sc: Any) -> None:
    x = sc.ScalarType("float64")("x")
    liar = ScalarToy("liar", "int64", int, lambda i, gz: [sc.constant(2.0, dtype="float64")])
    to_float = ScalarToy("to_float", "float64", float, lambda i, gz: [gz])
    with pytest.raises(ValueError, match=r"liar\.grad returned the nonzero gradient"):
        grad(to_float(liar(x)), x)


def test_integer_cost_is_seeded_with_a_float_one(sc: Any) -> None:
    seen: list[Variable] = []

    def record(i: list[Variable], gz: Variable) -> list[Any]:
        seen.append(gz)
        return [fzero(sc)]

    x = sc.ScalarType("float64")("x")
    cost = ScalarToy("round", "int64", round, record)(x)
    grad(cost, x)
    assert sc.ScalarType("float64") == seen[0].type or seen[0].type.dtype.startswith("float")


def test_float_gradients_are_cast_to_the_input_dtype(sc: Any) -> None:
    require("opweave.scalar", "cast")
    x = sc.ScalarType("float32")("x")
    up = ScalarToy("up", "float64", float, lambda i, gz: [sc.constant(2.0, dtype="float64")])
    g = grad(up(x), x)
    assert g.type.dtype == "float32"


def test_known_grads_must_not_be_integers(sc: Any) -> None:
    x = sc.ScalarType("float64")("x")
    with pytest.raises(TypeError, match="integer dtype int64"):
        grad(None, x, known_grads={x: sc.ScalarType("int64")("g")})


# ============================================================ tensors (need opweave.tensor math)


def test_tensor_integer_examples_1_2_and_5() -> None:
    ot, otm, otb = require_tensor_math()
    xi, yi = (
        ot.TensorType("int64", shape=(None,))("xi"),
        ot.TensorType("int64", shape=(None,))("yi"),
    )
    # Example 1: an integer dot product has zero gradients (of a float dtype).
    gx, gy = grad(otb.cast(otm.dot(xi, yi), "float64"), [xi, yi])
    assert gx.type.dtype.startswith("float") and gy.type.dtype.startswith("float")
    values = evaluate_tensor([xi, yi], [gx, gy], np.array([1, 2]), np.array([3, 4]))
    np.testing.assert_array_equal(values[0], [0.0, 0.0])
    np.testing.assert_array_equal(values[1], [0.0, 0.0])
    # Example 2: float times integer: the integer input's gradient is the float one.
    xf = ot.TensorType("float64", shape=(None,))("xf")
    gx, gy = grad(otm.dot(xf, yi), [xf, yi])
    assert gy.type.dtype.startswith("float")
    values = evaluate_tensor([xf, yi], [gx, gy], np.array([1.5, 2.5]), np.array([3, 4]))
    np.testing.assert_allclose(values[0], [3.0, 4.0])
    np.testing.assert_allclose(values[1], [1.5, 2.5])
    # Example 5: C = 0.5 * float(int(x)).
    x = ot.TensorType("float64", shape=())("x")
    y = otb.cast(x, "int64")
    cost = otb.cast(y, "float64") * 0.5
    gy, gx = grad(cost, [y, x])
    assert float(evaluate_tensor([x], gy, 2.7)) == 0.5
    assert float(evaluate_tensor([x], gx, 2.7)) == 0.0


def test_tensor_integer_example_4_alloc() -> None:
    ot, otm, otb = require_tensor_math()
    require("opweave.tensor.basic", "alloc")
    x = ot.TensorType("float64", shape=())("x")
    n = ot.TensorType("int64", shape=())("n")
    cost = otm.sum(otb.alloc(x, n))
    assert float(evaluate_tensor([x, n], grad(cost, x), 2.0, 4)) == 4.0
    with pytest.raises(DisconnectedInputError, match=r"\(n\)"):
        grad(cost, n)


def test_tensor_grad_wrt_disconnected_integer_is_float_zeros() -> None:
    ot, otm, _ = require_tensor_math()
    x = ot.TensorType("float64", shape=(None,))("x")
    i = ot.TensorType("int32", shape=(None,))("i")
    g = grad(otm.sum(otm.exp(x)), i, disconnected_inputs="ignore")
    assert g.type.dtype.startswith("float")
    value = evaluate_tensor([x, i], g, np.ones(2), np.array([1, 2, 3], dtype="int32"))
    np.testing.assert_array_equal(value, [0, 0, 0])


def test_tensor_cost_must_be_scalar() -> None:
    ot, _, _ = require_tensor_math()
    x = ot.TensorType("float64", shape=(None,))("x")
    with pytest.raises(TypeError, match="cost must be a scalar"):
        grad(x * 2.0, x)


def test_jacobian_of_a_vector_function_matches_numpy() -> None:
    ot, otm, _ = require_tensor_math()
    require("opweave.tensor.subtensor", "getitem")
    x = ot.TensorType("float64", shape=(3,))("x")
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    f = otm.exp(otm.dot(ot.constant(a), x))  # R^3 -> R^2... as a length-2 vector
    f = ot.TensorType("float64", shape=(2,)).filter_variable(f)
    jac = jacobian(f, x)
    value = np.array([0.1, -0.2, 0.3])
    expected = np.exp(a @ value)[:, None] * a
    np.testing.assert_allclose(evaluate_tensor([x], jac, value), expected, rtol=1e-10)
    jac_list = jacobian(f, [x])
    assert isinstance(jac_list, list) and len(jac_list) == 1


def test_jacobian_of_a_vector_of_unknown_length_is_a_scan() -> None:
    ot, otm, _ = require_tensor_math()
    x = ot.TensorType("float64", shape=(None,))("x")
    jac = jacobian(otm.exp(x), x)
    assert type(jac.owner.op).__name__ == "Scan"
    value = np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(evaluate_tensor([x], jac, value), np.diag(np.exp(value)))


def test_jacobian_of_a_scalar_is_grad() -> None:
    ot, otm, _ = require_tensor_math()
    x = ot.TensorType("float64", shape=(None,))("x")
    value = np.array([0.5, 1.5])
    np.testing.assert_allclose(
        evaluate_tensor([x], jacobian(otm.sum(otm.exp(x)), x), value), np.exp(value)
    )


def test_hessian_of_a_quadratic_form() -> None:
    ot, otm, _ = require_tensor_math()
    require("opweave.tensor.subtensor", "getitem")
    a = np.array([[2.0, 1.0, 0.0], [3.0, -1.0, 4.0], [0.5, 0.0, 1.0]])
    x = ot.TensorType("float64", shape=(3,))("x")
    cost = otm.dot(x, otm.dot(ot.constant(a), x))
    hess = hessian(cost, x)
    np.testing.assert_allclose(evaluate_tensor([x], hess, np.array([0.3, -1.0, 2.0])), a + a.T)
    assert isinstance(hessian(cost, [x]), list)


def test_tensor_rop_matches_jacobian_times_vector() -> None:
    ot, otm, _ = require_tensor_math()
    require("opweave.tensor.subtensor", "getitem")
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    x = ot.TensorType("float64", shape=(3,))("x")
    v = ot.TensorType("float64", shape=(3,))("v")
    f = ot.TensorType("float64", shape=(2,)).filter_variable(otm.exp(otm.dot(ot.constant(a), x)))
    jv = otm.dot(jacobian(f, x), v)
    x_val, v_val = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -2.0])
    expected = evaluate_tensor([x, v], jv, x_val, v_val)
    np.testing.assert_allclose(expected, np.exp(a @ x_val) * (a @ v_val), rtol=1e-10)
    twice = Rop(f, x, v, use_op_rop_implementation=False)
    np.testing.assert_allclose(evaluate_tensor([x, v], twice, x_val, v_val), expected, rtol=1e-10)
    forward = Rop(f, x, v)
    np.testing.assert_allclose(evaluate_tensor([x, v], forward, x_val, v_val), expected, rtol=1e-10)


def test_tensor_lop_is_vector_jacobian_product() -> None:
    ot, otm, _ = require_tensor_math()
    a = np.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    x = ot.TensorType("float64", shape=(None,))("x")
    u = ot.TensorType("float64", shape=(None,))("u")
    f = otm.dot(ot.constant(a), x)
    np.testing.assert_allclose(
        evaluate_tensor([x, u], Lop(f, x, u), np.zeros(3), np.array([1.0, 2.0])),
        np.array([1.0, 2.0]) @ a,
    )
