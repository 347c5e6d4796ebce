"""``opweave.tensor.nlinalg`` (and its ``linalg`` re-exports): inverses, determinants,
decompositions, norms and products, with PyTensor's names and semantics.

Values are compared with NumPy over float32/float64, batched and not; a singular matrix
raises a clear ``LinAlgError`` where NumPy's routine does; bad inputs raise
``TypeError``/``ValueError`` naming the input; every differentiable Op's gradient is
checked with finite differences (``verify_grad``), batched too, and the others give a
NullType gradient; ``infer_shape`` and static shapes are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import NullTypeGradError, Rop, verify_grad
from opweave.graph.basic import Variable
from opweave.graph.type import NullType
from opweave.tensor import linalg, nlinalg
from opweave.tensor.nlinalg import (
    QR,
    SVD,
    Det,
    Eig,
    Eigh,
    Lstsq,
    MatrixInverse,
    MatrixPinv,
    SLogDet,
    TensorInv,
    det,
    eig,
    eigh,
    inv,
    kron,
    lstsq,
    matrix_dot,
    matrix_inverse,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    svd,
    tensorinv,
    tensorsolve,
    trace,
)
from opweave.tensor.type import TensorType

PY = Mode(linker="py")
RNG = np.random.default_rng(11)
RTOL = {"float32": 2e-4, "float64": 1e-10}
LINALG_OPS = (MatrixInverse, Det, SLogDet, Eig, Eigh, SVD, QR, MatrixPinv, TensorInv)


def T(dtype: str, shape: tuple[int | None, ...], name: str = "x") -> Variable:
    return TensorType(dtype, shape=shape)(name)


def dyn(dtype: str, ndim: int, name: str = "x") -> Variable:
    return T(dtype, (None,) * ndim, name)


def run(inputs: Sequence[Variable], outputs: Any, *values: Any) -> Any:
    return opweave.function(list(inputs), outputs, mode=PY)(*values)


def verify(fun: Callable[..., Any], pt: Sequence[np.ndarray], **kwargs: Any) -> None:
    verify_grad(fun, list(pt), rng=np.random.default_rng(5), mode=PY, **kwargs)


def well_conditioned(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    return (RNG.normal(size=shape) + 3 * np.eye(shape[-1])).astype(dtype)


def symmetric(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    m = RNG.normal(size=shape)
    return (m + np.swapaxes(m, -1, -2)).astype(dtype)


def spd(shape: tuple[int, ...]) -> np.ndarray:
    m = RNG.normal(size=shape)
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def close(got: np.ndarray, want: np.ndarray, dtype: str, scale: float = 10) -> None:
    np.testing.assert_allclose(got, want, rtol=RTOL[dtype] * scale, atol=RTOL[dtype] * scale)


def check_infer_shape(inputs: Sequence[Variable], out: Variable, *values: Any) -> None:
    """``infer_shape`` gives the shape of the value, and compiled ``out.shape`` uses it."""
    node = out.owner
    shapes = [tuple(ot.shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    inferred = node.op.infer_shape(None, node, shapes)[node.outputs.index(out)]
    expected = run(inputs, out, *values).shape
    exprs = [ot.as_tensor_variable(s) for s in inferred]
    if exprs:
        got = opweave.function(list(inputs), exprs, on_unused_input="ignore", mode=PY)(*values)
        assert tuple(int(v) for v in got) == expected
    f = opweave.function(list(inputs), out.shape, on_unused_input="ignore", mode=PY)
    assert tuple(f(*values)) == expected
    assert not any(isinstance(n.op, LINALG_OPS) for n in f.maker.fgraph.toposort())


# ====================================================================== names


def test_linalg_re_exports_the_nlinalg_objects() -> None:
    for name in nlinalg.__all__:
        assert getattr(linalg, name) is getattr(nlinalg, name)
    assert inv is matrix_inverse and isinstance(inv, MatrixInverse) and isinstance(det, Det)
    assert isinstance(lstsq, Lstsq) and ot.linalg.det is det


# ====================================================================== inverse, determinant


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_inverse_and_determinants(dtype: str, batch: tuple[int, ...]) -> None:
    a = well_conditioned((*batch, 4, 4), dtype)
    a[..., 0, :] *= -1  # some negative determinants
    x = dyn(dtype, a.ndim)
    sign, logabsdet = slogdet(x)
    got = run([x], [inv(x), det(x), sign, logabsdet], a)
    ref = a.astype("float64")
    want_sign, want_log = np.linalg.slogdet(ref)
    for value in got:
        assert value.dtype == dtype
    close(got[0], np.linalg.inv(ref), dtype)
    close(got[1], np.linalg.det(ref), dtype, scale=100)
    np.testing.assert_array_equal(got[2], want_sign)
    close(got[3], want_log, dtype)
    assert got[1].shape == batch and got[3].shape == batch


def test_output_dtypes_follow_pytensor() -> None:
    assert inv(T("int64", (3, 3))).type == TensorType("float64", shape=(3, 3))
    assert inv(T("int16", (None, None))).dtype == "float32"
    assert inv(T("float16", (None, None))).dtype == "float32"
    assert inv(T("uint8", (None, None))).dtype == "float32"
    assert [v.dtype for v in slogdet(T("complex64", (None, None)))] == ["complex64", "float32"]
    assert [v.dtype for v in eig(T("float32", (None, None)))] == ["complex64", "complex64"]
    assert [v.dtype for v in eig(T("int32", (None, None)))] == ["complex128", "complex128"]
    assert [v.dtype for v in svd(T("complex128", (None, None)))] == [
        "complex128",
        "float64",
        "complex128",
    ]
    x = T("int64", (None, None))
    np.testing.assert_allclose(run([x], inv(x), np.array([[2, 0], [0, 4]])), [[0.5, 0], [0, 0.25]])


def test_static_shapes() -> None:
    assert inv(T("float64", (2, 3, None))).type.shape == (2, 3, 3)
    assert det(T("float64", (2, None, None))).type.shape == (2,)
    assert [v.type.shape for v in slogdet(T("float64", (5, 3, 3)))] == [(5,), (5,)]
    assert [v.type.shape for v in eigh(T("float64", (None, 4)))] == [(4,), (4, 4)]
    assert [v.type.shape for v in eig(T("float64", (2, 3, 3)))] == [(2, 3), (2, 3, 3)]
    assert [v.type.shape for v in svd(T("float64", (5, 3)))] == [(5, 5), (3,), (3, 3)]
    assert [v.type.shape for v in svd(T("float64", (5, 3)), full_matrices=False)] == [
        (5, 3),
        (3,),
        (3, 3),
    ]
    assert svd(T("float64", (2, 3, 5)), compute_uv=False).type.shape == (2, 3)
    assert [v.type.shape for v in qr(T("float64", (5, 3)))] == [(5, 5), (5, 3)]
    assert [v.type.shape for v in qr(T("float64", (5, 3)), mode="economic")] == [(5, 3), (3, 3)]
    assert qr(T("float64", (5, 3)), mode="r").type.shape == (5, 3)
    assert [v.type.shape for v in qr(T("float64", (5, 3)), mode="raw")] == [(5, 3), (3,), (3, 3)]
    assert pinv(T("float64", (2, 5, 3))).type.shape == (2, 3, 5)
    assert tensorinv(T("float64", (2, 3, 6))).type.shape == (6, 2, 3)
    assert tensorsolve(T("float64", (2, 3, 6)), T("float64", (2, 3))).type.shape == (6,)


def test_complex_inputs_compute_as_numpy() -> None:
    h = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
    h = h @ h.conj().T + np.eye(3)
    x = T("complex128", (None, None))
    w, v = eigh(x)
    got = run([x], [inv(x), det(x), w, v], h)
    np.testing.assert_allclose(got[0], np.linalg.inv(h), rtol=1e-10)
    np.testing.assert_allclose(got[1], np.linalg.det(h), rtol=1e-10)
    np.testing.assert_allclose(got[2], np.linalg.eigvalsh(h), rtol=1e-10)
    np.testing.assert_allclose(got[3] @ np.diag(got[2]) @ got[3].conj().T, h, atol=1e-10)
    node = det(x).owner
    (term,) = node.op.L_op(node.inputs, node.outputs, [ot.zscalar("g")])
    assert isinstance(term.type, NullType) and "complex linear algebra" in term.type.why_null


def test_a_singular_matrix_has_no_inverse() -> None:
    a = well_conditioned((3, 3, 3))
    a[1] = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 0.0]])
    x = dyn("float64", 3)
    f = opweave.function([x], inv(x), mode=PY)
    with pytest.raises(np.linalg.LinAlgError, match=r"at batch index \(1,\) is singular"):
        f(a)
    g = opweave.function([y := ot.dmatrix("y")], inv(y), mode=PY)
    with pytest.raises(np.linalg.LinAlgError, match=r"MatrixInverse.*the matrix is singular"):
        g(np.zeros((2, 2)))
    # The determinant of a singular matrix is 0 and its slogdet (0, -inf), as in NumPy.
    sign, logabsdet = slogdet(x)
    got = run([x], [det(x), sign, logabsdet], a)
    assert got[0][1] == 0.0 and got[1][1] == 0.0 and got[2][1] == -np.inf


@pytest.mark.parametrize(
    "fn",
    [inv, det, slogdet, eig, eigh, lambda a: matrix_power(a, 2), lambda a: pinv(a, hermitian=True)],
)
def test_square_matrix_functions_reject_bad_inputs_naming_them(fn: Callable[..., Any]) -> None:
    with pytest.raises(TypeError, match=r"the input (x|a|M) \(v\) .* 1 dimensions.*at least 2"):
        fn(ot.dvector("v"))
    with pytest.raises(ValueError, match=r"the input (x|a|M) \(n\) must be square.*\(3, 4\)"):
        fn(T("float64", (3, 4), "n"))


def test_run_time_non_square_input_is_a_value_error() -> None:
    x = ot.dmatrix("x")
    for out in (inv(x), det(x), eigh(x)[0]):
        f = opweave.function([x], out, mode=PY)
        with pytest.raises(ValueError, match=r"must hold square matrices, got shape \(2, 3\)"):
            f(np.ones((2, 3)))


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_inverse_and_determinant_gradients(shape: tuple[int, ...]) -> None:
    a = well_conditioned(shape)
    verify(inv, [a])
    verify(det, [a])
    verify(lambda x: slogdet(x)[1], [a])
    verify(lambda x: slogdet(x)[0] + slogdet(x)[1], [a])


def test_inverse_gradient_float32_and_r_op() -> None:
    verify(inv, [well_conditioned((3, 3), "float32")])
    x, v = ot.dmatrix("x"), ot.dmatrix("v")
    a, e = well_conditioned((3, 3)), RNG.normal(size=(3, 3))
    got = run([x, v], Rop(inv(x), x, v), a, e)
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(got, -ai @ e @ ai, rtol=1e-10)


def test_inverse_determinant_infer_shape() -> None:
    x = dyn("float64", 3)
    a = well_conditioned((2, 3, 3))
    check_infer_shape([x], inv(x), a)
    check_infer_shape([x], det(x), a)
    check_infer_shape([x], slogdet(x)[1], a)


# ====================================================================== eigenvalues


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_eigh_values(dtype: str, lower: bool, batch: tuple[int, ...]) -> None:
    a = symmetric((*batch, 4, 4), dtype)
    noise = (RNG.normal(size=a.shape) * 10).astype(dtype)
    given = np.tril(a) + np.triu(noise, 1) if lower else np.triu(a) + np.tril(noise, -1)
    x = dyn(dtype, a.ndim)
    w, v = run([x], eigh(x, lower=lower), given)
    assert w.dtype == dtype and v.dtype == dtype
    close(w, np.linalg.eigvalsh(a.astype("float64")), dtype, scale=100)
    close(v @ (w[..., :, None] * np.swapaxes(v, -1, -2)), a, dtype, scale=100)


def test_generalized_eigh() -> None:
    a, b = symmetric((2, 4, 4)), spd((2, 4, 4))
    x, y = dyn("float64", 3, "a"), dyn("float64", 3, "b")
    w, v = run([x, y], eigh(x, y), a, b)
    want = np.sort(np.linalg.eigvals(np.linalg.solve(b, a)).real, axis=-1)
    np.testing.assert_allclose(w, want, rtol=1e-8)
    np.testing.assert_allclose(a @ v, b @ v * w[..., None, :], atol=1e-8)
    np.testing.assert_allclose(
        np.swapaxes(v, -1, -2) @ b @ v, np.broadcast_to(np.eye(4), (2, 4, 4)), atol=1e-10
    )


def test_eigh_arguments() -> None:
    x = ot.dmatrix("x")
    with pytest.warns(DeprecationWarning, match="UPLO is deprecated"):
        assert eigh(x, UPLO="U")[0].owner.op == Eigh(lower=False)
    with pytest.raises(ValueError, match="invalid driver 'xyz'"):
        eigh(x, driver="xyz")
    assert eigh(x, driver="evd")[0].owner.op == Eigh()
    with pytest.raises(ValueError, match="must have the same number of dimensions"):
        eigh(x, dyn("float64", 3))


def test_eig_values_and_no_gradient() -> None:
    a = RNG.normal(size=(2, 4, 4)).astype("float32")
    x = dyn("float32", 3)
    w, v = run([x], eig(x), a)
    assert w.dtype == v.dtype == np.complex64
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=1e-4)
    np.testing.assert_allclose(
        np.sort_complex(w.ravel()), np.sort_complex(np.linalg.eigvals(a).ravel()), rtol=1e-4
    )
    node = eig(x)[0].owner
    (term,) = node.op.L_op(node.inputs, node.outputs, [ot.ctensor3("gw"), ot.ctensor3("gv")])
    assert isinstance(term.type, NullType) and "use eigh" in term.type.why_null


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_gradients(lower: bool) -> None:
    a = symmetric((4, 4)) + np.diag([0.0, 3.0, 6.0, 9.0])  # well separated eigenvalues
    verify(lambda x: eigh(x, lower=lower)[0], [a])
    verify(lambda x: eigh(x, lower=lower)[1], [a])
    verify(lambda x: eigh(x, lower=lower)[1] * 2 + ot.sum(eigh(x, lower=lower)[0]), [a])
    verify(lambda x: eigh(x, lower=lower)[1], [np.stack([a, a + np.diag([1.0, 0.0, 2.0, 0.0])])])


def test_generalized_eigh_gradients() -> None:
    a = symmetric((3, 3)) + np.diag([0.0, 4.0, 8.0])
    b = spd((3, 3))
    verify(lambda x, y: eigh(x, y)[0], [a, b])
    verify(lambda x, y: eigh(x, y)[1], [a, b])
    verify(lambda x, y: eigh(x, y, lower=False)[1], [a, b])


def test_eigh_infer_shape() -> None:
    x = dyn("float64", 3)
    check_infer_shape([x], eigh(x)[0], symmetric((2, 3, 3)))
    check_infer_shape([x], eigh(x)[1], symmetric((2, 3, 3)))
    check_infer_shape([x], eig(x)[0], symmetric((2, 3, 3)))


# ====================================================================== SVD


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_values(dtype: str, shape: tuple[int, ...], full_matrices: bool) -> None:
    a = RNG.normal(size=shape).astype(dtype)
    x = dyn(dtype, a.ndim)
    u, s, vt = run([x], svd(x, full_matrices=full_matrices), a)
    s_only = run([x], svd(x, compute_uv=False), a)
    k = min(shape[-2:])
    assert u.shape == (*shape[:-1], shape[-2] if full_matrices else k)
    assert vt.shape == (*shape[:-2], shape[-1] if full_matrices else k, shape[-1])
    close(s, np.linalg.svd(a.astype("float64"), compute_uv=False), dtype)
    close(s_only, s, dtype)
    close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, dtype, scale=100)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_gradients(shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape)
    verify(lambda x: svd(x, compute_uv=False), [a])
    verify(lambda x: svd(x)[1], [a])  # full_matrices, but only s is used
    verify(lambda x: svd(x, full_matrices=False)[0], [a])
    verify(lambda x: svd(x, full_matrices=False)[2], [a])
    verify(
        lambda x: ot.sum(ot.concatenate([ot.flatten(o) for o in svd(x, full_matrices=False)])), [a]
    )


def test_svd_gradients_with_unknown_static_shapes_agree() -> None:
    for shape in [(4, 3), (3, 4), (3, 3)]:
        a = RNG.normal(size=shape)
        weights = [RNG.normal(size=(shape[0], min(shape))), RNG.normal(size=(min(shape), shape[1]))]
        grads = []
        for static in (shape, (None, None)):
            x = T("float64", static)
            u, _, vt = svd(x, full_matrices=False)
            cost = ot.sum(u * weights[0]) + ot.sum(vt * weights[1])
            grads.append(run([x], opweave.grad(cost, x), a))
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_svd_full_matrices_gradient_through_u_is_not_defined() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(NullTypeGradError, match="full_matrices=True"):
        opweave.grad(ot.sum(svd(x)[0]), x)


def test_svd_infer_shape() -> None:
    x = dyn("float64", 3)
    a = RNG.normal(size=(2, 5, 3))
    for full_matrices in (True, False):
        for out in svd(x, full_matrices=full_matrices):
            check_infer_shape([x], out, a)
    check_infer_shape([x], svd(x, compute_uv=False), a)


# ====================================================================== QR


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3)])
def test_qr_values(dtype: str, shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape).astype(dtype)
    x = dyn(dtype, a.ndim)
    m, n = shape[-2:]
    k = min(m, n)
    q, r = run([x], qr(x), a)
    qe, re_ = run([x], qr(x, mode="reduced"), a)
    r_only = run([x], qr(x, mode="r"), a)
    h, tau, r_raw = run([x], qr(x, mode="raw"), a)
    assert q.shape == (*shape[:-2], m, m) and r.shape == shape
    assert qe.shape == (*shape[:-2], m, k) and re_.shape == (*shape[:-2], k, n)
    close(q @ r, a, dtype, scale=100)
    close(qe @ re_, a, dtype, scale=100)
    close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(m), q.shape), dtype, scale=100)
    # mode "r" is SciPy's: R padded with zero rows to (m, n); "raw" is LAPACK's layout.
    assert r_only.shape == shape
    close(r_only, r, dtype)
    want_h, want_tau = np.linalg.qr(a, mode="raw")
    close(h, np.swapaxes(want_h, -1, -2), dtype)
    close(tau, want_tau, dtype)
    close(r_raw, re_, dtype)


def test_qr_arguments() -> None:
    x = ot.dmatrix("x")
    assert qr(x, mode="complete")[0].owner.op == QR("full")
    with pytest.raises(ValueError, match="pivoting=True is not supported"):
        qr(x, pivoting=True)
    with pytest.raises(ValueError, match="invalid mode 'q'"):
        qr(x, mode="q")  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_qr_gradients(shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape) + np.eye(*shape) * 2
    verify(lambda x: qr(x, mode="economic")[0], [a])
    verify(lambda x: qr(x, mode="economic")[1], [a])
    verify(lambda x: qr(x, mode="r"), [a])
    verify(lambda x: qr(x)[1], [a])
    if shape[0] <= shape[1]:
        verify(lambda x: qr(x)[0], [a])
    verify(lambda x: qr(x, mode="economic")[0], [np.stack([a, a * 2])])


def test_qr_gradients_with_unknown_static_shapes_agree() -> None:
    for shape in [(5, 3), (3, 5)]:
        a = RNG.normal(size=shape)
        w_r, w_q = RNG.normal(size=shape), RNG.normal(size=(shape[0], shape[0]))
        grads = []
        for static in (shape, (None, None)):
            x = T("float64", static)
            q, r = qr(x)
            cost = ot.sum(r * w_r)
            if shape[0] <= shape[1]:  # Q of a tall matrix has columns without a gradient
                cost = cost + ot.sum(q * w_q)
            grads.append(run([x], opweave.grad(cost, x), a))
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_qr_gradients_that_are_not_defined() -> None:
    tall = T("float64", (5, 3))
    with pytest.raises(NullTypeGradError, match="tall matrix is not defined"):
        opweave.grad(ot.sum(qr(tall)[0]), tall)
    with pytest.raises(NullTypeGradError, match="raw"):
        opweave.grad(ot.sum(qr(tall, mode="raw")[2]), tall)


def test_qr_infer_shape() -> None:
    x = dyn("float64", 3)
    a = RNG.normal(size=(2, 5, 3))
    for mode in ("full", "economic", "raw"):
        for out in qr(x, mode=mode):
            check_infer_shape([x], out, a)
    check_infer_shape([x], qr(x, mode="r"), a)


# ====================================================================== pinv, lstsq, tensors


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 3, 5)])
def test_pinv_values(dtype: str, shape: tuple[int, ...]) -> None:
    a = RNG.normal(size=shape).astype(dtype)
    x = dyn(dtype, a.ndim)
    got = run([x], pinv(x), a)
    close(got, np.linalg.pinv(a.astype("float64")), dtype, scale=100)
    s = symmetric((3, 3), dtype)
    given = np.tril(s) + np.triu(RNG.normal(size=(3, 3)).astype(dtype), 1)
    y = dyn(dtype, 2)
    close(run([y], pinv(y, hermitian=True), given), np.linalg.pinv(s.astype("float64")), dtype, 100)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_pinv_gradient(shape: tuple[int, ...]) -> None:
    verify(pinv, [RNG.normal(size=shape)])


def test_hermitian_pinv_gradient_and_infer_shape() -> None:
    verify(lambda x: pinv(x, hermitian=True), [spd((3, 3))])
    x = dyn("float64", 3)
    check_infer_shape([x], pinv(x), RNG.normal(size=(2, 5, 3)))


@pytest.mark.parametrize("b_shape", [(6,), (6, 2)])
@pytest.mark.parametrize("rcond", [None, 1e-3])
def test_lstsq(b_shape: tuple[int, ...], rcond: float | None) -> None:
    a_val, b_val = RNG.normal(size=(6, 3)), RNG.normal(size=b_shape)
    a, b = ot.dmatrix("a"), dyn("float64", len(b_shape), "b")
    outs = lstsq(a, b) if rcond is None else lstsq(a, b, rcond)
    got = run([a, b], outs, a_val, b_val)
    want = np.linalg.lstsq(a_val, b_val, rcond=rcond)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-10)
    assert got[2].dtype == np.int32 and outs[0].ndim == len(b_shape)
    with pytest.raises(NullTypeGradError, match="lstsq is not differentiable"):
        opweave.grad(ot.sum(outs[0]), a)
    with pytest.raises(
        TypeError, match=r"Lstsq: the input a .* 2 dimensions \(Lstsq does not batch\)"
    ):
        lstsq(dyn("float64", 3), b)
    with pytest.raises(TypeError, match=r"rcond .* expected a 0-d real number"):
        lstsq(a, b, ot.dvector("r"))


def test_tensorinv_and_tensorsolve() -> None:
    a_val = RNG.normal(size=(2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3
    a = dyn("float64", 3, "a")
    got = run([a], tensorinv(a, ind=2), a_val)
    np.testing.assert_allclose(got, np.linalg.tensorinv(a_val, ind=2), rtol=1e-10)
    b_val = RNG.normal(size=(2, 3))
    b = dyn("float64", 2, "b")
    sol = run([a, b], tensorsolve(a, b), a_val, b_val)
    np.testing.assert_allclose(sol, np.linalg.tensorsolve(a_val, b_val), rtol=1e-10)
    moved = np.moveaxis(a_val, -1, 0)  # axes=(0,) moves that axis back to the end
    got = run([a, b], tensorsolve(a, b, axes=(0,)), moved, b_val)
    np.testing.assert_allclose(got, np.linalg.tensorsolve(moved, b_val, axes=(0,)), rtol=1e-10)
    np.testing.assert_allclose(got, sol, rtol=1e-10)
    verify(lambda x: tensorinv(x, ind=2), [a_val])
    check_infer_shape([a], tensorinv(a, ind=1), a_val.reshape(6, 2, 3))
    check_infer_shape([a, b], tensorsolve(a, b, axes=(0,)), moved, b_val)
    with pytest.raises(ValueError, match=r"axes \(3,\) are out of range"):
        tensorsolve(a, b, axes=(3,))
    with pytest.raises(ValueError, match="ind must be a positive int"):
        tensorinv(a, ind=0)
    with pytest.raises(TypeError, match="must have more dimensions than b"):
        tensorsolve(b, a)
    f = opweave.function([a], tensorinv(a), mode=PY)
    with pytest.raises(np.linalg.LinAlgError, match=r"TensorInv.*has no inverse"):
        f(np.zeros((2, 3, 6)))


# ====================================================================== functions


def test_trace_and_matrix_dot() -> None:
    a = RNG.normal(size=(2, 3, 3))
    x = dyn("float64", 3)
    np.testing.assert_allclose(run([x], trace(x), a), np.trace(a, axis1=-2, axis2=-1))
    verify(trace, [a])
    m = [RNG.normal(size=s) for s in [(2, 3), (3, 4), (4, 2)]]
    xs = [dyn("float64", 2, f"m{i}") for i in range(3)]
    np.testing.assert_allclose(run(xs, matrix_dot(*xs), *m), m[0] @ m[1] @ m[2])
    with pytest.raises(TypeError, match="trace: the input X"):
        trace(ot.dvector("v"))


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3, 5, 8])
def test_matrix_power(n: int) -> None:
    a = well_conditioned((2, 3, 3)) / 3
    x = dyn("float64", 3)
    np.testing.assert_allclose(
        run([x], matrix_power(x, n), a), np.linalg.matrix_power(a, n), rtol=1e-8
    )
    if n:
        verify(lambda y: matrix_power(y, n), [a[0]])


def test_matrix_power_needs_an_int() -> None:
    with pytest.raises(TypeError, match=r"n must be an int, got 2\.0"):
        matrix_power(ot.dmatrix("m"), 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("sa", "sb"), [((2, 3), (3, 2)), ((2,), (3, 4)), ((2, 2, 2), (3,)), ((4, 1), (2, 3))]
)
def test_kron(sa: tuple[int, ...], sb: tuple[int, ...]) -> None:
    a_val, b_val = RNG.normal(size=sa), RNG.normal(size=sb)
    a, b = dyn("float64", len(sa), "a"), dyn("float64", len(sb), "b")
    np.testing.assert_allclose(run([a, b], kron(a, b), a_val, b_val), np.kron(a_val, b_val))
    verify(kron, [a_val, b_val])


def test_kron_of_two_vectors_is_refused_as_in_pytensor() -> None:
    with pytest.raises(TypeError, match="must sum to 3 or more"):
        kron(ot.dvector("a"), ot.dvector("b"))


MATRIX_ORDS = [None, "fro", "f", "nuc", np.inf, "inf", -np.inf, "-inf", 1, -1, 2, -2]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matrix_norms(ord: Any, dtype: str) -> None:
    a = RNG.normal(size=(2, 4, 3)).astype(dtype)
    np_ord = {"inf": np.inf, "-inf": -np.inf, "f": "fro"}.get(ord, ord)  # type: ignore[call-overload]
    x = dyn(dtype, 3)
    # Leading axes are a batch (PyTensor's rule; NumPy would flatten them for ord=None).
    got = run([x], norm(x, ord=ord), a)
    close(got, np.linalg.norm(a.astype("float64"), ord=np_ord, axis=(-2, -1)), dtype)
    got = run([x], norm(x, ord=ord, axis=(1, 0), keepdims=True), a)
    close(got, np.linalg.norm(a.astype("float64"), ord=np_ord, axis=(2, 1), keepdims=True), dtype)


@pytest.mark.parametrize("ord", [None, 2, np.inf, -np.inf, 0, 1, 3, 0.5, -2])
def test_vector_norms(ord: Any) -> None:
    v = RNG.normal(size=(3, 5))
    x = dyn("float64", 2)
    np.testing.assert_allclose(
        run([x], norm(x, ord=ord, axis=1), v), np.linalg.norm(v, ord=ord, axis=1)
    )
    np.testing.assert_allclose(
        run([x], norm(x, ord=ord, axis=-2, keepdims=True), v),
        np.linalg.norm(v, ord=ord, axis=0, keepdims=True),
    )
    y = dyn("float64", 1)
    want = np.linalg.norm(v[0], ord=ord)
    np.testing.assert_allclose(
        run([y], norm(y, ord=ord) if ord in (None, 2) else norm(y, ord, 0), v[0]), want
    )


@pytest.mark.parametrize("ord", [None, "fro", "nuc", np.inf, 1, -1, 2, -2])
def test_matrix_norm_gradients(ord: Any) -> None:
    verify(lambda x: norm(x, ord=ord), [RNG.normal(size=(4, 3))])


@pytest.mark.parametrize("ord", [None, np.inf, 1, 3, 0.5])
def test_vector_norm_gradients(ord: Any) -> None:
    verify(lambda x: norm(x, ord=ord, axis=-1), [RNG.normal(size=(2, 5))])


def test_norm_arguments() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(ValueError, match="invalid norm order 'nuc' for vectors"):
        norm(x, ord="nuc", axis=0)
    with pytest.raises(ValueError, match="invalid norm order 3 for matrices"):
        norm(x, ord=3)
    with pytest.raises(TypeError, match="axis must be None, an int or a tuple of ints"):
        norm(x, axis=1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="axis must name one or two axes"):
        norm(x, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="axis 3 is out of range"):
        norm(x, axis=3)
    s = ot.dscalar("s")
    assert run([s], norm(s), -2.5) == 2.5
