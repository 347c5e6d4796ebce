#section support

/* opweave Elemwise helpers. */

/* The flat loops and the strided loops' innermost loops stay functions of their own, so GCC
 * vectorises them (with run-time checks for unit strides) instead of giving up on them once
 * inlined into a large function. */
#if defined(__GNUC__)
#define OPW_EW_NOINLINE __attribute__((noinline)) OPW_HOT
#else
#define OPW_EW_NOINLINE OPW_HOT
#endif


/* Can the loop read ``a`` through typed pointers and element strides? */
static int opw_ew_usable(PyArrayObject* a) {
    int d, size = (int)PyArray_ITEMSIZE(a);
    if (!PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a)) return 0;
    for (d = 0; d < PyArray_NDIM(a); d++)
        if (PyArray_STRIDES(a)[d] % size) return 0;
    return 1;
}

/* Release the arrays an Elemwise node made for itself (copies, temporaries). */
static void opw_ew_release(PyArrayObject** arrays, int n) {
    int k;
    for (k = 0; k < n; k++) Py_CLEAR(arrays[k]);
}

/* Set the ValueError of inputs whose lengths differ on a non-broadcastable axis. */
static void opw_ew_shape_error(const char* op, int axis, PyArrayObject** inputs, int n) {
    PyObject* shapes = opw_shapes_str(n, inputs);
    if (!shapes) return;
    PyErr_Format(PyExc_ValueError,
                 "%s: input shapes (%U) do not match on axis %d; a length-1 axis broadcasts "
                 "only when its static shape says so (give the input static shape 1 there, "
                 "e.g. with specify_shape or a 'row'/'col' variable)", op, shapes, axis);
    Py_DECREF(shapes);
}

/* Set the ValueError of an in-place output whose input is read-only. */
static void opw_ew_readonly_error(const char* op, int input) {
    PyErr_Format(PyExc_ValueError,
                 "%s: input %d, which the node overwrites in place, is read-only", op, input);
}

#section parallel_flat
static int opw_ew_par_{name}({decls}) {{
    int opw_rc = 0;
    const int opw_threads = {threads};
    if (opw_n < {min_size} || opw_threads < 2) return opw_ew_flat_{name}({whole});
    #pragma omp parallel num_threads(opw_threads) reduction(|: opw_rc)
    {{
        const npy_intp opw_t = omp_get_thread_num(), opw_nt = omp_get_num_threads();
        const npy_intp opw_chunk = ((opw_n + opw_nt - 1) / opw_nt + 63) & ~(npy_intp)63;
        const npy_intp opw_lo = opw_t * opw_chunk < opw_n ? opw_t * opw_chunk : opw_n;
        const npy_intp opw_hi = opw_lo + opw_chunk < opw_n ? opw_lo + opw_chunk : opw_n;
        if (opw_lo < opw_hi) opw_rc |= opw_ew_flat_{name}({chunk}) < 0;
    }}
    return opw_rc ? -1 : 0;
}}


