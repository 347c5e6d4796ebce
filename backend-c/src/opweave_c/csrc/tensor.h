/* Helpers for TensorType values (NumPy arrays) shared by every Op's C code. */

/* In a module linked with the runtime object, these are its functions (runtime_functions.h
 * says how): the module sees the declarations only. The small helpers a call runs every
 * time stay inline, so that GCC can fold them into the code that calls them. */
OPW_RT PyObject* opw_shape_str(int nd, const npy_intp* dims, const char* sep);
OPW_RT PyObject* opw_shapes_str(int n, PyArrayObject* const* arrays);
OPW_RT int opw_tensor_convert(PyObject** py, PyObject* filter, int typenum, int ndim,
                              const char* type_desc);
OPW_RT int opw_check_dim(PyArrayObject* a, int i, npy_intp n, const char* type_desc);

/* Is ``o`` an aligned, native-order ndarray of exactly this type number and rank? An
 * instance of an ndarray subclass (numpy.matrix, a masked array...) is not: it goes
 * through the Type's Python filter, which makes it a plain ndarray or refuses it, as on
 * every other linker. */
static inline int opw_tensor_exact(PyObject* o, int typenum, int ndim) {
    PyArrayObject* a;
    if (!PyArray_CheckExact(o)) return 0;
    a = (PyArrayObject*)o;
    return PyArray_TYPE(a) == typenum && PyArray_NDIM(a) == ndim &&
           PyArray_ISALIGNED(a) && PyArray_ISNOTSWAPPED(a);
}

/* May the previous value ``o`` of an output cell be overwritten although the output must
 * not be recycled (a function's result)? Only when nothing else can see it: ``refs``
 * references (the cell's and the generated code's own) are all there are, nothing holds a
 * weak reference, and the array owns its memory (no array is a view of it, it is a view of
 * nothing), so the caller has dropped what the last call returned. */
static inline int opw_tensor_unshared(PyObject* o, Py_ssize_t refs, int typenum, int ndim) {
    return Py_REFCNT(o) == refs && PyArray_CheckExact(o) &&
           opw_tensor_exact(o, typenum, ndim) &&
           PyArray_CHKFLAGS((PyArrayObject*)o, NPY_ARRAY_OWNDATA) &&
           ((PyArrayObject_fields*)o)->weakreflist == NULL;
}

/* The lowest and one past the highest byte of ``a``'s elements (lo == hi: it has none). */
static inline void opw_extent(PyArrayObject* a, char** lo, char** hi) {
    int i;
    char* l = PyArray_BYTES(a);
    char* h = l + PyArray_ITEMSIZE(a);
    for (i = 0; i < PyArray_NDIM(a); i++) {
        npy_intp n = PyArray_DIMS(a)[i], s = PyArray_STRIDES(a)[i];
        if (n == 0) { *lo = *hi = PyArray_BYTES(a); return; }
        if (s < 0) l += (n - 1) * s; else h += (n - 1) * s;
    }
    *lo = l;
    *hi = h;
}

/* May ``a`` and ``b`` (either may be NULL: no) share memory? Their byte ranges intersect:
 * conservative for strided arrays; an empty array shares none. */
static inline int opw_overlap(PyArrayObject* a, PyArrayObject* b) {
    char *alo, *ahi, *blo, *bhi;
    if (a == NULL || b == NULL) return 0;
    opw_extent(a, &alo, &ahi);
    opw_extent(b, &blo, &bhi);
    return alo < ahi && blo < bhi && alo < bhi && blo < ahi;
}

/* Make ``*out`` a C-contiguous, writeable array of the given shape and type, reusing it
 * when it already is one. 0 on success, -1 with an exception set. */
static inline int opw_prep_output(PyArrayObject** out, int nd, const npy_intp* dims, int typenum) {
    PyArrayObject* o = *out;
    if (o != NULL && PyArray_NDIM(o) == nd && PyArray_TYPE(o) == typenum &&
        PyArray_IS_C_CONTIGUOUS(o) && PyArray_ISWRITEABLE(o) && PyArray_ISALIGNED(o) &&
        PyArray_ISNOTSWAPPED(o)) {
        int same = 1, i;
        for (i = 0; i < nd; i++) same &= PyArray_DIMS(o)[i] == dims[i];
        if (same) return 0;
    }
    Py_XDECREF(o);
    *out = (PyArrayObject*)PyArray_EMPTY(nd, (npy_intp*)dims, typenum, 0);
    return *out == NULL ? -1 : 0;
}
/* Make ``*py`` (a new reference) an exact array for the Type described: at once when it
 * is one, else through ``opw_tensor_convert``. 0 on success, -1 with an exception set. */
static inline int opw_tensor_check(PyObject** py, PyObject* filter, int typenum, int ndim,
                                   const char* type_desc) {
    if (opw_tensor_exact(*py, typenum, ndim)) return 0;
    return opw_tensor_convert(py, filter, typenum, ndim, type_desc);
}

#ifndef OPW_RUNTIME_LINKED
/* A shape as text, the one helper for messages: ``sep`` ", " writes it as Python writes a
 * tuple, ``(2, 3)``, ``sep`` "," as NumPy writes one in its own messages, ``(2,3)``; both
 * write ``(3,)`` and ``()``. New reference, or NULL with an exception set. */
