"""Launch selection: merged dimensions, the broadcast, column and short-reduction kernels.

Plan tests check which kernel a layout takes (pure arithmetic, no device); the ``cuda`` tests
run the chosen launches (a GPU, or the emulated device) against NumPy."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opweave.scalar as ps
from opweave.scalar.composite import Composite
from opweave.scalar.type import get_scalar_type
from opweave.tensor.type import TensorType
from opweave_cuda.kernels import elemwise_kernel, reduction_kernel
from opweave_cuda.kernels.layout import fits_int32, merge_dims, merge_reduction_dims
from opweave_cuda.kernels.reduction import COLUMN_ROWS, COLUMN_TILE, REDUCTION_BLOCK


def _tt(dtype: str, ndim: int) -> TensorType:
    return TensorType(dtype, (None,) * ndim)


def _add(dtype: str = "float64", ndim: int = 2) -> Any:
    return elemwise_kernel(ps.add, [_tt(dtype, ndim)] * 2, [_tt(dtype, ndim)])


def _sum(axes: tuple[int, ...], ndim: int = 2, dtype: str = "float64", acc: str | None = None):
    return reduction_kernel(ps.add, axes, _tt(dtype, ndim), _tt(dtype, ndim - len(axes)), acc)


class Fake:
    """An array-like with a shape, element strides and a dtype, holding no memory."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str) -> None:
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.strides = tuple(s * self.dtype.itemsize for s in strides)


# ---------------------------------------------------------------------- merging (pure)


def test_merge_dims_drops_ones_and_merges_common_walks() -> None:
    assert merge_dims((3, 4, 5), [(20, 5, 1), (20, 5, 1)]) == ((60,), [(1,), (1,)])
    # a bias row: the row operand keeps the two dimensions apart
    assert merge_dims((2, 3, 64), [(192, 64, 1), (0, 0, 1)]) == ((6, 64), [(64, 1), (0, 1)])
    # transposed output and input merge into one walk of stride 1
    assert merge_dims((4, 1, 3), [(1, 99, 4), (1, 7, 4)]) == ((4, 3), [(1, 4), (1, 4)])
    assert merge_dims((1, 1), [(5, 7)]) == ((), [()])
    assert merge_dims((5, 4), [(-4, -1)]) == ((20,), [(-1,)])
    with pytest.raises(ValueError, match="operand 0 has 1 strides"):
        merge_dims((2, 2), [(1,)])
    with pytest.raises(ValueError, match="positive"):
        merge_dims((0, 2), [(2, 1)])


def test_merge_reduction_dims_merges_kept_and_reduced_separately() -> None:
    # a C-contiguous (4, 5, 6) over axes (1, 2): one reduced dimension of 30
    lay = merge_reduction_dims((4, 5, 6), (30, 6, 1), (1,), (1, 2))
    assert (lay.kept, lay.x_kept, lay.out_kept) == ((4,), (30,), (1,))
    assert (lay.reduced, lay.x_reduced) == ((30,), (1,))
    # kept axes 0 and 2 of a C (4, 5, 6) do not merge (stride 30 != 1 * 6)
    lay = merge_reduction_dims((4, 5, 6), (30, 6, 1), (6, 1), (1,))
    assert lay.kept == (4, 6) and lay.reduced == (5,)
    # kept (2, 3) of a (2, 3, 7) with a C output merge when the input's strides agree
    lay = merge_reduction_dims((2, 3, 7), (3, 1, 6), (3, 1), (2,))
    assert lay.kept == (6,) and lay.x_kept == (1,) and lay.reduced == (7,)


def test_fits_int32() -> None:
    assert fits_int32(100, (10, 10), [(10, 1)])
    assert not fits_int32(100, (10, 10), [(2**28, 1)])
    assert not fits_int32(2**31, (2**31,), [(1,)])


# ---------------------------------------------------------------------- elemwise plans


def test_bias_row_takes_the_broadcast_kernel_with_merged_rank_2() -> None:
    kernel = _add("float32")
    x, b = Fake((1000, 64), (64, 1), "float32"), Fake((1, 64), (0, 1), "float32")
    chosen = kernel.select([x, b], [Fake((1000, 64), (64, 1), "float32")])
    assert chosen.path == "broadcast" and chosen.shape == (1000, 64)
    assert chosen.index_bits == 32 and chosen.kernel.name.endswith("_bcast_fr_32")
    assert chosen.values[:2] == [64000, 64]
    assert "in1[i % inner]" in chosen.kernel.source and "in0[i]" in chosen.kernel.source
    # a 3-d bias row (batch, rows, features) merges its leading dimensions
    k3 = _add("float32", 3)
    chosen = k3.select(
        [Fake((8, 10, 64), (640, 64, 1), "float32"), Fake((1, 1, 64), (0, 0, 1), "float32")],
        [Fake((8, 10, 64), (640, 64, 1), "float32")],
    )
    assert chosen.path == "broadcast" and chosen.shape == (80, 64)


