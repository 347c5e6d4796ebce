"""Softmax, cumulative, split, diagonal and sort lowerings against the ``py`` linker."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.tensor.special import log_softmax, softmax


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # the py side, on inf
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax_log_softmax_and_their_gradient(same_as_py: Any, axis: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[1.0, -2.0, 3.0], [np.inf, 0.0, -np.inf], [-700.0, 700.0, 0.0]])
    cost = (softmax(x, axis=axis) * np.arange(9.0).reshape(3, 3)).sum()
    outs = [softmax(x, axis=axis), log_softmax(x, axis=axis)]
    same_as_py([x], outs, [value], rtol=1e-15)
    finite = np.linspace(-3, 3, 9).reshape(3, 3)
    same_as_py([x], [opweave.grad(cost, x)], [finite], rtol=1e-14)


def test_cumulative_split_diagonal(same_as_py: Any) -> None:
    x, m = pt.lvector("x"), pt.dmatrix("m")
    outs = [pt.cumsum(x), pt.cumprod(x), *pt.split(x, [1, 3], 2), pt.diagonal(m, 1)]
    same_as_py([x, m], outs, [np.array([3, -1, 2, 5]), np.arange(12.0).reshape(3, 4)])


def test_sorts_put_nan_last(same_as_py: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[3.0, np.nan, -0.0, 1.0], [2.0, 2.0, -np.inf, 0.0]])
    same_as_py([x], [pt.sort(x), pt.sort(x, axis=0), pt.argsort(x, kind="stable")], [value])
