"""C code of ``QR`` (opweave.tensor.nlinalg): the Python backend's values bit for bit,
NumPy's semantics, dtypes, shapes and errors on ``c`` and ``cvm``, in every mode.

Both backends run NumPy's algorithm with SciPy's LAPACK: every matrix in double through
``dgeqrf``, then ``dorgqr`` on the first ``k`` columns of the reflectors for ``Q``, each
with NumPy's workspace (its query, at least ``max(1, n)``). The reference below calls
those routines through ``scipy.linalg.lapack``; the results must be its bits, and
NumPy's values to rounding.
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

from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import nlinalg_qr as c_qr  # noqa: E402
from opweave_c.impls.blockwise_loop import BlockwiseC  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(59)
FLOATS = ["float32", "float64"]
MODES = {k: Mode(linker=k, optimizer=None) for k in ("py", "c", "cvm")}
QR_MODES = ["full", "economic", "r", "raw"]


def _outs(op: Any, x: Any) -> list[Any]:
    """The outputs of ``op``'s node on ``x``."""
    return list(op.make_node(x).outputs)


# -- the reference: NumPy's algorithm on SciPy's LAPACK -------------------------------------


def _qr_one(a: np.ndarray, mode: str) -> list[np.ndarray]:
    m, n = a.shape
    k = min(m, n)
    mc = m if mode == "full" else k
    if k == 0:
        h, tau, q = np.zeros((m, n)), np.zeros(0), np.eye(m, mc)
    else:
        query, _ = lapack.dgeqrf_lwork(m, n)
        h, tau, _, info = lapack.dgeqrf(
            np.array(a, np.float64, order="F"), lwork=max(1, n, int(query))
        )
        assert info == 0
        reflectors = np.zeros((m, mc), order="F")
        reflectors[:, :k] = h[:, :k]
        _, work, _ = lapack.dorgqr(reflectors, tau, lwork=-1)
        q, _, info = lapack.dorgqr(reflectors, tau, lwork=max(1, n, int(work[0])))
        assert info == 0
    if mode in ("full", "economic"):
        return [q, np.triu(h[:mc])]
    if mode == "r":
        return [np.triu(h)]
    return [h, tau, np.triu(h[:k])]


def _reference(a: np.ndarray, mode: str, dtype: str) -> list[np.ndarray]:
    a = np.asarray(a, dtype=dtype)
    batch = a.shape[:-2]
    per = [_qr_one(a[idx], mode) for idx in np.ndindex(*batch)]
    template = _qr_one(np.zeros(a.shape[-2:]), mode)
    return [
        np.array([p[i] for p in per], dtype=np.float64).reshape(*batch, *t.shape).astype(dtype)
        for i, t in enumerate(template)
    ]


def _numpy(a: np.ndarray, mode: str) -> list[np.ndarray]:
    """NumPy's results in the Op's layout."""
    k = min(a.shape[-2:])
    if mode in ("full", "economic"):
        return list(np.linalg.qr(a, mode="complete" if mode == "full" else "reduced"))
    if mode == "r":
        padded = np.zeros(a.shape)
        padded[..., :k, :] = np.linalg.qr(a, mode="r")
        return [padded]
    h, tau = np.linalg.qr(a, mode="raw")
    h = np.swapaxes(h, -1, -2)
    return [h, tau, np.triu(h[..., :k, :])]


# -- which nodes have C ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", QR_MODES)
def test_float_nodes_have_c_and_complex_ones_do_not(mode: str, dtype: str) -> None:
    node = _outs(nl.QR(mode), TensorType(dtype, shape=(None, 3, 4))("x"))[0].owner
    impl = c_code_for(node.op, node)
    assert isinstance(impl, c_qr.QrC) and (impl.kind, impl.dtype) == (c_qr.KINDS[mode], dtype)
    assert any("dgeqrf" in s and "dorgqr" in s for s in impl.c_support_code())
    cnode = _outs(nl.QR(mode), TensorType("complex128", shape=(3, 3))("z"))[0].owner
    assert c_code_for(cnode.op, cnode) is None


def test_capability() -> None:
    assert class_capability(C_OPS, nl.QR) == IMPLEMENTED


