"""Reduction kernels (CAReduce) over any set of axes, any strides.

The *general* kernel: one block computes one *task* at a time (a grid-stride loop over the
tasks): its threads accumulate strided slices of the task's reduced elements, then combine
their partial results in a shared-memory tree down to one warp, which finishes with
``__shfl_down_sync``. An empty reduction gives the scalar Op's identity. The accumulator has
``acc_dtype`` (``float16`` accumulates in ``float32``).

A task is one output element, or, when there are too few outputs to occupy the GPU (a
full reduction has one), one of ``n_part`` chunks of an output's reduced elements: the
*partial* kernel then writes ``n_part`` accumulator values per output into a scratch
array, and the *finish* kernel (the same generator, reducing that array's last axis)
combines them (:func:`split_plan`). Kept and reduced dimensions are merged on the host
(:func:`~opweave_cuda.kernels.layout.merge_reduction_dims`); the general kernel takes the
merged ones padded with length-1 dimensions, which it skips.

Two more kernels, generated per number of merged dimensions when first needed
(:class:`ReductionVariants`): the *column* kernel, for a kept dimension of unit input
stride (a warp takes 32 consecutive outputs, so that its reads are coalesced, and 8 warps
split the reduced elements), split like the general one when its columns are long and
few; and the *short* kernel, for reductions shorter than a block (a segment of at most a
warp per output, many outputs per block). :meth:`ReductionKernel.select` chooses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opweave_cuda.kernels.elemwise import LaunchPlan
from opweave_cuda.kernels.launch import MAX_BLOCKS, MAX_NDIM, element_strides
from opweave_cuda.kernels.layout import ReductionLayout, merge_reduction_dims
from opweave_cuda.kernels.runtime import BoundLaunch, LaunchMemo, bind, launch
from opweave_cuda.kernels.scalar import scalar_code, with_conversions
from opweave_cuda.kernels.source import (
    CUDA_DTYPES,
    CUDA_TYPE,
    KernelSource,
    convert,
    kernel_name,
    load,
    store,
    translation_unit,
)

__all__ = [
    "COLUMN_MIN_CHUNK",
    "COLUMN_ROWS",
    "COLUMN_TILE",
    "REDUCTION_BLOCK",
    "SPLIT_MAX_PARTS",
    "SPLIT_MIN_CHUNK",
    "SPLIT_TARGET_TASKS",
    "ReductionChoice",
    "ReductionKernel",
    "ReductionVariants",
    "identity_literal",
    "reduction_kernel",
    "split_plan",
]

#: Threads per block of a reduction (a power of two, at least 64).
REDUCTION_BLOCK = 256
#: Tasks a split reduction aims at: several blocks per multiprocessor of a large GPU.
SPLIT_TARGET_TASKS = 2048
#: Fewest reduced elements one task of a split reduction takes.
SPLIT_MIN_CHUNK = 16 * REDUCTION_BLOCK
#: Most chunks an output's reduction is split into (the finish kernel's reduction length).
SPLIT_MAX_PARTS = 1024
#: Columns (consecutive outputs) per block of the column kernel: one warp along ``x``.
COLUMN_TILE = 32
#: Rows per block of the column kernel (threads along ``y``; ``COLUMN_TILE * COLUMN_ROWS`` is
#: :data:`REDUCTION_BLOCK`).
COLUMN_ROWS = REDUCTION_BLOCK // COLUMN_TILE
#: Fewest reduced elements one task of a split column reduction takes.
COLUMN_MIN_CHUNK = 32 * COLUMN_ROWS


def _f32(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def identity_literal(value: Any, dtype: str) -> str:
    """The C literal of a reduction's identity ``value`` in the compute type of ``dtype``.

    Infinite identities of integer dtypes are the dtype's extreme values; ``-1`` (the
    identity of ``and``) is all bits set, ``True`` for ``bool``.
    """
    dtype = _f32(dtype)
    ctype = CUDA_TYPE[dtype]
    if dtype == "bool":
        return f"(({ctype}){1 if value else 0})"
    value = float(value) if isinstance(value, float | np.floating) else value
    if dtype in ("float32", "float64"):
        if isinstance(value, float) and math.isinf(value):
            if dtype == "float32":
                return f"__int_as_float({'0xff800000' if value < 0 else '0x7f800000'})"
            bits = "0xfff0000000000000ULL" if value < 0 else "0x7ff0000000000000ULL"
            return f"__longlong_as_double({bits})"
        return f"(({ctype}){float(value)!r})"
    info = np.iinfo(dtype)
    if isinstance(value, float) and math.isinf(value):
        value = info.min if value < 0 else info.max
    value = int(value)
    if value < 0 and dtype.startswith("uint"):
        value = int(info.max) + 1 + value
    if value == -(2**63):
        return f"(({ctype})(-9223372036854775807LL - 1))"
    return f"(({ctype}){value}{'ULL' if value > 2**63 - 1 else 'LL'})"


def _shuffle(expr: str, dtype: str) -> str:
    ctype = CUDA_TYPE[dtype]
    if np.dtype(dtype).itemsize < 4:
        return f"(({ctype})__shfl_down_sync(0xffffffffu, (int)({expr}), d))"
    return f"__shfl_down_sync(0xffffffffu, {expr}, d)"


def short_width(n_red: int) -> int:
    """Threads per output of the short-reduction kernel for reductions of ``n_red`` elements
    (fewer than :data:`REDUCTION_BLOCK`): a power of two, about one thread per 8 elements
    below 64 elements and per 16 from there (1 up to 15 elements, 2 from 16, 4 from 32, 8
    from 128).

    Each thread then adds several neighbouring elements before the width-limited shuffles,
    which costs less than one element per thread. On an H200, summing 1e8 float32 values
    in rows of ``k``, this choice was the fastest width (or within 10 % of it) for every
    ``k`` from 2 to 128; for ``k = 8`` it ran in 132 µs, where 8 threads per row took 450.
    """
    per_thread = 8 if n_red < 64 else 16
    width = 1
    while width < 32 and 2 * width * per_thread <= n_red:
        width *= 2
    return width


def split_plan(n_out: int, n_red: int) -> tuple[int, int]:
    """How many chunks each output's reduction is split into, and their length.

    Parameters
    ----------
    n_out
        Number of output elements.
    n_red
        Number of elements reduced into each.

    Returns
    -------
    n_part, chunk
        ``(1, n_red)`` when the outputs alone give enough tasks (or the reductions are
        short); else ``n_part > 1`` chunks of ``chunk`` elements (a multiple of
        :data:`REDUCTION_BLOCK`, at least :data:`SPLIT_MIN_CHUNK`; the last chunk may be
        shorter) with ``n_part * chunk >= n_red > (n_part - 1) * chunk``.
    """
    if n_out < 1 or n_red < 0:
        raise ValueError(f"split_plan: invalid sizes n_out={n_out}, n_red={n_red}")
    parts = min(-(-SPLIT_TARGET_TASKS // n_out), n_red // SPLIT_MIN_CHUNK, SPLIT_MAX_PARTS)
    if parts <= 1:
        return 1, n_red
    chunk = -(-n_red // parts)
    chunk = -(-chunk // REDUCTION_BLOCK) * REDUCTION_BLOCK
    return -(-n_red // chunk), chunk


class ReductionKernel:
    """The kernels of one CAReduce node and how to launch them.

    Parameters
    ----------
    kernel
        The kernel writing the output (one task per output element).
    axes
        The reduced axes (sorted, non-negative).
    ndim
        The input's rank.
    in_dtype, out_dtype, acc_dtype
        The input's, output's and accumulator's dtypes.
    partial
        The same kernel writing accumulator values (``kernel`` itself when the output's
        dtype is the accumulator's), for split reductions.
    finish
        The reduction of the partial values' last axis into the output; ``None``: this
        kernel is never split.
    variants
        The generator of the column and short-reduction kernels (``None``: every launch
        runs ``kernel``, split when it is long).

    Attributes
    ----------
    sources
        Every kernel source a launch may use.
    kept
        The axes that are not reduced.
    """

    def __init__(
        self,
        kernel: KernelSource,
        axes: Sequence[int],
        ndim: int,
        in_dtype: str,
        out_dtype: str,
        acc_dtype: str | None = None,
        partial: KernelSource | None = None,
        finish: ReductionKernel | None = None,
        variants: ReductionVariants | None = None,
    ) -> None:
        self.kernel = kernel
        self.variants = variants
        self.partial = kernel if partial is None else partial
        self.finish = finish
        self.axes = tuple(axes)
        self.ndim = ndim
        self.kept = tuple(d for d in range(ndim) if d not in self.axes)
        self.in_dtype = in_dtype
        self.out_dtype = out_dtype
        self.acc_dtype = _f32(acc_dtype or out_dtype)
        sources = [kernel]
        if finish is not None:
            if self.partial is not kernel:
                sources.append(self.partial)
            sources += finish.sources
        self.sources: tuple[KernelSource, ...] = tuple(sources)
        self._memo = LaunchMemo()

    def _check_input(self, x: Any) -> tuple[int, ...]:
        if np.dtype(x.dtype).name != self.in_dtype or len(x.shape) != self.ndim:
            raise TypeError(
                f"reduction kernel: expected a {self.ndim}-d {self.in_dtype} input, "
                f"got a {len(x.shape)}-d {np.dtype(x.dtype).name} one"
            )
        return tuple(int(d) for d in x.shape)

    def _layout(self, x: Any, out: Any) -> tuple[ReductionLayout, int]:
        """The merged layout of reducing ``x`` into ``out`` (or a scratch array whose last
        axis holds the parts), and the output's stride along that last axis (0 if none)."""
        shape = tuple(int(d) for d in x.shape)
        xs = element_strides(x.strides, np.dtype(x.dtype).itemsize)
        os_ = element_strides(out.strides, np.dtype(out.dtype).itemsize)
        nk = len(self.kept)
        o_part = os_[nk] if len(os_) > nk else 0
        return merge_reduction_dims(shape, xs, os_[:nk], self.axes), o_part

    def _values(self, x: Any, out: Any, n_part: int, chunk: int) -> list[Any]:
        layout, o_part = self._layout(x, out)
        nk, nr = len(self.kept), len(self.axes)
        values: list[Any] = [layout.n_out, layout.n_red, x]
        kept = list(zip(layout.kept, layout.x_kept, layout.out_kept, strict=True))
        kept += [(1, 0, 0)] * (nk - len(kept))
        for n, s, _ in kept:
            values += [n, s]
        values.append(out)
        values += [o for _, _, o in kept]
        reduced = list(zip(layout.reduced, layout.x_reduced, strict=True))
        for n, s in reduced + [(1, 0)] * (nr - len(reduced)):
            values += [n, s]
        values += [n_part, chunk, o_part if n_part > 1 else 0]
        return values

    def split(self, x: Any) -> tuple[int, int]:
        """:func:`split_plan` for the input ``x`` (``(1, n_red)`` when never split)."""
        shape = self._check_input(x)
        n_out = math.prod(shape[d] for d in self.kept)
        n_red = math.prod(shape[d] for d in self.axes)
        if self.finish is None or n_out == 0:
            return 1, n_red
        return split_plan(n_out, n_red)

    def plan(self, x: Any, out: Any) -> LaunchPlan | None:
        """The one launch reducing ``x`` into ``out`` (array-likes with ``shape``, byte
        ``strides`` and ``dtype``), or ``None`` when ``out`` has no element."""
        shape = self._check_input(x)
        kept_shape = tuple(shape[d] for d in self.kept)
        if np.dtype(out.dtype).name != self.out_dtype or tuple(out.shape) != kept_shape:
            raise TypeError(
                f"reduction kernel: expected a {self.out_dtype} output of shape {kept_shape}, "
                f"got a {np.dtype(out.dtype).name} one of shape {tuple(out.shape)}"
            )
        n_out = math.prod(kept_shape)
        if n_out == 0:
            return None
        n_red = math.prod(shape[d] for d in self.axes)
        grid = (min(n_out, MAX_BLOCKS), 1, 1)
        return self.kernel, grid, (REDUCTION_BLOCK, 1, 1), self._values(x, out, 1, n_red)

    def partial_plan(self, x: Any, scratch: Any, n_part: int, chunk: int) -> LaunchPlan:
        """The first launch of a split reduction: ``n_part`` accumulator values per output,
        written along the last axis of ``scratch`` (shape ``kept + (n_part,)``, the
        accumulator's dtype, any strides)."""
        shape = self._check_input(x)
        kept_shape = tuple(shape[d] for d in self.kept)
        n_red = math.prod(shape[d] for d in self.axes)
        if n_part < 2 or chunk < 1 or (n_part - 1) * chunk >= n_red or n_part * chunk < n_red:
            raise ValueError(f"reduction kernel: {n_part} chunks of {chunk} for {n_red} elements")
        wanted = (*kept_shape, n_part)
        if np.dtype(scratch.dtype).name != self.acc_dtype or tuple(scratch.shape) != wanted:
            raise TypeError(
                f"reduction kernel: expected a {self.acc_dtype} scratch array of shape "
                f"{wanted}, got a {np.dtype(scratch.dtype).name} one of shape "
                f"{tuple(scratch.shape)}"
            )
        tasks = math.prod(kept_shape) * n_part
        grid = (min(tasks, MAX_BLOCKS), 1, 1)
        values = self._values(x, scratch, n_part, chunk)
        return self.partial, grid, (REDUCTION_BLOCK, 1, 1), values

    def select(self, x: Any, out: Any) -> ReductionChoice | None:
        """The launches :meth:`__call__` runs (``None``: ``out`` has no element).

        Dimensions are merged first (:func:`~opweave_cuda.kernels.layout.merge_reduction_dims`).
        Then, in order: a kept dimension of unit input stride and at least
        :data:`COLUMN_TILE` elements takes the *column* kernel (threads of a warp read
        consecutive elements of it and loop over the reduced ones), split into parts when it
        has few tasks and long reductions; reductions shorter than :data:`REDUCTION_BLOCK`
        take the *short* kernel (:func:`short_width` threads per output, many outputs per
        block); the rest the *general* kernel (one block per output, split by
        :func:`split_plan`).
        """
        shape = self._check_input(x)
        kept_shape = tuple(shape[d] for d in self.kept)
        if np.dtype(out.dtype).name != self.out_dtype or tuple(out.shape) != kept_shape:
            self.plan(x, out)  # raises the operand error
        if math.prod(kept_shape) == 0:
            return None
        layout, _ = self._layout(x, out)
        if self.variants is None or not self.axes:
            n_part, chunk = self.split(x)
            return ReductionChoice("general", layout, n_part, chunk)
        inner = [
            i
            for i, (n, s) in enumerate(zip(layout.kept, layout.x_kept, strict=True))
            if s == 1 and n >= COLUMN_TILE
        ]
        if inner:
            tasks = (layout.n_out // layout.kept[inner[0]]) * -(
                -layout.kept[inner[0]] // COLUMN_TILE
            )
            n_part, chunk = 1, layout.n_red
            if self.finish is not None:
                n_part, chunk = _split(tasks, layout.n_red, COLUMN_MIN_CHUNK, COLUMN_ROWS)
            return ReductionChoice("columns", layout, n_part, chunk, inner=inner[0])
        if layout.n_red < REDUCTION_BLOCK:
            width = short_width(layout.n_red)
            return ReductionChoice("short", layout, 1, layout.n_red, width=width)
        n_part, chunk = self.split(x)
        return ReductionChoice("general", layout, n_part, chunk)

    def choice_plan(self, choice: ReductionChoice, x: Any, target: Any) -> LaunchPlan:
        """The first launch of ``choice``: into ``out``, or, when ``choice.n_part > 1``, into
        the scratch array ``target`` (shape ``kept + (n_part,)``, the accumulator's dtype)."""
        split = choice.n_part > 1
        if choice.path == "general":
            if split:
                return self.partial_plan(x, target, choice.n_part, choice.chunk)
            planned = self.plan(x, target)
            assert planned is not None
            return planned
        assert self.variants is not None
        layout, o_part = self._layout(x, target)
        dtype = self.acc_dtype if split else self.out_dtype
        if choice.path == "short":
            source = self.variants.short(len(layout.kept), len(layout.reduced), dtype)
            values: list[Any] = [layout.n_out, layout.n_red, choice.width, x]
            values += [v for k in zip(layout.kept, layout.x_kept, strict=True) for v in k]
            values.append(target)
            values += list(layout.out_kept)
            values += [v for r in zip(layout.reduced, layout.x_reduced, strict=True) for v in r]
            per_block = REDUCTION_BLOCK // choice.width
            grid = (min(-(-layout.n_out // per_block), MAX_BLOCKS), 1, 1)
            return source, grid, (REDUCTION_BLOCK, 1, 1), values
        i = choice.inner
        outer = [d for d in range(len(layout.kept)) if d != i]
        source = self.variants.columns(len(outer), len(layout.reduced), dtype)
        k_in = layout.kept[i]
        n_outer = layout.n_out // k_in
        values = [n_outer, k_in, layout.x_kept[i], layout.out_kept[i], x]
        values += [v for d in outer for v in (layout.kept[d], layout.x_kept[d])]
        values.append(target)
        values += [layout.out_kept[d] for d in outer]
        values.append(layout.n_red)
        values += [v for r in zip(layout.reduced, layout.x_reduced, strict=True) for v in r]
        values += [choice.n_part, choice.chunk, o_part if split else 0]
        tasks = n_outer * -(-k_in // COLUMN_TILE) * choice.n_part
        grid = (min(tasks, MAX_BLOCKS), 1, 1)
        return source, grid, (COLUMN_TILE, COLUMN_ROWS, 1), values

    def __call__(self, x: Any, out: Any) -> None:
        """Reduce the ``GPUArray`` ``x`` into the preallocated ``GPUArray`` ``out`` with the
        launches :meth:`select` chooses (through a scratch array of the accumulator's dtype
        when the reduction is split), remembered per layout of ``x`` and ``out``
        (:class:`~opweave_cuda.kernels.runtime.LaunchMemo`)."""

        def make() -> BoundLaunch | ReductionChoice | None:
            choice = self.select(x, out)
            if choice is not None and (choice.n_part == 1 or self.finish is None):
                return bind(*self.choice_plan(choice, x, out), (x, out))
            return choice

        known = self._memo.remembered((x, out), make)
        if known is None:
            return
        if isinstance(known, BoundLaunch):
            known((x, out))
            return
        choice = known
        from opweave_cuda.device_copy import empty

        kept_shape = tuple(int(x.shape[d]) for d in self.kept)
        scratch = empty((*kept_shape, choice.n_part), self.acc_dtype)
        launch(*self.choice_plan(choice, x, scratch))
        self.finish(scratch, out)


@dataclass(frozen=True)
class ReductionChoice:
    """The launches chosen for one reduction.

    Attributes
    ----------
    path
        ``"general"``, ``"columns"`` or ``"short"``.
    layout
        The merged dimensions.
    n_part, chunk
        The split (``n_part == 1``: one launch writes the output; else a partial launch
        into a scratch array and the finish reduction).
    width
        Threads per output of the short kernel.
    inner
        Index, in ``layout.kept``, of the kept dimension the column kernel's warps walk.
    """

    path: str
    layout: ReductionLayout
    n_part: int
    chunk: int
    width: int = 0
    inner: int = -1


def _split(n_tasks: int, n_red: int, min_chunk: int, multiple: int) -> tuple[int, int]:
    """:func:`split_plan` for ``n_tasks`` tasks before splitting, chunks of at least
    ``min_chunk`` elements rounded up to a multiple of ``multiple``."""
    parts = min(-(-SPLIT_TARGET_TASKS // n_tasks), n_red // min_chunk, SPLIT_MAX_PARTS)
    if parts <= 1:
        return 1, n_red
    chunk = -(-n_red // parts)
    chunk = -(-chunk // multiple) * multiple
    return -(-n_red // chunk), chunk


def _coords(
    dims: Sequence[str], index: str, updates: Sequence[tuple[str, str]], indent: str
) -> str:
    """Index arithmetic turning ``index`` (a mutable ``long long``) into coordinates along
    ``dims`` (extent parameter names, outer to inner), adding ``coord * stride`` to each
    ``(offset, stride prefix)`` of ``updates``; the outermost dimension takes what is left
    (no division)."""
    lines = []
    for k in reversed(range(len(dims))):
        adds = " ".join(f"{o} += c * {p}{k};" for o, p in updates)
        if k == 0:
            lines.append(f"{{ const long long c = {index}; {adds} }}")
        else:
            d = dims[k]
            lines.append(f"{{ const long long c = {index} % {d}; {index} /= {d}; {adds} }}")
    return ("\n" + indent).join(lines)


class ReductionVariants:
    """Generates (once each) the column and short-reduction kernels of one reduction, for
    any number of merged kept and reduced dimensions.

    Parameters
    ----------
    code
        The reduction's binary scalar code (inputs ``a``, ``b``, output ``r``).
    ident
        The C literal of the identity, in the accumulator's type.
    in_dtype, acc
        The input's and the accumulator's dtypes.
    """

    def __init__(self, code: Any, ident: str, in_dtype: str, acc: str) -> None:
        self.code = code
        self.ident = ident
        self.in_dtype = in_dtype
        self.acc = acc
        self._made: dict[tuple[Any, ...], KernelSource] = {}

    def _name(self, kind: str, *parts: str) -> str:
        return kernel_name(
            f"opw_reduce_{kind}",
            self.code.statements,
            *self.code.support,
            self.in_dtype,
            self.acc,
            self.ident,
            *parts,
        )

    def _remember(
        self, key: tuple[Any, ...], name: str, kernel: str, params: Sequence[str], block: int
    ) -> KernelSource:
        """The kernel ``name`` (its code ``kernel``), kept under ``key`` for the next launch."""
        source = KernelSource(
            name=name,
            source=translation_unit(self.code.support, kernel),
            params=tuple(params),
            block=block,
        )
        self._made[key] = source
        return source

    def _combine(self, name: str) -> str:
        at, rt = CUDA_TYPE[self.acc], CUDA_TYPE[self.code.out_dtypes[0]]
        return (
            f"static __device__ __forceinline__ {at} {name}_combine({at} a, {at} b)\n{{\n"
            f"    {rt} r;\n    " + self.code.statements.replace("\n", "\n    ") + "\n"
            f"    return {convert('r', self.code.out_dtypes[0], self.acc)};\n}}\n"
        )

    def short(self, nk: int, nr: int, out_dtype: str) -> KernelSource:
        """The kernel giving each of many short reductions ``width`` threads (a power of two,
        at most 32: a warp's segment, combined with width-limited shuffles), ``nk`` merged
        kept and ``nr`` merged reduced dimensions, writing ``out_dtype``."""
        key = ("short", nk, nr, out_dtype)
        if key in self._made:
            return self._made[key]
        acc, at = self.acc, CUDA_TYPE[self.acc]
        name = self._name("short", str(nk), str(nr), out_dtype)
        params = ["long long n_out", "long long n_red", "int width"]
        params.append(f"const {CUDA_TYPE[self.in_dtype]}* x")
        for d in range(nk):
            params += [f"long long k{d}", f"long long xk{d}"]
        params.append(f"{CUDA_TYPE[out_dtype]}* out")
        params += [f"long long ok{d}" for d in range(nk)]
        for d in range(nr):
            params += [f"long long r{d}", f"long long xr{d}"]
        out_block = _coords(
            [f"k{d}" for d in range(nk)], "ro", [("xo", "xk"), ("oo", "ok")], " " * 12
        )
        red_block = _coords([f"r{d}" for d in range(nr)], "q", [("xi", "xr")], " " * 16)
        value = convert(load("x[xi]", self.in_dtype), self.in_dtype, acc)
        result = store(convert("acc", acc, out_dtype), out_dtype)
        shuffle = _shuffle_width("acc", acc)
        sig = ",\n    ".join(params)
        kernel = f"""{self._combine(name)}
extern "C" __global__ void {name}(
    {sig})
{{
    const unsigned int tid = threadIdx.x;
    const long long lane = tid % width;
    const long long per_block = {REDUCTION_BLOCK} / width;
    for (long long base = blockIdx.x * per_block; base < n_out;
         base += (long long)gridDim.x * per_block) {{
        const long long o = base + tid / width;
        {at} acc = {self.ident};
        long long oo = 0;
        if (o < n_out) {{
            long long ro = o, xo = 0;
            {out_block}
            for (long long j = lane; j < n_red; j += width) {{
                long long q = j, xi = xo;
                {red_block}
                acc = {name}_combine(acc, {value});
            }}
        }}
        for (int d = width / 2; d > 0; d >>= 1) acc = {name}_combine(acc, {shuffle});
        if (lane == 0 && o < n_out) out[oo] = {result};
    }}
}}
"""
        return self._remember(key, name, kernel, params, REDUCTION_BLOCK)

    def columns(self, nko: int, nr: int, out_dtype: str) -> KernelSource:
        """The kernel whose blocks take :data:`COLUMN_TILE` consecutive outputs along the
        kept dimension of unit input stride (``k_in``; threads along ``x``, reads coalesced)
        and :data:`COLUMN_ROWS` threads along ``y`` splitting the reduced elements, combined
        in shared memory; ``nko`` other kept and ``nr`` reduced merged dimensions; tasks of
        one tile of one part (``n_part`` chunks of ``chunk`` reduced elements)."""
        key = ("columns", nko, nr, out_dtype)
        if key in self._made:
            return self._made[key]
        acc, at = self.acc, CUDA_TYPE[self.acc]
        name = self._name("columns", str(nko), str(nr), out_dtype)
        params = ["long long n_outer", "long long k_in", "long long xk_in", "long long ok_in"]
        params.append(f"const {CUDA_TYPE[self.in_dtype]}* x")
        for d in range(nko):
            params += [f"long long k{d}", f"long long xk{d}"]
        params.append(f"{CUDA_TYPE[out_dtype]}* out")
        params += [f"long long ok{d}" for d in range(nko)]
        params.append("long long n_red")
        for d in range(nr):
            params += [f"long long r{d}", f"long long xr{d}"]
        params += ["long long n_part", "long long chunk", "long long o_part"]
        out_block = _coords(
            [f"k{d}" for d in range(nko)], "ro", [("xo", "xk"), ("oo", "ok")], " " * 8
        )
        red_block = _coords([f"r{d}" for d in range(nr)], "q", [("xi", "xr")], " " * 16)
        value = convert(load("x[xi]", self.in_dtype), self.in_dtype, acc)
        result = store(convert("acc", acc, out_dtype), out_dtype)
        sig = ",\n    ".join(params)
        tile, rows = COLUMN_TILE, COLUMN_ROWS
        kernel = f"""{self._combine(name)}
extern "C" __global__ void {name}(
    {sig})
{{
    __shared__ {at} sdata[{tile * rows}];
    const unsigned int tx = threadIdx.x, ty = threadIdx.y;
    const long long tiles = (k_in + {tile - 1}) / {tile};
    const long long n_task = n_outer * tiles * n_part;
    for (long long task = blockIdx.x; task < n_task; task += gridDim.x) {{
        const long long part = task % n_part;
        const long long t = task / n_part;
        const long long tile = t % tiles;
        long long ro = t / tiles, xo = 0, oo = part * o_part;
        {out_block}
        const long long c = tile * {tile} + tx;
        const long long j0 = part * chunk;
        const long long j1 = (n_red - j0 < chunk) ? n_red : j0 + chunk;
        {at} acc = {self.ident};
        if (c < k_in) {{
            xo += c * xk_in;
            for (long long j = j0 + ty; j < j1; j += {rows}) {{
                long long q = j, xi = xo;
                {red_block}
                acc = {name}_combine(acc, {value});
            }}
        }}
        sdata[ty * {tile} + tx] = acc;
        __syncthreads();
        if (ty == 0 && c < k_in) {{
            for (int y = 1; y < {rows}; ++y) acc = {name}_combine(acc, sdata[y * {tile} + tx]);
            out[oo + c * ok_in] = {result};
        }}
        __syncthreads();
    }}
}}
"""
        return self._remember(key, name, kernel, params, COLUMN_TILE)


def _shuffle_width(expr: str, dtype: str) -> str:
    ctype = CUDA_TYPE[dtype]
    if np.dtype(dtype).itemsize < 4:
        return f"(({ctype})__shfl_down_sync(0xffffffffu, (int)({expr}), d, width))"
    return f"__shfl_down_sync(0xffffffffu, {expr}, d, width)"


def _reduction_source(
    name_prefix: str,
    code: Any,
    ident: str,
    in_dtype: str,
    out_dtype: str,
    acc: str,
    ndim: int,
    norm: Sequence[int],
) -> KernelSource:
    """The kernel reducing axes ``norm`` of a ``ndim``-d ``in_dtype`` array into
    ``out_dtype`` values (tasks of one output or one chunk of it)."""
    kept = [d for d in range(ndim) if d not in norm]
    at = CUDA_TYPE[acc]
    rt = CUDA_TYPE[code.out_dtypes[0]]
    name = kernel_name(
        name_prefix,
        code.statements,
        *code.support,
        in_dtype,
        out_dtype,
        acc,
        str(ndim),
        repr(list(norm)),
        ident,
    )
    params = ["long long n_out", "long long n_red", f"const {CUDA_TYPE[in_dtype]}* x"]
    for d in kept:
        params += [f"long long k{d}", f"long long xk{d}"]
    params.append(f"{CUDA_TYPE[out_dtype]}* out")
    params += [f"long long ok{d}" for d in kept]
    for d in norm:
        params += [f"long long r{d}", f"long long xr{d}"]
    params += ["long long n_part", "long long chunk", "long long o_part"]

    combine = (
        f"static __device__ __forceinline__ {at} {name}_combine({at} a, {at} b)\n{{\n"
        f"    {rt} r;\n    " + code.statements.replace("\n", "\n    ") + "\n"
        f"    return {convert('r', code.out_dtypes[0], acc)};\n}}\n"
    )
    out_coords = []
    for d in reversed(kept):
        if d == kept[0]:
            out_coords.append(f"xo += ro * xk{d}; oo += ro * ok{d};")
        else:
            step = f"xo += c * xk{d}; oo += c * ok{d};"
            out_coords.append(f"{{ const long long c = ro % k{d}; ro /= k{d}; {step} }}")
    red_coords = []
    for d in reversed(norm):
        if d == norm[0]:
            red_coords.append(f"xi += q * xr{d};")
        else:
            red_coords.append(
                f"if (r{d} != 1) {{ const long long c = q % r{d}; q /= r{d}; xi += c * xr{d}; }}"
            )
    value = convert(load("x[xi]", in_dtype), in_dtype, acc)
    result = store(convert("acc", acc, out_dtype), out_dtype)
    sig = ",\n    ".join(params)
    out_block = "\n        ".join(out_coords)
    red_block = "\n            ".join(red_coords)
    kernel = f"""{combine}
extern "C" __global__ void {name}(
    {sig})
{{
    __shared__ {at} sdata[{REDUCTION_BLOCK}];
    const unsigned int tid = threadIdx.x;
    const long long n_task = n_out * n_part;
    for (long long task = blockIdx.x; task < n_task; task += gridDim.x) {{
        const long long o = task / n_part;
        const long long part = task - o * n_part;
        long long ro = o, xo = 0, oo = part * o_part;
        {out_block}
        const long long j0 = part * chunk;
        const long long j1 = (n_red - j0 < chunk) ? n_red : j0 + chunk;
        {at} acc = {ident};
        for (long long j = j0 + tid; j < j1; j += {REDUCTION_BLOCK}) {{
            long long q = j, xi = xo;
            {red_block}
            acc = {name}_combine(acc, {value});
        }}
        sdata[tid] = acc;
        __syncthreads();
        for (unsigned int s = {REDUCTION_BLOCK // 2}; s >= 32; s >>= 1) {{
            if (tid < s) sdata[tid] = {name}_combine(sdata[tid], sdata[tid + s]);
            __syncthreads();
        }}
        if (tid < 32) {{
            acc = sdata[tid];
            for (int d = 16; d > 0; d >>= 1) acc = {name}_combine(acc, {_shuffle("acc", acc)});
            if (tid == 0) out[oo] = {result};
        }}
        __syncthreads();
    }}
}}
"""
    return KernelSource(
        name=name,
        source=translation_unit(code.support, kernel),
        params=tuple(params),
        block=REDUCTION_BLOCK,
    )


def reduction_kernel(
    scalar_op: Any,
    axes: tuple[int, ...],
    in_type: Any,
    out_type: Any,
    acc_dtype: str | None = None,
) -> ReductionKernel:
    """Generate the kernels of a CAReduce node.

    Parameters
    ----------
    scalar_op
        The reduction's binary scalar Op (``add``, ``mul``, ``maximum``, ``minimum``,
        ``and_``, ``or_``...); its ``identity`` is the value of an empty reduction.
    axes
        The reduced axes (negative ones count from the end).
    in_type, out_type
        The node's tensor Types (``dtype`` and ``shape``); the output drops the axes.
    acc_dtype
        The dtype accumulated in (default: the output's, ``float32`` for ``float16``).

    Returns
    -------
    ReductionKernel
        With its partial and finish kernels (for split reductions).

    Raises
    ------
    NotImplementedError
        If a dtype or the scalar Op has no CUDA code, or the rank exceeds
        :data:`~opweave_cuda.kernels.launch.MAX_NDIM`.
    """
    in_dtype, out_dtype = str(in_type.dtype), str(out_type.dtype)
    acc = _f32(str(acc_dtype) if acc_dtype is not None else out_dtype)
    bad = sorted({in_dtype, out_dtype, acc} - CUDA_DTYPES)
    if bad:
        raise NotImplementedError(f"no CUDA reduction code for dtype {', '.join(bad)}")
    ndim = len(in_type.shape)
    if ndim > MAX_NDIM:
        raise NotImplementedError(f"CUDA reductions take at most {MAX_NDIM} dimensions, got {ndim}")
    norm = sorted({a + ndim if a < 0 else a for a in axes})
    if len(norm) != len(axes) or any(not 0 <= a < ndim for a in norm):
        raise ValueError(f"invalid reduction axes {axes} for a {ndim}-d input")
    if getattr(scalar_op, "identity", None) is None:
        raise NotImplementedError(f"scalar Op {scalar_op} has no identity to reduce with")
    code = with_conversions(scalar_code(scalar_op, [acc, acc], ["a", "b"], ["r"]))
    ident = identity_literal(scalar_op.identity, acc)
    main = _reduction_source("opw_reduce", code, ident, in_dtype, out_dtype, acc, ndim, norm)
    variants = ReductionVariants(code, ident, in_dtype, acc)
    if not norm:
        return ReductionKernel(main, norm, ndim, in_dtype, out_dtype, acc)
    partial = (
        main
        if out_dtype == acc
        else _reduction_source("opw_reduce", code, ident, in_dtype, acc, acc, ndim, norm)
    )
    nk = ndim - len(norm)
    finish_source = _reduction_source("opw_reduce", code, ident, acc, out_dtype, acc, nk + 1, [nk])
    finish_variants = ReductionVariants(code, ident, acc, acc)
    finish = ReductionKernel(
        finish_source, [nk], nk + 1, acc, out_dtype, acc, variants=finish_variants
    )
    return ReductionKernel(main, norm, ndim, in_dtype, out_dtype, acc, partial, finish, variants)
