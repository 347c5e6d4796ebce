"""Integer reductions with a float accumulator narrower than the integer, on every linker.

PyTensor accepts any float (or complex) ``acc_dtype`` for an integer input, however
narrow (``int16`` summed in ``float16``): the sum is taken in the accumulator and cast to
the output dtype. The values are checked against NumPy's reduction in the same dtype.
float16 has no C code (``cvm`` runs it in Python), so the ``c`` linker, which compiles
the whole graph to C, is left out for it.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

CASES = [
    ("int16", "float16"),
    ("int32", "float16"),
    ("int64", "float32"),
    ("uint16", "float16"),
    ("int8", "float16"),
]


@pytest.mark.parametrize("linker", usable_linkers())
@pytest.mark.parametrize("method", ["sum", "prod"])
@pytest.mark.parametrize(("dtype", "acc_dtype"), CASES)
def test_narrow_float_accumulator_for_integers(
    linker: str, method: str, dtype: str, acc_dtype: str
) -> None:
    if linker == "c" and acc_dtype == "float16":
        pytest.skip("float16 has no C code; cvm runs it in Python")
    x = pt.matrix("x", dtype=dtype)
    out = getattr(x, method)(axis=1, acc_dtype=acc_dtype)
    assert out.owner.op.acc_dtype == acc_dtype
    xv = np.array([[1, 2, 3, 4], [7, 5, 0, 6], [1, 1, 2, 9]], dtype=dtype)
    fn = opweave.function([x], out, mode=opweave.Mode(linker=linker))
    got = fn(xv)
    reduce = np.sum if method == "sum" else np.prod
    expected = reduce(xv, axis=1, dtype=acc_dtype).astype(out.dtype)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_the_gradient_of_a_narrow_accumulator_reduction_builds() -> None:
    x = pt.matrix("x", dtype="int16")
    out = x.sum(axis=0, acc_dtype="float16")
    g = opweave.grad(out.sum(), x, disconnected_inputs="ignore")
    assert g.type.shape == x.type.shape


def test_a_narrower_float_accumulator_for_floats_is_still_refused() -> None:
    x = pt.matrix("x", dtype="float64")
    with pytest.raises(TypeError, match="acc_dtype"):
        x.sum(acc_dtype="float32")
