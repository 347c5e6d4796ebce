#section make_vector

{
    npy_intp opw_n = %(n)s;
    if (opw_prep_output(&%(z)s, 1, &opw_n, %(typenum)s) < 0) %(fail)s
    %(stores)s
}

#section tensor_from_scalar

if (opw_prep_output(&%(z)s, 0, NULL, %(typenum)s) < 0) %(fail)s
*(dtype_%(z)s*)PyArray_DATA(%(z)s) = (dtype_%(z)s)%(s)s;

#section arange

{
    PyObject *opw_a = NULL, *opw_b = NULL, *opw_c = NULL, *opw_r = NULL;
    PyArray_Descr* opw_descr;
    if (%(step_zero)s) {
        PyErr_SetString(PyExc_ValueError, "ARange: step must not be zero");
        %(fail)s
    }
    opw_descr = PyArray_DescrFromType(%(typenum)s);
    opw_a = %(a)s;
    opw_b = %(b)s;
    opw_c = %(c)s;
    if (opw_descr && opw_a && opw_b && opw_c)
        opw_r = PyArray_ArangeObj(opw_a, opw_b, opw_c, opw_descr);
    Py_XDECREF(opw_descr);
    Py_XDECREF(opw_a);
    Py_XDECREF(opw_b);
    Py_XDECREF(opw_c);
    if (!opw_r) %(fail)s
    Py_XDECREF(%(z)s);
    %(z)s = (PyArrayObject*)opw_r;
}

#section alloc

{
    npy_intp opw_shp[%(max_nd_1)s];
    int opw_k, opw_bad = 0;
    %(reads)s
    for (opw_k = 0; opw_k < %(nd)s; opw_k++) opw_bad |= opw_shp[opw_k] < 0;
    if (opw_bad) {
        PyObject* opw_t = opw_shape_str(%(nd)s, opw_shp, ", ");
        if (opw_t) {
            PyErr_Format(PyExc_ValueError, "Alloc: negative dimensions are not allowed: %%U",
                         opw_t);
            Py_DECREF(opw_t);
        }
        %(fail)s
    }
    if (PyArray_NDIM(%(value)s) != %(vn)s) opw_bad = 1;
    for (opw_k = 0; !opw_bad && opw_k < %(vn)s; opw_k++) {
        npy_intp opw_s = PyArray_DIMS(%(value)s)[opw_k];
        opw_bad = opw_s != 1 && opw_s != opw_shp[%(nd_vn)s + opw_k];
    }
    if (opw_bad) {
        opw_broadcast_error("Alloc", PyArray_NDIM(%(value)s), PyArray_DIMS(%(value)s), %(nd)s,
                            opw_shp, "");
        %(fail)s
    }
    %(runtime)s
    if (opw_prep_output(&%(z)s, %(nd)s, opw_shp, PyArray_TYPE(%(value)s)) < 0) %(fail)s
    if (PyArray_CopyInto(%(z)s, %(value)s) < 0) %(fail)s
}

#section join

{
    const npy_int64 opw_axis = %(axis)s;
    PyObject *opw_seq, *opw_r;
    opw_seq = PyTuple_New(%(n)s);
    if (!opw_seq) %(fail)s
    %(packs)s
    if (opw_axis < -%(nd)s || opw_axis >= %(nd)s) {
        PyObject* opw_shp = opw_shapes_str(
            %(n)s, (PyArrayObject* const*)&PyTuple_GET_ITEM(opw_seq, 0));
        if (opw_shp)
            PyErr_Format(PyExc_ValueError,
                         "Join: cannot join shapes [%%U] along axis %%lld: axis %%lld is out of "
                         "bounds for array of dimension %(nd)s",
                         opw_shp, (long long)opw_axis, (long long)opw_axis);
        Py_XDECREF(opw_shp);
        Py_DECREF(opw_seq);
        %(fail)s
    }
    opw_r = PyArray_Concatenate(opw_seq, (int)opw_axis);
    if (!opw_r && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyObject *opw_t, *opw_v, *opw_tb, *opw_msg, *opw_shapes;
        PyErr_Fetch(&opw_t, &opw_v, &opw_tb);
        PyErr_NormalizeException(&opw_t, &opw_v, &opw_tb);
        opw_msg = opw_v ? PyObject_Str(opw_v) : NULL;
        Py_XDECREF(opw_t);
        Py_XDECREF(opw_v);
        Py_XDECREF(opw_tb);
        opw_shapes = opw_shapes_str(%(n)s, (PyArrayObject* const*)&PyTuple_GET_ITEM(opw_seq, 0));
        if (opw_msg && opw_shapes)
            PyErr_Format(PyExc_ValueError, "Join: cannot join shapes [%%U] along axis %%lld: %%U",
                         opw_shapes, (long long)opw_axis, opw_msg);
        Py_XDECREF(opw_msg);
        Py_XDECREF(opw_shapes);
    }
    Py_DECREF(opw_seq);
    if (!opw_r) %(fail)s
    if (PyArray_TYPE((PyArrayObject*)opw_r) != %(typenum)s) {
        PyObject* opw_c = PyArray_Cast((PyArrayObject*)opw_r, %(typenum)s);
        Py_DECREF(opw_r);
        if (!opw_c) %(fail)s
        opw_r = opw_c;
    }
    Py_XDECREF(%(z)s);
    %(z)s = (PyArrayObject*)opw_r;
}

