"""MapReduce in C: the values, dtypes and errors of the Python backend (an Elemwise then a
CAReduce) over dtypes, reductions, axes, strides and empty inputs, with no intermediate."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as ot
from opweave.compile import Mode
from opweave.tensor.elemwise import Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import All, Any, Max, Min, Prod, Sum

PY = Mode(linker="py", optimizer=None)
RNG = np.random.default_rng(99)


def _values(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return RNG.integers(max(info.min, -50), min(info.max, 50), shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def _outcome(f, x):
    try:
        with np.errstate(all="ignore"):
            return "ok", f(x)
    except ValueError as exc:
        return "error", str(exc)


def _compare(ops: list[MapReduce], dtype: str, cases: list[np.ndarray], linker: str) -> None:
    """One function computing every Op of ``ops`` on one input (one compilation)."""
    x = ot.tensor("x", dtype=dtype, shape=(None,) * cases[0].ndim)
    outs = [op(x) for op in ops]
    f = opweave.function([x], outs, mode=Mode(linker=linker, optimizer=None))
    ref = opweave.function([x], outs, mode=PY)
    if linker == "cvm":
        assert f.fn.c_nodes == list(range(len(ops))), "a MapReduce node did not run in C"
    for value in cases:
        for _ in range(2):  # the second call may reuse the previous outputs' memory
            want, got = _outcome(ref, value), _outcome(f, value)
            assert want[0] == got[0], (ops, value, want, got)
            if want[0] == "error":
                assert want[1] == got[1]
                continue
            for w, g in zip(want[1], got[1], strict=True):
                assert g.dtype == w.dtype and g.shape == w.shape
                if g.dtype.kind == "f":
                    rtol = 1e-6 if dtype == "float32" else 1e-13
                    np.testing.assert_allclose(g, w, rtol=rtol)
                else:
                    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize(
    ("dtype", "scalar_op", "reduction"),
    [
        ("float64", ps.sqr, Sum),
        ("float32", ps.exp, Sum),
        ("float64", ps.abs_, Max),
        ("float64", ps.neg, Min),
        ("float64", ps.cos, Prod),
        ("int8", ps.sqr, Sum),
        ("uint8", ps.neg, Max),
        ("int64", ps.abs_, Prod),
        ("bool", ps.invert, All),
        ("float64", ps.isnan, Any),
    ],
)
def test_values_over_axes_and_layouts(dtype, scalar_op, reduction) -> None:
    base = _values(dtype, (4, 6, 5))
    cases = [base, base[:, ::2, ::-1], base.transpose(2, 0, 1).copy()[:, :, :5]]
    with_nan = base.copy()
    if dtype.startswith("float"):
        with_nan[1, 2, 3] = np.nan
        cases.append(with_nan)
    ops = [MapReduce(Elemwise(scalar_op), reduction(axis=a)) for a in (None, 0, (0, 2), 2)]
    _compare(ops, dtype, cases, "c" if dtype != "float64" else "cvm")


@pytest.mark.parametrize("reduction", [Sum, Max])
def test_empty_inputs_give_the_identity_or_numpys_error(reduction) -> None:
    op = MapReduce(Elemwise(ps.exp), reduction(axis=1))
    _compare([op], "float64", [np.zeros((3, 0)), np.zeros((0, 4))], "c")


def test_fast_run_sum_of_squares_is_one_c_loop() -> None:
    x = ot.dvector("x")
    f = opweave.function([x], ot.sum(x**2), mode=Mode(linker="cvm"))
    (node,) = f.maker.fgraph.toposort()
    assert isinstance(node.op, MapReduce) and f.fn.c_nodes == [0]
    v = RNG.standard_normal(100_003)
    assert f(v) == np.sum(v**2)  # NumPy's pairwise summation, to the last bit
