"""The shape derivative of the regularized incomplete gamma functions at a tiny shape: about
``-E1(x)``, where ``Q`` underflows while the slope overflows (their product used to come out
``-0.0`` from ``x = 64`` on)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp

import opweave
import opweave.tensor as pt
from opweave.compile.mode import Mode
from opweave.scalar.shape_gradients import gammainc_der, gammaincc_der

XS = np.array([0.5, 3.0, 31.8, 64.0, 100.0, 500.0])


@pytest.mark.parametrize("linker", ["py", "jax"])
def test_tiny_shape_gives_minus_e1(linker):
    if linker == "jax":
        pytest.importorskip("jax")
    k, x = pt.dvector("k"), pt.dvector("x")
    lower = pt.elemwise.Elemwise(gammainc_der)(k, x)
    upper = pt.elemwise.Elemwise(gammaincc_der)(k, x)
    f = opweave.function([k, x], [lower, upper], mode=Mode(linker=linker))
    got_lower, got_upper = f(np.full(XS.shape, 1e-300), XS)
    expected = -sp.exp1(XS)
    np.testing.assert_allclose(got_lower, expected, rtol=1e-12)
    np.testing.assert_allclose(got_upper, -expected, rtol=1e-12)
    assert np.all(got_lower < 0)
