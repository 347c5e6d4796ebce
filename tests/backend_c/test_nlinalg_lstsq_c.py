"""C code of ``Lstsq`` (opweave.tensor.nlinalg): the Python backend's values bit for bit,
NumPy's semantics, dtypes, shapes and errors on ``c`` and ``cvm``.

Both backends run NumPy's algorithm with SciPy's LAPACK: ``a`` and ``b`` in double
through ``dgelsd`` with the workspace of its query, ``b`` in ``max(m, n)`` rows, the
residuals summed in order over the rows beyond ``n``. The reference below calls the
routine through ``scipy.linalg.lapack``; the results must be its bits, and NumPy's values
to rounding.
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
from opweave.tensor.type import TensorType

lapack = pytest.importorskip("scipy.linalg.lapack")

from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import nlinalg_lstsq as c_lstsq  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(61)
FLOATS = ["float32", "float64"]
MODES = {k: Mode(linker=k, optimizer=None) for k in ("py", "c", "cvm")}


def _graph(dtype: str, b_ndim: int, rcond: bool) -> tuple[list[Any], list[Any]]:
    a = TensorType(dtype, shape=(None, None))("a")
    b = TensorType(dtype, shape=(None,) * b_ndim)("b")
    inputs = [a, b]
    if rcond:
        inputs.append(TensorType("float64", shape=())("rcond"))
    return inputs, list(nl.Lstsq().make_node(*inputs).outputs)


def _reference(a: np.ndarray, b: np.ndarray, rcond: float | None, dtype: str) -> list[Any]:
    """NumPy's steps with SciPy's ``dgelsd``."""
    a, b = np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype)
    m, n = a.shape
    rhs_in = b[:, None] if b.ndim == 1 else b
    nrhs = rhs_in.shape[1]
    cond = np.finfo(np.float64).eps * max(m, n) if rcond is None else rcond
    rhs = np.zeros((max(1, m, n), max(1, nrhs)), order="F")
    rhs[:m, :nrhs] = rhs_in
    s, rank = np.empty(min(m, n)), 0
    if min(m, n):
        work, iwork, _ = lapack.dgelsd_lwork(m, n, rhs.shape[1], cond)
        rhs, s, rank, info = lapack.dgelsd(
            np.array(a, np.float64, order="F"), rhs, int(work), int(iwork), cond=cond
        )
        assert info == 0
    x = np.zeros((n, nrhs)) if m == 0 else rhs[:n, :nrhs]
    residuals = []
    if rank == n and m > n:
        for i in range(nrhs):
            acc = 0.0
            for v in rhs[n:m, i].tolist():
                acc += v * v
            residuals.append(acc)
    x = x[:, 0] if b.ndim == 1 else x
    return [
        x.astype(dtype),
        np.array(residuals, dtype=dtype),
        np.asarray(rank, dtype="int32"),
        s.astype(dtype),
    ]


def test_float_nodes_have_c_and_complex_ones_do_not() -> None:
    for dtype in FLOATS:
        _, outs = _graph(dtype, 2, True)
        impl = c_code_for(outs[0].owner.op, outs[0].owner)
        assert isinstance(impl, c_lstsq.LstsqC) and impl.dtype == dtype
        assert any("dgelsd" in s for s in impl.c_support_code())
    z = TensorType("complex128", shape=(3, 2))("z")
    node = nl.Lstsq().make_node(z, z)
    assert c_code_for(node.op, node) is None
    assert class_capability(C_OPS, nl.Lstsq) == IMPLEMENTED


def test_complex_nodes_stay_in_python() -> None:
    z = TensorType("complex128", shape=(3, 2))("z")
    y = TensorType("complex128", shape=(3,))("y")
    outs = list(nl.Lstsq().make_node(z, y).outputs)
    with pytest.raises(MissingCCodeError):
        opweave.function([z, y], outs, mode=MODES["c"])
    f = opweave.function([z, y], outs, mode=MODES["cvm"])
    assert f.fn.c_nodes == []
    a = RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))
    v = RNG.standard_normal(3) + 0j
    np.testing.assert_allclose(f(a, v)[0], np.linalg.lstsq(a, v)[0], rtol=1e-12)


def test_without_scipy_the_nodes_stay_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    _, outs = _graph("float64", 1, False)
    monkeypatch.setattr(c_lstsq, "lapack_exports", lambda routines: False)
    assert c_code_for(outs[0].owner.op, outs[0].owner) is None


SHAPES = [(5, 3), (3, 5), (4, 4), (6, 1), (1, 1), (3, 0), (0, 2), (0, 0), (30, 7)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b_ndim", [1, 2])
@pytest.mark.parametrize("rcond", [None, 1e-3])
@pytest.mark.parametrize("shape", SHAPES)
def test_values_are_the_reference_bit_for_bit(
    shape: tuple[int, int], rcond: float | None, b_ndim: int, dtype: str
) -> None:
    inputs, outs = _graph(dtype, b_ndim, rcond is not None)
    fns = compiled(inputs, outs)
    m = shape[0]
    a = RNG.standard_normal(shape).astype(dtype)
    b = RNG.standard_normal((m,) if b_ndim == 1 else (m, 2)).astype(dtype)
    args = [a, b] + ([np.float64(rcond)] if rcond is not None else [])
    ref = _reference(a, b, rcond, dtype)
    for name, f in fns.items():
        for got, want in zip(f(*args), ref, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape, name
            np.testing.assert_array_equal(got, want, err_msg=name)
    want = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=rcond)
    rtol = 1e-4 if dtype == "float32" else 1e-9
    for got, w in zip(fns["cvm"](*args), want, strict=True):
        np.testing.assert_allclose(got, np.asarray(w), rtol=rtol, atol=rtol)
    check(fns, [(strided(a), strided(b), *args[2:]), (np.asfortranarray(a), b, *args[2:])])


@pytest.mark.parametrize("dtype", FLOATS)
def test_rank_deficient_edge_and_failing_problems(dtype: str) -> None:
    inputs, outs = _graph(dtype, 2, False)
    fns = compiled(inputs, outs)
    a = RNG.standard_normal((5, 3)).astype(dtype)
    a[:, 2] = a[:, 0]
    b = RNG.standard_normal((5, 2)).astype(dtype)
    got = fns["c"](a, b)
    for g, w in zip(got, _reference(a, b, None, dtype), strict=True):
        np.testing.assert_array_equal(g, w)
    assert got[2] == 2 and got[1].shape == (0,)
    cases = [
        (a, b),
        (np.zeros((3, 2), dtype=dtype), np.ones((3, 1), dtype=dtype)),
        (-np.zeros((3, 2), dtype=dtype), -np.zeros((3, 2), dtype=dtype)),
        (np.array([[1e30, 0], [0, 1e-30], [1, 1]], dtype=dtype), np.ones((3, 1), dtype=dtype)),
        (np.ones((3, 2), dtype=dtype), np.zeros((3, 0), dtype=dtype)),
    ]
    check(fns, cases)
    nan = a.copy()
    nan[0, 0] = np.nan
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge in Linear Least"):
        np.linalg.lstsq(nan, b)
    wrong = np.ones((4, 2), dtype=dtype)
    with pytest.raises(np.linalg.LinAlgError, match="Incompatible dimensions"):
        np.linalg.lstsq(a, wrong)
    check(fns, [(nan, b), (a, wrong)])
    for f in fns.values():
        with pytest.raises(np.linalg.LinAlgError, match=r"^SVD did not converge in Linear"):
            f(nan, b)
        with pytest.raises(np.linalg.LinAlgError, match=r"^Incompatible dimensions"):
            f(a, wrong)


def test_integer_inputs_are_cast_and_left_as_they_were() -> None:
    a = TensorType("int32", shape=(None, None))("a")
    b = TensorType("int16", shape=(None,))("b")
    outs: list[Any] = list(nl.Lstsq().make_node(a, b).outputs)
    assert outs[0].dtype == "float64"
    fns = compiled([a, b], outs)
    x = RNG.integers(-4, 5, (5, 3)).astype("int32")
    y = RNG.integers(-4, 5, 5).astype("int16")
    before = (x.copy(), y.copy())
    check(fns, [(x, y), (strided(x), strided(y))])
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])
    for g, w in zip(fns["c"](x, y), _reference(x, y, None, "float64"), strict=True):
        np.testing.assert_array_equal(g, w)
