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

#section declare
%(element)s %(name)s;
typedef %(element)s dtype_%(name)s;
#section extract

if (opw_scalar_typenum(py_%(name)s) != %(typenum)s) {
    if (opw_filter(&py_%(name)s, %(filt)s) < 0) %(fail)s
    if (opw_scalar_typenum(py_%(name)s) != %(typenum)s) {
        PyErr_Format(PyExc_TypeError, "expected a NumPy scalar for %%s, got %%s", %(desc)s,
                     Py_TYPE(py_%(name)s)->tp_name);
        %(fail)s
    }
}
PyArray_ScalarAsCtype(py_%(name)s, &%(name)s);
#section sync

{
    PyObject* boxed = NULL;
    PyArray_Descr* descr = PyArray_DescrFromType(%(typenum)s);
    if (descr) boxed = PyArray_Scalar(&%(name)s, descr, NULL);
    Py_XDECREF(descr);
    if (!boxed) %(fail)s
    Py_XDECREF(py_%(name)s);
    py_%(name)s = boxed;
}
