"""C code for the selections of :mod:`opweave.tensor.basic`: ``Nonzero``, ``ExtractDiag``
and ``DiagGrad``.

Values, dtypes and errors are those of the Python backend
(:mod:`opweave_python.impls.basic`):

* ``Nonzero`` counts the non-zero elements (NaN is non-zero, ``-0.0`` is zero), then
  writes their indices in C order into an ``(ndim, count)`` int64 matrix, walking the
  input with its own strides;
* ``ExtractDiag`` copies a strided view of the diagonal (``numpy.diagonal(...).copy()``):
  the other axes in order, then the diagonal;
* ``DiagGrad`` copies ``x`` and writes ``y`` (cast to ``x``'s dtype, broadcast as NumPy's
  fancy assignment allows) onto that diagonal of the copy; a ``y`` that does not broadcast
  raises NumPy's ``ValueError`` ("shape mismatch: value array of shape ...").

A ``DiagGrad`` whose axes are not distinct and within the input's rank, and offsets
beyond 2**62, are left to Python.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import DTYPE_SPECS
from opweave.tensor.basic import DiagGrad, ExtractDiag, Nonzero
from opweave_c.impls.shape import SHARED_SUPPORT, SnippetImpl, tensor_dtype

__all__ = ["C_OPS", "DiagGradC", "ExtractDiagC", "NonzeroC"]

#: Bump when the generated C changes.
VERSION = (1,)

#: Offsets beyond this are left to Python (no overflow in the C arithmetic).
_MAX_OFFSET = 2**62

SELECTION_SUPPORT = r"""
/* The view of the diagonal ``offset`` of axes ``a1``, ``a2`` of ``x`` (the other axes in
 * order, then the diagonal), as ``numpy.diagonal`` makes it. New reference, or NULL. */
static PyArrayObject* opw_sel_diag_view(PyArrayObject* x, npy_int64 offset, int a1, int a2) {
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    npy_intp n1 = PyArray_DIMS(x)[a1], n2 = PyArray_DIMS(x)[a2], len;
    npy_intp s1 = PyArray_STRIDES(x)[a1], s2 = PyArray_STRIDES(x)[a2];
    char* data = PyArray_BYTES(x);
    int d, k = 0;
    if (offset >= 0)
        len = offset >= n2 ? 0 : (n1 < n2 - offset ? n1 : n2 - offset);
    else
        len = -offset >= n1 ? 0 : (n1 + offset < n2 ? n1 + offset : n2);
    for (d = 0; d < PyArray_NDIM(x); d++) {
        if (d == a1 || d == a2) continue;
        dims[k] = PyArray_DIMS(x)[d];
        strides[k] = PyArray_STRIDES(x)[d];
        k++;
    }
    dims[k] = len;
    strides[k] = s1 + s2;
    if (len > 0) data += offset >= 0 ? offset * s2 : -offset * s1;
    return opw_sb_make_view(x, k + 1, dims, strides, data);
}
"""


def _nonzero_support(dtype: str) -> str:
    """``opw_sel_nonzero_<dtype>``: count, or write, the indices of the non-zero elements."""
    t = DTYPE_SPECS[dtype][0]
    return f"""
/* opweave Nonzero ({dtype}): with ``out`` NULL, the number of non-zero elements of ``a``
 * (size > 0); else write their indices in C order, row ``d`` of ``out`` (``count``
 * columns) holding the indices along axis ``d``. */
OPW_HOT static npy_intp opw_sel_nonzero_{dtype}(PyArrayObject* a, npy_int64* out,
                                                npy_intp count) {{
    int nd = PyArray_NDIM(a), d;
    const npy_intp* dims = PyArray_DIMS(a);
    const npy_intp* st = PyArray_STRIDES(a);
    const npy_intp n = dims[nd - 1], s = st[nd - 1];
    npy_intp idx[NPY_MAXDIMS], c = 0, i;
    const char* p = PyArray_BYTES(a);
    if (out == NULL && PyArray_IS_C_CONTIGUOUS(a)) {{
        const {t}* v = (const {t}*)p;
        npy_intp size = PyArray_SIZE(a);
        for (i = 0; i < size; i++) c += v[i] != 0;
        return c;
    }}
    for (d = 0; d < nd; d++) idx[d] = 0;
    for (;;) {{
        if (out == NULL) {{
            for (i = 0; i < n; i++) c += *(const {t}*)(p + i * s) != 0;
        }} else {{
            for (i = 0; i < n; i++) {{
                if (*(const {t}*)(p + i * s) != 0) {{
                    for (d = 0; d < nd - 1; d++) out[d * count + c] = (npy_int64)idx[d];
                    out[(nd - 1) * count + c] = (npy_int64)i;
                    c++;
                }}
            }}
        }}
        for (d = nd - 2; d >= 0; d--) {{
            p += st[d];
            if (++idx[d] < dims[d]) break;
            p -= st[d] * dims[d];
            idx[d] = 0;
        }}
        if (d < 0) break;
    }}
    return c;
}}
"""


class _SelectionC(SnippetImpl):
    """The shared helpers and the version."""

    version = VERSION

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shape helpers and the selection helpers."""
        return [SHARED_SUPPORT, SELECTION_SUPPORT]


