"""Reduction lowerings (``CAReduce`` family, ``Argmax``/``Argmin``, ``MapReduce``) against
the ``py`` linker.

Integer, boolean, max/min and empty reductions are exact. Float sums and products may be
accumulated in another order by XLA: they agree within 1e-15 (float64) / 1e-6 (float32).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave.tensor as pt
from opweave.tensor.map_reduce import MapReduce

from .conftest import assert_same, compile_both

AXES = [None, 0, 1, (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_float_sum_prod_max_min(same_as_py: Any, axis: Any, dtype: str) -> None:
    x = pt.tensor3("x", dtype=dtype)
    value = np.linspace(-2, 3, 60, dtype=dtype).reshape(3, 4, 5)
    value[1, 2, 3] = -0.0
    rtol = 1e-15 if dtype == "float64" else 1e-6
    same_as_py([x], [x.sum(axis=axis), x.prod(axis=axis)], [value], rtol=rtol)
    same_as_py([x], [x.max(axis=axis), x.min(axis=axis)], [value])


@pytest.mark.parametrize("axis", AXES)
def test_integer_and_boolean_reductions_exact(same_as_py: Any, axis: Any) -> None:
    x = pt.tensor3("x", dtype="int8")
    value = (np.arange(60) * 37 % 255 - 127).astype("int8").reshape(3, 4, 5)
    outs = [x.sum(axis=axis), x.prod(axis=axis), x.max(axis=axis), x.min(axis=axis)]
    outs += [pt.all(x > 0, axis=axis), pt.any(x > 100, axis=axis)]
    same_as_py([x], outs, [value])


def test_nan_propagates_through_max_min_and_sum(same_as_py: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[1.0, np.nan, 3.0], [np.inf, -np.inf, 0.0]])
    same_as_py([x], [x.max(axis=1), x.min(axis=0), x.sum(axis=1), x.prod()], [value])


def test_empty_sum_and_prod_are_the_identities(same_as_py: Any) -> None:
    x = pt.dmatrix("x")
    same_as_py([x], [x.sum(axis=0), x.prod(axis=1), x.sum()], [np.zeros((0, 3))])


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_argmax_argmin(same_as_py: Any, axis: Any) -> None:
    x = pt.dmatrix("x")
    value = np.array([[1.0, 5.0, 5.0], [np.nan, -1.0, 2.0], [-np.inf, 7.0, 0.0]])
    same_as_py([x], [pt.argmax(x, axis=axis), pt.argmin(x, axis=axis)], [value])
    same_as_py([x], [pt.argmax(x, axis=axis)], [np.arange(12.0).reshape(3, 4)[::-1, ::2]])


def test_sum_of_a_map_is_one_map_reduce_node() -> None:
    x = pt.dmatrix("x")
    f, g = compile_both([x], [pt.sum(pt.exp(x) * 2, axis=1)], "fast_run")
    assert any(isinstance(n.op, MapReduce) for n in f.maker.fgraph.toposort())
    value = np.linspace(-1, 1, 12).reshape(3, 4)
    assert_same(f(value)[0], g(value)[0], 1e-15, "map-reduce")


def test_sum_accumulates_in_its_acc_dtype(same_as_py: Any) -> None:
    x = pt.vector("x", dtype="int8")
    same_as_py(
        [x],
        [x.sum(dtype="int64"), x.sum(acc_dtype="int32", dtype="int16")],
        [np.full(300, 100, "int8")],
    )
