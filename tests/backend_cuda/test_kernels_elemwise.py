"""Elementwise kernel generation: sources compile to PTX (sm_80, sm_90), signatures, launch
plans (checked against NumPy by replaying their strides on host arrays)."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave.scalar as ps
from opweave.scalar.basic import UnaryScalarOp
from opweave.scalar.composite import Composite
from opweave.scalar.rules import same_out
from opweave.scalar.type import get_scalar_type
from opweave.tensor.type import TensorType
from opweave_cuda.device_copy import copy_kernel
from opweave_cuda.kernels import MAX_NDIM, ElemwiseKernel, elemwise_kernel, launch_config
from opweave_cuda.kernels.elemwise import INT32_ELEMENTS
from opweave_cuda.kernels.launch import MAX_BLOCKS, MAX_THREADS
from opweave_cuda.kernels.runtime import arg_types, device_pointer, pack_args
from opweave_cuda.kernels.source import CUDA_DTYPES, MAX_PARAM_BYTES

_MATH = ("exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "arcsin", "sigmoid")


def _tt(dtype: str, shape: tuple[int | None, ...]) -> TensorType:
    return TensorType(dtype, shape)


def _vars(*dtypes: str) -> list[Any]:
    return [get_scalar_type(d)() for d in dtypes]


def _math_composite(dtype: str) -> Composite:
    """One Composite applying many math functions (one kernel)."""
    (x,) = _vars(dtype)
    out = x
    for name in _MATH:
        out = getattr(ps, name)(out)
    return Composite([x], [out, ps.arctan2(x, out), ps.pow(x, out)])


def _cases() -> dict[str, ElemwiseKernel]:
    m = (None, None)
    cases: dict[str, ElemwiseKernel] = {}
    for dtype in ("float32", "float64"):
        t = _tt(dtype, m)
        cases[f"math_{dtype}"] = elemwise_kernel(_math_composite(dtype), [t], [t, t, t])
        cases[f"add_bcast_{dtype}"] = elemwise_kernel(
            ps.add, [_tt(dtype, (None, 1)), _tt(dtype, (1, None))], [t]
        )
        cases[f"floordiv_mod_{dtype}"] = elemwise_kernel(
            Composite(
                (xy := _vars(dtype, dtype)),
                [ps.int_div(*xy), ps.mod(*xy), ps.maximum(*xy), ps.minimum(*xy)],
            ),
            [t, t],
            [t, t, t, t],
        )
    (x,) = _vars("float32")
    f = _tt("float32", m)
    cases["explog_float32"] = elemwise_kernel(
        Composite([x], [ps.tanh(ps.log1p(ps.sqrt(ps.exp(x) * x)))]), [f], [f]
    )
    for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        t = _tt(dtype, (None,))
        xy = _vars(dtype, dtype)
        comp = Composite(
            xy,
            [ps.int_div(*xy), ps.mod(*xy), ps.pow(*xy), ps.mul(*xy), ps.abs_(xy[0]), ps.lt(*xy)],
        )
        outs = [t] * 5 + [_tt("bool", (None,))]
        cases[f"int_{dtype}"] = elemwise_kernel(comp, [t, t], outs)
    b = _tt("bool", (None, None))
    xy = _vars("bool", "bool")
    cases["bool_logic"] = elemwise_kernel(
        Composite(xy, [ps.and_(*xy), ps.or_(*xy), ps.xor(*xy), ps.invert(xy[0])]), [b, b], [b] * 4
    )
    x, y = _vars("float16", "float16")
    cases["half_fused"] = elemwise_kernel(
        Composite([x, y], [ps.exp(x) * y + ps.sqrt(y)]),
        [_tt("float16", m), _tt("float16", m)],
        [_tt("float16", m)],
    )
    cases["cast_to_half"] = elemwise_kernel(
        ps.Cast(get_scalar_type("float16")), [_tt("float64", m)], [_tt("float16", m)]
    )
    cases["int_to_float"] = elemwise_kernel(
        ps.true_div, [_tt("int32", m), _tt("int64", m)], [_tt("float64", m)]
    )
    cases["scalar_0d"] = elemwise_kernel(ps.mul, [_tt("float32", ())] * 2, [_tt("float32", ())])
    t8 = _tt("float32", (None,) * MAX_NDIM)
    cases["rank_max"] = elemwise_kernel(ps.sub, [t8, t8], [t8])
    cases["inplace"] = elemwise_kernel(
        ps.switch,
        [_tt("bool", m), _tt("float32", m), _tt("float32", m)],
        [_tt("float32", m)],
        inplace_pattern={0: 1},
    )
    cases.update(_dtype_matrix())
    return cases


def _dtype_matrix() -> dict[str, ElemwiseKernel]:
    """Per dtype (float16 and bool included): arithmetic, a comparison, and casts to and
    from float16 and to bool, each with its contiguous and strided kernels."""
    m = (None, None)
    half, boolean = _tt("float16", m), _tt("bool", m)
    cases: dict[str, ElemwiseKernel] = {}
    for dtype in sorted(CUDA_DTYPES):
        for dst in sorted({dtype, "float16", "bool", "float32"}):
            # the device copies and casts of opweave_cuda.device_copy (identity, two dtypes)
            cases[f"copy_{dtype}_to_{dst}"] = copy_kernel(dtype, dst, 2)
        t = _tt(dtype, m)
        cases[f"add_{dtype}"] = elemwise_kernel(ps.add, [t, t], [t])
        cases[f"lt_{dtype}"] = elemwise_kernel(ps.lt, [t, t], [boolean])
        cases[f"to_bool_{dtype}"] = elemwise_kernel(
            ps.Cast(get_scalar_type("bool")), [t], [boolean]
        )
        if dtype != "float16":
            cases[f"to_half_{dtype}"] = elemwise_kernel(
                ps.Cast(get_scalar_type("float16")), [t], [half]
            )
            cases[f"from_half_{dtype}"] = elemwise_kernel(
                ps.Cast(get_scalar_type(dtype)), [half], [t]
            )
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def ptx(
    compile_ptx: Callable[[Iterable[str], Path], dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """Every kernel of :data:`CASES`, compiled to PTX with one nvcc call per arch."""
    sources = {s.name: s.source for k in CASES.values() for s in k.sources}  # each kernel once
    return compile_ptx(list(sources.values()), tmp_path_factory.mktemp("elemwise_ptx"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_kernel_compiles_for_each_arch(case: str, ptx: dict[str, str]) -> None:
    for arch, text in ptx.items():
        for source in CASES[case].sources:
            assert f".entry {source.name}(" in text, (arch, source.name)


def test_kernel_names_are_distinct() -> None:
    """A name is unique to its code: two cases generating the same kernel share it."""
    by_name: dict[str, str] = {}
    for kernel in CASES.values():
        for source in kernel.sources:
            assert by_name.setdefault(source.name, source.source) == source.source
    assert len(by_name) > 100


def _kernel_text(source: str) -> str:
    return source[source.index('extern "C"') :]


_DOUBLE_CALL = re.compile(r"\b(exp|log|log1p|expm1|sqrt|sin|cos|tanh|asin|atan2|pow)\(")
_FLOAT_CALL = re.compile(r"\b(expf|logf|log1pf|expm1f|sqrtf|sinf|cosf|tanhf|asinf|atan2f|powf)\(")


def test_float32_math_uses_float_functions(ptx: dict[str, str], ptx_entry: Any) -> None:
    kernel = CASES["math_float32"].contiguous
    body = _kernel_text(kernel.source)
    assert not _DOUBLE_CALL.search(body)
    assert {"expf(", "logf(", "sqrtf(", "atan2f("} <= {
        m.group(0) for m in _FLOAT_CALL.finditer(body)
    }
    # a float32 kernel without trigonometry (whose argument reduction CUDA does partly in
    # double) runs nothing in double precision
    assert ".f64" not in ptx_entry(ptx["sm_80"], CASES["explog_float32"].contiguous.name)


def test_float64_math_uses_double_functions(ptx: dict[str, str], ptx_entry: Any) -> None:
    kernel = CASES["math_float64"].contiguous
    body = _kernel_text(kernel.source)
    assert not _FLOAT_CALL.search(body)
    assert {"exp(", "log(", "sqrt(", "atan2("} <= {m.group(0) for m in _DOUBLE_CALL.finditer(body)}
    assert ".f64" in ptx_entry(ptx["sm_80"], kernel.name)


def test_float16_loads_and_stores_convert_to_float(ptx: dict[str, str], ptx_entry: Any) -> None:
    for source in CASES["half_fused"].sources:
        for arch in ("sm_80", "sm_90"):
            entry = ptx_entry(ptx[arch], source.name)
            assert "cvt.f32.f16" in entry
            assert "cvt.rn.f16.f32" in entry
            assert "ex2.approx.f32" in entry or "ex2.approx.ftz.f32" in entry  # expf, in float
        assert "const __half* in0" in source.params
        assert "__half* out0" in source.params
    assert "cvt.rn.f16.f64" in ptx_entry(ptx["sm_80"], CASES["cast_to_half"].contiguous.name) or (
        "cvt.rn.f32.f64" in ptx_entry(ptx["sm_80"], CASES["cast_to_half"].contiguous.name)
    )


def test_fused_composite_is_one_kernel_per_path() -> None:
    kernel = CASES["math_float32"]
    assert len(kernel.sources) == 3
    assert kernel.contiguous32 is not None
    assert _kernel_text(kernel.contiguous32.source).count('extern "C" __global__') == 1
    body = _kernel_text(kernel.contiguous.source)
    assert body.count('extern "C" __global__') == 1
    # the whole inner graph is in the loop body
    for fn in ("expf(", "logf(", "log1pf(", "expm1f(", "tanhf(", "asinf(", "opw_sc_powh_float32("):
        assert fn in body


def test_contiguous_signature() -> None:
    kernel = CASES["add_bcast_float32"].contiguous
    assert kernel.params == (
        "long long n",
        "const npy_float32* in0",
        "long long in0_s",
        "const npy_float32* in1",
        "long long in1_s",
        "npy_float32* out0",
    )
    assert kernel.name.endswith("_contig")
    assert re.search(rf'extern "C" __global__ void {kernel.name}\(', kernel.source)


def test_strided_signature() -> None:
    kernel = CASES["int_to_float"].strided
    assert kernel.params == (
        "long long n",
        "long long d0",
        "long long d1",
        "const npy_int32* in0",
        "long long in0_s0",
        "long long in0_s1",
        "const npy_int64* in1",
        "long long in1_s0",
        "long long in1_s1",
        "npy_float64* out0",
        "long long out0_s0",
        "long long out0_s1",
    )
    assert len(CASES["rank_max"].strided.params) == 1 + MAX_NDIM + 3 * (1 + MAX_NDIM)
    assert CASES["scalar_0d"].strided.params == (
        "long long n",
        "const npy_float32* in0",
        "const npy_float32* in1",
        "npy_float32* out0",
    )


def test_unsupported_dtype_rank_and_op_raise() -> None:
    c = _tt("complex128", (None,))
    with pytest.raises(NotImplementedError, match="complex128"):
        elemwise_kernel(ps.add, [c, c], [c])
    t9 = _tt("float32", (None,) * (MAX_NDIM + 1))
    with pytest.raises(NotImplementedError, match=str(MAX_NDIM)):
        elemwise_kernel(ps.neg, [t9], [t9])

    class PyOnly(UnaryScalarOp):
        def impl(self, x: Any) -> Any:
            return x

    t = _tt("float32", (None,))
    with pytest.raises(NotImplementedError, match="no CUDA code"):
        elemwise_kernel(PyOnly(same_out), [t], [t])


# ---------------------------------------------------------------------- launch plans


def test_launch_config() -> None:
    assert launch_config(1) == ((1, 1, 1), (32, 1, 1))
    assert launch_config(100) == ((1, 1, 1), (128, 1, 1))
    assert launch_config(1000) == ((4, 1, 1), (256, 1, 1))
    assert launch_config(10**9, max_blocks=1024) == ((1024, 1, 1), (256, 1, 1))
    assert launch_config(0)[0] == (0, 1, 1)
    (g, _, _), (b, _, _) = launch_config(12345, max_threads=512)
    assert b == 512 and g * b >= 12345 and (g - 1) * b < 12345
    with pytest.raises(ValueError):
        launch_config(-1)
    with pytest.raises(ValueError):
        launch_config(10, max_threads=100)


def _replay(values: list[Any], kernel: Any, out_shape: tuple[int, ...]) -> list[np.ndarray]:
    """The operand views a plan's values describe, rebuilt on the host arrays given."""
    kinds = kernel.arg_kinds()
    views, k = [], 0
    contiguous = kernel.name.endswith(("_contig", "_contig32"))
    ndim = len(out_shape)
    while k < len(values):
        if kinds[k] != "ptr":
            k += 1
            continue
        arr = values[k]
        if contiguous:
            is_input = k + 1 < len(values) and kinds[k + 1] != "ptr"
            step = values[k + 1] if is_input else 1
            strides = tuple(0 if step == 0 else s for s in np.empty(out_shape, arr.dtype).strides)
            k += 2 if is_input else 1
        else:
            strides = tuple(s * arr.itemsize for s in values[k + 1 : k + 1 + ndim])
            k += 1 + ndim
        views.append(np.lib.stride_tricks.as_strided(arr, shape=out_shape, strides=strides))
    return views


