"""The rewrites that move graphs to the GPU, checked on graph structure alone."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave.graph.basic import Constant, Variable
from opweave.graph.fg import FunctionGraph
from opweave.graph.rewriting import build_rewrite_database
from opweave.scalar import Composite
from opweave_cuda import GpuArrayType, GpuFromHost, HostFromGpu
from opweave_cuda.ops import (
    GpuAlloc,
    GpuCAReduce,
    GpuDimShuffle,
    GpuDot,
    GpuElemwise,
    GpuOp,
    GpuReshape,
    GpuSubtensor,
)

TRANSFERS = (GpuFromHost, HostFromGpu)


def rewrite(
    inputs: Sequence[Variable], outputs: Sequence[Variable], include: tuple[str, ...] = ("cuda",)
) -> FunctionGraph:
    """The FAST_RUN rewrites (plus ``include``) applied to a graph, without linking it."""
    fg = FunctionGraph(list(inputs), list(outputs), clone=True)
    build_rewrite_database().query(include=("fast_run", *include)).rewrite(fg)
    return fg


def op_types(fg: FunctionGraph) -> list[type]:
    return [type(n.op) for n in fg.toposort()]


def assert_transfers_only_at_edges(fg: FunctionGraph) -> None:
    """Uploads read graph inputs or constants; downloads feed outputs or host nodes only."""
    for node in fg.apply_nodes:
        if isinstance(node.op, GpuFromHost):
            src = node.inputs[0]
            assert (
                src in fg.inputs
                or isinstance(src, Constant)
                or (src.owner is not None and not isinstance(src.owner.op, GpuOp | HostFromGpu))
            ), f"upload of an intermediate: {node}"
        if isinstance(node.op, HostFromGpu):
            out = node.outputs[0]
            for client, _ in fg.clients[out]:
                assert client == "output" or not isinstance(
                    getattr(client, "op", None), GpuOp | GpuFromHost
                ), f"download feeding the GPU: {node} -> {client}"


def test_fused_elemwise_and_reduction_move_with_transfers_at_the_edges() -> None:
    x, y, z = ot.fmatrix("x"), ot.fmatrix("y"), ot.fmatrix("z")
    fg = rewrite([x, y, z], [ot.sum(ot.exp(x) * y + z, axis=1)])
    types = op_types(fg)
    assert types.count(GpuFromHost) == 3 and types.count(HostFromGpu) == 1
    (elem,) = [n for n in fg.apply_nodes if isinstance(n.op, GpuElemwise)]
    assert isinstance(elem.op.scalar_op, Composite)  # fusion ran first: one kernel
    (red,) = [n for n in fg.apply_nodes if isinstance(n.op, GpuCAReduce)]
    assert red.op.axis == (1,) and red.inputs[0] is elem.outputs[0]
    out = fg.outputs[0]
    assert isinstance(out.owner.op, HostFromGpu) and out.owner.inputs[0] is red.outputs[0]
    assert out.type == ot.TensorType("float32", shape=(None,))
    assert_transfers_only_at_edges(fg)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (2, 0, 1)])
def test_careduce_over_any_axes(axis: object) -> None:
    x = ot.dtensor3("x")
    fg = rewrite([x], [ot.max(x, axis=axis), ot.sum(x, axis=axis)])
    reds = [n.op for n in fg.apply_nodes if isinstance(n.op, GpuCAReduce)]
    assert len(reds) == 2
    assert not any(type(n.op).__name__ in ("Sum", "Max", "CAReduce") for n in fg.apply_nodes)
    expected = None if axis is None else tuple(sorted(np.atleast_1d(axis).tolist()))
    for op in reds:
        assert (op.axis is None and expected is None) or tuple(sorted(op.axis)) == expected


@pytest.mark.parametrize(
    "make",
    [
        lambda a, b: ot.dot(a, b),
        lambda a, b: ot.matmul(a, b),
        lambda a, b: ot.dot(a, b[:, 0]),
    ],
    ids=["dot", "matmul", "matrix-vector"],
)
def test_dot_and_matmul_move(make) -> None:  # type: ignore[no-untyped-def]
    a, b = ot.fmatrix("a"), ot.fmatrix("b")
    fg = rewrite([a, b], [make(a, b)])
    assert GpuDot in op_types(fg)
    assert not any(type(n.op).__name__ in ("Dot", "MatMul") for n in fg.apply_nodes)
    assert_transfers_only_at_edges(fg)


def test_integer_and_mixed_dtype_dots_stay_on_the_host() -> None:
    i, j = ot.lmatrix("i"), ot.lmatrix("j")
    a, d = ot.fmatrix("a"), ot.dmatrix("d")
    fg = rewrite([i, j, a, d], [ot.dot(i, j), ot.dot(a, d)])
    assert GpuDot not in op_types(fg)
    assert sum(type(n.op).__name__ == "Dot" for n in fg.apply_nodes) == 2


def test_shape_ops_move_and_chain_without_transfers() -> None:
    x = ot.dmatrix("x")
    n = ot.lscalar("n")
    chain = ot.exp(x.T[1:, ::2].reshape((-1,)))
    filled = ot.alloc(ot.constant(1.5), n, 3)
    fg = rewrite([x, n], [chain, filled])
    types = set(op_types(fg))
    assert {GpuDimShuffle, GpuSubtensor, GpuReshape, GpuElemwise, GpuAlloc} <= types
    assert types.isdisjoint({type(o) for o in (ot.exp(x).owner.op, x.T.owner.op, x[1:].owner.op)})
    # The chain DimShuffle -> Subtensor -> Reshape -> Elemwise: one upload, one download.
    gpu_chain = [n for n in fg.toposort() if isinstance(n.op, GpuOp) and n.op is not None]
    for node in gpu_chain:
        for inp in node.inputs:
            if isinstance(inp.type, GpuArrayType) and inp.owner is not None:
                assert isinstance(inp.owner.op, GpuOp | GpuFromHost)
    assert op_types(fg).count(HostFromGpu) == 2
    assert_transfers_only_at_edges(fg)


def test_gpu_op_outputs_keep_the_host_types() -> None:
    x = ot.TensorType("float32", shape=(4, None))("x")
    fg = rewrite([x], [ot.exp(x)[1:3]])
    assert fg.outputs[0].type == ot.TensorType("float32", shape=(2, None))
    sub = next(n for n in fg.apply_nodes if isinstance(n.op, GpuSubtensor))
    assert sub.outputs[0].type == GpuArrayType("float32", shape=(2, None))


def test_nothing_moves_on_a_cpu_compile() -> None:
    x, y = ot.fmatrix("x"), ot.fmatrix("y")
    outputs = [ot.sum(ot.exp(x) * y), ot.dot(x, y).T.reshape((-1,))]
    fg = rewrite([x, y], outputs, include=())
    assert not any(isinstance(n.op, GpuOp | GpuFromHost | HostFromGpu) for n in fg.apply_nodes)
    f = opweave.function([x, y], outputs, mode=opweave.Mode(linker="vm"))
    assert not any(
        isinstance(n.op, GpuOp | GpuFromHost | HostFromGpu) for n in f.maker.fgraph.apply_nodes
    )


def test_back_to_back_transfer_pairs_vanish() -> None:
    x = ot.fvector("x")
    g = GpuArrayType("float32", shape=(None,))("g")
    there_and_back = opweave.transfer(x.transfer("cuda"), "cpu")
    back_and_there = opweave.transfer(g, "cpu").transfer("cuda")
    fg = rewrite([x, g], [there_and_back * 2, back_and_there], include=())
    assert fg.outputs[1] is fg.inputs[1]
    assert not any(isinstance(n.op, GpuFromHost | HostFromGpu) for n in fg.apply_nodes)


def test_complex_and_unsupported_ops_stay_on_the_host() -> None:
    c = ot.TensorType("complex128", shape=(None,))("c")
    x = ot.fvector("x")
    idx = ot.lvector("i")
    fg = rewrite([c, x, idx], [c * 2, ot.exp(x)[idx]])
    kinds = op_types(fg)
    assert sum(isinstance(n.op, GpuElemwise) for n in fg.apply_nodes) == 1  # exp only
    # The advanced indexing reads the downloaded exp.
    adv = next(n for n in fg.apply_nodes if "Advanced" in type(n.op).__name__)
    assert isinstance(adv.inputs[0].owner.op, HostFromGpu)
    assert HostFromGpu in kinds


def test_gpu_tag_alone_selects_the_lift() -> None:
    x = ot.fvector("x")
    fg = rewrite([x], [ot.exp(x)], include=("gpu",))
    assert GpuElemwise in op_types(fg)


def test_gpu_graph_inputs_are_used_directly() -> None:
    g = GpuArrayType("float64", shape=(None,))("g")
    out = ot.exp(g.transfer("cpu")) + 1
    fg = rewrite([g], [out.transfer("cuda")])
    assert op_types(fg) == [GpuElemwise]
    assert fg.outputs[0].owner.inputs[0] is fg.inputs[0]


def test_reductions_fused_on_the_host_are_split_and_moved() -> None:
    x = ot.dmatrix("x")
    fg = rewrite([x], [ot.sum(x**2, axis=1), ot.max(ot.exp(x))])
    names = [type(n.op).__name__ for n in fg.toposort()]
    assert "MapReduce" not in names
    assert names.count("GpuCAReduce") == 2 and names.count("GpuElemwise") == 2
    assert names.count("GpuFromHost") == 1 and names.count("HostFromGpu") == 2
    assert_transfers_only_at_edges(fg)
