#section support

/* The NumPy type number of a NumPy scalar, or -1 for anything else. */
static int opw_scalar_typenum(PyObject* o) {
    PyArray_Descr* d;
    int num;
    if (!PyArray_IsScalar(o, Generic)) return -1;
    d = PyArray_DescrFromScalar(o);
    if (!d) { PyErr_Clear(); return -1; }
    num = d->type_num;
    Py_DECREF(d);
    return num;
}

