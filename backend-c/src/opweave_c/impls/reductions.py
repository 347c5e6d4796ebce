"""C code for the reductions of :mod:`opweave.tensor.reductions`.

``CAReduce`` (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any`` and a bare
``CAReduce`` of ``add``, ``mul``, ``maximum``, ``minimum``, ``and_``, ``or_`` or ``xor``)
over any set of axes and any strides, and ``Argmax``/``Argmin``. The values, dtypes and
errors are those of the Python backend (:mod:`opweave_python.impls.elemwise`,
:mod:`opweave_python.impls.math`):

* the input is converted to the accumulation dtype element by element, the result to
  the output dtype at the end (a bool result is ``acc != 0``, as NumPy casts);
* signed integer sums and products wrap around like NumPy's (they are computed in the
  unsigned type of the same width: no undefined behaviour);
* float sums are pairwise (NumPy's scheme: blocks of 128 with 8 accumulators), so they
  are as accurate as ``numpy.sum``; ``Max``/``Min`` propagate NaN; ``Argmax``/``Argmin``
  return the first maximum (the first NaN when there is one);
* an empty ``Sum`` is 0, an empty ``Prod`` 1, an empty ``Max``/``Min``/``Argmax``/``Argmin``
  raises ``ValueError`` (as NumPy, whenever the reduced axes hold no element).

The loops are planned at run time from the input's strides (``opw_red_plan``): length-1
axes are dropped, axes are ordered by stride and contiguous ones merged, and the innermost
loop either reduces a row into one accumulator (8 independent accumulators, so GCC can
vectorise a contiguous row) or combines a row into a row of accumulators (when the kept
axes are the inner ones, as in ``sum(x, axis=0)`` of a C-ordered matrix).
"""

from __future__ import annotations

import hashlib
from types import MappingProxyType
from typing import Any

import numpy as np

import opweave.scalar.basic as sb
from opweave.graph.basic import Apply
from opweave.tensor.elemwise import CAReduce
from opweave.tensor.map_reduce import MapReduce
from opweave.tensor.reductions import Argmax, Argmin
from opweave_c.impls.scalar_ops import (
    C_TYPE,
    COMPILE_ARGS,
    SCALAR_C_SUPPORT,
    OwnCOps,
    scalar_c_code,
)
from opweave_c.impls.scalar_ops import VERSION as SCALAR_VERSION
from opweave_c.impls.types import C_DTYPES
from opweave_c.vector_math import vector_math_code

__all__ = ["C_OPS", "ArgReduceC", "CAReduceC", "MapReduceC"]

#: Bump when the generated C changes.
VERSION = (2,)

#: Scalar Op class of a CAReduce -> the name of its combination in the generated C.
_REDUCE_OPS: MappingProxyType[type, str] = MappingProxyType(
    {
        sb.Add: "add",
        sb.Mul: "mul",
        sb.Maximum: "max",
        sb.Minimum: "min",
        sb.AND: "and",
        sb.OR: "or",
        sb.XOR: "xor",
    }
)
#: The combination used when the accumulator is a bool (NumPy's ``add.reduce(..., dtype=bool)``
#: is a logical or, and so on).
_BOOL_OPS: MappingProxyType[str, str] = MappingProxyType(
    {"add": "or", "mul": "and", "max": "or", "min": "and", "and": "and", "or": "or", "xor": "xor"}
)
#: NumPy's names of the reductions without identity, for its error message.
_UFUNC_NAMES: MappingProxyType[str, str] = MappingProxyType({"max": "maximum", "min": "minimum"})

