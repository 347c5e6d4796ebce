"""C code for :mod:`opweave.tensor.subtensor`: basic, incrementing and integer-vector indexing.

``Subtensor`` builds its output as a view of the input (``PyArray_NewFromDescr`` on the
input's memory, the input as base), computing each slice as ``slice.indices`` does, so
values, strides and errors are those of NumPy basic indexing in the Python backend
(:mod:`opweave_python.impls.subtensor`). ``IncSubtensor`` writes into such a view of
(a copy of) its input; ``AdvancedSubtensor1`` is ``PyArray_TakeFrom`` after the Python
backend's index check. ``AdvancedIncSubtensor1`` checks the indices and the broadcast as
the Python backend does, then sets or adds (``numpy.add.at``: repeated rows accumulate, in
index order) each row of ``y``, cast to ``x``'s dtype, into (a copy of) ``x``.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from opweave.graph.basic import Apply
from opweave.scalar.type import DTYPE_SPECS
from opweave.tensor.subtensor import (
    AdvancedIncSubtensor1,
    AdvancedSubtensor1,
    IncSubtensor,
    Subtensor,
)
from opweave.tensor.type import TensorType
from opweave_c.impls.common import SHARED_SUPPORT, SnippetImpl, c_string, int_value, tensor_dtype
from opweave_c.impls.csource import snippet

SUBTENSOR_SUPPORT = snippet("subtensor.c", "slicing")

INC_SUPPORT = snippet("subtensor.c", "inc")


def _placeholder_inputs(node: Apply, first: int) -> list[str] | None:
    """The dtypes of the index inputs (from ``first`` on), or ``None`` if one has no C."""
    dtypes = []
    for var in node.inputs[first:]:
        dtype = tensor_dtype(var)
        if dtype is None or var.type.ndim != 0:  # type: ignore[attr-defined]
            return None
        dtypes.append(dtype)
    return dtypes


def view_code(
    idx_list: tuple[Any, ...],
    x: str,
    idx_names: list[str],
    idx_dtypes: list[str],
    view: str,
    op: str,
    fail: str,
) -> str:
    """C code setting the (declared) ``PyArrayObject* view`` to the view ``x[idx_list]``.

    Parameters
    ----------
    idx_list
        The Op's index description; placeholders are read from ``idx_names`` in order.
    x
        The C name of the indexed array.
    idx_names, idx_dtypes
        C names and dtypes of the 0-d integer index inputs.
    view
        The C name receiving the new view (a new reference).
    op
        The Op's name as a C string literal, for error messages.
    fail
        The failure code.

    Returns
    -------
    str
        The code (a C block).
    """
    names = iter(zip(idx_names, idx_dtypes))
    overflow: list[str] = []
    lines: list[str] = []

    def value(c: Any, index: bool) -> tuple[str, str]:
        """(has, value) C expressions of a bound: a literal, a placeholder, or absent."""
        if c is None:
            return "0", "0"
        if isinstance(c, TensorType):
            cname, dtype = next(names)
            if index and dtype == "uint64":
                raw = f"(*(dtype_{cname}*)PyArray_DATA({cname}))"
                overflow.append(
                    f"if ({raw} > (npy_uint64)NPY_MAX_INT64) {{\n"
                    '    PyErr_SetString(PyExc_OverflowError, "Python int too large to '
                    f'convert to C long");\n    {fail}\n}}'
                )
            return "1", int_value(cname, dtype)
        return "1", f"(npy_int64){int(c)}LL"

    for d, e in enumerate(idx_list):
        lines.append(f"opw_n = PyArray_DIMS({x})[{d}];")
        if isinstance(e, slice):
            hs, s = value(e.start, False)
            ht, t = value(e.stop, False)
            hp, p = value(e.step, False)
            lines.append(
                f"if (opw_sub_slice(opw_n, {hs}, {s}, {ht}, {t}, {hp}, {p}, &opw_start, "
                f"&opw_len, &opw_step) < 0) {fail}\n"
                f"opw_dims[opw_nd] = opw_len;\n"
                f"opw_strides[opw_nd] = PyArray_STRIDES({x})[{d}] * opw_step;\n"
                f"if (opw_len > 0) opw_data += opw_start * PyArray_STRIDES({x})[{d}];\n"
                "opw_nd++;"
            )
        else:
            _, i = value(e, True)
            lines.append(
                f"opw_i = {i};\n"
                "if (opw_i < -(npy_int64)opw_n || opw_i >= (npy_int64)opw_n) {\n"
                f"    opw_sub_index_error({op}, opw_i, {d}, opw_n, {x});\n"
                f"    {fail}\n"
                "}\n"
                "if (opw_i < 0) opw_i += opw_n;\n"
                f"opw_data += opw_i * PyArray_STRIDES({x})[{d}];"
            )
    n_idx = len(idx_list)
    body = "\n".join(overflow + lines)
    body = body.replace("\n", "\n    ")
    return f"""
{{
    npy_intp opw_dims[NPY_MAXDIMS], opw_strides[NPY_MAXDIMS];
    npy_intp opw_n, opw_start, opw_len, opw_step;
    npy_int64 opw_i;
    char* opw_data = PyArray_BYTES({x});
    int opw_nd = 0, opw_d;
    (void)opw_n; (void)opw_start; (void)opw_len; (void)opw_step; (void)opw_i;
    if (PyArray_NDIM({x}) < {n_idx}) {{
        PyErr_Format(PyExc_IndexError, "%s: too many indices for array: array is "
                     "%d-dimensional, but {n_idx} were indexed", {op}, PyArray_NDIM({x}));
        {fail}
    }}
    {body}
    for (opw_d = {n_idx}; opw_d < PyArray_NDIM({x}); opw_d++) {{
        opw_dims[opw_nd] = PyArray_DIMS({x})[opw_d];
        opw_strides[opw_nd] = PyArray_STRIDES({x})[opw_d];
        opw_nd++;
    }}
    {view} = opw_make_view({x}, opw_nd, opw_dims, opw_strides, opw_data);
    if (!{view}) {fail}
}}"""


class SubtensorC(SnippetImpl):
    """Basic indexing as a view of the input."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the slicing helpers."""
        return [SHARED_SUPPORT, SUBTENSOR_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Compute the view's shape, strides and data pointer; replace the output."""
        x, *idx = inputs
        (z,) = outputs
        dtypes = [v.type.dtype for v in node.inputs[1:]]  # type: ignore[attr-defined]
        code = view_code(
            node.op.idx_list,  # type: ignore[attr-defined]
            x,
            idx,
            dtypes,
            "opw_view",
            c_string(str(node.op)),
            sub["fail"],
        )
        return f"""
{{
    PyArrayObject* opw_view = NULL;
    {code.replace(chr(10), chr(10) + "    ")}
    Py_XDECREF({z});
    {z} = opw_view;
}}
"""


def _subtensor(op: Subtensor, node: Apply) -> SubtensorC | None:
    if tensor_dtype(node.inputs[0]) is None or _placeholder_inputs(node, 1) is None:
        return None
    return SubtensorC()


class IncSubtensorC(SnippetImpl):
    """``x`` (copied unless in place) with ``y`` set into or added to a view of it."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared, slicing and update helpers."""
        return [SHARED_SUPPORT, SUBTENSOR_SUPPORT, INC_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Copy, view, check the broadcast as the Python backend does, then update."""
        op_ = node.op
        x, y, *idx = inputs
        (z,) = outputs
        fail = sub["fail"]
        label = f"opw_sub_fail_{sub['id']}"
        op = c_string(str(op_))
        dtypes = [v.type.dtype for v in node.inputs[2:]]  # type: ignore[attr-defined]
        if op_.inplace:  # type: ignore[attr-defined]
            prepare = f"Py_XDECREF({z});\n{z} = {x};\nPy_INCREF({z});"
        else:
            prepare = (
                f"if ({z} == {x}) Py_CLEAR({z});  /* never write into the input */\n"
                f"if (opw_prep_output(&{z}, PyArray_NDIM({x}), PyArray_DIMS({x}), "
                f"PyArray_TYPE({x})) < 0) {fail}\n"
                f"if (PyArray_CopyInto({z}, {x}) < 0) {fail}"
            )
        code = view_code(
            op_.idx_list,  # type: ignore[attr-defined]
            z,
            idx,
            dtypes,
            "opw_view",
            op,
            fail,
        )
        ystatic = node.inputs[1].type.shape  # type: ignore[attr-defined]
        yn = len(ystatic)
        runtime = []
        for d, st in enumerate(ystatic):
            if st != 1:
                runtime.append(
                    f"if (PyArray_DIMS({y})[{d}] == 1 && "
                    f"PyArray_DIMS(opw_view)[opw_off + {d}] != 1) {{\n"
                    f"    opw_runtime_broadcast_error({op}, {d}, "
                    f"PyArray_DIMS(opw_view)[opw_off + {d}]);\n"
                    f"    goto {label};\n}}"
                )
        runtime_code = "\n        ".join(runtime)
        if op_.set_instead_of_inc:  # type: ignore[attr-defined]
            update = f"PyArray_CopyInto(opw_view, {y})"
        else:
            update = f"opw_sub_add_into(opw_view, {y})"
        return f"""
{{
    PyArrayObject* opw_view = NULL;
    {prepare.replace(chr(10), chr(10) + "    ")}
    {code.replace(chr(10), chr(10) + "    ")}
    {{
        int opw_off = PyArray_NDIM(opw_view) - {yn}, opw_j;
        if (opw_off < 0 || PyArray_NDIM({y}) != {yn}) {{
            opw_broadcast_error({op}, PyArray_NDIM({y}), PyArray_DIMS({y}),
                                PyArray_NDIM(opw_view), PyArray_DIMS(opw_view), "");
            goto {label};
        }}
        for (opw_j = 0; opw_j < {yn}; opw_j++) {{
            npy_intp opw_s = PyArray_DIMS({y})[opw_j];
            if (opw_s != 1 && opw_s != PyArray_DIMS(opw_view)[opw_off + opw_j]) {{
                opw_broadcast_error({op}, PyArray_NDIM({y}), PyArray_DIMS({y}),
                                    PyArray_NDIM(opw_view), PyArray_DIMS(opw_view), "");
                goto {label};
            }}
        }}
        {runtime_code}
        if ({update} < 0) {{
            opw_broadcast_error({op}, PyArray_NDIM({y}), PyArray_DIMS({y}),
                                PyArray_NDIM(opw_view), PyArray_DIMS(opw_view),
                                "the indexed part of shape ");
            goto {label};
        }}
    }}
    Py_DECREF(opw_view);
    if (0) {{
    {label}:
        Py_XDECREF(opw_view);
        {fail}
    }}
}}
"""


def _inc_subtensor(op: IncSubtensor, node: Apply) -> IncSubtensorC | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if _placeholder_inputs(node, 2) is None:
        return None
    return IncSubtensorC()


ADV_SUPPORT = snippet("subtensor.c", "take_error")


class AdvancedSubtensor1C(SnippetImpl):
    """``numpy.take(x, ilist, axis=0)`` after the Python backend's index check."""

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers and the error helper."""
        return [SHARED_SUPPORT, ADV_SUPPORT]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check the indices in order, prepare the output, take into it."""
        x, ilist = inputs
        (z,) = outputs
        fail = sub["fail"]
        op = c_string(str(node.op))
        dtype = node.inputs[1].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{ilist}*)PyArray_GETPTR1({ilist}, opw_k))"
        if dtype.startswith("uint"):
            bad = f"(npy_uint64){raw} >= (npy_uint64)opw_n"
            boxed = f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
        else:
            bad = f"(npy_int64){raw} >= (npy_int64)opw_n || (npy_int64){raw} < -(npy_int64)opw_n"
            boxed = f"PyLong_FromLongLong((long long){raw})"
        return f"""
{{
    npy_intp opw_n, opw_k, opw_m = PyArray_DIMS({ilist})[0];
    npy_intp opw_dims[NPY_MAXDIMS];
    int opw_d;
    PyArrayObject* opw_res;
    if (PyArray_NDIM({x}) < 1) {{
        PyErr_Format(PyExc_IndexError, "%s: cannot index a 0-d array", {op});
        {fail}
    }}
    opw_n = PyArray_DIMS({x})[0];
    for (opw_k = 0; opw_k < opw_m; opw_k++) {{
        if ({bad}) {{
            PyObject* opw_b = {boxed};
            if (opw_b) {{
                opw_sub_take_error({op}, opw_b, opw_n);
                Py_DECREF(opw_b);
            }}
            {fail}
        }}
    }}
    opw_dims[0] = opw_m;
    for (opw_d = 1; opw_d < PyArray_NDIM({x}); opw_d++) opw_dims[opw_d] = PyArray_DIMS({x})[opw_d];
    if (opw_prep_output(&{z}, PyArray_NDIM({x}), opw_dims, PyArray_TYPE({x})) < 0) {fail}
    opw_res = (PyArrayObject*)PyArray_TakeFrom({x}, (PyObject*){ilist}, 0, {z}, NPY_RAISE);
    if (!opw_res) {fail}
    Py_DECREF(opw_res);
}}
"""


