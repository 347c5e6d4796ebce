"""The gradient of ``xlog1py(x, y)`` at ``x = 0``, on every linker, against NumPy.

``xlog1py`` is 0 where ``x`` is 0 (SciPy's value), but as in PyTensor its gradient is that
of ``x * log1p(y)``: ``log1p(y)`` for ``x`` (not 0, which masking the gradient would
give) and ``x / (1 + y)`` for ``y``. One function per linker (``py``, ``vm``, ``c``,
``cvm``).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sp
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt

X = np.array([0.0, 0.0, 0.0, 0.5, 2.0, -1.5])
Y = np.array([-1.0, 0.5, 3.0, 0.0, 2.0, 0.25])


@pytest.mark.parametrize("linker", usable_linkers())
def test_xlog1py_values_and_gradient(linker: str) -> None:
    x, y = pt.vector("x"), pt.vector("y")
    out = pt.special.xlog1py(x, y)
    gx, gy = opweave.grad(out.sum(), [x, y])
    fn = opweave.function([x, y], [out, gx, gy], mode=opweave.Mode(linker=linker))
    value, grad_x, grad_y = fn(X, Y)
    np.testing.assert_allclose(value, sp.xlog1py(X, Y), rtol=1e-14)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_allclose(grad_x, np.log1p(Y), rtol=1e-14)
        np.testing.assert_allclose(grad_y, X / (1 + Y), rtol=1e-14)


@pytest.mark.parametrize("linker", usable_linkers())
def test_xlog1py_gradient_of_a_broadcast_scalar(linker: str) -> None:
    s, y = pt.scalar("s"), pt.vector("y")
    out = pt.special.xlog1py(s, y)
    g = opweave.grad(out.sum(), s)
    fn = opweave.function([s, y], [out, g], mode=opweave.Mode(linker=linker))
    yv = np.array([0.5, 1.0, 4.0])
    value, grad = fn(0.0, yv)
    np.testing.assert_array_equal(value, np.zeros(3))
    np.testing.assert_allclose(grad, np.log1p(yv).sum(), rtol=1e-14)
