"""The shape, stacking, grid, permutation and triangle helpers of
``opweave.tensor.basic_extra`` (exported from ``opweave.tensor``), against NumPy."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.gradient import verify_grad
from opweave.graph.basic import Variable

RNG = np.random.default_rng(11)


def linkers() -> list[str]:
    """``py`` and ``vm``, and ``c``/``cvm`` when the C backend is installed."""
    try:
        importlib.import_module("opweave_c")
    except ImportError:
        return ["py", "vm"]
    return ["py", "vm", "cvm"]


LINKERS = linkers()


def run(inputs: Sequence[Variable], outputs: Any, *vals: Any, linker: str = "py") -> Any:
    fn = opweave.function(list(inputs), outputs, mode=Mode(linker=linker))
    return fn(*vals)


def op_names(inputs: Sequence[Variable], outputs: Any) -> list[str]:
    fn = opweave.function(list(inputs), outputs, on_unused_input="ignore")
    return [type(n.op).__name__ for n in fn.maker.fgraph.toposort()]


# ====================================================================== ranks and axes


@pytest.mark.parametrize(("fn", "n"), [(ot.atleast_1d, 1), (ot.atleast_2d, 2), (ot.atleast_3d, 3)])
def test_atleast_nd_matches_numpy(fn: Any, n: int) -> None:
    np_fn = {1: np.atleast_1d, 2: np.atleast_2d, 3: np.atleast_3d}[n]
    for value in [np.float64(2.0), np.arange(3.0), np.ones((2, 3)), np.ones((2, 3, 4, 1))]:
        out = fn(value).eval()
        if n < 3 or np.ndim(value) not in (1, 2):
            # NumPy's atleast_3d pads 1-d and 2-d inputs on both sides; PyTensor's on the left
            assert out.shape == np_fn(value).shape
        assert out.ndim == max(n, np.ndim(value))
    x = ot.dvector("x")
    assert ot.atleast_Nd(x, n=3).type.shape == (1, 1, None)
    assert ot.atleast_Nd(x, n=3, left=False).type.shape == (None, 1, 1)
    assert ot.atleast_2d(ot.dmatrix()).type.shape == (None, None)


def test_atleast_nd_rejects_a_bad_n() -> None:
    with pytest.raises(TypeError, match="n must be an int"):
        ot.atleast_Nd(ot.dvector(), n=1.5)


@pytest.mark.parametrize("axis", [0, -1, (0, 2), (-1, 0), 1])
def test_expand_dims_matches_numpy(axis: Any) -> None:
    a = RNG.random((2, 3))
    x = ot.dmatrix("x")
    out = ot.expand_dims(x, axis)
    np.testing.assert_array_equal(run([x], out, a), np.expand_dims(a, axis))
    assert out.type.shape == tuple(1 if s == 1 else None for s in np.expand_dims(a, axis).shape)


def test_expand_dims_empty_axis_and_errors() -> None:
    x = ot.dmatrix("x")
    assert ot.expand_dims(x, ()) is x
    with pytest.raises(np.exceptions.AxisError):
        ot.expand_dims(x, 3)
    with pytest.raises(TypeError, match="axis must be an int"):
        ot.expand_dims(x, 0.5)


@pytest.mark.parametrize(
    ("src", "dst"), [(0, -1), (-1, 0), ([0, 1], [-1, -2]), ([2, 0], [0, 1]), (1, 1)]
)
def test_moveaxis_matches_numpy(src: Any, dst: Any) -> None:
    a = RNG.random((2, 3, 4))
    x = ot.dtensor3("x")
    np.testing.assert_array_equal(run([x], ot.moveaxis(x, src, dst), a), np.moveaxis(a, src, dst))


def test_moveaxis_errors() -> None:
    x = ot.dtensor3("x")
    with pytest.raises(ValueError, match="same number of elements"):
        ot.moveaxis(x, [0, 1], [2])
    with pytest.raises(np.exceptions.AxisError):
        ot.moveaxis(x, 3, 0)


def test_is_flat() -> None:
    assert ot.is_flat(ot.dvector())
    assert not ot.is_flat(ot.dmatrix())
    assert ot.is_flat(ot.flatten(ot.dtensor3(), 2), ndim=2)


# ====================================================================== allocation


def test_empty_and_empty_like_shapes_and_dtypes() -> None:
    out = ot.empty((2, 3), dtype="int32")
    assert out.dtype == "int32" and out.type.shape == (2, 3)
    assert out.eval().shape == (2, 3)
    assert ot.empty(4).eval().shape == (4,)
    assert ot.empty((0, 3)).eval().shape == (0, 3)
    n = ot.lscalar("n")
    assert run([n], ot.empty([n, 2]), 5).shape == (5, 2)
    x = ot.fmatrix("x")
    like = ot.empty_like(x)
    assert like.dtype == "float32"
    assert run([x], like, np.ones((3, 1), "float32")).shape == (3, 1)
    assert ot.empty_like(x, dtype="int8").dtype == "int8"


def test_identity_and_identity_like() -> None:
    x = ot.dmatrix("x")
    assert ot.identity is ot.tensor_copy
    a = RNG.random((2, 4))
    np.testing.assert_array_equal(run([x], ot.identity(x), a), a)
    np.testing.assert_array_equal(run([x], ot.identity_like(x), a), np.eye(2, 4))
    assert ot.identity_like(x, dtype="int16").dtype == "int16"
    with pytest.raises(ValueError, match="must be a matrix"):
        ot.identity_like(ot.dvector())


# ====================================================================== stacking and grids


@pytest.mark.parametrize("linker", LINKERS)
def test_horizontal_and_vertical_stack(linker: str) -> None:
    a, b = RNG.random((2, 3)), RNG.random((2, 1))
    x, y = ot.dmatrices("x", "y")
    np.testing.assert_array_equal(
        run([x, y], ot.horizontal_stack(x, y), a, b, linker=linker), np.hstack([a, b])
    )
    np.testing.assert_array_equal(
        run([x, y], ot.vertical_stack(x, y.T), a, RNG.random((3, 1)), linker=linker).shape, (3, 3)
    )
    np.testing.assert_array_equal(
        run([x], ot.vertical_stack(x, x), a, linker=linker), np.vstack([a, a])
    )
    with pytest.raises(ValueError, match="too few arguments"):
        ot.horizontal_stack(x)
    with pytest.raises(ValueError, match="two dimensions"):
        ot.vertical_stack(x, ot.dvector())


def test_stacklists() -> None:
    a, b, c, d = ot.dscalars("a", "b", "c", "d")
    out = ot.stacklists([[a, b], [c, d]])
    np.testing.assert_array_equal(run([a, b, c, d], out, 1, 2, 3, 4), [[1, 2], [3, 4]])
    m = ot.dmatrix("m")
    out = ot.stacklists([[m, m], [m, m]])
    assert run([m], out, np.ones((4, 3))).shape == (2, 2, 4, 3)
    assert ot.stacklists(a) is a


def test_mgrid_and_ogrid_match_numpy() -> None:
    for got, want in zip(ot.mgrid[0:5, 0:3], np.mgrid[0:5, 0:3], strict=True):
        np.testing.assert_array_equal(got.eval(), want)
    for got, want in zip(ot.mgrid[1:7:2, 0:4, 2:0:-1], np.mgrid[1:7:2, 0:4, 2:0:-1], strict=True):
        np.testing.assert_array_equal(got.eval(), want)
    for got, want in zip(ot.ogrid[0:5, 3:0:-1], np.ogrid[0:5, 3:0:-1], strict=True):
        np.testing.assert_array_equal(got.eval(), want)
    np.testing.assert_array_equal(ot.mgrid[2:6].eval(), np.arange(2, 6))
    n = ot.lscalar("n")
    grid = ot.mgrid[0:n, 0:2]
    np.testing.assert_array_equal(run([n], grid[0], 3), np.mgrid[0:3, 0:2][0])
    with pytest.raises(TypeError, match="expected slices"):
        ot.mgrid[0:3, 4]


# ====================================================================== indexing along an axis


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis_matches_numpy(axis: Any, linker: str) -> None:
    a = RNG.random((3, 4))
    idx = np.argsort(a, axis=axis) if axis is not None else np.argsort(a, axis=None)
    x = ot.dmatrix("x")
    i = ot.lmatrix("i") if axis is not None else ot.lvector("i")
    got = run([x, i], ot.take_along_axis(x, i, axis), a, idx, linker=linker)
    np.testing.assert_array_equal(got, np.take_along_axis(a, idx, axis))


def test_take_along_axis_broadcasts_and_shapes() -> None:
    a = RNG.random((3, 4, 5))
    idx = np.array([[[0], [4], [2], [1]]])  # (1, 4, 1): broadcast over axes 0
    x = ot.dtensor3("x")
    i = ot.ltensor3("i")
    out = ot.take_along_axis(x, i, axis=2)
    np.testing.assert_array_equal(run([x, i], out, a, idx), np.take_along_axis(a, idx, 2))
    # the output's shape needs no indexing
    assert "AdvancedSubtensor" not in op_names([x, i], out.shape)
    np.testing.assert_array_equal(run([x, i], out.shape, a, idx), [3, 4, 1])
    # empty indices
    empty = np.zeros((3, 4, 0), dtype="int64")
    assert run([x, i], out, a, empty).shape == (3, 4, 0)


def test_take_along_axis_errors() -> None:
    x = ot.dmatrix("x")
    with pytest.raises(IndexError, match="integer array"):
        ot.take_along_axis(x, ot.dmatrix(), 0)
    with pytest.raises(ValueError, match="same number of dimensions"):
        ot.take_along_axis(x, ot.lvector(), 0)
    with pytest.raises(np.exceptions.AxisError):
        ot.take_along_axis(x, ot.lmatrix(), 2)


def test_take_along_axis_gradient() -> None:
    idx = np.array([[2, 0, 0], [1, 1, 2]])
    verify_grad(
        lambda v: ot.take_along_axis(v, ot.constant(idx), axis=1),
        [RNG.random((2, 3))],
        rng=np.random.default_rng(1),
        mode=Mode(linker="py"),
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_inverse_permutation(linker: str) -> None:
    p = ot.lmatrix("p")
    perms = np.array([[3, 0, 2, 1], [0, 1, 2, 3]])
    want = np.argsort(perms, axis=-1)
    got = run([p], ot.inverse_permutation(p), perms, linker=linker)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64
    i = ot.ivector("i")
    assert ot.inverse_permutation(i).dtype == "int32"
    with pytest.raises(TypeError, match="integer tensor"):
        ot.inverse_permutation(ot.dvector())


@pytest.mark.parametrize("linker", LINKERS)
def test_permute_row_elements(linker: str) -> None:
    a = RNG.random((3, 4))
    x = ot.dmatrix("x")
    p = ot.lvector("p")
    perm = np.array([3, 0, 2, 1])
    np.testing.assert_array_equal(
        run([x, p], ot.permute_row_elements(x, p), a, perm, linker=linker), a[:, perm]
    )
    inv = run([x, p], ot.permute_row_elements(x, p, inverse=True), a, perm, linker=linker)
    expected = np.empty_like(a)
    expected[:, perm] = a
    np.testing.assert_array_equal(inv, expected)
    # one permutation per row
    pm = ot.lmatrix("pm")
    perms = np.array([np.roll(np.arange(4), k) for k in range(3)])
    got = run([x, pm], ot.permute_row_elements(x, pm), a, perms, linker=linker)
    np.testing.assert_array_equal(got, np.take_along_axis(a, perms, 1))
    # x broadcast to y's rows
    v = ot.dvector("v")
    got = run([v, pm], ot.permute_row_elements(v, pm), a[0], perms, linker=linker)
    np.testing.assert_array_equal(got, a[0][perms])


def test_permute_row_elements_gradient_and_errors() -> None:
    perm = ot.constant(np.array([2, 0, 1]))
    for inverse in (False, True):
        verify_grad(
            lambda v, inverse=inverse: ot.permute_row_elements(v, perm, inverse=inverse),
            [RNG.random((2, 3))],
            rng=np.random.default_rng(2),
            mode=Mode(linker="py"),
        )
    with pytest.raises(TypeError, match="integer tensor"):
        ot.permute_row_elements(ot.dmatrix(), ot.dvector())
    with pytest.raises(ValueError, match="at least one dimension"):
        ot.permute_row_elements(ot.dscalar(), ot.lvector())


# ====================================================================== diagonals and triangles


@pytest.mark.parametrize("linker", LINKERS)
def test_trace_matches_numpy(linker: str) -> None:
    a = RNG.random((3, 4, 5))
    x = ot.dtensor3("x")
    cases = [(0, 0, 1), (1, 0, 1), (-1, 1, 2), (0, -1, 0)]
    got = run([x], [ot.trace(x, *case) for case in cases], a, linker=linker)
    for g, case in zip(got, cases, strict=True):
        np.testing.assert_allclose(g, np.trace(a, *case), rtol=1e-14)


def test_trace_of_a_matrix_gradient_and_empty() -> None:
    x = ot.dmatrix("x")
    assert run([x], ot.trace(x), np.zeros((0, 0))) == 0.0
    verify_grad(lambda v: ot.trace(v, 1), [RNG.random((3, 3))], rng=np.random.default_rng(4))


def test_extract_diag_is_deprecated() -> None:
    x = ot.dmatrix("x")
    a = RNG.random((3, 3))
    with pytest.warns(FutureWarning, match="diagonal"):
        out = ot.extract_diag(x)
    np.testing.assert_array_equal(run([x], out, a), np.diag(a))


@pytest.mark.parametrize("linker", LINKERS)
def test_triangle_indices_match_numpy(linker: str) -> None:
    nn, kk, mm = ot.lscalars("n", "k", "m")
    fn = opweave.function(
        [nn, kk, mm],
        [*ot.tril_indices(nn, kk, mm), *ot.triu_indices(nn, kk, mm)],
        mode=Mode(linker=linker),
    )
    for n, k, m in [(4, 0, None), (3, 1, 5), (4, -2, 3), (3, 5, None), (0, 0, None)]:
        got = fn(n, k, n if m is None else m)
        want = [*np.tril_indices(n, k, m), *np.triu_indices(n, k, m)]
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    # m defaults to n
    np.testing.assert_array_equal(ot.triu_indices(3)[1].eval(), np.triu_indices(3)[1])


def test_triangle_indices_from() -> None:
    a = RNG.random((3, 5))
    x = ot.dmatrix("x")
    for fn, np_fn in [
        (ot.tril_indices_from, np.tril_indices_from),
        (ot.triu_indices_from, np.triu_indices_from),
    ]:
        got = run([x], list(fn(x, k=1)), a)
        for g, w in zip(got, np_fn(a, k=1), strict=True):
            np.testing.assert_array_equal(g, w)
        with pytest.raises(ValueError, match="two dimensional"):
            fn(ot.dvector())
    rows, cols = ot.triu_indices_from(x)
    np.testing.assert_array_equal(run([x], x[rows, cols], a), a[np.triu_indices_from(a)])


def test_names_are_exported() -> None:
    for name in [
        "atleast_1d", "atleast_2d", "atleast_3d", "atleast_Nd", "empty", "empty_like",
        "expand_dims", "extract_diag", "horizontal_stack", "vertical_stack", "identity",
        "identity_like", "inverse_permutation", "is_flat", "mgrid", "ogrid", "moveaxis",
        "permute_row_elements", "stacklists", "take_along_axis", "trace", "tril_indices",
        "tril_indices_from", "triu_indices", "triu_indices_from",
    ]:  # fmt: skip
        assert name in ot.__all__, name
        assert getattr(ot, name) is not None
