"""The numerically stable rewrites of the logistic family (``opweave.tensor.rewriting.math``).

Each rewrite is checked on its own (the graph after applying only it), then in ``FAST_RUN``
by value and gradient at extreme inputs against NumPy written stably (``np.logaddexp``),
in float64 and float32; and PyTensor's logistic-regression tutorial trains to the same
weights as a NumPy implementation of the same stable math.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode, function
from opweave.gradient import grad
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import build_rewrite_database, in2out
from opweave.graph.rewriting.node import NodeRewriter
from opweave.scalar import (
    Add,
    Cast,
    Exp,
    Log,
    Log1mexp,
    Log1p,
    Mul,
    Neg,
    Reciprocal,
    Sigmoid,
    Softplus,
    Sub,
    TrueDiv,
)
from opweave.tensor import math as tm
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.rewriting import math as rw

FAST_RUN = Mode(linker="vm", optimizer="fast_run")
#: FAST_RUN without fusion and in-place Ops: the rewrites' results stay visible.
ALGEBRA = FAST_RUN.excluding("fusion", "inplace")
STABILITY_REWRITES = (
    "local_exp_over_1_plus_exp",
    "local_reciprocal_1_plus_exp",
    "local_sigm_times_exp",
    "local_sigm_distributor",
    "local_1msigmoid",
    "logsigm_to_softplus",
    "log1msigm_to_softplus",
    "log1p_neg_sigmoid",
    "local_log1p_plusminus_exp",
    "logmexpm1_to_log1mexp",
)
#: FAST_RUN without the rewrites under test: what the graphs compute without them.
UNSTABILIZED = FAST_RUN.excluding(*STABILITY_REWRITES)

DTYPES = ["float64", "float32"]
#: Extreme inputs (|x| = 40, 800, 1e5) and a few ordinary ones.
POINTS = np.array([-1e5, -800.0, -40.0, -1.5, 0.0, 1.5, 40.0, 800.0, 1e5])
RTOL = {"float64": 1e-12, "float32": 2e-6}


# ====================================================================== NumPy references


def np_sigmoid(v: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-v))`` without overflow."""
    return np.exp(-np.logaddexp(0.0, -v))


def np_softplus(v: np.ndarray) -> np.ndarray:
    """``log(1 + exp(v))`` without overflow."""
    return np.logaddexp(0.0, v)


def np_sigmoid_slope(v: np.ndarray) -> np.ndarray:
    """``sigmoid(v) * sigmoid(-v)``, the derivative of the sigmoid, without overflow."""
    return np.exp(-np.logaddexp(0.0, -v) - np.logaddexp(0.0, v))


# ====================================================================== helpers


def rewrite_with(
    rewriter: NodeRewriter, build: Callable[[Any], Any], *others: Any
) -> tuple[Any, FunctionGraph]:
    """The graph of ``build(x)`` (with inputs ``x`` and ``others``) after only ``rewriter``
    ran on it."""
    x = ot.vector("x")
    fg = FunctionGraph([x, *others], [build(x)], clone=False)
    in2out(rewriter).rewrite(fg)
    return x, fg


def scalar_ops(fg: Any) -> list[type]:
    """The scalar Op classes of the Elemwise nodes of a graph (of a compiled function)."""
    nodes = fg.toposort() if isinstance(fg, FunctionGraph) else fg.maker.fgraph.toposort()
    return sorted(
        (type(n.op.scalar_op) for n in nodes if isinstance(n.op, Elemwise)),
        key=lambda c: c.__name__,
    )


def linker_mode(linker: str) -> Mode:
    if linker == "cvm":
        pytest.importorskip("opweave_c")
    return Mode(linker=linker, optimizer="fast_run")


# ====================================================================== registration


