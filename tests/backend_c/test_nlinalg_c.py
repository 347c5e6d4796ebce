"""C code of ``opweave.tensor.nlinalg`` (MatrixInverse, Det, SLogDet): the Python backend's
values bit for bit, NumPy's semantics, dtypes, shapes and errors on ``c`` and ``cvm``.

Both backends run NumPy's algorithm with SciPy's LAPACK: every matrix in double, ``dgesv``
on the identity for the inverse, ``dgetrf`` for the sign and the log of the absolute
determinant, the determinant as ``sign * exp(logdet)``. The reference below does that with
``scipy.linalg.lapack`` and ``math``; the results must be its bits, and NumPy's values to
rounding (NumPy's own LAPACK build may round differently).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pytest
from c_parity import check, compiled, strided

import opweave
from opweave.compile import Mode
from opweave.link.capabilities import FALLBACK, IMPLEMENTED
from opweave.link.resolver import class_capability
from opweave.tensor import nlinalg as nl
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.type import TensorType

lapack = pytest.importorskip("scipy.linalg.lapack")

import opweave_python.impls.nlinalg as py_nlinalg  # noqa: E402
from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import nlinalg as c_nlinalg  # noqa: E402
from opweave_c.impls.blockwise_loop import BlockwiseC  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(31)
FLOATS = ["float32", "float64"]
MODES = {k: Mode(linker=k, optimizer=None) for k in ("py", "c", "cvm")}


# -- the reference: NumPy's algorithm on SciPy's LAPACK -------------------------------------


def _outs(op: Any, x: Any) -> list[Any]:
    """The outputs of ``op``'s node on ``x``."""
    return list(op.make_node(x).outputs)


def _slogdet_one(a: np.ndarray) -> tuple[float, float]:
    n = a.shape[0]
    if n == 0:
        return 1.0, 0.0
    lu, piv, info = lapack.dgetrf(np.array(a, dtype=np.float64, order="F"))
    if info > 0:
        return 0.0, -math.inf
    sign = 1.0
    for i in range(n):
        if piv[i] != i:
            sign = -sign
    logdet = 0.0
    for i in range(n):
        d = float(lu[i, i])
        if d < 0:
            sign, d = -sign, -d
        logdet += math.log(d)
    return sign, logdet


def _exp(v: float) -> float:
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _reference(kind: str, a: np.ndarray, dtype: str) -> list[np.ndarray]:
    a = np.asarray(a, dtype=dtype)
    batch, n = a.shape[:-2], a.shape[-1]
    if kind == "inv":
        out = np.empty(a.shape)
        for idx in np.ndindex(*batch):
            if n:
                _, _, x, info = lapack.dgesv(np.array(a[idx], np.float64, order="F"), np.eye(n))
                assert info == 0
                out[idx] = x
        return [out.astype(dtype)]
    sign, logdet = np.empty(batch), np.empty(batch)
    for idx in np.ndindex(*batch):
        sign[idx], logdet[idx] = _slogdet_one(a[idx])
    if kind == "det":
        det = [s * _exp(v) for s, v in zip(sign.flat, logdet.flat, strict=True)]
        return [np.array(det).reshape(batch).astype(dtype)]
    return [sign.astype(dtype), logdet.astype(dtype)]


def _graph(kind: str, x: Any) -> list[Any]:
    if kind == "inv":
        return [_outs(nl.MatrixInverse(), x)[0]]
    if kind == "det":
        return [_outs(nl.Det(), x)[0]]
    return _outs(nl.SLogDet(), x)


def _numpy(kind: str, a: np.ndarray) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        if kind == "inv":
            return [np.linalg.inv(a)]
        if kind == "det":
            return [np.asarray(np.linalg.det(a))]
        return [np.asarray(v) for v in np.linalg.slogdet(a)]