#: Shared by every reduction: the loop plan and an overlap test (one copy per module).
PLAN_SUPPORT = r"""
/* opweave reductions: a loop over an input, its axes reordered by stride. */
typedef void (*opw_red_kernel)(const char* x, npy_intp n, npy_intp xs, char* acc,
                               npy_intp as);

typedef struct {
    int nd;
    npy_intp n[NPY_MAXDIMS];
    npy_intp is[NPY_MAXDIMS]; /* input byte strides */
    npy_intp as[NPY_MAXDIMS]; /* accumulator byte strides (0 on reduced axes) */
    int red[NPY_MAXDIMS];
} opw_red_plan;

static npy_intp opw_red_abs(npy_intp v) { return v < 0 ? -v : v; }

/* The loops below keep 8 independent accumulators (NumPy's order of operations). Built
 * for 512-bit vectors they would be one vector and one dependency chain: GCC builds them
 * for 256-bit vectors, two chains, where the module targets AVX-512. */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#define OPW_RED_LOOP __attribute__((target("prefer-vector-width=256"))) OPW_HOT
#else
#define OPW_RED_LOOP OPW_HOT
#endif

/* Plan the loops over a non-empty ``x`` whose axes ``reduced[i] != 0`` are reduced into a
 * C-contiguous accumulator of elements of ``acc_size`` bytes over the kept axes. */
static void opw_red_plan_init(opw_red_plan* pl, PyArrayObject* x, const int* reduced,
                              npy_intp acc_size) {
    int nd = PyArray_NDIM(x), i, j, k = 0;
    const npy_intp* dims = PyArray_DIMS(x);
    const npy_intp* strides = PyArray_STRIDES(x);
    npy_intp as[NPY_MAXDIMS];
    npy_intp ostride = acc_size;
    for (i = nd - 1; i >= 0; i--) {
        if (reduced[i]) {
            as[i] = 0;
        } else {
            as[i] = ostride;
            ostride *= dims[i];
        }
    }
    for (i = 0; i < nd; i++) {
        if (dims[i] == 1) continue;
        pl->n[k] = dims[i];
        pl->is[k] = strides[i];
        pl->as[k] = as[i];
        pl->red[k] = reduced[i] != 0;
        k++;
    }
    /* Largest input stride outermost (insertion sort: stable, so C order on ties). */
    for (i = 1; i < k; i++) {
        npy_intp n = pl->n[i], s = pl->is[i], a = pl->as[i];
        int r = pl->red[i];
        for (j = i - 1; j >= 0; j--) {
            npy_intp sj = opw_red_abs(pl->is[j]), si = opw_red_abs(s);
            if (sj > si || (sj == si && opw_red_abs(pl->as[j]) >= opw_red_abs(a))) break;
            pl->n[j + 1] = pl->n[j];
            pl->is[j + 1] = pl->is[j];
            pl->as[j + 1] = pl->as[j];
            pl->red[j + 1] = pl->red[j];
        }
        pl->n[j + 1] = n;
        pl->is[j + 1] = s;
        pl->as[j + 1] = a;
        pl->red[j + 1] = r;
    }
    /* Merge an axis into the next inner one when together they are one strided axis. */
    for (i = k - 2; i >= 0; i--) {
        if (pl->red[i] == pl->red[i + 1] && pl->is[i] == pl->is[i + 1] * pl->n[i + 1] &&
            pl->as[i] == pl->as[i + 1] * pl->n[i + 1]) {
            pl->n[i + 1] *= pl->n[i];
            for (j = i; j < k - 1; j++) {
                pl->n[j] = pl->n[j + 1];
                pl->is[j] = pl->is[j + 1];
                pl->as[j] = pl->as[j + 1];
                pl->red[j] = pl->red[j + 1];
            }
            k--;
        }
    }
    /* A short kept axis innermost, a reduced one outside it: reduce the long rows instead. */
    if (k >= 2 && !pl->red[k - 1] && pl->red[k - 2] && pl->n[k - 1] <= 4 &&
        pl->n[k - 2] >= 64) {
        npy_intp n = pl->n[k - 1], s = pl->is[k - 1], a = pl->as[k - 1];
        pl->n[k - 1] = pl->n[k - 2];
        pl->is[k - 1] = pl->is[k - 2];
        pl->as[k - 1] = pl->as[k - 2];
        pl->red[k - 1] = 1;
        pl->n[k - 2] = n;
        pl->is[k - 2] = s;
        pl->as[k - 2] = a;
        pl->red[k - 2] = 0;
    }
    if (k == 0) {
        pl->n[0] = 1;
        pl->is[0] = 0;
        pl->as[0] = 0;
        pl->red[0] = 1;
        k = 1;
    }
    pl->nd = k;
}

/* Run the plan: ``red`` when the innermost axis is reduced, ``comb`` otherwise. */
OPW_HOT static void opw_red_plan_run(const opw_red_plan* pl, const char* x, char* acc,
                             opw_red_kernel red, opw_red_kernel comb) {
    int last = pl->nd - 1, d;
    npy_intp idx[NPY_MAXDIMS];
    opw_red_kernel kernel = pl->red[last] ? red : comb;
    const npy_intp n = pl->n[last], xs = pl->is[last], as = pl->as[last];
    for (d = 0; d < last; d++) idx[d] = 0;
    for (;;) {
        kernel(x, n, xs, acc, as);
        for (d = last - 1; d >= 0; d--) {
            x += pl->is[d];
            acc += pl->as[d];
            if (++idx[d] < pl->n[d]) break;
            x -= pl->is[d] * pl->n[d];
            acc -= pl->as[d] * pl->n[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}


"""

# ====================================================================== dtypes


def _ctype(dtype: str) -> str:
    return f"npy_{dtype}"


def _typenum(dtype: str) -> str:
    return f"NPY_{dtype.upper()}"


def _kind(dtype: str) -> str:
    return np.dtype(dtype).kind


def _int_limits(dtype: str) -> tuple[str, str]:
    info = np.iinfo(dtype)
    bits = info.bits
    if info.min == 0:
        return "0", f"NPY_MAX_UINT{bits}"
    return f"NPY_MIN_INT{bits}", f"NPY_MAX_INT{bits}"