def test_plan_picks_contiguous_path_with_scalar_broadcast() -> None:
    kernel = CASES["add_bcast_float32"]
    x = np.arange(12, dtype="float32").reshape(3, 4)
    one = np.full((1, 1), 5, dtype="float32")
    out = np.empty((3, 4), dtype="float32")
    source, grid, block, values = kernel.plan([x, one], [out])
    assert source is kernel.contiguous32
    assert values[0] == 12 and values[2] == 1 and values[4] == 0
    a, b, y = _replay(values, source, (3, 4))
    np.testing.assert_array_equal(a + b, x + 5)
    assert y.ctypes.data == out.ctypes.data
    assert grid == (1, 1, 1) and block == (32, 1, 1)


def test_contiguous32_signature_and_threshold() -> None:
    """32-bit indices up to INT32_ELEMENTS elements (no overflow in the last grid-stride
    step), 64-bit ones beyond."""
    kernel = CASES["add_bcast_float32"]
    assert kernel.contiguous32 is not None
    assert kernel.contiguous32.params == (
        "int n",
        "const npy_float32* in0",
        "int in0_s",
        "const npy_float32* in1",
        "int in1_s",
        "npy_float32* out0",
    )
    assert kernel.contiguous32.arg_kinds() == ("i32", "ptr", "i32", "ptr", "i32", "ptr")
    assert "for (int i = " in kernel.contiguous32.source
    assert INT32_ELEMENTS + MAX_BLOCKS * MAX_THREADS == 2**31 - 1

    class Big:
        """An array-like with a shape, strides and dtype, holding no memory."""

        def __init__(self, n: int) -> None:
            self.shape, self.strides, self.dtype = (n, 1), (4, 4), np.dtype("float32")

    kernel2 = elemwise_kernel(
        ps.add, [_tt("float32", (None, None))] * 2, [_tt("float32", (None, None))]
    )
    for n, expected in [(INT32_ELEMENTS, "contiguous32"), (INT32_ELEMENTS + 1, "contiguous")]:
        source = kernel2.plan([Big(n), Big(n)], [Big(n)])[0]
        assert source is getattr(kernel2, expected)


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x.T,  # transposed
        lambda x: x[::-1, ::2],  # negative and step-2 strides
        lambda x: x[:, :1],  # broadcast column
    ],
    ids=["transposed", "negative_strides", "broadcast_column"],
)
def test_plan_strided_path_reads_the_right_elements(make: Callable[[np.ndarray], Any]) -> None:
    kernel = CASES["add_bcast_float32"]
    base = np.arange(48, dtype="float32").reshape(6, 8)
    x = make(base)
    row = np.arange(x.shape[1] if x.shape[1] > 1 else 4, dtype="float32")[None, :]
    shape = np.broadcast_shapes(x.shape, row.shape)
    out = np.empty(shape, dtype="float32")
    source, _, _, values = kernel.plan([x, row], [out])
    assert source is kernel.strided
    assert values[: 1 + len(shape)] == [out.size, *shape]
    a, b, y = _replay(values, source, shape)
    np.testing.assert_array_equal(a + b, x + row)
    np.testing.assert_array_equal(y, out)