# -- which nodes have C ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["inv", "det", "slogdet"])
def test_float_nodes_have_c_and_complex_ones_do_not(kind: str, dtype: str) -> None:
    node = _graph(kind, TensorType(dtype, shape=(None, 3, 3))("x"))[0].owner
    impl = c_code_for(node.op, node)
    assert isinstance(impl, c_nlinalg.NlinalgC) and impl.dtype == dtype
    assert impl.c_code_cache_version() == c_nlinalg.VERSION
    assert any("dgetrf" in s and "dgesv" in s for s in impl.c_support_code())
    cnode = _graph(kind, TensorType("complex128", shape=(3, 3))("z"))[0].owner
    assert c_code_for(cnode.op, cnode) is None


def test_capabilities() -> None:
    for cls in (nl.MatrixInverse, nl.Det, nl.SLogDet):
        assert class_capability(C_OPS, cls) == IMPLEMENTED, cls
    for other in (nl.Eig, nl.TensorInv, nl.TensorSolve):
        assert class_capability(C_OPS, other) == FALLBACK, other


def test_complex_nodes_stay_in_python() -> None:
    z = TensorType("complex128", shape=(2, 2))("z")
    out = _outs(nl.Det(), z)[0]
    with pytest.raises(MissingCCodeError):
        opweave.function([z], out, mode=MODES["c"])
    f = opweave.function([z], out, mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    v = np.array([[1 + 1j, 2], [3, 4 - 2j]])
    np.testing.assert_allclose(f(v), np.linalg.det(v), rtol=1e-14)


# -- values ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", ["inv", "det", "slogdet"])
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (2, 3, 2, 2), (2, 0, 0), (0, 3, 3)])
def test_values_are_the_reference_bit_for_bit(kind: str, dtype: str, shape: tuple) -> None:
    x = TensorType(dtype, shape=(None,) * len(shape))("x")
    fns = compiled([x], _graph(kind, x))
    a = RNG.standard_normal(shape).astype(dtype) + 2 * np.eye(shape[-1], dtype=dtype)
    ref = _reference(kind, a, dtype)
    for name, f in fns.items():
        for got, want, np_value in zip(f(a), ref, _numpy(kind, a), strict=True):
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
            rtol = 1e-6 if dtype == "float32" else 1e-12
            np.testing.assert_allclose(got, np_value, rtol=rtol, atol=rtol, err_msg=name)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS)
def test_edge_matrices(dtype: str) -> None:
    cases = {
        "singular": [[1.0, 2.0], [2.0, 4.0]],
        "zeros": [[-0.0, 0.0], [0.0, -0.0]],
        "nan": [[np.nan, 1.0], [2.0, 3.0]],
        "inf": [[np.inf, 1.0], [2.0, 3.0]],
        "-inf": [[-np.inf, 1.0], [2.0, 3.0]],
        "swap": [[0.0, 1.0], [1.0, 0.0]],
        "negative": [[-2.0, 0.0], [0.0, 3.0]],
        "huge": [[1e30, 0.0], [0.0, 1e30]],
        "tiny": [[1e-30, 0.0], [0.0, 1e-30]],
    }
    x = TensorType(dtype, shape=(2, 2))("x")
    fns = compiled([x], [_outs(nl.Det(), x)[0], *_outs(nl.SLogDet(), x)])
    for name, rows in cases.items():
        a = np.array(rows, dtype=dtype)
        got = fns["c"](a)
        for g, want in zip(got, _numpy("det", a) + _numpy("slogdet", a), strict=True):
            np.testing.assert_allclose(g, want, rtol=1e-6, err_msg=name)
            assert np.signbit(g) == np.signbit(want), name
    check(fns, [(np.array(rows, dtype=dtype),) for rows in cases.values()])
    inv = compiled([x], _graph("inv", x))
    check(inv, [(np.array(rows, dtype=dtype),) for rows in cases.values()])


def test_empty_matrices() -> None:
    x = TensorType("float64", shape=(None, None))("x")
    fns = compiled(
        [x], [_outs(nl.Det(), x)[0], *_outs(nl.SLogDet(), x), _outs(nl.MatrixInverse(), x)[0]]
    )
    for f in fns.values():
        det, sign, logdet, inv = f(np.zeros((0, 0)))
        assert (det.item(), sign.item(), logdet.item()) == (1.0, 1.0, 0.0)
        assert inv.shape == (0, 0) and inv.dtype == np.float64


