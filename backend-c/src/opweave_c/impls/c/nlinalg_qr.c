#section support

/* QR of opweave.tensor.nlinalg through the LAPACK SciPy ships (dgeqrf and dorgqr, looked
 * up in scipy.linalg.cython_lapack on first use). Needs the support code of nlinalg.c
 * (opw_nl_load, opw_nl_store, opw_nl_matrices, opw_nl_bad_argument...).
 *
 * As numpy.linalg.qr does, every matrix is computed in double (float32 values widened,
 * the results rounded back): it is copied into a Fortran-ordered work array and handed to
 * dgeqrf; for the modes with Q, the first k = min(m, n) columns of the reflectors go to
 * dorgqr for the m ("full") or k ("economic") columns of Q. Both take NumPy's workspace:
 * their query, at least max(1, n). R is the upper triangle of dgeqrf's result: its first
 * m ("full") or k rows, all of it for "r"; "raw" gives the reflectors, their scales and R
 * (the first k rows). A matrix without entries has the identity as Q ("full"). */

enum { OPW_QR_FULL, OPW_QR_ECONOMIC, OPW_QR_R, OPW_QR_RAW };

/* LAPACK's dgeqrf and dorgqr (32-bit integers: SciPy's LAPACK is LP64). */
typedef void (*opw_qr_geqrf_t)(int* m, int* n, double* a, int* lda, double* tau, double* work,
                               int* lwork, int* info);
typedef void (*opw_qr_orgqr_t)(int* m, int* n, int* k, double* a, int* lda, double* tau,
                               double* work, int* lwork, int* info);

/* dgeqrf and dorgqr, looked up once. 0 or -1 with an exception set. */
static int opw_qr_routines(opw_qr_geqrf_t* geqrf, opw_qr_orgqr_t* orgqr) {
    static void* found[2] = {NULL, NULL};
    static const char* const names[2] = {"dgeqrf", "dorgqr"};
    if (opw_nl_lookup(found, names, 2) < 0) return -1;
    *geqrf = (opw_qr_geqrf_t)found[0];
    *orgqr = (opw_qr_orgqr_t)found[1];
    return 0;
}

/* One call's work. */
typedef struct {
    opw_nl_head h; /* h.spec->kind: OPW_QR_* */
    int mc;        /* the columns of Q */
    double *a, *tau, *q, *work;
    int geqrf_lwork, orgqr_lwork; /* the two routines' workspaces */
    opw_qr_geqrf_t geqrf;
    opw_qr_orgqr_t orgqr;
} opw_qr_work;

static void opw_qr_free(opw_qr_work* w) {
    PyMem_Free(w->a);
    PyMem_Free(w->tau);
    PyMem_Free(w->q);
    PyMem_Free(w->work);
}

/* NumPy's workspace from a query: at least max(1, n). */
static int opw_qr_lwork(double query, int n) {
    int lw = (int)query;
    if (lw < n) lw = n;
    return lw < 1 ? 1 : lw;
}

/* ``w``'s work arrays and routines for m x n matrices with k > 0. 0 or -1 with an
 * exception set. */
