"""``reciprocal`` of complex values, as PyTensor and NumPy compute it, on every linker.

Complex values have no C code (``cvm`` runs such nodes in Python), so the ``c`` linker,
which compiles the whole graph to C, is left out for them.
"""

from __future__ import annotations

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

VALUES = [1 + 2j, -0.5 + 0.25j, 3 - 1j, -2.0 + 0j, 0 - 4j, 1e-3 + 1e3j]


@pytest.mark.parametrize("linker", [name for name in usable_linkers() if name != "c"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_reciprocal_of_complex_values_matches_numpy(linker: str, dtype: str) -> None:
    z = pt.vector("z", dtype=dtype)
    out = pt.reciprocal(z)
    assert out.dtype == dtype
    zv = np.array(VALUES, dtype=dtype)
    got = opweave.function([z], out, mode=opweave.Mode(linker=linker))(zv)
    expected = np.reciprocal(zv)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype == "complex64" else 1e-14)


def test_the_gradient_of_a_complex_reciprocal() -> None:
    # d/dz of the real part of 1/z along a real step: Re(-1/z**2)
    x = pt.vector("x")
    z = pt.complex(x, pt.ones_like(x))
    g = opweave.grad(pt.real(pt.reciprocal(z)).sum(), x)
    xv = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(opweave.function([x], g)(xv), np.real(-1 / (xv + 1j) ** 2))
