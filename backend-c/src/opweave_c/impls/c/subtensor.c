#section slicing

/* opweave Subtensor: ``slice(start, stop, step).indices(n)`` and the slice's length, as
 * Python computes them (absent bounds take their defaults). 0, or -1 with ValueError set
 * for a zero step. */
static int opw_sub_slice(npy_intp n, int has_start, npy_int64 start, int has_stop,
                         npy_int64 stop, int has_step, npy_int64 step, npy_intp* out_start,
                         npy_intp* out_len, npy_intp* out_step) {
    npy_int64 len;
    if (!has_step) step = 1;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "slice step cannot be zero");
        return -1;
    }
    if (step < -NPY_MAX_INT64) step = -NPY_MAX_INT64;
    if (!has_start) {
        start = step < 0 ? (npy_int64)n - 1 : 0;
    } else if (start < 0) {
        start += n;
        if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= n) {
        start = step < 0 ? (npy_int64)n - 1 : (npy_int64)n;
    }
    if (!has_stop) {
        stop = step < 0 ? -1 : (npy_int64)n;
    } else if (stop < 0) {
        stop += n;
        if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= n) {
        stop = step < 0 ? (npy_int64)n - 1 : (npy_int64)n;
    }
    if (step < 0)
        len = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    else
        len = start < stop ? (stop - start - 1) / step + 1 : 0;
    *out_start = (npy_intp)start;
    *out_len = (npy_intp)len;
    *out_step = (npy_intp)step;
    return 0;
}

/* IndexError "<op>: index <i> is out of bounds for axis <axis> with size <n> (input shape
 * <shape>)", as the Python backend words NumPy's error. */
static void opw_sub_index_error(const char* op, npy_int64 i, int axis, npy_intp n,
                                PyArrayObject* x) {
    PyObject* s = opw_shape_str(PyArray_NDIM(x), PyArray_DIMS(x), ", ");
    if (!s) return;
    PyErr_Format(PyExc_IndexError,
                 "%s: index %lld is out of bounds for axis %d with size %zd (input shape %U)",
                 op, (long long)i, axis, (Py_ssize_t)n, s);
    Py_DECREF(s);
}


#section view

{
    npy_intp opw_dims[NPY_MAXDIMS], opw_strides[NPY_MAXDIMS];
    npy_intp opw_n, opw_start, opw_len, opw_step;
    npy_int64 opw_i;
    char* opw_data = PyArray_BYTES(%(x)s);
    int opw_nd = 0, opw_d;
    (void)opw_n; (void)opw_start; (void)opw_len; (void)opw_step; (void)opw_i;
    if (PyArray_NDIM(%(x)s) < %(n_idx)s) {
        PyErr_Format(PyExc_IndexError, "%%s: too many indices for array: array is "
                     "%%d-dimensional, but %(n_idx)s were indexed", %(op)s, PyArray_NDIM(%(x)s));
        %(fail)s
    }
    %(body)s
    for (opw_d = %(n_idx)s; opw_d < PyArray_NDIM(%(x)s); opw_d++) {
        opw_dims[opw_nd] = PyArray_DIMS(%(x)s)[opw_d];
        opw_strides[opw_nd] = PyArray_STRIDES(%(x)s)[opw_d];
        opw_nd++;
    }
    %(view)s = opw_make_view(%(x)s, opw_nd, opw_dims, opw_strides, opw_data);
    if (!%(view)s) %(fail)s
}
#section view_uint64_overflow
if (%(raw)s > (npy_uint64)NPY_MAX_INT64) {
    PyErr_SetString(PyExc_OverflowError, "Python int too large to convert to C long");
    %(fail)s
}
#section view_slice
if (opw_sub_slice(opw_n, %(hs)s, %(s)s, %(ht)s, %(t)s, %(hp)s, %(p)s, &opw_start, &opw_len, &opw_step) < 0) %(fail)s
opw_dims[opw_nd] = opw_len;
opw_strides[opw_nd] = PyArray_STRIDES(%(x)s)[%(d)s] * opw_step;
if (opw_len > 0) opw_data += opw_start * PyArray_STRIDES(%(x)s)[%(d)s];
opw_nd++;
#section view_index
opw_i = %(i)s;
if (opw_i < -(npy_int64)opw_n || opw_i >= (npy_int64)opw_n) {
    opw_sub_index_error(%(op)s, opw_i, %(d)s, opw_n, %(x)s);
    %(fail)s
}
if (opw_i < 0) opw_i += opw_n;
opw_data += opw_i * PyArray_STRIDES(%(x)s)[%(d)s];
#section subtensor