def _advanced_subtensor1(op: AdvancedSubtensor1, node: Apply) -> AdvancedSubtensor1C | None:
    if tensor_dtype(node.inputs[0]) is None or tensor_dtype(node.inputs[1]) is None:
        return None
    return AdvancedSubtensor1C()


# ====================================================================== AdvancedIncSubtensor1

AIS_SUPPORT = snippet("subtensor.c", "advanced_inc")

#: Per mode, the C update of ``{a}`` by ``{b}`` (``{u}``: the unsigned type of the width).
_AIS_UPDATES: MappingProxyType[str, str] = MappingProxyType(
    {
        "set": "{b}",
        "bool": "(npy_bool)({a} || {b})",
        "signed": "({t})(({u}){a} + ({u}){b})",
        "unsigned": "({t})({a} + {b})",
        "float": "{a} + {b}",
    }
)


def _ais_row_support(dtype: str, set_: bool) -> str:
    """``opw_ais_row_<dtype>_<set|inc>``: one row of the update, any strides."""
    t = DTYPE_SPECS[dtype][0]
    if set_:
        mode = "set"
    elif dtype == "bool":
        mode = "bool"
    elif dtype.startswith("int"):
        mode = "signed"
    elif dtype.startswith("uint"):
        mode = "unsigned"
    else:
        mode = "float"
    u = "npy_u" + dtype if dtype.startswith("int") else t
    key = f"{dtype}_{'set' if set_ else 'inc'}"

    def upd(a: str, b: str) -> str:
        return _AIS_UPDATES[mode].format(a=a, b=b, t=t, u=u)

    return f"""
/* opweave AdvancedIncSubtensor1 ({key}): update the row ``dst`` (``nd`` axes of ``dims``,
 * byte strides ``ds``) from ``src`` (byte strides ``ss``, 0 on broadcast axes). */
OPW_HOT static void opw_ais_row_{key}(char* dst, const char* src, int nd,
                                       const npy_intp* dims, const npy_intp* ds,
                                       const npy_intp* ss) {{
    npy_intp idx[NPY_MAXDIMS], n, i, dl, sl;
    int d;
    if (nd == 0) {{
        {t}* a = ({t}*)dst;
        *a = {upd("*a", f"*(const {t}*)src")};
        return;
    }}
    for (d = 0; d < nd; d++) {{
        if (dims[d] == 0) return;
        idx[d] = 0;
    }}
    n = dims[nd - 1];
    dl = ds[nd - 1];
    sl = ss[nd - 1];
    for (;;) {{
        if (dl == (npy_intp)sizeof({t}) && sl == (npy_intp)sizeof({t})) {{
            {t}* restrict a = ({t}*)dst;
            const {t}* restrict b = (const {t}*)src;
            for (i = 0; i < n; i++) a[i] = {upd("a[i]", "b[i]")};
        }} else if (dl == (npy_intp)sizeof({t}) && sl == 0) {{
            {t}* restrict a = ({t}*)dst;
            const {t} v = *(const {t}*)src;
            for (i = 0; i < n; i++) a[i] = {upd("a[i]", "v")};
        }} else {{
            for (i = 0; i < n; i++) {{
                {t}* a = ({t}*)(dst + i * dl);
                *a = {upd("*a", f"*(const {t}*)(src + i * sl)")};
            }}
        }}
        for (d = nd - 2; d >= 0; d--) {{
            dst += ds[d];
            src += ss[d];
            if (++idx[d] < dims[d]) break;
            dst -= ds[d] * dims[d];
            src -= ss[d] * dims[d];
            idx[d] = 0;
        }}
        if (d < 0) break;
    }}
}}
"""


