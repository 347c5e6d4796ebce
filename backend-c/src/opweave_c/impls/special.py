"""C code for :mod:`opweave.tensor.special`: ``Softmax``, ``LogSoftmax`` and ``SoftmaxGrad``.

The formulas and their rounding are those of the Python backend
(:mod:`opweave_python.impls.special`):

* ``Softmax``: ``e = exp(x - m)``, ``e / sum(e)``; ``LogSoftmax``: ``(x - m) -
  log(sum(exp(x - m)))``, where ``m`` is the maximum along the axis, replaced by 0 when it
  is infinite (so a row of ``-inf`` gives NaN, a row holding ``+inf`` NaN where the others
  give 0 or ``-inf``, and a row holding NaN NaN everywhere, as NumPy computes them);
* ``SoftmaxGrad``: ``(dy - sum(dy * sm)) * sm``, broadcasting ``dy`` and ``sm`` as NumPy
  does, computed in the wider of their dtypes and cast to ``sm``'s;
* sums along a contiguous axis (the last, or every axis for ``axis=None``) use NumPy's
  pairwise summation (blocks of 128 with 8 accumulators), sums along another axis add
  the rows in order, as NumPy's reductions do on C-ordered data; division is a division;
* an empty input gives an empty output.

The work is done on a C-contiguous input (a non-contiguous one is copied first), seen as
``(outer, n, inner)`` with the normalized axis in the middle: when ``inner`` is 1 each row
is contiguous (``exp`` in one vectorisable loop, through libmvec where
:func:`~opweave_c.vector_math.vector_math_code` applies); otherwise the rows of ``inner``
columns are combined element by element. float32 values are computed in float32, as NumPy
does. float16 has no C code (``cvm`` runs such nodes in Python).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.tensor.special import LogSoftmax, Softmax, SoftmaxGrad
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl
from opweave_c.impls.csource import snippet
from opweave_c.vector_math import vector_math_code

__all__ = ["C_OPS", "LogSoftmaxC", "SoftmaxC", "SoftmaxGradC"]

#: Bump when the generated C changes.
VERSION = (2,)

#: No floating-point contraction: products and sums are rounded as NumPy rounds them.
COMPILE_ARGS = ("-ffp-contract=off",)

#: dtype -> (C type, suffix of its ``<math.h>`` functions, NumPy type number).
_FLOATS: MappingProxyType[str, tuple[str, str, str]] = MappingProxyType(
    {"float32": ("float", "f", "NPY_FLOAT32"), "float64": ("double", "", "NPY_FLOAT64")}
)

#: Shared by the three Ops (identical text: one copy per module).
SOFTMAX_SUPPORT = snippet("special.c", "support")


def _kernels(dtype: str) -> str:
    """The C loops of the three Ops for one float dtype (``opw_sm_*_<dtype>``)."""
    t, f, _ = _FLOATS[dtype]
    return f"""
/* opweave softmax ({dtype}): NumPy's pairwise sum of ``n`` contiguous values. */
OPW_HOT static {t} opw_sm_psum_{dtype}(const {t}* a, npy_intp n) {{
    npy_intp i;
    if (n < 8) {{
        {t} res = 0;
        for (i = 0; i < n; i++) res += a[i];
        return res;
    }}
    if (n <= 128) {{
        {t} r[8], res;
        int k;
        for (k = 0; k < 8; k++) r[k] = a[k];
        for (i = 8; i < n - (n % 8); i += 8)
            for (k = 0; k < 8; k++) r[k] += a[i + k];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }} else {{
        npy_intp n2 = n / 2;
        n2 -= n2 % 8;
        return opw_sm_psum_{dtype}(a, n2) + opw_sm_psum_{dtype}(a + n2, n - n2);
    }}
}}

/* The maximum of ``n`` > 0 contiguous values, 0 when it is not finite (NaN is not looked
 * for: it makes the whole row NaN through the sum, whatever the maximum). */
