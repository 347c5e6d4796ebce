#section support

/* A view of ``base`` with the given shape and strides (a new reference, or NULL). */
static PyArrayObject* opw_ds_view(PyArrayObject* base, int nd, npy_intp* dims,
                                  npy_intp* strides) {
    PyArray_Descr* descr = PyArray_DESCR(base);
    PyArrayObject* view;
    Py_INCREF(descr);
    view = (PyArrayObject*)PyArray_NewFromDescr(
        &PyArray_Type, descr, nd, dims, strides, PyArray_DATA(base),
        PyArray_FLAGS(base) & NPY_ARRAY_WRITEABLE, NULL);
    if (!view) return NULL;
    Py_INCREF(base);
    if (PyArray_SetBaseObject(view, (PyObject*)base) < 0) {
        Py_DECREF(view);
        return NULL;
    }
    PyArray_UpdateFlags(view, NPY_ARRAY_UPDATE_ALL);
    return view;
}

