"""PyTensor's names in ``opweave.scalar.basic``, ``opweave.scalar.math`` and
``opweave.gradient``: the same objects as their homes, and the gradient-shaping Ops
(``zero_grad``, ``disconnected_grad``, ``undefined_grad``, ``grad_clip``, ``grad_scale``)
and gradient compositions (``hessian_vector_product``, ``subgraph_grad``,
``pushforward_through_pullback``) checked against analytic values and NumPy finite
differences on every linker.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import scipy.special as sps

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import DisconnectedInputError, NullTypeGradError, grad


def linkers() -> list[str]:
    """``py`` and ``vm``, and ``cvm`` and ``c`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py", "vm"]
    return ["py", "vm", "cvm", "c"]


LINKERS = linkers()


# ====================================================================== scalar.basic


@pytest.mark.parametrize(
    ("name", "module", "attribute"),
    [
        ("Exp", "opweave.scalar.math", "Exp"),
        ("exp", "opweave.scalar.math", "exp"),
        ("ArcTan2", "opweave.scalar.math", "ArcTan2"),
        ("log1p", "opweave.scalar.math", "log1p"),
        ("tanh", "opweave.scalar.math", "tanh"),
        ("abs", "opweave.scalar.basic", "abs_"),
        ("bool", "opweave.scalar.type", "bool_"),
        ("complex", "opweave.scalar.complex", "complex"),
        ("Real", "opweave.scalar.complex", "Real"),
        ("conj", "opweave.scalar.complex", "conj"),
        ("Composite", "opweave.scalar.composite", "Composite"),
        ("all_types", "opweave.scalar.type", "all_types"),
        ("discrete_dtypes", "opweave.scalar.type", "discrete_dtypes"),
        ("upcast", "opweave.scalar.type", "upcast"),
        ("upgrade_to_float", "opweave.scalar.rules", "upgrade_to_float"),
        ("same_out_nocomplex", "opweave.scalar.rules", "same_out_nocomplex"),
        ("ScalarMaximum", "opweave.scalar.basic", "Maximum"),
        ("ScalarMinimum", "opweave.scalar.basic", "Minimum"),
    ],
)
def test_scalar_basic_names_are_the_objects_of_their_homes(name, module, attribute) -> None:
    basic = importlib.import_module("opweave.scalar.basic")
    assert getattr(basic, name) is getattr(importlib.import_module(module), attribute)


def test_scalar_basic_from_import_and_unknown_names() -> None:
    from opweave.scalar.basic import Cos, Tanh, cos  # resolved on first use

    assert cos is ps.cos and isinstance(cos, Cos) and Tanh is ps.Tanh
    basic = importlib.import_module("opweave.scalar.basic")
    with pytest.raises(AttributeError, match="has no attribute 'no_such_op'"):
        _ = basic.no_such_op


def test_scalar_basic_base_classes() -> None:
    from opweave.scalar.basic import (
        ComplexError,
        FixedLogicalComparison,
        IntegerDivisionError,
        ScalarInnerGraphOp,
        UnaryBitOp,
    )

    assert isinstance(ps.isnan, FixedLogicalComparison)
    assert isinstance(ps.isinf, FixedLogicalComparison)
    assert isinstance(ps.invert, UnaryBitOp)
    assert issubclass(ps.Composite, ScalarInnerGraphOp)
    x = ps.float64("x")
    comp = ps.Composite([x], [ps.exp(x) + x])
    assert len(comp.inner_inputs) == 1 and len(comp.inner_outputs) == 1
    assert issubclass(ComplexError, NotImplementedError)
    assert issubclass(IntegerDivisionError, Exception)


def test_mod_check_refuses_complex_and_computes_mod() -> None:
    from opweave.scalar.basic import ComplexError, mod_check

    x, y = ps.float64("x"), ps.float64("y")
    f = opweave.function([x, y], mod_check(x, y))
    assert f(-7.5, 2.0) == np.mod(-7.5, 2.0)
    with pytest.raises(ComplexError, match="x is complex"):
        mod_check(ps.complex128("z"), y)


def test_round_half_away_from_zero_helpers_match_c_round() -> None:
    from opweave.scalar.basic import (
        round_half_away_from_zero_,
        round_half_away_from_zero_vec,
    )

    a = np.array([-2.5, -1.5, -0.5, 0.0, 0.4, 0.5, 1.5, 2.5, 3.7])
    expected = np.sign(a) * np.floor(np.abs(a) + 0.5)  # C's round()
    np.testing.assert_array_equal(round_half_away_from_zero_vec(a), expected)
    out32 = round_half_away_from_zero_vec(a.astype("float32"))
    assert out32.dtype == np.float32
    np.testing.assert_array_equal(out32, expected.astype("float32"))
    assert round_half_away_from_zero_(-0.5) == -1.0 and round_half_away_from_zero_(0.5) == 1.0


# ====================================================================== scalar.math


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("BetaInc", "special"),
        ("betainc", "special"),
        ("Erfcinv", "special"),
        ("GammaIncInv", "special"),
        ("gammainccinv", "special"),
        ("I0", "special"),
        ("ive", "special"),
        ("J1", "special"),
        ("NdtriExp", "special"),
        ("Jv", "bessel"),
        ("kve", "bessel"),
        ("Hyp2F1", "hyp2f1"),
        ("hyp2f1", "hyp2f1"),
        ("BetaIncInv", "probability"),
        ("Owens_t", "probability"),
        ("owens_t", "probability"),
    ],
)
def test_scalar_math_names_are_the_objects_of_their_homes(name, module) -> None:
    scalar_math = importlib.import_module("opweave.scalar.math")
    home = importlib.import_module(f"opweave.scalar.{module}")
    assert getattr(scalar_math, name) is getattr(home, name)


def test_scalar_betaln_matches_scipy() -> None:
    from opweave.scalar.math import betaln

    a, b = ps.float64("a"), ps.float64("b")
    f = opweave.function([a, b], betaln(a, b))
    for av, bv in [(2.0, 3.0), (0.5, 7.25), (30.0, 0.1)]:
        np.testing.assert_allclose(f(av, bv), sps.betaln(av, bv), rtol=1e-12)


def test_tensor_special_functions_are_the_elementwise_ops_of_the_scalar_ops() -> None:
    import opweave.scalar.math as sm

    for name in ("j0", "j1", "i0", "i1", "ive", "jv", "kve", "hyp2f1", "owens_t", "betainc"):
        assert getattr(ot, name).scalar_op is getattr(sm, name), name


# ====================================================================== gradient Ops


X0 = np.array([0.2, 3.0, -4.0, 0.9])
P0 = np.array([1.0, -2.0, 0.5, 3.0])


def _finite_difference_hvp(x0: np.ndarray, p: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """``H p`` of ``sum(x**3) + sum(x[:-1] * x[1:])`` from central differences of its
    gradient (written in NumPy)."""

    def gradient(x):
        g = 3 * x**2
        g[:-1] += x[1:]
        g[1:] += x[:-1]
        return g

    return (gradient(x0 + eps * p) - gradient(x0 - eps * p)) / (2 * eps)


@pytest.mark.parametrize("linker", LINKERS)
def test_gradient_ops_and_hessian_vector_product_on_every_linker(linker) -> None:
    from opweave.gradient import (
        disconnected_grad,
        grad_clip,
        grad_scale,
        hessian_vector_product,
        undefined_grad,
        zero_grad,
    )

    x, p = ot.dvector("x"), ot.dvector("p")
    forward = {  # the Ops are identities in the forward pass
        "zero": (zero_grad(x) * 2, X0 * 2),
        "disconnected": (disconnected_grad(x) + 1, X0 + 1),
        "undefined": (undefined_grad(x) - 1, X0 - 1),
        "clip": (grad_clip(x, -1, 1) ** 2, X0**2),
        "scale": (grad_scale(x, -3.0) / 2, X0 / 2),
    }
    backward = {
        # d/dx sum(zero_grad(x) * x) = x: the first factor is a constant
        "zero": (grad((zero_grad(x) * x).sum(), x), X0),
        "disconnected": (grad((disconnected_grad(x) * x).sum(), x), X0),
        # the gradient 2x flowing into x is clipped to [-1, 1]
        "clip": (grad((grad_clip(x, -1, 1) ** 2).sum(), x), np.clip(2 * X0, -1, 1)),
        "scale": (grad(grad_scale(ot.sin(x), -2.0).sum(), x), -2.0 * np.cos(X0)),
    }
    cost = (x**3).sum() + (x[:-1] * x[1:]).sum()
    hvp = (hessian_vector_product(cost, x, p), _finite_difference_hvp(X0, P0))
    cases = [*forward.values(), *backward.values(), hvp]
    f = opweave.function([x, p], [out for out, _ in cases], mode=Mode(linker=linker))
    for got, (_, expected) in zip(f(X0, P0), cases, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_zero_grad_keeps_and_disconnected_grad_cuts_the_connection() -> None:
    from opweave.gradient import disconnected_grad, zero_grad

    x = ot.dvector("x")
    g = grad(zero_grad(x).sum(), x)  # connected: a zero gradient
    np.testing.assert_array_equal(opweave.function([x], g)(X0), np.zeros(4))
    with pytest.raises(DisconnectedInputError, match="not part of the computational graph"):
        grad(disconnected_grad(x).sum(), x)
    g = grad(disconnected_grad(x).sum(), x, disconnected_inputs="ignore")
    np.testing.assert_array_equal(opweave.function([x], g)(X0), np.zeros(4))


def test_undefined_grad_raises_when_differentiated() -> None:
    from opweave.gradient import UndefinedGrad, undefined_grad

    x = ot.dvector("x")
    with pytest.raises(NullTypeGradError, match="UndefinedGrad"):
        grad(undefined_grad(x).sum(), x)
    assert isinstance(undefined_grad(x).owner.op, UndefinedGrad)


def test_gradient_op_objects_and_bad_input() -> None:
    from opweave.compile.ops import ViewOp
    from opweave.gradient import (
        DisconnectedGrad,
        GradClip,
        GradScale,
        ZeroGrad,
        disconnected_grad_,
        grad_clip,
        zero_grad,
        zero_grad_,
    )

    assert isinstance(zero_grad_, ZeroGrad) and isinstance(disconnected_grad_, DisconnectedGrad)
    for cls in (ZeroGrad, DisconnectedGrad, GradClip, GradScale):
        assert issubclass(cls, ViewOp) and cls.view_map == {0: [0]}
    assert GradClip(-1, 1) == GradClip(-1, 1) and GradClip(-1, 1) != GradClip(-2, 1)
    assert GradScale(2.0) != GradScale(3.0)
    with pytest.raises(ValueError, match="clip_upper_bound"):
        grad_clip(ot.dvector("x"), 1, -1)
    with pytest.raises(TypeError, match="ZeroGrad expects a symbolic Variable"):
        zero_grad(np.ones(3))
    with pytest.raises(AttributeError, match="no_such_helper"):
        _ = importlib.import_module("opweave.gradient").no_such_helper


def test_zero_grad_r_op_is_zero_and_grad_scale_r_op_passes_through() -> None:
    from opweave.gradient import Rop, grad_scale, zero_grad

    x, v = ot.dvector("x"), ot.dvector("v")
    f = opweave.function([x, v], [Rop(zero_grad(x) * 3, x, v), Rop(grad_scale(x, 5.0) * 3, x, v)])
    zero, through = f(X0, np.arange(4.0))
    np.testing.assert_array_equal(zero, np.zeros(4))
    np.testing.assert_array_equal(through, 3 * np.arange(4.0))


# ====================================================================== compositions


def test_hessian_vector_product_forms_and_errors() -> None:
    from opweave.gradient import hessian_vector_product

    x, p = ot.dvector("x"), ot.dvector("p")
    cost = (x**3).sum()
    assert isinstance(hessian_vector_product(cost, [x], [p]), list)
    with pytest.raises(ValueError, match="2 vectors p"):
        hessian_vector_product(cost, [x], [p, p])


def test_subgraph_grad_chains_to_the_full_gradient() -> None:
    from opweave.gradient import subgraph_grad

    x = ot.dvector("x")
    w1, w2 = ot.dmatrix("w1"), ot.dmatrix("w2")
    a1 = ot.tanh(ot.dot(x, w1))
    cost = ot.sqr(ot.tanh(ot.dot(a1, w2))).sum()
    (g_w2,), (g_a1,) = subgraph_grad(wrt=[w2], end=[a1], cost=cost)
    (g_w1,), (g_x,) = subgraph_grad(wrt=[w1], end=[x], start={a1: g_a1})
    full = grad(cost, [w1, w2, x])
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=3), rng.normal(size=(3, 4)), rng.normal(size=(4, 2))]
    f = opweave.function([x, w1, w2], [g_w1, g_w2, g_x, *full])
    got = f(*vals)
    for part, whole in zip(got[:3], got[3:], strict=True):
        np.testing.assert_allclose(part, whole, rtol=1e-12)
    with pytest.raises(ValueError, match="cost or start"):
        subgraph_grad(wrt=[w1], end=[x])
    with pytest.raises(TypeError, match="end must be a list"):
        subgraph_grad(wrt=[w1], end=x, cost=cost)
    _, _, start_grads, cost_grads = subgraph_grad(wrt=[w2], end=[a1], cost=cost, details=True)
    assert start_grads is None and len(cost_grads) == 2


def test_pushforward_through_pullback_is_the_jacobian_vector_product() -> None:
    from opweave.gradient import pushforward_through_pullback

    x, v = ot.dvector("x"), ot.dvector("v")
    (jvp,) = pushforward_through_pullback([ot.sin(x) * x], [x], [v])
    v0 = np.array([1.0, 0.5, -1.0, 2.0])
    got = opweave.function([x, v], jvp)(X0, v0)
    np.testing.assert_allclose(got, (np.cos(X0) * X0 + np.sin(X0)) * v0, rtol=1e-12)


def test_as_list_or_tuple_and_mode_not_slow() -> None:
    from opweave.compile import DebugMode, get_mode
    from opweave.gradient import as_list_or_tuple, mode_not_slow

    assert as_list_or_tuple(True, False, 1) == [1]
    assert as_list_or_tuple(False, True, [1, 2]) == (1, 2)
    assert as_list_or_tuple(False, False, [7]) == 7
    with pytest.raises(ValueError, match="cannot both be True"):
        as_list_or_tuple(True, True, 1)
    with pytest.raises(ValueError, match="one-element"):
        as_list_or_tuple(False, False, [1, 2])
    fast = mode_not_slow("FAST_COMPILE")
    assert fast.linker == get_mode("FAST_RUN").linker
    from_debug = mode_not_slow(DebugMode())
    assert not isinstance(from_debug, DebugMode)
    mode = Mode(linker="py")
    assert mode_not_slow(mode) is mode


# ====================================================================== tensor.special


def test_logaddexp_matches_numpy_and_has_a_stable_gradient() -> None:
    from opweave.tensor.special import logaddexp

    assert ot.logaddexp is logaddexp
    x, y, z = ot.dvector("x"), ot.dvector("y"), ot.dvector("z")
    xv = np.array([0.0, 1000.0, -np.inf, np.inf, -1000.0, 3.0])
    yv = np.array([0.0, 999.0, -np.inf, 1.0, -1001.0, -2.0])
    zv = np.array([1.0, -5.0, 0.0, 2.0, 7.0, 0.5])
    out = logaddexp(x, y)
    f = opweave.function([x, y, z], [out, logaddexp(x, y, z), grad(out[[0, 1, 4, 5]].sum(), x)])
    two, three, g = f(xv, yv, zv)
    np.testing.assert_allclose(two, np.logaddexp(xv, yv), rtol=1e-14)
    np.testing.assert_allclose(three, np.logaddexp(np.logaddexp(xv, yv), zv), rtol=1e-14)
    keep = [0, 1, 4, 5]  # d/dx logaddexp(x, y) = sigmoid(x - y), finite even at |x| = 1000
    np.testing.assert_allclose(g[keep], sps.expit(xv[keep] - yv[keep]), rtol=1e-12)
    with pytest.raises(TypeError, match="at least one input"):
        logaddexp()
