"""C code of ``SVD`` and ``MatrixPinv`` (opweave.tensor.nlinalg): the Python backend's
values bit for bit, NumPy's semantics, dtypes, shapes and errors on ``c`` and ``cvm``.

Both backends run NumPy's algorithm with SciPy's LAPACK: every matrix in double through
``dgesdd`` with the workspace of its query; the pseudo-inverse from the thin factors
rounded to the output's dtype, the singular values above ``1e-15 * max(s)`` inverted, and
``VT.T @ (s_inv[:, None] * U.T)`` summed in order. The reference below does that with
``scipy.linalg.lapack`` and scalar arithmetic; the results must be its bits, and NumPy's
values to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from c_parity import check, compiled, strided

import opweave
from opweave.compile import Mode
from opweave.link.capabilities import IMPLEMENTED
from opweave.link.resolver import class_capability
from opweave.tensor import nlinalg as nl
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.type import TensorType

lapack = pytest.importorskip("scipy.linalg.lapack")

import opweave_python.impls.nlinalg as py_nlinalg  # noqa: E402
from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import nlinalg_svd as c_svd  # noqa: E402
from opweave_c.impls.blockwise_loop import BlockwiseC  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(47)
FLOATS = ["float32", "float64"]
MODES = {k: Mode(linker=k, optimizer=None) for k in ("py", "c", "cvm")}

#: (full_matrices, compute_uv) of the SVD nodes.
VARIANTS = [(True, True), (False, True), (True, False)]


def _outs(op: Any, x: Any) -> list[Any]:
    """The outputs of ``op``'s node on ``x``."""
    return list(op.make_node(x).outputs)


# -- the reference: NumPy's algorithm on SciPy's LAPACK -------------------------------------


def _svd_one(a: np.ndarray, full: bool, compute_uv: bool) -> tuple[Any, Any, Any]:
    """``dgesdd`` of one matrix in float64 with the workspace of its query."""
    m, n = a.shape
    k = min(m, n)
    if k == 0:
        u = np.eye(m) if full else np.empty((m, 0))
        vt = np.eye(n) if full else np.empty((0, n))
        return u, np.empty(0), vt
    work, info = lapack.dgesdd_lwork(m, n, compute_uv=int(compute_uv), full_matrices=int(full))
    assert info == 0
    u, s, vt, info = lapack.dgesdd(
        np.array(a, dtype=np.float64, order="F"),
        compute_uv=int(compute_uv),
        full_matrices=int(full),
        lwork=int(work),
    )
    assert info == 0
    return u, s, vt


def _svd_reference(a: np.ndarray, full: bool, compute_uv: bool, dtype: str) -> list[np.ndarray]:
    a = np.asarray(a, dtype=dtype)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    us, ss, vts = [], [], []
    for idx in np.ndindex(*batch):
        u, s, vt = _svd_one(a[idx], full, compute_uv)
        us.append(u)
        ss.append(s)
        vts.append(vt)
    u_shape = (m, m) if full else (m, k)
    vt_shape = (n, n) if full else (k, n)
    s_all = np.array(ss, dtype=np.float64).reshape(*batch, k).astype(dtype)
    if not compute_uv:
        return [s_all]
    u_all = np.array(us, dtype=np.float64).reshape(*batch, *u_shape).astype(dtype)
    vt_all = np.array(vts, dtype=np.float64).reshape(*batch, *vt_shape).astype(dtype)
    return [u_all, s_all, vt_all]


def _pinv_reference(a: np.ndarray, dtype: str) -> np.ndarray:
    """numpy.linalg.pinv's steps in scalars of ``dtype``, each entry summed in order."""
    a = np.asarray(a, dtype=dtype)
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    scalar = np.dtype(dtype).type
    out = np.zeros((*batch, n, m), dtype=dtype)
    for idx in np.ndindex(*batch):
        if min(m, n) == 0:
            continue
        u, s, vt = (np.asarray(v, dtype=dtype) for v in _svd_one(a[idx], False, True))
        cutoff = 1e-15 * float(np.max(s.astype(np.float64)))
        inv = [scalar(1) / v if float(v) > cutoff else scalar(0) for v in s]
        for i in range(n):
            for j in range(m):
                acc = scalar(0)
                for q in range(len(s)):
                    acc = acc + vt[q, i] * (inv[q] * u[j, q])
                out[(*idx, i, j)] = acc
    return out


