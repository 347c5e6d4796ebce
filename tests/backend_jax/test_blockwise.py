"""``Blockwise`` lowering (its core Op's lowering under ``jax.vmap``) against the ``py``
linker."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import opweave
import opweave.tensor as pt
from opweave.compile.builders import OpFromGraph
from opweave.compile.mode import Mode
from opweave.graph.basic import Variable
from opweave.tensor.blas import Dot
from opweave.tensor.blockwise import Blockwise
from opweave.tensor.sort import ArgSortOp, SortOp

NO_REWRITES = Mode(linker="jax", optimizer=None)

_batched_dot = Blockwise(Dot(), signature="(m,k),(k,n)->(m,n)")


def batched_dot(x: Any, y: Any) -> Variable:
    """The Blockwise matrix product of ``x`` and ``y``."""
    return _batched_dot.make_node(x, y).outputs[0]


def n_blockwise(fn: Any) -> int:
    return sum(isinstance(node.op, Blockwise) for node in fn.maker.fgraph.apply_nodes)


def test_batched_inputs_and_broadcast_ones(same_as_py: Any) -> None:
    a, b = pt.tensor3("a"), pt.tensor3("b")
    one = pt.tensor("one", dtype="float64", shape=(1, None, None))
    four = pt.tensor("four", dtype="float64", shape=(None, None, None, None))
    outs = [batched_dot(a, b), batched_dot(one, b), batched_dot(four, b), batched_dot(a, b[0])]
    rng = np.random.default_rng(0)
    args = [
        rng.normal(size=(2, 3, 4)),
        rng.normal(size=(2, 4, 5)),
        rng.normal(size=(1, 3, 4)),
        rng.normal(size=(3, 2, 3, 4)),
    ]
    got = same_as_py([a, b, one, four], outs, args, rtol=1e-14)
    np.testing.assert_allclose(got[0], np.matmul(args[0], args[1]), rtol=1e-14)
    assert got[2].shape == (3, 2, 3, 5)
    assert n_blockwise(opweave.function([a, b, one, four], outs, mode=NO_REWRITES)) == 4
    mode_jax = opweave.function([a, b], outs[0], mode="JAX")(*args[:2])
    np.testing.assert_allclose(mode_jax, got[0], rtol=1e-14)


def test_every_input_unbatched(same_as_py: Any) -> None:
    one_a = pt.tensor("one_a", dtype="float64", shape=(1, None, None))
    one_b = pt.tensor("one_b", dtype="float64", shape=(1, None, None))
    args = [np.ones((1, 2, 3)), np.full((1, 3, 2), 2.0)]
    got = same_as_py([one_a, one_b], [batched_dot(one_a, one_b)], args)
    np.testing.assert_array_equal(got[0], np.matmul(*args))


def test_an_empty_batch_keeps_the_core_shape(same_as_py: Any) -> None:
    # NumPy's gufunc shape, which the py linker gives too (from the core Op's infer_shape).
    a, b = pt.tensor3("a"), pt.tensor3("b")
    args = [np.ones((0, 2, 3)), np.ones((0, 3, 4))]
    got = same_as_py([a, b], [batched_dot(a, b)], args)
    assert got[0].shape == np.matmul(*args).shape == (0, 2, 4)


def test_core_op_with_a_static_input_and_integer_output(same_as_py: Any) -> None:
    x = pt.dmatrix("x")
    sort = Blockwise(SortOp(), signature="(n),()->(n)")
    argsort = Blockwise(ArgSortOp(), signature="(n),()->(n)")
    value = np.array([[3.0, -1.0, 2.0], [0.0, 5.0, -4.0]])
    got = same_as_py([x], [sort(x, 0), argsort(x, 0)], [value])
    np.testing.assert_array_equal(got[0], np.sort(value, axis=1))
    assert got[1].dtype == np.int64


def test_op_from_graph_with_two_outputs_as_the_core_op(same_as_py: Any) -> None:
    u, v = pt.dvector("u"), pt.dvector("v")
    core = OpFromGraph([u, v], [(u * v).sum(), u - v])
    x, y = pt.dmatrix("x"), pt.dvector("y")
    dots, diffs = Blockwise(core, signature="(n),(n)->(),(n)").make_node(x, y).outputs
    args = [np.arange(6.0).reshape(2, 3), np.array([1.0, 0.5, -1.0])]
    got = same_as_py([x, y], [dots, diffs], args, rtol=1e-15)
    np.testing.assert_allclose(got[0], args[0] @ args[1], rtol=1e-15)
    np.testing.assert_array_equal(got[1], args[0] - args[1])


def test_batch_lengths_that_do_not_match_are_refused() -> None:
    a, b = pt.tensor3("a"), pt.tensor3("b")
    fn = opweave.function([a, b], batched_dot(a, b), mode=NO_REWRITES)
    with pytest.raises(ValueError, match="batch dimension 0 has different lengths"):
        fn(np.ones((2, 3, 4)), np.ones((1, 4, 5)))
