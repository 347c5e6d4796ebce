"""Vectorizing ``x.shape`` keeps the batch's static lengths, and ``ScalarFromTensor`` of
a batched 0-d tensor stays that tensor (PyTensor's rules; the batched gradient of a
convolution with an unbatched kernel needs both)."""

from __future__ import annotations

import numpy as np

import opweave
import opweave.tensor as pt
from opweave.graph.replace import vectorize_graph
from opweave.tensor.basic import ScalarFromTensor, scalar_from_tensor


def test_the_shape_of_a_batch_keeps_its_static_lengths() -> None:
    x = pt.vector("x")
    batched = pt.tensor("b", shape=(1, None))
    out = vectorize_graph(x.shape, {x: batched})
    assert out.type.shape == (1, 1)
    fn = opweave.function([batched], out, mode=opweave.Mode(linker="py"))
    np.testing.assert_array_equal(fn(np.zeros((1, 7))), [[7]])
    free = pt.tensor("f", shape=(None, None))
    assert vectorize_graph(x.shape, {x: free}).type.shape == (None, 1)


def test_scalar_from_a_batched_tensor_stays_the_tensor() -> None:
    t = pt.scalar("t", dtype="int64")
    s = scalar_from_tensor(t)
    assert isinstance(s.owner.op, ScalarFromTensor)
    batched = pt.vector("v", dtype="int64")
    out = vectorize_graph(s, {t: batched})  # a copy of the root variable
    assert out.type == batched.type and out.owner.inputs == [batched]
    computed = pt.vector("w", dtype="int64") * 2
    assert vectorize_graph(s, {t: computed}) is computed
    other = pt.scalar("u", dtype="int64")
    again = vectorize_graph(s, {t: other})
    assert isinstance(again.owner.op, ScalarFromTensor) and again.owner.inputs[0] is other