class _Spec:
    """The C expressions of one reduction: input ``in_dt`` accumulated in ``acc_dt`` with
    ``op``.

    ``cmp`` is the C type computed in (the unsigned twin of a signed integer accumulator
    for sums and products, so that overflow wraps as in NumPy); accumulator buffers hold
    ``cmp`` elements, which have the size of ``acc_dt``'s.
    """

    def __init__(self, op: str, in_dt: str, acc_dt: str) -> None:
        self.in_dt = in_dt
        self.acc_dt = acc_dt
        self.acc_kind = _kind(acc_dt)
        self.op = _BOOL_OPS[op] if self.acc_kind == "b" else op
        self.in_t = _ctype(in_dt)
        self.acc_t = _ctype(acc_dt)
        if self.acc_kind == "i" and self.op in ("add", "mul"):
            self.cmp_t = "npy_u" + acc_dt
        else:
            self.cmp_t = self.acc_t
        self.key = f"{self.op}_{in_dt}_{acc_dt}"
        self.is_float = self.acc_kind == "f"
        self.pairwise = self.is_float and self.op == "add"

    def uses_ext(self) -> bool:
        """True when contiguous rows go through ``opw_red_ext``/``opw_red_col`` (extrema
        accumulated in the input's dtype)."""
        return self.op in ("max", "min") and self.in_dt == self.acc_dt

    def support(self) -> list[str]:
        """The support code of the kernels, the kernels last."""
        extra = [SIMD_SUPPORT, _ext_support(self.in_dt, self.op)] if self.uses_ext() else []
        return [*extra, self.kernels()]

    def supported(self) -> bool:
        """False for combinations without C (bitwise operations of floats)."""
        return not (self.is_float and self.op in ("and", "or", "xor"))

    def load(self, v: str) -> str:
        """An input element ``v`` as a ``cmp`` value."""
        if self.acc_kind == "b":
            return f"(({v}) != 0)"
        if self.cmp_t != self.acc_t:
            return f"({self.cmp_t})({self.acc_t})({v})"
        return f"({self.cmp_t})({v})"

    def combine(self, a: str, b: str) -> str:
        """``a op b`` for ``cmp`` values (``max``/``min`` propagate a NaN of either)."""
        op = self.op
        if op == "add":
            return f"({a} + {b})"
        if op == "mul":
            return f"({a} * {b})"
        if op == "and":
            return f"({a} & {b})"
        if op == "or":
            return f"({a} | {b})"
        if op == "xor":
            return f"({a} ^ {b})"
        cmp = ">" if op == "max" else "<"
        if self.is_float:
            return f"(({b} {cmp} {a} || {b} != {b}) ? {b} : {a})"
        return f"(({b} {cmp} {a}) ? {b} : {a})"

    def identity(self) -> str:
        """The value accumulators start from: the identity, the type's extreme for integer
        ``max``/``min``, infinity for float ones, and ``-0.0`` for float sums (so that a
        sum of negative zeros is ``-0.0``, as NumPy's)."""
        op, kind = self.op, self.acc_kind
        if op == "add":
            return "-0.0" if kind == "f" else "0"
        if op == "mul":
            return "1"
        if op in ("or", "xor"):
            return "0"
        if op == "and":
            return "1" if kind == "b" else f"(({self.cmp_t})~({self.cmp_t})0)"
        if kind == "f":
            return "-NPY_INFINITY" if op == "max" else "NPY_INFINITY"
        low, high = _int_limits(self.acc_dt)
        return low if op == "max" else high

    def empty_value(self) -> str:
        """The value of a reduction over no element (only for Ops with an identity)."""
        return "0.0" if self.pairwise else self.identity()

    # ------------------------------------------------------------------ kernels

    def _reduce_loop(self, read: str) -> str:
        """8 accumulators over ``n`` elements read by ``read`` (a format with ``{i}``)."""
        ident, cmp_t = self.identity(), self.cmp_t
        acc = ", ".join(f"r{k} = ({cmp_t}){ident}" for k in range(8))
        body = "\n".join(
            f"            r{k} = {self.combine(f'r{k}', self.load(read.format(i=f'i + {k}')))};"
            for k in range(8)
        )
        tail = self.combine("r0", self.load(read.format(i="i")))
        total = self.combine(
            self.combine(self.combine("r0", "r1"), self.combine("r2", "r3")),
            self.combine(self.combine("r4", "r5"), self.combine("r6", "r7")),
        )
        return f"""
        {cmp_t} {acc};
        npy_intp i = 0;
        for (; i + 8 <= n; i += 8) {{
{body}
        }}
        for (; i < n; i++) r0 = {tail};
        return {total};"""

    def _pairwise(self, suffix: str, read: str, params: str, args: str) -> str:
        """NumPy's pairwise summation (blocks of at most 128 elements)."""
        name = f"opw_red_pw{suffix}_{self.key}"
        return f"""
OPW_RED_LOOP static {self.cmp_t} {name}({params}) {{
    if (n <= 128) {{{self._reduce_loop(read)}
    }} else {{
        npy_intp n2 = n / 2;
        n2 -= n2 % 8;
        return {name}({args.format(n="n2", off="0")}) + {name}({args.format(n="n - n2", off="n2")});
    }}
}}"""

    def kernels(self) -> str:
        """The row kernels ``opw_red_r_<key>`` (a row into one accumulator) and
        ``opw_red_c_<key>`` (a row into a row of accumulators)."""
        k, in_t, cmp_t = self.key, self.in_t, self.cmp_t
        contig_read = "x[{i}]"
        strided_read = f"*(const {in_t}*)(p + ({{i}}) * xs)"
        if self.pairwise:
            contig = self._pairwise(
                "c", contig_read, f"const {in_t}* x, npy_intp n", "x + {off}, {n}"
            )
            strided = self._pairwise(
                "s",
                strided_read,
                "const char* p, npy_intp n, npy_intp xs",
                "p + ({off}) * xs, {n}, xs",
            )
            row = f"""
OPW_HOT static void opw_red_r_{k}(const char* p, npy_intp n, npy_intp xs, char* acc, npy_intp as) {{
    {cmp_t} r;
    (void)as;
    if (xs == (npy_intp)sizeof({in_t})) r = opw_red_pwc_{k}((const {in_t}*)p, n);
    else r = opw_red_pws_{k}(p, n, xs);
    *({cmp_t}*)acc = *({cmp_t}*)acc + r;
}}"""
        else:
            loop = self._reduce_loop(contig_read)
            if self.uses_ext():
                loop = f"\n    return opw_red_ext_{self.op}_{self.in_dt}(x, n);"
            contig = f"""
OPW_RED_LOOP static {cmp_t} opw_red_rc_{k}(const {in_t}* x, npy_intp n) {{{loop}
}}"""
            strided = f"""
OPW_RED_LOOP static {cmp_t} opw_red_rs_{k}(const char* p, npy_intp n, npy_intp xs) {{{
                self._reduce_loop(strided_read)
            }
}}"""
            row = f"""
OPW_HOT static void opw_red_r_{k}(const char* p, npy_intp n, npy_intp xs, char* acc, npy_intp as) {{
    {cmp_t} r;
    (void)as;
    if (xs == (npy_intp)sizeof({in_t})) r = opw_red_rc_{k}((const {in_t}*)p, n);
    else r = opw_red_rs_{k}(p, n, xs);
    *({cmp_t}*)acc = {self.combine(f"*({cmp_t}*)acc", "r")};
}}"""
        comb_c = self.combine("a[i]", self.load("x[i]"))
        comb_s = self.combine(
            f"*({cmp_t}*)(acc + i * as)", self.load(f"*(const {in_t}*)(p + i * xs)")
        )
        col_c = f"for (i = 0; i < n; i++) a[i] = {comb_c};"
        if self.uses_ext():
            col_c = f"opw_red_col_{self.op}_{self.in_dt}(a, x, n); (void)i;"
        comb = f"""
OPW_HOT static void opw_red_c_{k}(const char* p, npy_intp n, npy_intp xs, char* acc, npy_intp as) {{
    npy_intp i;
    if (xs == (npy_intp)sizeof({in_t}) && as == (npy_intp)sizeof({cmp_t})) {{
        const {in_t}* x = (const {in_t}*)p;
        {cmp_t}* a = ({cmp_t}*)acc;
        {col_c}
    }} else {{
        for (i = 0; i < n; i++) *({cmp_t}*)(acc + i * as) = {comb_s};
    }}
}}"""
        return f"/* opweave reduction kernels {k} */" + contig + strided + row + comb + "\n"


