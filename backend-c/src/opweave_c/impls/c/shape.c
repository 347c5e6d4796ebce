#section reshape

{
    npy_intp opw_dims[%(max_ndim_1)s];
    PyArray_Dims opw_newshape;
    PyArrayObject* opw_res;
    int opw_k;
    if (PyArray_DIMS(%(shp)s)[0] != %(ndim)s) {
        PyObject* opw_t = PySequence_Tuple((PyObject*)%(shp)s);
        if (opw_t) {
            PyErr_Format(PyExc_ValueError, "%%s: the new shape %%R has %%zd entries, not %%d",
                         %(op)s, opw_t, (Py_ssize_t)PyArray_DIMS(%(shp)s)[0], %(ndim)s);
            Py_DECREF(opw_t);
        }
        %(fail)s
    }
    for (opw_k = 0; opw_k < %(ndim)s; opw_k++)
        opw_dims[opw_k] = (npy_intp)*(dtype_%(shp)s*)PyArray_GETPTR1(%(shp)s, opw_k);
    opw_newshape.ptr = opw_dims;
    opw_newshape.len = %(ndim)s;
    opw_res = (PyArrayObject*)PyArray_Newshape(%(x)s, &opw_newshape, NPY_CORDER);
    if (!opw_res) {
        opw_prefix_error(PyExc_ValueError, %(op)s);
        %(fail)s
    }
    Py_XDECREF(%(z)s);
    %(z)s = opw_res;
}

#section specify_shape

{
    int opw_bad = -1;
    PyObject* opw_e = NULL;
    if (PyArray_NDIM(%(x)s) != %(nd)s) {
        PyObject* opw_s = opw_shape_str(PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), ", ");
        if (opw_s) {
            PyErr_Format(PyExc_ValueError, "SpecifyShape: expected a %(nd)s-d value, got shape %%U",
                         opw_s);
            Py_DECREF(opw_s);
        }
        %(fail)s
    }
    %(check_code)s
    if (opw_bad >= 0) {
        PyObject* opw_s = opw_shape_str(PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), ", ");
        PyObject* opw_w = PyTuple_New(%(nd)s);
        if (opw_s && opw_w && opw_e) {
            %(wanted_code)s
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_AssertionError,
                    "SpecifyShape: dimension %%d of the input has length %%zd, expected %%S "
                    "(input shape %%U, specified %%R)", opw_bad,
                    (Py_ssize_t)PyArray_DIMS(%(x)s)[opw_bad], opw_e, opw_s, opw_w);
        }
        Py_XDECREF(opw_e);
        Py_XDECREF(opw_s);
        Py_XDECREF(opw_w);
        %(fail)s
    }
    Py_XDECREF(%(z)s);
    %(z)s = %(x)s;
    Py_INCREF(%(z)s);
}

