"""Vectorizing ``join`` when the batch dimensions of its inputs broadcast, as PyTensor does.

A join whose inputs all gained batch dimensions with the same broadcastable pattern stays
a join along the shifted axis; a batch dimension of length 1 against a longer one is
broadcast (the ``Blockwise`` rule) instead of being joined as it is, which would fail.
The values are checked against ``np.vectorize`` of ``np.concatenate``.
"""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.graph.replace import vectorize_graph
from opweave.tensor.basic import Join
from opweave.tensor.blockwise import Blockwise

SIGNATURE = "(a,b1,c),(a,b2,c)->(a,b,c)"


def _concatenate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.vectorize(lambda u, v: np.concatenate([u, v], axis=1), signature=SIGNATURE)(x, y)


@pytest.mark.parametrize(
    ("y_shape", "blockwise"),
    [((4, 2, 3, 5), False), ((1, 2, 3, 5), True), ((2, 3, 5), True)],
)
def test_vectorized_join_broadcasts_batch_dimensions(
    y_shape: tuple[int, ...], blockwise: bool
) -> None:
    xc, yc = pt.tensor3("xc"), pt.tensor3("yc")
    out = pt.join(1, xc, yc)
    x = pt.tensor("x", shape=(4, 2, 3, 5))
    y = pt.tensor("y", shape=y_shape)
    batched = vectorize_graph(out, replace={xc: x, yc: y})
    assert isinstance(batched.owner.op, Blockwise) == blockwise
    if not blockwise:
        assert isinstance(batched.owner.op, Join)
    rng = np.random.default_rng(1)
    xv = rng.normal(size=x.type.shape).astype(x.dtype)
    yv = rng.normal(size=y_shape).astype(y.dtype)
    got = opweave.function([x, y], batched)(xv, yv)
    np.testing.assert_allclose(got, _concatenate(xv, yv))