@pytest.mark.parametrize("kind", ["inv", "det", "slogdet"])
def test_layouts_and_input_dtypes(kind: str) -> None:
    """Non-contiguous and Fortran-ordered inputs; integer inputs are cast to the
    output's dtype (float64, float32) first."""
    for in_dtype, out_dtype in (
        ("int32", "float64"),
        ("int16", "float32"),
        ("float64", "float64"),
    ):
        x = TensorType(in_dtype, shape=(None, None, None))("x")
        outs = _graph(kind, x)
        assert outs[0].dtype == out_dtype
        fns = compiled([x], outs)
        a = (RNG.integers(-4, 5, (3, 4, 4)) + 9 * np.eye(4)).astype(in_dtype)
        check(fns, [(a,), (strided(a),), (np.asfortranarray(a),), (np.swapaxes(a, 1, 2),)])
        for got, want in zip(fns["c"](strided(a)), _reference(kind, a, out_dtype), strict=True):
            np.testing.assert_array_equal(got, want)


def test_outputs_are_remade_when_the_shape_changes() -> None:
    x = TensorType("float64", shape=(None, None, None))("x")
    fns = compiled([x], [_outs(nl.MatrixInverse(), x)[0], *_outs(nl.SLogDet(), x)])
    values = [RNG.standard_normal(s) for s in ((2, 3, 3), (4, 2, 2), (2, 3, 3), (1, 1, 1))]
    check(fns, [(v,) for v in values])
    first = fns["c"](values[0])
    again = fns["c"](values[0])
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


# -- errors ----------------------------------------------------------------------------------


def test_singular_inverse_raises_naming_the_matrix() -> None:
    x = TensorType("float64", shape=(None, None, None, None))("x")
    fns = compiled([x], _outs(nl.MatrixInverse(), x)[0])
    a = np.tile(np.eye(2), (2, 3, 1, 1))
    a[1, 2] = [[1.0, 2.0], [2.0, 4.0]]
    a[1, 1, 0, 0] = 0.0  # [[0, 0], [0, 1]]: singular too, and first in C order
    a[1, 1, 0, 1] = 0.0
    for f in fns.values():
        with pytest.raises(np.linalg.LinAlgError) as info:
            f(a)
        assert str(info.value) == (
            "MatrixInverse: the matrix at batch index (1, 1) is singular and has no inverse "
            "(input shape (2, 3, 2, 2))"
        )
    y = TensorType("float32", shape=(2, 2))("y")
    for mode in MODES.values():
        f = opweave.function([y], _outs(nl.MatrixInverse(), y)[0], mode=mode)
        with pytest.raises(np.linalg.LinAlgError, match=r"^MatrixInverse: the matrix is singular"):
            f(np.zeros((2, 2), dtype="float32"))


def test_non_square_matrices_raise_the_python_error() -> None:
    x = TensorType("float64", shape=(None, None))("x")
    for kind in ("inv", "det", "slogdet"):
        fns = compiled([x], _graph(kind, x))
        check(fns, [(np.ones((2, 3)),)])
        with pytest.raises(
            ValueError, match=r"the input x must hold square matrices, got shape \(2, 3\)"
        ):
            fns["c"](np.ones((2, 3)))


# -- without SciPy ---------------------------------------------------------------------------


def test_without_scipy_the_nodes_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    x = TensorType("float64", shape=(3, 3))("x")
    node = _outs(nl.Det(), x)[0].owner
    monkeypatch.setattr(c_nlinalg, "lapack_available", lambda: False)
    assert c_code_for(node.op, node) is None


