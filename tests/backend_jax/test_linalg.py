"""Linear algebra lowerings against the ``py`` linker, on ordinary and edge inputs (singular
and non-positive-definite matrices, NaN, empty matrices, float32).

Tolerances (relative, plus an absolute one of the same size for entries that should be 0),
as measured on these inputs: float64 solves, inverses and factorizations agree to 1e-13,
``Expm`` to 1e-14, ``Eig``/``Eigh``/``SVD``/``Schur`` products to 1e-12; float32 to 1e-5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave.tensor as pt
from opweave.graph.utils import NoImplementationError
from opweave.tensor import linalg as la

from .conftest import compile_both

LinAlgError = np.linalg.LinAlgError

RNG = np.random.default_rng(42)
A = RNG.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
NOT_PD = np.diag([1.0, -2.0, 3.0, 4.0]) + 0.1
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 5.0]])
B = RNG.normal(size=(4, 2))


def run_both(inputs: Sequence[Any], outputs: Sequence[Any], args: Sequence[Any]) -> tuple:
    """The outputs of the graph (no rewrites) under the ``jax`` and ``py`` linkers."""
    jax_fn, py_fn = compile_both(inputs, outputs, optimizer=None)
    return jax_fn(*args), py_fn(*args)


def parts(outputs: Any) -> list[Any]:
    """The outputs of a multi-output Op's call, as a list."""
    return list(outputs)