def test_column_bias_takes_the_broadcast_kernel() -> None:
    chosen = _add().select(
        [Fake((1, 30), (0, 1), "float64"), Fake((20, 1), (1, 0), "float64")],
        [Fake((20, 30), (30, 1), "float64")],
    )
    assert chosen.path == "broadcast" and chosen.kernel.name.endswith("_bcast_rc_32")
    assert "in1[i / inner]" in chosen.kernel.source


def test_transposed_contiguous_operands_collapse_to_the_flat_kernel() -> None:
    kernel = _add()
    t = Fake((30, 20), (1, 30), "float64")  # a C (20, 30) array, transposed
    chosen = kernel.select([t, t], [Fake((30, 20), (1, 30), "float64")])
    assert chosen.path == "contiguous" and chosen.shape == (600,)
    assert chosen.kernel is kernel.contiguous32 and chosen.values[:3] == [600, t, 1]
    # into a C-contiguous output the walks differ: the strided kernel of rank 2, 32-bit
    chosen = kernel.select([t, t], [Fake((30, 20), (20, 1), "float64")])
    assert chosen.path == "strided" and chosen.shape == (30, 20) and chosen.index_bits == 32
    assert chosen.kernel.params[0] == "int n" and chosen.kernel is not kernel.strided


def test_slices_and_negative_strides_merge() -> None:
    kernel = _add(ndim=3)
    out = Fake((4, 5, 6), (30, 6, 1), "float64")
    rows = Fake((4, 5, 6), (60, 6, 1), "float64")  # every other block: two walks
    chosen = kernel.select([rows, out], [out])
    assert chosen.path == "strided" and chosen.shape == (4, 30)
    flipped = Fake((4, 5, 6), (-30, -6, -1), "float64")  # x[::-1, ::-1, ::-1]
    chosen = kernel.select([flipped, out], [out])
    assert chosen.path == "contiguous" and chosen.values[:5] == [120, flipped, -1, out, 1]


def test_rank_8_merges_and_zero_d_is_flat() -> None:
    kernel = _add("float32", 8)
    shape = (2, 1, 3, 2, 1, 2, 3, 2)
    c = np.empty(shape, "float32")
    t = np.empty(shape[::-1], "float32").transpose(range(7, -1, -1))
    chosen = kernel.select([c, t], [c])
    assert chosen.path == "strided" and chosen.shape == (2, 3, 2, 2, 3, 2)
    chosen = kernel.select([c, c], [c])
    assert chosen.path == "contiguous" and chosen.shape == (144,)
    zero = _add("float32", 0)
    s = np.empty((), "float32")
    chosen = zero.select([s, s], [s])
    assert chosen.path == "contiguous" and chosen.shape == () and chosen.values[2] == 0


def test_64_bit_strided_kernel_beyond_int32() -> None:
    kernel = _add("float32")
    big = Fake((2**16, 2**16), (1, 2**16), "float32")  # 2**32 elements, transposed
    chosen = kernel.select([big, big], [Fake((2**16, 2**16), (2**16, 1), "float32")])
    assert chosen.path == "strided" and chosen.index_bits == 64
    assert chosen.kernel.params[0] == "long long n"


def test_empty_launch_and_bad_operands() -> None:
    kernel = _add()
    e = np.empty((0, 3))
    assert kernel.select([e, e], [e]) is None
    good = np.zeros((2, 3))
    with pytest.raises(ValueError, match="broadcast"):
        kernel.select([np.zeros((3, 2)), good], [good])
    with pytest.raises(TypeError, match="float64"):
        kernel.select([good.astype("float32"), good], [good])
    with pytest.raises(ValueError, match="pattern"):
        kernel.variants.broadcast("fx", 32)


# ---------------------------------------------------------------------- reduction plans


