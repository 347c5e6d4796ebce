"""C code for :mod:`opweave.tensor.basic`.

``Alloc``, ``MakeVector``, ``TensorFromScalar``, ``ScalarFromTensor``, ``Eye`` and
``Split`` (views) are written out; ``Join`` and ``ARange`` call the NumPy C functions
behind ``numpy.concatenate`` and ``numpy.arange`` so that dtypes, values and error
messages are those of the Python backend (:mod:`opweave_python.impls.basic`).
``Nonzero``, ``ExtractDiag`` and ``DiagGrad`` are in :mod:`opweave_c.impls.selection`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import ScalarType
from opweave.tensor.basic import (
    Alloc,
    ARange,
    Eye,
    Join,
    MakeVector,
    ScalarFromTensor,
    Split,
    TensorFromScalar,
)
from opweave_c.impls.shape import SnippetImpl, int_value, py_int, tensor_dtype
from opweave_c.impls.types import C_DTYPES


def _typenum(dtype: str) -> str:
    return "NPY_" + dtype.upper()


def _scalar_ints(node: Apply, inputs: list[Any]) -> bool:
    """Whether every variable in ``inputs`` is a 0-d tensor with C code."""
    return all(tensor_dtype(v) is not None and v.type.ndim == 0 for v in inputs)


def _raw(name: str) -> str:
    return f"(*(dtype_{name}*)PyArray_DATA({name}))"


# ====================================================================== Alloc


class AllocC(SnippetImpl):
    """A new array of the requested shape with the value broadcast into it."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the shape and the broadcast (as ``check_broadcast``), then copy the value."""
        value, *shape = inputs
        (z,) = outputs
        fail = sub["fail"]
        nd = len(shape)
        vstatic = node.inputs[0].type.shape  # type: ignore[attr-defined]
        vn = len(vstatic)
        reads = "\n    ".join(
            f"opw_shp[{k}] = (npy_intp){int_value(s, v.type.dtype)};"  # type: ignore[attr-defined]
            for k, (s, v) in enumerate(zip(shape, node.inputs[1:]))
        )
        runtime = "\n    ".join(
            f"if (PyArray_DIMS({value})[{d}] == 1 && opw_shp[{nd - vn + d}] != 1) {{\n"
            f'        opw_sb_runtime_broadcast_error("Alloc", {d}, opw_shp[{nd - vn + d}]);\n'
            f"        {fail}\n    }}"
            for d, st in enumerate(vstatic)
            if st != 1
        )
        return f"""
{{
    npy_intp opw_shp[{max(nd, 1)}];
    int opw_k, opw_bad = 0;
    {reads}
    for (opw_k = 0; opw_k < {nd}; opw_k++) opw_bad |= opw_shp[opw_k] < 0;
    if (opw_bad) {{
        PyObject* opw_t = opw_sb_dims_tuple({nd}, opw_shp);
        if (opw_t) {{
            PyErr_Format(PyExc_ValueError, "Alloc: negative dimensions are not allowed: %R",
                         opw_t);
            Py_DECREF(opw_t);
        }}
        {fail}
    }}
    if (PyArray_NDIM({value}) != {vn}) opw_bad = 1;
    for (opw_k = 0; !opw_bad && opw_k < {vn}; opw_k++) {{
        npy_intp opw_s = PyArray_DIMS({value})[opw_k];
        opw_bad = opw_s != 1 && opw_s != opw_shp[{nd - vn} + opw_k];
    }}
    if (opw_bad) {{
        opw_sb_broadcast_error("Alloc", PyArray_NDIM({value}), PyArray_DIMS({value}), {nd},
                               opw_shp);
        {fail}
    }}
    {runtime}
    if (opw_prep_output(&{z}, {nd}, opw_shp, PyArray_TYPE({value})) < 0) {fail}
    if (PyArray_CopyInto({z}, {value}) < 0) {fail}
}}
"""


def _alloc(op: Alloc, node: Apply) -> AllocC | None:
    if tensor_dtype(node.inputs[0]) is None or not _scalar_ints(node, node.inputs[1:]):
        return None
    if node.outputs[0].type.dtype != node.inputs[0].type.dtype:  # type: ignore[attr-defined]
        return None
    return AllocC()


# ====================================================================== MakeVector