#section split

{
    npy_int64 opw_axis = %(axis_value)s, opw_total = 0;
    npy_int64 opw_sizes[%(n)s];
    npy_intp opw_j, opw_len = PyArray_DIMS(%(splits)s)[0];
    npy_intp opw_dims[NPY_MAXDIMS];
    int opw_ax, opw_neg = 0;
    char* opw_data;
    PyArrayObject* opw_v;
    if (opw_axis < -PyArray_NDIM(%(x)s) || opw_axis >= PyArray_NDIM(%(x)s)) {
        PyErr_Format(PyExc_ValueError, "Split: axis %%lld is out of range for a %%d-d value",
                     (long long)opw_axis, PyArray_NDIM(%(x)s));
        %(fail)s
    }
    opw_ax = (int)(opw_axis < 0 ? opw_axis + PyArray_NDIM(%(x)s) : opw_axis);
    if (opw_len != %(n)s) {
        PyErr_Format(PyExc_ValueError, "Split: expected %(n)s split sizes, got %%zd",
                     (Py_ssize_t)opw_len);
        %(fail)s
    }
    for (opw_j = 0; opw_j < %(n)s; opw_j++) {
        opw_sizes[opw_j] = %(read)s;
        opw_neg |= opw_sizes[opw_j] < 0;
        opw_total += opw_sizes[opw_j];
    }
    if (opw_neg || opw_total != PyArray_DIMS(%(x)s)[opw_ax]) {
        PyObject* opw_l = PyList_New(%(n)s);
        for (opw_j = 0; opw_l && opw_j < %(n)s; opw_j++) {
            PyObject* opw_e = PyLong_FromLongLong((long long)opw_sizes[opw_j]);
            if (!opw_e) { Py_CLEAR(opw_l); break; }
            PyList_SET_ITEM(opw_l, opw_j, opw_e);
        }
        if (opw_l && opw_neg)
            PyErr_Format(PyExc_ValueError,
                         "Split: split sizes must be non-negative, got %%R", opw_l);
        else if (opw_l)
            PyErr_Format(PyExc_ValueError,
                         "Split: the split sizes %%R sum to %%lld, not to the length %%zd of "
                         "axis %%lld", opw_l, (long long)opw_total,
                         (Py_ssize_t)PyArray_DIMS(%(x)s)[opw_ax], (long long)opw_axis);
        Py_XDECREF(opw_l);
        %(fail)s
    }
    memcpy(opw_dims, PyArray_DIMS(%(x)s), PyArray_NDIM(%(x)s) * sizeof(npy_intp));
    opw_data = PyArray_BYTES(%(x)s);
    %(views)s
}

#section split_view
opw_dims[opw_ax] = (npy_intp)opw_sizes[%(k)s];
    opw_v = opw_make_view(%(x)s, PyArray_NDIM(%(x)s), opw_dims, PyArray_STRIDES(%(x)s),
                          opw_sizes[%(k)s] > 0 ? opw_data : PyArray_BYTES(%(x)s));
    if (!opw_v) %(fail)s
    opw_data += opw_sizes[%(k)s] * PyArray_STRIDES(%(x)s)[opw_ax];
    Py_XDECREF(%(z)s);
    %(z)s = opw_v;
#section selection_support

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
    return opw_make_view(x, k + 1, dims, strides, data);
}

#section nonzero_support

/* opweave Nonzero (%(dtype)s): with ``out`` NULL, the number of non-zero elements of ``a``
 * (size > 0); else write their indices in C order, row ``d`` of ``out`` (``count``
 * columns) holding the indices along axis ``d``. */