def _pinvh_reference(a: np.ndarray, dtype: str) -> np.ndarray:
    """numpy.linalg.pinv(hermitian=True)'s steps in scalars of ``dtype``: ``dsyevd`` of the
    lower triangle, the absolute eigenvalues in descending order (a stable ascending sort,
    NaN last, reversed), then as :func:`_pinv_reference`."""
    a = np.asarray(a, dtype=dtype)
    batch, n = a.shape[:-2], a.shape[-1]
    scalar = np.dtype(dtype).type
    out = np.zeros((*batch, n, n), dtype=dtype)
    if n == 0:
        return out
    work, iwork, _ = lapack.dsyevd_lwork(n, compute_v=1, lower=1)
    for idx in np.ndindex(*batch):
        w64, v64, info = lapack.dsyevd(
            np.array(a[idx], np.float64), lower=1, lwork=int(work), liwork=int(iwork)
        )
        assert info == 0
        w, v = w64.astype(dtype), v64.astype(dtype)
        order = sorted(range(n), key=lambda q: float(abs(w[q])))[::-1]
        s = [abs(w[q]) for q in order]
        cutoff = 1e-15 * max(float(x) for x in s)
        inv = [scalar(1) / x if float(x) > cutoff else scalar(0) for x in s]
        for i in range(n):
            for j in range(n):
                acc = scalar(0)
                for p, q in enumerate(order):
                    vt = v[i, q] * np.sign(w[q])
                    acc = acc + vt * (inv[p] * v[j, q])
                out[(*idx, i, j)] = acc
    return out


def _svd_graph(x: Any, full: bool, compute_uv: bool) -> list[Any]:
    return _outs(nl.SVD(full_matrices=full, compute_uv=compute_uv), x)


def _close(got: np.ndarray, want: np.ndarray, dtype: str, where: str) -> None:
    rtol = 2e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10, err_msg=where)


# -- which nodes have C ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_nodes_have_c_and_others_do_not(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, 3, 4))("x")
    kinds = {(True, True): "OPW_SVD_FULL", (False, True): "OPW_SVD_THIN"}
    kinds[(True, False)] = "OPW_SVD_S"
    for (full, uv), kind in kinds.items():
        node = _svd_graph(x, full, uv)[0].owner
        impl = c_code_for(node.op, node)
        assert isinstance(impl, c_svd.SvdC) and (impl.kind, impl.dtype) == (kind, dtype)
        assert any("dgesdd" in s for s in impl.c_support_code())
    node = _outs(nl.MatrixPinv(), x)[0].owner
    impl = c_code_for(node.op, node)
    assert isinstance(impl, c_svd.SvdC) and impl.kind == "OPW_SVD_PINV"
    square = TensorType(dtype, shape=(3, 3))("s")
    hermitian = _outs(nl.MatrixPinv(hermitian=True), square)[0].owner
    impl = c_code_for(hermitian.op, hermitian)
    assert isinstance(impl, c_svd.SvdC) and impl.kind == "OPW_SVD_PINVH"
    z = TensorType("complex128", shape=(3, 3))("z")
    for out in (_svd_graph(z, True, True)[0], _outs(nl.MatrixPinv(), z)[0]):
        assert c_code_for(out.owner.op, out.owner) is None


def test_capabilities() -> None:
    assert class_capability(C_OPS, nl.SVD) == IMPLEMENTED
    assert class_capability(C_OPS, nl.MatrixPinv) == IMPLEMENTED


def test_complex_svd_and_pinv_stay_in_python() -> None:
    z = TensorType("complex128", shape=(2, 3))("z")
    outs = _svd_graph(z, False, True)
    with pytest.raises(MissingCCodeError):
        opweave.function([z], outs, mode=MODES["c"])
    g = opweave.function([z], outs[1], mode=MODES["cvm"])
    assert g.fn.c_nodes == []
    v = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
    np.testing.assert_allclose(g(v), np.linalg.svd(v, compute_uv=False), rtol=1e-12)
    h = opweave.function([z], _outs(nl.MatrixPinv(), z)[0], mode=MODES["cvm"])
    assert h.fn.c_nodes == []
    np.testing.assert_allclose(h(v), np.linalg.pinv(v), rtol=1e-12)


