#section cumop

{
    PyObject* opw_r;
    if (opw_prep_output(&%(z)s, PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), %(typenum)s) < 0)
        %(fail)s
    opw_r = %(fn)s(%(x)s, %(axis)s, %(typenum)s, %(z)s);
    if (!opw_r) %(fail)s
    Py_DECREF(opw_r);
}

#section searchsorted

{
    PyObject* opw_r = PyArray_SearchSorted(%(x)s, (PyObject*)%(v)s, %(side)s, %(sorter)s);
    if (!opw_r) %(fail)s
    if (PyArray_TYPE((PyArrayObject*)opw_r) != NPY_INT64) {
        PyObject* opw_c = PyArray_Cast((PyArrayObject*)opw_r, NPY_INT64);
        Py_DECREF(opw_r);
        if (!opw_c) %(fail)s
        opw_r = opw_c;
    }
    Py_XDECREF(%(z)s);
    %(z)s = (PyArrayObject*)opw_r;
}

#section repeat

{
    PyObject* opw_r = PyArray_Repeat(%(x)s, (PyObject*)%(repeats)s, %(axis)s);
    if (!opw_r) %(fail)s
    Py_XDECREF(%(z)s);
    %(z)s = (PyArrayObject*)opw_r;
}

#section fill_diagonal

{
    const int opw_nd = PyArray_NDIM(%(a)s);
    const dtype_%(z)s opw_v = *(dtype_%(val)s*)PyArray_DATA(%(val)s);
    npy_intp opw_n, opw_i, opw_step;
    int opw_k;
    PyArrayObject* opw_r = (PyArrayObject*)PyArray_NewCopy(%(a)s, NPY_CORDER);
    if (!opw_r) %(fail)s
    opw_n = PyArray_DIMS(opw_r)[0];
    opw_step = PyArray_STRIDES(opw_r)[0];
    for (opw_k = 1; opw_k < opw_nd; opw_k++) {
        const npy_intp opw_d = PyArray_DIMS(opw_r)[opw_k];
        if (opw_nd > 2 && opw_d != opw_n) {
            Py_DECREF(opw_r);
            PyErr_SetString(PyExc_ValueError, "All dimensions of input must be of equal length");
            %(fail)s
        }
        if (opw_d < opw_n) opw_n = opw_d;
        opw_step += PyArray_STRIDES(opw_r)[opw_k];
    }
    for (opw_i = 0; opw_i < opw_n; opw_i++)
        *(dtype_%(z)s*)(PyArray_BYTES(opw_r) + opw_i * opw_step) = opw_v;
    Py_XDECREF(%(z)s);
    %(z)s = opw_r;
}

#section fill_diagonal_offset

{
    const npy_int64 opw_off = %(offset)s;
    const dtype_%(z)s opw_v = *(dtype_%(val)s*)PyArray_DATA(%(val)s);
    npy_intp opw_h, opw_w, opw_i, opw_stop;
    PyArrayObject* opw_r = (PyArrayObject*)PyArray_NewCopy(%(a)s, NPY_CORDER);
    if (!opw_r) %(fail)s
    opw_h = PyArray_DIMS(opw_r)[0];
    opw_w = PyArray_DIMS(opw_r)[1];
    if (opw_off < (npy_int64)opw_w && opw_off > -(npy_int64)opw_h) {
        opw_stop = opw_h < opw_w - (npy_intp)opw_off ? opw_h : opw_w - (npy_intp)opw_off;
        for (opw_i = opw_off < 0 ? -(npy_intp)opw_off : 0; opw_i < opw_stop; opw_i++)
            *(dtype_%(z)s*)(PyArray_BYTES(opw_r) + opw_i * PyArray_STRIDES(opw_r)[0] +
                            (opw_i + (npy_intp)opw_off) * PyArray_STRIDES(opw_r)[1]) = opw_v;
    }
    Py_XDECREF(%(z)s);
    %(z)s = opw_r;
}
