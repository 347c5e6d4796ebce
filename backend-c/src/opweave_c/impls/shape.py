"""C code for :mod:`opweave.tensor.shape`: ``Reshape`` and ``SpecifyShape``.

Both give the values, views and errors of the Python backend
(:mod:`opweave_python.impls.shape`): ``Reshape`` goes through ``PyArray_Newshape``,
the function behind ``numpy.reshape``, so it returns a view exactly when NumPy does;
``SpecifyShape`` returns its input itself after checking the shape.

This module also holds the small C helpers (``opw_sb_*``) and the Python-side helpers
that :mod:`opweave_c.impls.subtensor` and :mod:`opweave_c.impls.basic` share; support
code is deduplicated by exact text, so each module may list :data:`SHARED_SUPPORT`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply, Constant
from opweave.graph.type import Generic
from opweave.tensor.shape import Reshape, SpecifyShape
from opweave.tensor.type import TensorType
from opweave_c.impls.types import C_DTYPES

#: C helpers shared by the shape, subtensor and basic impls (identical text: one copy).
SHARED_SUPPORT = r"""
/* opweave shape/subtensor/basic helpers: a Python tuple of n lengths (new reference). */
static PyObject* opw_sb_dims_tuple(int n, const npy_intp* dims) {
    PyObject* t = PyTuple_New(n);
    int i;
    if (!t) return NULL;
    for (i = 0; i < n; i++) {
        PyObject* v = PyLong_FromSsize_t((Py_ssize_t)dims[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* The shape of ``a`` as a Python tuple (new reference). */
static PyObject* opw_sb_shape_of(PyArrayObject* a) {
    return opw_sb_dims_tuple(PyArray_NDIM(a), PyArray_DIMS(a));
}

/* When the pending exception is a ``match``, replace it by ``match("<prefix>: <message>")``
 * (``raise ... from None`` in Python: the context is dropped). */
static void opw_sb_prefix_error(PyObject* match, const char* prefix) {
    PyObject *t, *v, *tb, *msg;
    if (!PyErr_ExceptionMatches(match)) return;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    msg = v ? PyObject_Str(v) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    if (!msg) return;
    PyErr_Format(match, "%s: %U", prefix, msg);
    Py_DECREF(msg);
}

/* A view of ``x``'s memory (``x`` is its base). NULL with an exception set on failure. */
static PyArrayObject* opw_sb_make_view(PyArrayObject* x, int nd, npy_intp* dims,
                                       npy_intp* strides, char* data) {
    PyArrayObject* v;
    PyArray_Descr* descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    v = (PyArrayObject*)PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides,
                                             (void*)data,
                                             PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (!v) return NULL;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(v, (PyObject*)x) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* ValueError "<who>: cannot broadcast a value of shape <a> to <b>" (``check_broadcast``). */
static void opw_sb_broadcast_error(const char* who, int na, const npy_intp* a, int nb,
                                   const npy_intp* b) {
    PyObject* ta = opw_sb_dims_tuple(na, a);
    PyObject* tb = opw_sb_dims_tuple(nb, b);
    if (ta && tb)
        PyErr_Format(PyExc_ValueError, "%s: cannot broadcast a value of shape %R to %R", who,
                     ta, tb);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
}

/* ValueError for a length-1 dimension ``d`` of a value that is not statically 1. */
static void opw_sb_runtime_broadcast_error(const char* who, int d, npy_intp t) {
    PyErr_Format(PyExc_ValueError,
                 "%s: run-time broadcasting is not allowed: dimension %d of the value has "
                 "length 1 but its static length is unknown, and the target has length %zd "
                 "(use specify_shape to mark the dimension as length 1)",
                 who, d, (Py_ssize_t)t);
}
"""


def c_string(text: str) -> str:
    """``text`` as a C string literal (UTF-8; quotes, backslashes, controls escaped).

    Parameters
    ----------
    text
        Any text (an Op's ``str``, a Type's ``repr``).

    Returns
    -------
    str
        The literal, quotes included.
    """
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= byte < 127 and ch != "?":  # "?" could start a trigraph
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def tensor_dtype(var: Any) -> str | None:
    """The dtype of a TensorType variable with C code, else ``None``."""
    t = var.type
    if isinstance(t, TensorType) and t.dtype in C_DTYPES:
        return t.dtype
    return None


def int_value(name: str, dtype: str) -> str:
    """C expression: the value of the 0-d integer array ``name`` as an ``npy_int64``.

    ``uint64`` values above the ``int64`` range saturate (slicing clamps them anyway).
    """
    raw = f"(*(dtype_{name}*)PyArray_DATA({name}))"
    if dtype == "uint64":
        return f"({raw} > (npy_uint64)NPY_MAX_INT64 ? NPY_MAX_INT64 : (npy_int64){raw})"
    return f"((npy_int64){raw})"


def py_int(name: str, dtype: str) -> str:
    """C expression: a new Python int holding the 0-d integer array ``name``'s value."""
    raw = f"(*(dtype_{name}*)PyArray_DATA({name}))"
    if dtype.startswith("uint") or dtype == "bool":
        return f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
    return f"PyLong_FromLongLong((long long){raw})"


class SnippetImpl:
    """Base of the C implementations here: shared support code and a version.

    Subclasses set ``version`` and write :meth:`c_code`.
    """

    version: tuple[int, ...] = (1,)

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers."""
        return [SHARED_SUPPORT]

    def c_code_cache_version(self) -> tuple[int, ...]:
        """Bumped whenever the generated code changes."""
        return self.version

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """The node's C code."""
        raise NotImplementedError


# ====================================================================== Reshape


class ReshapeC(SnippetImpl):
    """``numpy.reshape`` through ``PyArray_Newshape``: a view whenever NumPy makes one."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Read the shape vector, reshape, prefix NumPy's ValueError with the Op."""
        x, shp = inputs
        (z,) = outputs
        ndim = node.op.ndim  # type: ignore[attr-defined]
        op = c_string(str(node.op))
        fail = sub["fail"]
        return f"""
{{
    npy_intp opw_dims[{max(ndim, 1)}];
    PyArray_Dims opw_newshape;
    PyArrayObject* opw_res;
    int opw_k;
    if (PyArray_DIMS({shp})[0] != {ndim}) {{
        PyObject* opw_t = PySequence_Tuple((PyObject*){shp});
        if (opw_t) {{
            PyErr_Format(PyExc_ValueError, "%s: the new shape %R has %zd entries, not %d",
                         {op}, opw_t, (Py_ssize_t)PyArray_DIMS({shp})[0], {ndim});
            Py_DECREF(opw_t);
        }}
        {fail}
    }}
    for (opw_k = 0; opw_k < {ndim}; opw_k++)
        opw_dims[opw_k] = (npy_intp)*(dtype_{shp}*)PyArray_GETPTR1({shp}, opw_k);
    opw_newshape.ptr = opw_dims;
    opw_newshape.len = {ndim};
    opw_res = (PyArrayObject*)PyArray_Newshape({x}, &opw_newshape, NPY_CORDER);
    if (!opw_res) {{
        opw_sb_prefix_error(PyExc_ValueError, {op});
        {fail}
    }}
    Py_XDECREF({z});
    {z} = opw_res;
}}
"""


def _reshape(op: Reshape, node: Apply) -> ReshapeC | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if tensor_dtype(node.inputs[1]) == "uint64":
        return None  # huge entries become Python ints NumPy refuses; leave them to Python
    return ReshapeC()


# ====================================================================== SpecifyShape


class SpecifyShapeC(SnippetImpl):
    """Check the input's shape against the integer entries; the output is the input."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Compare each given entry, in order; on a mismatch raise AssertionError as Python."""
        x, *entries = inputs
        (z,) = outputs
        fail = sub["fail"]
        nd = len(entries)
        checks = []
        wanted = []
        for i, (var, cname) in enumerate(zip(node.inputs[1:], entries)):
            if isinstance(var.type, Generic):
                wanted.append(f'PyTuple_SET_ITEM(opw_w, {i}, PyUnicode_FromString("?"));')
                continue
            dtype = var.type.dtype  # type: ignore[attr-defined]
            raw = f"(*(dtype_{cname}*)PyArray_DATA({cname}))"
            if dtype.startswith("uint"):
                differs = f"(npy_uint64){raw} != (npy_uint64)PyArray_DIMS({x})[{i}]"
            else:
                differs = f"(npy_int64){raw} != (npy_int64)PyArray_DIMS({x})[{i}]"
            box = py_int(cname, dtype)
            checks.append(f"if (opw_bad < 0 && {differs}) {{ opw_bad = {i}; opw_e = {box}; }}")
            wanted.append(f"PyTuple_SET_ITEM(opw_w, {i}, {py_int(cname, dtype)});")
        check_code = "\n    ".join(checks)
        wanted_code = "\n            ".join(wanted)
        return f"""
{{
    int opw_bad = -1;
    PyObject* opw_e = NULL;
    if (PyArray_NDIM({x}) != {nd}) {{
        PyObject* opw_s = opw_sb_shape_of({x});
        if (opw_s) {{
            PyErr_Format(PyExc_ValueError, "SpecifyShape: expected a {nd}-d value, got shape %R",
                         opw_s);
            Py_DECREF(opw_s);
        }}
        {fail}
    }}
    {check_code}
    if (opw_bad >= 0) {{
        PyObject* opw_s = opw_sb_shape_of({x});
        PyObject* opw_w = PyTuple_New({nd});
        if (opw_s && opw_w && opw_e) {{
            {wanted_code}
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_AssertionError,
                    "SpecifyShape: dimension %d of the input has length %zd, expected %S "
                    "(input shape %R, specified %R)", opw_bad,
                    (Py_ssize_t)PyArray_DIMS({x})[opw_bad], opw_e, opw_s, opw_w);
        }}
        Py_XDECREF(opw_e);
        Py_XDECREF(opw_s);
        Py_XDECREF(opw_w);
        {fail}
    }}
    Py_XDECREF({z});
    {z} = {x};
    Py_INCREF({z});
}}
"""


def _specify_shape(op: SpecifyShape, node: Apply) -> SpecifyShapeC | None:
    if tensor_dtype(node.inputs[0]) is None:
        return None
    for var in node.inputs[1:]:
        if isinstance(var.type, Generic):
            if not (isinstance(var, Constant) and var.data is None):
                return None
        elif tensor_dtype(var) is None or var.type.ndim != 0:  # type: ignore[attr-defined]
            return None
    return SpecifyShapeC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {Reshape: _reshape, SpecifyShape: _specify_shape}
)
