"""Matrix products on the GPU: cuBLAS when it loads, else a tiled shared-memory kernel.

Vectors take part as one-row or one-column matrices (stride 0 along the added dimension),
so matrix-vector, vector-matrix and vector-vector products need no copy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from opweave_cuda.kernels.cublas import cublas_plan, get_cublas
from opweave_cuda.kernels.elemwise import LaunchPlan
from opweave_cuda.kernels.launch import element_strides
from opweave_cuda.kernels.runtime import device_pointer, launch
from opweave_cuda.kernels.source import CUDA_TYPE, KernelSource, kernel_name, translation_unit

__all__ = ["GEMM_DTYPES", "GEMM_TILE", "as_matrices", "gemm", "gemm_kernel", "gemm_plan"]

#: Side of the square tiles (and thread blocks) of the tiled kernel.
GEMM_TILE = 16
#: dtypes of matrix products.
GEMM_DTYPES = ("float32", "float64")
_GRID_Y_MAX = 65535

GEMM_PARAMS = (
    "long long M",
    "long long N",
    "long long K",
    "const {t}* A",
    "long long sa0",
    "long long sa1",
    "const {t}* B",
    "long long sb0",
    "long long sb1",
    "{t}* C",
    "long long sc0",
    "long long sc1",
)

Matrix = tuple[tuple[int, int], tuple[int, int]]


def gemm_kernel(dtype: str) -> KernelSource:
    """The tiled kernel computing ``C = A @ B`` for ``dtype`` (``float32``/``float64``),
    with ``(M, K) @ (K, N)`` operands of any element strides. Launch with
    ``block=(GEMM_TILE, GEMM_TILE, 1)`` and ``grid=(ceil(N / GEMM_TILE), Y, 1)`` with ``Y``
    at most ``ceil(M / GEMM_TILE)`` and 65535: blocks loop over the row tiles beyond ``Y``.
    """
    if dtype not in GEMM_DTYPES:
        raise NotImplementedError(f"no CUDA matrix product for dtype {dtype}")
    t = CUDA_TYPE[dtype]
    params = tuple(p.format(t=t) for p in GEMM_PARAMS)
    tile = GEMM_TILE
    name = kernel_name(f"opw_gemm_{dtype}", str(tile), "v2")
    sig = ",\n    ".join(params)
    body = f"""extern "C" __global__ void {name}(
    {sig})
{{
    __shared__ {t} As[{tile}][{tile}];
    __shared__ {t} Bs[{tile}][{tile} + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long col = (long long)blockIdx.x * {tile} + tx;
    /* Row tiles in a grid-stride loop: the grid's y extent is at most 65535. The loop
       condition is the same for every thread of the block, so the barriers stay uniform. */
    for (long long row0 = (long long)blockIdx.y * {tile}; row0 < M;
         row0 += (long long)gridDim.y * {tile}) {{
        const long long row = row0 + ty;
        {t} acc = 0;
        for (long long t0 = 0; t0 < K; t0 += {tile}) {{
            As[ty][tx] = (row < M && t0 + tx < K) ? A[row * sa0 + (t0 + tx) * sa1] : ({t})0;
            Bs[ty][tx] = (t0 + ty < K && col < N) ? B[(t0 + ty) * sb0 + col * sb1] : ({t})0;
            __syncthreads();
            #pragma unroll
            for (int k = 0; k < {tile}; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }}
        if (row < M && col < N) C[row * sc0 + col * sc1] = acc;
    }}
}}
"""
    return KernelSource(name=name, source=translation_unit([], body), params=params, block=tile)


def as_matrices(
    a_shape: Sequence[int],
    a_strides: Sequence[int],
    b_shape: Sequence[int],
    b_strides: Sequence[int],
    out_shape: Sequence[int],
    out_strides: Sequence[int],
) -> tuple[Matrix, Matrix, Matrix]:
    """The operands of ``out = a @ b`` (element strides) as 2-d ``(shape, strides)``.

    A 1-d ``a`` is a row, a 1-d ``b`` a column; ``out`` has the dimensions NumPy's ``dot``
    keeps.

    Raises
    ------
    ValueError
        If ranks or shapes do not match.
    """
    if len(a_shape) not in (1, 2) or len(b_shape) not in (1, 2):
        raise ValueError(f"gemm takes 1-d or 2-d operands, got {len(a_shape)}-d, {len(b_shape)}-d")
    a: Matrix = (
        ((int(a_shape[0]), int(a_shape[1])), (int(a_strides[0]), int(a_strides[1])))
        if len(a_shape) == 2
        else ((1, int(a_shape[0])), (0, int(a_strides[0])))
    )
    b: Matrix = (
        ((int(b_shape[0]), int(b_shape[1])), (int(b_strides[0]), int(b_strides[1])))
        if len(b_shape) == 2
        else ((int(b_shape[0]), 1), (int(b_strides[0]), 0))
    )
    (m, k), (k2, n) = a[0], b[0]
    if k != k2:
        raise ValueError(f"gemm: shapes {tuple(a_shape)} and {tuple(b_shape)} are not aligned")
    expected = tuple(d for d, keep in ((m, len(a_shape) == 2), (n, len(b_shape) == 2)) if keep)
    if tuple(int(d) for d in out_shape) != expected:
        raise ValueError(f"gemm: output of shape {tuple(out_shape)}, expected {expected}")
    rank_a, rank_b = len(a_shape) == 2, len(b_shape) == 2
    if rank_a and rank_b:
        c_strides = (int(out_strides[0]), int(out_strides[1]))
    elif rank_a:
        c_strides = (int(out_strides[0]), 0)
    elif rank_b:
        c_strides = (0, int(out_strides[0]))
    else:
        c_strides = (0, 0)
    return a, b, ((m, n), c_strides)


def gemm_plan(a: Any, b: Any, out: Any, use_cublas: bool = True) -> tuple[str, Any] | None:
    """How to compute ``out = a @ b`` (array-likes with ``shape``, byte ``strides``,
    ``dtype``): ``("cublas", plan)``, ``("kernel", launch plan)`` or ``None`` (nothing to
    compute).

    Raises
    ------
    TypeError
        If the dtypes differ or are not float32/float64.
    """
    dtype = np.dtype(a.dtype).name
    if dtype not in GEMM_DTYPES or {np.dtype(b.dtype).name, np.dtype(out.dtype).name} != {dtype}:
        raise TypeError(
            "gemm needs float32 or float64 operands of one dtype, got "
            f"{np.dtype(a.dtype).name}, {np.dtype(b.dtype).name} -> {np.dtype(out.dtype).name}"
        )
    item = np.dtype(dtype).itemsize
    ma, mb, mc = as_matrices(
        a.shape,
        element_strides(a.strides, item),
        b.shape,
        element_strides(b.strides, item),
        out.shape,
        element_strides(out.strides, item),
    )
    (m, k), (_, n) = ma[0], mb[0]
    if m * n == 0:
        return None
    if use_cublas and k > 0:
        plan = cublas_plan(ma, mb, mc)
        if plan is not None:
            return "cublas", plan
    grid_y = min(math.ceil(m / GEMM_TILE), _GRID_Y_MAX)  # the kernel loops over the rest
    values: list[Any] = [m, n, k, a, *ma[1], b, *mb[1], out, *mc[1]]
    launch_plan: LaunchPlan = (
        gemm_kernel(dtype),
        (math.ceil(n / GEMM_TILE), grid_y, 1),
        (GEMM_TILE, GEMM_TILE, 1),
        values,
    )
    return "kernel", launch_plan


def gemm(a: Any, b: Any, out: Any) -> None:
    """``out = a @ b`` on the GPU for float32/float64 ``GPUArray``s.

    Parameters
    ----------
    a, b
        2-d matrices or 1-d vectors (``(m, k) @ (k, n)``, ``(m, k) @ (k,)``,
        ``(k,) @ (k, n)``, ``(k,) @ (k,)``), any strides.
    out
        The preallocated result (shape ``(m, n)``, ``(m,)``, ``(n,)`` or ``()``).

    Notes
    -----
    Uses cuBLAS (column-major trick, no copy) when it loads, its handle can be created and
    the layouts suit it, else the tiled kernel of :func:`gemm_kernel`.
    """
    lib = get_cublas()
    if lib is not None and not lib.usable():
        lib = None
    planned = gemm_plan(a, b, out, use_cublas=lib is not None)
    if planned is None:
        return
    kind, plan = planned
    if kind == "cublas":
        assert lib is not None
        pointers = {"a": device_pointer(a), "b": device_pointer(b)}
        lib.gemm(np.dtype(a.dtype).name, plan, pointers, device_pointer(out))
    else:
        launch(*plan)
