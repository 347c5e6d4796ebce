#section helpers

/* opweave helpers shared by the shape, subtensor, basic and special implementations. */

/* When the pending exception is a ``match``, replace it by ``match("<prefix>: <message>")``
 * (``raise ... from None`` in Python: the context is dropped). */
static void opw_prefix_error(PyObject* match, const char* prefix) {
    PyObject *t, *v, *tb, *msg;
    if (!PyErr_ExceptionMatches(match)) return;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    msg = v ? PyObject_Str(v) : NULL;
    Py_XDECREF(t);
    Py_XDECREF(v);
    Py_XDECREF(tb);
    if (!msg) return;
    PyErr_Format(match, "%s: %U", prefix, msg);
    Py_DECREF(msg);
}

/* A view of ``x``'s memory (``x`` is its base). NULL with an exception set on failure. */
static PyArrayObject* opw_make_view(PyArrayObject* x, int nd, npy_intp* dims,
                                    npy_intp* strides, char* data) {
    PyArrayObject* v;
    PyArray_Descr* descr = PyArray_DESCR(x);
    Py_INCREF(descr);
    v = (PyArrayObject*)PyArray_NewFromDescr(&PyArray_Type, descr, nd, dims, strides,
                                             (void*)data,
                                             PyArray_FLAGS(x) & NPY_ARRAY_WRITEABLE, NULL);
    if (!v) return NULL;
    Py_INCREF(x);
    if (PyArray_SetBaseObject(v, (PyObject*)x) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    return v;
}

/* ValueError "<who>: cannot broadcast a value of shape <a> to <target><b>" (the Python
 * backend's ``check_broadcast``). A pending ValueError (NumPy's own) is replaced, its
 * message appended after ": "; a pending exception of another class is left as it is. */
static void opw_broadcast_error(const char* who, int na, const npy_intp* a, int nb,
                                const npy_intp* b, const char* target) {
    PyObject *msg = NULL, *ta, *tb;
    if (PyErr_Occurred()) {
        PyObject *t, *v, *trace;
        if (!PyErr_ExceptionMatches(PyExc_ValueError)) return;
        PyErr_Fetch(&t, &v, &trace);
        PyErr_NormalizeException(&t, &v, &trace);
        msg = v ? PyObject_Str(v) : NULL;
        Py_XDECREF(t);
        Py_XDECREF(v);
        Py_XDECREF(trace);
        if (!msg) return;
    }
    ta = opw_shape_str(na, a, ", ");
    tb = opw_shape_str(nb, b, ", ");
    if (ta && tb && msg)
        PyErr_Format(PyExc_ValueError, "%s: cannot broadcast a value of shape %U to %s%U: %U",
                     who, ta, target, tb, msg);
    else if (ta && tb)
        PyErr_Format(PyExc_ValueError, "%s: cannot broadcast a value of shape %U to %s%U", who,
                     ta, target, tb);
    Py_XDECREF(msg);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
}

/* ValueError for a length-1 dimension ``d`` of a value that is not statically 1. */
static void opw_runtime_broadcast_error(const char* who, int d, npy_intp t) {
    PyErr_Format(PyExc_ValueError,
                 "%s: run-time broadcasting is not allowed: dimension %d of the value has "
                 "length 1 but its static length is unknown, and the target has length %zd "
                 "(use specify_shape to mark the dimension as length 1)",
                 who, d, (Py_ssize_t)t);
}

