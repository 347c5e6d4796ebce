"""Every GPU Op against the Python backend, run on the device (``cuda``: needs a GPU)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import opweave
import opweave.tensor as ot
from opweave_cuda.ops import GpuOp

rng = np.random.default_rng(42)

CASES: dict[str, tuple[Callable[..., object], list[np.ndarray]]] = {
    "fused_elemwise": (
        lambda x, y, z: ot.exp(x) * y + z,
        [rng.normal(size=(3, 4)).astype("float32") for _ in range(3)],
    ),
    "broadcast": (lambda x, y: x + y[None, :], [rng.normal(size=(3, 4)), rng.normal(size=4)]),
    "int_elemwise": (
        lambda x, y: x * y - 3,
        [rng.integers(-9, 9, size=(5,)), rng.integers(-9, 9, size=(5,))],
    ),
    "sum_all": (lambda x: ot.sum(x**2), [rng.normal(size=(7, 5)).astype("float32")]),
    "sum_axis": (lambda x: ot.sum(x, axis=(0, 2)), [rng.normal(size=(3, 4, 5))]),
    "max_axis": (lambda x: ot.max(x, axis=1), [rng.normal(size=(6, 33))]),
    "dot": (lambda a, b: ot.dot(a, b), [rng.normal(size=(5, 3)), rng.normal(size=(3, 4))]),
    "matvec": (lambda a, v: ot.dot(a, v), [rng.normal(size=(5, 3)), rng.normal(size=3)]),
    "matmul_f32": (
        lambda a, b: ot.matmul(a, b),
        [rng.normal(size=(4, 6)).astype("float32"), rng.normal(size=(6, 2)).astype("float32")],
    ),
    "transpose_then_exp": (lambda x: ot.exp(x.T), [rng.normal(size=(3, 4))]),
    "subtensor": (lambda x: ot.exp(x[1:, ::-2]), [rng.normal(size=(4, 5))]),
    "reshape": (lambda x: ot.exp(x).reshape((-1, 2)), [rng.normal(size=(3, 4))]),
    "reshape_strided": (lambda x: x.T.reshape((-1,)) * 2, [rng.normal(size=(3, 4))]),
    "alloc": (lambda x: ot.alloc(x, 3, 4) + 1, [np.array(2.5)]),
    "scalar_0d": (lambda x, y: ot.exp(x) * y, [np.array(0.5), np.array(3.0)]),
    "empty": (lambda x: ot.sum(ot.exp(x.T), axis=0) + x[:, 0].sum(), [np.zeros((0, 3))]),
    "float16": (
        lambda x, y: ot.sum(x * y + x, axis=1),
        [rng.uniform(0.5, 2.0, size=(5, 300)).astype("float16") for _ in range(2)],
    ),
    "bool": (lambda x, y: ot.sum(x & ~y), [rng.normal(size=(9,)) > 0, rng.normal(size=(9,)) > 0]),
    "sum_split": (lambda x: ot.sum(x**2), [rng.normal(size=(2, 600_000)).astype("float32")]),
    "max_split": (lambda x: ot.max(x, axis=(0, 2)), [rng.normal(size=(500, 3, 40))]),
}


@pytest.mark.cuda
@pytest.mark.parametrize("case", sorted(CASES))
def test_gpu_op_matches_python_backend(case: str) -> None:
    build, values = CASES[case]
    inputs = [ot.TensorType(v.dtype, shape=(None,) * v.ndim)(f"i{k}") for k, v in enumerate(values)]
    out = build(*inputs)
    f_gpu = opweave.function(inputs, out, mode=opweave.Mode(linker="cuda"))
    f_py = opweave.function(inputs, out, mode=opweave.Mode(linker="py"))
    assert any(isinstance(n.op, GpuOp) for n in f_gpu.maker.fgraph.apply_nodes)
    expected = f_py(*values)
    got = f_gpu(*values)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    rtol = {"float16": 2e-2, "float32": 1e-4}.get(str(got.dtype), 1e-10)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(f_gpu(*values), expected, rtol=rtol, atol=1e-6)  # storage reuse
