#section sort

{
    const npy_int64 opw_axis = %(axis)s;
    PyArrayObject* opw_r;
    if (opw_axis < -NPY_MAXDIMS || opw_axis > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "SortOp: axis %%lld is out of range", (long long)opw_axis);
        %(fail)s
    }
    opw_r = (PyArrayObject*)PyArray_NewCopy(%(x)s, NPY_KEEPORDER);
    if (!opw_r) %(fail)s
    if (PyArray_Sort(opw_r, (int)opw_axis, %(kind)s) < 0) {
        Py_DECREF(opw_r);
        %(fail)s
    }
    Py_XDECREF(%(z)s);
    %(z)s = opw_r;
}

#section argsort

{
    const npy_int64 opw_axis = %(axis)s;
    PyObject* opw_r;
    if (opw_axis < -NPY_MAXDIMS || opw_axis > NPY_MAXDIMS) {
        PyErr_Format(PyExc_ValueError, "ArgSortOp: axis %%lld is out of range",
                     (long long)opw_axis);
        %(fail)s
    }
    opw_r = PyArray_ArgSort(%(x)s, (int)opw_axis, %(kind)s);
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
