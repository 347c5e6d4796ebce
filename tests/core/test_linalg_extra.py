"""The linear algebra of ``opweave.tensor.linalg`` beyond the Cholesky factor and the solvers:
``expm``, ``block_diag``, ``lu``/``lu_factor``/``lu_solve``/``pivot_to_permutation``,
``eigvalsh`` and the Sylvester/Lyapunov solvers, with PyTensor's names and semantics.

Values are checked against NumPy references and closed forms (float32/float64, batched),
every gradient with finite differences (``verify_grad``), ``infer_shape`` by compiling
``out.shape`` (no linear-algebra node left), and the Ops run alike on the ``py``, ``vm``
and ``cvm`` linkers while the ``c`` linker refuses them, naming the Op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import factorial
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable
from opweave.tensor import linalg
from opweave.tensor.linalg import (
    LU,
    BlockDiagonal,
    Eigvalsh,
    Expm,
    LUFactor,
    PivotToPermutations,
    SolveSylvester,
    block_diag,
    eigvalsh,
    expm,
    lu,
    lu_factor,
    lu_solve,
    pivot_to_permutation,
    solve_continuous_lyapunov,
    solve_discrete_lyapunov,
    solve_sylvester,
)
from opweave.tensor.type import TensorType

PY = Mode(linker="py")
RNG = np.random.default_rng(7)
RTOL = {"float32": 1e-4, "float64": 1e-10}
NEW_OPS = (Expm, BlockDiagonal, LU, LUFactor, PivotToPermutations, Eigvalsh, SolveSylvester)


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Variable:
    return TensorType(dtype, shape=shape)(name)


def free(ndim: int, dtype: str = "float64", name: str = "x") -> Variable:
    return T(dtype, (None,) * ndim, name)


def run(inputs: Sequence[Variable], outputs: Any, *values: Any, mode: Mode = PY) -> Any:
    return opweave.function(list(inputs), outputs, mode=mode)(*values)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray], **kwargs: Any) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=PY, **kwargs)


def sym(shape: tuple[int, ...]) -> np.ndarray:
    m = RNG.normal(size=shape)
    return m + np.swapaxes(m, -1, -2)


def spd(shape: tuple[int, ...]) -> np.ndarray:
    m = RNG.normal(size=shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def stable(shape: tuple[int, ...], scale: float = 0.3) -> np.ndarray:
    """Matrices whose spectral radius is well below 1."""
    m = RNG.normal(size=shape)
    return scale * m / np.linalg.norm(m, 2, axis=(-2, -1), keepdims=True)


def check_infer_shape(inputs: Sequence[Variable], out: Variable, *values: Any) -> None:
    """Compiled ``out.shape`` equals the value's shape and computes no linear algebra."""
    expected = run(inputs, out, *values).shape
    f = opweave.function(list(inputs), out.shape, on_unused_input="ignore", mode=PY)
    assert tuple(int(v) for v in f(*values)) == expected
    assert not any(isinstance(n.op, NEW_OPS) for n in f.maker.fgraph.toposort())


# ====================================================================== names


def test_linalg_exports_pytensor_names() -> None:
    for name in (
        "expm",
        "block_diag",
        "lu",
        "lu_factor",
        "lu_solve",
        "pivot_to_permutation",
        "eigvalsh",
        "solve_sylvester",
        "solve_continuous_lyapunov",
        "solve_discrete_lyapunov",
        "Expm",
        "BlockDiagonal",
        "LU",
        "LUFactor",
        "PivotToPermutations",
        "Eigvalsh",
    ):
        assert name in linalg.__all__ and hasattr(linalg, name)
    assert ot.linalg.expm is expm


# ====================================================================== expm