def test_registered_in_stabilize_and_specialize() -> None:
    db = build_rewrite_database()
    for name in STABILITY_REWRITES:
        assert name in db["stabilize"], name
        assert {"fast_run", "stabilize", name} <= db["stabilize"].tags(name)
        assert name not in db["canonicalize"], name
    for name in ("local_1msigmoid", "log1p_neg_sigmoid"):
        assert {"fast_run", "specialize"} <= db["specialize"].tags(name)
    assert "stabilize_double_neg" in db["stabilize"]


def test_pytensor_module_names_are_reexported() -> None:
    from opweave.tensor.rewriting import canonicalize

    assert rw.local_log1p is canonicalize.local_log1p
    assert rw.local_expm1 is canonicalize.local_expm1
    assert rw.local_pow_specialize is canonicalize.local_pow_specialize


# ====================================================================== each rewrite's graph


def test_exp_over_1_plus_exp_is_sigmoid() -> None:
    x, fg = rewrite_with(rw.local_exp_over_1_plus_exp, lambda x: tm.exp(x) / (1 + tm.exp(x)))
    assert scalar_ops(fg) == [Sigmoid]
    assert fg.outputs[0].owner.inputs[0] is x


def test_one_over_1_plus_exp_of_minus_x_is_sigmoid_of_x() -> None:
    """The tutorial's ``1 / (1 + exp(-x))``: the two negations cancel."""
    x, fg = rewrite_with(rw.local_exp_over_1_plus_exp, lambda x: 1 / (1 + tm.exp(-x)))
    assert scalar_ops(fg) == [Sigmoid]
    assert fg.outputs[0].owner.inputs[0] is x


def test_constant_over_1_plus_exp_is_constant_times_sigmoid_of_minus_x() -> None:
    _x, fg = rewrite_with(rw.local_exp_over_1_plus_exp, lambda x: 3 / (1 + tm.exp(x)))
    assert scalar_ops(fg) == [Mul, Neg, Sigmoid]
    assert TrueDiv not in scalar_ops(fg)


def test_exp_over_1_plus_exp_of_another_variable() -> None:
    """``exp(y) / (1 + exp(x))`` is ``exp(y) * sigmoid(-x)``."""
    y = ot.vector("y")
    _x, fg = rewrite_with(rw.local_exp_over_1_plus_exp, lambda x: tm.exp(y) / (1 + tm.exp(x)), y)
    assert scalar_ops(fg) == [Exp, Mul, Neg, Sigmoid]


def test_gradient_of_the_logistic_function_is_a_product_of_sigmoids() -> None:
    """``d/dx 1 / (1 + exp(-x))`` is built as ``-g / (a * a) * exp(-x)`` with ``a = 1 +
    exp(-x)``: the division becomes ``-g * sigmoid(x) * sigmoid(x)`` and the product with
    ``exp(-x)`` ``-g * sigmoid(x) * sigmoid(-x)`` (``g`` is ``fill(p, 1)``, so the graph
    also computes ``p``, as ``sigmoid(x)``)."""
    x = ot.vector("x")
    g = grad(tm.sum(1 / (1 + tm.exp(-x))), x)
    fg = FunctionGraph([x], [g], clone=False)
    in2out(rw.local_exp_over_1_plus_exp, rw.local_sigm_times_exp).rewrite(fg)
    ops = scalar_ops(fg)
    assert Exp not in ops and Add not in ops and TrueDiv not in ops
    assert ops.count(Sigmoid) == 3


