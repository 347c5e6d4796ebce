"""Reduction kernels (CAReduce) over any set of axes, any strides.

One block computes one output element at a time (a grid-stride loop over the outputs): its
threads accumulate strided slices of the reduced elements, then combine their partial
results in a shared-memory tree down to one warp, which finishes with ``__shfl_down_sync``.
An empty reduction gives the scalar Op's identity. The accumulator has ``acc_dtype``
(``float16`` accumulates in ``float32``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.kernels.elemwise import LaunchPlan
from opweave_cuda.kernels.launch import MAX_BLOCKS, MAX_NDIM, element_strides
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

__all__ = ["REDUCTION_BLOCK", "ReductionKernel", "identity_literal", "reduction_kernel"]

#: Threads per block of a reduction (a power of two, at least 64).
REDUCTION_BLOCK = 256


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


class ReductionKernel:
    """The kernel of one CAReduce node and how to launch it.

    Parameters
    ----------
    kernel
        The generated kernel.
    axes
        The reduced axes (sorted, non-negative).
    ndim
        The input's rank.
    in_dtype, out_dtype
        The input's and output's dtypes.

    Attributes
    ----------
    sources
        ``(kernel,)``.
    """

    def __init__(
        self, kernel: KernelSource, axes: Sequence[int], ndim: int, in_dtype: str, out_dtype: str
    ) -> None:
        self.kernel = kernel
        self.sources: tuple[KernelSource, ...] = (kernel,)
        self.axes = tuple(axes)
        self.ndim = ndim
        self.kept = tuple(d for d in range(ndim) if d not in self.axes)
        self.in_dtype = in_dtype
        self.out_dtype = out_dtype

    def plan(self, x: Any, out: Any) -> LaunchPlan | None:
        """The launch reducing ``x`` into ``out`` (array-likes with ``shape``, byte
        ``strides`` and ``dtype``), or ``None`` when ``out`` has no element."""
        if np.dtype(x.dtype).name != self.in_dtype or len(x.shape) != self.ndim:
            raise TypeError(
                f"reduction kernel: expected a {self.ndim}-d {self.in_dtype} input, "
                f"got a {len(x.shape)}-d {np.dtype(x.dtype).name} one"
            )
        shape = tuple(int(d) for d in x.shape)
        kept_shape = tuple(shape[d] for d in self.kept)
        if np.dtype(out.dtype).name != self.out_dtype or tuple(out.shape) != kept_shape:
            raise TypeError(
                f"reduction kernel: expected a {self.out_dtype} output of shape {kept_shape}, "
                f"got a {np.dtype(out.dtype).name} one of shape {tuple(out.shape)}"
            )
        n_out = math.prod(kept_shape)
        if n_out == 0:
            return None
        xs = element_strides(x.strides, np.dtype(x.dtype).itemsize)
        os_ = element_strides(out.strides, np.dtype(out.dtype).itemsize)
        values: list[Any] = [n_out, math.prod(shape[d] for d in self.axes), x]
        for d in self.kept:
            values += [shape[d], xs[d]]
        values.append(out)
        values += list(os_)
        for d in self.axes:
            values += [shape[d], xs[d]]
        grid = (min(n_out, MAX_BLOCKS), 1, 1)
        return self.kernel, grid, (REDUCTION_BLOCK, 1, 1), values

    def __call__(self, x: Any, out: Any) -> None:
        """Reduce the ``GPUArray`` ``x`` into the preallocated ``GPUArray`` ``out``."""
        planned = self.plan(x, out)
        if planned is not None:
            launch(*planned)


def reduction_kernel(
    scalar_op: Any,
    axes: tuple[int, ...],
    in_type: Any,
    out_type: Any,
    acc_dtype: str | None = None,
) -> ReductionKernel:
    """Generate the kernel of a CAReduce node.

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
    kept = [d for d in range(ndim) if d not in norm]
    at = CUDA_TYPE[acc]
    rt = CUDA_TYPE[code.out_dtypes[0]]
    ident = identity_literal(scalar_op.identity, acc)
    name = kernel_name(
        "opw_reduce", code.statements, in_dtype, out_dtype, acc, str(ndim), repr(norm), ident
    )
    params = ["long long n_out", "long long n_red", f"const {CUDA_TYPE[in_dtype]}* x"]
    for d in kept:
        params += [f"long long k{d}", f"long long xk{d}"]
    params.append(f"{CUDA_TYPE[out_dtype]}* out")
    params += [f"long long ok{d}" for d in kept]
    for d in norm:
        params += [f"long long r{d}", f"long long xr{d}"]

    combine = (
        f"static __device__ __forceinline__ {at} {name}_combine({at} a, {at} b)\n{{\n"
        f"    {rt} r;\n    " + code.statements.replace("\n", "\n    ") + "\n"
        f"    return {convert('r', code.out_dtypes[0], acc)};\n}}\n"
    )
    out_coords = []
    for d in reversed(kept):
        out_coords.append(
            f"{{ const long long c = ro % k{d}; ro /= k{d}; xo += c * xk{d}; oo += c * ok{d}; }}"
        )
    red_coords = []
    for d in reversed(norm):
        red_coords.append(f"{{ const long long c = q % r{d}; q /= r{d}; xi += c * xr{d}; }}")
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
    for (long long o = blockIdx.x; o < n_out; o += gridDim.x) {{
        long long ro = o, xo = 0, oo = 0;
        {out_block}
        {at} acc = {ident};
        for (long long j = tid; j < n_red; j += {REDUCTION_BLOCK}) {{
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
    source = KernelSource(
        name=name,
        source=translation_unit(code.support, kernel),
        params=tuple(params),
        block=REDUCTION_BLOCK,
    )
    return ReductionKernel(source, norm, ndim, in_dtype, out_dtype)
