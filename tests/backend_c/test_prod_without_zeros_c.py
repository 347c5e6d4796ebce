"""C code of ``ProdWithoutZeros`` and of the scalar Op ``mul_without_zeros``: the Python
backend's values, dtypes and shapes on the ``c`` and ``cvm`` linkers, over dtypes, axes,
strides, empty groups, groups of zeros and NaN, in a reduction, a fused map-reduction and
an elementwise loop."""

from __future__ import annotations

import numpy as np
import pytest
from c_parity import DTYPES, check, compiled, strided

import opweave
import opweave.tensor as ot
from opweave.tensor.elemwise import CAReduce, Elemwise
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.math import ProdWithoutZeros, mul_without_zeros

RNG = np.random.default_rng(5)
AXES = [None, 0, 1, 2, (0, 2), (), -1]


def _cases(dtype: str) -> list[tuple[np.ndarray]]:
    shape = (3, 4, 5)
    if dtype == "bool":
        values = RNG.integers(0, 2, size=shape).astype(bool)
    else:
        values = RNG.integers(-3, 4, size=shape).astype(dtype)  # many zeros
    if dtype.startswith("float"):
        values[0, 1, 2] = np.nan
    zeros = np.zeros(shape, dtype)
    ones_row = zeros.copy()
    ones_row[1, 2] = 1
    return [
        (values,),
        (strided(values),),
        (zeros,),
        (ones_row,),
        (np.zeros((0, 4, 5), dtype),),
        (np.zeros((3, 0, 5), dtype),),
    ]


@pytest.mark.parametrize("dtype", DTYPES)
def test_prod_without_zeros_c_matches_python(dtype: str) -> None:
    x = ot.tensor("x", dtype=dtype, shape=(None, None, None))
    outs = [ProdWithoutZeros(axis=axis)(x) for axis in AXES]
    fns = compiled([x], outs)
    check(fns, _cases(dtype))
    # The values are PyTensor's: 0 for a group without a non-zero element.
    got = fns["c"](np.zeros((2, 3, 4), dtype))
    assert all(not np.any(g) for g in got)


def test_a_bare_careduce_of_mul_without_zeros_and_accumulation_dtypes() -> None:
    x = ot.tensor("x", dtype="int8", shape=(None, None))
    outs = [
        CAReduce(mul_without_zeros, axis=1)(x),
        ProdWithoutZeros(axis=0, acc_dtype="int64", dtype="int16")(x),
        ProdWithoutZeros(axis=None, dtype="float64")(x),
    ]
    fns = compiled([x], outs)
    value = np.array([[0, 100, 100], [0, 0, 0], [-7, 0, 3]], dtype="int8")
    check(fns, [(value,), (value.T.copy(),)])
    assert outs[0].type.dtype == "int8"  # upcast_out of int8: the scalar Op's own dtype
    np.testing.assert_array_equal(fns["cvm"](value)[0], np.array([16, 0, -21], "int8"))


def test_mul_without_zeros_elementwise_in_c() -> None:
    x, y = ot.dmatrix("x"), ot.dmatrix("y")
    fns = compiled([x, y], Elemwise(mul_without_zeros)(x, y) + 1)
    xv = RNG.integers(-2, 3, size=(4, 5)).astype("float64")
    yv = RNG.integers(-2, 3, size=(4, 5)).astype("float64")
    xv[0, 0] = np.nan
    check(fns, [(xv, yv), (strided(xv), yv)])
    want = np.where(xv == 0, yv, np.where(yv == 0, xv, xv * yv)) + 1
    np.testing.assert_array_equal(fns["c"](xv, yv), want)


def test_fused_map_reduction_of_prod_without_zeros() -> None:
    x = ot.dmatrix("x")
    out = ProdWithoutZeros(axis=1)(ot.sqr(x) - 1)
    f = opweave.function([x], out, mode=opweave.compile.Mode(linker="cvm"))
    nodes = f.maker.fgraph.toposort()
    assert [type(n.op) for n in nodes] == [MapReduce]
    assert f.fn.c_nodes == [0]
    xv = np.array([[1.0, 2.0, -1.0], [1.0, 1.0, 1.0], [3.0, 0.0, 2.0]])
    mapped = xv**2 - 1
    want = np.where(
        np.any(mapped != 0, axis=1), np.prod(np.where(mapped != 0, mapped, 1), axis=1), 0
    )
    np.testing.assert_array_equal(f(xv), want)