def close(got: Any, want: Any, tol: float, what: str = "") -> None:
    """Same dtype and shape, values within ``tol`` (relative and absolute), NaN matching."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def all_close(got: Sequence[Any], want: Sequence[Any], tol: float) -> None:
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        close(g, w, tol, f"output {i}")


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_gives_nan_per_matrix_or_raises(lower: bool) -> None:
    x = pt.dtensor3("x")
    outs = [la.cholesky(x, lower=lower)]
    stack = np.stack([SPD, NOT_PD, np.full((4, 4), np.nan)])
    got, want = run_both([x], outs, [stack])
    all_close(got, want, 1e-13)
    assert np.isnan(got[0][1]).all() and np.isfinite(got[0][0]).all()
    strict = [la.cholesky(x, lower=lower, on_error="raise")]
    jax_fn, py_fn = compile_both([x], strict, optimizer=None)
    close(jax_fn(stack[:1])[0], py_fn(stack[:1])[0], 1e-13)
    for fn in (jax_fn, py_fn):
        with pytest.raises(LinAlgError, match="not positive definite"):
            fn(stack)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-13), ("float32", 1e-5)])
def test_solves_of_every_kind(dtype: str, tol: float) -> None:
    a, b, v = pt.tensor3("a", dtype=dtype), pt.matrix("b", dtype=dtype), pt.vector("v", dtype=dtype)
    outs = [
        *(
            la.solve(a, b, assume_a=k, lower=lo)
            for k in ("gen", "sym", "pos")
            for lo in (False, True)
        ),
        la.solve(a, b, assume_a="tridiagonal"),
        la.solve(a, v, b_ndim=1),
        la.solve_triangular(a, b, lower=True),
        la.solve_triangular(a, v, lower=False, unit_diagonal=True, b_ndim=1),
        la.cho_solve((a, True), b),
        la.cho_solve((a, False), b),
    ]
    stack = np.stack([SPD, np.triu(SPD)]).astype(dtype)
    got, want = run_both([a, b, v], outs, [stack, B.astype(dtype), B[:, 0].astype(dtype)])
    all_close(got, want, tol)


def test_failing_solves_give_nan_for_that_matrix() -> None:
    a, b = pt.dtensor3("a"), pt.dmatrix("b")
    outs = [
        la.solve(a, b),
        la.solve(a, b, assume_a="pos"),
        la.solve_triangular(a, b, lower=True),
        la.cho_solve((a, True), b),
    ]
    zero_diag = SPD.copy()
    zero_diag[2, 2] = 0.0
    singular = np.zeros((4, 4))
    stack = np.stack([SPD, NOT_PD, zero_diag, singular])
    got, want = run_both([a, b], outs, [stack, B])
    all_close(got, want, 1e-13)
    assert np.isnan(got[0][3]).all() and np.isfinite(got[0][0]).all()
    assert np.isnan(got[1][1]).all() and np.isnan(got[2][2]).all()


def test_inverse_determinants_pinv() -> None:
    x, m = pt.dmatrix("x"), pt.dmatrix("m")
    outs = [la.inv(x), la.det(x), *parts(la.slogdet(x)), la.pinv(m), la.pinv(x, hermitian=True)]
    got, want = run_both([x, m], outs, [SPD, A[:, :3]])
    all_close(got, want, 1e-13)
    det_only = [la.det(x), *parts(la.slogdet(x)), la.pinv(x)]
    for value in (SINGULAR, np.zeros((0, 0))):
        got, want = run_both([x], det_only, [value])
        all_close(got, want, 1e-13)


def test_singular_inverse_raises_after_the_call() -> None:
    x, t = pt.dmatrix("x"), pt.dtensor4("t")
    for ins, outs, arg in (
        ([x], [la.inv(x)], SINGULAR),
        ([t], [la.tensorinv(t, ind=2)], np.zeros((2, 2, 2, 2))),
    ):
        jax_fn, py_fn = compile_both(ins, outs, optimizer=None)
        for fn in (jax_fn, py_fn):
            with pytest.raises(LinAlgError, match=r"singular|no inverse"):
                fn(arg)


def test_tensorinv_and_tensorsolve() -> None:
    t, a, b = pt.dtensor4("t"), pt.dtensor3("a"), pt.dmatrix("b")
    big = RNG.normal(size=(2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3
    outs = [
        la.tensorinv(t, ind=2),
        la.tensorsolve(a, b),
        la.tensorsolve(a.transpose(2, 0, 1), b, axes=[0]),
    ]
    args = [SPD.reshape(2, 2, 2, 2), big, RNG.normal(size=(2, 3))]
    got, want = run_both([t, a, b], outs, args)
    all_close(got, want, 1e-12)
    jax_fn, py_fn = compile_both([a, b], [la.tensorsolve(a, b)], optimizer=None)
    for fn in (jax_fn, py_fn):
        with pytest.raises(LinAlgError):
            fn(np.zeros((2, 3, 6)), np.ones((2, 3)))


def _sign_fixed(v: np.ndarray) -> np.ndarray:
    """Each column times the conjugate phase of its largest entry (a unique form)."""
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    phase = np.take_along_axis(v, idx, axis=-2)
    return np.asarray(v * (np.abs(phase) / phase).conj())


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_eigvalsh_eig(lower: bool) -> None:
    a, b = pt.dmatrix("a"), pt.dmatrix("b")
    w, v = parts(la.Eigh(lower=lower)(a))
    gw, gv = parts(la.Eigh(lower=lower)(a, b))
    ew, ev = parts(la.eig(a))
    outs = [w, v, la.eigvalsh(a, b, lower=lower), la.eigvalsh(a, None, lower=lower), gw, gv, ew, ev]
    got, want = run_both(
        [a, b], outs, [np.tril(SPD) if lower else np.triu(SPD), SPD + 2 * np.eye(4)]
    )
    for i in (0, 2, 3, 4, 6):
        close(got[i], want[i], 1e-12, f"eigenvalues {i}")
    for i in (1, 5, 7):
        close(_sign_fixed(got[i]), _sign_fixed(want[i]), 1e-12, f"eigenvectors {i}")
    jax_fn, py_fn = compile_both([a, b], [gw], optimizer=None)
    for fn in (jax_fn, py_fn):
        with pytest.raises(LinAlgError, match="b is not positive definite"):
            fn(SPD, NOT_PD)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (0, 0)])
def test_svd_and_qr(shape: tuple[int, int]) -> None:
    x = pt.dmatrix("x")
    value = RNG.normal(size=shape)
    u, s, vt = parts(la.svd(x, full_matrices=False))
    outs = [
        s,
        la.svd(x, compute_uv=False),
        *parts(la.qr(x, mode="full")),
        *parts(la.qr(x, mode="economic")),
        la.qr(x, mode="r"),
        *parts(la.QR("raw")(x)),
    ]
    got, want = run_both([x], [*outs, u, vt], [value])
    all_close(got[:-2], want[:-2], 1e-12)
    # the singular vectors up to a sign: compare u * s @ vt
    close((got[-2] * got[0]) @ got[-1], (want[-2] * want[0]) @ want[-1], 1e-12)


def test_lu_lu_factor_and_pivots() -> None:
    x, p = pt.dmatrix("x"), pt.ivector("p")
    outs = [
        *parts(la.lu(x)),
        *parts(la.lu(x, p_indices=True)),
        *parts(la.lu(x, permute_l=True)),
        *parts(la.lu_factor(x)),
        la.pivot_to_permutation(p),
        la.pivot_to_permutation(p, inverse=True),
    ]
    pivots = np.array([2, 3, 2, 3], dtype="int32")
    for value in (A, np.pad(SINGULAR, ((0, 1), (0, 1)))):
        got, want = run_both([x, p], outs, [value, pivots])
        all_close(got, want, 1e-13)
    jax_fn, py_fn = compile_both([p], [la.pivot_to_permutation(p)], optimizer=None)
    for fn in (jax_fn, py_fn):
        with pytest.raises(ValueError, match="pivots must lie in"):
            fn(np.array([5, 0], dtype="int32"))


def test_lstsq() -> None:
    a, b, v = pt.dmatrix("a"), pt.dmatrix("b"), pt.dvector("v")
    outs = [*parts(la.lstsq(a, b)), *parts(la.lstsq(a, v, 1e-10))]
    for value in (A[:, :3], A[:3, :]):
        rows = value.shape[0]
        got, want = run_both([a, b, v], outs, [value, B[:rows], B[:rows, 0]])
        all_close(got, want, 1e-12)
    deficient = np.ones((4, 2))
    jax_fn, py_fn = compile_both([a, b], parts(la.lstsq(a, b)), optimizer=None)
    assert py_fn(deficient, B)[1].shape == (0,)
    with pytest.raises(NotImplementedError, match="rank-deficient"):
        jax_fn(deficient, B)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-14), ("float32", 1e-5)])
def test_expm_and_block_diagonal(dtype: str, tol: float) -> None:
    x, y = pt.matrix("x", dtype=dtype), pt.tensor3("y", dtype=dtype)
    outs = [la.expm(x), la.expm(y), la.block_diag(x, y, x[:1])]
    small = np.array([[0.01, 0.0], [0.02, -0.01]])
    args = [(A * 3).astype(dtype), np.stack([small, small * 50]).astype(dtype)]
    got, want = run_both([x, y], outs, args)
    all_close(got, want, tol)


def test_solve_sylvester_and_schur() -> None:
    a, b, q = pt.dmatrix("a"), pt.dmatrix("b"), pt.dmatrix("q")
    t, z = parts(la.schur(a))
    outs = [la.solve_sylvester(a, b, q), t, z]
    got, want = run_both([a, b, q], outs, [A, SPD[:3, :3], RNG.normal(size=(4, 3))])
    close(got[0], want[0], 1e-12)
    # Z T Z^T == A for both; T's (quasi-)diagonal blocks hold the same eigenvalues
    close(got[2] @ got[1] @ got[2].T, A, 1e-12)
    close(
        np.sort_complex(np.linalg.eigvals(got[1])),
        np.sort_complex(np.linalg.eigvals(want[1])),
        1e-12,
    )
    got, want = run_both([a, b, q], outs, [np.eye(3), -np.eye(3), np.ones((3, 3))])
    assert np.isnan(got[0]).all() and np.isnan(want[0]).all()
    got, want = run_both([a], outs[1:], [np.full((2, 2), np.nan)])
    all_close(got, want, 0.0)
    assert np.isnan(got[0]).all()


def test_solve_discrete_are() -> None:
    a, b, q, r = pt.dtensor3("a"), pt.dmatrix("b"), pt.dmatrix("q"), pt.dmatrix("r")
    outs = [la.solve_discrete_are(a, b, q, r), la.solve_discrete_are(a, b, q, r, True)]
    stable = 0.5 * A / np.abs(np.linalg.eigvals(A)).max()
    b_value = RNG.normal(size=(4, 2))
    args = [np.stack([stable, A]), b_value, SPD + A, np.eye(2)]
    got, want = run_both([a, b, q, r], outs, args)
    all_close(got, want, 1e-12)
    assert np.isfinite(got[0]).all()
    args[-1] = np.zeros((2, 2))  # a singular R: no solution
    got, want = run_both([a, b, q, r], outs, args)
    all_close(got, want, 0.0)
    assert np.isnan(got[0]).all()


def test_refused_linalg() -> None:
    a = pt.dmatrix("a")
    with pytest.raises(NoImplementationError, match="sort='lhp'"):
        compile_both([a], parts(la.schur(a, sort="lhp")), optimizer=None)
    with pytest.raises(NoImplementationError, match="jax"):
        compile_both([a], parts(la.qz(a, a)), optimizer=None)


@pytest.mark.parametrize("shape", [(0, 0), (2, 0, 0), (0, 3, 3)])
def test_empty_matrices(shape: tuple[int, ...]) -> None:
    x = pt.tensor("x", dtype="float64", shape=(None,) * len(shape))
    outs = [
        la.cholesky(x),
        la.solve(x, x),
        la.solve(x, x, assume_a="pos"),
        la.solve_triangular(x, x),
        la.inv(x),
        la.det(x),
        *parts(la.slogdet(x)),
        *parts(la.Eigh()(x)),
        la.eigvalsh(x, None),
        la.svd(x, compute_uv=False),
        *parts(la.qr(x)),
        la.expm(x),
    ]
    got, want = run_both([x], outs, [np.zeros(shape)])
    all_close(got, want, 0.0)


def test_float32_and_complex_decompositions() -> None:
    x, c = pt.fmatrix("x"), pt.zmatrix("c")
    outs = [la.eigvalsh(x, None), la.svd(x, compute_uv=False), la.det(x), la.inv(x)]
    outs += [la.eigvalsh(c, None), la.svd(c, compute_uv=False), la.det(c), la.inv(c)]
    outs += [la.cholesky(c), la.solve(c, c, assume_a="her"), la.expm(c)]
    hermitian = SPD + 1j * (A - A.T)
    got, want = run_both([x, c], outs, [SPD.astype("float32"), hermitian])
    all_close(got[:4], want[:4], 1e-5)
    all_close(got[4:], want[4:], 1e-12)


def test_batched_schur_and_sylvester() -> None:
    a, b, q = pt.dtensor3("a"), pt.dtensor3("b"), pt.dmatrix("q")
    t, z = parts(la.schur(a))
    args = [RNG.normal(size=(2, 3, 3)), RNG.normal(size=(2, 2, 2)), RNG.normal(size=(3, 2))]
    got, want = run_both([a, b, q], [la.solve_sylvester(a, b, q), t, z], args)
    close(got[0], want[0], 1e-12)
    close(got[2] @ got[1] @ np.swapaxes(got[2], -1, -2), args[0], 1e-12)