#: SSE2 (every x86-64 CPU) for the float extrema; other targets use the portable loops.
SIMD_SUPPORT = r"""
/* opweave reductions: SSE2 for float maxima and minima where the target has it. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define OPW_RED_SSE2 1
#endif
"""

#: The SSE2 names of the float dtypes: vector type, intrinsic suffix, lanes.
_SSE2: MappingProxyType[str, tuple[str, str, int]] = MappingProxyType(
    {"float64": ("__m128d", "pd", 2), "float32": ("__m128", "ps", 4)}
)


def _ext_support(dtype: str, direction: str) -> str:
    """``opw_red_ext_<dir>_<dtype>(x, n)``, the maximum (minimum) of a contiguous row (NaN
    when it holds one; the identity when empty), and ``opw_red_col_<dir>_<dtype>(a, x, n)``,
    ``a[i] = max(a[i], x[i])`` propagating NaN."""
    t = _ctype(dtype)
    key = f"{direction}_{dtype}"
    cmp = ">" if direction == "max" else "<"
    is_float = _kind(dtype) == "f"
    spec = _Spec(direction, dtype, dtype)
    ident = spec.identity()
    accs = ", ".join(f"r{k} = ({t}){ident}" for k in range(8))
    body = "\n".join(
        f"        {{ {t} v = x[i + {k}]; r{k} = v {cmp} r{k} ? v : r{k};"
        + (" q |= v != v;" if is_float else "")
        + " }"
        for k in range(8)
    )

    def pick(a: str, b: str) -> str:
        return f"({b} {cmp} {a} ? {b} : {a})"

    total = pick(pick(pick("r0", "r1"), pick("r2", "r3")), pick(pick("r4", "r5"), pick("r6", "r7")))
    nan_ret = "if (q) return (" + t + ")NPY_NAN;" if is_float else "(void)q;"
    nan_tail = " q |= v != v;" if is_float else ""
    portable = f"""
    {t} {accs};
    int q = 0;
    npy_intp i = 0;
    for (; i + 8 <= n; i += 8) {{
{body}
    }}
    for (; i < n; i++) {{ {t} v = x[i]; r0 = v {cmp} r0 ? v : r0;{nan_tail} }}
    {nan_ret}
    return {total};"""
    col = f"""
    npy_intp i = 0;
    for (; i < n; i++) {{ {t} v = x[i]; a[i] = {spec.combine("a[i]", "v")}; }}"""
    if dtype in _SSE2:
        vt, sx, lanes = _SSE2[dtype]
        fn = f"_mm_{direction}_{sx}"
        step = 4 * lanes
        loads = "\n".join(
            f"        {vt} a{k} = _mm_loadu_{sx}(x + i + {k * lanes});" for k in range(4)
        )
        sse_red = f"""
#if defined(OPW_RED_SSE2)
    {vt} r0 = _mm_set1_{sx}(({t}){ident}), r1 = r0, r2 = r0, r3 = r0, q = _mm_setzero_{sx}();
    {t} b[{step}], best = ({t}){ident};
    npy_intp i = 0;
    int k, nan;
    for (; i + {step} <= n; i += {step}) {{
{loads}
        r0 = {fn}(a0, r0);
        r1 = {fn}(a1, r1);
        r2 = {fn}(a2, r2);
        r3 = {fn}(a3, r3);
        q = _mm_or_{sx}(q, _mm_or_{sx}(_mm_or_{sx}(_mm_cmpunord_{sx}(a0, a0),
                                                 _mm_cmpunord_{sx}(a1, a1)),
                                   _mm_or_{sx}(_mm_cmpunord_{sx}(a2, a2),
                                                 _mm_cmpunord_{sx}(a3, a3))));
    }}
    _mm_storeu_{sx}(b, r0);
    _mm_storeu_{sx}(b + {lanes}, r1);
    _mm_storeu_{sx}(b + {2 * lanes}, r2);
    _mm_storeu_{sx}(b + {3 * lanes}, r3);
    nan = _mm_movemask_{sx}(q);
    for (k = 0; k < {step}; k++) best = b[k] {cmp} best ? b[k] : best;
    for (; i < n; i++) {{ {t} v = x[i]; best = v {cmp} best ? v : best; nan |= v != v; }}
    return nan ? ({t})NPY_NAN : best;
#else{portable}
#endif"""
        sse_col = f"""
#if defined(OPW_RED_SSE2)
    npy_intp i = 0;
    for (; i + {lanes} <= n; i += {lanes}) {{
        {vt} v = _mm_loadu_{sx}(x + i);
        {vt} m = {fn}(v, _mm_loadu_{sx}(a + i));
        {vt} u = _mm_cmpunord_{sx}(v, v);
        _mm_storeu_{sx}(a + i, _mm_or_{sx}(_mm_and_{sx}(u, v), _mm_andnot_{sx}(u, m)));
    }}
    for (; i < n; i++) {{ {t} v = x[i]; a[i] = {spec.combine("a[i]", "v")}; }}
#else{col}
#endif"""
        red_body, col_body = sse_red, sse_col
    else:
        red_body, col_body = portable, col
    return f"""
/* opweave reductions: the {direction}imum of contiguous {dtype} rows. */
OPW_HOT static {t} opw_red_ext_{key}(const {t}* x, npy_intp n) {{{red_body}
}}

OPW_HOT static void opw_red_col_{key}({t}* a, const {t}* x, npy_intp n) {{{col_body}
}}
"""


