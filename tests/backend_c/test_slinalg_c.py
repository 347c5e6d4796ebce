"""C code of ``opweave.tensor.slinalg`` (Cholesky, Solve, SolveTriangular, CholeskySolve):
the Python backend's values, NaN, dtypes, shapes and errors on the ``c`` and ``cvm`` linkers.

The C kernels hand LAPACK the matrices the Python kernels build, with the same routines
(``potrf('L')``, ``gesv``) from the same build, SciPy's. So the C results are checked bit
for bit against those routines called through ``scipy.linalg.lapack`` on the matrices the
Python kernel builds, and against the Python backend (values, NaN, signs of zeros and
errors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pytest
from c_parity import compiled, outcome, strided

import opweave
from opweave.compile import Mode
from opweave.link.capabilities import FALLBACK, IMPLEMENTED
from opweave.link.resolver import class_capability
from opweave.tensor import slinalg as sl
from opweave.tensor.type import TensorType

lapack = pytest.importorskip("scipy.linalg.lapack")

from opweave_c.impls import C_OPS, c_code_for  # noqa: E402
from opweave_c.impls import slinalg as c_slinalg  # noqa: E402
from opweave_c.linkers.c_linker import MissingCCodeError  # noqa: E402

RNG = np.random.default_rng(23)
FLOATS = ["float32", "float64"]

#: Every solver: (id, Op).
SOLVERS: list[tuple[str, Any]] = [
    *(
        (
            f"solve-{kind}-{'lower' if lower else 'upper'}",
            sl.Solve(assume_a=kind, lower=lower, b_ndim=2),
        )
        for kind in ("gen", "sym", "her", "pos", "tridiagonal", "banded")
        for lower in (False, True)
    ),
    *(
        (
            f"triangular-{lower}-{unit}",
            sl.SolveTriangular(lower=lower, unit_diagonal=unit, b_ndim=2),
        )
        for lower in (False, True)
        for unit in (False, True)
    ),
    ("cho_solve-lower", sl.CholeskySolve(lower=True, b_ndim=2)),
    ("cho_solve-upper", sl.CholeskySolve(lower=False, b_ndim=2)),
    ("solve-base", sl.SolveBase(b_ndim=2)),
]


# -- the reference: SciPy's LAPACK on the matrices the Python kernel builds ---------------


class _Failed(Exception):
    pass


def _checked(info: int) -> None:
    if info > 0:
        raise _Failed
    assert info == 0


def _gesv(m: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    _, _, x, info = lapack.get_lapack_funcs("gesv", dtype=m.dtype)(m, rhs)
    _checked(info)
    return np.asarray(x)


def _potrf(m: np.ndarray) -> np.ndarray:
    c, info = lapack.get_lapack_funcs("potrf", dtype=m.dtype)(m, lower=1, clean=1)
    _checked(info)
    return np.asarray(c)


def _tri(a: np.ndarray, lower: bool, unit: bool = False) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        np.fill_diagonal(t, 1)
    return t


def _matrix_route(op: Any, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One matrix, as the Python kernel routes it (``b`` a matrix)."""
    if isinstance(op, sl.SolveTriangular):
        return _gesv(_tri(a, op.lower, op.unit_diagonal), b)
    if isinstance(op, sl.CholeskySolve):
        if op.lower:
            return _gesv(np.triu(a.T), _gesv(np.tril(a), b))
        return _gesv(np.triu(a), _gesv(np.tril(a.T), b))
    kind = getattr(op, "assume_a", "gen")
    if kind in ("sym", "her", "pos"):
        part = np.tril(a, -1) if op.lower else np.triu(a, 1)
        full = _tri(a, op.lower) + part.T
        if kind != "pos":
            return _gesv(full, b)
        factor = _potrf(full)
        return _gesv(np.triu(factor.T), _gesv(np.tril(factor), b))
    if kind == "tridiagonal":
        return _gesv(np.triu(np.tril(a, 1), -1), b)
    return _gesv(a, b)