{
    PyArrayObject* opw_view = NULL;
    %(view)s
    Py_XDECREF(%(z)s);
    %(z)s = opw_view;
}

#section inc

/* opweave IncSubtensor: ``numpy.add(view, y, out=view, casting="unsafe")``. 0 or -1. */
static PyObject* opw_sub_np_add = NULL;
static int opw_sub_add_into(PyArrayObject* view, PyArrayObject* y) {
    PyObject *args, *kw, *r;
    if (!opw_sub_np_add) {
        PyObject* np = PyImport_ImportModule("numpy");
        if (!np) return -1;
        opw_sub_np_add = PyObject_GetAttrString(np, "add");
        Py_DECREF(np);
        if (!opw_sub_np_add) return -1;
    }
    args = PyTuple_Pack(3, (PyObject*)view, (PyObject*)y, (PyObject*)view);
    kw = Py_BuildValue("{s:s}", "casting", "unsafe");
    r = (args && kw) ? PyObject_Call(opw_sub_np_add, args, kw) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kw);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

#section inc_inplace
Py_XDECREF(%(z)s);
%(z)s = %(x)s;
Py_INCREF(%(z)s);
#section inc_copy
if (%(z)s == %(x)s) Py_CLEAR(%(z)s);  /* never write into the input */
if (opw_prep_output(&%(z)s, PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), PyArray_TYPE(%(x)s)) < 0) %(fail)s
if (PyArray_CopyInto(%(z)s, %(x)s) < 0) %(fail)s
#section inc_runtime_broadcast
if (PyArray_DIMS(%(y)s)[%(d)s] == 1 && PyArray_DIMS(opw_view)[opw_off + %(d)s] != 1) {
    opw_runtime_broadcast_error(%(op)s, %(d)s, PyArray_DIMS(opw_view)[opw_off + %(d)s]);
    goto %(label)s;
}
#section inc_subtensor

{
    PyArrayObject* opw_view = NULL;
    %(prepare)s
    %(view)s
    {
        int opw_off = PyArray_NDIM(opw_view) - %(yn)s, opw_j;
        if (opw_off < 0 || PyArray_NDIM(%(y)s) != %(yn)s) {
            opw_broadcast_error(%(op)s, PyArray_NDIM(%(y)s), PyArray_DIMS(%(y)s),
                                PyArray_NDIM(opw_view), PyArray_DIMS(opw_view), "");
            goto %(label)s;
        }
        for (opw_j = 0; opw_j < %(yn)s; opw_j++) {
            npy_intp opw_s = PyArray_DIMS(%(y)s)[opw_j];
            if (opw_s != 1 && opw_s != PyArray_DIMS(opw_view)[opw_off + opw_j]) {
                opw_broadcast_error(%(op)s, PyArray_NDIM(%(y)s), PyArray_DIMS(%(y)s),
                                    PyArray_NDIM(opw_view), PyArray_DIMS(opw_view), "");
                goto %(label)s;
            }
        }
        %(runtime_code)s
        if (%(update)s < 0) {
            opw_broadcast_error(%(op)s, PyArray_NDIM(%(y)s), PyArray_DIMS(%(y)s),
                                PyArray_NDIM(opw_view), PyArray_DIMS(opw_view),
                                "the indexed part of shape ");
            goto %(label)s;
        }
    }
    Py_DECREF(opw_view);
    if (0) {
    %(label)s:
        Py_XDECREF(opw_view);
        %(fail)s
    }
}

#section take_error

/* opweave AdvancedSubtensor1: IndexError naming the first out-of-range index. */
static void opw_sub_take_error(const char* op, PyObject* bad, npy_intp n) {
    PyErr_Format(PyExc_IndexError, "%s: index %S is out of bounds for axis 0 with size %zd",
                 op, bad, (Py_ssize_t)n);
}

#section advanced_subtensor1

