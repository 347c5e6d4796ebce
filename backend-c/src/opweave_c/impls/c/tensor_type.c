#section declare
PyArrayObject* %(name)s;
typedef %(element)s dtype_%(name)s;
#section extract_check
if (opw_tensor_check(&py_%(name)s, %(filt)s, %(typenum)s, %(ndim)s, %(desc)s) < 0) %(fail)s
#section extract_dim
if (opw_check_dim((PyArrayObject*)py_%(name)s, %(i)s, %(n)s, %(desc)s) < 0) %(fail)s
#section extract_take
%(name)s = (PyArrayObject*)py_%(name)s;
Py_INCREF(%(name)s);
#section extract_out
%(name)s = NULL;
if (py_%(name)s != Py_None && opw_tensor_exact(py_%(name)s, %(typenum)s, %(ndim)s)) {
    %(name)s = (PyArrayObject*)py_%(name)s;
    Py_INCREF(%(name)s);
}
#section extract_out_unshared
%(name)s = NULL;
if (py_%(name)s != Py_None && opw_tensor_unshared(py_%(name)s, 2, %(typenum)s, %(ndim)s)) {
    %(name)s = (PyArrayObject*)py_%(name)s;
    Py_INCREF(%(name)s);
}
#section sync

if (!%(name)s) {
    Py_XDECREF(py_%(name)s);
    Py_INCREF(Py_None);
    py_%(name)s = Py_None;
} else if ((PyObject*)%(name)s != py_%(name)s) {
    if (PyArray_TYPE(%(name)s) != %(typenum)s || PyArray_NDIM(%(name)s) != %(ndim)s) {
        PyErr_Format(PyExc_TypeError, "generated C produced a %%d-dimensional array of type "
                     "number %%d for %%s", PyArray_NDIM(%(name)s), PyArray_TYPE(%(name)s), %(desc)s);
        %(fail)s
    }
    Py_XDECREF(py_%(name)s);
    py_%(name)s = (PyObject*)%(name)s;
    Py_INCREF(py_%(name)s);
}
#section cleanup
Py_XDECREF(%(name)s);
%(name)s = NULL;