OPW_HOT static {t} opw_sm_max_{dtype}(const {t}* x, npy_intp n) {{
    {t} r[8], m;
    npy_intp i;
    int k;
    if (n < 8) {{
        m = x[0];
        for (i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
    }} else {{
        for (k = 0; k < 8; k++) r[k] = x[k];
        for (i = 8; i + 8 <= n; i += 8)
            for (k = 0; k < 8; k++) r[k] = x[i + k] > r[k] ? x[i + k] : r[k];
        for (; i < n; i++) r[0] = x[i] > r[0] ? x[i] : r[0];
        m = r[0];
        for (k = 1; k < 8; k++) m = r[k] > m ? r[k] : m;
    }}
    return npy_isfinite(m) ? m : ({t})0;
}}

/* ``m[j]``: the maximum of column ``j`` of the ``n`` x ``inner`` block ``x``, 0 when it is
 * not finite (NaN included). */
OPW_HOT static void opw_sm_colmax_{dtype}(const {t}* restrict x, npy_intp n, npy_intp inner,
                                       {t}* restrict m) {{
    npy_intp i, j;
    for (j = 0; j < inner; j++) m[j] = x[j];
    for (i = 1; i < n; i++) {{
        const {t}* row = x + i * inner;
        for (j = 0; j < inner; j++) m[j] = row[j] > m[j] || row[j] != row[j] ? row[j] : m[j];
    }}
    for (j = 0; j < inner; j++) m[j] = npy_isfinite(m[j]) ? m[j] : ({t})0;
}}

/* ``s[j]``: the sum of column ``j`` of the ``n`` x ``inner`` block ``e``, row after row. */
OPW_HOT static void opw_sm_colsum_{dtype}(const {t}* restrict e, npy_intp n, npy_intp inner,
                                       {t}* restrict s) {{
    npy_intp i, j;
    for (j = 0; j < inner; j++) s[j] = e[j];
    for (i = 1; i < n; i++) {{
        const {t}* row = e + i * inner;
        for (j = 0; j < inner; j++) s[j] += row[j];
    }}
}}

/* ``z = exp(x - m)`` over ``n`` contiguous values. */
OPW_HOT static void opw_sm_exp_{dtype}(const {t}* restrict x, {t}* restrict z, npy_intp n,
                                    {t} m) {{
    npy_intp i;
    for (i = 0; i < n; i++) z[i] = exp{f}(x[i] - m);
}}

/* Softmax of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_softmax_rows_{dtype}(const {t}* restrict x, {t}* restrict z,
                                             npy_intp outer, npy_intp n) {{
    npy_intp o, i;
    for (o = 0; o < outer; o++, x += n, z += n) {{
        {t} s;
        opw_sm_exp_{dtype}(x, z, n, opw_sm_max_{dtype}(x, n));
        s = opw_sm_psum_{dtype}(z, n);
        for (i = 0; i < n; i++) z[i] = z[i] / s;
    }}
}}

/* Log-softmax of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_logsoftmax_rows_{dtype}(const {t}* restrict x, {t}* restrict z,
                                                npy_intp outer, npy_intp n) {{
    npy_intp o, i;
    for (o = 0; o < outer; o++, x += n, z += n) {{
        {t} m = opw_sm_max_{dtype}(x, n), lse;
        opw_sm_exp_{dtype}(x, z, n, m);
        lse = log{f}(opw_sm_psum_{dtype}(z, n));
        for (i = 0; i < n; i++) z[i] = (x[i] - m) - lse;
    }}
}}

/* Softmax gradient of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_grad_rows_{dtype}(const {t}* restrict dy, const {t}* restrict sm,
                                          {t}* restrict z, npy_intp outer, npy_intp n) {{
    npy_intp o, i;
    for (o = 0; o < outer; o++, dy += n, sm += n, z += n) {{
        {t} s;
        for (i = 0; i < n; i++) z[i] = dy[i] * sm[i];
        s = opw_sm_psum_{dtype}(z, n);
        for (i = 0; i < n; i++) z[i] = (dy[i] - s) * sm[i];
    }}
}}

/* ``kind`` 0 softmax, 1 log-softmax, 2 gradient (``y`` is ``sm``) over ``outer`` blocks of
 * ``n`` > 0 rows of ``inner`` > 1 columns, normalized down the columns. 0, or -1 with
 * MemoryError set. */
OPW_HOT static int opw_sm_cols_{dtype}(int kind, const {t}* restrict x, const {t}* restrict y,
                                    {t}* restrict z, npy_intp outer, npy_intp n,
                                    npy_intp inner) {{
    npy_intp o, i, j, block = n * inner;
    {t}* m = ({t}*)PyMem_Malloc(2 * inner * sizeof({t}));
    {t}* s = m + inner;
    if (!m) {{
        PyErr_NoMemory();
        return -1;
    }}
    for (o = 0; o < outer; o++, x += block, z += block) {{
        if (kind == 2) {{
            const {t}* yb = y + o * block;
            for (i = 0; i < block; i++) z[i] = x[i] * yb[i];
            opw_sm_colsum_{dtype}(z, n, inner, s);
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++)
                    z[i * inner + j] = (x[i * inner + j] - s[j]) * yb[i * inner + j];
            continue;
        }}
        opw_sm_colmax_{dtype}(x, n, inner, m);
        for (i = 0; i < n; i++)
            for (j = 0; j < inner; j++) z[i * inner + j] = exp{f}(x[i * inner + j] - m[j]);
        opw_sm_colsum_{dtype}(z, n, inner, s);
        if (kind == 0) {{
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++) z[i * inner + j] = z[i * inner + j] / s[j];
        }} else {{
            for (j = 0; j < inner; j++) s[j] = log{f}(s[j]);
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++)
                    z[i * inner + j] = (x[i * inner + j] - m[j]) - s[j];
        }}
    }}
    PyMem_Free(m);
    return 0;
}}
"""


def _axis(op: Any, ndim: int) -> int:
    """The normalized axis, or -1 for all elements together (``None`` or a 0-d input)."""
    if op.axis is None or ndim == 0:
        return -1
    return int(op.axis) % ndim


class _SoftmaxBase(SnippetImpl):
    """The support code, flags and version shared by the three Ops."""

    version = VERSION

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """Vector math declarations, the shared helpers, the dtype's loops."""
        vec = vector_math_code()
        head = [vec.support_code] if vec else []
        return [*head, SHARED_SUPPORT, SOFTMAX_SUPPORT, _kernels(self.dtype)]

    def c_compile_args(self, c_compiler: Any = None) -> list[str]:
        """No floating-point contraction; the vector math flags where they apply."""
        vec = vector_math_code()
        return [*COMPILE_ARGS, *(vec.compile_args if vec else ())]

    def c_libraries(self, c_compiler: Any = None) -> list[str]:
        """libmvec where vector math applies."""
        vec = vector_math_code()
        return list(vec.libraries) if vec else []