def _store(value: str, acc_t: str, out_dt: str) -> str:
    """A ``cmp`` value as an element of ``out_dt`` (through the accumulation type)."""
    if out_dt == "bool":
        return f"(npy_bool)(({acc_t})({value}) != 0)"
    return f"({_ctype(out_dt)})({acc_t})({value})"


def _mask(ndim: int, axes: tuple[int, ...]) -> str:
    return ", ".join("1" if i in axes else "0" for i in range(ndim)) if ndim else "0"


class CAReduceC:
    """The C code of one CAReduce node (see the module docstring).

    Parameters
    ----------
    node
        The node; its Op has ``axis``, ``dtype`` and ``acc_dtype`` resolved.
    op_name
        The combination (``add``, ``mul``, ``max``, ``min``, ``and``, ``or``, ``xor``).
    """

    def __init__(self, node: Apply, op_name: str, careduce: CAReduce | None = None) -> None:
        op = node.op if careduce is None else careduce
        self.ndim: int = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        self.axes: tuple[int, ...] = op.reduced_axes(self.ndim)  # type: ignore[attr-defined]
        self.in_dt: str = node.inputs[0].type.dtype  # type: ignore[attr-defined]
        self.out_dt: str = node.outputs[0].type.dtype  # type: ignore[attr-defined]
        self.acc_dt: str = op.acc_dtype or self.out_dt  # type: ignore[attr-defined]
        self.spec = self._spec(op_name)
        self.has_identity = op_name not in _UFUNC_NAMES
        self.ufunc_name = _UFUNC_NAMES.get(op_name, op_name)

    def _spec(self, op_name: str) -> _Spec:
        return _Spec(op_name, self.in_dt, self.acc_dt)

    def supported(self) -> bool:
        """True when the dtypes and the combination have C code."""
        dtypes = {self.in_dt, self.out_dt, self.acc_dt}
        return dtypes <= C_DTYPES and self.spec.supported()

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The plan helpers and this node's kernels."""
        return [PLAN_SUPPORT, *self.spec.support()]

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Reduce ``inputs[0]`` into ``outputs[0]``."""
        (x,), (z,) = inputs, outputs
        fail, spec = sub["fail"], self.spec
        cmp_t, key = spec.cmp_t, spec.key
        in_place = spec.acc_t == _ctype(self.out_dt)
        empty_check = ""
        if not self.has_identity:
            empty_check = f"""
    if (ngroup == 0) {{
        PyErr_SetString(PyExc_ValueError, "zero-size array to reduction operation "
                        "{self.ufunc_name} which has no identity");
        {fail}
    }}"""
        if in_place:
            acc_alloc = f"acc = ({cmp_t}*)PyArray_DATA({z});"
            finish = ""
        else:
            acc_alloc = f"""acc = ({cmp_t}*)PyMem_Malloc((size_t)(nout > 0 ? nout : 1) *
                                        sizeof({cmp_t}));
    if (!acc) {{ PyErr_NoMemory(); {fail} }}"""
            store = _store("acc[k]", spec.acc_t, self.out_dt)
            finish = f"""
    {{
        {_ctype(self.out_dt)}* o = ({_ctype(self.out_dt)}*)PyArray_DATA({z});
        for (k = 0; k < nout; k++) o[k] = {store};
        PyMem_Free(acc);
    }}"""
        ident = spec.identity()
        return f"""
{{
    static const int reduced[] = {{{_mask(self.ndim, self.axes)}}};
    const int nd = PyArray_NDIM({x});
    npy_intp odims[NPY_MAXDIMS];
    int ond = 0, i;
    npy_intp nout = 1, ngroup = 1, k;
    {cmp_t}* acc;
    {cmp_t} init;
    for (i = 0; i < nd; i++) {{
        if (reduced[i]) ngroup *= PyArray_DIMS({x})[i];
        else {{ odims[ond++] = PyArray_DIMS({x})[i]; nout *= PyArray_DIMS({x})[i]; }}
    }}{empty_check}
    if ({z} && opw_overlap({z}, {x})) {{ Py_DECREF({z}); {z} = NULL; }}
    if (opw_prep_output(&{z}, ond, odims, {_typenum(self.out_dt)}) < 0) {fail}
    {acc_alloc}
    init = ngroup == 0 ? ({cmp_t}){spec.empty_value()} : ({cmp_t}){ident};
    for (k = 0; k < nout; k++) acc[k] = init;
    if (nout > 0 && ngroup > 0) {{
        opw_red_plan plan;
        opw_red_plan_init(&plan, {x}, reduced, (npy_intp)sizeof({cmp_t}));
        opw_red_plan_run(&plan, PyArray_BYTES({x}), (char*)acc, opw_red_r_{key},
                         opw_red_c_{key});
    }}{finish}
}}
"""

    def c_code_cache_version(self) -> tuple[int, ...]:
        """The version of this module's code."""
        return VERSION


