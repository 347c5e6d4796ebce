#section support

/* QR of opweave.tensor.nlinalg through the LAPACK SciPy ships (dgeqrf and dorgqr, looked
 * up in scipy.linalg.cython_lapack on first use). Needs the support code of nlinalg.c
 * (opw_nl_get, opw_nl_put, opw_nl_cast, opw_nl_bad_argument).
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
    int i;
    for (i = 0; i < 2; i++) {
        if (found[i] == NULL) {
            void* fn = opw_lapack_lookup(names[i]);
            if (fn == NULL) return -1;
            found[i] = fn;
        }
    }
    *geqrf = (opw_qr_geqrf_t)found[0];
    *orgqr = (opw_qr_orgqr_t)found[1];
    return 0;
}

/* One call's work. */
typedef struct {
    const opw_nl_spec* spec; /* kind: OPW_QR_* */
    int typenum;
    npy_intp item;
    int m, n, k, mc;  /* mc: the columns of Q */
    double *a, *tau, *q, *work;
    int lwork;
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
static int opw_qr_alloc(opw_qr_work* w, int* geqrf_lwork, int* orgqr_lwork) {
    const npy_intp m = w->m, n = w->n;
    const int with_q = w->spec->kind == OPW_QR_FULL || w->spec->kind == OPW_QR_ECONOMIC;
    double wq = 0.0;
    int query = -1, info = 0, size;
    if (opw_qr_routines(&w->geqrf, &w->orgqr) < 0) return -1;
    w->a = (double*)PyMem_Malloc((size_t)(m * n) * sizeof(double));
    w->tau = (double*)PyMem_Malloc((size_t)w->k * sizeof(double));
    if (with_q) w->q = (double*)PyMem_Malloc((size_t)(m * w->mc) * sizeof(double));
    if (!w->a || !w->tau || (with_q && !w->q)) {
        PyErr_NoMemory();
        return -1;
    }
    w->geqrf(&w->m, &w->n, w->a, &w->m, w->tau, &wq, &query, &info);
    if (info != 0) return opw_nl_bad_argument(w->spec, "geqrf", info);
    *geqrf_lwork = opw_qr_lwork(wq, w->n);
    *orgqr_lwork = 0;
    if (with_q) {
        wq = 0.0;
        w->orgqr(&w->m, &w->mc, &w->k, w->q, &w->m, w->tau, &wq, &query, &info);
        if (info != 0) return opw_nl_bad_argument(w->spec, "orgqr", info);
        *orgqr_lwork = opw_qr_lwork(wq, w->n);
    }
    size = *geqrf_lwork > *orgqr_lwork ? *geqrf_lwork : *orgqr_lwork;
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
    const npy_intp m = w->m, n = w->n, item = w->item;
    npy_intp r, c;
    for (r = 0; r < rows; r++)
        for (c = 0; c < n; c++)
            opw_nl_put(z + (r * n + c) * item, w->typenum, c >= r ? w->a[c * m + r] : 0.0);
}

/* One matrix, already in ``w->a``: its results into ``z0``, ``z1``, ``z2``. 0 or -1 with
 * an exception set. */
static int opw_qr_matrix(opw_qr_work* w, int geqrf_lwork, int orgqr_lwork, char* z0, char* z1,
                         char* z2) {
    const int kind = w->spec->kind, t = w->typenum;
    const npy_intp m = w->m, n = w->n, k = w->k, mc = w->mc, item = w->item;
    npy_intp r, c;
    int info = 0, lw = geqrf_lwork;
    w->geqrf(&w->m, &w->n, w->a, &w->m, w->tau, w->work, &lw, &info);
    if (info != 0) return opw_nl_bad_argument(w->spec, "geqrf", info);
    if (kind == OPW_QR_R) {
        opw_qr_triu(w, z0, m);
        return 0;
    }
    if (kind == OPW_QR_RAW) {
        for (r = 0; r < m; r++)
            for (c = 0; c < n; c++) opw_nl_put(z0 + (r * n + c) * item, t, w->a[c * m + r]);
        for (c = 0; c < k; c++) opw_nl_put(z1 + c * item, t, w->tau[c]);
        opw_qr_triu(w, z2, k);
        return 0;
    }
    /* the reflectors (the first k columns), zeros in the others, then Q */
    memset(w->q, 0, (size_t)(m * mc) * sizeof(double));
    memcpy(w->q, w->a, (size_t)(m * k) * sizeof(double));
    lw = orgqr_lwork;
    w->orgqr(&w->m, &w->mc, &w->k, w->q, &w->m, w->tau, w->work, &lw, &info);
    if (info != 0) return opw_nl_bad_argument(w->spec, "orgqr", info);
    for (r = 0; r < m; r++)
        for (c = 0; c < mc; c++) opw_nl_put(z0 + (r * mc + c) * item, t, w->q[c * m + r]);
    opw_qr_triu(w, z1, mc);
    return 0;
}

/* An output of ``nb`` batch dimensions ``dims`` and the core shape (c0[, c1]), the
 * previous one when it fits and shares no memory with ``x``. */
static int opw_qr_output(PyArrayObject** z, PyArrayObject* x, int nb, const npy_intp* dims,
                         int ncore, npy_intp c0, npy_intp c1, int typenum) {
    npy_intp shape[NPY_MAXDIMS];
    int i;
    for (i = 0; i < nb; i++) shape[i] = dims[i];
    shape[nb] = c0;
    if (ncore > 1) shape[nb + 1] = c1;
    if (*z && opw_overlap(*z, x)) {
        Py_DECREF(*z);
        *z = NULL;
    }
    return opw_prep_output(z, nb + ncore, shape, typenum);
}

/* The node: cast ``x_in`` to the output's dtype, make the C-contiguous outputs of the
 * mode, then every matrix of the batch, in C order. 0 or -1 with an exception set. */
static int opw_qr_run(const opw_nl_spec* s, int typenum, PyArrayObject* x_in, PyArrayObject** z0,
                      PyArrayObject** z1, PyArrayObject** z2) {
    PyArrayObject* x = NULL;
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], st[NPY_MAXDIMS];
    npy_intp m, n, k, count = 1, c, r, q, rs, cs, step0, step1 = 0, step2 = 0;
    int nd, nb, i, status = -1, kind = s->kind, geqrf_lwork = 0, orgqr_lwork = 0;
    char *px, *pz0, *pz1 = NULL, *pz2 = NULL;
    opw_qr_work w;
    memset(&w, 0, sizeof w);
    w.spec = s;
    w.typenum = typenum;
    x = opw_nl_cast(x_in, typenum);
    if (!x) goto done;
    nd = PyArray_NDIM(x);
    if (nd < 2) {
        PyErr_Format(PyExc_ValueError, "%s: the input x must hold matrices", s->who);
        goto done;
    }
    nb = nd - 2;
    m = PyArray_DIMS(x)[nd - 2];
    n = PyArray_DIMS(x)[nd - 1];
    k = m < n ? m : n;
    rs = PyArray_STRIDES(x)[nd - 2];
    cs = PyArray_STRIDES(x)[nd - 1];
    for (i = 0; i < nb; i++) {
        dims[i] = PyArray_DIMS(x)[i];
        st[i] = PyArray_STRIDES(x)[i];
        idx[i] = 0;
        count *= dims[i];
    }
    if (m > INT_MAX || n > INT_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a matrix of shape (%zd, %zd) is too large for LAPACK's 32-bit "
                     "integers",
                     s->who, (Py_ssize_t)m, (Py_ssize_t)n);
        goto done;
    }
    w.m = (int)m;
    w.n = (int)n;
    w.k = (int)k;
    w.mc = kind == OPW_QR_FULL ? w.m : w.k;
    if (kind == OPW_QR_R) {
        if (opw_qr_output(z0, x_in, nb, dims, 2, m, n, typenum) < 0) goto done;
        step0 = m * n;
    } else if (kind == OPW_QR_RAW) {
        if (opw_qr_output(z0, x_in, nb, dims, 2, m, n, typenum) < 0 ||
            opw_qr_output(z1, x_in, nb, dims, 1, k, 0, typenum) < 0 ||
            opw_qr_output(z2, x_in, nb, dims, 2, k, n, typenum) < 0)
            goto done;
        step0 = m * n;
        step1 = k;
        step2 = k * n;
    } else {
        if (opw_qr_output(z0, x_in, nb, dims, 2, m, w.mc, typenum) < 0 ||
            opw_qr_output(z1, x_in, nb, dims, 2, w.mc, n, typenum) < 0)
            goto done;
        step0 = m * w.mc;
        step1 = (npy_intp)w.mc * n;
    }
    pz0 = PyArray_BYTES(*z0);
    if (z1) pz1 = PyArray_BYTES(*z1);
    if (z2) pz2 = PyArray_BYTES(*z2);
    w.item = PyArray_ITEMSIZE(*z0);
    if (count == 0) {
        status = 0;
        goto done;
    }
    if (k == 0) { /* no entries: Q the identity ("full"); the other outputs are empty */
        if (kind == OPW_QR_FULL)
            for (c = 0; c < count; c++)
                for (r = 0; r < m; r++)
                    for (q = 0; q < m; q++)
                        opw_nl_put(pz0 + (c * step0 + r * m + q) * w.item, typenum,
                                   r == q ? 1.0 : 0.0);
        status = 0;
        goto done;
    }
    if (opw_qr_alloc(&w, &geqrf_lwork, &orgqr_lwork) < 0) goto done;
    px = PyArray_BYTES(x);
    for (c = 0; c < count; c++) {
        for (q = 0; q < n; q++)
            for (r = 0; r < m; r++) w.a[q * m + r] = opw_nl_get(px + r * rs + q * cs, typenum);
        if (opw_qr_matrix(&w, geqrf_lwork, orgqr_lwork, pz0, pz1, pz2) < 0) goto done;
        pz0 += step0 * w.item;
        if (pz1) pz1 += step1 * w.item;
        if (pz2) pz2 += step2 * w.item;
        /* the next batch index, in C order */
        for (i = nb - 1; i >= 0; i--) {
            px += st[i];
            if (++idx[i] < dims[i]) break;
            px -= st[i] * dims[i];
            idx[i] = 0;
        }
    }
    status = 0;
done:
    opw_qr_free(&w);
    Py_XDECREF(x);
    return status;
}

#section node

{
    static const opw_nl_spec opw_spec = {%(who)s, %(kind)s, 0};
    if (opw_qr_run(&opw_spec, %(typenum)s, %(x)s, &%(z0)s, %(z1)s, %(z2)s) < 0) %(fail)s
}