def test_without_scipy_the_nodes_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    x = TensorType("float64", shape=(3, 3))("x")
    monkeypatch.setattr(c_svd, "lapack_exports", lambda routines: False)
    for out in (_svd_graph(x, True, True)[0], _outs(nl.MatrixPinv(), x)[0]):
        assert c_code_for(out.owner.op, out.owner) is None


# -- values ----------------------------------------------------------------------------------

SHAPES = [(1, 1), (4, 4), (3, 5), (6, 2), (3, 4, 6), (2, 3, 5, 2), (2, 0, 3), (2, 3, 0), (0, 2, 2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("full", "compute_uv"), VARIANTS)
@pytest.mark.parametrize("shape", SHAPES)
def test_svd_is_the_reference_bit_for_bit(
    shape: tuple, full: bool, compute_uv: bool, dtype: str
) -> None:
    x = TensorType(dtype, shape=(None,) * len(shape))("x")
    fns = compiled([x], _svd_graph(x, full, compute_uv))
    a = RNG.standard_normal(shape).astype(dtype)
    ref = _svd_reference(a, full, compute_uv, dtype)
    for name, f in fns.items():
        got = f(a)
        for g, w in zip(got, ref, strict=True):
            assert g.dtype == np.dtype(dtype) and g.shape == w.shape, name
            np.testing.assert_array_equal(g, w, err_msg=name)
    got = fns["cvm"](a)
    if not compute_uv:
        _close(got[0], np.linalg.svd(a, compute_uv=False), dtype, "s")
        return
    want = np.linalg.svd(a, full_matrices=full)
    u, s, vt = got
    assert [v.shape for v in got] == [v.shape for v in want]
    _close(s, want[1], dtype, "s")
    k = min(shape[-2:])
    rebuilt = (u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :]
    _close(rebuilt, a, dtype, "U diag(s) VT")
    if full and k == 0:  # the identities, as NumPy gives them
        np.testing.assert_array_equal(u, want[0])
        np.testing.assert_array_equal(vt, want[2])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_pinv_is_the_reference_bit_for_bit(shape: tuple, dtype: str) -> None:
    x = TensorType(dtype, shape=(None,) * len(shape))("x")
    fns = compiled([x], _outs(nl.MatrixPinv(), x)[0])
    a = RNG.standard_normal(shape).astype(dtype)
    ref = _pinv_reference(a, dtype)
    for name, f in fns.items():
        got = f(a)
        assert got.dtype == np.dtype(dtype) and got.shape == ref.shape, name
        np.testing.assert_array_equal(got, ref, err_msg=name)
    _close(fns["cvm"](a), np.linalg.pinv(a), dtype, "numpy")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 2, 3, 3), (1, 20, 20), (2, 0, 0)])
def test_hermitian_pinv_is_the_reference_bit_for_bit(shape: tuple, dtype: str) -> None:
    x = TensorType(dtype, shape=(None,) * len(shape))("x")
    fns = compiled([x], _outs(nl.MatrixPinv(hermitian=True), x)[0])
    m = RNG.standard_normal(shape)
    symmetric = (m + np.swapaxes(m, -1, -2)).astype(dtype)
    ranked = symmetric.copy()  # repeated eigenvalues and a rank deficiency
    if shape[-1] >= 3:
        ranked[..., :, :] = np.diag([2.0, -2.0] + [0.0] * (shape[-1] - 2)).astype(dtype)
    for a in (symmetric, ranked, m.astype(dtype)):  # the lower triangle is read
        ref = _pinvh_reference(a, dtype)
        for name, f in fns.items():
            got = f(a)
            assert got.dtype == np.dtype(dtype) and got.shape == ref.shape, name
            np.testing.assert_array_equal(got, ref, err_msg=name)
        want = np.linalg.pinv(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2), hermitian=True)
        _close(fns["cvm"](a), want, dtype, "numpy")
    check(fns, [(strided(symmetric),), (np.swapaxes(m, -1, -2).astype(dtype),)])