def test_reciprocal_of_1_plus_exp_is_sigmoid_of_minus_x() -> None:
    _x, fg = rewrite_with(rw.local_reciprocal_1_plus_exp, lambda x: tm.reciprocal(1 + tm.exp(x)))
    assert scalar_ops(fg) == [Neg, Sigmoid]
    assert scalar_ops(rewrite_with(rw.local_reciprocal_1_plus_exp, tm.reciprocal)[1]) == [
        Reciprocal
    ]


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        pytest.param(lambda x: tm.exp(x) * tm.sigmoid(-x), [Sigmoid], id="exp(x)*sigmoid(-x)"),
        pytest.param(lambda x: tm.sigmoid(-x) * tm.exp(x), [Sigmoid], id="sigmoid(-x)*exp(x)"),
        pytest.param(lambda x: tm.exp(-x) * tm.sigmoid(x), [Neg, Sigmoid], id="exp(-x)*sigm(x)"),
        pytest.param(
            lambda x: 2 * tm.exp(x) * (-tm.sigmoid(-x)), [Mul, Neg, Sigmoid], id="2*exp*-sigm"
        ),
    ],
)
def test_sigm_times_exp(build: Any, expected: list[type]) -> None:
    _x, fg = rewrite_with(rw.local_sigm_times_exp, build)
    assert scalar_ops(fg) == expected


def test_sigmoid_over_itself_cancels_in_a_product() -> None:
    y = ot.vector("y")
    _x, fg = rewrite_with(rw.local_sigm_times_exp, lambda x: y * (tm.sigmoid(x) / tm.sigmoid(x)), y)
    assert fg.outputs[0] is y


def test_sigm_distributor_cancels_the_divisors_of_a_sum() -> None:
    a, b = ot.vector("a"), ot.vector("b")

    def build(x: Any) -> Any:
        total = a / tm.sigmoid(x) + b / tm.sigmoid(-x)
        return total * tm.sigmoid(x) * tm.sigmoid(-x)

    _x, fg = rewrite_with(rw.local_sigm_distributor, build, a, b)
    ops = scalar_ops(fg)
    assert TrueDiv not in ops
    assert ops.count(Sigmoid) == 2


def test_sigm_distributor_leaves_sums_without_sigmoid_divisors() -> None:
    a, b = ot.vector("a"), ot.vector("b")
    build = lambda x: (a / x + b) * tm.sigmoid(x)  # noqa: E731
    _x, fg = rewrite_with(rw.local_sigm_distributor, build, a, b)
    assert scalar_ops(fg) == [Add, Mul, Sigmoid, TrueDiv]


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        pytest.param(lambda x: 1 - tm.sigmoid(x), [Neg, Sigmoid], id="1-sigmoid(x)"),
        pytest.param(lambda x: 1 - tm.sigmoid(-x), [Sigmoid], id="1-sigmoid(-x)"),
        pytest.param(lambda x: 1 + -tm.sigmoid(x), [Neg, Sigmoid], id="1+-sigmoid(x)"),
        pytest.param(lambda x: 2 - tm.sigmoid(x), [Sigmoid, Sub], id="2-sigmoid"),
    ],
)
def test_1msigmoid(build: Any, expected: list[type]) -> None:
    _x, fg = rewrite_with(rw.local_1msigmoid, build)
    assert scalar_ops(fg) == sorted(expected, key=lambda c: c.__name__)


@pytest.mark.parametrize(
    ("rewriter", "build", "expected"),
    [
        pytest.param(
            rw.logsigm_to_softplus,
            lambda x: tm.log(tm.sigmoid(x)),
            [Neg, Neg, Softplus],
            id="log(sigmoid(x))",
        ),
        pytest.param(
            rw.logsigm_to_softplus,
            lambda x: tm.log(tm.sigmoid(-x)),
            [Neg, Softplus],
            id="log(sigmoid(-x))",
        ),
        pytest.param(
            rw.log1msigm_to_softplus,
            lambda x: tm.log(1 - tm.sigmoid(x)),
            [Neg, Softplus],
            id="log(1-sigmoid(x))",
        ),
        pytest.param(
            rw.log1p_neg_sigmoid,
            lambda x: tm.log1p(-tm.sigmoid(x)),
            [Neg, Softplus],
            id="log1p(-sigmoid(x))",
        ),
        pytest.param(
            rw.local_log1p_plusminus_exp,
            lambda x: tm.log1p(tm.exp(x)),
            [Softplus],
            id="log1p(exp(x))",
        ),
    ],
)
def test_logs_become_softplus(rewriter: NodeRewriter, build: Any, expected: list[type]) -> None:
    x, fg = rewrite_with(rewriter, build)
    assert scalar_ops(fg) == expected
    softplus = next(n for n in fg.toposort() if isinstance(n.op.scalar_op, Softplus))
    assert x in softplus.inputs or softplus.inputs[0].owner.inputs[0] is x


