"""Kernel sources: the :class:`KernelSource` record and the CUDA C++ building blocks every
generated translation unit shares (NumPy number types, math shims, float16 loads/stores).

Every translation unit is self-contained (it compiles alone with ``nvcc``) and every shared
snippet sits behind an include guard, so that many units can also be concatenated into one
file (the tests compile all kernels of a module with one ``nvcc`` call).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "CUDA_DTYPES",
    "CUDA_TYPE",
    "MAX_PARAM_BYTES",
    "NVCC_OPTIONS",
    "PRELUDE",
    "KernelSource",
    "convert",
    "guarded",
    "is_float_to_int",
    "kernel_name",
    "load",
    "store",
    "translation_unit",
]

#: ``nvcc`` options of every compile: no contraction of ``a * b + c`` into a fused
#: multiply-add, as NumPy (and the C backend, with ``-ffp-contract=off``) rounds the product.
NVCC_OPTIONS: tuple[str, ...] = ("--fmad=false",)

#: The most bytes of kernel parameters every CUDA driver accepts (CUDA 12.1 raised the limit
#: to 32764 bytes on Volta and newer, with a recent driver only).
MAX_PARAM_BYTES = 4096

#: dtype -> CUDA C type of its elements in memory (``float16`` is ``__half``).
CUDA_TYPE: MappingProxyType[str, str] = MappingProxyType(
    {
        "bool": "npy_bool",
        "int8": "npy_int8",
        "int16": "npy_int16",
        "int32": "npy_int32",
        "int64": "npy_int64",
        "uint8": "npy_uint8",
        "uint16": "npy_uint16",
        "uint32": "npy_uint32",
        "uint64": "npy_uint64",
        "float16": "__half",
        "float32": "npy_float32",
        "float64": "npy_float64",
    }
)
#: dtypes with CUDA code.
CUDA_DTYPES: frozenset[str] = frozenset(CUDA_TYPE)

#: Shared head of every translation unit: NumPy's ``npy_*`` number types, ``OPW_SC_FN`` (how
#: the scalar helpers of the C backend are declared) as a device function, and shims for the
#: C99 ``<math.h>`` names those helpers use that CUDA has no device version of.
PRELUDE = """#include <cuda_fp16.h>
#ifndef OPW_CUDA_PRELUDE
#define OPW_CUDA_PRELUDE
#pragma nv_diag_suppress 177
typedef unsigned char npy_bool;
typedef signed char npy_int8;
typedef short npy_int16;
typedef int npy_int32;
typedef long long npy_int64;
typedef unsigned char npy_uint8;
typedef unsigned short npy_uint16;
typedef unsigned int npy_uint32;
typedef unsigned long long npy_uint64;
typedef float npy_float32;
typedef double npy_float64;
#define OPW_SC_FN static __device__ __forceinline__
/* Quiet comparisons: a GPU raises no floating-point exceptions, so plain ones are equal. */
#ifndef isless
#define isless(a, b) ((a) < (b))
#endif
#ifndef isgreater
#define isgreater(a, b) ((a) > (b))
#endif
static __device__ __forceinline__ double copysign(int a, double b) {
    return copysign((double)a, b);
}
#endif
"""


@dataclass(frozen=True)
class KernelSource:
    """One generated ``extern "C" __global__`` kernel.

    Parameters
    ----------
    name
        The kernel function's name (unique: derived from a hash of its code).
    source
        A complete CUDA C++ translation unit defining it (no host code).
    params
        The kernel's C parameter declarations, in order (e.g. ``"long long n"``).
    block
        The number of threads per block the kernel is written for (``0``: any; a reduction
        needs exactly this many).
    """

    name: str
    source: str
    params: tuple[str, ...]
    block: int = field(default=0)

    def arg_kinds(self) -> tuple[str, ...]:
        """Per parameter, how a host value is passed: ``"ptr"``, ``"i64"`` or ``"i32"``."""
        kinds = []
        for decl in self.params:
            if "*" in decl:
                kinds.append("ptr")
            elif decl.startswith("long long"):
                kinds.append("i64")
            elif decl.startswith("int"):
                kinds.append("i32")
            else:
                raise ValueError(f"kernel {self.name}: unsupported parameter {decl!r}")
        return tuple(kinds)

    def param_bytes(self) -> int:
        """The size of the kernel's parameter buffer (each parameter naturally aligned)."""
        size = 0
        for kind in self.arg_kinds():
            width = 4 if kind == "i32" else 8
            size = -(-size // width) * width + width
        return size


def guarded(snippet: str) -> str:
    """``snippet`` behind an include guard named after its content (defined at most once)."""
    tag = hashlib.sha256(snippet.encode()).hexdigest()[:16].upper()
    return f"#ifndef OPW_SNIPPET_{tag}\n#define OPW_SNIPPET_{tag}\n{snippet}\n#endif\n"


def kernel_name(prefix: str, *parts: str) -> str:
    """A kernel name unique to its code: ``prefix`` and a hash of ``parts``."""
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:12]
    return f"{prefix}_{digest}"


def translation_unit(support: Sequence[str], kernel: str) -> str:
    """The prelude, the guarded support snippets and the kernel, as one compilable unit."""
    return PRELUDE + "".join(guarded(s) for s in support) + kernel + "\n"


def convert(expr: str, src: str, dst: str) -> str:
    """C conversion of ``expr`` (a value of ``src``'s compute type) to ``dst``'s compute type
    as NumPy's ``astype`` does it on x86-64 (``float16`` values are computed as ``float``).

    A float to an integer goes through the C backend's ``opw_sc_f2i_<dtype>`` helpers, as
    the graph's casts do: a plain C cast compiles to a saturating ``cvt.rzi`` on a GPU
    (``-1.0`` to ``uint8`` gives ``0`` there, ``255`` in NumPy). The translation unit must
    hold those helpers (:func:`~opweave_cuda.kernels.scalar.conversion_support`).
    """
    src, dst = _compute(src), _compute(dst)
    if src == dst:
        return expr
    if dst == "bool":
        return f"((npy_bool)(({expr}) != 0))"
    if is_float_to_int(src, dst):
        return f"opw_sc_f2i_{dst}((double)({expr}))"
    return f"(({CUDA_TYPE[dst]})({expr}))"


def is_float_to_int(src: str, dst: str) -> bool:
    """Whether converting ``src`` values to ``dst`` turns floats into integers (``bool``
    excluded: it is a comparison with zero)."""
    return src in _FLOATS and dst in CUDA_DTYPES and dst not in _FLOATS and dst != "bool"


def load(expr: str, dtype: str) -> str:
    """The compute-type value of the element lvalue ``expr`` of ``dtype``."""
    return f"__half2float({expr})" if dtype == "float16" else expr


def store(expr: str, dtype: str) -> str:
    """``expr`` (a compute-type value of ``dtype``) as stored in memory."""
    return f"__float2half_rn({expr})" if dtype == "float16" else expr


_FLOATS = frozenset({"float16", "float32", "float64"})


def _compute(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype
