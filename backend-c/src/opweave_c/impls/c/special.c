#section support

/* ``outer``, ``n`` and ``inner``: ``a``'s shape seen as (before, axis, after). */
static void opw_sm_split(PyArrayObject* a, int axis, npy_intp* outer, npy_intp* n,
                         npy_intp* inner) {
    int d;
    *outer = 1;
    *n = 1;
    *inner = 1;
    if (axis < 0) {
        *n = PyArray_SIZE(a);
        return;
    }
    for (d = 0; d < axis; d++) *outer *= PyArray_DIMS(a)[d];
    *n = PyArray_DIMS(a)[axis];
    for (d = axis + 1; d < PyArray_NDIM(a); d++) *inner *= PyArray_DIMS(a)[d];
}

/* ``a`` broadcast to ``dims`` (its length-1 axes stretched), as a C-contiguous array of
 * ``typenum`` (``a`` itself when it already is one). New reference, or NULL. */
static PyArrayObject* opw_sm_operand(PyArrayObject* a, int nd, const npy_intp* dims,
                                     int typenum) {
    npy_intp strides[NPY_MAXDIMS];
    PyArrayObject *src = a, *res;
    int d, stretched = 0;
    for (d = 0; d < nd; d++) {
        strides[d] = PyArray_STRIDES(a)[d];
        if (PyArray_DIMS(a)[d] != dims[d]) {
            strides[d] = 0;
            stretched = 1;
        }
    }
    if (stretched) {
        src = opw_make_view(a, nd, (npy_intp*)dims, strides, PyArray_BYTES(a));
        if (!src) return NULL;
    }
    res = (PyArrayObject*)PyArray_FromAny((PyObject*)src, PyArray_DescrFromType(typenum), 0,
                                          0, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (stretched) Py_DECREF(src);
    return res;
}

