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
    npy_int64 opw_axis = %(int_value_axis_adt)s;
    PyObject *opw_seq, *opw_r;
    if (opw_axis < -%(ndim)s || opw_axis >= %(ndim)s) {
        PyErr_Format(PyExc_ValueError, "Join: axis %%lld is out of range for %(ndim)s-d tensors",
                     (long long)opw_axis);
        %(fail)s
    }
    opw_seq = PyTuple_New(%(n)s);
    if (!opw_seq) %(fail)s
    %(packs)s
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
opw_dims[opw_ax] = (npy_intp)opw_sizes[%(k)s];
    opw_v = opw_make_view(%(x)s, PyArray_NDIM(%(x)s), opw_dims, PyArray_STRIDES(%(x)s),
                          opw_sizes[%(k)s] > 0 ? opw_data : PyArray_BYTES(%(x)s));
    if (!opw_v) %(fail)s
    opw_data += opw_sizes[%(k)s] * PyArray_STRIDES(%(x)s)[opw_ax];
    Py_XDECREF(%(z)s);
    %(z)s = opw_v;
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