@pytest.mark.parametrize(
    ("rewriter", "build"),
    [
        pytest.param(
            rw.local_log1p_plusminus_exp, lambda x: tm.log1p(-tm.exp(x)), id="log1p(-exp(x))"
        ),
        pytest.param(
            rw.local_log1p_plusminus_exp, lambda x: tm.log(1 - tm.exp(x)), id="log(1-exp(x))"
        ),
        pytest.param(rw.logmexpm1_to_log1mexp, lambda x: tm.log(-tm.expm1(x)), id="log(-expm1(x))"),
    ],
)
def test_logs_of_one_minus_exp_become_log1mexp(rewriter: NodeRewriter, build: Any) -> None:
    x, fg = rewrite_with(rewriter, build)
    assert scalar_ops(fg) == [Log1mexp]
    assert fg.outputs[0].owner.inputs[0] is x


@pytest.mark.parametrize(
    ("rewriter", "build"),
    [
        pytest.param(rw.local_exp_over_1_plus_exp, lambda x: tm.exp(x) / (2 + tm.exp(x))),
        pytest.param(rw.local_exp_over_1_plus_exp, lambda x: x / (1 + x)),
        pytest.param(rw.local_sigm_times_exp, lambda x: tm.exp(x) * tm.sigmoid(x)),
        pytest.param(rw.local_sigm_times_exp, lambda x: tm.sigmoid(x) * tm.sigmoid(x)),
        pytest.param(rw.logsigm_to_softplus, lambda x: tm.log(tm.sigmoid(x) + 1)),
        pytest.param(rw.log1msigm_to_softplus, lambda x: tm.log(2 - tm.sigmoid(x))),
        pytest.param(rw.log1p_neg_sigmoid, lambda x: tm.log1p(tm.sigmoid(x))),
        pytest.param(rw.local_log1p_plusminus_exp, lambda x: tm.log(2 - tm.exp(x))),
        pytest.param(rw.local_log1p_plusminus_exp, lambda x: tm.log1p(tm.expm1(x))),
        pytest.param(rw.logmexpm1_to_log1mexp, lambda x: tm.log(tm.expm1(x))),
    ],
)
def test_other_forms_are_left_alone(rewriter: NodeRewriter, build: Any) -> None:
    x = ot.vector("x")
    out = build(x)
    fg = FunctionGraph([x], [out], clone=False)
    in2out(rewriter).rewrite(fg)
    assert fg.outputs[0] is out


def test_unrelated_arithmetic_is_left_alone_by_all_of_them() -> None:
    x, y, z = ot.vector("x"), ot.vector("y"), ot.vector("z")
    outs = [x * y / z, tm.exp(x) * y, (x + y) * z / (1 + tm.exp(y) * 2), -(x / -y), 1 - x]
    fg = FunctionGraph([x, y, z], outs, clone=False)
    in2out(*(getattr(rw, name) for name in STABILITY_REWRITES)).rewrite(fg)
    assert fg.outputs == outs


def test_a_cancellation_that_would_drop_a_broadcast_is_left_alone() -> None:
    """``row * sigmoid(m) / sigmoid(m)`` has ``m``'s shape, not ``row``'s."""
    r, m = ot.row("r"), ot.matrix("m")
    out = r * tm.sigmoid(m) / tm.sigmoid(m)
    f = function([r, m], out, mode=FAST_RUN)
    rv, mv = np.array([[1.0, 2.0, 3.0]]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    got = f(rv, mv)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, np.broadcast_to(rv, (2, 3)), rtol=1e-15)