def test_complex_nodes_stay_in_python() -> None:
    z = TensorType("complex128", shape=(2, 2))("z")
    outs = _outs(nl.QR("economic"), z)
    with pytest.raises(MissingCCodeError):
        opweave.function([z], outs, mode=MODES["c"])
    f = opweave.function([z], outs, mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    v = np.array([[1 + 1j, 2], [3, 4 - 2j]])
    q, r = f(v)
    np.testing.assert_allclose(q @ r, v, rtol=1e-12)


def test_without_scipy_the_nodes_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    node = _outs(nl.QR(), TensorType("float64", shape=(3, 3))("x"))[0].owner
    monkeypatch.setattr(c_qr, "lapack_exports", lambda routines: False)
    assert c_code_for(node.op, node) is None


# -- values ----------------------------------------------------------------------------------

SHAPES: list[tuple[int, ...]] = [(1, 1), (4, 4), (5, 3), (3, 5), (2, 6, 2), (2, 3, 2, 4)]
SHAPES += [(1, 40, 7)]
EMPTY: list[tuple[int, ...]] = [(2, 0, 3), (2, 3, 0), (0, 2, 2), (1, 0, 0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", QR_MODES)
@pytest.mark.parametrize("shape", SHAPES + EMPTY)
def test_qr_is_the_reference_bit_for_bit(shape: tuple, mode: str, dtype: str) -> None:
    x = TensorType(dtype, shape=(None,) * len(shape))("x")
    fns = compiled([x], _outs(nl.QR(mode), x))
    a = RNG.standard_normal(shape).astype(dtype)
    ref = _reference(a, mode, dtype)
    for name, f in fns.items():
        for got, want in zip(f(a), ref, strict=True):
            assert got.dtype == np.dtype(dtype) and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(fns["cvm"](a), _numpy(a, mode), strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 10)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("dtype", FLOATS)
def test_edge_matrices(dtype: str) -> None:
    cases = [
        [[0.0, 0.0], [0.0, 0.0]],
        [[-0.0, -0.0], [-0.0, -0.0]],
        [[np.nan, 1.0], [2.0, 3.0]],
        [[np.inf, 1.0], [2.0, 3.0]],
        [[1.0, 2.0], [2.0, 4.0]],
        [[1e30, 0.0], [0.0, 1e-30]],
    ]
    x = TensorType(dtype, shape=(2, 2))("x")
    outs = [o for mode in QR_MODES for o in _outs(nl.QR(mode), x)]
    fns = compiled([x], outs)
    arrays = [np.array(c, dtype=dtype) for c in cases]
    check(fns, [(a,) for a in arrays])
    for a in arrays:
        want = [w for mode in QR_MODES for w in _reference(a, mode, dtype)]
        for got, w in zip(fns["c"](a), want, strict=True):
            np.testing.assert_array_equal(got, w)


def test_layouts_and_input_dtypes() -> None:
    """Non-contiguous, Fortran-ordered and transposed inputs; integer inputs are cast to
    the output's dtype first. The inputs are left as they were."""
    for in_dtype, out_dtype in (("int32", "float64"), ("int16", "float32"), ("float64",) * 2):
        x = TensorType(in_dtype, shape=(None, None, None))("x")
        outs = [o for mode in QR_MODES for o in _outs(nl.QR(mode), x)]
        assert {o.dtype for o in outs} == {out_dtype}
        fns = compiled([x], outs)
        a = RNG.integers(-4, 5, (3, 4, 3)).astype(in_dtype)
        before = a.copy()
        check(fns, [(a,), (strided(a),), (np.asfortranarray(a),), (np.swapaxes(a, 1, 2),)])
        np.testing.assert_array_equal(a, before)
        want = [w for mode in QR_MODES for w in _reference(a, mode, out_dtype)]
        for got, w in zip(fns["c"](strided(a)), want, strict=True):
            np.testing.assert_array_equal(got, w)


def test_outputs_are_remade_when_the_shape_changes() -> None:
    x = TensorType("float64", shape=(None, None, None))("x")
    fns = compiled([x], [*_outs(nl.QR("full"), x), *_outs(nl.QR("raw"), x)])
    values = [RNG.standard_normal(s) for s in ((2, 3, 4), (4, 2, 2), (2, 3, 4), (1, 5, 1))]
    check(fns, [(v,) for v in values])


# -- Blockwise -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_blockwise_of_qr_runs_in_c(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, 4, 3))("x")
    outs = [
        *_outs(Blockwise(nl.QR("full"), signature="(m,n)->(m,m),(m,n)"), x),
        *_outs(Blockwise(nl.QR("economic"), signature="(m,n)->(m,k),(k,n)"), x),
    ]
    for out in (outs[0], outs[2]):
        assert isinstance(c_code_for(out.owner.op, out.owner), BlockwiseC)
    fns = compiled([x], outs)
    a = RNG.standard_normal((5, 4, 3)).astype(dtype)
    check(fns, [(a,), (strided(a),), (np.zeros((0, 4, 3), dtype=dtype),)])
    want = [*_reference(a, "full", dtype), *_reference(a, "economic", dtype)]
    for got, w in zip(fns["cvm"](a), want, strict=True):
        np.testing.assert_array_equal(got, w)
