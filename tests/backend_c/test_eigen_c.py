"""C code of ``Eigvalsh`` and of ``Eigh`` with a second matrix: the Python backend's values
bit for bit, NumPy's and SciPy's semantics, dtypes, shapes and errors on ``c`` and ``cvm``.

Both backends compute every matrix in double with SciPy's LAPACK: ``dsyevd``
(``jobz='N'``, the workspace of its query) for the eigenvalues of one matrix, as
``numpy.linalg.eigvalsh``; ``dsygvd`` (``itype=1``, the workspace SciPy's wrapper sizes by
default) for the generalized problem, as ``scipy.linalg.eigh(a, b)``. The reference below
calls those routines through ``scipy.linalg.lapack``; the results must be its bits.

``Eigvalsh`` runs in C once the C backend's table lists its C code (the table of
``opweave_c.impls.slinalg``, read after that of ``opweave_c.impls.nlinalg``, must not list
the class as Python only); until then the tests that need it are skipped.
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
from opweave.tensor.linalg.decomposition.eigen import Eigvalsh
from opweave.tensor.type import TensorType

lapack = pytest.importorskip("scipy.linalg.lapack")
scipy_linalg = pytest.importorskip("scipy.linalg")

import opweave_python.impls.eigen as py_eigen  # noqa: E402
import opweave_python.impls.nlinalg as py_nlinalg  # noqa: E402
from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import nlinalg_eigen as c_eigen  # noqa: E402
from opweave_c.impls.blockwise_loop import BlockwiseC  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(53)
FLOATS = ["float32", "float64"]
MODES = {k: Mode(linker=k, optimizer=None) for k in ("py", "c", "cvm")}

#: Whether the table gives ``Eigvalsh`` nodes their C code.
EIGVALSH_IN_C = C_OPS.lookup(Eigvalsh) is c_eigen.eigvalsh_c
needs_eigvalsh_c = pytest.mark.skipif(
    not EIGVALSH_IN_C, reason="opweave_c.impls.slinalg still lists Eigvalsh as Python only"
)


def _outs(op: Any, *inputs: Any) -> list[Any]:
    """The outputs of ``op``'s node on ``inputs``."""
    return list(op.make_node(*inputs).outputs)