static int opw_qr_alloc(opw_qr_work* w) {
    const npy_intp m = w->h.m, n = w->h.n;
    const int with_q = w->h.spec->kind == OPW_QR_FULL || w->h.spec->kind == OPW_QR_ECONOMIC;
    double wq = 0.0;
    int query = -1, info = 0, size;
    if (opw_qr_routines(&w->geqrf, &w->orgqr) < 0) return -1;
    w->a = (double*)PyMem_Malloc((size_t)(m * n) * sizeof(double));
    w->tau = (double*)PyMem_Malloc((size_t)w->h.k * sizeof(double));
    if (with_q) w->q = (double*)PyMem_Malloc((size_t)(m * w->mc) * sizeof(double));
    if (!w->a || !w->tau || (with_q && !w->q)) {
        PyErr_NoMemory();
        return -1;
    }
    w->geqrf(&w->h.m, &w->h.n, w->a, &w->h.m, w->tau, &wq, &query, &info);
    if (info != 0) return opw_nl_bad_argument(w->h.spec, "geqrf", info);
    w->geqrf_lwork = opw_qr_lwork(wq, w->h.n);
    w->orgqr_lwork = 0;
    if (with_q) {
        wq = 0.0;
        w->orgqr(&w->h.m, &w->mc, &w->h.k, w->q, &w->h.m, w->tau, &wq, &query, &info);
        if (info != 0) return opw_nl_bad_argument(w->h.spec, "orgqr", info);
        w->orgqr_lwork = opw_qr_lwork(wq, w->h.n);
    }
    size = w->geqrf_lwork > w->orgqr_lwork ? w->geqrf_lwork : w->orgqr_lwork;
    w->work = (double*)PyMem_Malloc((size_t)size * sizeof(double));
    if (!w->work) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The first ``rows`` rows of the upper triangle of the m x n Fortran-ordered ``a`` into
 * the C-contiguous ``z`` (rows x n). */
static void opw_qr_triu(const opw_qr_work* w, char* z, npy_intp rows) {
    const npy_intp m = w->h.m, n = w->h.n, item = w->h.item;
    npy_intp r, c;
    for (r = 0; r < rows; r++)
        for (c = 0; c < n; c++)
            opw_nl_put(z + (r * n + c) * item, w->h.typenum, c >= r ? w->a[c * m + r] : 0.0);
}

/* One matrix, already in ``w->a``: its results into ``z0``, ``z1``, ``z2``. 0 or -1 with
 * an exception set. */
static int opw_qr_matrix(void* work, char* z0, char* z1, char* z2) {
    opw_qr_work* w = (opw_qr_work*)work;
    const int kind = w->h.spec->kind, t = w->h.typenum;
    const npy_intp m = w->h.m, n = w->h.n, k = w->h.k, mc = w->mc, item = w->h.item;
    int info = 0, lw = w->geqrf_lwork;
    w->geqrf(&w->h.m, &w->h.n, w->a, &w->h.m, w->tau, w->work, &lw, &info);
    if (info != 0) return opw_nl_bad_argument(w->h.spec, "geqrf", info);
    if (kind == OPW_QR_R) {
        opw_qr_triu(w, z0, m);
        return 0;
    }
    if (kind == OPW_QR_RAW) {
        opw_nl_store(z0, t, item, w->a, m, m, n);
        opw_nl_store(z1, t, item, w->tau, 1, 1, k);
        opw_qr_triu(w, z2, k);
        return 0;
    }
    /* the reflectors (the first k columns), zeros in the others, then Q */
    memset(w->q, 0, (size_t)(m * mc) * sizeof(double));
    memcpy(w->q, w->a, (size_t)(m * k) * sizeof(double));
    lw = w->orgqr_lwork;
    w->orgqr(&w->h.m, &w->mc, &w->h.k, w->q, &w->h.m, w->tau, w->work, &lw, &info);
    if (info != 0) return opw_nl_bad_argument(w->h.spec, "orgqr", info);
    opw_nl_store(z0, t, item, w->q, m, m, mc);
    opw_qr_triu(w, z1, mc);
    return 0;
}

/* The node: cast ``x_in`` to the output's dtype, make the C-contiguous outputs of the
 * mode, then every matrix of the batch, in C order. 0 or -1 with an exception set. */
static int opw_qr_run(const opw_nl_spec* s, int typenum, PyArrayObject* x_in, PyArrayObject** z0,
                      PyArrayObject** z1, PyArrayObject** z2) {
    opw_nl_batch x;
    npy_intp c, steps[3] = {0, 0, 0};
    int status = -1, kind = s->kind;
    char* pz[3] = {NULL, NULL, NULL};
    opw_qr_work w;
    memset(&w, 0, sizeof w);
    if (opw_nl_matrices(s, typenum, x_in, &x, &w.h) < 0) goto done;
    w.mc = kind == OPW_QR_FULL ? w.h.m : w.h.k;
    if (kind == OPW_QR_R) {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 2, x.m, x.n, typenum) < 0) goto done;
        steps[0] = x.m * x.n;
    } else if (kind == OPW_QR_RAW) {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 2, x.m, x.n, typenum) < 0 ||
            opw_nl_core_output(z1, x_in, x.nb, x.dims, 1, x.k, 0, typenum) < 0 ||
            opw_nl_core_output(z2, x_in, x.nb, x.dims, 2, x.k, x.n, typenum) < 0)
            goto done;
        steps[0] = x.m * x.n;
        steps[1] = x.k;
        steps[2] = x.k * x.n;
    } else {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 2, x.m, w.mc, typenum) < 0 ||
            opw_nl_core_output(z1, x_in, x.nb, x.dims, 2, w.mc, x.n, typenum) < 0)
            goto done;
        steps[0] = x.m * w.mc;
        steps[1] = (npy_intp)w.mc * x.n;
    }
    pz[0] = PyArray_BYTES(*z0);
    if (z1) pz[1] = PyArray_BYTES(*z1);
    if (z2) pz[2] = PyArray_BYTES(*z2);
    w.h.item = PyArray_ITEMSIZE(*z0);
    if (x.count == 0) {
        status = 0;
        goto done;
    }
    if (x.k == 0) { /* no entries: Q the identity ("full"); the other outputs are empty */
        if (kind == OPW_QR_FULL)
            for (c = 0; c < x.count; c++)
                opw_nl_eye(pz[0] + c * steps[0] * w.h.item, typenum, x.m, w.h.item);
        status = 0;
        goto done;
    }
    if (opw_qr_alloc(&w) < 0 ||
        opw_nl_each(&x, typenum, w.a, opw_qr_matrix, &w, pz, steps, w.h.item) < 0)
        goto done;
    status = 0;
done:
    opw_qr_free(&w);
    Py_XDECREF(x.x);
    return status;
}