def test_plan_strided_output_in_place() -> None:
    kernel = CASES["inplace"]
    cond = np.ones((4, 3), dtype=bool)
    x = np.zeros((3, 4), dtype="float32").T  # the destroyed input, non-contiguous
    y = np.ones((4, 3), dtype="float32")
    source, _, _, values = kernel.plan([cond, x, y], [x])
    assert source is kernel.strided
    *_, out_view = _replay(values, source, (4, 3))
    assert out_view.strides == x.strides


def test_plan_checks_operands_and_skips_empty() -> None:
    kernel = CASES["add_bcast_float32"]
    x = np.zeros((0, 4), dtype="float32")
    assert kernel.plan([x, x[:1] if len(x) else np.zeros((1, 4), "float32")], [x]) is None
    good = np.zeros((2, 2), dtype="float32")
    with pytest.raises(TypeError, match="float32"):
        kernel.plan([good.astype("float64"), good], [good])
    with pytest.raises(TypeError, match="2 inputs"):
        kernel.plan([good], [good])
    with pytest.raises(ValueError, match="broadcast"):
        kernel.plan([np.zeros((2, 3), "float32"), good], [good])


def test_pack_args_types() -> None:
    source = CASES["add_bcast_float32"].contiguous
    packed = pack_args(source, [10, 1234, 1, 5678, 0, 91011])
    assert [type(v) for v in packed] == [np.int64, np.uintp, np.int64, np.uintp, np.int64, np.uintp]
    assert int(packed[1]) == 1234
    assert arg_types(source) == (np.int64, np.uintp, np.int64, np.uintp, np.int64, np.uintp)
    with pytest.raises(TypeError, match="6 arguments"):
        pack_args(source, [1, 2])
    # a count beyond 2**31 keeps its 64 bits; one beyond 2**63 cannot be passed
    assert int(pack_args(source, [2**40, 0, -1, 0, 0, 0])[0]) == 2**40
    with pytest.raises(OverflowError, match="i64"):
        pack_args(source, [2**63, 0, 0, 0, 0, 0])


