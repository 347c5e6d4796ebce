#section support

/* Make ``*z`` (the previous output, or NULL) an array the product can be written into:
 * C-contiguous, of ``dims`` and ``typenum``, not overlapping ``x`` or ``y``. 0 or -1. */
static int opw_blas_prep(PyArrayObject** z, int nd, const npy_intp* dims, int typenum,
                         PyArrayObject* x, PyArrayObject* y) {
    if (*z && (opw_overlap(*z, x) || opw_overlap(*z, y))) {
        Py_DECREF(*z);
        *z = NULL;
    }
    return opw_prep_output(z, nd, dims, typenum);
}

/* Store ``r`` (a new reference to NumPy's result, possibly a NumPy scalar) in ``*z`` as an
 * ``nd``-dimensional C-contiguous array of ``typenum``, casting when needed. 0 or -1. */
static int opw_blas_store(PyObject* r, PyArrayObject** z, int nd, int typenum) {
    PyObject* a;
    if (!r) return -1;
    a = PyArray_FromAny(r, PyArray_DescrFromType(typenum), 0, 0,
                        NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST | NPY_ARRAY_ENSUREARRAY, NULL);
    Py_DECREF(r);
    if (!a) return -1;
    if (PyArray_NDIM((PyArrayObject*)a) != nd) {
        PyErr_Format(PyExc_ValueError, "a product gave a %d-dimensional result, expected %d",
                     PyArray_NDIM((PyArrayObject*)a), nd);
        Py_DECREF(a);
        return -1;
    }
    Py_XDECREF(*z);
    *z = (PyArrayObject*)a;
    return 0;
}

/* ``numpy.matmul`` (a borrowed reference, looked up once), or NULL with an exception. */
static PyObject* opw_blas_matmul_ufunc(void) {
    static PyObject* ufunc = NULL;
    if (ufunc == NULL) {
        PyObject* np = PyImport_ImportModule("numpy");
        if (!np) return NULL;
        ufunc = PyObject_GetAttrString(np, "matmul");
        Py_DECREF(np);
    }
    return ufunc;
}

