"""The derivatives of ``hyp2f1(a, b, c, z)`` in ``a``, ``b`` and ``c`` at ``z = 1``.

Where ``c - a - b > 0`` the series converges at ``z = 1`` (as PyTensor computes it), to
Gauss's ``Gamma(c) Gamma(c - a - b) / (Gamma(c - a) Gamma(c - b))``; its derivatives are
that value times differences of digammas, the SciPy reference here (central differences
of SciPy's ``hyp2f1`` at ``z = 1`` where ``c - a`` or ``c - b`` is a pole of Gamma and
the value is 0). Where ``c - a - b <= 0`` the function is infinite and the derivatives
NaN. The derivatives have no C code, so the linkers are ``py``, ``vm``, ``cvm`` (which
runs them in Python) and ``jax``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

CASES = [
    (1.0, 31.0, 41.0),
    (1.0, -2.1, 41.0),
    (0.5, 0.25, 3.0),
    (2.0, 1.5, 6.5),
    # c - a - b small: the series would need far more terms than it is given
    (1.0, 1.0, 3.5),
    (0.3, 2.5, 3.5),
    (-1.5, 1.0, 0.5),
    (-3.3, 1.1, -1.5),
]
#: ``c - a`` or ``c - b`` (or both) a pole of Gamma: the value is 0 there.
POLES = [(3.0, -0.5, 3.0), (4.5, -2.7, 2.5), (-0.5, 3.0, 3.0), (-2.5, -2.5, -2.5)]


def _gauss_derivatives(a: float, b: float, c: float) -> np.ndarray:
    value = sp.gamma(c) * sp.gamma(c - a - b) / (sp.gamma(c - a) * sp.gamma(c - b))
    psi = sp.digamma
    return value * np.array(
        [
            psi(c - a) - psi(c - a - b),
            psi(c - b) - psi(c - a - b),
            psi(c) + psi(c - a - b) - psi(c - a) - psi(c - b),
        ]
    )


def _scipy_slopes(a: float, b: float, c: float, h: float = 1e-6) -> np.ndarray:
    """Central differences of SciPy's ``hyp2f1`` at ``z = 1`` (Gauss's value)."""
    steps = np.eye(3) * h
    return np.array(
        [
            (
                sp.hyp2f1(*(np.array([a, b, c]) + d), 1.0)
                - sp.hyp2f1(*(np.array([a, b, c]) - d), 1.0)
            )
            / (2 * h)
            for d in steps
        ]
    )


@pytest.mark.parametrize("linker", [n for n in usable_linkers() if n in ("py", "vm", "cvm", "jax")])
def test_shape_derivatives_at_one(linker: str) -> None:
    a, b, c, z = pt.scalars("a", "b", "c", "z")
    grads = opweave.grad(pt.hyp2f1(a, b, c, z), [a, b, c])
    fn = opweave.function([a, b, c, z], grads, mode=opweave.Mode(linker=linker))
    for av, bv, cv in CASES:
        got = np.array([float(g) for g in fn(av, bv, cv, 1.0)])
        np.testing.assert_allclose(got, _gauss_derivatives(av, bv, cv), rtol=1e-9)
    for av, bv, cv in POLES:
        got = np.array([float(g) for g in fn(av, bv, cv, 1.0)])
        np.testing.assert_allclose(got, _scipy_slopes(av, bv, cv), rtol=1e-6, atol=1e-8)
    assert np.isnan([float(g) for g in fn(1.0, 12.0, 10.0, 1.0)]).all()  # c - a - b < 0