def test_an_unsigned_argument_is_negated_as_a_float() -> None:
    """``1 / (1 + exp(x))`` of ``uint8`` is ``sigmoid(-float32(x))``: ``-x`` of ``uint8``
    wraps around."""
    x = ot.vector("x", dtype="uint8")
    f = function([x], 1 / (1 + tm.exp(x)), mode=ALGEBRA)
    assert scalar_ops(f) == [Cast, Neg, Sigmoid]
    v = np.array([0, 1, 5, 60, 200], dtype="uint8")
    want = np_sigmoid(-v.astype("float64")).astype("float32")
    np.testing.assert_allclose(f(v), want, rtol=2e-6, atol=0)


def test_a_constant_that_sets_the_dtype_is_kept() -> None:
    x = ot.vector("x", dtype="float32")
    out = np.float64(1.0) / (1 + tm.exp(-x))
    assert out.dtype == "float64"
    f = function([x], out, mode=ALGEBRA)
    assert f.maker.fgraph.outputs[0].dtype == "float64"
    assert Sigmoid in scalar_ops(f) and Exp not in scalar_ops(f)
    v = np.array([-800.0, 0.0, 40.0], dtype="float32")
    np.testing.assert_allclose(f(v), np_sigmoid(v.astype("float64")), rtol=1e-12)


# ====================================================================== values at extremes


def _cross_entropy_grad(x: Any) -> Any:
    """The derivative of the cross-entropy of ``sigmoid(x)`` for targets ``y = 1`` on the
    even positions and 0 on the odd ones: ``sigmoid(x) - y``."""
    y = ot.constant(np.arange(POINTS.size) % 2 == 0).astype(x.dtype)
    p = tm.sigmoid(x)
    xent = -(y * tm.log(p) + (1 - y) * tm.log(1 - p))
    return grad(tm.sum(xent), x)


def _np_cross_entropy_grad(v: np.ndarray) -> np.ndarray:
    """``sigmoid(v) - y``: ``-sigmoid(-v)`` where ``y = 1``, ``sigmoid(v)`` where 0."""
    return np.where(np.arange(POINTS.size) % 2 == 0, -np_sigmoid(-v), np_sigmoid(v))


#: (id, expression, NumPy value, NumPy derivative, absolute tolerance of the derivative).
#: The derivatives of ``exp(x) / (1 + exp(x))`` and ``exp(x) * sigmoid(-x)`` come out as
#: ``sigmoid(x) - sigmoid(x) ** 2`` (PyTensor's too): exact but for a rounding of at most
#: one ulp of 1 where ``sigmoid(x)`` rounds to 1.
CASES = [
    ("1/(1+exp(-x))", lambda x: 1 / (1 + tm.exp(-x)), np_sigmoid, np_sigmoid_slope, 0),
    (
        "exp(x)/(1+exp(x))",
        lambda x: tm.exp(x) / (1 + tm.exp(x)),
        np_sigmoid,
        np_sigmoid_slope,
        1.0,
    ),
    (
        "reciprocal(1+exp(x))",
        lambda x: tm.reciprocal(1 + tm.exp(x)),
        lambda v: np_sigmoid(-v),
        lambda v: -np_sigmoid_slope(v),
        0,
    ),
    (
        "exp(x)*sigmoid(-x)",
        lambda x: tm.exp(x) * tm.sigmoid(-x),
        np_sigmoid,
        np_sigmoid_slope,
        1.0,
    ),
    (
        "1-sigmoid(x)",
        lambda x: 1 - tm.sigmoid(x),
        lambda v: np_sigmoid(-v),
        lambda v: -np_sigmoid_slope(v),
        0,
    ),
    (
        "log(sigmoid(x))",
        lambda x: tm.log(tm.sigmoid(x)),
        lambda v: -np_softplus(-v),
        lambda v: np_sigmoid(-v),
        0,
    ),
    (
        "log(1-sigmoid(x))",
        lambda x: tm.log(1 - tm.sigmoid(x)),
        lambda v: -np_softplus(v),
        lambda v: -np_sigmoid(v),
        0,
    ),
    (
        "log1p(-sigmoid(x))",
        lambda x: tm.log1p(-tm.sigmoid(x)),
        lambda v: -np_softplus(v),
        lambda v: -np_sigmoid(v),
        0,
    ),
    ("log1p(exp(x))", lambda x: tm.log1p(tm.exp(x)), np_softplus, np_sigmoid, 0),
    ("log(1+exp(x))", lambda x: tm.log(1 + tm.exp(x)), np_softplus, np_sigmoid, 0),
    (
        "log(1/(1+exp(-x)))",
        lambda x: tm.log(1 / (1 + tm.exp(-x))),
        lambda v: -np_softplus(-v),
        lambda v: np_sigmoid(-v),
        0,
    ),
    (
        "log(1-1/(1+exp(-x)))",
        lambda x: tm.log(1 - 1 / (1 + tm.exp(-x))),
        lambda v: -np_softplus(v),
        lambda v: -np_sigmoid(v),
        0,
    ),
]