OPW_HOT static npy_intp opw_sel_nonzero_%(dtype)s(PyArrayObject* a, npy_int64* out,
                                                npy_intp count) {
    int nd = PyArray_NDIM(a), d;
    const npy_intp* dims = PyArray_DIMS(a);
    const npy_intp* st = PyArray_STRIDES(a);
    const npy_intp n = dims[nd - 1], s = st[nd - 1];
    npy_intp idx[NPY_MAXDIMS], c = 0, i;
    const char* p = PyArray_BYTES(a);
    if (out == NULL && PyArray_IS_C_CONTIGUOUS(a)) {
        const %(t)s* v = (const %(t)s*)p;
        npy_intp size = PyArray_SIZE(a);
        for (i = 0; i < size; i++) c += v[i] != 0;
        return c;
    }
    for (d = 0; d < nd; d++) idx[d] = 0;
    for (;;) {
        if (out == NULL) {
            for (i = 0; i < n; i++) c += *(const %(t)s*)(p + i * s) != 0;
        } else {
            for (i = 0; i < n; i++) {
                if (*(const %(t)s*)(p + i * s) != 0) {
                    for (d = 0; d < nd - 1; d++) out[d * count + c] = (npy_int64)idx[d];
                    out[(nd - 1) * count + c] = (npy_int64)i;
                    c++;
                }
            }
        }
        for (d = nd - 2; d >= 0; d--) {
            p += st[d];
            if (++idx[d] < dims[d]) break;
            p -= st[d] * dims[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    return c;
}

#section nonzero

{
    npy_intp opw_dims[2];
    opw_dims[0] = %(nd)s;
    opw_dims[1] = PyArray_SIZE(%(a)s) > 0 ? %(fn)s(%(a)s, NULL, 0) : 0;
    if (opw_overlap(%(z)s, %(a)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, 2, opw_dims, NPY_INT64) < 0) %(fail)s
    if (opw_dims[1] > 0) %(fn)s(%(a)s, (npy_int64*)PyArray_DATA(%(z)s), opw_dims[1]);
}

#section extract_diag

{
    PyArrayObject* opw_v = opw_sel_diag_view(%(x)s, %(diag_args)s);
    if (!opw_v) %(fail)s
    if (opw_overlap(%(z)s, %(x)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, PyArray_NDIM(opw_v), PyArray_DIMS(opw_v), PyArray_TYPE(%(x)s)) < 0
        || PyArray_CopyInto(%(z)s, opw_v) < 0) {
        Py_DECREF(opw_v);
        %(fail)s
    }
    Py_DECREF(opw_v);
}

#section eye

{
    npy_int64 opw_n = %(int_value_n_dt_0)s, opw_m = %(int_value_m_dt_1)s;
    npy_int64 opw_k = %(int_value_k_dt_2)s, opw_i;
    npy_intp opw_dims[2];
    char* opw_data;
    npy_intp opw_rs;
    if (opw_n < 0 || opw_m < 0) {
        PyErr_Format(PyExc_ValueError, "Eye: negative dimensions are not allowed: (%%lld, %%lld)",
                     (long long)opw_n, (long long)opw_m);
        %(fail)s
    }
    opw_dims[0] = (npy_intp)opw_n;
    opw_dims[1] = (npy_intp)opw_m;
    if (opw_prep_output(&%(z)s, 2, opw_dims, %(typenum)s) < 0) %(fail)s
    memset(PyArray_DATA(%(z)s), 0, PyArray_NBYTES(%(z)s));
    opw_data = PyArray_BYTES(%(z)s);
    opw_rs = PyArray_STRIDES(%(z)s)[0];
    if (opw_k > -opw_n && opw_k < opw_m) {
        for (opw_i = opw_k < 0 ? -opw_k : 0; opw_i < opw_n && opw_i + opw_k < opw_m; opw_i++)
            ((dtype_%(z)s*)(opw_data + opw_i * opw_rs))[opw_i + opw_k] = (dtype_%(z)s)1;
    }
}

#section diag_grad

{
    PyArrayObject* opw_v = NULL;
    int opw_d, opw_bad = 0;
    if (opw_overlap(%(z)s, %(x)s) || opw_overlap(%(z)s, %(y)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), PyArray_TYPE(%(x)s)) < 0)
        %(fail)s
    if (PyArray_CopyInto(%(z)s, %(x)s) < 0) %(fail)s
    opw_v = opw_sel_diag_view(%(z)s, %(diag_args_node_op)s);
    if (!opw_v) %(fail)s
    if (PyArray_NDIM(%(y)s) != PyArray_NDIM(opw_v)) opw_bad = 1;
    for (opw_d = 0; !opw_bad && opw_d < PyArray_NDIM(%(y)s); opw_d++) {
        npy_intp opw_s = PyArray_DIMS(%(y)s)[opw_d];
        opw_bad = opw_s != 1 && opw_s != PyArray_DIMS(opw_v)[opw_d];
    }
    if (opw_bad) {
        PyObject* opw_a = opw_shape_str(PyArray_NDIM(%(y)s), PyArray_DIMS(%(y)s), ",");
        PyObject* opw_b = opw_shape_str(PyArray_NDIM(opw_v), PyArray_DIMS(opw_v), ",");
        if (opw_a && opw_b)
            PyErr_Format(PyExc_ValueError, "shape mismatch: value array of shape %%U could not "
                         "be broadcast to indexing result of shape %%U", opw_a, opw_b);
        Py_XDECREF(opw_a);
        Py_XDECREF(opw_b);
        goto %(label)s;
    }
    if (PyArray_CopyInto(opw_v, %(y)s) < 0) goto %(label)s;
    Py_DECREF(opw_v);
    if (0) {
    %(label)s:
        Py_XDECREF(opw_v);
        %(fail)s
    }
}


#section choose

{
    PyArrayObject* opw_r = (PyArrayObject*)PyArray_Choose(%(a)s, (PyObject*)%(choices)s, NULL,
                                                          %(clipmode)s);
    if (!opw_r) %(fail)s
    if (PyArray_TYPE(opw_r) != %(typenum)s) {
        PyObject* opw_c = PyArray_Cast(opw_r, %(typenum)s);
        Py_DECREF(opw_r);
        if (!opw_c) %(fail)s
        opw_r = (PyArrayObject*)opw_c;
    }
    Py_XDECREF(%(z)s);
    %(z)s = opw_r;
}
