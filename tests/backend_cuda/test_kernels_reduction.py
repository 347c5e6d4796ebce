"""Reduction kernel generation: PTX for sm_80/sm_90 (with warp shuffles), signatures,
identities, and launch plans replayed on the host against NumPy."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave.scalar as ps
from opweave.tensor.type import TensorType
from opweave_cuda.kernels import ReductionKernel, reduction_kernel
from opweave_cuda.kernels.reduction import REDUCTION_BLOCK, identity_literal


def _tt(dtype: str, ndim: int) -> TensorType:
    return TensorType(dtype, (None,) * ndim)


def _case(op: Any, axes: tuple[int, ...], dtype: str, ndim: int, out: str, acc: str | None = None):
    return reduction_kernel(op, axes, _tt(dtype, ndim), _tt(out, ndim - len(axes)), acc)


CASES: dict[str, ReductionKernel] = {
    "sum_f32_axis0": _case(ps.add, (0,), "float32", 2, "float32"),
    "sum_f32_axis1_acc64": _case(ps.add, (1,), "float32", 2, "float32", "float64"),
    "sum_f64_all": _case(ps.add, (0, 1), "float64", 2, "float64"),
    "sum_f16": _case(ps.add, (0,), "float16", 2, "float16", "float32"),
    "sum_i8_to_i64": _case(ps.add, (0,), "int8", 2, "int64", "int64"),
    "sum_bool_to_i64": _case(ps.add, (1,), "bool", 2, "int64", "int64"),
    "prod_i32": _case(ps.mul, (0, 2), "int32", 3, "int64", "int64"),
    "prod_u8": _case(ps.mul, (1,), "uint8", 2, "uint64", "uint64"),
    "max_f64": _case(ps.maximum, (1, 3), "float64", 4, "float64"),
    "min_f32": _case(ps.minimum, (0,), "float32", 1, "float32"),
    "max_i16": _case(ps.maximum, (1,), "int16", 2, "int16"),
    "min_u64": _case(ps.minimum, (0,), "uint64", 2, "uint64"),
    "all_bool": _case(ps.and_, (0,), "bool", 2, "bool"),
    "any_bool": _case(ps.or_, (0, 1, 2), "bool", 3, "bool"),
    "none_axes": _case(ps.add, (), "float32", 2, "float32"),
    "scalar_0d": _case(ps.add, (), "float64", 0, "float64"),
    "negative_axis": _case(ps.add, (-1,), "float32", 3, "float32"),
}


@pytest.fixture(scope="module")
def ptx(
    compile_ptx: Callable[[Iterable[str], Path], dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """Every kernel of :data:`CASES`, compiled to PTX with one nvcc call per arch."""
    return compile_ptx([k.kernel.source for k in CASES.values()], tmp_path_factory.mktemp("red"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_kernel_compiles_with_warp_shuffles(
    case: str, ptx: dict[str, str], ptx_entry: Callable[[str, str], str]
) -> None:
    kernel = CASES[case].kernel
    for text in ptx.values():
        entry = ptx_entry(text, kernel.name)
        assert "shfl.sync.down" in entry
        assert "bar.sync" in entry  # the shared-memory tree
    assert kernel.block == REDUCTION_BLOCK


def test_float16_reduction_accumulates_in_float(
    ptx: dict[str, str], ptx_entry: Callable[[str, str], str]
) -> None:
    entry = ptx_entry(ptx["sm_90"], CASES["sum_f16"].kernel.name)
    assert "cvt.f32.f16" in entry and "cvt.rn.f16.f32" in entry
    assert "add.rn.f32" in entry or "add.f32" in entry


def test_float64_accumulator_for_float32_input(
    ptx: dict[str, str], ptx_entry: Callable[[str, str], str]
) -> None:
    entry = ptx_entry(ptx["sm_80"], CASES["sum_f32_axis1_acc64"].kernel.name)
    assert "cvt.f64.f32" in entry and "add.rn.f64" in entry
    assert "__shared__ npy_float64 sdata" in CASES["sum_f32_axis1_acc64"].kernel.source


def test_signature_orders_kept_then_output_then_reduced() -> None:
    assert CASES["max_f64"].kernel.params == (
        "long long n_out",
        "long long n_red",
        "const npy_float64* x",
        "long long k0",
        "long long xk0",
        "long long k2",
        "long long xk2",
        "npy_float64* out",
        "long long ok0",
        "long long ok2",
        "long long r1",
        "long long xr1",
        "long long r3",
        "long long xr3",
    )
    assert CASES["negative_axis"].axes == (2,)


def test_identity_literals() -> None:
    assert identity_literal(0, "float32") == "((npy_float32)0.0)"
    assert identity_literal(1, "int64") == "((npy_int64)1LL)"
    assert identity_literal(-np.inf, "float32") == "__int_as_float(0xff800000)"
    assert identity_literal(np.inf, "float64") == "__longlong_as_double(0x7ff0000000000000ULL)"
    assert identity_literal(-np.inf, "int16") == "((npy_int16)-32768LL)"
    assert identity_literal(np.inf, "uint64") == "((npy_uint64)18446744073709551615ULL)"
    assert identity_literal(-np.inf, "int64") == "((npy_int64)(-9223372036854775807LL - 1))"
    assert identity_literal(-1, "bool") == "((npy_bool)1)"
    assert identity_literal(-1, "uint8") == "((npy_uint8)255LL)"
    assert identity_literal(0, "float16") == "((npy_float32)0.0)"


def test_unsupported_raise() -> None:
    with pytest.raises(NotImplementedError, match="complex128"):
        _case(ps.add, (0,), "complex128", 1, "complex128")
    with pytest.raises(NotImplementedError, match="8"):
        _case(ps.add, (0,), "float32", 9, "float32")
    with pytest.raises(ValueError, match="axes"):
        _case(ps.add, (2,), "float32", 2, "float32")


def _cell(arr: np.ndarray, offset: int) -> np.ndarray:
    """A one-element view of the element ``offset`` elements from ``arr``'s first one."""
    strides = (offset * arr.itemsize,)
    return np.lib.stride_tricks.as_strided(arr, shape=(2,), strides=strides)[1:2]


