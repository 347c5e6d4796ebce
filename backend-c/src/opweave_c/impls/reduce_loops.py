"""The reduction loops that the C of ``CAReduce``, ``MapReduce``, ``Argmax`` and ``Argmin`` share.

The Ops' tables are in :mod:`opweave_c.impls.elemwise` (``CAReduce``),
:mod:`opweave_c.impls.map_reduce` and :mod:`opweave_c.impls.reductions`.

``CAReduce`` (``Sum``, ``Prod``, ``Max``, ``Min``, ``All``, ``Any``, ``ProdWithoutZeros``
and a bare ``CAReduce`` of ``add``, ``mul``, ``maximum``, ``minimum``, ``and_``, ``or_``,
``xor`` or ``mul_without_zeros``)
over any set of axes and any strides, and ``Argmax``/``Argmin``. The values, dtypes and
errors are those of the Python backend (:mod:`opweave_python.impls.elemwise`,
:mod:`opweave_python.impls.math`):

* the input is converted to the accumulation dtype element by element, the result to
  the output dtype at the end (a bool result is ``acc != 0``, a float one converts to an
  integer as NumPy's casts on x86-64 do, out-of-range values included);
* signed integer sums and products wrap around like NumPy's (they are computed in the
  unsigned type of the same width, products of narrow ones in ``npy_uint32``: no undefined
  behaviour);
* float sums are pairwise (NumPy's scheme: blocks of 128 with 8 accumulators), so they
  are as accurate as ``numpy.sum``; ``Max``/``Min`` propagate NaN; ``Argmax``/``Argmin``
  return the first maximum (the first NaN when there is one);
* an empty ``Sum`` is 0, an empty ``Prod`` 1, an empty ``Max``/``Min``/``Argmax``/``Argmin``
  raises ``ValueError`` (as NumPy, whenever the reduced axes hold no element);
* ``ProdWithoutZeros`` (``mul_nz`` in the generated C) skips zeros: its accumulators start
  at 0, its identity, which the combination ``a == 0 ? b : (b == 0 ? a : a * b)`` treats
  as "nothing yet", so a group without a non-zero element gives 0.

The loops are planned at run time from the input's strides (``opw_red_plan``): length-1
axes are dropped, axes are ordered by stride and contiguous ones merged, and the innermost
loop either reduces a row into one accumulator (8 independent accumulators, so GCC can
vectorise a contiguous row) or combines a row into a row of accumulators (when the kept
axes are the inner ones, as in ``sum(x, axis=0)`` of a C-ordered matrix).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

import opweave.scalar.basic as sb
from opweave.graph.basic import Apply
from opweave.tensor.elemwise import CAReduce
from opweave_c.impls.common import axes_mask, ctype, dtype_kind, typenum
from opweave_c.impls.csource import snippet
from opweave_c.impls.scalar_basic import FLOAT_TO_INT_SUPPORT
from opweave_c.impls.tensor_type import C_DTYPES

__all__ = [
    "PLAN_SUPPORT",
    "SIMD_SUPPORT",
    "VERSION",
    "CAReduceC",
    "ReduceSpec",
    "ext_support",
    "reduce_name",
]

#: Bump when the generated C changes.
VERSION = (5,)

#: Scalar Op class of a CAReduce -> the name of its combination in the generated C.
_REDUCE_OPS: MappingProxyType[type, str] = MappingProxyType(
    {
        sb.Add: "add",
        sb.Mul: "mul",
        sb.MulWithoutZeros: "mul_nz",
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
    {
        "add": "or",
        "mul": "and",
        "mul_nz": "or",
        "max": "or",
        "min": "and",
        "and": "and",
        "or": "or",
        "xor": "xor",
    }
)
#: NumPy's names of the reductions without identity, for its error message.
_UFUNC_NAMES: MappingProxyType[str, str] = MappingProxyType({"max": "maximum", "min": "minimum"})

#: The loop plan every reduction runs (``csrc/reduce_plan.h``): part of the runtime, so
#: compiled once into the runtime's object (:func:`opweave_c.module.runtime_object_source`)
#: where a module links with it.
REDUCE_PLAN = (Path(__file__).parent.parent / "csrc" / "reduce_plan.h").read_text()
#: Shared by every reduction: the plan and the loops' attributes (one copy per module).
PLAN_SUPPORT = REDUCE_PLAN + "\n" + snippet("reduce_loops.c", "plan")

# ====================================================================== dtypes


def _int_limits(dtype: str) -> tuple[str, str]:
    info = np.iinfo(dtype)
    bits = info.bits
    if info.min == 0:
        return "0", f"NPY_MAX_UINT{bits}"
    return f"NPY_MIN_INT{bits}", f"NPY_MAX_INT{bits}"


class ReduceSpec:
    """The C expressions of one reduction: input ``in_dt`` accumulated in ``acc_dt`` with
    ``op``.

    ``cmp`` is the C type computed in (the unsigned twin of a signed integer accumulator
    for sums and products, so that overflow wraps as in NumPy); accumulator buffers hold
    ``cmp`` elements, which have the size of ``acc_dt``'s.
    """

    def __init__(self, op: str, in_dt: str, acc_dt: str) -> None:
        self.in_dt = in_dt
        self.acc_dt = acc_dt
        self.acc_kind = dtype_kind(acc_dt)
        self.op = _BOOL_OPS[op] if self.acc_kind == "b" else op
        self.in_t = ctype(in_dt)
        self.acc_t = ctype(acc_dt)
        if self.acc_kind == "i" and self.op in ("add", "mul", "mul_nz"):
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
        extra = [SIMD_SUPPORT, ext_support(self.in_dt, self.op)] if self.uses_ext() else []
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
            return self._product(a, b)
        if op == "mul_nz":
            return f"(({a}) == 0 ? ({b}) : (({b}) == 0 ? ({a}) : {self._product(a, b)}))"
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

    def _product(self, a: str, b: str) -> str:
        """``a * b`` of ``cmp`` values; narrow unsigned ones in ``npy_uint32`` (C would
        promote them to ``int``, whose overflow is undefined)."""
        if self.cmp_t in ("npy_uint8", "npy_uint16"):
            return f"(({self.cmp_t})((npy_uint32)({a}) * (npy_uint32)({b})))"
        return f"({a} * {b})"

    def identity(self) -> str:
        """The value accumulators start from: the identity, the type's extreme for integer
        ``max``/``min``, infinity for float ones (a float sum starts from ``+0.0``, as
        NumPy's: a sum of negative zeros is ``+0.0``)."""
        op, kind = self.op, self.acc_kind
        if op == "add":
            return "0.0" if kind == "f" else "0"
        if op == "mul_nz":
            return "0"
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

    def accumulators(self) -> str:
        """The declaration of the 8 accumulators ``r0`` ... ``r7``, at the identity."""
        ident, cmp_t = self.identity(), self.cmp_t
        return f"{cmp_t} " + ", ".join(f"r{k} = ({cmp_t}){ident}" for k in range(8)) + ";"

    def accumulate_eight(self, element: Callable[[int], str], indent: str) -> str:
        """The 8 statements combining element ``element(k)`` (a ``cmp`` value) into
        accumulator ``r<k>``, one per line after ``indent``."""
        return "\n".join(f"{indent}r{k} = {self.combine(f'r{k}', element(k))};" for k in range(8))

    def total(self) -> str:
        """The 8 accumulators combined pairwise: the reduction's value."""
        return self.combine(
            self.combine(self.combine("r0", "r1"), self.combine("r2", "r3")),
            self.combine(self.combine("r4", "r5"), self.combine("r6", "r7")),
        )

    def _reduce_loop(self, read: str) -> str:
        """8 accumulators over ``n`` elements read by ``read`` (a format with ``{i}``)."""
        body = self.accumulate_eight(lambda k: self.load(read.format(i=f"i + {k}")), " " * 12)
        tail = self.combine("r0", self.load(read.format(i="i")))
        return f"""
        {self.accumulators()}
        npy_intp i = 0;
        for (; i + 8 <= n; i += 8) {{
{body}
        }}
        for (; i < n; i++) r0 = {tail};
        return {self.total()};"""

    def _contig_loop(self) -> str:
        """The body reducing a contiguous row ``x`` of ``n`` elements (8 accumulators)."""
        return self._reduce_loop("x[{i}]")

    def _contig_column(self, combine: str) -> str:
        """The statement combining a contiguous row ``x`` into the accumulators ``a``
        (``combine`` is the combination of element ``i``)."""
        return f"for (i = 0; i < n; i++) a[i] = {combine};"

    def _pairwise(self, suffix: str, read: str, params: str, args: str) -> str:
        """NumPy's pairwise summation (blocks of at most 128 elements)."""
        name = f"opw_red_pw{suffix}_{self.key}"
        base = self._contig_loop() if suffix == "c" else self._reduce_loop(read)
        return f"""
OPW_RED_LOOP static {self.cmp_t} {name}({params}) {{
    if (n <= 128) {{{base}
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
            loop = self._contig_loop()
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
        col_c = self._contig_column(comb_c)
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
SIMD_SUPPORT = snippet("reduce_loops.c", "simd")

#: The SSE2 names of the float dtypes: vector type, intrinsic suffix, lanes.
_SSE2: MappingProxyType[str, tuple[str, str, int]] = MappingProxyType(
    {"float64": ("__m128d", "pd", 2), "float32": ("__m128", "ps", 4)}
)


def ext_support(dtype: str, direction: str) -> str:
    """``opw_red_ext_<dir>_<dtype>(x, n)``, the maximum (minimum) of a contiguous row (NaN
    when it holds one; the identity when empty), and ``opw_red_col_<dir>_<dtype>(a, x, n)``,
    ``a[i] = max(a[i], x[i])`` propagating NaN."""
    t = ctype(dtype)
    key = f"{direction}_{dtype}"
    cmp = ">" if direction == "max" else "<"
    is_float = dtype_kind(dtype) == "f"
    spec = ReduceSpec(direction, dtype, dtype)
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


def _converts_float_to_int(acc_dt: str, out_dt: str) -> bool:
    """Whether storing the accumulated value converts a float to an integer."""
    return dtype_kind(acc_dt) == "f" and dtype_kind(out_dt) in ("i", "u")


def _store(value: str, acc_dt: str, out_dt: str) -> str:
    """A ``cmp`` value as an element of ``out_dt`` (through the accumulation type); floats
    become integers as NumPy's casts make them (``FLOAT_TO_INT_SUPPORT``), not by C's
    conversion, undefined out of range."""
    acc_t = ctype(acc_dt)
    if out_dt == "bool":
        return f"(npy_bool)(({acc_t})({value}) != 0)"
    if _converts_float_to_int(acc_dt, out_dt):
        return f"opw_sc_f2i_{out_dt}((double)({acc_t})({value}))"
    return f"({ctype(out_dt)})({acc_t})({value})"


class CAReduceC:
    """The C code of one CAReduce node (see the module docstring).

    Parameters
    ----------
    node
        The node; its Op has ``axis``, ``dtype`` and ``acc_dtype`` resolved.
    op_name
        The combination (``add``, ``mul``, ``mul_nz``, ``max``, ``min``, ``and``, ``or``,
        ``xor``).
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

    def _spec(self, op_name: str) -> ReduceSpec:
        return ReduceSpec(op_name, self.in_dt, self.acc_dt)

    def supported(self) -> bool:
        """True when the dtypes and the combination have C code."""
        dtypes = {self.in_dt, self.out_dt, self.acc_dt}
        return dtypes <= C_DTYPES and self.spec.supported()

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The plan helpers, the float to integer conversions where the result needs
        them, and this node's kernels."""
        convert = [FLOAT_TO_INT_SUPPORT] if _converts_float_to_int(self.acc_dt, self.out_dt) else []
        return [PLAN_SUPPORT, *convert, *self.spec.support()]

    def c_code(
        self, node: Apply, name: str, inputs: list[str], outputs: list[str], sub: dict[str, str]
    ) -> str:
        """Reduce ``inputs[0]`` into ``outputs[0]``."""
        (x,), (z,) = inputs, outputs
        fail, spec = sub["fail"], self.spec
        cmp_t, key = spec.cmp_t, spec.key
        in_place = spec.acc_t == ctype(self.out_dt)
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
            store = _store("acc[k]", self.acc_dt, self.out_dt)
            finish = f"""
    {{
        {ctype(self.out_dt)}* o = ({ctype(self.out_dt)}*)PyArray_DATA({z});
        for (k = 0; k < nout; k++) o[k] = {store};
        PyMem_Free(acc);
    }}"""
        ident = spec.identity()
        return f"""
{{
    static const int reduced[] = {{{axes_mask(self.ndim, self.axes)}}};
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
    if (opw_prep_output(&{z}, ond, odims, {typenum(self.out_dt)}) < 0) {fail}
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


def reduce_name(op: CAReduce) -> str | None:
    """The combination of a CAReduce's scalar Op in the generated C, or ``None``."""
    for cls in type(op.scalar_op).__mro__:
        name = _REDUCE_OPS.get(cls)
        if name is not None:
            return name
    return None