{
    npy_intp opw_n, opw_k, opw_m = PyArray_DIMS(%(ilist)s)[0];
    npy_intp opw_dims[NPY_MAXDIMS];
    int opw_d;
    PyArrayObject* opw_res;
    if (PyArray_NDIM(%(x)s) < 1) {
        PyErr_Format(PyExc_IndexError, "%%s: cannot index a 0-d array", %(op)s);
        %(fail)s
    }
    opw_n = PyArray_DIMS(%(x)s)[0];
    for (opw_k = 0; opw_k < opw_m; opw_k++) {
        if (%(bad)s) {
            PyObject* opw_b = %(boxed)s;
            if (opw_b) {
                opw_sub_take_error(%(op)s, opw_b, opw_n);
                Py_DECREF(opw_b);
            }
            %(fail)s
        }
    }
    opw_dims[0] = opw_m;
    for (opw_d = 1; opw_d < PyArray_NDIM(%(x)s); opw_d++) opw_dims[opw_d] = PyArray_DIMS(%(x)s)[opw_d];
    if (opw_prep_output(&%(z)s, PyArray_NDIM(%(x)s), opw_dims, PyArray_TYPE(%(x)s)) < 0) %(fail)s
    opw_res = (PyArrayObject*)PyArray_TakeFrom(%(x)s, (PyObject*)%(ilist)s, 0, %(z)s, NPY_RAISE);
    if (!opw_res) %(fail)s
    Py_DECREF(opw_res);
}

#section advanced_inc


#section advanced_inc_row

/* opweave AdvancedIncSubtensor1 (%(key)s): update the row ``dst`` (``nd`` axes of ``dims``,
 * byte strides ``ds``) from ``src`` (byte strides ``ss``, 0 on broadcast axes). */