def test_device_pointers_of_arrays_and_empty_arrays() -> None:
    class Fake:
        def __init__(self, gpudata: object) -> None:
            self.gpudata = gpudata

    assert device_pointer(Fake(4096)) == 4096
    assert device_pointer(Fake(np.uintp(8192))) == 8192
    assert device_pointer(Fake(None)) == 0  # pycuda gives arrays without elements no memory
    assert device_pointer(123) == 123


def test_parameter_space_is_bounded() -> None:
    assert CASES["add_bcast_float32"].contiguous.param_bytes() == 6 * 8
    assert CASES["rank_max"].strided.param_bytes() == 8 * (1 + MAX_NDIM + 3 * (1 + MAX_NDIM))
    for kernel in CASES.values():
        assert kernel.strided.param_bytes() <= MAX_PARAM_BYTES
    many = [get_scalar_type("float32")() for _ in range(60)]
    big = Composite(many, [functools.reduce(ps.add, many)])
    t8 = _tt("float32", (None,) * MAX_NDIM)
    with pytest.raises(NotImplementedError, match="bytes of parameters"):
        elemwise_kernel(big, [t8] * 60, [t8])
    assert elemwise_kernel(big, [_tt("float32", (None,))] * 60, [_tt("float32", (None,))])


def test_import_does_not_import_pycuda() -> None:
    code = "import sys, opweave_cuda.kernels; assert 'pycuda' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ptx_assembles_for_each_arch(
    ptx: dict[str, str],
    assemble: Callable[[dict[str, str], Path], dict[str, Path]],
    tmp_path: Path,
) -> None:
    """``ptxas`` accepts every elemwise kernel for sm_80 and sm_90 (registers, parameter
    space, shared memory)."""
    cubins = assemble(ptx, tmp_path)
    assert set(cubins) == {"sm_80", "sm_90"} and all(c.stat().st_size > 0 for c in cubins.values())