class MakeVectorC(SnippetImpl):
    """The 0-d inputs written into a (reused when possible) vector."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Prepare a vector of ``len(inputs)`` and store each value."""
        (z,) = outputs
        n = len(inputs)
        stores = "\n    ".join(
            f"((dtype_{z}*)PyArray_DATA({z}))[{k}] = (dtype_{z}){_raw(i)};"
            for k, i in enumerate(inputs)
        )
        return f"""
{{
    npy_intp opw_n = {n};
    if (opw_prep_output(&{z}, 1, &opw_n, {_typenum(node.op.dtype)}) < 0) {sub["fail"]}
    {stores}
}}
"""


def _make_vector(op: MakeVector, node: Apply) -> MakeVectorC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    if any(v.type.dtype != op.dtype for v in node.inputs):  # type: ignore[attr-defined]
        return None  # make_node casts first; a hand-built node keeps Python's casting
    return MakeVectorC()


# ====================================================================== scalars


class TensorFromScalarC(SnippetImpl):
    """The C number as a 0-d array."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Store the number in a 0-d output."""
        (s,) = inputs
        (z,) = outputs
        typenum = _typenum(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        return f"""
if (opw_prep_output(&{z}, 0, NULL, {typenum}) < 0) {sub["fail"]}
*(dtype_{z}*)PyArray_DATA({z}) = (dtype_{z}){s};
"""


def _tensor_from_scalar(op: TensorFromScalar, node: Apply) -> TensorFromScalarC | None:
    s = node.inputs[0].type
    if not isinstance(s, ScalarType) or s.dtype not in C_DTYPES:
        return None
    if tensor_dtype(node.outputs[0]) != s.dtype:
        return None
    return TensorFromScalarC()


class ScalarFromTensorC(SnippetImpl):
    """The 0-d array's element as a C number."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Read the element."""
        (t,) = inputs
        (z,) = outputs
        return f"{z} = (dtype_{z}){_raw(t)};\n"


def _scalar_from_tensor(op: ScalarFromTensor, node: Apply) -> ScalarFromTensorC | None:
    out = node.outputs[0].type
    if not _scalar_ints(node, node.inputs) or not isinstance(out, ScalarType):
        return None
    if out.dtype != node.inputs[0].type.dtype:  # type: ignore[attr-defined]
        return None
    return ScalarFromTensorC()


# ====================================================================== Eye


class EyeC(SnippetImpl):
    """``numpy.eye(n, m, k)``: zeros, then ones on diagonal ``k``."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the shape, clear the output, write the diagonal."""
        n, m, k = inputs
        (z,) = outputs
        fail = sub["fail"]
        dt = [v.type.dtype for v in node.inputs]  # type: ignore[attr-defined]
        typenum = _typenum(node.op.dtype)
        return f"""
{{
    npy_int64 opw_n = {int_value(n, dt[0])}, opw_m = {int_value(m, dt[1])};
    npy_int64 opw_k = {int_value(k, dt[2])}, opw_i;
    npy_intp opw_dims[2];
    char* opw_data;
    npy_intp opw_rs;
    if (opw_n < 0 || opw_m < 0) {{
        PyErr_Format(PyExc_ValueError, "Eye: negative dimensions are not allowed: (%lld, %lld)",
                     (long long)opw_n, (long long)opw_m);
        {fail}
    }}
    opw_dims[0] = (npy_intp)opw_n;
    opw_dims[1] = (npy_intp)opw_m;
    if (opw_prep_output(&{z}, 2, opw_dims, {typenum}) < 0) {fail}
    memset(PyArray_DATA({z}), 0, PyArray_NBYTES({z}));
    opw_data = PyArray_BYTES({z});
    opw_rs = PyArray_STRIDES({z})[0];
    if (opw_k > -opw_n && opw_k < opw_m) {{
        for (opw_i = opw_k < 0 ? -opw_k : 0; opw_i < opw_n && opw_i + opw_k < opw_m; opw_i++)
            ((dtype_{z}*)(opw_data + opw_i * opw_rs))[opw_i + opw_k] = (dtype_{z})1;
    }}
}}
"""


def _eye(op: Eye, node: Apply) -> EyeC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    return EyeC()


# ====================================================================== ARange


class ARangeC(SnippetImpl):
    """``numpy.arange`` through ``PyArray_ArangeObj`` (the function behind it)."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Box the three numbers as Python numbers (``.item()``), check the step, call NumPy."""
        (z,) = outputs
        fail = sub["fail"]
        boxes = []
        for i, v in zip(inputs, node.inputs):
            dtype = v.type.dtype  # type: ignore[attr-defined]
            if dtype == "bool":
                boxes.append(f"PyBool_FromLong((long){_raw(i)})")
            elif dtype.startswith("float"):
                boxes.append(f"PyFloat_FromDouble((double){_raw(i)})")
            else:
                boxes.append(py_int(i, dtype))
        step_zero = f"{_raw(inputs[2])} == 0"
        typenum = _typenum(node.op.dtype)
        return f"""
{{
    PyObject *opw_a = NULL, *opw_b = NULL, *opw_c = NULL, *opw_r = NULL;
    PyArray_Descr* opw_descr;
    if ({step_zero}) {{
        PyErr_SetString(PyExc_ValueError, "ARange: step must not be zero");
        {fail}
    }}
    opw_descr = PyArray_DescrFromType({typenum});
    opw_a = {boxes[0]};
    opw_b = {boxes[1]};
    opw_c = {boxes[2]};
    if (opw_descr && opw_a && opw_b && opw_c)
        opw_r = PyArray_ArangeObj(opw_a, opw_b, opw_c, opw_descr);
    Py_XDECREF(opw_descr);
    Py_XDECREF(opw_a);
    Py_XDECREF(opw_b);
    Py_XDECREF(opw_c);
    if (!opw_r) {fail}
    Py_XDECREF({z});
    {z} = (PyArrayObject*)opw_r;
}}
"""


def _arange(op: ARange, node: Apply) -> ARangeC | None:
    if op.dtype not in C_DTYPES or not _scalar_ints(node, node.inputs):
        return None
    return ARangeC()


# ====================================================================== Join


class JoinC(SnippetImpl):
    """``numpy.concatenate(tensors, axis).astype(out_dtype, copy=False)``."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the axis, concatenate through ``PyArray_Concatenate``, cast if needed."""
        axis, *tensors = inputs
        (z,) = outputs
        fail = sub["fail"]
        n = len(tensors)
        ndim = node.inputs[1].type.ndim  # type: ignore[attr-defined]
        adt = node.inputs[0].type.dtype  # type: ignore[attr-defined]
        typenum = _typenum(node.outputs[0].type.dtype)  # type: ignore[attr-defined]
        packs = "\n    ".join(
            f"PyTuple_SET_ITEM(opw_seq, {k}, (PyObject*){t}); Py_INCREF({t});"
            for k, t in enumerate(tensors)
        )
        return f"""
{{
    npy_int64 opw_axis = {int_value(axis, adt)};
    PyObject *opw_seq, *opw_r;
    if (opw_axis < -{ndim} || opw_axis >= {ndim}) {{
        PyErr_Format(PyExc_ValueError, "Join: axis %lld is out of range for {ndim}-d tensors",
                     (long long)opw_axis);
        {fail}
    }}
    opw_seq = PyTuple_New({n});
    if (!opw_seq) {fail}
    {packs}
    opw_r = PyArray_Concatenate(opw_seq, (int)opw_axis);
    if (!opw_r && PyErr_ExceptionMatches(PyExc_ValueError)) {{
        PyObject *opw_t, *opw_v, *opw_tb, *opw_msg, *opw_shapes;
        Py_ssize_t opw_j;
        PyErr_Fetch(&opw_t, &opw_v, &opw_tb);
        PyErr_NormalizeException(&opw_t, &opw_v, &opw_tb);
        opw_msg = opw_v ? PyObject_Str(opw_v) : NULL;
        Py_XDECREF(opw_t);
        Py_XDECREF(opw_v);
        Py_XDECREF(opw_tb);
        opw_shapes = PyList_New({n});
        for (opw_j = 0; opw_shapes && opw_j < {n}; opw_j++) {{
            PyObject* opw_s = opw_sb_shape_of((PyArrayObject*)PyTuple_GET_ITEM(opw_seq, opw_j));
            if (!opw_s) {{ Py_CLEAR(opw_shapes); break; }}
            PyList_SET_ITEM(opw_shapes, opw_j, opw_s);
        }}
        if (opw_msg && opw_shapes)
            PyErr_Format(PyExc_ValueError, "Join: cannot join shapes %R along axis %lld: %U",
                         opw_shapes, (long long)opw_axis, opw_msg);
        Py_XDECREF(opw_msg);
        Py_XDECREF(opw_shapes);
    }}
    Py_DECREF(opw_seq);
    if (!opw_r) {fail}
    if (PyArray_TYPE((PyArrayObject*)opw_r) != {typenum}) {{
        PyObject* opw_c = PyArray_Cast((PyArrayObject*)opw_r, {typenum});
        Py_DECREF(opw_r);
        if (!opw_c) {fail}
        opw_r = opw_c;
    }}
    Py_XDECREF({z});
    {z} = (PyArrayObject*)opw_r;
}}
"""


def _join(op: Join, node: Apply) -> JoinC | None:
    if not _scalar_ints(node, node.inputs[:1]) or tensor_dtype(node.outputs[0]) is None:
        return None
    if any(tensor_dtype(v) is None for v in node.inputs[1:]):
        return None
    return JoinC()


# ====================================================================== Split


class SplitC(SnippetImpl):
    """The pieces of ``x`` along ``axis`` as views, after the Python backend's checks."""

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check axis and sizes; each output a view starting where the previous ended."""
        x, axis, splits = inputs
        fail = sub["fail"]
        n = len(outputs)
        adt = node.inputs[1].type.dtype  # type: ignore[attr-defined]
        sdt = node.inputs[2].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{splits}*)PyArray_GETPTR1({splits}, opw_j))"
        if sdt == "uint64":
            read = f"({raw} > (npy_uint64)NPY_MAX_INT64 ? NPY_MAX_INT64 : (npy_int64){raw})"
        else:
            read = f"(npy_int64){raw}"
        views = "\n    ".join(
            f"""opw_dims[opw_ax] = (npy_intp)opw_sizes[{k}];
    opw_v = opw_sb_make_view({x}, PyArray_NDIM({x}), opw_dims, PyArray_STRIDES({x}),
                             opw_sizes[{k}] > 0 ? opw_data : PyArray_BYTES({x}));
    if (!opw_v) {fail}
    opw_data += opw_sizes[{k}] * PyArray_STRIDES({x})[opw_ax];
    Py_XDECREF({z});
    {z} = opw_v;"""
            for k, z in enumerate(outputs)
        )
        return f"""
{{
    npy_int64 opw_axis = {int_value(axis, adt)}, opw_total = 0;
    npy_int64 opw_sizes[{n}];
    npy_intp opw_j, opw_len = PyArray_DIMS({splits})[0];
    npy_intp opw_dims[NPY_MAXDIMS];
    int opw_ax, opw_neg = 0;
    char* opw_data;
    PyArrayObject* opw_v;
    if (opw_axis < -PyArray_NDIM({x}) || opw_axis >= PyArray_NDIM({x})) {{
        PyErr_Format(PyExc_ValueError, "Split: axis %lld is out of range for a %d-d value",
                     (long long)opw_axis, PyArray_NDIM({x}));
        {fail}
    }}
    opw_ax = (int)(opw_axis < 0 ? opw_axis + PyArray_NDIM({x}) : opw_axis);
    if (opw_len != {n}) {{
        PyErr_Format(PyExc_ValueError, "Split: expected {n} split sizes, got %zd",
                     (Py_ssize_t)opw_len);
        {fail}
    }}
    for (opw_j = 0; opw_j < {n}; opw_j++) {{
        opw_sizes[opw_j] = {read};
        opw_neg |= opw_sizes[opw_j] < 0;
        opw_total += opw_sizes[opw_j];
    }}
    if (opw_neg || opw_total != PyArray_DIMS({x})[opw_ax]) {{
        PyObject* opw_l = PyList_New({n});
        for (opw_j = 0; opw_l && opw_j < {n}; opw_j++) {{
            PyObject* opw_e = PyLong_FromLongLong((long long)opw_sizes[opw_j]);
            if (!opw_e) {{ Py_CLEAR(opw_l); break; }}
            PyList_SET_ITEM(opw_l, opw_j, opw_e);
        }}
        if (opw_l && opw_neg)
            PyErr_Format(PyExc_ValueError,
                         "Split: split sizes must be non-negative, got %R", opw_l);
        else if (opw_l)
            PyErr_Format(PyExc_ValueError,
                         "Split: the split sizes %R sum to %lld, not to the length %zd of "
                         "axis %lld", opw_l, (long long)opw_total,
                         (Py_ssize_t)PyArray_DIMS({x})[opw_ax], (long long)opw_axis);
        Py_XDECREF(opw_l);
        {fail}
    }}
    memcpy(opw_dims, PyArray_DIMS({x}), PyArray_NDIM({x}) * sizeof(npy_intp));
    opw_data = PyArray_BYTES({x});
    {views}
}}
"""


def _split(op: Split, node: Apply) -> SplitC | None:
    if tensor_dtype(node.inputs[0]) is None or not _scalar_ints(node, node.inputs[1:2]):
        return None
    if tensor_dtype(node.inputs[2]) is None:
        return None
    return SplitC()


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        Alloc: _alloc,
        MakeVector: _make_vector,
        TensorFromScalar: _tensor_from_scalar,
        ScalarFromTensor: _scalar_from_tensor,
        Eye: _eye,
        ARange: _arange,
        Join: _join,
        Split: _split,
    }
)