class _MappedSpec(_Spec):
    """A reduction of ``fn(x)``: ``x`` of ``raw_dt`` mapped by the C function ``fn`` to
    ``mid_dt``, accumulated in ``acc_dt``."""

    def __init__(self, op: str, raw_dt: str, mid_dt: str, acc_dt: str, fn: str) -> None:
        super().__init__(op, mid_dt, acc_dt)
        self.in_dt = raw_dt
        self.in_t = _ctype(raw_dt)
        self.fn = fn
        self.key = f"{self.op}_{raw_dt}_{acc_dt}_{fn}"

    def uses_ext(self) -> bool:
        """Never: the SIMD extrema read unmapped elements."""
        return False

    def load(self, v: str) -> str:
        """The mapped element as a ``cmp`` value."""
        return super().load(f"{self.fn}({v})")


class MapReduceC(CAReduceC):
    """The C code of a :class:`~opweave.tensor.map_reduce.MapReduce` node: the reduction's
    loops, each element passed through the map (a ``static inline`` function of the
    Elemwise's scalar code) as it is read.

    Parameters
    ----------
    node
        The MapReduce node.
    op_name
        The reduction's combination.
    mid_dt
        The dtype of the mapped elements (the Elemwise's output dtype).
    body
        The scalar code computing ``opw_r0`` (of ``mid_dt``) from ``opw_a0``.
    """

    def __init__(self, node: Apply, op_name: str, mid_dt: str, body: str) -> None:
        self.mid_dt = mid_dt
        raw_dt = node.inputs[0].type.dtype  # type: ignore[attr-defined]
        digest = hashlib.sha256(f"{raw_dt}:{mid_dt}:{body}".encode()).hexdigest()[:16]
        self.fn = f"opw_map_{digest}"
        self.map_code = (
            f"static inline OPW_HOT {C_TYPE[mid_dt]} {self.fn}(const {C_TYPE[raw_dt]} opw_a0) {{\n"
            f"    {C_TYPE[mid_dt]} opw_r0;\n"
            + "\n".join("    " + line for line in body.splitlines())
            + "\n    return opw_r0;\n}\n"
        )
        super().__init__(node, op_name, careduce=node.op.careduce)  # type: ignore[attr-defined]

    def _spec(self, op_name: str) -> _Spec:
        return _MappedSpec(op_name, self.in_dt, self.mid_dt, self.acc_dt, self.fn)

    def supported(self) -> bool:
        """True when the dtypes and the combination have C code."""
        return self.mid_dt in C_DTYPES and super().supported()

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """Vector math declarations, the scalar helpers, the map, the reduction's code."""
        vec = vector_math_code()
        head = [vec.support_code] if vec else []
        return [*head, SCALAR_C_SUPPORT, self.map_code, *super().c_support_code()]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction (as in Elemwise loops); vector math flags."""
        vec = vector_math_code()
        return [*COMPILE_ARGS, *(vec.compile_args if vec else ())]

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """libmvec where vector math applies."""
        vec = vector_math_code()
        return list(vec.libraries) if vec else []

    def c_code_cache_version(self) -> tuple[int, ...]:
        """The reductions' version and the scalar code's."""
        return (*VERSION, *SCALAR_VERSION)


# ====================================================================== Argmax / Argmin


def _arg_support(dtype: str, direction: str) -> str:
    """``opw_arg_<dir>_<dtype>``: the index of the first extremum of each group."""
    t = _ctype(dtype)
    cmp = ">" if direction == "max" else "<"
    key = f"{direction}_{dtype}"
    is_float = _kind(dtype) == "f"
    nan_row = "if (v != v) { *bv = v; *bi = base + i; return 1; }" if is_float else "(void)0;"
    nan_col = "|| (v != v && b[i] == b[i])" if is_float else ""
    first_nan = "(bv != bv)" if is_float else "0"
    nan_m = "m != m" if is_float else "0"
    return f"""