class _SoftmaxLikeC(_SoftmaxBase):
    """``Softmax`` (``kind`` 0) or ``LogSoftmax`` (``kind`` 1) of one float tensor."""

    kind = 0
    rows = "softmax"

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Prepare the output, make the input contiguous, run the row or column loops."""
        (x,) = inputs
        (z,) = outputs
        fail = sub["fail"]
        dt = self.dtype
        t = _FLOATS[dt][0]
        axis = _axis(node.op, node.inputs[0].type.ndim)  # type: ignore[attr-defined]
        return f"""
{{
    PyArrayObject* opw_x;
    npy_intp opw_outer, opw_n, opw_inner;
    int opw_bad = 0;
    if (opw_overlap({z}, {x})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, PyArray_NDIM({x}), PyArray_DIMS({x}), PyArray_TYPE({x})) < 0)
        {fail}
    if (PyArray_SIZE({x}) > 0) {{
        opw_x = (PyArrayObject*)PyArray_GETCONTIGUOUS({x});
        if (!opw_x) {fail}
        opw_sm_split(opw_x, {axis}, &opw_outer, &opw_n, &opw_inner);
        if (opw_inner == 1)
            opw_sm_{self.rows}_rows_{dt}((const {t}*)PyArray_DATA(opw_x),
                                    ({t}*)PyArray_DATA({z}), opw_outer, opw_n);
        else
            opw_bad = opw_sm_cols_{dt}({self.kind}, (const {t}*)PyArray_DATA(opw_x), NULL,
                                    ({t}*)PyArray_DATA({z}), opw_outer, opw_n, opw_inner);
        Py_DECREF(opw_x);
        if (opw_bad < 0) {fail}
    }}
}}
"""


class SoftmaxC(_SoftmaxLikeC):
    """``exp(x - m) / sum(exp(x - m))`` along the axis."""

    kind = 0
    rows = "softmax"


class LogSoftmaxC(_SoftmaxLikeC):
    """``(x - m) - log(sum(exp(x - m)))`` along the axis."""

    kind = 1
    rows = "logsoftmax"


class SoftmaxGradC(_SoftmaxBase):
    """``(dy - sum(dy * sm)) * sm``, in the wider dtype, cast to ``sm``'s."""

    def __init__(self, dtype: str, out_dtype: str) -> None:
        super().__init__(dtype)
        self.out_dtype = out_dtype

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Broadcast as NumPy does, bring both inputs to the work dtype, run the loops."""
        dy, sm = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sm_fail_{sub['id']}"
        dt = self.dtype
        t, _, work = _FLOATS[dt]
        out = _FLOATS[self.out_dtype][2]
        nd = node.inputs[1].type.ndim  # type: ignore[attr-defined]
        axis = _axis(node.op, nd)
        return f"""
{{
    PyArrayObject *opw_dy = NULL, *opw_sm = NULL, *opw_w = NULL;
    npy_intp opw_dims[{max(nd, 1)}], opw_outer, opw_n, opw_inner;
    int opw_d, opw_bad = 0;
    for (opw_d = 0; opw_d < {nd}; opw_d++) {{
        npy_intp opw_a = PyArray_DIMS({dy})[opw_d], opw_b = PyArray_DIMS({sm})[opw_d];
        opw_dims[opw_d] = opw_a == 1 ? opw_b : opw_a;
        opw_bad |= opw_a != opw_b && opw_a != 1 && opw_b != 1;
    }}
    if (opw_bad) {{
        PyObject* opw_sa = opw_shape_str(PyArray_NDIM({dy}), PyArray_DIMS({dy}), ",");
        PyObject* opw_sb = opw_shape_str(PyArray_NDIM({sm}), PyArray_DIMS({sm}), ",");
        if (opw_sa && opw_sb)
            PyErr_Format(PyExc_ValueError,
                         "operands could not be broadcast together with shapes %U %U ",
                         opw_sa, opw_sb);
        Py_XDECREF(opw_sa);
        Py_XDECREF(opw_sb);
        {fail}
    }}
    if (opw_overlap({z}, {dy}) || opw_overlap({z}, {sm})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, {nd}, opw_dims, {out}) < 0) {fail}
    if (PyArray_SIZE({z}) > 0) {{
        opw_dy = opw_sm_operand({dy}, {nd}, opw_dims, {work});
        if (!opw_dy) goto {label};
        opw_sm = opw_sm_operand({sm}, {nd}, opw_dims, {work});
        if (!opw_sm) goto {label};
        if ({work} == {out}) {{
            opw_w = {z};
            Py_INCREF(opw_w);
        }} else {{
            opw_w = (PyArrayObject*)PyArray_EMPTY({nd}, opw_dims, {work}, 0);
            if (!opw_w) goto {label};
        }}
        opw_sm_split(opw_w, {axis}, &opw_outer, &opw_n, &opw_inner);
        if (opw_inner == 1)
            opw_sm_grad_rows_{dt}((const {t}*)PyArray_DATA(opw_dy),
                                 (const {t}*)PyArray_DATA(opw_sm), ({t}*)PyArray_DATA(opw_w),
                                 opw_outer, opw_n);
        else if (opw_sm_cols_{dt}(2, (const {t}*)PyArray_DATA(opw_dy),
                                 (const {t}*)PyArray_DATA(opw_sm), ({t}*)PyArray_DATA(opw_w),
                                 opw_outer, opw_n, opw_inner) < 0)
            goto {label};
        if (opw_w != {z} && PyArray_CopyInto({z}, opw_w) < 0) goto {label};
        Py_DECREF(opw_dy);
        Py_DECREF(opw_sm);
        Py_DECREF(opw_w);
    }}
    if (0) {{
    {label}:
        Py_XDECREF(opw_dy);
        Py_XDECREF(opw_sm);
        Py_XDECREF(opw_w);
        {fail}
    }}
}}
"""


def _float_dtype(var: Any) -> str | None:
    dtype = getattr(var.type, "dtype", None)
    return dtype if dtype in _FLOATS else None


def _softmax(op: Softmax, node: Apply) -> SoftmaxC | None:
    dtype = _float_dtype(node.inputs[0])
    return SoftmaxC(dtype) if dtype is not None else None


def _log_softmax(op: LogSoftmax, node: Apply) -> LogSoftmaxC | None:
    dtype = _float_dtype(node.inputs[0])
    return LogSoftmaxC(dtype) if dtype is not None else None


def _softmax_grad(op: SoftmaxGrad, node: Apply) -> SoftmaxGradC | None:
    dy, sm = (_float_dtype(v) for v in node.inputs)
    out = _float_dtype(node.outputs[0])
    if dy is None or sm is None or out is None:
        return None
    work = "float64" if "float64" in (dy, sm) else "float32"
    return SoftmaxGradC(work, out)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Softmax: _softmax, LogSoftmax: _log_softmax, SoftmaxGrad: _softmax_grad}
)