OPW_HOT static void opw_ais_row_%(key)s(char* dst, const char* src, int nd,
                                       const npy_intp* dims, const npy_intp* ds,
                                       const npy_intp* ss) {
    npy_intp idx[NPY_MAXDIMS], n, i, dl, sl;
    int d;
    if (nd == 0) {
        %(t)s* a = (%(t)s*)dst;
        *a = %(upd_one)s;
        return;
    }
    for (d = 0; d < nd; d++) {
        if (dims[d] == 0) return;
        idx[d] = 0;
    }
    n = dims[nd - 1];
    dl = ds[nd - 1];
    sl = ss[nd - 1];
    for (;;) {
        if (dl == (npy_intp)sizeof(%(t)s) && sl == (npy_intp)sizeof(%(t)s)) {
            %(t)s* restrict a = (%(t)s*)dst;
            const %(t)s* restrict b = (const %(t)s*)src;
            for (i = 0; i < n; i++) a[i] = %(upd_contig)s;
        } else if (dl == (npy_intp)sizeof(%(t)s) && sl == 0) {
            %(t)s* restrict a = (%(t)s*)dst;
            const %(t)s v = *(const %(t)s*)src;
            for (i = 0; i < n; i++) a[i] = %(upd_bcast)s;
        } else {
            for (i = 0; i < n; i++) {
                %(t)s* a = (%(t)s*)(dst + i * dl);
                *a = %(upd_strided)s;
            }
        }
        for (d = nd - 2; d >= 0; d--) {
            dst += ds[d];
            src += ss[d];
            if (++idx[d] < dims[d]) break;
            dst -= ds[d] * dims[d];
            src -= ss[d] * dims[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}

#section advanced_inc_inplace
if (!PyArray_ISWRITEABLE(%(x)s)) {
        PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
        %(fail)s
    }
    Py_XDECREF(%(z)s);
    %(z)s = %(x)s;
    Py_INCREF(%(z)s);
#section advanced_inc_copy
if (opw_overlap(%(z)s, %(x)s) || opw_overlap(%(z)s, %(y)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, %(nd)s, PyArray_DIMS(%(x)s), PyArray_TYPE(%(x)s)) < 0) %(fail)s
    if (PyArray_CopyInto(%(z)s, %(x)s) < 0) %(fail)s
#section advanced_inc_runtime_broadcast
if (PyArray_DIMS(%(y)s)[%(d)s] == 1 && opw_tgt[%(axis)s] != 1) {
        opw_runtime_broadcast_error(%(op)s, %(d)s, opw_tgt[%(axis)s]);
        %(fail)s
    }
#section advanced_inc_body

{
    npy_intp opw_n = PyArray_DIMS(%(x)s)[0], opw_k, opw_m = PyArray_DIMS(%(ilist)s)[0];
    npy_intp opw_tgt[%(nd)s], opw_ys[%(nd)s];
    int opw_d, opw_bad = 0;
    PyArrayObject* opw_y;
    for (opw_k = 0; opw_k < opw_m; opw_k++) {
        if (%(bad)s) {
            PyObject* opw_b = %(boxed)s;
            if (opw_b) {
                opw_sub_take_error(%(op)s, opw_b, opw_n);
                Py_DECREF(opw_b);
            }
            %(fail)s
        }
    }
    opw_tgt[0] = opw_m;
    for (opw_d = 1; opw_d < %(nd)s; opw_d++) opw_tgt[opw_d] = PyArray_DIMS(%(x)s)[opw_d];
    for (opw_d = 0; opw_d < %(yn)s; opw_d++) {
        npy_intp opw_s = PyArray_DIMS(%(y)s)[opw_d];
        opw_bad |= opw_s != 1 && opw_s != opw_tgt[%(nd_yn)s + opw_d];
    }
    if (opw_bad) {
        opw_broadcast_error(%(op)s, %(yn)s, PyArray_DIMS(%(y)s), %(nd)s, opw_tgt, "");
        %(fail)s
    }
    %(runtime)s
    %(prepare)s
    if (PyArray_TYPE(%(y)s) != PyArray_TYPE(%(x)s))
        opw_y = (PyArrayObject*)PyArray_Cast(%(y)s, PyArray_TYPE(%(x)s));
    else if (opw_overlap(%(z)s, %(y)s))
        opw_y = (PyArrayObject*)PyArray_NewCopy(%(y)s, NPY_ANYORDER);
    else {
        opw_y = %(y)s;
        Py_INCREF(opw_y);
    }
    if (!opw_y) %(fail)s
    for (opw_d = 0; opw_d < %(nd)s; opw_d++) {
        int opw_j = opw_d - %(nd_yn)s;
        opw_ys[opw_d] = opw_j < 0 || PyArray_DIMS(opw_y)[opw_j < 0 ? 0 : opw_j] == 1
                            ? 0 : PyArray_STRIDES(opw_y)[opw_j];
    }
    %(loop)s
    Py_DECREF(opw_y);
}
#section advanced_inc_loop
for (opw_k = 0; opw_k < opw_m; opw_k++)
        opw_ais_row_%(key)s(PyArray_BYTES(%(z)s) + %(row)s * PyArray_STRIDES(%(z)s)[0],
                          PyArray_BYTES(opw_y) + opw_k * opw_ys[0], %(nd1)s,
                          PyArray_DIMS(%(z)s) + 1, PyArray_STRIDES(%(z)s) + 1, opw_ys + 1);
#section advanced_inc_once_loop
/* Each row once, from its last index (``x[ilist] += y``): walk the indices backwards and
     * skip the rows already updated. */
    {
        char* opw_seen = (char*)PyMem_Calloc(opw_n > 0 ? (size_t)opw_n : 1, 1);
        if (!opw_seen) {
            Py_DECREF(opw_y);
            PyErr_NoMemory();
            %(fail)s
        }
        for (opw_k = opw_m - 1; opw_k >= 0; opw_k--) {
            npy_intp opw_r = %(row)s;
            if (opw_seen[opw_r]) continue;
            opw_seen[opw_r] = 1;
            opw_ais_row_%(key)s(PyArray_BYTES(%(z)s) + opw_r * PyArray_STRIDES(%(z)s)[0],
                              PyArray_BYTES(opw_y) + opw_k * opw_ys[0], %(nd1)s,
                              PyArray_DIMS(%(z)s) + 1, PyArray_STRIDES(%(z)s) + 1,
                              opw_ys + 1);
        }
        PyMem_Free(opw_seen);
    }

#section advanced_take_error

/* opweave AdvancedSubtensor: IndexError naming the first out-of-range index and its axis. */
static void opw_sub_axis_take_error(const char* op, PyObject* bad, int axis, npy_intp n) {
    PyErr_Format(PyExc_IndexError, "%s: index %S is out of bounds for axis %d with size %zd",
                 op, bad, axis, (Py_ssize_t)n);
}

#section advanced_take

{
    npy_intp opw_n = PyArray_DIMS(%(x)s)[%(axis)s], opw_k, opw_m;
    PyArrayObject *opw_idx, *opw_res;
    opw_idx = (PyArrayObject*)PyArray_GETCONTIGUOUS(%(ilist)s);
    if (!opw_idx) %(fail)s
    opw_m = PyArray_SIZE(opw_idx);
    for (opw_k = 0; opw_k < opw_m; opw_k++) {
        if (%(bad)s) {
            PyObject* opw_b = %(boxed)s;
            if (opw_b) {
                opw_sub_axis_take_error(%(op)s, opw_b, %(axis)s, opw_n);
                Py_DECREF(opw_b);
            }
            Py_DECREF(opw_idx);
            %(fail)s
        }
    }
    opw_res = (PyArrayObject*)PyArray_TakeFrom(%(x)s, (PyObject*)opw_idx, %(axis)s, NULL,
                                               NPY_RAISE);
    Py_DECREF(opw_idx);
    if (!opw_res) %(fail)s
    Py_XDECREF(%(z)s);
    %(z)s = opw_res;
}