/* opweave arg-reduction {key}. A row of a group (its first element at flat index
 * ``base``) against the best so far: 1 once a NaN is found (the search stops). Contiguous
 * rows go by blocks: a vectorised extremum, then a scan of the blocks that improve. */
OPW_HOT static int opw_arg_row_{key}(const char* p, npy_intp n, npy_intp xs, {t}* bv, npy_int64* bi,
                             npy_int64 base) {{
    npy_intp i;
    {t} best = *bv;
    npy_int64 at = -1;
    if (xs == (npy_intp)sizeof({t})) {{
        const {t}* x = (const {t}*)p;
        npy_intp s0, len;
        for (s0 = 0; s0 < n; s0 += 256) {{
            {t} m;
            len = n - s0 < 256 ? n - s0 : 256;
            m = opw_red_ext_{key}(x + s0, len);
            if ({nan_m}) {{
                for (i = s0; x[i] == x[i]; i++) ;
                *bv = x[i];
                *bi = base + i;
                return 1;
            }}
            if (m {cmp} best) {{
                for (i = s0; x[i] != m; i++) ;
                best = m;
                at = i;
            }}
        }}
    }} else {{
        for (i = 0; i < n; i++) {{
            {t} v = *(const {t}*)(p + i * xs);
            if (v {cmp} best) {{ best = v; at = i; }}
            else {nan_row}
        }}
    }}
    if (at >= 0) {{ *bv = best; *bi = base + at; }}
    return 0;
}}

/* One reduced position ``f`` for a row of outputs (``first``: initialise them). */
OPW_HOT static void opw_arg_col_{key}(const char* p, npy_intp n, npy_intp xs, {t}* b,
                                      npy_int64* idx, npy_int64 f, int first) {{
    npy_intp i;
    if (first) {{
        for (i = 0; i < n; i++) {{ b[i] = *(const {t}*)(p + i * xs); idx[i] = 0; }}
        return;
    }}
    for (i = 0; i < n; i++) {{
        {t} v = *(const {t}*)(p + i * xs);
        if (v {cmp} b[i] {nan_col}) {{ b[i] = v; idx[i] = f; }}
    }}
}}

