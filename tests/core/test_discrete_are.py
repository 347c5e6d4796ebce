"""``opweave.tensor.linalg.solve_discrete_are``: the stabilising solution of the discrete
algebraic Riccati equation, against the equation's residual and SciPy (reference only)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import scipy.linalg as sla

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.tensor.linalg import SolveDiscreteARE, solve_discrete_are


def problem(m: int, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, m))
    b = rng.normal(size=(m, n))
    q0, r0 = rng.normal(size=(m, m)), rng.normal(size=(n, n))
    return a, b, q0 @ q0.T + np.eye(m), r0 @ r0.T + np.eye(n)


def residual(a: Any, b: Any, q: Any, r: Any, x: Any) -> np.ndarray:
    gain = np.linalg.solve(r + b.T @ x @ b, b.T @ x @ a)
    return a.T @ x @ a - x - a.T @ x @ b @ gain + q  # type: ignore[no-any-return]


def compiled(linker: str, **kwargs: Any) -> Any:
    a, b, q, r = (ot.dmatrix(n) for n in "abqr")
    return opweave.function([a, b, q, r], solve_discrete_are(a, b, q, r, **kwargs),
                            mode=Mode(linker=linker))  # fmt: skip


@pytest.mark.parametrize("linker", ["vm", "cvm"])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 2), (5, 1), (4, 4), (8, 3)])
def test_solution_solves_the_equation_and_stabilises(linker: str, m: int, n: int) -> None:
    a, b, q, r = problem(m, n, seed=m * 10 + n)
    x = compiled(linker)(a, b, q, r)
    scale = np.abs(x).max()
    assert np.abs(residual(a, b, q, r, x)).max() <= 1e-10 * scale
    np.testing.assert_array_equal(x, x.T)
    gain = np.linalg.solve(r + b.T @ x @ b, b.T @ x @ a)
    assert np.abs(np.linalg.eigvals(a - b @ gain)).max() < 1.0
    assert np.linalg.eigvalsh(x).min() > 0  # Q > 0 gives a positive definite solution
    np.testing.assert_allclose(x, sla.solve_discrete_are(a, b, q, r), rtol=1e-10, atol=1e-12)


def test_enforce_q_symmetric_uses_the_symmetric_part() -> None:
    a, b, q, r = problem(4, 2, seed=7)
    skew = np.triu(np.ones((4, 4)), 1)
    skew = skew - skew.T
    x = compiled("vm", enforce_Q_symmetric=True)(a, b, q + skew, r)
    np.testing.assert_allclose(x, sla.solve_discrete_are(a, b, q, r), rtol=1e-10)
    assert SolveDiscreteARE(True) != SolveDiscreteARE(False)
    with pytest.raises(TypeError, match="enforce_Q_symmetric must be a bool"):
        SolveDiscreteARE("yes")  # type: ignore[arg-type]


def test_no_stabilising_solution_gives_nan() -> None:
    a = np.diag([2.0, 0.5])  # the unstable mode is not reachable from B
    b = np.array([[0.0], [1.0]])
    x = compiled("vm")(a, b, np.eye(2), np.eye(1))
    assert np.isnan(x).all()


def test_complex_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    a, b, q, r = problem(3, 2, seed=5)
    a = a + 0.3j * rng.normal(size=a.shape)
    b = b + 0.2j * rng.normal(size=b.shape)
    mats = [ot.zmatrix(n) for n in "abqr"]
    f = opweave.function(mats, solve_discrete_are(*mats))
    x = f(a, b, q.astype(complex), r.astype(complex))
    np.testing.assert_allclose(x, sla.solve_discrete_are(a, b, q, r), rtol=1e-10, atol=1e-12)


def test_batched_inputs_and_infer_shape() -> None:
    a, b, q, r = problem(3, 2, seed=2)
    a2 = np.stack([a, 0.5 * a])
    ta = ot.tensor3("a")
    tb, tq, tr = (ot.dmatrix(n) for n in "bqr")
    out = solve_discrete_are(ta, tb, tq, tr)
    assert out.type.shape == (None, None, None)
    f = opweave.function([ta, tb, tq, tr], [out, out.shape])
    x, shape = f(a2, b, q, r)
    assert tuple(shape) == (2, 3, 3)
    for k in range(2):
        np.testing.assert_allclose(x[k], sla.solve_discrete_are(a2[k], b, q, r), rtol=1e-10)
    g = opweave.function([ta, tb, tq, tr], out.shape)
    assert not any(isinstance(n.op, SolveDiscreteARE) for n in g.maker.fgraph.toposort())


def test_bad_inputs_are_named() -> None:
    a = ot.dmatrix("a")
    with pytest.raises(TypeError, match=r"input A .* at least 2 dimensions"):
        solve_discrete_are(ot.dvector("v"), a, a, a)
    with pytest.raises(ValueError, match="lengths of n disagree"):
        solve_discrete_are(ot.matrix(shape=(3, 3)), ot.matrix(shape=(3, 2)),
                           ot.matrix(shape=(3, 3)), ot.matrix(shape=(4, 4)))  # fmt: skip


def test_gradient_matches_finite_differences() -> None:
    a, b, q, r = problem(3, 2, seed=11)

    def fun(a: Any, b: Any, qh: Any, rh: Any) -> Any:
        q = ot.dot(qh, qh.T) + ot.eye(3)
        r = ot.dot(rh, rh.T) + ot.eye(2)
        return solve_discrete_are(a, b, q, r)

    qh = np.linalg.cholesky(q - np.eye(3) + 1e-3 * np.eye(3))
    rh = np.linalg.cholesky(r - np.eye(2) + 1e-3 * np.eye(2))
    verify_grad(fun, [0.5 * a, b, qh, rh], rng=np.random.default_rng(0), mode=Mode(linker="py"))
