"""``transfer`` to and from ``'cuda'``: the Ops, their Types, their gradients."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave_cuda import GpuArrayType, GpuFromHost, HostFromGpu, gpu_from_host, host_from_gpu
from opweave_cuda.availability import import_gpuarray


def test_transfer_to_cuda_gives_gpu_from_host() -> None:
    x = ot.fmatrix("x")
    g = x.transfer("cuda")
    assert isinstance(g.owner.op, GpuFromHost) and g.owner.inputs == [x]
    assert g.type == GpuArrayType("float32", shape=(None, None))
    assert opweave.transfer(x, "cuda").type == g.type


def test_transfer_to_cpu_gives_host_from_gpu() -> None:
    g = GpuArrayType("float64", shape=(3,))("g")
    h = opweave.transfer(g, "cpu")
    assert isinstance(h.owner.op, HostFromGpu) and h.owner.inputs == [g]
    assert h.type == ot.TensorType("float64", shape=(3,))
    assert g.transfer("cpu").type == h.type


def test_transfers_that_need_no_move_return_the_variable() -> None:
    g = GpuArrayType("float32", shape=(None,))("g")
    x = ot.fvector("x")
    assert g.transfer("cuda") is g
    assert x.transfer("cpu") is x


def test_unknown_target_is_still_an_error() -> None:
    with pytest.raises(ValueError, match="no installed plugin handles it"):
        ot.fvector("x").transfer("tpu")


def test_transfer_ops_reject_wrong_sides() -> None:
    g = GpuArrayType("float32", shape=(None,))("g")
    with pytest.raises(TypeError, match="already lives on the GPU"):
        gpu_from_host(g)
    with pytest.raises(TypeError, match="expects a variable of a GpuArrayType"):
        host_from_gpu(ot.fvector("x"))


def test_infer_shape_passes_shapes_through() -> None:
    x = ot.fmatrix("x")
    node = x.transfer("cuda").owner
    assert node.op.infer_shape(None, node, [("a", "b")]) == [("a", "b")]
    back = host_from_gpu(node.outputs[0]).owner
    assert back.op.infer_shape(None, back, [(2, 3)]) == [(2, 3)]


def test_gradient_of_an_upload_is_a_download() -> None:
    x = ot.fvector("x")
    cost = ot.sum(opweave.transfer(x.transfer("cuda"), "cpu") ** 2)
    gx = opweave.grad(cost, x)
    assert gx.type == x.type
    assert isinstance(gx.owner.op, HostFromGpu)
    assert isinstance(gx.owner.inputs[0].owner.op, GpuFromHost)


def test_gradient_with_respect_to_a_gpu_variable_lives_on_the_gpu() -> None:
    g = GpuArrayType("float64", shape=(None,))("g")
    cost = ot.sum(ot.exp(g.transfer("cpu")))
    gg = opweave.grad(cost, g)
    assert gg.type == g.type
    assert isinstance(gg.owner.op, GpuFromHost)


def test_gradient_values_match_through_the_transfers_on_a_cpu_compile() -> None:
    # The transfer pairs are cut by a rewrite that also runs on CPU compiles, so this
    # graph runs without a GPU and its gradient is checked by value.
    x = ot.dvector("x")
    cost = ot.sum(opweave.transfer(x.transfer("cuda"), "cpu") ** 2)
    f = opweave.function([x], opweave.grad(cost, x), mode=opweave.Mode(linker="vm"))
    ops = {type(n.op) for n in f.maker.fgraph.apply_nodes}
    assert not ops & {GpuFromHost, HostFromGpu}
    np.testing.assert_allclose(f(np.array([1.0, -2.0])), [2.0, -4.0])


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_upload_download_round_trip_on_device(dtype: str) -> None:
    x = ot.TensorType(dtype, shape=(None, None))("x")
    g = x.transfer("cuda")
    up = opweave.function([x], g, mode=opweave.Mode(linker="cuda", optimizer=None))
    value = np.arange(6).reshape(2, 3).astype(dtype)
    out = up(value)
    gpuarray = import_gpuarray()  # the backend's context (a bare pycuda import has none)

    assert isinstance(out, gpuarray.GPUArray)
    np.testing.assert_array_equal(out.get(), value)
    down = opweave.function(
        [x], opweave.transfer(g, "cpu") * 2, mode=opweave.Mode(linker="cuda", optimizer=None)
    )
    np.testing.assert_array_equal(down(value), value * 2)