/* Reduce ``x`` (no empty group) into ``out`` (C-contiguous, the kept axes). */
static int opw_arg_{key}(PyArrayObject* x, const int* reduced, npy_int64* out) {{
    const int nd = PyArray_NDIM(x);
    const npy_intp* dims = PyArray_DIMS(x);
    const npy_intp* st = PyArray_STRIDES(x);
    int kept[NPY_MAXDIMS], red[NPY_MAXDIMS], nk = 0, nr = 0, d;
    npy_intp ki[NPY_MAXDIMS], ri[NPY_MAXDIMS], nout = 1, o, rn, rs, kn, ks;
    const char* base = PyArray_BYTES(x);
    for (d = 0; d < nd; d++) {{
        if (reduced[d]) red[nr++] = d;
        else {{ kept[nk++] = d; nout *= dims[d]; }}
    }}
    for (d = 0; d < nd; d++) ki[d] = ri[d] = 0;
    if (nout == 0) return 0;
    rn = nr ? dims[red[nr - 1]] : 1;
    rs = nr ? st[red[nr - 1]] : 0;
    kn = nk ? dims[kept[nk - 1]] : 1;
    ks = nk ? st[kept[nk - 1]] : 0;
    if (nk && kn > 1 && (rn == 1 || opw_red_abs(ks) < opw_red_abs(rs))) {{
        /* The kept axes are the inner ones: a row of candidates per reduced position. */
        {t}* b = ({t}*)PyMem_Malloc((size_t)nout * sizeof({t}));
        npy_int64 f = 0;
        const char* rp = base;
        if (!b) {{ PyErr_NoMemory(); return -1; }}
        for (;;) {{
            const char* kp = rp;
            o = 0;
            for (;;) {{
                opw_arg_col_{key}(kp, kn, ks, b + o, out + o, f, f == 0);
                o += kn;
                for (d = nk - 2; d >= 0; d--) {{
                    kp += st[kept[d]];
                    if (++ki[d] < dims[kept[d]]) break;
                    kp -= st[kept[d]] * dims[kept[d]];
                    ki[d] = 0;
                }}
                if (d < 0) break;
            }}
            f++;
            for (d = nr - 1; d >= 0; d--) {{
                rp += st[red[d]];
                if (++ri[d] < dims[red[d]]) break;
                rp -= st[red[d]] * dims[red[d]];
                ri[d] = 0;
            }}
            if (d < 0) break;
        }}
        PyMem_Free(b);
        return 0;
    }}
    /* Otherwise one group at a time, its rows in C order. */
    {{
        const char* kp = base;
        for (o = 0; o < nout; o++) {{
            const char* rp = kp;
            {t} bv = *(const {t}*)kp;
            npy_int64 bi = 0, f = 0;
            if (!{first_nan}) {{
                for (;;) {{
                    if (opw_arg_row_{key}(rp, rn, rs, &bv, &bi, f)) break;
                    f += rn;
                    for (d = nr - 2; d >= 0; d--) {{
                        rp += st[red[d]];
                        if (++ri[d] < dims[red[d]]) break;
                        rp -= st[red[d]] * dims[red[d]];
                        ri[d] = 0;
                    }}
                    if (d < 0) break;
                }}
                for (d = 0; d < nr; d++) ri[d] = 0;
            }}
            out[o] = bi;
            for (d = nk - 1; d >= 0; d--) {{
                kp += st[kept[d]];
                if (++ki[d] < dims[kept[d]]) break;
                kp -= st[kept[d]] * dims[kept[d]];
                ki[d] = 0;
            }}
        }}
    }}
    return 0;
}}
"""


class ArgReduceC:
    """The C code of an ``Argmax``/``Argmin`` node: int64 indices, several axes flattened
    in C order, the first extremum (or first NaN) wins, empty groups raise ``ValueError``.
    """

    def __init__(self, node: Apply) -> None:
        op = node.op
        self.ndim: int = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        axis = op.axis  # type: ignore[attr-defined]
        self.axes = tuple(range(self.ndim)) if axis is None else tuple(sorted(axis))
        self.dtype: str = node.inputs[0].type.dtype  # type: ignore[attr-defined]
        self.direction = "min" if isinstance(op, Argmin) else "max"

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared plan helpers and this dtype's kernels."""
        return [
            PLAN_SUPPORT,
            SIMD_SUPPORT,
            _ext_support(self.dtype, self.direction),
            _arg_support(self.dtype, self.direction),
        ]

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """The indices of ``inputs[0]``'s extrema into ``outputs[0]``."""
        (x,), (z,) = inputs, outputs
        fail = sub["fail"]
        return f"""
{{
    static const int reduced[] = {{{_mask(self.ndim, self.axes)}}};
    const int nd = PyArray_NDIM({x});
    npy_intp odims[NPY_MAXDIMS];
    int ond = 0, i;
    npy_intp ngroup = 1;
    for (i = 0; i < nd; i++) {{
        if (reduced[i]) ngroup *= PyArray_DIMS({x})[i];
        else odims[ond++] = PyArray_DIMS({x})[i];
    }}
    if (ngroup == 0) {{
        PyErr_SetString(PyExc_ValueError,
                        "attempt to get arg{self.direction} of an empty sequence");
        {fail}
    }}
    if ({z} && opw_overlap({z}, {x})) {{ Py_DECREF({z}); {z} = NULL; }}
    if (opw_prep_output(&{z}, ond, odims, NPY_INT64) < 0) {fail}
    if (opw_arg_{self.direction}_{self.dtype}({x}, reduced,
                                               (npy_int64*)PyArray_DATA({z})) < 0) {fail}
}}
"""

    def c_code_cache_version(self) -> tuple[int, ...]:
        """The version of this module's code."""
        return VERSION


# ====================================================================== factories


def _reduce_name(op: CAReduce) -> str | None:
    for cls in type(op.scalar_op).__mro__:
        name = _REDUCE_OPS.get(cls)
        if name is not None:
            return name
    return None


def _careduce(op: CAReduce, node: Apply) -> CAReduceC | None:
    name = _reduce_name(op)
    if name is None:
        return None
    impl = CAReduceC(node, name)
    return impl if impl.supported() else None


def _map_reduce(op: MapReduce, node: Apply) -> MapReduceC | None:
    name = _reduce_name(op.careduce)
    if name is None:
        return None
    raw_dt = node.inputs[0].type.dtype  # type: ignore[attr-defined]
    mapped_node, _ = op.unfused(node.inputs[0])
    mid_dt = mapped_node.outputs[0].type.dtype  # type: ignore[attr-defined]
    if raw_dt not in C_DTYPES or mid_dt not in C_DTYPES:
        return None
    own = OwnCOps()
    body = scalar_c_code(
        op.elemwise.scalar_op,
        [raw_dt],
        [mid_dt],
        ["opw_a0"],
        ["opw_r0"],
        [False],
        prefix="opw_s_",
        sub={"fail": "return -1;", "id": "0"},
        own=own,
    )
    if body is None or own.snippets("c_support_code") or own.versions() != ():
        return None  # scalar Ops with C of their own may fail: not in a reduction loop
    impl = MapReduceC(node, name, mid_dt, body)
    return impl if impl.supported() else None


def _argreduce(op: Argmax, node: Apply) -> ArgReduceC | None:
    if node.inputs[0].type.dtype not in C_DTYPES:  # type: ignore[attr-defined]
        return None
    return ArgReduceC(node)


#: Op class -> ``fn(op, node)`` giving the node's C implementation (or ``None``).
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {CAReduce: _careduce, MapReduce: _map_reduce, Argmax: _argreduce, Argmin: _argreduce}
)