def taylor_expm(a: np.ndarray, terms: int = 60) -> np.ndarray:
    total = np.eye(a.shape[-1])
    for k in range(1, terms):
        total = total + np.linalg.matrix_power(a, k) / factorial(k)
    return total


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_expm_of_symmetric_matrices_matches_the_eigendecomposition(
    dtype: str, batch: tuple[int, ...]
) -> None:
    a = sym((*batch, 5, 5))  # norms up to ~10: exercises scaling and squaring
    w, v = np.linalg.eigh(a)
    want = (v * np.exp(w)[..., None, :]) @ np.swapaxes(v, -1, -2)
    x = free(a.ndim, dtype)
    got = run([x], expm(x), a.astype(dtype))
    assert got.dtype == dtype and got.shape == a.shape
    np.testing.assert_allclose(got, want, rtol=10 * RTOL[dtype], atol=10 * RTOL[dtype])


@pytest.mark.parametrize("scale", [1e-3, 0.1, 0.5, 1.5, 4.0, 40.0])
def test_expm_agrees_with_the_taylor_series_at_every_pade_degree(scale: float) -> None:
    a = RNG.normal(size=(4, 4))
    a = scale * a / np.linalg.norm(a, 1)
    x = free(2)
    got = run([x], expm(x), a)
    if scale <= 4:
        np.testing.assert_allclose(got, taylor_expm(a), rtol=1e-12, atol=1e-14)
    else:  # exp(A) = exp(A / 64) ** 64
        small = np.linalg.matrix_power(taylor_expm(a / 64), 64)
        np.testing.assert_allclose(got, small, rtol=1e-9)


def test_expm_closed_forms() -> None:
    x = free(2)
    f = opweave.function([x], expm(x), mode=PY)
    nilpotent = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    # exp(N) = I + N + N^2 / 2 for N^3 = 0.
    want = np.eye(3) + nilpotent + nilpotent @ nilpotent / 2
    np.testing.assert_allclose(f(nilpotent), want, rtol=1e-14)
    t = 2.5
    rotation = f(np.array([[0.0, -t], [t, 0.0]]))
    np.testing.assert_allclose(rotation, [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    np.testing.assert_allclose(f(np.zeros((3, 3))), np.eye(3))
    assert np.isnan(f(np.array([[np.nan, 0.0], [0.0, 1.0]]))).all()
    i = free(2, "int64")
    assert expm(i).dtype == "float64" and expm(T("float16", (2, 2))).dtype == "float32"
    np.testing.assert_allclose(run([i], expm(i), np.eye(2, dtype="int64")), np.e * np.eye(2))


def test_expm_rejects_bad_inputs() -> None:
    with pytest.raises(TypeError, match=r"Expm: the input A .* at least 2 dimensions"):
        expm(free(1))
    with pytest.raises(ValueError, match=r"Expm: the input A .* must be square"):
        expm(T("float64", (2, 3)))


def test_expm_gradient_and_shape() -> None:
    verify(expm, [RNG.normal(size=(3, 3))])
    verify(expm, [RNG.normal(size=(2, 3, 3))])
    verify(expm, [2 * sym((4, 4))])
    x = free(3)
    check_infer_shape([x], expm(x), RNG.normal(size=(2, 3, 3)))
    assert expm(T("float64", (2, None, 4))).type.shape == (2, 4, 4)


# ====================================================================== block_diag


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_block_diag_values(dtype: str) -> None:
    a, b, c = RNG.normal(size=(2, 2)), RNG.normal(size=(1, 3)), RNG.normal(size=(3, 1))
    xs = [free(2, dtype, n) for n in "abc"]
    got = run(xs, block_diag(*xs), *(m.astype(dtype) for m in (a, b, c)))
    want = np.zeros((6, 6))
    want[:2, :2], want[2:3, 2:5], want[3:, 5:] = a, b, c
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype])


def test_block_diag_batches_broadcast_and_dtypes_promote() -> None:
    a = T("float64", (2, None, None), "a")
    b = T("int32", (1, None, None), "b")
    out = block_diag(a, b)
    assert out.type == TensorType("float64", shape=(2, None, None))
    av, bv = RNG.normal(size=(2, 2, 3)), np.arange(4, dtype="int32").reshape(1, 2, 2)
    got = run([a, b], out, av, bv)
    for i in range(2):
        np.testing.assert_array_equal(got[i, :2, :3], av[i])
        np.testing.assert_array_equal(got[i, 2:, 3:], bv[0])
        assert not got[i, :2, 3:].any() and not got[i, 2:, :3].any()
    assert block_diag(T("float64", (2, 3)), T("float64", (1, 1))).type.shape == (3, 4)