class NonzeroC(_SelectionC):
    """``numpy.nonzero`` as an ``(ndim, count)`` int64 matrix."""

    def __init__(self, dtype: str) -> None:
        self.dtype = dtype

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the dtype's loop."""
        return [*super().c_support_code(), _nonzero_support(self.dtype)]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Count, prepare the output, write the indices."""
        (a,) = inputs
        (z,) = outputs
        nd = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        fn = f"opw_sel_nonzero_{self.dtype}"
        return f"""
{{
    npy_intp opw_dims[2];
    opw_dims[0] = {nd};
    opw_dims[1] = PyArray_SIZE({a}) > 0 ? {fn}({a}, NULL, 0) : 0;
    if (opw_overlap({z}, {a})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, 2, opw_dims, NPY_INT64) < 0) {sub["fail"]}
    if (opw_dims[1] > 0) {fn}({a}, (npy_int64*)PyArray_DATA({z}), opw_dims[1]);
}}
"""


def _diag_args(op: Any) -> str:
    return f"(npy_int64){int(op.offset)}LL, {int(op.axis1)}, {int(op.axis2)}"


class ExtractDiagC(_SelectionC):
    """A C-contiguous copy of the diagonal."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """View the diagonal, prepare the output with its shape, copy."""
        (x,) = inputs
        (z,) = outputs
        fail = sub["fail"]
        return f"""
{{
    PyArrayObject* opw_v = opw_sel_diag_view({x}, {_diag_args(node.op)});
    if (!opw_v) {fail}
    if (opw_overlap({z}, {x})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, PyArray_NDIM(opw_v), PyArray_DIMS(opw_v), PyArray_TYPE({x})) < 0
        || PyArray_CopyInto({z}, opw_v) < 0) {{
        Py_DECREF(opw_v);
        {fail}
    }}
    Py_DECREF(opw_v);
}}
"""


class DiagGradC(_SelectionC):
    """A copy of ``x`` with ``y`` written on the diagonal."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Copy ``x``, view the copy's diagonal, check ``y`` broadcasts, copy it in."""
        x, y = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sel_fail_{sub['id']}"
        return f"""
{{
    PyArrayObject* opw_v = NULL;
    int opw_d, opw_bad = 0;
    if (opw_overlap({z}, {x}) || opw_overlap({z}, {y})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, PyArray_NDIM({x}), PyArray_DIMS({x}), PyArray_TYPE({x})) < 0)
        {fail}
    if (PyArray_CopyInto({z}, {x}) < 0) {fail}
    opw_v = opw_sel_diag_view({z}, {_diag_args(node.op)});
    if (!opw_v) {fail}
    if (PyArray_NDIM({y}) != PyArray_NDIM(opw_v)) opw_bad = 1;
    for (opw_d = 0; !opw_bad && opw_d < PyArray_NDIM({y}); opw_d++) {{
        npy_intp opw_s = PyArray_DIMS({y})[opw_d];
        opw_bad = opw_s != 1 && opw_s != PyArray_DIMS(opw_v)[opw_d];
    }}
    if (opw_bad) {{
        PyObject* opw_a = opw_shape_str(PyArray_NDIM({y}), PyArray_DIMS({y}));
        PyObject* opw_b = opw_shape_str(PyArray_NDIM(opw_v), PyArray_DIMS(opw_v));
        if (opw_a && opw_b)
            PyErr_Format(PyExc_ValueError, "shape mismatch: value array of shape %U could not "
                         "be broadcast to indexing result of shape %U", opw_a, opw_b);
        Py_XDECREF(opw_a);
        Py_XDECREF(opw_b);
        goto {label};
    }}
    if (PyArray_CopyInto(opw_v, {y}) < 0) goto {label};
    Py_DECREF(opw_v);
    if (0) {{
    {label}:
        Py_XDECREF(opw_v);
        {fail}
    }}
}}
"""


def _nonzero(op: Nonzero, node: Apply) -> NonzeroC | None:
    dtype = tensor_dtype(node.inputs[0])
    if dtype is None or node.inputs[0].type.ndim == 0:  # type: ignore[attr-defined]
        return None
    return NonzeroC(dtype)


def _diag_ok(op: Any, ndim: int) -> bool:
    """Axes distinct and within ``ndim``, offset small enough for the C arithmetic."""
    a1, a2 = op.axis1, op.axis2
    return 0 <= a1 < ndim and 0 <= a2 < ndim and a1 != a2 and abs(op.offset) <= _MAX_OFFSET


def _extract_diag(op: ExtractDiag, node: Apply) -> ExtractDiagC | None:
    x = node.inputs[0]
    if tensor_dtype(x) is None or not _diag_ok(op, x.type.ndim):  # type: ignore[attr-defined]
        return None
    if tensor_dtype(node.outputs[0]) != tensor_dtype(x):
        return None
    return ExtractDiagC()


def _diag_grad(op: DiagGrad, node: Apply) -> DiagGradC | None:
    x, y = node.inputs
    if tensor_dtype(x) is None or tensor_dtype(y) is None:
        return None
    if not _diag_ok(op, x.type.ndim):  # type: ignore[attr-defined]
        return None
    if tensor_dtype(node.outputs[0]) != tensor_dtype(x):
        return None
    return DiagGradC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Nonzero: _nonzero, ExtractDiag: _extract_diag, DiagGrad: _diag_grad}
)