def test_hermitian_pinv_of_nan_and_errors() -> None:
    """NaN entries give NumPy's NaN; a matrix that is not square raises the Python kernel's
    error. Where a NaN eigenvalue leaves no singular value kept, the products ``NaN * 0``
    of ``VT.T @ (0 * U.T)`` are NaN as IEEE arithmetic has them (NumPy's BLAS product may
    skip the zero factors and give zeros)."""
    x = TensorType("float64", shape=(None, None, None))("x")
    fns = compiled([x], _outs(nl.MatrixPinv(hermitian=True), x)[0])
    nan = np.array([np.eye(3), np.eye(3), [[np.nan, 1, 0], [1, 2, 0], [0, 0, 3]]])
    nan[1, 1, 1] = np.nan
    check(fns, [(nan,), (np.ones((2, 3, 4)),)])
    got = fns["c"](nan)[[0, 2]]
    want = np.linalg.pinv(nan[[0, 2]], hermitian=True)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-12)
    np.testing.assert_array_equal(fns["c"](nan), _pinvh_reference(nan, "float64"))
    for f in fns.values():
        with pytest.raises(ValueError, match=r"must hold square matrices, got shape \(2, 3, 4\)"):
            f(np.ones((2, 3, 4)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_pinv_of_rank_deficient_matrices(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    fns = compiled([x], _outs(nl.MatrixPinv(), x)[0])
    left, right = RNG.standard_normal((3, 5, 2)), RNG.standard_normal((3, 2, 4))
    a = (left @ right).astype(dtype)  # rank 2
    a[1] = 0.0
    a[2, :, 1] = -0.0
    check(fns, [(a,), (strided(a),)])
    np.testing.assert_array_equal(fns["cvm"](a), _pinv_reference(a, dtype))
    _close(fns["c"](a), np.linalg.pinv(a), dtype, "numpy")


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS)
def test_edge_matrices(dtype: str) -> None:
    cases = {
        "zeros": [[0.0, 0.0], [0.0, 0.0]],
        "negative-zeros": [[-0.0, 0.0], [0.0, -0.0]],
        "inf": [[np.inf, 1.0], [2.0, 3.0]],
        "swap": [[0.0, 1.0], [1.0, 0.0]],
        "huge": [[1e30, 0.0], [0.0, 1e30]],
        "tiny": [[1e-30, 0.0], [0.0, -1e-30]],
        "mixed": [[1e30, 0.0], [0.0, 1.0]],
    }
    x = TensorType(dtype, shape=(2, 2))("x")
    outs = [*_svd_graph(x, True, True), *_svd_graph(x, True, False)]
    fns = compiled([x], [*outs, *_outs(nl.MatrixPinv(), x)])
    for name, rows in cases.items():
        a = np.array(rows, dtype=dtype)
        got = fns["c"](a)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(got[1], np.linalg.svd(a, compute_uv=False), name)
            np.testing.assert_array_equal(got[-1], _pinv_reference(a, dtype), name)
            np.testing.assert_allclose(got[-1], np.linalg.pinv(a), rtol=1e-6, err_msg=name)
    check(fns, [(np.array(rows, dtype=dtype),) for rows in cases.values()])


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_raises_numpys_error_everywhere(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    a = np.stack([np.eye(3), np.eye(3)]).astype(dtype)
    a[1, 2, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match=r"^SVD did not converge"):
        np.linalg.svd(a)
    for outs in (*(_svd_graph(x, f, uv) for f, uv in VARIANTS), _outs(nl.MatrixPinv(), x)):
        fns = compiled([x], outs)
        for f in fns.values():
            with pytest.raises(np.linalg.LinAlgError, match=r"^SVD did not converge"):
                f(a)
        check(fns, [(a,), (a[:1],)])


def test_layouts_and_input_dtypes() -> None:
    """Non-contiguous, Fortran-ordered and transposed inputs; integer inputs are cast to
    the output's dtype first. The inputs are left as they were."""
    for in_dtype, out_dtype in (("int32", "float64"), ("int16", "float32"), ("float64",) * 2):
        x = TensorType(in_dtype, shape=(None, None, None))("x")
        outs = [*_svd_graph(x, False, True), *_outs(nl.MatrixPinv(), x)]
        assert {o.dtype for o in outs} == {out_dtype}
        fns = compiled([x], outs)
        a = RNG.integers(-4, 5, (3, 4, 3)).astype(in_dtype)
        before = a.copy()
        layouts = [(a,), (strided(a),), (np.asfortranarray(a),), (np.swapaxes(a, 1, 2),)]
        check(fns, layouts)
        np.testing.assert_array_equal(a, before)
        got = fns["c"](strided(a))
        want = [*_svd_reference(a, False, True, out_dtype), _pinv_reference(a, out_dtype)]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)


def test_outputs_are_remade_when_the_shape_changes() -> None:
    x = TensorType("float64", shape=(None, None, None))("x")
    fns = compiled([x], [*_svd_graph(x, True, True), *_outs(nl.MatrixPinv(), x)])
    values = [RNG.standard_normal(s) for s in ((2, 3, 4), (4, 2, 2), (2, 3, 4), (1, 5, 1))]
    check(fns, [(v,) for v in values])


# -- Blockwise -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_blockwise_of_the_ops_runs_in_c(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, 3, 2))("x")
    outs = [
        *_outs(Blockwise(nl.SVD(), signature="(m,n)->(m,m),(k),(n,n)"), x),
        *_outs(Blockwise(nl.SVD(compute_uv=False), signature="(m,n)->(k)"), x),
        *_outs(Blockwise(nl.MatrixPinv(), signature="(m,n)->(n,m)"), x),
    ]
    square = TensorType(dtype, shape=(None, 3, 3))("square")
    hermitian = _outs(Blockwise(nl.MatrixPinv(hermitian=True), signature="(m,m)->(m,m)"), square)
    assert isinstance(c_code_for(hermitian[0].owner.op, hermitian[0].owner), BlockwiseC)
    h_fns = compiled([square], hermitian)
    b = RNG.standard_normal((4, 3, 3)).astype(dtype)
    check(h_fns, [(b,), (strided(b),)])
    np.testing.assert_array_equal(h_fns["cvm"](b)[0], _pinvh_reference(b, dtype))
    for out in (outs[0], outs[3], outs[4]):
        assert isinstance(c_code_for(out.owner.op, out.owner), BlockwiseC)
    fns = compiled([x], outs)
    a = RNG.standard_normal((5, 3, 2)).astype(dtype)
    check(fns, [(a,), (strided(a),), (np.zeros((0, 3, 2), dtype=dtype),)])
    want = [*_svd_reference(a, True, True, dtype), *_svd_reference(a, True, False, dtype)]
    want.append(_pinv_reference(a, dtype))
    for g, w in zip(fns["cvm"](a), want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_the_python_kernels_without_scipy_keep_numpy_semantics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without SciPy the Python backend runs ``numpy.linalg``: the values agree with those
    computed on SciPy's LAPACK to rounding (``svd``, ``pinv``, ``qr`` and ``lstsq``)."""
    x = TensorType("float64", shape=(None, None, None))("x")
    outs = [
        *_svd_graph(x, False, True),
        _outs(nl.MatrixPinv(), x)[0],
        _outs(nl.MatrixPinv(hermitian=True), x)[0],
        *_outs(nl.QR("economic"), x),
    ]
    a = RNG.standard_normal((3, 4, 4))
    a = a + np.swapaxes(a, 1, 2)
    with_scipy = opweave.function([x], outs, mode=MODES["py"])(a)
    m, v = TensorType("float64", shape=(None, None))("m"), TensorType("float64", shape=(None,))("v")
    ls_outs = list(nl.Lstsq().make_node(m, v).outputs)
    tall, rhs = RNG.standard_normal((5, 3)), RNG.standard_normal(5)
    ls_with_scipy = opweave.function([m, v], ls_outs, mode=MODES["py"])(tall, rhs)
    monkeypatch.setattr(py_nlinalg, "scipy_lapack", lambda: None)
    got = opweave.function([x], outs, mode=MODES["py"])(a)
    for i, (g, w) in enumerate(zip(got, with_scipy, strict=True)):
        if i in (0, 2, 5):  # U, VT and Q are defined up to the signs of their vectors
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    ls = opweave.function([m, v], ls_outs, mode=MODES["py"])(tall, rhs)
    for g, w in zip(ls, ls_with_scipy, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
