#section support

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

/* The process's BLAS-threads state, opweave.link.blas_load.BlasLoad (same layout). */
typedef struct {
    int enabled, limit, current, usable, online, raise_votes, n_setters;
    double interval, last;
    void* setters[4];
    void* getters[4];
    char path[256];
} opw_blas_load_t;

/* The state's address, looked up once per module (NULL where it cannot be). */
static opw_blas_load_t* opw_blas_load_state(void) {
    static opw_blas_load_t* state = NULL;
    static int looked = 0;
    if (!looked) {
        PyObject* mod = PyImport_ImportModule("opweave.link.blas_load");
        PyObject* obj = mod ? PyObject_CallMethod(mod, "blas_load", NULL) : NULL;
        PyObject* address = obj ? PyObject_GetAttrString(obj, "address") : NULL;
        looked = 1;
        if (address) state = (opw_blas_load_t*)PyLong_AsVoidPtr(address);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            state = NULL;
        }
        Py_XDECREF(address);
        Py_XDECREF(obj);
        Py_XDECREF(mod);
    }
    return state;
}

/* opweave.link.blas_load.threads_for_load, in C. */
static int opw_blas_threads_for_load(const opw_blas_load_t* s, long running) {
    long others = running - (s->current > 1 ? s->current : 1);
    long online = s->online > s->usable ? s->online : s->usable;
    long here, want;
    if (others < 0) others = 0;
    if (online < 1) online = 1;
    here = (2 * others * s->usable + online) / (2 * online); /* rounded share */
    want = s->usable - here;
    if (want > s->limit) want = s->limit;
    return want < 1 ? 1 : (int)want;
}

/* Before a product: at most once per interval, read the machine's runnable threads and
 * give the OpenBLAS libraries the threads the rule says (fewer at once, more after two
 * looks agree). Stops following when someone else changed their threads. */
static void opw_blas_adapt(void) {
    opw_blas_load_t* s = opw_blas_load_state();
    struct timespec ts;
    double now;
    char buf[160];
    const char* p;
    ssize_t n;
    long running;
    int fd, want, k, fields;
    if (!s || !s->enabled) return;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    if (now - s->last < s->interval) return;
    s->last = now;
    for (k = 0; k < s->n_setters; k++)
        if (((int (*)(void))s->getters[k])() != s->current) {
            s->enabled = 0;
            return;
        }
    fd = open(s->path, O_RDONLY);
    if (fd < 0) return;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return;
    buf[n] = 0;
    for (p = buf, fields = 0; *p && fields < 3; p++)
        if (*p == ' ') fields++;
    running = strtol(p, NULL, 10);
    if (fields < 3 || running <= 0) return;
    want = opw_blas_threads_for_load(s, running);
    if (want > s->current && ++s->raise_votes < 2) return;
    s->raise_votes = 0;
    if (want == s->current) return;
    for (k = 0; k < s->n_setters; k++) ((void (*)(int))s->setters[k])(want);
    s->current = want;
}

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

#section dot

opw_blas_adapt();
if (opw_blas_store(PyArray_MatrixProduct2((PyObject*)%(x)s, (PyObject*)%(y)s, NULL), &%(z)s,
                   %(out_nd)s, %(typenum)s) < 0) %(fail)s

#section dot_same_dtype

{
    npy_intp dims[] = {%(dims_init)s};
    PyObject* r;
    opw_blas_adapt();
    if (PyArray_DIMS(%(x)s)[%(x_last)s] != PyArray_DIMS(%(y)s)[0]) {
        /* NumPy raises its "not aligned" error. */
        if (opw_blas_store(PyArray_MatrixProduct2((PyObject*)%(x)s, (PyObject*)%(y)s, NULL), &%(z)s,
                           %(out_nd)s, %(typenum)s) < 0) %(fail)s
    } else {
        if (opw_blas_prep(&%(z)s, %(out_nd)s, dims, %(typenum)s, %(x)s, %(y)s) < 0) %(fail)s
        r = PyArray_MatrixProduct2((PyObject*)%(x)s, (PyObject*)%(y)s, %(z)s);
        if (!r) %(fail)s
        Py_DECREF(r);
    }
}

#section matmul_batch_check

if (%(cond)s) {
    int bad = 0, a;
    PyObject* xs = opw_shape_str(%(nb)s, PyArray_DIMS(%(x)s), ", ");
    PyObject* ys = opw_shape_str(%(nb)s, PyArray_DIMS(%(y)s), ", ");
    static const int checked[] = {%(checked)s};
    for (a = %(nb1)s; a >= 0; a--)
        if (checked[a] && PyArray_DIMS(%(x)s)[a] != PyArray_DIMS(%(y)s)[a]) bad = a;
    if (xs && ys)
        PyErr_Format(PyExc_ValueError, "MatMul: batch shapes %%U and %%U do not match on axis "
                     "%%d; a length-1 axis broadcasts only when its static shape says so",
                     xs, ys, bad);
    Py_XDECREF(xs);
    Py_XDECREF(ys);
    %(fail)s
}
#section matmul
%(check)s
{
    PyObject* mm = opw_blas_matmul_ufunc();
    if (!mm) %(fail)s
    opw_blas_adapt();
    {%(body)s
    }
}

#section matmul_fresh

        if (opw_blas_store(PyObject_CallFunctionObjArgs(mm, (PyObject*)%(x)s, (PyObject*)%(y)s,
                                                        NULL),
                           &%(z)s, %(nd)s, %(typenum)s) < 0) %(fail)s
#section matmul_same_dtype

        npy_intp dims[%(nd)s];
        int a, fits = PyArray_DIMS(%(x)s)[%(nd1)s] == PyArray_DIMS(%(y)s)[%(nd2)s];
        for (a = 0; a < %(nd2)s; a++) {
            npy_intp dx = PyArray_DIMS(%(x)s)[a], dy = PyArray_DIMS(%(y)s)[a];
            dims[a] = dx == 1 ? dy : dx;
            fits &= dx == dy || dx == 1 || dy == 1;
        }
        dims[%(nd2)s] = PyArray_DIMS(%(x)s)[%(nd2)s];
        dims[%(nd1)s] = PyArray_DIMS(%(y)s)[%(nd1)s];
        if (!fits) {
            /* NumPy raises its error. */%(fresh)s
        } else {
            PyObject* r;
            if (opw_blas_prep(&%(z)s, %(nd)s, dims, %(typenum)s, %(x)s, %(y)s) < 0) %(fail)s
            r = PyObject_CallFunctionObjArgs(mm, (PyObject*)%(x)s, (PyObject*)%(y)s,
                                             (PyObject*)%(z)s, NULL);
            if (!r) %(fail)s
            Py_DECREF(r);
        }
