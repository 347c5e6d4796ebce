"""C code of ``opweave.tensor.extra_ops`` and of the special scalar functions: the values,
dtypes and errors of the Python backend on the ``c`` and ``cvm`` linkers.

The extra Ops call NumPy's C functions (or copy and loop), so they agree bit for bit; the
special functions run the Python backend's algorithms in C, equal up to the last bits of
the C library's ``lgamma``/``tgamma``/``log`` (CPython and NumPy have their own).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from c_parity import DTYPES, check, compiled, strided

import opweave
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor import extra_ops as eo
from opweave.tensor import special as sp
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.type import TensorType

RNG = np.random.default_rng(17)


def _values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 4, size=shape).astype(dtype)
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cumulative_ops_in_c(dtype: str) -> None:
    x = TensorType(dtype, shape=(None, None, None))("x")
    outs = [eo.CumOp(axis, mode)(x) for axis in (0, 1, 2) for mode in ("add", "mul")]
    fns = compiled([x], outs)
    xv = _values(dtype, (2, 3, 4))
    check(fns, [(xv,), (strided(xv),), (np.zeros((0, 3, 2), dtype=dtype),)])


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_searchsorted_and_repeat_in_c(dtype: str) -> None:
    x, v = TensorType(dtype, shape=(None,))("x"), TensorType(dtype, shape=(None, None))("v")
    s, r = ot.lvector("s"), ot.lvector("r")
    outs = [
        eo.searchsorted(x, v),
        eo.searchsorted(x, v, side="right", sorter=s),
        eo.Repeat(0)(v, r),
        eo.Repeat(1)(v, r),
    ]
    fns = compiled([x, v, s, r], outs)
    xv = np.sort(_values(dtype, (5,)))
    vv = _values(dtype, (3, 3))
    order = np.argsort(xv[::-1])
    check(
        fns,
        [
            (xv, vv, np.argsort(xv), np.array([1, 0, 2])),
            (xv[::-1].copy(), strided(vv), order, np.array([3])),
            (xv, vv, np.argsort(xv), np.array([1, 2])),  # NumPy's error: counts do not fit
            (xv, vv, np.argsort(xv), np.array([1, -1, 2])),  # negative count
        ],
    )


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint64", "float32", "float64"])
def test_fill_diagonal_in_c(dtype: str) -> None:
    a = TensorType(dtype, shape=(None, None))("a")
    c = TensorType(dtype, shape=(None, None, None))("c")
    o = ot.lscalar("o")
    val = np.array(1, dtype=dtype)
    outs = [eo.fill_diagonal(a, val), eo.fill_diagonal(c, val), eo.fill_diagonal_offset(a, val, o)]
    fns = compiled([a, c, o], outs)
    cases: list[Any] = []
    for shape in [(3, 3), (2, 5), (5, 2), (0, 3)]:
        for offset in (-6, -1, 0, 2, 2**62):
            av = np.zeros(shape, dtype=dtype)
            cases.append((av, np.zeros((2, 2, 2), dtype=dtype), offset))
    cases.append((strided(np.zeros((3, 4), dtype=dtype)), np.zeros((3, 3, 3), dtype=dtype), -1))
    cases.append((np.zeros((2, 2), dtype=dtype), np.zeros((2, 3, 2), dtype=dtype), 0))  # error
    check(fns, cases)


def test_unique_and_index_ops_run_in_python_under_cvm() -> None:
    x, i = ot.dvector("x"), ot.lvector("i")
    outs = [*eo.unique(x, True, True, True), *eo.unravel_index(i, (3, 4))]
    outs.append(eo.ravel_multi_index(eo.unravel_index(i, (3, 4)), (3, 4)))
    fn = opweave.function([x, i], outs, mode=Mode(linker="cvm", optimizer=None))
    py = opweave.function([x, i], outs, mode=Mode(linker="py", optimizer=None))
    assert fn.fn.c_nodes == []  # none of them has C code
    args = (np.array([3.0, 1.0, 3.0]), np.array([0, 5, 11]))
    for got, ref in zip(fn(*args), py(*args), strict=True):
        np.testing.assert_array_equal(got, ref)


# ====================================================================== special functions

UNARY = [sp.gamma, sp.gammaln, sp.psi, sp.tri_gamma, sp.log1mexp, sp.xlogx, sp.erfinv, sp.erfcx]
BINARY = [sp.xlogy0, sp.gammainc, sp.gammaincc]
SPECIAL_POINTS = np.array(
    [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, -2.5, 1e-300, 30.0, -30.0, np.inf, -np.inf, np.nan]
)


def _same_up_to_last_bits(got: np.ndarray, ref: np.ndarray, where: str) -> None:
    assert got.dtype == ref.dtype and got.shape == ref.shape, where
    rtol = 1e-6 if got.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=1e-300, err_msg=where)


@pytest.mark.parametrize("dtype", ["int8", "int64", "float32", "float64"])
def test_special_functions_in_c(dtype: str) -> None:
    x, y = TensorType(dtype, shape=(None,))("x"), TensorType(dtype, shape=(None,))("y")
    n = ot.lscalar("n")
    outs = [fn(x) for fn in UNARY] + [fn(x, y) for fn in BINARY] + [sp.polygamma(n, x)]
    fns = compiled([x, y, n], outs)
    if dtype.startswith("int"):
        xv = np.array([0, 1, 2, -3, 5], dtype=dtype)
    else:
        xv = np.concatenate([SPECIAL_POINTS, RNG.uniform(-5, 40, 40)]).astype(dtype)
    yv = np.abs(xv[::-1]).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for order in (0, 1, 2, 4):
            ref = fns["py"](xv, yv, order)
            for linker in ("c", "cvm"):
                got = fns[linker](xv, yv, order)
                for k, (g, r) in enumerate(zip(got, ref, strict=True)):
                    _same_up_to_last_bits(g, r, f"output {k} on {linker}, order {order}")


def test_fused_special_functions_run_in_one_c_loop() -> None:
    x, y = ot.dvector("x"), ot.dvector("y")
    out = sp.betaln(x, y) + sp.psi(x) * sp.xlogy0(y, x) - sp.erfinv(sp.log1mexp(-x) / 100)
    fn = opweave.function([x, y], out, mode=Mode(linker="cvm"))
    nodes = fn.maker.fgraph.toposort()
    assert len(nodes) == 1 and isinstance(nodes[0].op, Elemwise)
    assert fn.fn.c_nodes == [0]
    py = opweave.function([x, y], out, mode=Mode(linker="py"))
    xv, yv = RNG.uniform(0.1, 20, 1000), RNG.uniform(0.1, 20, 1000)
    np.testing.assert_allclose(fn(xv, yv), py(xv, yv), rtol=1e-12, atol=1e-13)
