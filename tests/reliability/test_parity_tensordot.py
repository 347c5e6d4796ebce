"""``tensordot`` over several axes whose lengths the types leave unknown, on every linker.

The contracted axes are merged into one before the :class:`~opweave.tensor.blas.Dot`, so
lengths that differ pair by pair but have the same product (``3 * 2`` against ``2 * 3``)
would pass the ``Dot``'s own check and give a result where NumPy refuses. As in PyTensor,
``tensordot`` checks each further unknown pair with an ``Assert``: a mismatch raises
``AssertionError``, and matching lengths give NumPy's values. One function per linker
(``py``, ``vm``, ``c``, ``cvm``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from differential.runner import usable_linkers

import opweave
import opweave.tensor as pt
from opweave.graph.traversal import ancestors
from opweave.raise_op import Assert

MESSAGE = "Input array shape along reduced axes of tensordot are not equal"


def _function(axes: list[list[int]], linker: str) -> Any:
    x = pt.tensor("x", shape=(7, 3, None))
    y = pt.tensor("y", shape=(None, None, 3))
    z = pt.tensordot(x, y, axes=axes)
    return opweave.function([x, y], z, mode=opweave.Mode(linker=linker))


@pytest.mark.parametrize("linker", usable_linkers())
def test_mismatched_lengths_with_the_same_product_raise_like_numpy(linker: str) -> None:
    xv = np.ones((7, 3, 2), dtype=opweave.config.floatX)
    yv = np.ones((7, 2, 3), dtype=opweave.config.floatX)
    with pytest.raises(ValueError):
        np.tensordot(xv, yv, axes=[[1, 2], [1, 2]])
    fn = _function([[1, 2], [1, 2]], linker)
    with pytest.raises(AssertionError, match=MESSAGE):
        fn(xv, yv)


@pytest.mark.parametrize("linker", usable_linkers())
def test_matching_unknown_lengths_give_numpy_values(linker: str) -> None:
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(7, 3, 2)).astype(opweave.config.floatX)
    yv = rng.normal(size=(7, 2, 3)).astype(opweave.config.floatX)
    fn = _function([[0, 2], [0, 1]], linker)
    np.testing.assert_allclose(fn(xv, yv), np.tensordot(xv, yv, axes=[[0, 2], [0, 1]]), rtol=1e-5)


@pytest.mark.parametrize("linker", usable_linkers())
def test_all_lengths_unknown(linker: str) -> None:
    a, b = pt.matrix("a"), pt.matrix("b")
    fn = opweave.function(
        [a, b], pt.tensordot(a, b, axes=[[0, 1], [0, 1]]), mode=opweave.Mode(linker=linker)
    )
    av = np.arange(6.0).reshape(2, 3).astype(a.dtype)
    with pytest.raises(AssertionError, match=MESSAGE):
        fn(av, np.ones((3, 2), dtype=b.dtype))
    bv = np.linspace(-1, 1, 6).reshape(2, 3).astype(b.dtype)
    np.testing.assert_allclose(fn(av, bv), np.tensordot(av, bv, axes=2), rtol=1e-5)


def test_the_check_is_added_only_where_the_types_do_not_show_it() -> None:
    def asserts(x: pt.TensorVariable, y: pt.TensorVariable, axes: list[list[int]]) -> int:
        z = pt.tensordot(x, y, axes=axes)
        # the number of checked conditions
        return sum(
            len(v.owner.inputs) - 1
            for v in ancestors([z])
            if v.owner is not None and isinstance(v.owner.op, Assert)
        )

    x = pt.tensor("x", shape=(7, 3, None))
    y = pt.tensor("y", shape=(None, None, 3))
    assert asserts(x, y, [[1, 2], [1, 2]]) == 1
    assert asserts(x, y, [[1], [2]]) == 0  # one pair: the Dot checks it
    assert asserts(x, y, [[0], [0]]) == 0
    known = pt.tensor("k", shape=(7, 3, 3))
    assert asserts(known, known, [[1, 2], [1, 2]]) == 0
    assert asserts(pt.tensor3("u"), pt.tensor3("v"), [[0, 1, 2], [0, 1, 2]]) == 2
