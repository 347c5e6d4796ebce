"""``opweave.gradient.verify_grad``, ``numeric_grad`` and ``GradientError``.

``numeric_grad``, ``GradientError`` and the argument checks need nothing but NumPy.
The end-to-end checks build tensor graphs: they skip, naming what is missing, until
``opweave.tensor`` math and a backend running it are installed.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from opweave.gradient import GradientError, numeric_grad, verify_grad
from opweave.graph import Apply, Op, Variable

# ====================================================================== numeric_grad


def test_numeric_grad_matches_the_analytic_gradient() -> None:
    a = np.array([[0.5, -1.0], [2.0, 0.25]])
    b = np.array([[1.5, 3.0], [-0.5, 2.0]])
    num = numeric_grad(lambda x, y: np.sum(x**2 * y), [a, b])
    np.testing.assert_allclose(num.gf[0], 2 * a * b, rtol=1e-6)
    np.testing.assert_allclose(num.gf[1], a**2, rtol=1e-6)


def test_numeric_grad_of_a_single_array_and_float32() -> None:
    a = np.array([0.1, 0.7, -0.3], dtype="float32")
    num = numeric_grad(lambda x: np.sum(np.sin(x)), a)
    assert isinstance(num.gf, np.ndarray)
    np.testing.assert_allclose(num.gf, np.cos(a), rtol=1e-3)


def test_numeric_grad_rejects_a_vanishing_step() -> None:
    a = np.array([1000.0], dtype="float16")
    with pytest.raises(ValueError, match="vanishes when rounded to the dtype float16"):
        numeric_grad(lambda x: float(np.sum(x)), a, eps=1e-6)


def test_max_err_needs_both_tolerances_exceeded() -> None:
    a = np.array([1.0, 2.0, 3.0])
    num = numeric_grad(lambda x: np.sum(x**2), [a])
    exact = [2 * a]
    arg, pos, abs_err, rel_err = num.max_err(exact, 1e-4, 1e-4)
    assert abs_err < 1e-4
    wrong = [np.array([2.0, 4.0, 7.0])]
    arg, pos, abs_err, rel_err = num.max_err(wrong, 1e-4, 1e-4)
    assert (arg, pos) == (0, 2)
    assert abs_err == pytest.approx(1.0, rel=1e-5)
    assert rel_err == pytest.approx(1.0 / 13.0, rel=1e-5)
    # A large absolute error within the relative tolerance is accepted.
    _, _, abs_err, rel_err = num.max_err(wrong, 1e-4, 0.5)
    assert min(abs_err / 1e-4, rel_err / 0.5) < 1
    with pytest.raises(ValueError, match="has shape"):
        num.max_err([np.zeros(2)], 1e-4, 1e-4)


# ====================================================================== GradientError


def test_gradient_error_report() -> None:
    err = GradientError(
        arg=1,
        err_pos=5,
        shape=(2, 3),
        val1=1.25,
        val2=-0.5,
        abs_err=1.75,
        rel_err=0.6,
        abs_tol=1e-4,
        rel_tol=1e-3,
    )
    message = str(err)
    assert "input 1 (shape (2, 3)), element (1, 2) (flat index 5)" in message
    assert "numeric gradient  = 1.25" in message
    assert "analytic gradient = -0.5" in message
    assert "max abs. error = 1.75 (abs. tolerance 0.0001)" in message
    assert "max rel. error = 0.6 (rel. tolerance 0.001)" in message
    assert (err.arg, err.err_pos, err.shape) == (1, 5, (2, 3))


# ====================================================================== argument checks


def test_verify_grad_argument_checks() -> None:
    with pytest.raises(TypeError, match="pt must be a list or tuple"):
        verify_grad(lambda x: x, np.ones(3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="input 0 has dtype int64"):
        verify_grad(lambda x: x, [np.array([1, 2], dtype="int64")])
    with pytest.raises(TypeError, match=r"rng must be a numpy\.random\.Generator"):
        verify_grad(lambda x: x, [np.ones(2)], rng="seed")  # type: ignore[arg-type]


# ====================================================================== end to end (tensors)


def require(module: str, *names: str) -> Any:
    """Return ``module``, failing clearly if it lacks one of ``names``."""
    mod = importlib.import_module(module)
    missing = [n for n in names if not hasattr(mod, n)]
    assert not missing, f"{module} does not provide {', '.join(missing)}"
    return mod


@pytest.fixture
def tensor() -> tuple[Any, Any]:
    ot = require("opweave.tensor", "TensorType", "shared", "as_tensor_variable")
    otm = require("opweave.tensor.math", "sum", "exp", "mul", "dot", "tanh")
    return ot, otm


def run_verify(*args: Any, **kwargs: Any) -> None:
    """``verify_grad`` on a tensor graph (the Python backend implements every tensor Op)."""
    verify_grad(*args, **kwargs)


class SquareWithWrongGrad(Op):
    """``x ** 2`` whose gradient forgets the factor 2 (for input ``which``) on purpose."""

    __props__ = ("which",)

    def __init__(self, which: int = 0) -> None:
        self.which = which

    def make_node(self, x: Variable, y: Variable) -> Apply:
        return Apply(self, [x, y], [x.type()])

    def perform(self, node: Apply, inputs: Sequence[np.ndarray], out: list[list[Any]]) -> None:
        x, y = inputs
        out[0][0] = np.asarray(x**2 + y**2)

    def grad(self, inputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Any]:
        x, y = inputs
        (gz,) = output_grads
        gx = gz * x if self.which == 0 else gz * x * 2.0
        gy = gz * y if self.which == 1 else gz * y * 2.0
        return [gx, gy]


def test_verify_grad_passes_on_correct_gradients(tensor: tuple[Any, Any]) -> None:
    _, otm = tensor
    rng = np.random.default_rng(42)
    a = rng.normal(size=(3, 4))
    b = rng.normal(size=(4,))
    run_verify(lambda x, y: otm.tanh(otm.dot(x, y)) * otm.sum(otm.exp(y)), [a, b], rng=rng)
    run_verify(lambda x: otm.exp(x) * x, [rng.normal(size=(2, 3))], rng=1234, n_tests=3)
    run_verify(
        lambda x: otm.exp(x) * x,
        [rng.normal(size=(5,)).astype("float32")],
        rng=np.random.default_rng(0),
    )


def test_verify_grad_ignores_inputs_the_function_does_not_use(tensor: tuple[Any, Any]) -> None:
    _, otm = tensor
    run_verify(lambda x, y: otm.exp(x), [np.ones(2), np.ones(3)], rng=0)


def test_verify_grad_reports_a_wrong_gradient(tensor: tuple[Any, Any]) -> None:
    rng = np.random.default_rng(7)
    x_val = np.array([[0.5, -1.5], [2.0, 1.0]])
    y_val = np.array([[1.0, 0.25], [-0.75, 3.0]])
    with pytest.raises(GradientError) as info:
        run_verify(lambda x, y: SquareWithWrongGrad(0)(x, y), [x_val, y_val], rng=rng)
    err = info.value
    assert err.arg == 0
    assert err.shape == (2, 2)
    # The numeric gradient is twice the (wrong) analytic one.
    assert err.val1 == pytest.approx(2 * err.val2, rel=1e-5)
    assert err.abs_err > err.abs_tol and err.rel_err > err.rel_tol
    assert (err.abs_tol, err.rel_tol) == (1e-4, 1e-4)
    message = str(err)
    assert "input 0 (shape (2, 2))" in message and "numeric gradient" in message
    # The element with the largest error is the one with the largest |x * r|.
    flat = np.abs(x_val).reshape(-1)
    assert abs(flat[err.err_pos]) >= 0.5

    with pytest.raises(GradientError) as info:
        run_verify(lambda x, y: SquareWithWrongGrad(1)(x, y), [x_val, y_val], rng=rng)
    assert info.value.arg == 1


def test_verify_grad_tolerances_can_be_loosened(tensor: tuple[Any, Any]) -> None:
    x_val = np.array([0.5, -1.5])
    y_val = np.array([1.0, 0.25])
    run_verify(
        lambda x, y: SquareWithWrongGrad(0)(x, y), [x_val, y_val], rng=0, abs_tol=10.0, rel_tol=1.0
    )


def test_verify_grad_refuses_several_outputs(tensor: tuple[Any, Any]) -> None:
    _, otm = tensor
    with pytest.raises(NotImplementedError, match="several outputs"):
        verify_grad(lambda x: [otm.exp(x), x], [np.ones(2)], rng=0)