def test_block_diag_gradient_shape_and_errors() -> None:
    verify(lambda x, y: block_diag(x, y), [RNG.normal(size=(2, 3)), RNG.normal(size=(3, 2))])
    verify(
        lambda x, y, z: block_diag(x, y, z),
        [RNG.normal(size=(2, 2, 3)), RNG.normal(size=(1, 2)), RNG.normal(size=(2, 2, 2))],
    )
    a, b = free(3, name="a"), free(2, name="b")
    check_infer_shape([a, b], block_diag(a, b), np.ones((2, 2, 3)), np.ones((4, 1)))
    single = free(2)
    assert block_diag(single) is single
    with pytest.raises(ValueError, match="at least one matrix"):
        block_diag()
    with pytest.raises(ValueError, match="n_inputs must be greater than 1"):
        BlockDiagonal(1)
    with pytest.raises(ValueError, match="expected 3 matrices, got 2"):
        BlockDiagonal(3)(a, b)
    with pytest.raises(TypeError, match=r"BlockDiagonal: the input matrices\[1\]"):
        block_diag(a, free(1))


# ====================================================================== lu


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_lu_reconstructs_the_matrix_with_triangular_factors(
    dtype: str, batch: tuple[int, ...]
) -> None:
    a = RNG.normal(size=(*batch, 5, 5)).astype(dtype)
    x = free(a.ndim, dtype)
    p, lo, up = run([x], list(lu(x)), a)
    assert p.dtype == lo.dtype == up.dtype == dtype
    np.testing.assert_allclose(p @ lo @ up, a, rtol=RTOL[dtype], atol=RTOL[dtype])
    np.testing.assert_array_equal(lo, np.tril(lo))
    np.testing.assert_array_equal(up, np.triu(up))
    np.testing.assert_array_equal(np.diagonal(lo, 0, -2, -1), 1)
    assert (np.abs(lo) <= 1 + 1e-6).all()  # partial pivoting
    np.testing.assert_array_equal(p @ np.swapaxes(p, -1, -2), np.broadcast_to(np.eye(5), p.shape))
    idx, lo2, up2 = run([x], list(lu(x, p_indices=True)), a)
    assert idx.dtype == "int32"
    np.testing.assert_allclose(np.take_along_axis(lo2, idx[..., None], -2) @ up2, a, rtol=1e-4)
    pl, up3 = run([x], list(lu(x, permute_l=True)), a)
    np.testing.assert_allclose(pl, p @ lo, rtol=RTOL[dtype])
    np.testing.assert_array_equal(up3, up)


