"""Named-dimension tensors on the jax linker: xtensor inputs, outputs and shared variables
(the xtensor Ops are lowered to tensor Ops before the linker sees the graph)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax")

import opweave
from opweave.compile.mode import Mode
from opweave.xtensor.basic import rename, xtensor_from_tensor
from opweave.xtensor.type import as_xtensor, xtensor, xtensor_shared

JAX = Mode(linker="jax")


def test_xtensor_inputs_and_outputs_come_back_as_numpy_arrays() -> None:
    x = xtensor("x", dims=("a", "b"), dtype="float32")
    out = xtensor_from_tensor(rename(x, a="c").values * 2, dims=("c", "d"))
    f = opweave.function([x], out, mode=JAX)
    value = np.arange(6, dtype="float32").reshape(2, 3)
    got = f(value)
    assert type(got) is np.ndarray and got.dtype == np.float32
    np.testing.assert_array_equal(got, value * 2)


def test_shared_xtensor_updates_on_the_device() -> None:
    s = xtensor_shared(np.arange(3.0), dims=("a",), name="s")
    f = opweave.function(
        [], s.values.sum(), updates=[(s, as_xtensor(s.values + 1, dims=("a",)))], mode=JAX
    )
    assert float(f()) == 3.0 and float(f()) == 6.0
    np.testing.assert_array_equal(s.get_value(), [2.0, 3.0, 4.0])
