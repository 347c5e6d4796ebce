"""``opweave.tensor.slinalg`` (and its ``linalg`` re-exports): Cholesky factors and the
solvers, with PyTensor's names and semantics.

Values are compared with NumPy over float32/float64, batched and not; failures give NaN
per matrix as in PyTensor (``cholesky(on_error="raise")`` raises); bad inputs raise
``TypeError``/``ValueError`` naming the input; every gradient is checked with finite
differences (``verify_grad``), batched too; ``infer_shape`` and static shapes are
checked. A Bayesian linear regression's log-density runs alike on the ``py``, ``vm`` and
``cvm`` linkers, and the ``c`` linker refuses it (these Ops have no C code).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable
from opweave.tensor import linalg, slinalg
from opweave.tensor.slinalg import (
    Cholesky,
    CholeskySolve,
    Solve,
    SolveBase,
    SolveTriangular,
    cho_factor,
    cho_solve,
    cholesky,
    solve,
    solve_triangular,
)
from opweave.tensor.type import TensorType

PY = Mode(linker="py")
RNG = np.random.default_rng(42)
#: Relative tolerance of values against NumPy per dtype.
RTOL = {"float32": 2e-4, "float64": 1e-10}


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Variable:
    return TensorType(dtype, shape=shape)(name)


def run(inputs: Sequence[Variable], outputs: Any, *values: Any) -> Any:
    return opweave.function(list(inputs), outputs, mode=PY)(*values)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray], **kwargs: Any) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(3), mode=PY, **kwargs)


def spd(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    """Symmetric positive-definite matrices of ``shape`` (``(..., m, m)``)."""
    m = RNG.normal(size=shape)
    return (m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def well_conditioned(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    return (RNG.normal(size=shape) + 3 * np.eye(shape[-1])).astype(dtype)


def from_lower(a: np.ndarray) -> np.ndarray:
    return np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)


def from_upper(a: np.ndarray) -> np.ndarray:
    return np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2)


def check_infer_shape(inputs: Sequence[Variable], out: Variable, *values: Any) -> None:
    """``infer_shape`` gives the shape of the value, and compiled ``out.shape`` uses it."""
    node = out.owner
    shapes = [tuple(ot.shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)[node.outputs.index(out)]
    expected = run(inputs, out, *values).shape
    got = opweave.function(
        list(inputs),
        [ot.as_tensor_variable(s) for s in inferred],
        on_unused_input="ignore",
        mode=PY,
    )(*values)
    assert tuple(int(v) for v in got) == expected
    f = opweave.function(list(inputs), out.shape, on_unused_input="ignore", mode=PY)
    assert tuple(f(*values)) == expected
    assert not any(isinstance(n.op, Cholesky | SolveBase) for n in f.maker.fgraph.toposort())


# ====================================================================== names


def test_linalg_re_exports_the_slinalg_objects() -> None:
    for name in slinalg.__all__:
        assert getattr(linalg, name) is getattr(slinalg, name)
    assert ot.linalg is linalg and ot.linalg.solve is solve and "linalg" in ot.__all__


# ====================================================================== cholesky


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_cholesky_values(dtype: str, lower: bool, batch: tuple[int, ...]) -> None:
    a = spd((*batch, 4, 4), dtype)
    x = T(dtype, (None,) * a.ndim)
    got = run([x], cholesky(x, lower=lower), a)
    want = np.linalg.cholesky(a.astype("float64"))
    if not lower:
        want = np.swapaxes(want, -1, -2)
    assert got.dtype == dtype and got.shape == a.shape
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_cholesky_reads_only_its_triangle() -> None:
    a = spd((3, 4, 4))
    noise = RNG.normal(size=a.shape) * 100
    x = T("float64", (None, None, None))
    lower = run([x], cholesky(x), np.tril(a) + np.triu(noise, 1))
    upper = run([x], cholesky(x, lower=False), np.triu(a) + np.tril(noise, -1))
    np.testing.assert_allclose(lower, np.linalg.cholesky(a), rtol=1e-12)
    np.testing.assert_allclose(upper, np.swapaxes(np.linalg.cholesky(a), -1, -2), rtol=1e-12)


def test_cholesky_dtypes_and_static_shape() -> None:
    assert cholesky(T("float16", (3, 3))).type == TensorType("float32", shape=(3, 3))
    assert cholesky(T("int64", (2, None, None))).type == TensorType(
        "float64", shape=(2, None, None)
    )
    assert cholesky(T("int16", (None, None))).dtype == "float32"
    x = T("int64", (None, None))
    np.testing.assert_allclose(run([x], cholesky(x), np.array([[4, 2], [2, 5]])), [[2, 0], [1, 2]])


def test_cholesky_of_a_matrix_that_is_not_positive_definite_is_nan_in_that_matrix_only() -> None:
    a = spd((3, 3, 3))
    a[1] = -a[1]
    x = T("float64", (None, None, None))
    got = run([x], cholesky(x), a)
    assert np.isnan(got[1]).all()
    np.testing.assert_allclose(got[[0, 2]], np.linalg.cholesky(a[[0, 2]]), rtol=1e-12)


def test_cholesky_on_error_raise_names_the_matrix() -> None:
    a = spd((2, 3, 3))
    a[1, 0, 0] = -1.0
    x = T("float64", (None, None, None))
    f = opweave.function([x], cholesky(x, on_error="raise"), mode=PY)
    good = spd((2, 3, 3))
    np.testing.assert_allclose(f(good), np.linalg.cholesky(good), rtol=1e-12)
    with pytest.raises(
        np.linalg.LinAlgError, match=r"at batch index \(1,\) is not positive definite"
    ):
        f(a)
    g = opweave.function([y := ot.dmatrix("a")], cholesky(y, on_error="raise"), mode=PY)
    with pytest.raises(np.linalg.LinAlgError, match=r"Cholesky.*: the matrix is not positive"):
        g(-np.eye(2))


def test_cholesky_rejects_bad_inputs_naming_them() -> None:
    with pytest.raises(TypeError, match=r"Cholesky: the input x .* 1 dimensions.*at least 2"):
        cholesky(ot.dvector("v"))
    with pytest.raises(ValueError, match=r"Cholesky: the input x .* must be square.*\(3, 4\)"):
        cholesky(T("float64", (3, 4)))
    with pytest.raises(ValueError, match="on_error must be one of"):
        cholesky(ot.dmatrix("a"), on_error="ignore")  # type: ignore[arg-type]
    f = opweave.function([x := ot.dmatrix("a")], cholesky(x), mode=PY)
    with pytest.raises(
        ValueError, match=r"the input x must hold square matrices, got shape \(2, 3\)"
    ):
        f(np.ones((2, 3)))


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_cholesky_gradient(lower: bool, shape: tuple[int, ...]) -> None:
    verify(lambda a: cholesky(a, lower=lower), [spd(shape)])


def test_cholesky_gradient_float32() -> None:
    verify(cholesky, [spd((3, 3), "float32")])


def test_cholesky_infer_shape() -> None:
    x = T("float64", (None, None, None))
    check_infer_shape([x], cholesky(x), spd((2, 3, 3)))


# ====================================================================== solve


def _intended(a: np.ndarray, assume_a: str, lower: bool) -> np.ndarray:
    """The matrix that ``solve(a, ..., assume_a, lower)`` solves with."""
    if assume_a in ("sym", "her", "pos"):
        return from_lower(a) if lower else from_upper(a)
    if assume_a == "tridiagonal":
        return np.triu(np.tril(a, 1), -1)
    return a


ASSUME_A = ["gen", "sym", "her", "pos", "tridiagonal", "banded"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("assume_a", ASSUME_A)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("b_ndim", [1, 2])
def test_solve_values(dtype: str, assume_a: str, lower: bool, b_ndim: int) -> None:
    a = spd((4, 4), dtype) + np.triu(RNG.normal(size=(4, 4)), 1).astype(dtype) * (assume_a != "pos")
    b = RNG.normal(size=(4,) if b_ndim == 1 else (4, 2)).astype(dtype)
    x_a, x_b = T(dtype, (None, None), "a"), T(dtype, (None,) * b.ndim, "b")
    out = solve(x_a, x_b, assume_a=assume_a, lower=lower, b_ndim=b_ndim)
    got = run([x_a, x_b], out, a, b)
    want = np.linalg.solve(_intended(a.astype("float64"), assume_a, lower), b.astype("float64"))
    assert got.dtype == dtype and out.type.shape == (None,) * b.ndim
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 10, atol=RTOL[dtype])


@pytest.mark.parametrize(
    ("name", "short"),
    [("general", "gen"), ("symmetric", "sym"), ("hermitian", "her"), ("positive definite", "pos")],
)
def test_solve_long_names_are_the_short_ones(name: str, short: str) -> None:
    a, b = ot.dmatrix("a"), ot.dvector("b")
    assert solve(a, b, assume_a=name.upper()).owner.op == Solve(assume_a=short, b_ndim=1)


def test_solve_structures_handled_outside_solve() -> None:
    a_val, b_val = well_conditioned((4, 4)), RNG.normal(size=(4, 3))
    a, b = ot.dmatrix("a"), ot.dmatrix("b")
    lower = solve(a, b, assume_a="lower triangular")
    upper = solve(a, b, assume_a="upper triangular")
    diag = solve(a, b, assume_a="diagonal")
    diag_vec = solve(a, b[:, 0], assume_a="diagonal")
    transposed = solve(a, b, transposed=True)
    assert isinstance(lower.owner.op, SolveTriangular) and lower.owner.op.lower
    got = run([a, b], [lower, upper, diag, diag_vec, transposed], a_val, b_val)
    np.testing.assert_allclose(got[0], np.linalg.solve(np.tril(a_val), b_val), rtol=1e-10)
    np.testing.assert_allclose(got[1], np.linalg.solve(np.triu(a_val), b_val), rtol=1e-10)
    np.testing.assert_allclose(got[2], b_val / np.diag(a_val)[:, None], rtol=1e-12)
    np.testing.assert_allclose(got[3], b_val[:, 0] / np.diag(a_val), rtol=1e-12)
    np.testing.assert_allclose(got[4], np.linalg.solve(a_val.T, b_val), rtol=1e-10)


def test_solve_batches_and_broadcasts_batch_axes() -> None:
    a_val, bs = well_conditioned((2, 4, 4)), RNG.normal(size=(2, 4))
    a3, b2 = T("float64", (None, None, None), "a"), T("float64", (None, None), "b")
    # b_ndim=1: a batch of vectors; the default (2) takes b as one matrix for each a.
    vecs = run([a3, b2], solve(a3, b2, b_ndim=1), a_val, bs)
    np.testing.assert_allclose(vecs, np.linalg.solve(a_val, bs[..., None])[..., 0], rtol=1e-10)
    mat = RNG.normal(size=(4, 3))
    got = run([a3, b2], solve(a3, b2), a_val, mat)
    np.testing.assert_allclose(got, np.linalg.solve(a_val, mat), rtol=1e-10)
    # One matrix for a batch of right-hand sides: ``a`` is padded with a broadcastable axis.
    a2, b3 = T("float64", (None, None), "a"), T("float64", (None, None, None), "b")
    out = solve(a2, b3)
    assert out.type.shape == (None, None, None)
    rhs = RNG.normal(size=(5, 4, 2))
    np.testing.assert_allclose(run([a2, b3], out, a_val[0], rhs), np.linalg.solve(a_val[0], rhs))
    # Static batch lengths: the output knows them; known lengths that differ are refused.
    out = solve(T("float64", (2, 1, 4, 4), "a"), T("float64", (1, 3, 4), "b"), b_ndim=1)
    assert out.type.shape == (2, 3, 4)
    with pytest.raises(ValueError, match="incompatible static shapes"):
        solve(T("float64", (2, 4, 4), "a"), T("float64", (3, 4), "b"), b_ndim=1)


def test_solve_refuses_run_time_broadcasting_of_unknown_batch_axes() -> None:
    a, b = T("float64", (None, None, None), "a"), T("float64", (None, None), "b")
    f = opweave.function([a, b], solve(a, b, b_ndim=1), mode=PY)
    with pytest.raises(ValueError, match=r"batch shapes .* do not match on axis 0"):
        f(well_conditioned((3, 4, 4)), RNG.normal(size=(1, 4)))


def test_solve_of_a_singular_matrix_is_nan_in_that_matrix_only() -> None:
    a_val = well_conditioned((3, 3, 3))
    a_val[2] = 0.0
    b_val = RNG.normal(size=(3, 3))
    a, b = T("float64", (None, None, None), "a"), T("float64", (None, None), "b")
    got = run([a, b], solve(a, b, b_ndim=1), a_val, b_val)
    assert np.isnan(got[2]).all()
    np.testing.assert_allclose(got[:2], np.linalg.solve(a_val[:2], b_val[:2, :, None])[..., 0])
    pos = run([a, b], solve(a, b, b_ndim=1, assume_a="pos"), -spd((3, 3, 3)), b_val)
    assert np.isnan(pos).all()


def test_solve_rejects_bad_inputs_naming_them() -> None:
    a, b = ot.dmatrix("a"), ot.dvector("b")
    with pytest.raises(TypeError, match=r"Solve: the input a \(b\) .* at least 2 dimensions"):
        solve(b, b)
    with pytest.raises(TypeError, match=r"solve: the input b .* at least 1 dimensions \(a vector"):
        solve(a, ot.dscalar("s"))
    with pytest.raises(ValueError, match=r"Solve: the input a \(n\) must be square"):
        solve(T("float64", (3, 4), "n"), b)
    with pytest.raises(ValueError, match="b must have 3 rows"):
        solve(T("float64", (3, 3), "a"), T("float64", (4,), "b"))
    with pytest.raises(ValueError, match="invalid assume_a 'tri'"):
        solve(a, b, assume_a="tri")
    with pytest.raises(ValueError, match="b_ndim must be 1 or 2"):
        solve(a, b, b_ndim=3)
    with pytest.raises(TypeError, match=r"solve: the input b .* cannot be made a tensor"):
        solve(a, np.array(["x", "y"]))
    f = opweave.function([a, b], solve(a, b), mode=PY)
    with pytest.raises(ValueError, match=r"a has shape \(3, 3\) but b has \(4,\)"):
        f(np.eye(3), np.ones(4))


def test_solve_ops_compare_by_props() -> None:
    assert Solve(assume_a="Symmetric", b_ndim=1) == Solve(assume_a="sym", b_ndim=1)
    assert Solve(assume_a="sym", b_ndim=1) != Solve(assume_a="sym", b_ndim=2)
    assert hash(SolveTriangular(lower=True, b_ndim=2)) == hash(
        SolveTriangular(lower=True, b_ndim=2)
    )
    assert "assume_a='pos'" in str(Solve(assume_a="pos", b_ndim=1))


def test_solve_base_is_the_general_solve() -> None:
    a_val, b_val = well_conditioned((2, 3, 3)), RNG.normal(size=(2, 3, 2))
    a, b = T("float64", (None, None, None), "a"), T("float64", (None, None, None), "b")
    out = SolveBase(b_ndim=2)(a, b)
    np.testing.assert_allclose(run([a, b], out, a_val, b_val), np.linalg.solve(a_val, b_val))
    verify(lambda x, y: SolveBase(b_ndim=2)(x, y), [a_val, b_val])


@pytest.mark.parametrize("assume_a", ASSUME_A)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("b_shape", [(4,), (4, 2)])
def test_solve_gradient(assume_a: str, lower: bool, b_shape: tuple[int, ...]) -> None:
    # ``a`` is not symmetric: the gradient must account for the triangle the solver reads.
    a = spd((4, 4)) + 0.3 * RNG.normal(size=(4, 4))
    verify(
        lambda x, y: solve(x, y, assume_a=assume_a, lower=lower),
        [a, RNG.normal(size=b_shape)],
    )


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "b_ndim"),
    [((2, 3, 3), (2, 3), 1), ((3, 3), (4, 3), 1), ((2, 3, 3), (3, 2), 2), ((3, 3), (2, 3, 2), 2)],
)
def test_batched_solve_gradient(
    a_shape: tuple[int, ...], b_shape: tuple[int, ...], b_ndim: int
) -> None:
    verify(
        lambda x, y: solve(x, y, b_ndim=b_ndim),
        [well_conditioned(a_shape), RNG.normal(size=b_shape)],
    )


def test_solve_gradient_through_transposed_and_float32() -> None:
    verify(
        lambda x, y: solve(x, y, transposed=True),
        [well_conditioned((3, 3)), RNG.normal(size=(3, 2))],
    )
    verify(
        lambda x, y: solve(x, y, assume_a="pos"),
        [spd((3, 3), "float32"), RNG.normal(size=3).astype("float32")],
    )


def test_solve_infer_shape() -> None:
    a, b = T("float64", (None, None, None), "a"), T("float64", (None, None), "b")
    check_infer_shape([a, b], solve(a, b, b_ndim=1), well_conditioned((2, 3, 3)), np.ones((2, 3)))
    a2, b3 = T("float64", (None, None), "a"), T("float64", (None, None, None), "b")
    check_infer_shape([a2, b3], solve(a2, b3), well_conditioned((3, 3)), np.ones((5, 3, 2)))


# ====================================================================== solve_triangular


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
def test_solve_triangular_values(dtype: str, lower: bool, unit_diagonal: bool, trans: Any) -> None:
    a_val = well_conditioned((2, 4, 4), dtype)
    b_val = RNG.normal(size=(2, 4, 3)).astype(dtype)
    a, b = T(dtype, (None, None, None), "a"), T(dtype, (None, None, None), "b")
    out = solve_triangular(a, b, lower=lower, unit_diagonal=unit_diagonal, trans=trans)
    tri = np.tril(a_val) if lower else np.triu(a_val)
    tri = tri.astype("float64")
    if unit_diagonal:
        tri[..., np.arange(4), np.arange(4)] = 1.0
    if trans in (1, 2, "T", "C"):
        tri = np.swapaxes(tri, -1, -2)
    got = run([a, b], out, a_val, b_val)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got, np.linalg.solve(tri, b_val), rtol=RTOL[dtype] * 10, atol=RTOL[dtype]
    )


def test_solve_triangular_zero_on_the_diagonal_is_nan_and_bad_trans_is_refused() -> None:
    a_val = np.triu(well_conditioned((3, 3)))
    a_val[1, 1] = 0.0
    a, b = ot.dmatrix("a"), ot.dvector("b")
    assert np.isnan(run([a, b], solve_triangular(a, b), a_val, np.ones(3))).all()
    with pytest.raises(ValueError, match=r"trans must be 0, 1, 2, 'N', 'T' or 'C', got 'X'"):
        solve_triangular(a, b, trans="X")


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
@pytest.mark.parametrize("trans", [0, 1])
def test_solve_triangular_gradient(lower: bool, unit_diagonal: bool, trans: int) -> None:
    verify(
        lambda x, y: solve_triangular(x, y, lower=lower, unit_diagonal=unit_diagonal, trans=trans),
        [well_conditioned((4, 4)), RNG.normal(size=(4, 2))],
    )
    verify(
        lambda x, y: solve_triangular(x, y, lower=lower, b_ndim=1),
        [well_conditioned((2, 3, 3)), RNG.normal(size=(2, 3))],
    )


# ====================================================================== cho_solve / cho_factor


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cho_factor_and_cho_solve(lower: bool, dtype: str) -> None:
    a_val, b_val = spd((2, 4, 4), dtype), RNG.normal(size=(2, 4)).astype(dtype)
    a, b = T(dtype, (None, None, None), "a"), T(dtype, (None, None), "b")
    c, flag = cho_factor(a, lower=lower)
    assert flag is lower
    assert cho_factor(a)[1] is False  # SciPy's default: the upper factor
    out = cho_solve((c, flag), b, b_ndim=1)
    assert isinstance(out.owner.op, CholeskySolve)
    got = run([a, b], out, a_val, b_val)
    want = np.linalg.solve(a_val.astype("float64"), b_val.astype("float64")[..., None])[..., 0]
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * 10, atol=RTOL[dtype])


def test_cho_solve_reads_one_triangle_of_the_factor_and_checks_its_argument() -> None:
    a_val = spd((3, 3))
    factor = np.linalg.cholesky(a_val)
    c, b = ot.dmatrix("c"), ot.dvector("b")
    garbage = factor + np.triu(RNG.normal(size=(3, 3)), 1)
    got = run([c, b], cho_solve((c, True), b), garbage, np.ones(3))
    np.testing.assert_allclose(got, np.linalg.solve(a_val, np.ones(3)), rtol=1e-10)
    with pytest.raises(TypeError, match=r"c_and_lower must be a pair \(c, lower\)"):
        cho_solve(c, b)  # type: ignore[arg-type]


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve_gradient(lower: bool) -> None:
    factor = np.linalg.cholesky(spd((4, 4)))
    verify(
        lambda c, y: cho_solve((c, lower), y),
        [factor if lower else factor.T, RNG.normal(size=(4, 2))],
    )


def test_gradient_through_cholesky_and_cho_solve_of_its_factor() -> None:
    # d/dA of b^T A^-1 b computed through the factor equals the closed form -A^-T b b^T A^-T.
    a_val, b_val = spd((4, 4)), RNG.normal(size=4)
    a, b = ot.dmatrix("a"), ot.dvector("b")
    cost = ot.dot(b, cho_solve((cholesky(a), True), b))
    got = run([a, b], opweave.grad(cost, a), a_val, b_val)
    z = np.linalg.solve(a_val, b_val)
    want = -np.outer(z, z)
    # Only the lower triangle of ``a`` is read: its symmetric gradient is folded onto it.
    np.testing.assert_allclose(got, np.tril(want + want.T) - np.diag(np.diag(want)), rtol=1e-8)


# ====================================================================== a small model


def _logp_graph() -> tuple[list[Variable], Variable]:
    """The log marginal likelihood of a Bayesian linear regression:
    ``y ~ N(0, alpha^2 X X^T + sigma^2 I)`` (the weights integrated out)."""
    X, y = ot.dmatrix("X"), ot.dvector("y")
    alpha, sigma = ot.dscalar("alpha"), ot.dscalar("sigma")
    n = y.shape[0]
    cov = alpha**2 * ot.dot(X, X.T) + sigma**2 * ot.eye(n)
    chol = cholesky(cov)
    z = solve_triangular(chol, y, lower=True)
    quad = ot.dot(y, solve(cov, y, assume_a="pos"))
    logdet = 2 * ot.sum(ot.log(ot.diagonal(chol)))
    logp = -0.5 * (quad + logdet + n * np.log(2 * np.pi))
    # The two ways of computing the quadratic form agree: add their difference (0) once.
    logp = logp + (ot.dot(z, z) - quad)
    return [X, y, alpha, sigma], logp


def _logp_numpy(X: np.ndarray, y: np.ndarray, alpha: float, sigma: float) -> float:
    cov = alpha**2 * X @ X.T + sigma**2 * np.eye(len(y))
    _, logdet = np.linalg.slogdet(cov)
    return float(-0.5 * (y @ np.linalg.solve(cov, y) + logdet + len(y) * np.log(2 * np.pi)))


def test_bayesian_linear_regression_log_density_on_every_linker() -> None:
    pytest.importorskip("opweave_c")
    pytest.importorskip("scipy.linalg")

    inputs, logp = _logp_graph()
    alpha, sigma = inputs[2], inputs[3]
    outputs = [logp, *opweave.grad(logp, [alpha, sigma])]
    X_val = RNG.normal(size=(8, 3))
    y_val = X_val @ RNG.normal(size=3) + 0.1 * RNG.normal(size=8)
    args = (X_val, y_val, 1.3, 0.4)
    want = _logp_numpy(*args)
    eps = 1e-6
    d_alpha = (
        _logp_numpy(X_val, y_val, 1.3 + eps, 0.4) - _logp_numpy(X_val, y_val, 1.3 - eps, 0.4)
    ) / (2 * eps)
    d_sigma = (
        _logp_numpy(X_val, y_val, 1.3, 0.4 + eps) - _logp_numpy(X_val, y_val, 1.3, 0.4 - eps)
    ) / (2 * eps)
    results = {}
    for linker in ("py", "vm", "cvm"):
        f = opweave.function(inputs, outputs, mode=Mode(linker=linker))
        results[linker] = [float(v) for v in f(*args)]
        if linker == "cvm":
            # With SciPy's LAPACK, the linear-algebra nodes run in C like the others.
            order = f.maker.fgraph.toposort()
            in_c = set(f.fn.c_nodes)
            linalg_nodes = [
                i for i, n in enumerate(order) if isinstance(n.op, Cholesky | SolveBase)
            ]
            assert linalg_nodes and set(linalg_nodes) <= in_c
    results["c"] = [
        float(v) for v in opweave.function(inputs, outputs, mode=Mode(linker="c"))(*args)
    ]
    for linker, (value, g_alpha, g_sigma) in results.items():
        np.testing.assert_allclose(value, want, rtol=1e-10, err_msg=linker)
        np.testing.assert_allclose(
            [g_alpha, g_sigma], [d_alpha, d_sigma], rtol=1e-5, err_msg=linker
        )
        np.testing.assert_allclose(
            [value, g_alpha, g_sigma], results["py"], rtol=1e-12, err_msg=linker
        )
