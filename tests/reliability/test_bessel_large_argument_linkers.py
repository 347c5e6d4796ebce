"""``jv`` at large arguments (Hankel's expansion) are accurate on every linker.

The phase ``x - (v/2 + 1/4) pi`` is applied through the addition formulas (``x`` itself is
exact), not rounded as one difference, which cost up to half an ulp of ``x``: ``jv(0,
65535)`` was 1e-12 relative off (its exact value is 0.002586637421091411), ``jv(1, 3e7)``
1e-9. Errors are measured against SciPy's ``jv`` in units of the envelope
``sqrt(2 / (pi x))`` (the values themselves pass through zero).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sps

import opweave
import opweave.tensor as ot

LINKERS = ["py", "vm", "c", "cvm"]
ORDERS = [0.0, 1.0, 2.5]
ARGUMENTS = [30.0, 100.5, 1000.0, 12345.0, 30000.0, 65535.0, 1e6 + 0.5, 3e7]


@pytest.mark.parametrize("linker", LINKERS)
def test_bessel_functions_at_large_arguments(linker: str) -> None:
    v, x = ot.dvector("v"), ot.dvector("x")
    f = opweave.function([v, x], ot.jv(v, x), mode=opweave.Mode(linker=linker))
    vs, xs = (a.ravel() for a in np.meshgrid(ORDERS, ARGUMENTS))
    j = f(vs, xs)
    envelope = np.sqrt(2.0 / (np.pi * xs))
    np.testing.assert_array_less(np.abs(j - sps.jv(vs, xs)) / envelope, 2e-15)
    at_65535 = j[(vs == 0) & (xs == 65535.0)]
    assert at_65535.tolist() == pytest.approx([0.002586637421091411], rel=1e-15)


@pytest.mark.parametrize("linker", LINKERS)
def test_bessel_functions_near_the_largest_float(linker: str) -> None:
    """At x = ±max float, ``pi x`` overflows but the envelope does not: the values are
    ``sqrt(2 / (pi |x|))`` times the exactly reduced ``cos(x - pi/4)`` (order 0) and
    ``cos(x - 3 pi/4)`` (order 1), not 0. (SciPy drops the pi/4 shift there, which rounds
    away against x: its -5.95e-155 is the bare envelope.)"""
    x = ot.dvector("x")
    f = opweave.function([x], [ot.j0(x), ot.j1(x), ot.jv(0.0, x)], mode=opweave.Mode(linker=linker))
    big = np.finfo(np.float64).max
    j0, j1, jv0 = f(np.array([big, -big]))
    envelope = np.sqrt(2.0 / np.pi) / np.sqrt(big)
    cos_big, sin_big = np.cos(big), np.sin(big)
    expected_j0 = envelope * (cos_big + sin_big) / np.sqrt(2.0)
    expected_j1 = envelope * (sin_big - cos_big) / np.sqrt(2.0)
    np.testing.assert_allclose(j0, [expected_j0, expected_j0], rtol=1e-14)
    np.testing.assert_allclose(j1, [expected_j1, -expected_j1], rtol=1e-14)
    np.testing.assert_allclose(jv0[:1], [expected_j0], rtol=1e-14)