def test_lu_factor_matches_lapack_conventions() -> None:
    x = free(2)
    packed, piv = run([x], list(lu_factor(x)), np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(packed, [[3.0, 4.0], [1 / 3, 2 / 3]])
    np.testing.assert_array_equal(piv, [1, 1])
    assert piv.dtype == "int32"
    a = RNG.normal(size=(2, 4, 4))
    y = free(3)
    packed, piv = run([y], list(lu_factor(y)), a)
    order = run([y], pivot_to_permutation(lu_factor(y)[1], inverse=True), a)
    lo = np.tril(packed, -1) + np.eye(4)
    np.testing.assert_allclose(np.take_along_axis(a, order[..., None], -2), lo @ np.triu(packed))
    p = run([y], lu(y, p_indices=True)[0], a)
    np.testing.assert_array_equal(run([y], pivot_to_permutation(lu_factor(y)[1]), a), p)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert np.isnan(run([x], lu_factor(x)[0], singular)).all()
    _, lo, up = run([x], list(lu(x)), singular)  # lu itself factors singular matrices
    np.testing.assert_allclose(lo @ up, singular[[1, 0]])


@pytest.mark.parametrize("batch", [(), (3,), (0,)])
def test_lu_of_empty_matrices_has_scipys_shapes(batch: tuple[int, ...]) -> None:
    import scipy.linalg

    y = free(len(batch) + 2)
    empty = np.ones((*batch, 0, 0))
    p, lo, up = run([y], list(lu(y)), empty)
    packed, piv = run([y], list(lu_factor(y)), empty)
    want = scipy.linalg.lu(np.ones((0, 0)))
    assert [v.shape for v in (p, lo, up)] == [(*batch, *w.shape) for w in want]
    assert packed.shape == (*batch, 0, 0) and piv.shape == (*batch, 0)


def test_pivot_to_permutation_values_and_errors() -> None:
    v = T("int32", (None,), "p")
    pivots = np.array([2, 2, 2], dtype="int32")  # rows (0 2), then (1 2)
    np.testing.assert_array_equal(
        run([v], pivot_to_permutation(v, inverse=True), pivots), [2, 0, 1]
    )
    np.testing.assert_array_equal(run([v], pivot_to_permutation(v), pivots), [1, 2, 0])
    assert pivot_to_permutation(v).dtype == "int64"
    with pytest.raises(TypeError, match="PivotToPermutations: the input pivots"):
        pivot_to_permutation(free(1))
    with pytest.raises(ValueError, match=r"pivots must lie in \[0, 3\)"):
        run([v], pivot_to_permutation(v), np.array([0, 5, 2], dtype="int32"))


@pytest.mark.parametrize("trans", [0, 1, 2, True, "T"])
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_lu_solve_values(trans: Any, b_ndim: int) -> None:
    a = RNG.normal(size=(3, 4, 4)) + 2 * np.eye(4)
    b = RNG.normal(size=(3, 4) if b_ndim == 1 else (3, 4, 2))
    x, y = free(3, name="a"), free(b.ndim, name="b")
    got = run([x, y], lu_solve(lu_factor(x), y, trans=trans, b_ndim=b_ndim), a, b)
    m = a if trans in (0, False) else np.swapaxes(a, -1, -2)
    want = np.linalg.solve(m, b[..., None] if b_ndim == 1 else b)
    np.testing.assert_allclose(got, want[..., 0] if b_ndim == 1 else want, rtol=1e-10)


def test_lu_solve_errors() -> None:
    with pytest.raises(TypeError, match="LU_and_pivots must be a pair"):
        lu_solve(free(2), free(1))
    with pytest.raises(ValueError, match="lu_solve: trans must be"):
        lu_solve(lu_factor(free(2)), free(1), trans=3)


def test_lu_gradients() -> None:
    a = RNG.normal(size=(4, 4))
    batched = RNG.normal(size=(2, 3, 3))
    for kw in ({}, {"p_indices": True}, {"permute_l": True}):
        verify(lambda x, kw=kw: lu(x, **kw)[-2], [a])
        verify(lambda x, kw=kw: lu(x, **kw)[-1], [a])
        verify(lambda x, kw=kw: lu(x, **kw)[-2] * 2 + lu(x, **kw)[-1], [batched])
    verify(lambda x: lu_factor(x)[0], [a])
    verify(lambda x: lu_factor(x)[0], [batched])
    b = RNG.normal(size=(2, 3))
    verify(lambda x, y: lu_solve(lu_factor(x), y, b_ndim=1), [batched, b])
    verify(lambda x, y: lu_solve(lu_factor(x), y, trans=1), [a, RNG.normal(size=(4, 2))])


def test_lu_shapes_and_errors() -> None:
    x = free(3)
    a = RNG.normal(size=(2, 3, 3))
    for out in (*lu(x), *lu(x, p_indices=True), *lu_factor(x)):
        check_infer_shape([x], out, a)
    check_infer_shape([x], pivot_to_permutation(lu_factor(x)[1]), a)
    p, lo, _ = lu(T("int64", (2, None, 3)))
    assert p.type == TensorType("float64", shape=(2, 3, 3)) and lo.type.shape == (2, 3, 3)
    assert lu(T("float32", (3, 3)), p_indices=True)[0].type == TensorType("int32", shape=(3,))
    with pytest.raises(ValueError, match="only one of permute_l and p_indices"):
        lu(x, permute_l=True, p_indices=True)
    with pytest.raises(ValueError, match=r"LU: the input x .* must be square"):
        lu(T("float64", (2, 3)))
    with pytest.raises(TypeError, match="LUFactor: the input A"):
        lu_factor(free(1))


# ====================================================================== eigvalsh


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lower", [True, False])
def test_eigvalsh_values(dtype: str, lower: bool) -> None:
    a = sym((2, 4, 4))
    noise = 100 * RNG.normal(size=a.shape)
    given = np.tril(a) + np.triu(noise, 1) if lower else np.triu(a) + np.tril(noise, -1)
    x = free(3, dtype)
    got = run([x], eigvalsh(x, lower=lower), given.astype(dtype))
    assert got.dtype == dtype and got.shape == (2, 4)
    np.testing.assert_allclose(got, np.linalg.eigvalsh(a), rtol=RTOL[dtype], atol=1e-4)


def test_generalized_eigvalsh_matches_eigh() -> None:
    a, b = sym((2, 4, 4)), spd((2, 4, 4))
    x, y = free(3, name="a"), free(3, name="b")
    got = run([x, y], eigvalsh(x, y), a, b)
    w, _ = run([x, y], list(linalg.eigh(x, y)), a, b)
    np.testing.assert_allclose(got, w, rtol=1e-10)
    chol = np.linalg.cholesky(b)
    inv = np.linalg.inv(chol)
    want = np.linalg.eigvalsh(inv @ a @ np.swapaxes(inv, -1, -2))
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError, match="b is not positive definite"):
        run([x, y], eigvalsh(x, y), a, -b)
    with pytest.raises(ValueError, match=r"Eigvalsh: a .* and b .* must have the same shape"):
        eigvalsh(T("float64", (2, 2)), T("float64", (3, 3)))