class AdvancedIncSubtensor1C(SnippetImpl):
    """Rows of ``x`` (copied unless in place) set or incremented (repeats accumulate)."""

    version = (2,)

    def __init__(self, dtype: str, set_: bool) -> None:
        self.dtype = dtype
        self.set_ = set_

    def c_support_code(self, **kwargs: Any) -> list[str]:
        """The shared helpers, the index error, the overlap test and the row update."""
        return [SHARED_SUPPORT, ADV_SUPPORT, AIS_SUPPORT, _ais_row_support(self.dtype, self.set_)]

    def c_code(
        self,
        node: Apply,
        name: str,
        inputs: list[str],
        outputs: list[str],
        sub: dict[str, str],
    ) -> str:
        """Check indices and broadcast as Python does, prepare ``x``, update row by row."""
        op_ = node.op
        x, y, ilist = inputs
        (z,) = outputs
        fail = sub["fail"]
        op = c_string(str(op_))
        key = f"{self.dtype}_{'set' if self.set_ else 'inc'}"
        nd = node.inputs[0].type.ndim  # type: ignore[attr-defined]
        ystatic = node.inputs[1].type.shape  # type: ignore[attr-defined]
        yn = len(ystatic)
        idt = node.inputs[2].type.dtype  # type: ignore[attr-defined]
        raw = f"(*(dtype_{ilist}*)PyArray_GETPTR1({ilist}, opw_k))"
        if idt.startswith("uint") or idt == "bool":
            bad = f"(npy_uint64){raw} >= (npy_uint64)opw_n"
            boxed = f"PyLong_FromUnsignedLongLong((unsigned long long){raw})"
            row = f"(npy_intp){raw}"
        else:
            bad = f"(npy_int64){raw} >= (npy_int64)opw_n || (npy_int64){raw} < -(npy_int64)opw_n"
            boxed = f"PyLong_FromLongLong((long long){raw})"
            row = f"((npy_intp){raw} < 0 ? (npy_intp){raw} + opw_n : (npy_intp){raw})"
        runtime = "\n    ".join(
            f"if (PyArray_DIMS({y})[{d}] == 1 && opw_tgt[{nd - yn + d}] != 1) {{\n"
            f"        opw_runtime_broadcast_error({op}, {d}, opw_tgt[{nd - yn + d}]);\n"
            f"        {fail}\n    }}"
            for d, st in enumerate(ystatic)
            if st != 1
        )
        if op_.inplace:  # type: ignore[attr-defined]
            prepare = f"""if (!PyArray_ISWRITEABLE({x})) {{
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        {fail}
    }}
    Py_XDECREF({z});
    {z} = {x};
    Py_INCREF({z});"""
        else:
            prepare = f"""if (opw_overlap({z}, {x}) || opw_overlap({z}, {y})) Py_CLEAR({z});
    if (opw_prep_output(&{z}, {nd}, PyArray_DIMS({x}), PyArray_TYPE({x})) < 0) {fail}
    if (PyArray_CopyInto({z}, {x}) < 0) {fail}"""
        return f"""
{{
    npy_intp opw_n = PyArray_DIMS({x})[0], opw_k, opw_m = PyArray_DIMS({ilist})[0];
    npy_intp opw_tgt[{nd}], opw_ys[{nd}];
    int opw_d, opw_bad = 0;
    PyArrayObject* opw_y;
    for (opw_k = 0; opw_k < opw_m; opw_k++) {{
        if ({bad}) {{
            PyObject* opw_b = {boxed};
            if (opw_b) {{
                opw_sub_take_error({op}, opw_b, opw_n);
                Py_DECREF(opw_b);
            }}
            {fail}
        }}
    }}
    opw_tgt[0] = opw_m;
    for (opw_d = 1; opw_d < {nd}; opw_d++) opw_tgt[opw_d] = PyArray_DIMS({x})[opw_d];
    for (opw_d = 0; opw_d < {yn}; opw_d++) {{
        npy_intp opw_s = PyArray_DIMS({y})[opw_d];
        opw_bad |= opw_s != 1 && opw_s != opw_tgt[{nd - yn} + opw_d];
    }}
    if (opw_bad) {{
        opw_broadcast_error({op}, {yn}, PyArray_DIMS({y}), {nd}, opw_tgt, "");
        {fail}
    }}
    {runtime}
    {prepare}
    if (PyArray_TYPE({y}) != PyArray_TYPE({x}))
        opw_y = (PyArrayObject*)PyArray_Cast({y}, PyArray_TYPE({x}));
    else if (opw_overlap({z}, {y}))
        opw_y = (PyArrayObject*)PyArray_NewCopy({y}, NPY_ANYORDER);
    else {{
        opw_y = {y};
        Py_INCREF(opw_y);
    }}
    if (!opw_y) {fail}
    for (opw_d = 0; opw_d < {nd}; opw_d++) {{
        int opw_j = opw_d - {nd - yn};
        opw_ys[opw_d] = opw_j < 0 || PyArray_DIMS(opw_y)[opw_j < 0 ? 0 : opw_j] == 1
                            ? 0 : PyArray_STRIDES(opw_y)[opw_j];
    }}
    for (opw_k = 0; opw_k < opw_m; opw_k++)
        opw_ais_row_{key}(PyArray_BYTES({z}) + {row} * PyArray_STRIDES({z})[0],
                          PyArray_BYTES(opw_y) + opw_k * opw_ys[0], {nd - 1},
                          PyArray_DIMS({z}) + 1, PyArray_STRIDES({z}) + 1, opw_ys + 1);
    Py_DECREF(opw_y);
}}
"""


def _advanced_inc_subtensor1(
    op: AdvancedIncSubtensor1, node: Apply
) -> AdvancedIncSubtensor1C | None:
    dtype = tensor_dtype(node.inputs[0])
    if dtype is None or tensor_dtype(node.inputs[1]) is None:
        return None
    if tensor_dtype(node.inputs[2]) is None or tensor_dtype(node.outputs[0]) != dtype:
        return None
    return AdvancedIncSubtensor1C(dtype, op.set_instead_of_inc)


#: Op class -> ``factory(op, node)`` giving the C implementation or ``None``. Read-only.
C_OPS: MappingProxyType[type, Any] = MappingProxyType(
    {
        Subtensor: _subtensor,
        IncSubtensor: _inc_subtensor,
        AdvancedSubtensor1: _advanced_subtensor1,
        AdvancedIncSubtensor1: _advanced_inc_subtensor1,
    }
)
