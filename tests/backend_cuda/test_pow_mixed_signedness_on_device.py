"""Integer powers on the device give the host linkers' (and NumPy's) values: two arrays of
mixed signedness are powered in the output dtype (``int8 2 ** uint8 7`` is ``int16 128``,
``uint64 2 ** int64 -1`` is ``0.5``), a constant exponent wraps in the base's dtype
(``uint8 200 ** 2`` is ``64``), alone and in a fused graph."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot

pytestmark = pytest.mark.cuda


def test_mixed_signedness_powers_match_the_host() -> None:
    a, b = ot.vector("a", dtype="int8"), ot.vector("b", dtype="uint8")
    u, s = ot.vector("u", dtype="uint64"), ot.vector("s", dtype="int64")
    x, y = ot.vector("x", dtype="uint8"), ot.vector("y", dtype="int8")
    outs = [a**b, a**b + a, u**s, x**2, x**2 + y, x**y, x**y + y]
    values = [
        np.array([2, -2, 3, 127], "int8"),
        np.array([7, 7, 5, 2], "uint8"),
        np.array([2, 2, 3, 1], "uint64"),
        np.array([-1, 3, 64, -5], "int64"),
        np.array([5, 200, 255, 3], "uint8"),
        np.array([2, 2, 2, 3], "int8"),
    ]
    gpu = opweave.function([a, b, u, s, x, y], outs, mode=opweave.Mode(linker="cuda"))(*values)
    cpu = opweave.function([a, b, u, s, x, y], outs, mode=opweave.Mode(linker="py"))(*values)
    for k, (g, c) in enumerate(zip(gpu, cpu, strict=True)):
        g = np.asarray(g)
        assert g.dtype == c.dtype, k
        np.testing.assert_array_equal(g, c, err_msg=str(k))
    assert np.asarray(gpu[0]).tolist() == [128, -128, 243, 16129]
    assert np.asarray(gpu[2]).tolist() == [0.5, 8.0, 3.0**64, 1.0]
    assert np.asarray(gpu[3]).tolist() == [25, 64, 1, 9]
    assert np.asarray(gpu[5]).tolist() == [25, 40000 - 65536, 65025 - 65536, 27]