def _replay(kernel: ReductionKernel, values: list[Any], op: Callable[[list[Any]], Any]) -> None:
    """Run the kernel's index arithmetic on the host: what its threads read and write, from
    the plan's values (element strides into the host arrays given as pointers)."""
    n_out, n_red, x = values[0], values[1], values[2]
    nk, nr = len(kernel.kept), len(kernel.axes)
    kept = [(values[3 + 2 * j], values[4 + 2 * j]) for j in range(nk)]
    k = 3 + 2 * nk
    out = values[k]
    out_strides = values[k + 1 : k + 1 + nk]
    k += 1 + nk
    red = [(values[k + 2 * j], values[k + 2 * j + 1]) for j in range(nr)]
    assert len(values) == k + 2 * nr == len(kernel.kernel.params)
    for o in range(n_out):
        ro, xo, oo = o, 0, 0
        for (size, xs), os_ in zip(reversed(kept), reversed(out_strides), strict=True):
            ro, c = divmod(ro, size)
            xo += c * xs
            oo += c * os_
        items = []
        for j in range(n_red):
            q, xi = j, xo
            for size, xs in reversed(red):
                q, c = divmod(q, size)
                xi += c * xs
            items.append(_cell(x, xi)[0])
        _cell(out, oo)[0] = op(items)


_REFERENCE = {
    "add": (np.sum, lambda items: sum(items, start=0)),
    "max": (np.max, lambda items: max(items) if items else -np.inf),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative_steps"])
def test_plan_replays_to_numpy_over_every_axis_set(layout: str) -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(-9, 9, size=(3, 4, 5)).astype("float64")
    x = {
        "contiguous": base,
        "transposed": base.transpose(2, 0, 1),
        "negative_steps": base[::-1, :, ::-2],
    }[layout]
    for r in range(4):
        for axes in itertools.combinations(range(3), r):
            for name, (ref, fold) in _REFERENCE.items():
                op = ps.add if name == "add" else ps.maximum
                kernel = _case(op, axes, "float64", 3, "float64")
                expected = ref(x, axis=axes) if axes else x.copy()
                out = np.full(expected.shape, np.nan).T.copy().T  # any layout
                planned = kernel.plan(x, out)
                assert planned is not None
                source, grid, block, values = planned
                assert source is kernel.kernel and block == (REDUCTION_BLOCK, 1, 1)
                assert grid[0] == max(1, math.prod(expected.shape))
                _replay(kernel, values, fold)
                np.testing.assert_array_equal(out, expected, err_msg=f"{name} {axes}")


def test_plan_empty_reduction_and_empty_output() -> None:
    kernel = CASES["sum_f32_axis0"]
    x = np.zeros((0, 3), dtype="float32")
    out = np.full(3, 7, dtype="float32")
    planned = kernel.plan(x, out)
    assert planned is not None
    values = planned[3]
    assert values[:2] == [3, 0]  # three outputs, nothing to reduce: the identity is written
    _replay(kernel, values, lambda items: sum(items, start=0))
    np.testing.assert_array_equal(out, np.zeros(3))
    assert kernel.plan(np.zeros((4, 0), "float32"), np.zeros(0, "float32")) is None


def test_plan_checks_operands() -> None:
    kernel = CASES["sum_f32_axis0"]
    with pytest.raises(TypeError, match="shape"):
        kernel.plan(np.zeros((2, 3), "float32"), np.zeros(2, "float32"))
    with pytest.raises(TypeError, match="float32"):
        kernel.plan(np.zeros((2, 3), "float64"), np.zeros(3, "float32"))
