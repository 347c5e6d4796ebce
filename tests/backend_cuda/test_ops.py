"""GPU Ops: make_node, infer_shape, identity; the view layouts their implementations use."""

from __future__ import annotations

import numpy as np
import pytest

import opweave.scalar as ps
import opweave.tensor as ot
from opweave_cuda import GpuArrayType, GpuFromHost
from opweave_cuda.impls import (
    broadcast_shape,
    dimshuffle_layout,
    resolve_shape,
    subtensor_layout,
)
from opweave_cuda.ops import (
    GpuAlloc,
    GpuCAReduce,
    GpuDimShuffle,
    GpuDot,
    GpuElemwise,
    GpuReshape,
    GpuSubtensor,
)

F32 = GpuArrayType("float32", shape=(None, None))


def test_elemwise_make_node_uploads_host_inputs_and_types_outputs() -> None:
    g = F32("g")
    x = ot.fmatrix("x")
    node = GpuElemwise(ps.add).make_node(g, x)
    assert node.inputs[0] is g and isinstance(node.inputs[1].owner.op, GpuFromHost)
    assert node.outputs[0].type == F32
    assert node.op.infer_shape(None, node, [(2, 3), (2, 3)]) == [(2, 3)]


def test_elemwise_refuses_inputs_needing_padding_or_incompatible_shapes() -> None:
    with pytest.raises(TypeError, match="converting"):
        GpuElemwise(ps.add).make_node(F32("a"), GpuArrayType("float32", shape=(None,))("b"))
    with pytest.raises(ValueError):
        GpuElemwise(ps.add).make_node(
            GpuArrayType("float32", shape=(2,))("a"), GpuArrayType("float32", shape=(3,))("b")
        )


def test_careduce_types_and_shapes() -> None:
    x = GpuArrayType("float64", shape=(None, 4, None))("x")
    op = GpuCAReduce(ps.add, (0, 2), "float64", "float64")
    node = op.make_node(x)
    assert node.outputs[0].type == GpuArrayType("float64", shape=(4,))
    assert op.infer_shape(None, node, [(5, 4, 6)]) == [(4,)]
    assert str(op) == "GpuCAReduce{add}{axes=0,2}"
    all_axes = GpuCAReduce(ps.maximum, None, "float64", "float64")
    assert all_axes.make_node(x).outputs[0].type == GpuArrayType("float64", shape=())


def test_dot_types_and_errors() -> None:
    a, v = F32("a"), GpuArrayType("float32", shape=(None,))("v")
    assert GpuDot().make_node(a, v).outputs[0].type == GpuArrayType("float32", shape=(None,))
    node = GpuDot().make_node(a, a)
    assert GpuDot().infer_shape(None, node, [(2, 3), (3, 5)]) == [(2, 5)]
    with pytest.raises(TypeError, match="dimensions"):
        GpuDot().make_node(GpuArrayType("float32", shape=(None,) * 3)("t"), a)


def test_view_ops_types_and_shapes() -> None:
    x = GpuArrayType("float32", shape=(3, None))("x")
    ds = GpuDimShuffle(2, (1, "x", 0)).make_node(x)
    assert ds.outputs[0].type == GpuArrayType("float32", shape=(None, 1, 3))
    assert ds.op.view_map == {0: [0]}
    sub = GpuSubtensor([slice(1, None)]).make_node(x)
    assert sub.outputs[0].type == GpuArrayType("float32", shape=(2, None))
    assert sub.op.infer_shape(None, sub, [(3, 7)])[0][1] == 7
    rs = GpuReshape(1).make_node(x, ot.as_tensor_variable(np.array([-1])))
    assert rs.outputs[0].type.ndim == 1 and isinstance(rs.inputs[1].type, ot.TensorType)


def test_alloc_keeps_lengths_on_the_host() -> None:
    v = GpuArrayType("float64", shape=())("v")
    n = ot.lscalar("n")
    node = GpuAlloc().make_node(v, n, 3)
    assert node.outputs[0].type == GpuArrayType("float64", shape=(None, 3))
    assert isinstance(node.inputs[1].type, ot.TensorType)


def test_ops_compare_by_their_props() -> None:
    assert GpuElemwise(ps.add) == GpuElemwise(ps.add) != GpuElemwise(ps.mul)
    assert hash(GpuSubtensor([slice(1, None)])) == hash(GpuSubtensor([slice(1, None)]))
    assert GpuSubtensor([slice(1, None)]) != GpuSubtensor([slice(2, None)])
    assert GpuDimShuffle(2, (1, 0)) == GpuDimShuffle(2, [1, 0])
    assert GpuCAReduce(ps.add, (0,), "float32", "float32") != GpuCAReduce(
        ps.add, (1,), "float32", "float32"
    )


# ---------------------------------------------------------------------- layouts (host math)


@pytest.mark.parametrize(
    "index",
    [
        (slice(1, None),),
        (1,),
        (slice(None, None, 2), 3),
        (slice(None, None, -1),),
        (slice(1, 3), slice(None, None, -2)),
        (2, 1),
    ],
)
def test_subtensor_layout_matches_numpy(index: tuple) -> None:
    base = np.arange(5 * 7 * 2, dtype="float32").reshape(5, 7, 2)[:, ::-1]
    op = GpuSubtensor(list(index))
    shape, strides, offset = subtensor_layout(op, [], base.shape, base.strides, 4)
    view = base[index]
    assert shape == view.shape and strides == view.strides
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    assert offset == start


def test_subtensor_layout_with_symbolic_entries_and_bounds() -> None:
    i = ot.lscalar("i")
    op = GpuSubtensor(ot.dmatrix("x")[i].owner.op.idx_list)
    shape, strides, offset = subtensor_layout(op, [2], (4, 3), (12, 4), 4)
    assert (shape, strides, offset) == ((3,), (4,), 24)
    with pytest.raises(IndexError, match="out of bounds"):
        subtensor_layout(op, [9], (4, 3), (12, 4), 4)


def test_dimshuffle_layout() -> None:
    op = GpuDimShuffle(3, (2, "x", 0))
    assert dimshuffle_layout(op, (4, 1, 5), (20, 20, 4)) == ((5, 1, 4), (4, 0, 20))
    with pytest.raises(ValueError, match="cannot drop axis 1 of length 2"):
        dimshuffle_layout(op, (4, 2, 5), (40, 20, 4))


def test_resolve_shape_and_broadcast_shape() -> None:
    op = GpuReshape(2)
    assert resolve_shape(op, 12, [3, -1]) == (3, 4)
    assert resolve_shape(op, 12, [2, 6]) == (2, 6)
    with pytest.raises(ValueError, match="cannot reshape"):
        resolve_shape(op, 12, [5, -1])
    with pytest.raises(ValueError, match="invalid"):
        resolve_shape(op, 12, [-1, -1])
    assert broadcast_shape(op, [(1, 3), (4, 1), (4, 3)]) == (4, 3)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        broadcast_shape(op, [(2, 3), (4, 3)])