def test_eigvalsh_gradients_and_shape() -> None:
    verify(eigvalsh, [sym((4, 4))])
    verify(eigvalsh, [sym((2, 3, 3))])
    verify(lambda x: eigvalsh(x, lower=False), [RNG.normal(size=(3, 3))])
    verify(lambda x, y: eigvalsh(x, y), [sym((3, 3)), spd((3, 3))])
    x = free(3)
    check_infer_shape([x], eigvalsh(x), sym((2, 3, 3)))
    assert eigvalsh(T("complex64", (3, 3))).type == TensorType("float32", shape=(3,))


# ====================================================================== Sylvester, Lyapunov


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("m", "n"), [(3, 4), (25, 20)])  # linear system / eigendecomposition
def test_solve_sylvester_residual(dtype: str, m: int, n: int) -> None:
    a = RNG.normal(size=(2, m, m)) + m * np.eye(m)
    b = RNG.normal(size=(2, n, n))
    q = RNG.normal(size=(2, m, n))
    xs = [free(3, dtype, name) for name in "abq"]
    x = run(xs, solve_sylvester(*xs), *(v.astype(dtype) for v in (a, b, q)))
    assert x.dtype == dtype and x.shape == (2, m, n)
    scale = np.abs(q).max()
    tol = 1e-3 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(a @ x + x @ b, q, atol=tol * scale * m)