def test_the_python_kernels_without_scipy_keep_numpy_semantics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    x = TensorType("float64", shape=(None, 2, 2))("x")
    outs = [_outs(nl.Det(), x)[0], *_outs(nl.SLogDet(), x)]
    inv = _outs(nl.MatrixInverse(), x)[0]
    a = np.stack([np.eye(2) * 3, [[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]])
    with_scipy = opweave.function([x], outs, mode=MODES["py"])(a)
    monkeypatch.setattr(py_nlinalg, "scipy_lapack", lambda: None)
    f = opweave.function([x], outs, mode=MODES["py"])
    for got, want in zip(f(a), with_scipy, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    g = opweave.function([x], inv, mode=MODES["py"])
    with pytest.raises(np.linalg.LinAlgError, match=r"at batch index \(1,\) is singular"):
        g(a)
    np.testing.assert_allclose(g(a[[0, 2]]), np.linalg.inv(a[[0, 2]]), rtol=1e-14)


# -- Blockwise -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_blockwise_of_the_ops_runs_in_c(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, 3, 3))("x")
    outs = [
        *_outs(Blockwise(nl.Det(), signature="(m,m)->()"), x),
        *_outs(Blockwise(nl.MatrixInverse(), signature="(m,m)->(m,m)"), x),
        *_outs(Blockwise(nl.SLogDet(), signature="(m,m)->(),()"), x),
    ]
    for out in outs[:3]:
        assert isinstance(c_code_for(out.owner.op, out.owner), BlockwiseC)
    fns = compiled([x], outs)
    a = (RNG.standard_normal((5, 3, 3)) + 3 * np.eye(3)).astype(dtype)
    check(fns, [(a,), (strided(a),), (np.zeros((0, 3, 3), dtype=dtype),)])
    got = fns["cvm"](a)
    want = [*_reference("det", a, dtype), *_reference("inv", a, dtype)]
    want += _reference("slogdet", a, dtype)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


# -- Eigh ------------------------------------------------------------------------------------


def _eigh_reference(a: np.ndarray, lower: bool, dtype: str) -> list[np.ndarray]:
    """``dsyevd`` (``jobz='V'``) with the workspace of its query, matrix by matrix."""
    a = np.asarray(a, dtype=dtype)
    batch, n = a.shape[:-2], a.shape[-1]
    w, v = np.empty((*batch, n)), np.empty(a.shape)
    if n:
        work, iwork, _ = lapack.dsyevd_lwork(n, compute_v=1, lower=int(lower))
        for idx in np.ndindex(*batch):
            w[idx], v[idx], info = lapack.dsyevd(
                np.array(a[idx], np.float64), lower=int(lower), lwork=int(work), liwork=int(iwork)
            )
            assert info == 0
    return [w.astype(dtype), v.astype(dtype)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_is_the_reference_bit_for_bit(lower: bool, dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    fns = compiled([x], _outs(nl.Eigh(lower=lower), x))
    uplo: Literal["L", "U"] = "L" if lower else "U"
    for shape in ((3, 4, 4), (1, 40, 40), (2, 1, 1), (2, 0, 0), (0, 3, 3)):
        a = RNG.standard_normal(shape).astype(dtype)
        ref = _eigh_reference(a, lower, dtype)
        check(fns, [(a,), (strided(a),), (np.swapaxes(a, 1, 2),)])
        w, v = fns["c"](strided(a))
        for got, want in zip((w, v), ref, strict=True):
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
        nw, nv = np.linalg.eigh(a, UPLO=uplo)
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(w, nw, rtol=rtol, atol=rtol * 10)
        # eigenvectors are defined up to sign
        np.testing.assert_allclose(np.abs(v), np.abs(nv), rtol=rtol * 100, atol=rtol * 100)


def test_blockwise_of_eigh_runs_in_c() -> None:
    x = TensorType("float64", shape=(None, 3, 3))("x")
    outs = _outs(Blockwise(nl.Eigh(lower=False), signature="(m,m)->(m),(m,m)"), x)
    assert isinstance(c_code_for(outs[0].owner.op, outs[0].owner), BlockwiseC)
    fns = compiled([x], outs)
    a = RNG.standard_normal((4, 3, 3))
    check(fns, [(a,), (strided(a),)])
    for got, want in zip(fns["cvm"](a), _eigh_reference(a, False, "float64"), strict=True):
        np.testing.assert_array_equal(got, want)
