"""Vectorised math calls in generated loops, through glibc's vector math library (libmvec).

GCC vectorises a loop that calls ``exp``, ``tanh``, ``log``... only when it knows a vector
version of the function exists. glibc's ``libmvec`` has AVX2 versions of most of
``<math.h>``; its headers declare them only under ``-ffast-math``, which opweave never uses
(NaN, infinities and signed zeros must stay as NumPy has them). This module declares them
itself (``#pragma omp declare simd`` with ``-fopenmp-simd``, which adds no OpenMP runtime)
and builds with ``-mavx2 -mfma`` so that GCC picks the 4-wide (``double``) and 8-wide
(``float``) versions.

The vector functions handle NaN, infinities, zeros and subnormals as the scalar ones do;
their results are within 4 ulp of the correctly rounded value (glibc documents the bound;
the scalar functions are within 1 ulp), where NumPy's float64 loops use the scalar
functions. ``config.c__vector_math = False`` turns this off, for results identical to the
scalar C library's.

It applies only on x86-64 Linux with glibc's ``libmvec.so.1`` and a processor with AVX2 and
FMA (as NumPy detects them); elsewhere :func:`vector_math_code` returns ``None`` and loops
call the scalar functions. The flags are part of every module's cache key, so modules built
with and without it never mix.
"""

from __future__ import annotations

import ctypes
import functools
import platform
import sys
from dataclasses import dataclass

__all__ = ["VectorMathCode", "vector_math_code"]

#: One-argument functions of ``<math.h>`` libmvec may have (glibc 2.22: cos, exp, log, sin;
#: 2.35: the others). Only those the installed library exports are declared.
_UNARY = (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "cos", "cosh", "erf", "erfc",
    "exp", "exp10", "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "sinh", "tan",
    "tanh",
)  # fmt: skip
#: Two-argument ones.
_BINARY = ("atan2", "hypot", "pow")

#: Compiler flags: AVX2 and FMA code (FMA contraction stays off: ``-ffp-contract=off`` comes
#: with every Elemwise), and the ``omp declare simd`` pragmas without the OpenMP runtime.
_FLAGS = ("-mavx2", "-mfma", "-fopenmp-simd")


@dataclass(frozen=True)
class VectorMathCode:
    """What a module that loops over math calls needs to use libmvec.

    Attributes
    ----------
    support_code
        The ``declare simd`` declarations (after ``<math.h>``, which ``Python.h`` includes).
    compile_args
        Flags for the compiler.
    libraries
        Libraries to link (``mvec``).
    """

    support_code: str
    compile_args: tuple[str, ...]
    libraries: tuple[str, ...]


def _cpu_has_avx2_fma() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # pragma: no cover - NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return bool(features.get("AVX2")) and bool(features.get("FMA3"))


@functools.cache
def _libmvec_functions() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The unary and binary functions whose AVX2 versions (``double`` and ``float``) the
    installed libmvec exports; empty where there is none or the processor lacks AVX2/FMA."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return (), ()
    if not _cpu_has_avx2_fma():
        return (), ()
    try:
        lib = ctypes.CDLL("libmvec.so.1")
    except OSError:
        return (), ()

    def exported(name: str, args: str) -> bool:
        return hasattr(lib, f"_ZGVdN4{args}_{name}") and hasattr(lib, f"_ZGVdN8{args}_{name}f")

    unary = tuple(f for f in _UNARY if exported(f, "v"))
    binary = tuple(f for f in _BINARY if exported(f, "vv"))
    return unary, binary


@functools.cache
def _code(unary: tuple[str, ...], binary: tuple[str, ...]) -> VectorMathCode:
    lines = ["/* opweave: glibc's vector math functions (libmvec). */"]
    for name in unary:
        for c_type, suffix in (("double", ""), ("float", "f")):
            lines.append("#pragma omp declare simd notinbranch")
            lines.append(f"extern {c_type} {name}{suffix}({c_type});")
    for name in binary:
        for c_type, suffix in (("double", ""), ("float", "f")):
            lines.append("#pragma omp declare simd notinbranch")
            lines.append(f"extern {c_type} {name}{suffix}({c_type}, {c_type});")
    return VectorMathCode("\n".join(lines) + "\n", _FLAGS, ("mvec",))


def vector_math_code() -> VectorMathCode | None:
    """The libmvec declarations and flags, or ``None`` when ``config.c__vector_math`` is off
    or this machine cannot use them (see the module docstring)."""
    from opweave import config

    if not config.c__vector_math:
        return None
    unary, binary = _libmvec_functions()
    if not unary:
        return None
    return _code(unary, binary)
