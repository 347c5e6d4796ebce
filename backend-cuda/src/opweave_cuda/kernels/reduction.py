"""Reduction kernels (CAReduce) over any set of axes, any strides.

One block computes one *task* at a time (a grid-stride loop over the tasks): its threads
accumulate strided slices of the task's reduced elements, then combine their partial
results in a shared-memory tree down to one warp, which finishes with ``__shfl_down_sync``.
An empty reduction gives the scalar Op's identity. The accumulator has ``acc_dtype``
(``float16`` accumulates in ``float32``).

A task is one output element, or, when there are too few outputs to occupy the GPU (a
full reduction has one), one of ``n_part`` chunks of an output's reduced elements: the
*partial* kernel then writes ``n_part`` accumulator values per output into a scratch
array, and the *finish* kernel (the same generator, reducing that array's last axis)
combines them (:func:`split_plan`). Reduced dimensions that one stride can walk are merged
on the host (:func:`~opweave_cuda.kernels.launch.collapse_dims`); the kernel skips the
length-1 dimensions this leaves, and the outermost one needs no division.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.kernels.elemwise import LaunchPlan
from opweave_cuda.kernels.launch import MAX_BLOCKS, MAX_NDIM, collapse_dims, element_strides
from opweave_cuda.kernels.runtime import launch
from opweave_cuda.kernels.scalar import scalar_code
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
    "REDUCTION_BLOCK",
    "SPLIT_MAX_PARTS",
    "SPLIT_MIN_CHUNK",
    "SPLIT_TARGET_TASKS",
    "ReductionKernel",
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
    ) -> None:
        self.kernel = kernel
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

    def _check_input(self, x: Any) -> tuple[int, ...]:
        if np.dtype(x.dtype).name != self.in_dtype or len(x.shape) != self.ndim:
            raise TypeError(
                f"reduction kernel: expected a {self.ndim}-d {self.in_dtype} input, "
                f"got a {len(x.shape)}-d {np.dtype(x.dtype).name} one"
            )
        return tuple(int(d) for d in x.shape)

    def _values(self, x: Any, out: Any, n_part: int, chunk: int) -> list[Any]:
        shape = tuple(int(d) for d in x.shape)
        xs = element_strides(x.strides, np.dtype(x.dtype).itemsize)
        os_ = element_strides(out.strides, np.dtype(out.dtype).itemsize)
        n_out = math.prod(shape[d] for d in self.kept)
        n_red = math.prod(shape[d] for d in self.axes)
        values: list[Any] = [n_out, n_red, x]
        for d in self.kept:
            values += [shape[d], xs[d]]
        values.append(out)
        values += list(os_[: len(self.kept)])
        sizes, strides = collapse_dims([shape[d] for d in self.axes], [xs[d] for d in self.axes])
        for n, s in zip(sizes, strides, strict=True):
            values += [n, s]
        o_part = os_[len(self.kept)] if n_part > 1 else 0
        values += [n_part, chunk, o_part]
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

    def __call__(self, x: Any, out: Any) -> None:
        """Reduce the ``GPUArray`` ``x`` into the preallocated ``GPUArray`` ``out``
        (through a scratch array of the accumulator's dtype when the reduction is split)."""
        n_part, chunk = self.split(x)
        if n_part == 1 or self.finish is None:
            planned = self.plan(x, out)
            if planned is not None:
                launch(*planned)
            return
        from opweave_cuda.device_copy import empty

        kept_shape = tuple(int(x.shape[d]) for d in self.kept)
        if tuple(int(d) for d in out.shape) != kept_shape:
            self.plan(x, out)  # raises the shape error
        scratch = empty((*kept_shape, n_part), self.acc_dtype)
        launch(*self.partial_plan(x, scratch, n_part, chunk))
        self.finish(scratch, out)


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
    code = scalar_code(scalar_op, [acc, acc], ["a", "b"], ["r"])
    ident = identity_literal(scalar_op.identity, acc)
    main = _reduction_source("opw_reduce", code, ident, in_dtype, out_dtype, acc, ndim, norm)
    if not norm:
        return ReductionKernel(main, norm, ndim, in_dtype, out_dtype, acc)
    partial = (
        main
        if out_dtype == acc
        else _reduction_source("opw_reduce", code, ident, in_dtype, acc, acc, ndim, norm)
    )
    nk = ndim - len(norm)
    finish_source = _reduction_source("opw_reduce", code, ident, acc, out_dtype, acc, nk + 1, [nk])
    finish = ReductionKernel(finish_source, [nk], nk + 1, acc, out_dtype, acc)
    return ReductionKernel(main, norm, ndim, in_dtype, out_dtype, acc, partial, finish)