def test_solve_sylvester_broadcasts_and_gives_nan_when_singular() -> None:
    a, b, q = T("float64", (1, 2, 2), "a"), free(3, name="b"), free(2, name="q")
    out = solve_sylvester(a, b, q)
    assert out.type.shape == (None, 2, None)
    av = np.array([[[1.0, 0.0], [0.0, 2.0]]])
    bv = np.stack([-np.eye(2), np.eye(2)])  # the first equation is singular
    x = run([a, b, q], out, av, bv, np.ones((2, 2)))
    assert np.isnan(x[0]).all()
    np.testing.assert_allclose(av[0] @ x[1] + x[1] @ bv[1], np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"SolveSylvester: A has static shape .* Q must be"):
        solve_sylvester(T("float64", (2, 2)), T("float64", (3, 3)), T("float64", (3, 3)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lyapunov_residuals(dtype: str) -> None:
    a = RNG.normal(size=(3, 4, 4)) - 3 * np.eye(4)
    q = sym((3, 4, 4))
    x, y = free(3, dtype, "a"), free(3, dtype, "q")
    tol = 1e-3 if dtype == "float32" else 1e-10
    vals = (a.astype(dtype), q.astype(dtype))
    cont = run([x, y], solve_continuous_lyapunov(x, y), *vals)
    np.testing.assert_allclose(a @ cont + cont @ np.swapaxes(a, -1, -2), q, atol=tol * 10)
    s = stable((3, 4, 4), 0.8)
    for method in ("bilinear", "direct"):
        disc = run([x, y], solve_discrete_lyapunov(x, y, method=method), s.astype(dtype), vals[1])
        assert disc.dtype == dtype
        residual = s @ disc @ np.swapaxes(s, -1, -2) - disc + q
        np.testing.assert_allclose(residual, 0, atol=tol * 10)
    with pytest.raises(ValueError, match="method must be 'direct' or 'bilinear'"):
        solve_discrete_lyapunov(x, y, method="schur")  # type: ignore[arg-type]


def test_sylvester_and_lyapunov_gradients() -> None:
    a, b, q = (
        RNG.normal(size=(3, 3)) + 2 * np.eye(3),
        RNG.normal(size=(2, 2)),
        RNG.normal(size=(3, 2)),
    )
    verify(solve_sylvester, [a, b, q])
    verify(solve_sylvester, [RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3), b, q])
    verify(solve_continuous_lyapunov, [RNG.normal(size=(2, 3, 3)) - 2 * np.eye(3), sym((2, 3, 3))])
    for method in ("bilinear", "direct"):
        verify(
            lambda x, y, method=method: solve_discrete_lyapunov(x, y, method=method),
            [stable((3, 3), 0.6), sym((3, 3))],
        )


def test_sylvester_shape() -> None:
    a, b, q = free(3, name="a"), free(2, name="b"), free(2, name="q")
    check_infer_shape(
        [a, b, q], solve_sylvester(a, b, q), np.eye(3)[None] * 2, np.eye(2), np.ones((3, 2))
    )


# ====================================================================== linkers


def _graph() -> tuple[list[Variable], Variable]:
    a, b = free(2, name="a"), free(1, name="b")
    packed = lu_factor(a)
    x = lu_solve(packed, b, b_ndim=1)
    big = block_diag(expm(0.1 * a), solve_continuous_lyapunov(a - 4 * ot.eye(3), ot.outer(b, b)))
    cost = ot.sum(x) + ot.sum(big) + ot.sum(eigvalsh(a + a.T)) + ot.sum(lu(a)[2])
    return [a, b], cost


def test_the_new_ops_run_alike_on_the_python_linkers_and_cvm() -> None:
    inputs, cost = _graph()
    outputs = [cost, *opweave.grad(cost, inputs)]
    a = RNG.normal(size=(3, 3)) + 2 * np.eye(3)
    b = RNG.normal(size=3)
    results = {}
    linkers = ["py", "vm"]
    try:
        import opweave_c  # noqa: F401

        linkers.append("cvm")
    except ImportError:
        pass
    for linker in linkers:
        f = opweave.function(inputs, outputs, mode=Mode(linker=linker))
        results[linker] = f(a, b)
    for linker, values in results.items():
        for got, want in zip(values, results["py"], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=linker)


def test_the_c_linker_refuses_them_naming_the_op() -> None:
    pytest.importorskip("opweave_c")
    from opweave_c.linkers.c_linker import MissingCCodeError

    x = free(2)
    with pytest.raises(MissingCCodeError, match=r"Expm.*Use linker='cvm'"):
        opweave.function([x], expm(x), mode=Mode(linker="c"))
    with pytest.raises(MissingCCodeError, match=r"LUFactor.*Use linker='cvm'"):
        opweave.function([x], lu_factor(x)[0], mode=Mode(linker="c"))
