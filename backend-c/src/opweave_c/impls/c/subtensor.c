#section slicing

/* opweave Subtensor: ``slice(start, stop, step).indices(n)`` and the slice's length, as
 * Python computes them (absent bounds take their defaults). 0, or -1 with ValueError set
 * for a zero step. */
static int opw_sub_slice(npy_intp n, int has_start, npy_int64 start, int has_stop,
                         npy_int64 stop, int has_step, npy_int64 step, npy_intp* out_start,
                         npy_intp* out_len, npy_intp* out_step) {
    npy_int64 len;
    if (!has_step) step = 1;
    if (step == 0) {
        PyErr_SetString(PyExc_ValueError, "slice step cannot be zero");
        return -1;
    }
    if (step < -NPY_MAX_INT64) step = -NPY_MAX_INT64;
    if (!has_start) {
        start = step < 0 ? (npy_int64)n - 1 : 0;
    } else if (start < 0) {
        start += n;
        if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= n) {
        start = step < 0 ? (npy_int64)n - 1 : (npy_int64)n;
    }
    if (!has_stop) {
        stop = step < 0 ? -1 : (npy_int64)n;
    } else if (stop < 0) {
        stop += n;
        if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= n) {
        stop = step < 0 ? (npy_int64)n - 1 : (npy_int64)n;
    }
    if (step < 0)
        len = stop < start ? (start - stop - 1) / (-step) + 1 : 0;
    else
        len = start < stop ? (stop - start - 1) / step + 1 : 0;
    *out_start = (npy_intp)start;
    *out_len = (npy_intp)len;
    *out_step = (npy_intp)step;
    return 0;
}

/* IndexError "<op>: index <i> is out of bounds for axis <axis> with size <n> (input shape
 * <shape>)", as the Python backend words NumPy's error. */
static void opw_sub_index_error(const char* op, npy_int64 i, int axis, npy_intp n,
                                PyArrayObject* x) {
    PyObject* s = opw_shape_str(PyArray_NDIM(x), PyArray_DIMS(x), ", ");
    if (!s) return;
    PyErr_Format(PyExc_IndexError,
                 "%s: index %lld is out of bounds for axis %d with size %zd (input shape %U)",
                 op, (long long)i, axis, (Py_ssize_t)n, s);
    Py_DECREF(s);
}


#section inc

/* opweave IncSubtensor: ``numpy.add(view, y, out=view, casting="unsafe")``. 0 or -1. */
static PyObject* opw_sub_np_add = NULL;
static int opw_sub_add_into(PyArrayObject* view, PyArrayObject* y) {
    PyObject *args, *kw, *r;
    if (!opw_sub_np_add) {
        PyObject* np = PyImport_ImportModule("numpy");
        if (!np) return -1;
        opw_sub_np_add = PyObject_GetAttrString(np, "add");
        Py_DECREF(np);
        if (!opw_sub_np_add) return -1;
    }
    args = PyTuple_Pack(3, (PyObject*)view, (PyObject*)y, (PyObject*)view);
    kw = Py_BuildValue("{s:s}", "casting", "unsafe");
    r = (args && kw) ? PyObject_Call(opw_sub_np_add, args, kw) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kw);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

#section take_error

/* opweave AdvancedSubtensor1: IndexError naming the first out-of-range index. */
static void opw_sub_take_error(const char* op, PyObject* bad, npy_intp n) {
    PyErr_Format(PyExc_IndexError, "%s: index %S is out of bounds for axis 0 with size %zd",
                 op, bad, (Py_ssize_t)n);
}

#section advanced_inc