def _reference(op: Any, a: np.ndarray, b: np.ndarray | None, dtype: str) -> np.ndarray:
    """The whole batch (``b`` broadcast against ``a``), NaN where LAPACK fails."""
    a = np.asarray(a, dtype=dtype)
    if b is None:  # Cholesky
        out = np.empty(a.shape, dtype=dtype)
        for idx in np.ndindex(*a.shape[:-2]):
            try:
                src = a[idx] if op.lower else a[idx].T
                factor = _potrf(src) if a.shape[-1] else src.copy()
                out[idx] = factor if op.lower else factor.T
            except _Failed:
                out[idx] = np.nan
        return out
    b = np.asarray(b, dtype=dtype)
    rhs = b[..., None] if op.b_ndim == 1 else b
    batch = np.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    a, rhs = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(rhs, batch + rhs.shape[-2:])
    x = np.empty(rhs.shape, dtype=dtype)
    for idx in np.ndindex(*batch):
        if x[idx].size == 0:
            continue
        try:
            x[idx] = _matrix_route(op, a[idx], rhs[idx])
        except _Failed:
            x[idx] = np.nan
    return x[..., 0] if op.b_ndim == 1 else x


# -- comparison ---------------------------------------------------------------------------


def _same_as_python(ref: Any, got: Any, where: str) -> None:
    """The same error, or the same dtypes, shapes and values bit for bit."""
    assert ref[0] == got[0], f"{where}: {ref} != {got}"
    if ref[0] == "error":
        assert ref[1] == got[1], where
        return
    if isinstance(ref[1], list):
        for r, g in zip(ref[1], got[1], strict=True):
            _same_as_python(("ok", r), ("ok", g), where)
        return
    r, g = ref[1], got[1]
    assert type(r) is type(g) and r.dtype == g.dtype and r.shape == g.shape, where
    _same_bits(g, r, where)


def _same_bits(got: np.ndarray, expected: np.ndarray, where: str = "") -> None:
    """Equal values, zeros of the same sign, NaN in the same places."""
    np.testing.assert_array_equal(got, expected, err_msg=where)
    both = ~np.isnan(expected)
    np.testing.assert_array_equal(np.signbit(got[both]), np.signbit(expected[both]), where)


def _check(
    fns: dict[str, Any],
    op: Any,
    args: list[Any],
    dtype: str,
) -> None:
    """The C linkers equal SciPy's routine on the Python kernel's matrices and the Python
    backend bit for bit (and raise its errors)."""
    ref = outcome(fns["py"], args)
    before = [np.array(x, copy=True) for x in args]
    for name in ("c", "cvm"):
        got = outcome(fns[name], args)
        _same_as_python(ref, got, f"{name} on {args!r}")
        if got[0] == "ok":
            b = args[1] if len(args) > 1 else None
            _same_bits(got[1], _reference(op, args[0], b, dtype))
    for x, saved in zip(args, before, strict=True):  # the Ops destroy no input
        np.testing.assert_array_equal(x, saved)


# -- inputs -------------------------------------------------------------------------------


