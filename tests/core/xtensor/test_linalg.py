"""Ops applied over the batch dimensions of named-dimension tensors with ``XBlockwise``:
``opweave.xtensor.linalg`` (``cholesky``, ``solve``) and ``opweave.xtensor.signal``
(``convolve1d``), compared with NumPy on explicitly aligned arrays."""

import numpy as np
import pytest

import opweave
from opweave.compile.mode import Mode
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.slinalg import Cholesky
from opweave.xtensor.basic import XOp
from opweave.xtensor.linalg import cholesky, solve
from opweave.xtensor.signal import convolve1d
from opweave.xtensor.type import xtensor
from opweave.xtensor.vectorization import XBlockwise

MODES = [
    pytest.param(None, id="default"),
    pytest.param("FAST_COMPILE", id="fast_compile"),
    pytest.param(Mode(linker="py"), id="py"),
]


def compile_lowered(inputs, outputs, mode=None):
    """Compile and check that no xtensor Op is left for the backend."""
    f = opweave.function(inputs, outputs, mode=mode)
    assert not [n for n in f.maker.fgraph.toposort() if isinstance(n.op, XOp)]
    return f


def spd(rng, *batch, n):
    """Symmetric positive-definite matrices of shape ``(*batch, n, n)``."""
    a = rng.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# ---------------------------------------------------------------------- cholesky


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_batch_dims_first(lower, mode):
    # the batch dimension sits between the core ones in the input
    x = xtensor("x", dims=("r", "batch", "c"), shape=(4, 3, 4))
    out = cholesky(x, lower=lower, dims=("r", "c"))
    assert out.type.dims == ("batch", "r", "c")
    assert out.type.shape == (3, 4, 4)
    f = compile_lowered([x], out, mode=mode)
    mats = spd(np.random.default_rng(0), 3, n=4)  # (batch, r, c)
    expected = np.linalg.cholesky(mats)
    if not lower:
        expected = np.swapaxes(expected, -1, -2)
    np.testing.assert_allclose(f(np.transpose(mats, (1, 0, 2))), expected, rtol=1e-10)


def test_cholesky_lowers_to_blockwise():
    x = xtensor("x", dims=("r", "c"), shape=(3, 3))
    out = cholesky(x, dims=("r", "c"))
    assert isinstance(out.owner.op, XBlockwise)
    f = compile_lowered([x], out, mode="FAST_COMPILE")
    blockwise = [n.op for n in f.maker.fgraph.toposort() if isinstance(n.op, Blockwise)]
    assert len(blockwise) == 1
    assert isinstance(blockwise[0].core_op, Cholesky)


def test_cholesky_needs_two_dims():
    x = xtensor("x", dims=("r", "c"), shape=(3, 3))
    with pytest.raises(ValueError, match="Cholesky needs two dims, got 1"):
        cholesky(x, dims=("r",))


def test_cholesky_of_swapped_dims_reads_the_transpose():
    # dims=("c", "r") takes c as the row dimension
    x = xtensor("x", dims=("r", "c"), shape=(3, 3))
    out = cholesky(x, dims=("c", "r"))
    assert out.type.dims == ("c", "r")
    f = compile_lowered([x], out)
    mat = spd(np.random.default_rng(1), n=3)
    mat_ns = mat + np.triu(np.ones((3, 3)), 1)  # not symmetric: the lower triangle is read
    np.testing.assert_allclose(f(mat_ns), np.linalg.cholesky(mat_ns.T.copy()))


# ---------------------------------------------------------------------- solve


@pytest.mark.parametrize("mode", MODES)
def test_solve_matrix_vector(mode):
    a = xtensor("a", dims=("batch", "m", "n"), shape=(2, 4, 4))
    b = xtensor("b", dims=("n", "other"), shape=(4, 3))
    out = solve(a, b, dims=("m", "n"))
    # n is shared with b (summed over): the solution runs along m
    assert out.type.dims == ("batch", "other", "m")
    assert out.type.shape == (2, 3, 4)
    f = compile_lowered([a, b], out, mode=mode)
    rng = np.random.default_rng(2)
    av = rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)
    bv = rng.normal(size=(4, 3))
    expected = np.linalg.solve(av[:, None], bv.T[None, :, :, None])[..., 0]
    np.testing.assert_allclose(f(av, bv), expected, rtol=1e-10)