def _pair(shape: tuple[int, ...], dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """A random matrix and a symmetric positive definite one of ``shape``."""
    n = shape[-1]
    g = RNG.standard_normal(shape)
    spd = g @ np.swapaxes(g, -1, -2) + n * np.eye(n)
    return RNG.standard_normal(shape).astype(dtype), spd.astype(dtype)


# -- the reference: the routines of SciPy's LAPACK, matrix by matrix -------------------------


def _eigvalsh_reference(a: np.ndarray, lower: bool, dtype: str) -> np.ndarray:
    a = np.asarray(a, dtype=dtype)
    batch, n = a.shape[:-2], a.shape[-1]
    w = np.empty((*batch, n))
    if n:
        work, iwork, _ = lapack.dsyevd_lwork(n, compute_v=0, lower=int(lower))
        for idx in np.ndindex(*batch):
            w[idx], _, info = lapack.dsyevd(
                np.array(a[idx], np.float64),
                compute_v=0,
                lower=int(lower),
                lwork=int(work),
                liwork=int(iwork),
            )
            assert info == 0
    return w.astype(dtype)


def _sygvd_reference(
    a: np.ndarray, b: np.ndarray, lower: bool, vectors: bool, dtype: str
) -> list[np.ndarray]:
    a, b = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    batch, n = a.shape[:-2], a.shape[-1]
    w, v = np.empty((*batch, n)), np.empty(a.shape)
    for idx in np.ndindex(*batch):
        if n:
            w[idx], vi, info = lapack.dsygvd(
                np.array(a[idx], np.float64),
                np.array(b[idx], np.float64),
                jobz="V" if vectors else "N",
                uplo="L" if lower else "U",
            )
            assert info == 0
            if vectors:
                v[idx] = vi
    return [w.astype(dtype), v.astype(dtype)] if vectors else [w.astype(dtype)]


def _close(got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    rtol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


# -- which nodes have C ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_nodes_have_c_and_complex_ones_do_not(dtype: str) -> None:
    a = TensorType(dtype, shape=(None, 3, 3))("a")
    b = TensorType(dtype, shape=(None, 3, 3))("b")
    node = _outs(nl.Eigh(), a, b)[0].owner
    impl = c_code_for(node.op, node)
    assert isinstance(impl, c_eigen.EigenC) and (impl.kind, impl.dtype) == ("OPW_EIG_GVECS", dtype)
    assert any("dsygvd" in s for s in impl.c_support_code())
    one = _outs(Eigvalsh(), a)[0].owner
    two = _outs(Eigvalsh(), a, b)[0].owner
    found = [c_eigen.eigvalsh_c(n.op, n) for n in (one, two)]
    assert [(f.kind, f.dtype) for f in found if f] == [
        ("OPW_EIG_VALS", dtype),
        ("OPW_EIG_GVALS", dtype),
    ]
    z = TensorType("complex128", shape=(3, 3))("z")
    assert c_eigen.generalized_eigh_c(nl.Eigh(), nl.Eigh().make_node(z, z)) is None
    assert c_eigen.eigvalsh_c(Eigvalsh(), Eigvalsh().make_node(z)) is None


def test_capabilities() -> None:
    assert class_capability(C_OPS, nl.Eigh) == IMPLEMENTED


@needs_eigvalsh_c
def test_eigvalsh_capability() -> None:
    assert class_capability(C_OPS, Eigvalsh) == IMPLEMENTED


def test_complex_generalized_eigh_stays_in_python() -> None:
    a = TensorType("complex128", shape=(2, 2))("a")
    outs = _outs(nl.Eigh(), a, a)
    with pytest.raises(MissingCCodeError):
        opweave.function([a], outs, mode=MODES["c"])
    f = opweave.function([a], outs, mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    h = np.array([[2.0, 1j], [-1j, 3.0]])
    np.testing.assert_allclose(f(h)[0], [1.0, 1.0], rtol=1e-12)


def test_without_scipy_the_nodes_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    a = TensorType("float64", shape=(3, 3))("a")
    monkeypatch.setattr(c_eigen, "lapack_exports", lambda routines: False)
    node = nl.Eigh().make_node(a, a)
    assert c_code_for(node.op, node) is None
    assert c_eigen.eigvalsh_c(Eigvalsh(), Eigvalsh().make_node(a)) is None


# -- values ----------------------------------------------------------------------------------

SHAPES = [(1, 1), (4, 4), (3, 5, 5), (2, 3, 2, 2), (1, 30, 30), (2, 0, 0), (0, 3, 3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_generalized_eigh_is_the_reference_bit_for_bit(
    shape: tuple, lower: bool, dtype: str
) -> None:
    a = TensorType(dtype, shape=(None,) * len(shape))("a")
    b = TensorType(dtype, shape=(None,) * len(shape))("b")
    fns = compiled([a, b], _outs(nl.Eigh(lower=lower), a, b))
    m, spd = _pair(shape, dtype)
    ref = _sygvd_reference(m, spd, lower, True, dtype)
    for name, f in fns.items():
        for got, want in zip(f(m, spd), ref, strict=True):
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
    w, v = fns["cvm"](m, spd)
    for idx in np.ndindex(*shape[:-2]):
        want_w = scipy_linalg.eigh(m[idx], spd[idx], lower=lower, eigvals_only=True)
        _close(w[idx], want_w, dtype)
        # the eigenvectors are b-orthonormal: V.T @ b @ V == I
        full_b = np.tril(spd[idx]) + np.tril(spd[idx], -1).T if lower else None
        full_b = full_b if full_b is not None else np.triu(spd[idx]) + np.triu(spd[idx], 1).T
        _close(v[idx].T.astype(np.float64) @ full_b @ v[idx], np.eye(shape[-1]), dtype)
    check(fns, [(strided(m), strided(spd)), (np.swapaxes(m, -1, -2), spd)])


@needs_eigvalsh_c
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
def test_eigvalsh_is_the_reference_bit_for_bit(shape: tuple, lower: bool, dtype: str) -> None:
    a = TensorType(dtype, shape=(None,) * len(shape))("a")
    b = TensorType(dtype, shape=(None,) * len(shape))("b")
    outs = [_outs(Eigvalsh(lower), a)[0], _outs(Eigvalsh(lower), a, b)[0]]
    fns = compiled([a, b], outs)
    m, spd = _pair(shape, dtype)
    ref = [_eigvalsh_reference(m, lower, dtype), *_sygvd_reference(m, spd, lower, False, dtype)]
    for name, f in fns.items():
        for got, want in zip(f(m, spd), ref, strict=True):
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
    one, two = fns["cvm"](m, spd)
    _close(one, np.linalg.eigvalsh(m, UPLO="L" if lower else "U"), dtype)
    for idx in np.ndindex(*shape[:-2]):
        _close(two[idx], scipy_linalg.eigvalsh(m[idx], spd[idx], lower=lower), dtype)
    check(fns, [(strided(m), strided(spd)), (np.swapaxes(m, -1, -2), spd)])


def test_layouts_and_input_dtypes() -> None:
    """Integer inputs are cast to the output's dtype first; the inputs are left as they
    were."""
    for in_dtype, out_dtype in (("int32", "float64"), ("int16", "float32")):
        a = TensorType(in_dtype, shape=(None, None, None))("a")
        outs = _outs(nl.Eigh(), a, a)
        assert outs[0].dtype == out_dtype
        fns = compiled([a], outs)
        x = (RNG.integers(-3, 4, (3, 4, 4)) + 20 * np.eye(4)).astype(in_dtype)
        before = x.copy()
        check(fns, [(x,), (strided(x),), (np.asfortranarray(x),)])
        np.testing.assert_array_equal(x, before)
        for got, want in zip(
            fns["c"](x), _sygvd_reference(x, x, True, True, out_dtype), strict=True
        ):
            np.testing.assert_array_equal(got, want)


# -- errors ----------------------------------------------------------------------------------


def _error_cases(dtype: str) -> list[tuple[np.ndarray, np.ndarray]]:
    m, spd = _pair((2, 3, 3), dtype)
    not_pd = spd.copy()
    not_pd[1] = -not_pd[1]
    with_nan = m.copy()
    with_nan[1, 0, 0] = np.nan
    return [(m, not_pd), (with_nan, spd), (m, spd[:, :2, :2]), (m[:, :2], spd), (m, spd[:1])]


@pytest.mark.parametrize("dtype", FLOATS)
def test_generalized_eigh_errors_are_the_python_kernels(dtype: str) -> None:
    a = TensorType(dtype, shape=(None, None, None))("a")
    b = TensorType(dtype, shape=(None, None, None))("b")
    fns = compiled([a, b], _outs(nl.Eigh(), a, b))
    cases = _error_cases(dtype)
    check(fns, cases)
    for f in fns.values():
        with pytest.raises(np.linalg.LinAlgError, match=r"^Eigh\{lower=True\}: b is not positive"):
            f(*cases[0])
        with pytest.raises(np.linalg.LinAlgError, match=r"^Eigenvalues did not converge"):
            f(*cases[1])
        with pytest.raises(ValueError, match=r"a has shape \(2, 3, 3\) but b has \(2, 2, 2\)"):
            f(*cases[2])
        with pytest.raises(ValueError, match=r"the input a must hold square matrices"):
            f(*cases[3])


@needs_eigvalsh_c
@pytest.mark.parametrize("dtype", FLOATS)
def test_eigvalsh_errors_are_the_python_kernels(dtype: str) -> None:
    a = TensorType(dtype, shape=(None, None, None))("a")
    b = TensorType(dtype, shape=(None, None, None))("b")
    fns = compiled([a, b], _outs(Eigvalsh(), a, b))
    cases = _error_cases(dtype)
    check(fns, cases)
    for f in fns.values():
        with pytest.raises(np.linalg.LinAlgError, match=r"^Eigvalsh\{lower=True\}: b is not"):
            f(*cases[0])
    one = compiled([a], _outs(Eigvalsh(), a))
    check(one, [(cases[1][0],), (cases[3][0],)])


# -- Blockwise -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_blockwise_of_generalized_eigh_runs_in_c(dtype: str) -> None:
    a = TensorType(dtype, shape=(None, 3, 3))("a")
    b = TensorType(dtype, shape=(None, 3, 3))("b")
    outs = _outs(Blockwise(nl.Eigh(lower=False), signature="(m,m),(m,m)->(m),(m,m)"), a, b)
    assert isinstance(c_code_for(outs[0].owner.op, outs[0].owner), BlockwiseC)
    fns = compiled([a, b], outs)
    m, spd = _pair((4, 3, 3), dtype)
    check(fns, [(m, spd), (strided(m), strided(spd))])
    for got, want in zip(
        fns["cvm"](m, spd), _sygvd_reference(m, spd, False, True, dtype), strict=True
    ):
        np.testing.assert_array_equal(got, want)


@needs_eigvalsh_c
def test_blockwise_of_eigvalsh_runs_in_c() -> None:
    a = TensorType("float64", shape=(None, 3, 3))("a")
    outs = _outs(Blockwise(Eigvalsh(), signature="(m,m)->(m)"), a)
    assert isinstance(c_code_for(outs[0].owner.op, outs[0].owner), BlockwiseC)
    fns = compiled([a], outs)
    m = RNG.standard_normal((4, 3, 3))
    check(fns, [(m,), (strided(m),)])
    np.testing.assert_array_equal(fns["cvm"](m)[0], _eigvalsh_reference(m, True, "float64"))


def test_the_python_kernels_without_scipy_keep_their_semantics(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without SciPy the Python backend solves the generalized problem through the
    standard one with NumPy's LAPACK: the same values to rounding, the same errors."""
    a = TensorType("float64", shape=(None, None, None))("a")
    b = TensorType("float64", shape=(None, None, None))("b")
    outs = [*_outs(nl.Eigh(), a, b), _outs(Eigvalsh(), a, b)[0], _outs(Eigvalsh(), a)[0]]
    m, spd = _pair((3, 4, 4), "float64")
    with_scipy = opweave.function([a, b], outs, mode=MODES["py"])(m, spd)
    monkeypatch.setattr(py_eigen, "scipy_lapack", lambda: None)
    monkeypatch.setattr(py_nlinalg, "scipy_lapack", lambda: None)
    f = opweave.function([a, b], outs, mode=MODES["py"])
    for i, (g, w) in enumerate(zip(f(m, spd), with_scipy, strict=True)):
        if i == 1:  # the eigenvectors are defined up to sign
            g, w = np.abs(g), np.abs(w)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match=r"^(Eigh|Eigvalsh)\{lower=True\}: b is not"):
        f(m, -spd)
