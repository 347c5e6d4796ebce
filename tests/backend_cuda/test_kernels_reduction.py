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
from opweave_cuda.kernels.reduction import (
    REDUCTION_BLOCK,
    SPLIT_MAX_PARTS,
    SPLIT_MIN_CHUNK,
    identity_literal,
    split_plan,
)


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

#: Axis sets of a 3-d input, used in turn by the matrix below.
_AXIS_SETS = ((0,), (1,), (2,), (0, 2), (0, 1), (1, 2), (0, 1, 2))
_ARITH_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64", "uint8", "uint64")


def _matrix() -> dict[str, ReductionKernel]:
    """Every reduction Op over several axis sets and the dtypes it takes."""
    cases: dict[str, ReductionKernel] = {}
    k = 0
    for op in (ps.add, ps.mul, ps.maximum, ps.minimum):
        for dtype in _ARITH_DTYPES:
            axes = _AXIS_SETS[k % len(_AXIS_SETS)]
            k += 1
            out = dtype
            if op in (ps.add, ps.mul) and np.dtype(dtype).kind in "iu":
                out = "uint64" if dtype.startswith("u") else "int64"
            acc = "float32" if dtype == "float16" else out
            cases[f"{op}_{dtype}_{axes}"] = _case(op, axes, dtype, 3, out, acc)
    for op in (ps.and_, ps.or_, ps.xor):
        for dtype in ("bool", "int32", "uint16"):
            axes = _AXIS_SETS[k % len(_AXIS_SETS)]
            k += 1
            cases[f"{op}_{dtype}_{axes}"] = _case(op, axes, dtype, 3, dtype)
    return cases


MATRIX = _matrix()


@pytest.fixture(scope="module")
def ptx(
    compile_ptx: Callable[[Iterable[str], Path], dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """Every kernel (main, partial and finish) of :data:`CASES` and :data:`MATRIX`,
    compiled to PTX with one nvcc call per arch (a kernel shared by cases once)."""
    sources = {s.name: s.source for k in (*CASES.values(), *MATRIX.values()) for s in k.sources}
    return compile_ptx(list(sources.values()), tmp_path_factory.mktemp("red"))


@pytest.mark.parametrize("case", sorted(CASES) + sorted(MATRIX))
def test_kernel_compiles_with_warp_shuffles(
    case: str, ptx: dict[str, str], ptx_entry: Callable[[str, str], str]
) -> None:
    reduction = CASES.get(case) or MATRIX[case]
    for kernel in reduction.sources:
        for text in ptx.values():
            entry = ptx_entry(text, kernel.name)
            assert "shfl.sync.down" in entry
            assert "bar.sync" in entry  # the shared-memory tree
        assert kernel.block == REDUCTION_BLOCK
    if reduction.axes:  # a split is possible: its partial and finish kernels exist
        assert reduction.finish is not None and reduction.finish.sources[0] in reduction.sources
        assert reduction.partial in reduction.sources


def test_partial_kernel_writes_the_accumulator_dtype() -> None:
    half = CASES["sum_f16"]
    assert half.partial is not half.kernel
    assert "npy_float32* out" in half.partial.params and "__half* out" in half.kernel.params
    assert half.finish is not None and half.finish.in_dtype == "float32"
    assert half.finish.out_dtype == "float16" and half.finish.finish is None
    same = CASES["sum_f32_axis0"]
    assert same.partial is same.kernel and len(same.sources) == 2
    assert CASES["none_axes"].finish is None and CASES["none_axes"].sources == (
        CASES["none_axes"].kernel,
    )


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
        "long long n_part",
        "long long chunk",
        "long long o_part",
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
    """A one-element view of the element ``offset`` elements from ``arr``'s first one,
    which must be one of the elements ``arr`` itself spans (the kernel reads no other)."""
    lo = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides, strict=True) if s > 0)
    assert arr.size and lo <= offset * arr.itemsize <= hi, (offset, arr.shape, arr.strides)
    base = np.lib.stride_tricks.as_strided(arr, shape=(1,), strides=(arr.itemsize,))
    return np.lib.stride_tricks.as_strided(base, shape=(2,), strides=(offset * arr.itemsize,))[1:]


def _run_on_host(source: Any, values: list[Any], fold: Callable[[list[Any]], Any]) -> None:
    """Run a reduction kernel's index arithmetic on the host, from a plan's values (element
    strides into the host arrays given as pointers): which elements each task reads,
    folded with ``fold``, and where it writes. Mirrors the generated code line by line."""
    names = [p.split()[-1].lstrip("*") for p in source.params]
    assert len(values) == len(names)
    v = dict(zip(names, values, strict=True))
    kept = [int(n[1:]) for n in names if n[0] == "k" and n[1:].isdigit()]
    red = [int(n[1:]) for n in names if n[0] == "r" and n[1:].isdigit()]
    x, out = v["x"], v["out"]
    n_red, n_part, chunk, o_part = v["n_red"], v["n_part"], v["chunk"], v["o_part"]
    for task in range(v["n_out"] * n_part):
        o, part = divmod(task, n_part)
        ro, xo, oo = o, 0, part * o_part
        for d in reversed(kept):
            if d == kept[0]:
                xo, oo = xo + ro * v[f"xk{d}"], oo + ro * v[f"ok{d}"]
            else:
                ro, c = divmod(ro, v[f"k{d}"])
                xo, oo = xo + c * v[f"xk{d}"], oo + c * v[f"ok{d}"]
        j0 = part * chunk
        j1 = n_red if n_red - j0 < chunk else j0 + chunk
        items = []
        for j in range(j0, j1):
            q, xi = j, xo
            for d in reversed(red):
                if d == red[0]:
                    xi += q * v[f"xr{d}"]
                elif v[f"r{d}"] != 1:
                    q, c = divmod(q, v[f"r{d}"])
                    xi += c * v[f"xr{d}"]
            items.append(_cell(x, xi)[0])
        _cell(out, oo)[0] = fold(items)