def test_solve_matrix_matrix():
    a = xtensor("a", dims=("m", "n"), shape=(3, 3))
    b = xtensor("b", dims=("k", "n", "batch"), shape=(2, 3, 5))
    out = solve(a, b, dims=("m", "n", "k"))
    assert out.type.dims == ("batch", "m", "k")
    f = compile_lowered([a, b], out)
    rng = np.random.default_rng(3)
    av = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    bv = rng.normal(size=(2, 3, 5))
    expected = np.linalg.solve(av, np.transpose(bv, (2, 1, 0)))  # (batch, n, k)
    np.testing.assert_allclose(f(av, bv), expected, rtol=1e-10)


@pytest.mark.parametrize("assume_a", ["pos", "sym", "positive definite"])
def test_solve_structured(assume_a):
    a = xtensor("a", dims=("m", "n"), shape=(4, 4))
    b = xtensor("b", dims=("n",), shape=(4,))
    out = solve(a, b, dims=("m", "n"), assume_a=assume_a, lower=True)
    f = compile_lowered([a, b], out)
    rng = np.random.default_rng(4)
    av = spd(rng, n=4)
    bv = rng.normal(size=4)
    np.testing.assert_allclose(f(av, bv), np.linalg.solve(av, bv), rtol=1e-10)


def test_solve_bad_dims():
    a = xtensor("a", dims=("m", "n"), shape=(3, 3))
    b = xtensor("b", dims=("n",), shape=(3,))
    with pytest.raises(ValueError, match="Solve dims must have length 2 or 3"):
        solve(a, b, dims=("m",))
    with pytest.raises(ValueError, match="must be missing from b"):
        solve(a, xtensor("c", dims=("m", "n"), shape=(3, 3)), dims=("m", "n"))


# ---------------------------------------------------------------------- XBlockwise


def test_xblockwise_rejects_misplaced_core_dims():
    x = xtensor("x", dims=("r", "c"), shape=(3, 3))
    y = xtensor("y", dims=("c",), shape=(3,))
    with pytest.raises(ValueError, match=r"Input 1 has invalid core dims \['c'\]"):
        XBlockwise(
            Cholesky(),
            core_dims=((("r", "c"), ("k",)), (("r", "c"),)),
        )(x, y)
    with pytest.raises(ValueError, match="Wrong number of inputs, expected 1, got 2"):
        XBlockwise(Cholesky(), core_dims=((("r", "c"),), (("r", "c"),)))(x, y)
    with pytest.raises(ValueError, match="missing from input"):
        XBlockwise(Cholesky(), core_dims=((("r", "k"),), (("r", "k"),)))(x)


def test_xblockwise_broadcasts_batch_dims_by_name():
    a = xtensor("a", dims=("i", "m", "n"), shape=(2, 3, 3))
    b = xtensor("b", dims=("j", "n"), shape=(4, 3))
    out = solve(a, b, dims=("m", "n"))
    assert out.type.dims == ("i", "j", "m")
    f = compile_lowered([a, b], out)
    rng = np.random.default_rng(5)
    av = rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    bv = rng.normal(size=(4, 3))
    expected = np.linalg.solve(av[:, None], bv[None, :, :, None])[..., 0]
    np.testing.assert_allclose(f(av, bv), expected, rtol=1e-10)


# ---------------------------------------------------------------------- convolve1d


@pytest.mark.parametrize("mode_name", ["full", "valid", "same"])
@pytest.mark.parametrize("mode", MODES)
def test_convolve1d(mode_name, mode):
    x = xtensor("x", dims=("t", "batch"), shape=(7, 2))
    k = xtensor("k", dims=("batch2", "kt"), shape=(3, 4))
    out = convolve1d(x, k, mode=mode_name, dims=("t", "kt"))
    assert out.type.dims == ("batch", "batch2", "t")
    f = compile_lowered([x, k], out, mode=mode)
    rng = np.random.default_rng(6)
    xv = rng.normal(size=(7, 2))
    kv = rng.normal(size=(3, 4))
    expected = np.array(
        [[np.convolve(xv[:, i], kv[j], mode=mode_name) for j in range(3)] for i in range(2)]
    )
    res = f(xv, kv)
    assert res.shape == expected.shape
    np.testing.assert_allclose(res, expected, rtol=1e-10)


def test_convolve1d_errors():
    x = xtensor("x", dims=("t",), shape=(5,))
    k = xtensor("k", dims=("kt",), shape=(2,))
    with pytest.raises(ValueError, match="The two dims must be unique"):
        convolve1d(x, x, dims=("t", "t"))
    with pytest.raises(ValueError, match="Two dims required"):
        convolve1d(x, k, dims=("t",))
    with pytest.raises(ValueError, match="mode must be one of"):
        convolve1d(x, k, mode="wrap", dims=("t", "kt"))
