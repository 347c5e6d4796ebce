"""Vectorised math calls in generated loops, through glibc's vector math library (libmvec).

GCC vectorises a loop that calls ``exp``, ``tanh``, ``log``... only when it knows a vector
version of the function exists. glibc's ``libmvec`` has SSE4, AVX, AVX2 and AVX-512 versions
of most of ``<math.h>``; its headers declare them only under ``-ffast-math``, which opweave
never uses (NaN, infinities and signed zeros must stay as NumPy has them). This module
declares them itself (``#pragma omp declare simd`` with ``-fopenmp-simd``, which adds no
OpenMP runtime) and builds for the widest instruction set the processor has: with AVX-512
(``-mavx512f ...``) GCC calls the 8-wide (``double``) and 16-wide (``float``) versions, with
AVX2 and FMA (``-mavx2 -mfma``) the 4- and 8-wide ones.

The vector functions handle NaN, infinities, zeros and subnormals as the scalar ones do;
their results are within 4 ulp of the correctly rounded value (glibc documents the bound;
the scalar functions are within 1 ulp), where NumPy's float64 loops use the scalar
functions or SIMD code of their own. ``config.c__vector_math = False`` turns this off, for
results identical to the scalar C library's.

It applies only on x86-64 Linux with glibc's ``libmvec.so.1`` and a processor with AVX2 and
FMA (as NumPy detects them); elsewhere :func:`vector_math_code` returns ``None`` and loops
call the scalar functions. The flags are part of every module's cache key, so modules built
for different instruction sets, or without vector math, never mix.
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

#: Per instruction set, most capable first: the NumPy CPU features it needs, the libmvec
#: variants GCC may call in its loops (``_ZGV<letter>N<width>...``: ``b`` SSE4, ``c`` AVX,
#: ``d`` AVX2, ``e`` AVX-512; main loops use the widest, epilogues narrower ones), and the
#: compiler flags. FMA contraction stays off (``-ffp-contract=off`` comes with every
#: Elemwise); ``-fopenmp-simd`` reads the ``omp declare simd`` pragmas without the OpenMP
#: runtime.
_LEVELS: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    (
        "avx512",
        ("AVX512F", "AVX512DQ", "AVX512VL", "AVX512BW", "AVX2", "FMA3"),
        "bcde",
        ("-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mavx2", "-mfma"),
    ),
    ("avx2", ("AVX2", "FMA3"), "bcd", ("-mavx2", "-mfma")),
)
#: Lanes per variant letter, for ``double`` and ``float``.
_WIDTHS = {"b": (2, 4), "c": (4, 8), "d": (4, 8), "e": (8, 16)}


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
    level
        The instruction set the loops are built for: ``"avx512"`` or ``"avx2"``.
    """

    support_code: str
    compile_args: tuple[str, ...]
    libraries: tuple[str, ...]
    level: str


def _cpu_features() -> dict[str, bool]:
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # pragma: no cover - NumPy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as features
    return dict(features)


@functools.cache
def _libmvec_functions() -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """``(level, flags, unary, binary)``: the widest instruction set this processor and the
    installed libmvec both support, and the functions whose variants (``double`` and
    ``float``, every width the level's loops may call) libmvec exports; ``("", (), (), ())``
    where there is none."""
    none: tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ("", (), (), ())
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return none
    try:
        lib = ctypes.CDLL("libmvec.so.1")
    except OSError:
        return none
    features = _cpu_features()
    for level, needs, letters, flags in _LEVELS:
        if not all(features.get(f) for f in needs):
            continue

        def exported(name: str, args: str, letters: str = letters) -> bool:
            return all(
                hasattr(lib, f"_ZGV{k}N{_WIDTHS[k][0]}{args}_{name}")
                and hasattr(lib, f"_ZGV{k}N{_WIDTHS[k][1]}{args}_{name}f")
                for k in letters
            )

        unary = tuple(f for f in _UNARY if exported(f, "v"))
        binary = tuple(f for f in _BINARY if exported(f, "vv"))
        if unary:
            return level, (*flags, "-fopenmp-simd"), unary, binary
    return none


@functools.cache
def _code(
    level: str, flags: tuple[str, ...], unary: tuple[str, ...], binary: tuple[str, ...]
) -> VectorMathCode:
    lines = [f"/* opweave: glibc's vector math functions (libmvec, {level}). */"]
    for name in unary:
        for c_type, suffix in (("double", ""), ("float", "f")):
            lines.append("#pragma omp declare simd notinbranch")
            lines.append(f"extern {c_type} {name}{suffix}({c_type});")
    for name in binary:
        for c_type, suffix in (("double", ""), ("float", "f")):
            lines.append("#pragma omp declare simd notinbranch")
            lines.append(f"extern {c_type} {name}{suffix}({c_type}, {c_type});")
    return VectorMathCode("\n".join(lines) + "\n", flags, ("mvec",), level)


def vector_math_code() -> VectorMathCode | None:
    """The libmvec declarations and flags, or ``None`` when ``config.c__vector_math`` is off
    or this machine cannot use them (see the module docstring)."""
    from opweave import config

    if not config.c__vector_math:
        return None
    level, flags, unary, binary = _libmvec_functions()
    if not unary:
        return None
    return _code(level, flags, unary, binary)
