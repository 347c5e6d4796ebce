"""GPU shared variables and the training loop on the device (``cuda`` tests need a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave_cuda import GpuArraySharedVariable, GpuArrayType, HostFromGpu
from opweave_cuda.availability import import_gpuarray
from opweave_cuda.ops import GpuOp
from opweave_cuda.sharedvar import gpu_shared


def test_other_targets_are_left_to_other_plugins() -> None:
    assert gpu_shared(np.zeros(2), target="tpu") is None
    assert gpu_shared(np.zeros(2), target=None) is None


def test_unknown_target_keeps_the_core_error() -> None:
    with pytest.raises(ValueError, match="no installed plugin provides shared variables"):
        opweave.shared(np.zeros(2), target="tpu")


@pytest.mark.cuda
def test_shared_on_cuda_values() -> None:
    gpuarray = import_gpuarray()  # the backend's context (a bare pycuda import has none)

    value = np.arange(6, dtype="float32").reshape(2, 3)
    w = opweave.shared(value, name="w", target="cuda")
    assert isinstance(w, GpuArraySharedVariable)
    assert w.type == GpuArrayType("float32", shape=(None, None))
    got = w.get_value()
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, value)
    internal = w.get_value(borrow=True, return_internal_type=True)
    assert isinstance(internal, gpuarray.GPUArray)
    ptr = int(internal.gpudata)
    w.set_value(value * 2)
    assert int(w.get_value(borrow=True, return_internal_type=True).gpudata) == ptr
    np.testing.assert_array_equal(w.get_value(), value * 2)
    copy = w.get_value(return_internal_type=True)
    assert int(copy.gpudata) != ptr


@pytest.mark.cuda
def test_updates_stay_on_the_device() -> None:
    w = opweave.shared(np.ones(4, dtype="float32"), name="w", target="cuda")
    step = opweave.function(
        [], [], updates=[(w, w.transfer("cpu") * 2 + 1)], mode=opweave.Mode(linker="cuda")
    )
    fg = step.maker.fgraph
    update = fg.outputs[-1]
    assert isinstance(update.owner.op, GpuOp)
    assert not any(isinstance(n.op, HostFromGpu) for n in fg.apply_nodes)
    for _ in range(3):
        step()
    np.testing.assert_array_equal(w.get_value(), np.full(4, 15.0, dtype="float32"))


@pytest.mark.cuda
def test_logistic_regression_trains_on_the_device() -> None:
    rng = np.random.default_rng(0)
    n, d = 400, 5
    data = rng.normal(size=(n, d)).astype("float32")
    hidden = rng.normal(size=d)
    labels = (data @ hidden + 0.3 * rng.normal(size=n) > 0).astype("float32")

    x, t = ot.fmatrix("x"), ot.fvector("t")
    w_gpu = opweave.shared(np.zeros(d, dtype="float32"), name="w", target="cuda")
    b_gpu = opweave.shared(np.float32(0.0), name="b", target="cuda")
    w, b = w_gpu.transfer("cpu"), b_gpu.transfer("cpu")
    logits = ot.dot(x, w) + b
    loss = ot.mean(t * ot.softplus(-logits) + (1 - t) * ot.softplus(logits))
    gw, gb = opweave.grad(loss, [w, b])
    lr = np.float32(0.5)
    train = opweave.function(
        [x, t],
        loss,
        updates=[(w_gpu, w - lr * gw), (b_gpu, b - lr * gb)],
        mode=opweave.Mode(linker="cuda"),
    )
    assert any(isinstance(n.op, GpuOp) for n in train.maker.fgraph.apply_nodes)
    losses = [float(train(data, labels)) for _ in range(200)]
    assert losses[-1] < 0.5 * losses[0]
    # The same training on the host gives the same losses.
    w_cpu = opweave.shared(np.zeros(d, dtype="float32"))
    b_cpu = opweave.shared(np.float32(0.0))
    logits_c = ot.dot(x, w_cpu) + b_cpu
    loss_c = ot.mean(t * ot.softplus(-logits_c) + (1 - t) * ot.softplus(logits_c))
    gwc, gbc = opweave.grad(loss_c, [w_cpu, b_cpu])
    train_c = opweave.function(
        [x, t],
        loss_c,
        updates=[(w_cpu, w_cpu - lr * gwc), (b_cpu, b_cpu - lr * gbc)],
        mode=opweave.Mode(linker="py"),
    )
    losses_c = [float(train_c(data, labels)) for _ in range(200)]
    np.testing.assert_allclose(losses, losses_c, rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(w_gpu.get_value(), w_cpu.get_value(), rtol=1e-3, atol=1e-4)