def _compile(build: Any, dtype: str, mode: Mode) -> Any:
    x = ot.vector("x", dtype=dtype)
    out = build(x)
    return function([x], [out, grad(tm.sum(out), x)], mode=mode)


def _matches(got: np.ndarray, want: np.ndarray, dtype: str, atol_ulps: float) -> bool:
    atol = atol_ulps * float(np.finfo(dtype).eps)
    return bool(np.allclose(got, want, rtol=RTOL[dtype], atol=atol))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("build", "ref", "dref", "grad_ulps"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_values_and_gradients_at_extremes(
    build: Any, ref: Any, dref: Any, grad_ulps: float, dtype: str
) -> None:
    points = POINTS.astype(dtype)
    exact = points.astype("float64")
    value, slope = _compile(build, dtype, FAST_RUN)(points)
    assert value.dtype == dtype and slope.dtype == dtype
    assert np.all(np.isfinite(value)) and np.all(np.isfinite(slope))
    np.testing.assert_allclose(value, ref(exact), rtol=RTOL[dtype], atol=0)
    np.testing.assert_allclose(
        slope, dref(exact), rtol=RTOL[dtype], atol=grad_ulps * float(np.finfo(dtype).eps)
    )
    # without the stability rewrites, the same graph loses the value or the gradient
    value, slope = _compile(build, dtype, UNSTABILIZED)(points)
    assert not (_matches(value, ref(exact), dtype, 0) and _matches(slope, dref(exact), dtype, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradient_of_a_cross_entropy_of_sigmoid(dtype: str) -> None:
    x = ot.vector("x", dtype=dtype)
    points = POINTS.astype(dtype)
    f = function([x], _cross_entropy_grad(x), mode=ALGEBRA)
    assert TrueDiv not in scalar_ops(f)
    np.testing.assert_allclose(f(points), _np_cross_entropy_grad(points), rtol=RTOL[dtype])
    unstable = function([x], _cross_entropy_grad(x), mode=UNSTABILIZED)(points)
    assert not np.all(np.isfinite(unstable))


@pytest.mark.parametrize(
    ("build", "dref"), [(c[1], c[3]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_gradients_match_finite_differences(build: Any, dref: Any) -> None:
    x = ot.dvector("x")
    out = build(x)
    value = function([x], out, mode=FAST_RUN)
    slope = function([x], grad(tm.sum(out), x), mode=FAST_RUN)
    points, h = np.linspace(-4.0, 4.0, 9), 1e-6
    numeric = (value(points + h) - value(points - h)) / (2 * h)
    np.testing.assert_allclose(slope(points), numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(slope(points), dref(points), rtol=1e-12, atol=1e-15)


def np_log1mexp(v: np.ndarray) -> np.ndarray:
    """``log(1 - exp(v))`` for ``v < 0``, exact near 0 and for very negative ``v``."""
    return np.where(v < -np.log(2.0), np.log1p(-np.exp(v)), np.log(-np.expm1(v)))


#: ``log1mexp`` is defined for ``x <= 0``; ``-1e-10`` is where ``1 - exp(x)`` loses
#: every digit (it is 0 in float32).
NEGATIVE_POINTS = np.array([-1e5, -800.0, -40.0, -1.5, -1e-10])
LOG1MEXP_CASES = [
    ("log1p(-exp(x))", lambda x: tm.log1p(-tm.exp(x))),
    ("log(1-exp(x))", lambda x: tm.log(1 - tm.exp(x))),
    ("log(-expm1(x))", lambda x: tm.log(-tm.expm1(x))),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "build", [c[1] for c in LOG1MEXP_CASES], ids=[c[0] for c in LOG1MEXP_CASES]
)
def test_log1mexp_values_and_gradients(build: Any, dtype: str) -> None:
    """The value everywhere; the gradient, ``-exp(x) / (1 - exp(x))`` as the graph writes
    it, away from 0 (where ``1 - exp(x)`` itself has lost its digits)."""
    points = NEGATIVE_POINTS.astype(dtype)
    exact = points.astype("float64")
    value, slope = _compile(build, dtype, FAST_RUN)(points)
    np.testing.assert_allclose(value, np_log1mexp(exact), rtol=RTOL[dtype], atol=0)
    assert np.all(np.isfinite(slope[:-1]))
    away = exact[:-1]
    np.testing.assert_allclose(slope[:-1], np.exp(away) / np.expm1(away), rtol=RTOL[dtype], atol=0)
    value = _compile(build, dtype, UNSTABILIZED)(points)[0]
    assert not _matches(value, np_log1mexp(exact), dtype, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_cases_on_the_c_linker(dtype: str) -> None:
    """The same graphs in one function on ``cvm`` (``sigmoid`` and ``softplus`` in C)."""
    x = ot.vector("x", dtype=dtype)
    outs = []
    for _, build, *_ in CASES:
        out = build(x)
        outs += [out, grad(tm.sum(out), x)]
    outs.append(_cross_entropy_grad(x))
    f = function([x], outs, mode=linker_mode("cvm"))
    points = POINTS.astype(dtype)
    exact = points.astype("float64")
    got = f(points)
    for k, (_, _, ref, dref, grad_ulps) in enumerate(CASES):
        np.testing.assert_allclose(got[2 * k], ref(exact), rtol=RTOL[dtype], atol=0)
        np.testing.assert_allclose(
            got[2 * k + 1], dref(exact), rtol=RTOL[dtype], atol=grad_ulps * np.finfo(dtype).eps
        )
    np.testing.assert_allclose(got[-1], _np_cross_entropy_grad(exact), rtol=RTOL[dtype])
    f = function([x], [build(x) for _, build in LOG1MEXP_CASES], mode=linker_mode("cvm"))
    negative = NEGATIVE_POINTS.astype(dtype)
    for value in f(negative):
        np.testing.assert_allclose(value, np_log1mexp(negative.astype("float64")), rtol=RTOL[dtype])


# ====================================================================== the tutorial


def _numpy_logistic_regression(
    data: np.ndarray, target: np.ndarray, w: np.ndarray, b: float, steps: int
) -> list[tuple[np.ndarray, np.ndarray, float, np.ndarray, float]]:
    """The tutorial's training in float64 NumPy, written stably: per step the predictions,
    the cross-entropies and the cost (before the update), and ``w``, ``b`` after it."""
    out = []
    n = data.shape[0]
    for _ in range(steps):
        z = data @ w + b
        xent = target * np_softplus(-z) + (1 - target) * np_softplus(z)
        cost = xent.mean() + 0.01 * np.sum(w**2)
        gz = (np_sigmoid(z) - target) / n
        w = w - 0.1 * (data.T @ gz + 0.02 * w)
        b = b - 0.1 * gz.sum()
        out.append((z > 0, xent, cost, w, b))
    return out


def _tutorial_data(dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tutorial's data set and initial weights (``rng = default_rng(2882)``)."""
    rng = np.random.default_rng(2882)
    data = rng.standard_normal((400, 784)).astype(dtype)
    target = rng.integers(size=400, low=0, high=2).astype(dtype)
    return data, target, rng.standard_normal(784).astype(dtype)


def _tutorial_train(w_init: np.ndarray, mode: Mode) -> tuple[Any, Any, Any]:
    """The tutorial's graph and training function, as it is written there."""
    dtype = str(w_init.dtype)
    with opweave.config.change_flags(floatX=dtype):
        x = ot.matrix("x", dtype=dtype)
        y = ot.vector("y", dtype=dtype)
        w = opweave.shared(w_init.copy(), name="w")
        b = opweave.shared(np.asarray(0.0, dtype=dtype), name="b")
        p_1 = 1 / (1 + ot.exp(-ot.dot(x, w) - b))  # Probability that target = 1
        prediction = p_1 > 0.5  # The prediction thresholded
        xent = -y * ot.log(p_1) - (1 - y) * ot.log(1 - p_1)  # Cross-entropy loss function
        cost = xent.mean() + 0.01 * (w**2).sum()  # The cost to minimize
        gw, gb = ot.grad(cost, [w, b])
        train = opweave.function(
            inputs=[x, y],
            outputs=[prediction, xent],
            updates=((w, w - 0.1 * gw), (b, b - 0.1 * gb)),
            mode=mode,
        )
    return train, w, b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("linker", ["vm", "cvm"])
def test_logistic_regression_tutorial_trains(linker: str, dtype: str) -> None:
    """PyTensor's "A Real Example: Logistic Regression" (10 steps instead of 10000)."""
    data, target, w_init = _tutorial_data(dtype)
    train, w, b = _tutorial_train(w_init, linker_mode(linker))
    steps = 10
    reference = _numpy_logistic_regression(
        data.astype("float64"), target.astype("float64"), w_init.astype("float64"), 0.0, steps
    )
    rtol = {"float64": 1e-9, "float32": 1e-4}[dtype]
    costs = []
    for step, (pred_ref, xent_ref, cost_ref, w_ref, b_ref) in enumerate(reference):
        w_before = w.get_value()
        pred, err = train(data, target)
        costs.append(float(err.mean() + 0.01 * np.sum(w_before.astype("float64") ** 2)))
        assert err.dtype == dtype and w.get_value().dtype == dtype, step
        assert np.all(np.isfinite(err)) and np.all(np.isfinite(w.get_value())), step
        np.testing.assert_array_equal(pred, pred_ref)
        np.testing.assert_allclose(err, xent_ref, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(costs[-1], cost_ref, rtol=rtol)
        np.testing.assert_allclose(w.get_value(), w_ref, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(b.get_value(), b_ref, rtol=rtol, atol=rtol)
    assert all(later < earlier for earlier, later in itertools.pairwise(costs))


def test_logistic_regression_tutorial_graph() -> None:
    """The training step computes ``sigmoid`` and ``softplus``: no ``exp`` nor ``log``."""
    train, _, _ = _tutorial_train(_tutorial_data("float64")[2], ALGEBRA)
    ops = scalar_ops(train)
    assert Sigmoid in ops and Softplus in ops
    assert not {Exp, Log, Log1p} & set(ops)


def test_logistic_regression_without_the_rewrites_is_nan() -> None:
    """What the tutorial's training step gives without the stability rewrites."""
    data, target, w_init = _tutorial_data("float64")
    train, w, _ = _tutorial_train(w_init, UNSTABILIZED)
    _, err = train(data, target)
    assert np.isnan(err).any() and np.isnan(w.get_value()).any()