def _spd(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    x = RNG.normal(size=(*batch, n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def _dominant(n: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """Well conditioned: every triangle, band and symmetric part is diagonally dominant."""
    return RNG.normal(size=(*batch, n, n)) + 3 * n * np.eye(n)


def _ill(n: int, cond: float, batch: tuple[int, ...] = ()) -> np.ndarray:
    u = np.linalg.qr(RNG.normal(size=(*batch, n, n)))[0]
    s = np.logspace(0, -np.log10(cond), n)
    spd: np.ndarray = (u * s[..., None, :]) @ np.swapaxes(u, -1, -2)
    return spd


def _singular(n: int) -> np.ndarray:
    """Exactly singular for every solver: a zero row and column in the middle."""
    a = np.round(_dominant(n))
    a[n // 2, :] = 0
    a[:, n // 2] = 0
    return a


def _not_pd(n: int) -> np.ndarray:
    a = _spd(n)
    a[n - 1, n - 1] = -1.0
    return a


def _graph(op: Any, dtype: str, a_shape: tuple, b_shape: tuple | None) -> tuple[list, Any]:
    a = TensorType(dtype, shape=a_shape)("a")
    if b_shape is None:
        return [a], op(a)
    b = TensorType(dtype, shape=b_shape)("b")
    return [a, b], op(a, b)


# -- tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("name", "op"), SOLVERS, ids=[s[0] for s in SOLVERS])
def test_solvers_in_c(name: str, op: Any, dtype: str) -> None:
    ins, out = _graph(op, dtype, (None, None, None), (None, None, None))
    fns = compiled(ins, out)
    n, k = 5, 3
    base = _spd(n, (2,)) if "pos" in name or "cho" in name else _dominant(n, (2,))
    if "cho" in name:  # a Cholesky factor
        base = np.linalg.cholesky(base)
        base = base if op.lower else np.swapaxes(base, -1, -2)
    b = RNG.normal(size=(2, n, k))
    bad = _not_pd(n) if "pos" in name else _singular(n)
    if "triangular" in name:
        bad = _dominant(n)
        np.fill_diagonal(bad, 0)
    nan_a = base.copy()
    nan_a[1, 0, 0] = np.nan
    inf_b = b.copy()
    inf_b[0, 1, 1] = np.inf
    signed = np.where(np.eye(n, dtype=bool), 2.0, -0.0)  # the sign of zeros is NumPy's
    cases = [
        (base, b),
        (np.stack([signed, signed]), np.full((2, n, k), -0.0)),
        (np.stack([base[0], bad]), b),  # one matrix of the batch fails: NaN there only
        (np.stack([bad, bad]), b),  # every matrix fails
        (nan_a, b),
        (base, inf_b),
        (np.asfortranarray(base), b[..., ::-1]),  # other layouts
        (strided(base), strided(b)),
        (np.zeros((2, 0, 0)), np.zeros((2, 0, k))),  # empty matrices
        (np.zeros((0, n, n)), np.zeros((0, n, k))),  # an empty batch
        (base, np.zeros((2, n, 0))),  # no right-hand side
        (base[:, :, :-1], b),  # not square
        (base, b[:, :-1]),  # rows do not match
        (base, b[:1]),  # a length-1 batch axis not statically 1
        (base[:1].repeat(3, 0), b),  # batches that do not broadcast
    ]
    for a_val, b_val in cases:
        _check(fns, op, [a_val.astype(dtype), b_val.astype(dtype)], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("on_error", ["nan", "raise"])
def test_cholesky_in_c(dtype: str, lower: bool, on_error: Literal["nan", "raise"]) -> None:
    op = sl.Cholesky(lower=lower, on_error=on_error)
    a = TensorType(dtype, shape=(None, None))("a")
    batched = TensorType(dtype, shape=(None, None, None, None))("ab")
    fns = compiled([a, batched], [op(a), op(batched)])
    n = 6
    good = _spd(n)
    nan = good.copy()
    nan[0, n - 1] = nan[n - 1, 0] = np.nan
    negative_zero = good.copy()
    negative_zero[1, 0] = negative_zero[0, 1] = -0.0
    grid = _spd(n, (2, 3))
    grid[1, 1] = _not_pd(n)  # raises naming batch index (1, 1)
    cases = [
        (good, grid),
        (strided(good), np.asfortranarray(grid)),
        (_not_pd(n), _spd(n, (2, 3))),  # raises without a batch index
        (nan, _spd(n, (2, 3))),
        (negative_zero, np.zeros((2, 0, n, n))),
        (np.zeros((0, 0)), np.zeros((1, 2, 0, 0))),
        (good[:, :-1], grid),
    ]
    for x, xb in cases:
        args = [x.astype(dtype), xb.astype(dtype)]
        ref = outcome(fns["py"], args)
        for name in ("c", "cvm"):
            got = outcome(fns[name], args)
            _same_as_python(ref, got, name)
            if got[0] == "ok":
                for value, arg in zip(got[1], args, strict=True):
                    _same_bits(value, _reference(op, arg, None, dtype))


def test_cholesky_errors_name_the_batch_index() -> None:
    x = TensorType("float64", shape=(None, None, None, None))("x")
    f = opweave.function([x], sl.Cholesky(on_error="raise")(x), mode=Mode(linker="c"))
    grid = _spd(3, (2, 3))
    grid[1, 2] = -np.eye(3)
    with pytest.raises(np.linalg.LinAlgError, match=r"at batch index \(1, 2\) is not positive"):
        f(grid)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize(("name", "op"), SOLVERS[::3], ids=[s[0] for s in SOLVERS[::3]])
def test_ill_conditioned_systems(name: str, op: Any, dtype: str) -> None:
    cond = 1e9 if dtype == "float64" else 1e4
    ins, out = _graph(op, dtype, (None, None, None), (None, None, None))
    fns = compiled(ins, out)
    a = _ill(6, cond, (2,))
    if "cho" in name:
        a = np.linalg.cholesky(a)
        a = a if op.lower else np.swapaxes(a, -1, -2)
    b = RNG.normal(size=(2, 6, 2))
    # rounding errors as large as cond * eps: still the same bits
    _check(fns, op, [a.astype(dtype), b.astype(dtype)], dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_vectors_broadcasting_and_casts(dtype: str) -> None:
    op_vec = sl.Solve(assume_a="pos", lower=True, b_ndim=1)
    op_mat = sl.SolveTriangular(lower=True, b_ndim=2)
    a = TensorType(dtype, shape=(1, None, None))("a")  # a batch axis broadcast statically
    v = TensorType(dtype, shape=(None, None))("v")
    m = TensorType(dtype, shape=(None, None, None))("m")
    ai = TensorType("int16", shape=(None, None))("ai")  # cast to the output's float dtype
    vi = TensorType("uint8", shape=(None,))("vi")
    solve_int = sl.solve(ai, vi, b_ndim=1)
    fns = compiled([a, v, m, ai, vi], [op_vec(a, v), op_mat(a, m), solve_int])
    a_val = _spd(4, (1,)).astype(dtype)
    args = [
        a_val,
        RNG.normal(size=(3, 4)).astype(dtype),
        RNG.normal(size=(3, 4, 2)).astype(dtype),
        np.array([[3, 1, 0], [1, 4, 1], [0, 2, 5]], np.int16),
        np.array([1, 255, 7], np.uint8),
    ]
    ref = outcome(fns["py"], args)
    for name in ("c", "cvm"):
        got = outcome(fns[name], args)
        _same_as_python(ref, got, name)
        _same_bits(got[1][0], _reference(op_vec, args[0], args[1], dtype))
        _same_bits(got[1][1], _reference(op_mat, args[0], args[2], dtype))
        solved = _reference(_node(solve_int).op, args[3], args[4], solve_int.dtype)
        _same_bits(got[1][2], solved)


def test_the_c_linker_takes_these_ops_and_their_classes_say_so() -> None:
    x, v = TensorType("float64", shape=(None, None))("x"), TensorType("float64", shape=(None,))("v")
    outs = [
        sl.cholesky(x),
        sl.solve(x, v, assume_a="sym", b_ndim=1),
        sl.solve_triangular(x, v, b_ndim=1),
        sl.cho_solve((x, True), v, b_ndim=1),
    ]
    f = opweave.function([x, v], outs, mode=Mode(linker="c", optimizer=None))
    a = _spd(3)
    assert all(np.isfinite(o).all() for o in f(a, np.ones(3)))
    for cls in (sl.Cholesky, sl.Solve, sl.SolveBase, sl.SolveTriangular, sl.CholeskySolve):
        assert class_capability(C_OPS, cls) == IMPLEMENTED, cls
    from opweave.tensor.linalg.products import Expm

    assert class_capability(C_OPS, Expm) == FALLBACK


def _node(out: Any) -> Any:
    assert out.owner is not None
    return out.owner


def _node_of(dtype: str) -> Any:
    a = TensorType(dtype, shape=(None, None))("a")
    return _node(sl.Solve(b_ndim=1)(a, TensorType(dtype, shape=(None,))("b")))


def test_complex_values_and_a_missing_scipy_run_in_python(monkeypatch: pytest.MonkeyPatch) -> None:
    node = _node_of("complex128")
    assert c_code_for(node.op, node) is None
    with pytest.raises(MissingCCodeError, match="Solve"):
        opweave.function(node.inputs, node.outputs[0], mode=Mode(linker="c", optimizer=None))
    f = opweave.function(node.inputs, node.outputs[0], mode=Mode(linker="cvm", optimizer=None))
    a = np.array([[2 + 1j, 0], [1, 1j]])
    np.testing.assert_allclose(f(a, np.array([1, 2 + 0j])), np.linalg.solve(a, [1, 2 + 0j]))
    node = _node_of("float64")
    assert c_code_for(node.op, node) is not None
    monkeypatch.setattr(c_slinalg, "lapack_available", lambda: False)
    assert c_code_for(node.op, node) is None


def test_raise_as_python_raises_the_python_kernels_error() -> None:
    node = _node_of("float64")
    described = c_slinalg._node_json(node)
    with pytest.raises(ValueError, match="b must have 2 rows"):
        c_slinalg.raise_as_python(described, np.eye(2), np.ones(3))
    raise_error: Callable[..., None] = c_slinalg.raise_as_python
    with pytest.raises(KeyError):
        raise_error('{"op": "Expm", "props": {}, "inputs": []}')