@pytest.mark.parametrize(
    ("order", "axes", "path", "width"),
    [
        ("C", (0,), "columns", 0),
        ("C", (1,), "short", 4),
        ("F", (0,), "short", 4),
        ("F", (1,), "columns", 0),
        ("C", (0, 1), "general", 0),
        ("F", (0, 1), "general", 0),
    ],
)
def test_reduction_paths_of_c_and_f_layouts(
    order: str, axes: tuple[int, ...], path: str, width: int
) -> None:
    x = np.empty((37, 70), order=order)
    kernel = _sum(axes)
    out = np.empty(tuple(n for d, n in enumerate(x.shape) if d not in axes))
    choice = kernel.select(x, out)
    assert choice.path == path and choice.width == width
    if axes == (0, 1):
        assert choice.layout.reduced == (2590,)


def test_many_short_reductions_share_blocks() -> None:
    kernel = _sum((1,))
    x, out = Fake((100000, 8), (8, 1), "float64"), Fake((100000,), (1,), "float64")
    choice = kernel.select(x, out)
    assert choice.path == "short" and choice.width == 1 and choice.n_part == 1
    source, grid, block, _ = kernel.choice_plan(choice, x, out)
    assert block == (REDUCTION_BLOCK, 1, 1) and grid == (-(-100000 // REDUCTION_BLOCK), 1, 1)
    assert "__shfl_down_sync(0xffffffffu, acc, d, width)" in source.source
    # a thread per 8 elements below 64, per 16 from there
    widths = {
        n: kernel.select(Fake((50, n), (n, 1), "float64"), Fake((50,), (1,), "float64")).width
        for n in (3, 15, 16, 32, 63, 64, 127, 128, 255)
    }
    assert widths == {3: 1, 15: 1, 16: 2, 32: 4, 63: 4, 64: 4, 127: 4, 128: 8, 255: 8}
    # long reductions keep the general kernel
    assert kernel.select(Fake((5, 300), (300, 1), "float64"), Fake((5,), (1,), "float64")).path == (
        "general"
    )


def test_column_reduction_is_coalesced_and_splits_long_columns() -> None:
    kernel = _sum((0,), dtype="float32")
    x, out = Fake((10**6, 64), (64, 1), "float32"), Fake((64,), (1,), "float32")
    choice = kernel.select(x, out)
    assert choice.path == "columns" and choice.n_part > 1
    assert choice.chunk % COLUMN_ROWS == 0 and (choice.n_part - 1) * choice.chunk < 10**6
    scratch = Fake((64, choice.n_part), (choice.n_part, 1), "float32")
    source, grid, block, values = kernel.choice_plan(choice, x, scratch)
    assert block == (COLUMN_TILE, COLUMN_ROWS, 1) and source.block == COLUMN_TILE
    assert grid[0] == 2 * choice.n_part
    assert values[:4] == [1, 64, 1, choice.n_part]  # one outer row, 64 unit-stride columns
    # a short column sum is one launch
    small = kernel.select(Fake((100, 64), (64, 1), "float32"), out)
    assert small.path == "columns" and small.n_part == 1


def test_3d_reduction_over_inner_axes_merges_them() -> None:
    kernel = _sum((1, 2), ndim=3)
    choice = kernel.select(np.empty((4, 16, 32)), np.empty(4))
    assert choice.path == "general" and choice.layout.reduced == (512,)
    assert choice.layout.kept == (4,)
    # the general kernel's arguments carry the merged reduced dimension, then a pad
    planned = kernel.plan(np.empty((4, 16, 32)), np.empty(4))
    assert planned[3][-7:-3] == [512, 1, 1, 0]


def test_empty_reductions() -> None:
    kernel = _sum((0,))
    assert kernel.select(np.empty((3, 0)), np.empty(0)) is None
    choice = kernel.select(Fake((0, 40), (40, 1), "float64"), np.empty(40))
    assert choice.path == "columns" and choice.layout.n_red == 0
    choice = kernel.select(np.empty((0, 4)), np.empty(4))
    assert choice.path == "short" and choice.width == 1


def test_variant_kernels_compile_to_ptx(
    compile_ptx: Callable[[Iterable[str], Path], dict[str, str]], tmp_path: Path
) -> None:
    sources = []
    add = _add("float16", 3)
    sources += [add.variants.strided(r, b) for r in (1, 2) for b in (32, 64)]
    sources += [add.variants.broadcast(p, b) for p in ("fr", "cs") for b in (32, 64)]
    for dtype, acc in (("float16", "float32"), ("int8", "int64"), ("bool", "bool")):
        red = reduction_kernel(
            ps.add if dtype != "bool" else ps.and_,
            (1,),
            _tt(dtype, 3),
            _tt(acc if dtype != "float16" else dtype, 2),
            acc,
        )
        for nk, nr in ((0, 1), (2, 2)):
            sources.append(red.variants.short(nk, nr, red.out_dtype))
            sources.append(red.variants.columns(nk, nr, red.acc_dtype))
    names = [s.name for s in sources]
    assert len(set(names)) == len(names)
    ptx = compile_ptx([s.source for s in sources], tmp_path)
    for text in ptx.values():
        for s in sources:
            assert f".entry {s.name}(" in text
        assert "shfl.sync.down" in text


# ---------------------------------------------------------------------- on the device


@pytest.fixture(scope="module")
def gpuarray() -> Any:
    from opweave_cuda.availability import import_gpuarray

    return import_gpuarray()


def _device_like(gpuarray: Any, host: np.ndarray) -> Any:
    """A GPUArray with ``host``'s values and strides (negative ones included)."""
    lo = sum((n - 1) * s for n, s in zip(host.shape, host.strides, strict=True) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(host.shape, host.strides, strict=True) if s > 0)
    start = host.__array_interface__["data"][0] + lo
    raw = (ctypes.c_char * (hi - lo + host.itemsize)).from_address(start)
    block = gpuarray.to_gpu(np.frombuffer(raw, dtype=np.uint8).copy())
    return gpuarray.GPUArray(
        host.shape, host.dtype, gpudata=int(block.gpudata) - lo, strides=host.strides, base=block
    )


def _run_elemwise(gpuarray: Any, kernel: Any, a: np.ndarray, b: np.ndarray, path: str) -> Any:
    shape = np.broadcast_shapes(a.shape, b.shape)
    dtype = np.result_type(a, b)
    out = gpuarray.empty(shape, dtype)
    inputs = [_device_like(gpuarray, a), _device_like(gpuarray, b)]
    chosen = kernel.select(inputs, [out])
    assert chosen.path == path
    kernel(inputs, [out])
    return out.get()


_RNG = np.random.default_rng(11)
_BASE = _RNG.normal(size=(24, 30))
_ELEMWISE = {
    "transposed": (_BASE.T, _RNG.normal(size=(30, 24)), "strided"),
    "sliced_rows": (_BASE[4:20], _RNG.normal(size=(16, 30)), "contiguous"),
    "sliced_columns": (_BASE[:, 3:27], _RNG.normal(size=(24, 24)), "strided"),
    "negative_strides": (_BASE[::-1, ::-1], _RNG.normal(size=(24, 30)), "contiguous"),
    "negative_step_2": (_BASE[::-2, ::-1], _RNG.normal(size=(12, 30)), "strided"),
    "bias_row": (_BASE, _RNG.normal(size=(1, 30)), "broadcast"),
    "column_bias": (_BASE, _RNG.normal(size=(24, 1)), "broadcast"),
    "row_and_column": (_RNG.normal(size=(1, 30)), _RNG.normal(size=(24, 1)), "broadcast"),
}


@pytest.mark.cuda
@pytest.mark.parametrize("case", sorted(_ELEMWISE))
def test_elemwise_layouts_match_numpy(gpuarray: Any, case: str) -> None:
    a, b, path = _ELEMWISE[case]
    x, y = get_scalar_type("float64")(), get_scalar_type("float64")()
    kernel = elemwise_kernel(
        Composite([x, y], [x * y + x]), [_tt("float64", 2)] * 2, [_tt("float64", 2)]
    )
    got = _run_elemwise(gpuarray, kernel, a, b, path)
    np.testing.assert_array_equal(got, a * b + a)


@pytest.mark.cuda
def test_elemwise_rank_8_zero_d_and_float16_bias(gpuarray: Any) -> None:
    shape = (2, 1, 3, 2, 1, 2, 3, 2)
    c = _RNG.normal(size=shape).astype("float32")
    t = _RNG.normal(size=shape[::-1]).astype("float32").transpose(range(7, -1, -1))
    got = _run_elemwise(gpuarray, _add("float32", 8), c, t, "strided")
    np.testing.assert_array_equal(got, c + t)
    s = np.array(1.5), np.array(2.25)
    np.testing.assert_array_equal(
        _run_elemwise(gpuarray, _add("float64", 0), *s, "contiguous"), 3.75
    )
    empty = gpuarray.empty((0, 3), "float64")
    _add()([empty, empty], [empty])  # nothing to launch
    h = _RNG.normal(size=(20, 40)).astype("float16")
    row = _RNG.normal(size=(1, 40)).astype("float16")
    got = _run_elemwise(gpuarray, _add("float16"), h, row, "broadcast")
    np.testing.assert_array_equal(got, h + row)


_REDUCTIONS = [
    ("C", (0,)),
    ("C", (1,)),
    ("C", (0, 1)),
    ("F", (0,)),
    ("F", (1,)),
    ("F", (0, 1)),
]


@pytest.mark.cuda
@pytest.mark.parametrize(("order", "axes"), _REDUCTIONS)
def test_sum_and_max_of_c_and_f_layouts(gpuarray: Any, order: str, axes: tuple[int, ...]) -> None:
    x = np.asarray(_RNG.integers(-50, 50, size=(37, 70)), dtype="float64", order=order)
    for op, ref in ((ps.add, np.sum), (ps.maximum, np.max)):
        kernel = reduction_kernel(op, axes, _tt("float64", 2), _tt("float64", 2 - len(axes)))
        expected = ref(x, axis=axes)
        out = gpuarray.empty(expected.shape, "float64")
        kernel(_device_like(gpuarray, x), out)
        np.testing.assert_array_equal(out.get(), expected)


@pytest.mark.cuda
def test_many_short_reductions_match_numpy(gpuarray: Any) -> None:
    cases = ((1, (3000, 8)), (1, (500, 3)), (2, (400, 20)), (8, (200, 200)), (1, (300, 1)))
    for width, (n, m) in cases:
        x = _RNG.integers(0, 9, size=(n, m)).astype("int32")
        kernel = reduction_kernel(ps.add, (1,), _tt("int32", 2), _tt("int64", 1), "int64")
        gx, out = _device_like(gpuarray, x), gpuarray.empty((n,), "int64")
        choice = kernel.select(gx, out)
        if m > 1:
            assert choice.path == "short" and choice.width == width
        else:  # nothing to reduce: consecutive outputs read consecutive inputs
            assert choice.path == "columns" and choice.layout.reduced == ()
        kernel(gx, out)
        np.testing.assert_array_equal(out.get(), x.sum(axis=1))
    flags = _RNG.integers(0, 2, size=(400, 5)).astype(bool)
    flags[::7] = True
    kernel = reduction_kernel(ps.and_, (1,), _tt("bool", 2), _tt("bool", 1))
    out = gpuarray.empty((400,), "bool")
    kernel(gpuarray.to_gpu(flags), out)
    np.testing.assert_array_equal(out.get(), flags.all(axis=1))


@pytest.mark.cuda
def test_split_column_reduction_matches_numpy(gpuarray: Any) -> None:
    """A long column sum runs split: the column kernel's parts, then the finish."""
    x = _RNG.integers(-9, 9, size=(4096, 40)).astype("float16")
    kernel = reduction_kernel(ps.add, (0,), _tt("float16", 2), _tt("float16", 1), "float32")
    gx, out = gpuarray.to_gpu(x), gpuarray.empty((40,), "float16")
    choice = kernel.select(gx, out)
    assert choice.path == "columns" and choice.n_part > 1
    kernel(gx, out)
    np.testing.assert_array_equal(out.get(), x.astype("float32").sum(axis=0).astype("float16"))


@pytest.mark.cuda
def test_3d_reductions_with_merged_and_negative_strides(gpuarray: Any) -> None:
    x = _RNG.integers(-9, 9, size=(6, 8, 34)).astype("float64")
    for view, axes in (
        (x, (1, 2)),
        (x, (0, 1)),
        (x[::-1, :, ::-1], (0,)),
        (x.transpose(2, 0, 1), (1, 2)),
        (x[:, ::2, :], (0, 2)),
    ):
        kernel = _sum(axes, ndim=3)
        expected = view.sum(axis=axes)
        out = gpuarray.empty(expected.shape, "float64")
        kernel(_device_like(gpuarray, view), out)
        np.testing.assert_array_equal(out.get(), expected, err_msg=f"{view.strides} {axes}")


@pytest.mark.cuda
def test_empty_reductions_write_the_identity(gpuarray: Any) -> None:
    for shape in ((0, 40), (0, 4)):
        kernel = _sum((0,))
        out = gpuarray.to_gpu(np.full(shape[1], 7.0))
        kernel(gpuarray.empty(shape, "float64"), out)
        np.testing.assert_array_equal(out.get(), np.zeros(shape[1]))
