"""``verify_grad`` given the module ``numpy.random`` as its ``rng``, as PyTensor's own
code passes it: the random projections come from NumPy's global state."""

from __future__ import annotations

import numpy as np
import pytest

import opweave.tensor as pt
from opweave.gradient import zero_grad
from opweave.gradient.verify import GradientError, verify_grad


def test_the_numpy_random_module_is_a_generator() -> None:
    value = np.random.default_rng(3).normal(size=(3, 3))
    verify_grad(lambda x: pt.exp(x).sum(), [value], rng=np.random)
    verify_grad(lambda x: pt.linalg.det(x), [value], rng=np.random)


def test_a_wrong_gradient_is_still_caught() -> None:
    value = np.array([0.5, 1.5, -2.0])
    with pytest.raises(GradientError):
        # the gradient of ``zero_grad(x) * x`` leaves out the first factor's share
        verify_grad(lambda x: (zero_grad(x) * x).sum(), [value], rng=np.random)


def test_other_modules_are_refused() -> None:
    with pytest.raises(TypeError, match=r"the module numpy\.random"):
        verify_grad(lambda x: x.sum(), [np.ones(2)], rng=np)