OPW_RT PyObject* opw_shape_str(int nd, const npy_intp* dims, const char* sep) {
    PyObject *parts = PyList_New(0), *sep_str = NULL, *body = NULL, *res = NULL;
    int i;
    if (!parts) return NULL;
    for (i = 0; i < nd; i++) {
        PyObject* s = PyUnicode_FromFormat("%zd", (Py_ssize_t)dims[i]);
        if (!s || PyList_Append(parts, s) < 0) {
            Py_XDECREF(s);
            Py_DECREF(parts);
            return NULL;
        }
        Py_DECREF(s);
    }
    sep_str = PyUnicode_FromString(sep);
    if (sep_str) body = PyUnicode_Join(sep_str, parts);
    if (body) res = PyUnicode_FromFormat(nd == 1 ? "(%U,)" : "(%U)", body);
    Py_XDECREF(sep_str);
    Py_XDECREF(body);
    Py_DECREF(parts);
    return res;
}

/* The shapes of ``n`` arrays as text, ``(2, 3), (3,)`` (``opw_shape_str`` of each, joined
 * by ", "). New reference, or NULL with an exception set. */
OPW_RT PyObject* opw_shapes_str(int n, PyArrayObject* const* arrays) {
    PyObject *parts = PyList_New(n), *sep = NULL, *res = NULL;
    int k;
    if (!parts) return NULL;
    for (k = 0; k < n; k++) {
        PyObject* s = opw_shape_str(PyArray_NDIM(arrays[k]), PyArray_DIMS(arrays[k]), ", ");
        if (!s) {
            Py_DECREF(parts);
            return NULL;
        }
        PyList_SET_ITEM(parts, k, s);
    }
    sep = PyUnicode_FromString(", ");
    if (sep) res = PyUnicode_Join(sep, parts);
    Py_XDECREF(sep);
    Py_DECREF(parts);
    return res;
}

/* ``opw_tensor_check`` for a value that is not already an exact array: converting
 * through ``filter`` (the Type's Python filter) when given: a lenient filter, which would
 * turn a Python float into a 0-d float64 array, as this does itself. Without a filter
 * (strict inputs) only exact arrays pass: an instance of an ndarray subclass is refused
 * with the words of the strict Python filter. 0 on success, -1 with an exception set. */
OPW_RT int opw_tensor_convert(PyObject** py, PyObject* filter, int typenum, int ndim,
                              const char* type_desc) {
    PyArrayObject* a;
    if (filter != NULL && filter != Py_None) {
        if (ndim == 0 && typenum == NPY_FLOAT64 && PyFloat_CheckExact(*py)) {
            /* What the filter makes of a Python float for a float64 scalar, without it. */
            PyObject* arr = PyArray_SimpleNew(0, NULL, NPY_FLOAT64);
            if (!arr) return -1;
            *(double*)PyArray_DATA((PyArrayObject*)arr) = PyFloat_AS_DOUBLE(*py);
            Py_DECREF(*py);
            *py = arr;
            return 0;
        }
        if (opw_filter(py, filter) < 0) return -1;
        if (opw_tensor_exact(*py, typenum, ndim)) return 0;
    }
    if (*py == Py_None) {
        PyErr_Format(PyExc_TypeError, "expected a value of %s, got None", type_desc);
        return -1;
    }
    if (!PyArray_Check(*py)) {
        PyErr_Format(PyExc_TypeError, "expected a NumPy array for %s, got %s", type_desc,
                     Py_TYPE(*py)->tp_name);
        return -1;
    }
    if (!PyArray_CheckExact(*py)) {
        PyErr_Format(PyExc_TypeError,
                     "%s (strict) expected a numpy.ndarray, got an instance of the ndarray "
                     "subclass %s; pass numpy.asarray(value)",
                     type_desc, Py_TYPE(*py)->tp_name);
        return -1;
    }
    a = (PyArrayObject*)*py;
    if (PyArray_NDIM(a) != ndim) {
        PyErr_Format(PyExc_TypeError, "%s expects %d dimensions, got an array with %d",
                     type_desc, ndim, PyArray_NDIM(a));
        return -1;
    }
    if (PyArray_TYPE(a) == typenum || PyArray_EquivTypenums(PyArray_TYPE(a), typenum)) {
        /* Unaligned or byte-swapped data of the right type: work on a native copy. */
        PyObject* copy = PyArray_FromAny(*py, PyArray_DescrFromType(typenum), ndim, ndim,
                                         NPY_ARRAY_ALIGNED | NPY_ARRAY_NOTSWAPPED, NULL);
        if (!copy) return -1;
        Py_DECREF(*py);
        *py = copy;
        return 0;
    }
    {
        /* Both are new references, released on every path (the descriptor used to leak
         * one reference per refused argument). */
        PyArray_Descr* want = PyArray_DescrFromType(typenum);
        PyObject* got = PyObject_Str((PyObject*)PyArray_DESCR(a));
        if (want && got)
            PyErr_Format(PyExc_TypeError, "%s expects dtype %s, got an array of dtype %S",
                         type_desc, want->typeobj->tp_name, got);
        Py_XDECREF(want);
        Py_XDECREF(got);
    }
    return -1;
}

/* Check static dimension ``i`` of ``a`` has length ``n``. */
OPW_RT int opw_check_dim(PyArrayObject* a, int i, npy_intp n, const char* type_desc) {
    if (PyArray_DIMS(a)[i] != n) {
        PyErr_Format(PyExc_ValueError,
                     "%s has static length %zd on dimension %d, got an array of length %zd",
                     type_desc, (Py_ssize_t)n, i, (Py_ssize_t)PyArray_DIMS(a)[i]);
        return -1;
    }
    return 0;
}

#endif /* !OPW_RUNTIME_LINKED */
