"""PyTensor's names and behaviours of the indexing, Elemwise, DimShuffle and Blockwise
modules: provability helpers, ``BlockwiseWithCoreShape``, pretty printing of the indexing
Ops, ``take(mode=None)``, ``Elemwise.outer`` and the error contracts."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.scalar as ps
import opweave.tensor as pt
from opweave.compile.builders import OpFromGraph
from opweave.graph.replace import vectorize_graph
from opweave.printing import pprint
from opweave.tensor.blockwise import Blockwise, BlockwiseWithCoreShape, OpWithCoreShape
from opweave.tensor.elemwise import CAReduce, DimShuffle
from opweave.tensor.index_shapes import get_canonical_form_slice
from opweave.tensor.math import maximum, minimum
from opweave.tensor.subtensor import (
    IncSubtensor,
    _is_provably_non_negative,
    _is_provably_positive,
    advanced_inc_subtensor,
    advanced_inc_subtensor1,
    advanced_subtensor,
    advanced_subtensor1,
    inc_subtensor,
    set_subtensor,
    take,
)

# ---------------------------------------------------------------------- provability


@pytest.mark.parametrize(
    ("data", "strict", "expected"),
    [([1.0, 2.0], True, True), ([0.0, 2.0], True, False), ([0.0, 2.0], False, True)],
)
def test_is_provably_positive_constants(data: list[float], strict: bool, expected: bool) -> None:
    assert _is_provably_positive(pt.constant(np.array(data)), strict=strict) is expected


def test_is_provably_positive_graph_cases() -> None:
    assert _is_provably_positive(3) and not _is_provably_positive(0)
    assert _is_provably_positive(0, strict=False)
    for maybe_zero in (
        pt.vector(dtype="uint8"),
        pt.matrix().shape[0],
        pt.constant(np.array([0.5])).astype("int64"),
    ):
        assert _is_provably_non_negative(maybe_zero) is True
        assert _is_provably_positive(maybe_zero, strict=True) is False
    assert _is_provably_positive(minimum(2, 3)) and not _is_provably_positive(minimum(2, 0))
    assert _is_provably_positive(maximum(5, -10)) and not _is_provably_positive(maximum(-1, -2))
    assert _is_provably_positive(pt.stack([1, 2])) is True
    assert _is_provably_positive(pt.vector()) is False
    with pytest.raises(TypeError, match="expected an integer or a Variable"):
        _is_provably_positive("1")


# ---------------------------------------------------------------------- Blockwise


def test_blockwise_with_core_shape_wraps_one_blockwise_node() -> None:
    x = pt.tensor3("x")
    node_out = Blockwise(DimShuffle(input_ndim=2, new_order=(1, 0)), signature="(m,n)->(n,m)")(x)
    op = BlockwiseWithCoreShape([x], [node_out])
    assert isinstance(op, OpWithCoreShape) and isinstance(op, OpFromGraph)
    assert op.core_op == DimShuffle(input_ndim=2, new_order=(1, 0))
    assert str(op) == f"[{node_out.owner.op}]"
    value = np.arange(24.0).reshape(2, 3, 4)
    out = opweave.function([x], op(x), mode="FAST_COMPILE")(value)
    np.testing.assert_array_equal(out, value.transpose(0, 2, 1))


def test_blockwise_with_core_shape_rejects_other_graphs() -> None:
    x = pt.vector("x")
    op = BlockwiseWithCoreShape([x], [pt.exp(x)])
    with pytest.raises(ValueError, match="exactly one Blockwise node"):
        _ = op.core_op


def test_op_with_core_shape_accepts_repeated_inputs() -> None:
    x = pt.vector("x")
    op = OpWithCoreShape([x, x], [x * 2])
    assert opweave.function([x], op(x, x))(np.array([1.0, 2.0])).tolist() == [2.0, 4.0]


# ---------------------------------------------------------------------- printing


def test_pprint_of_indexing_ops() -> None:
    x, z, idx = pt.tensor4("x"), pt.tensor3("z"), pt.ivector("idx")
    assert pprint(x[0:2, 0, 0:2]) == "x[0:2, 0, 0:2]"
    assert pprint(x[pt.lscalar("k") :]) == "x[k:]"
    assert pprint(inc_subtensor(x[0], z)) == "inc_subtensor(x[0], z)"
    assert pprint(set_subtensor(x[0:2], z)) == "set_subtensor(x[0:2], z)"
    assert pprint(advanced_subtensor(x, idx, slice(0, 5))) == "x[idx, 0:5]"
    assert (
        pprint(advanced_inc_subtensor(x, z, idx, slice(None, 5), set_instead_of_inc=True))
        == "set_subtensor(x[idx, :5], z)"
    )
    v, w = pt.vector("v"), pt.vector("w")
    assert pprint(advanced_subtensor1(v, idx)) == "v[idx]"
    assert pprint(advanced_inc_subtensor1(v, w, idx)) == "inc_subtensor(v[idx], w)"


# ---------------------------------------------------------------------- indexing contracts


def test_inc_subtensor_destroyhandler_tolerate_aliased_is_a_prop() -> None:
    a = IncSubtensor([slice(None)], inplace=True, destroyhandler_tolerate_aliased=[(0, 1)])
    b = IncSubtensor([slice(None)], inplace=True, destroyhandler_tolerate_aliased=[[0, 1]])
    c = IncSubtensor([slice(None)], inplace=True, destroyhandler_tolerate_aliased=[(0, 2)])
    assert a == b and hash(a) == hash(b) and a != c
    assert a.destroyhandler_tolerate_aliased == ((0, 1),)
    assert IncSubtensor([0]).destroyhandler_tolerate_aliased == ()
    with pytest.raises(ValueError, match="pairs of input positions"):
        IncSubtensor([0], destroyhandler_tolerate_aliased=[(0, 1, 2)])


def test_take_mode_none_is_raise() -> None:
    value = np.arange(24.0).reshape(4, 6)
    index = np.array([[1, 2], [0, 3]])
    out = take(pt.constant(value), index, axis=1, mode=None).eval()
    np.testing.assert_array_equal(out, value.take(index, axis=1, mode=None))


@pytest.mark.parametrize("bad", [None, pt.vector()])
def test_canonical_form_slice_rejects_non_scalar_indices(bad: object) -> None:
    with pytest.raises(ValueError, match="not a supported slice"):
        get_canonical_form_slice(bad, 5)


@pytest.mark.parametrize(
    "slc", [slice(1, 1), slice(-1, -1, 3), slice(3, 1), slice(1, 2, -1), slice(1, -2)]
)
def test_static_length_of_slices_empty_for_any_length(slc: slice) -> None:
    expected = {len(np.arange(n)[slc]) for n in range(8)}
    static = pt.lvector()[slc].type.shape[0]
    assert static == (0 if expected == {0} else None)


def test_index_error_messages() -> None:
    y = pt.tensor(shape=(3, 4, 5))
    mask = pt.constant(np.ones((3, 4), dtype=bool))
    with pytest.raises(IndexError, match="tensor is 3-dimensional, but 4 were indexed"):
        y[mask, mask]
    x = pt.tensor(shape=(10, 10))
    idx = pt.constant(np.arange(10))
    with pytest.raises(IndexError, match=r"broadcast together with shapes \[\(10,\), \(9,\)\]"):
        x[idx, idx[1:]]


@pytest.mark.parametrize("key", [([0, 1], [0, False]), ([0, 1], [0, opweave.shared(True)])])
def test_booleans_nested_in_lists_are_refused(key: tuple[object, ...]) -> None:
    with pytest.raises(TypeError, match="booleans nested in a Python list"):
        pt.matrix()[key]


def test_list_of_only_booleans_is_still_a_mask() -> None:
    x = pt.vector("x")
    out = x[[True, False, True]].eval({x: np.array([1.0, 2.0, 3.0])})
    assert out.tolist() == [1.0, 3.0]


# ------------------------------------------------------- Elemwise, CAReduce, DimShuffle


@pytest.mark.parametrize(
    ("shape_x", "shape_y", "op", "np_op"),
    [((3, 5), (7, 1, 3), pt.add, np.add), ((2, 3), (1, 4), pt.mul, np.multiply)],
)
def test_elemwise_outer(shape_x, shape_y, op, np_op) -> None:
    rng = np.random.default_rng(0)
    xv, yv = rng.normal(size=shape_x), rng.normal(size=shape_y)
    out = op.outer(pt.constant(xv), pt.constant(yv)).eval()
    np.testing.assert_allclose(out, np_op.outer(xv, yv))


def test_elemwise_outer_needs_a_binary_op() -> None:
    with pytest.raises(TypeError, match="needs an Op of two inputs"):
        pt.exp.outer(pt.vector(), pt.vector())


def test_careduce_scalar_input_and_axis_errors() -> None:
    x = pt.scalar("x")
    assert CAReduce(ps.add, axis=(-1,))(x).eval({x: 5.0}) == 5.0
    with pytest.raises(np.exceptions.AxisError, match=r"axis \(-2,\) is out of bounds"):
        CAReduce(ps.add, axis=(-2,))(x)
    with pytest.raises(ValueError, match="repeated axis"):
        CAReduce(ps.add, axis=(0, 0))(pt.vector())


def test_dimshuffle_errors() -> None:
    with pytest.raises(TypeError, match="input_ndim must be an integer"):
        DimShuffle(input_ndim=(True, False), new_order=(1, 0))
    with pytest.raises(TypeError, match="drops input axis 0"):
        DimShuffle(input_ndim=3, new_order=(1, 2))(pt.tensor(shape=(2, 1, None)))
    with pytest.raises(ValueError, match="drops input axis 0"):
        DimShuffle(input_ndim=3, new_order=(1, 2))(pt.tensor(shape=(None, 1, None)))
    with pytest.raises(ValueError, match="currently 64, found 65"):
        pt.scalar().dimshuffle(("x",) * 65)


@pytest.mark.parametrize("write", [set_subtensor, inc_subtensor])
def test_value_of_higher_rank_is_a_type_error(write) -> None:
    a, increment = pt.matrix(), pt.matrix()
    with pytest.raises(TypeError, match="2-d value to update a 1-d"):
        write(a[0], increment)
    with pytest.raises(ValueError, match="2-d value to update a 1-d"):
        write(a[0], increment)


@pytest.mark.parametrize(
    ("core_fn", "x_shape", "idx_batched", "uses_blockwise"),
    [
        (lambda x, i: x[:, i, :], (11, 7, 5, 3), False, False),
        (lambda x, i: x[i], (11, 7), False, False),
        (lambda x, i: x[:, i, :, i], (11, 7, 5, 3, 5), False, True),
        (lambda x, i: x[i], (11, 7), True, True),
        (lambda x, i: x[1:, i[0]], (11, 7, 5), False, False),
    ],
)
def test_vectorized_reads_index_batch_axes_with_full_slices(
    core_fn,
    x_shape: tuple[int, ...],
    idx_batched: bool,
    uses_blockwise: bool,
) -> None:
    core_x = pt.tensor(shape=x_shape[1:])
    core_i = pt.lvector()
    core_out = core_fn(core_x, core_i)
    x = pt.tensor(shape=x_shape)
    i = pt.lmatrix() if idx_batched else pt.lvector()
    out = vectorize_graph(core_out, {core_x: x, core_i: i})
    has_blockwise = any(
        isinstance(node.op, Blockwise) for node in opweave.graph.basic.io_toposort([x, i], [out])
    )
    assert has_blockwise == uses_blockwise
    rng = np.random.default_rng(1)
    xv = rng.normal(size=x_shape)
    iv = np.array([[0, 2]] * x_shape[0]) if idx_batched else np.array([0, 2])
    got = opweave.function([x, i], out)(xv, iv)
    expected = np.stack([core_fn(xv[b], iv[b] if idx_batched else iv) for b in range(x_shape[0])])
    np.testing.assert_allclose(got, expected)


def test_elemwise_static_shape_mismatch_message() -> None:
    x, y = pt.tensor(shape=(2,)), pt.tensor(shape=(3,))
    with pytest.raises(ValueError, match=r"Incompatible Elemwise input shapes \[\(2,\), \(3,\)\]"):
        pt.add(x, y)
