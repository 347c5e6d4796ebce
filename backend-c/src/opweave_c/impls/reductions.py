"""C code of :mod:`opweave.tensor.reductions`: ``Argmax`` and ``Argmin``.

int64 indices, several axes flattened in C order, the first extremum (or first NaN) wins,
empty groups raise ``ValueError``, as in the Python backend. The loop plan is the
reductions' (:mod:`opweave_c.impls.reduce_loops`).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.reductions import Argmax, Argmin
from opweave_c.impls.common import axes_mask, ctype, dtype_kind
from opweave_c.impls.reduce_loops import (
    PLAN_SUPPORT,
    SIMD_SUPPORT,
    VERSION,
    ext_support,
)
from opweave_c.impls.tensor_type import C_DTYPES

__all__ = ["C_OPS", "ArgReduceC"]


# ====================================================================== Argmax / Argmin


def _arg_support(dtype: str, direction: str) -> str:
    """``opw_arg_<dir>_<dtype>``: the index of the first extremum of each group."""
    t = ctype(dtype)
    cmp = ">" if direction == "max" else "<"
    key = f"{direction}_{dtype}"
    is_float = dtype_kind(dtype) == "f"
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
            ext_support(self.dtype, self.direction),
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
    static const int reduced[] = {{{axes_mask(self.ndim, self.axes)}}};
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


def _argreduce(op: Argmax, node: Apply) -> ArgReduceC | None:
    if node.inputs[0].type.dtype not in C_DTYPES:  # type: ignore[attr-defined]
        return None
    return ArgReduceC(node)


#: Op class -> ``fn(op, node)`` giving the node's C implementation (or ``None``).
C_OPS: MappingProxyType[type, Any] = MappingProxyType({Argmax: _argreduce, Argmin: _argreduce})