def _replay(kernel: ReductionKernel, values: list[Any], op: Callable[[list[Any]], Any]) -> None:
    _run_on_host(kernel.kernel, values, op)


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


def test_split_plan_sizes() -> None:
    # few outputs and long reductions are split; the chunks cover the reduction exactly
    for n_out, n_red in ((1, 10**8), (1, 2 * SPLIT_MIN_CHUNK), (3, 10**6), (100, 10**7)):
        n_part, chunk = split_plan(n_out, n_red)
        assert 1 < n_part <= SPLIT_MAX_PARTS, (n_out, n_red)
        assert chunk % REDUCTION_BLOCK == 0 and chunk >= SPLIT_MIN_CHUNK
        assert (n_part - 1) * chunk < n_red <= n_part * chunk
    n_part, chunk = split_plan(1, 10**8)
    assert n_part >= 1000  # a full reduction of 1e8 elements occupies many blocks
    # enough outputs, or short reductions: one task per output
    assert split_plan(4096, 10**6) == (1, 10**6)
    assert split_plan(1, SPLIT_MIN_CHUNK) == (1, SPLIT_MIN_CHUNK)
    assert split_plan(1, 0) == (1, 0)
    with pytest.raises(ValueError):
        split_plan(0, 10)


def test_reduced_dimensions_are_collapsed_in_the_plan() -> None:
    kernel = _case(ps.add, (0, 1, 2), "float64", 3, "float64")
    x = np.arange(60, dtype="float64").reshape(3, 4, 5)
    planned = kernel.plan(x, np.zeros((), "float64"))
    assert planned is not None
    values = planned[3]
    # n_out, n_red, x, out, then (r, xr) per reduced axis: one walk of 60 elements
    assert values[:2] == [1, 60] and values[4:10] == [60, 1, 1, 0, 1, 0]
    _run_on_host(planned[0], values, lambda items: sum(items, start=0.0))
    # every other row: the two outer axes still merge (stride 20 = 2 * 10), the inner not
    values = kernel.plan(x[:, ::2, :], np.zeros((), "float64"))[3]  # type: ignore[index]
    assert values[4:10] == [6, 10, 5, 1, 1, 0]
    # a layout no stride can walk keeps its dimensions
    values = kernel.plan(x[::2, :, ::2], np.zeros((), "float64"))[3]  # type: ignore[index]
    assert values[4:10] == [2, 40, 4, 5, 3, 2]


@pytest.mark.parametrize(
    ("op", "fold", "ref", "dtype", "acc"),
    [
        (ps.add, lambda items: sum(items, start=0.0), np.sum, "float64", "float64"),
        (ps.maximum, lambda items: max(items, default=-np.inf), np.max, "float32", "float32"),
        (ps.add, lambda items: sum(items, start=0.0), np.sum, "float16", "float32"),
    ],
)
@pytest.mark.parametrize("axes", [(0, 1, 2), (1,), (0, 2)])
def test_split_reduction_replays_to_numpy(
    op: Any, fold: Any, ref: Any, dtype: str, acc: str, axes: tuple[int, ...]
) -> None:
    """The partial launch (chunks of each output's reduction into a scratch array of the
    accumulator's dtype) and the finish launch together give NumPy's result."""
    rng = np.random.default_rng(3)
    x = rng.integers(-9, 9, size=(4, 7, 6)).astype(dtype)[::-1, :, ::-1]  # negative strides
    kernel = _case(op, axes, dtype, 3, dtype, acc)
    assert kernel.finish is not None
    expected = ref(x.astype("float64"), axis=axes).astype(dtype)
    n_red = math.prod(x.shape[d] for d in axes)
    n_part, chunk = 3, -(-n_red // 3)
    kept_shape = expected.shape
    scratch = np.full((*kept_shape, n_part), np.nan, dtype=acc)
    source, grid, block, values = kernel.partial_plan(x, scratch, n_part, chunk)
    assert source is kernel.partial and block == (REDUCTION_BLOCK, 1, 1)
    assert grid[0] == math.prod(kept_shape) * n_part
    _run_on_host(source, values, fold)
    assert not np.isnan(scratch).any()
    out = np.full(kept_shape, np.nan, dtype=dtype)
    planned = kernel.finish.plan(scratch, out)
    assert planned is not None
    _run_on_host(planned[0], planned[3], fold)
    np.testing.assert_array_equal(out, expected)


def test_partial_plan_checks() -> None:
    kernel = CASES["sum_f16"]
    x = np.zeros((10, 3), "float16")
    with pytest.raises(TypeError, match="float32 scratch"):
        kernel.partial_plan(x, np.zeros((3, 2), "float16"), 2, 5)
    with pytest.raises(ValueError, match="chunks"):
        kernel.partial_plan(x, np.zeros((3, 2), "float32"), 2, 10)  # the 2nd chunk is empty
    assert kernel.split(x) == (1, 10)  # short: no split
    assert kernel.split(np.zeros((10**6, 1), "float16"))[0] > 1


def test_ptx_assembles_for_each_arch(
    ptx: dict[str, str],
    assemble: Callable[[dict[str, str], Path], dict[str, Path]],
    tmp_path: Path,
) -> None:
    """``ptxas`` accepts every reduction kernel for sm_80 and sm_90 (registers, parameter
    space, shared memory)."""
    cubins = assemble(ptx, tmp_path)
    assert set(cubins) == {"sm_80", "sm_90"} and all(c.stat().st_size > 0 for c in cubins.values())
