#section support

/* SVD and MatrixPinv (not Hermitian) of opweave.tensor.nlinalg through the LAPACK SciPy
 * ships (dgesdd, looked up in scipy.linalg.cython_lapack on first use). Needs the support
 * code of nlinalg.c (opw_nl_get, opw_nl_put, opw_nl_cast, opw_nl_bad_argument).
 *
 * As numpy.linalg.svd does, every matrix is computed in double (float32 values widened,
 * the results rounded back): it is copied into a Fortran-ordered work array and handed to
 * dgesdd (jobz 'A' for full_matrices, 'S' for the thin factors, 'N' for the singular values
 * alone) with the workspace its query asks for; info other than 0 (NaN entries give -4)
 * raises numpy.linalg.LinAlgError("SVD did not converge"). A matrix without entries has
 * the identities as U and VT (full_matrices).
 *
 * The pseudo-inverse is numpy.linalg.pinv's: the thin factors rounded to the output's
 * dtype, the singular values above 1e-15 * max(s) (compared in double; a NaN maximum keeps
 * none) inverted in the dtype, the others 0, then VT.T @ (s_inv[:, None] * U.T) in the
 * dtype, each entry summed over k in order from +0 (float32 sums and products are computed
 * in double and rounded at once: exactly float32's own operations). For hermitian=True the
 * factors are numpy.linalg.svd(hermitian=True)'s: dsyevd (jobz 'V', the lower triangle,
 * the workspace its query asks for) rounded to the dtype, the absolute eigenvalues in
 * descending order (a stable ascending sort, NaN last, reversed) with their eigenvectors as
 * U, and VT the transpose of U times the signs. */

enum { OPW_SVD_FULL, OPW_SVD_THIN, OPW_SVD_S, OPW_SVD_PINV, OPW_SVD_PINVH };

/* LAPACK's dgesdd (32-bit integers: SciPy's LAPACK is LP64). */
typedef void (*opw_svd_gesdd_t)(char* jobz, int* m, int* n, double* a, int* lda, double* s,
                                double* u, int* ldu, double* vt, int* ldvt, double* work,
                                int* lwork, int* iwork, int* info);

/* numpy.linalg.pinv's default rcond. */
#define OPW_SVD_RCOND 1e-15

/* dgesdd, looked up once; NULL with an exception set. */
static opw_svd_gesdd_t opw_svd_routine(void) {
    static void* found = NULL;
    if (found == NULL) found = opw_lapack_lookup("dgesdd");
    return (opw_svd_gesdd_t)found;
}

/* ``v`` rounded to the output's dtype (float32: to the nearest float), as a double. */
static double opw_svd_round(int typenum, double v) {
    return typenum == NPY_FLOAT64 ? v : (double)(float)v;
}

/* numpy.linalg.LinAlgError(msg). */
static void opw_svd_linalg_error(const char* msg) {
    PyObject *linalg = PyImport_ImportModule("numpy.linalg"), *exc;
    if (!linalg) return;
    exc = PyObject_GetAttrString(linalg, "LinAlgError");
    Py_DECREF(linalg);
    if (!exc) return;
    PyErr_SetString(exc, msg);
    Py_DECREF(exc);
}

/* One call's work: the shapes, the work arrays, the routine. */
typedef struct {
    const opw_nl_spec* spec; /* kind: OPW_SVD_* */
    int typenum;
    npy_intp item;
    int m, n, k;
    char jobz;
    int ldu, ucols, ldvt; /* U: ldu x ucols; VT: ldvt x n (Fortran-ordered) */
    double *a, *s, *u, *vt, *work;
    double* scaled; /* k x m: s_inv[:, None] * U.T (pinv) */
    int* iwork;
    int lwork, liwork;
    npy_intp* order; /* n: the eigenvalues' order (hermitian) */
    opw_svd_gesdd_t gesdd;
    opw_nl_syevd_t syevd;
} opw_svd_work;

static void opw_svd_free(opw_svd_work* w) {
    PyMem_Free(w->a);
    PyMem_Free(w->s);
    PyMem_Free(w->u);
    PyMem_Free(w->vt);
    PyMem_Free(w->work);
    PyMem_Free(w->scaled);
    PyMem_Free(w->iwork);
    PyMem_Free(w->order);
}

static double* opw_svd_doubles(npy_intp count) {
    return (double*)PyMem_Malloc((size_t)(count > 1 ? count : 1) * sizeof(double));
}

/* ``w``'s work arrays and routine for m x n matrices with k = min(m, n) > 0 (dgesdd's
 * workspace as its query gives it). 0 or -1 with an exception set. */
static int opw_svd_alloc_hermitian(opw_svd_work* w) {
    const npy_intp n = w->n;
    char jobz = 'V', uplo = 'L';
    double wq = 0.0;
    int iwq = 0, query = -1, info = 0;
    opw_nl_getrf_t getrf;
    opw_nl_gesv_t gesv;
    if (opw_nl_routines(&getrf, &gesv, &w->syevd) < 0) return -1;
    w->a = opw_svd_doubles(n * n);
    w->s = opw_svd_doubles(2 * n); /* the eigenvalues, then the singular values */
    w->u = opw_svd_doubles(n * n);
    w->vt = opw_svd_doubles(n * n);
    w->scaled = opw_svd_doubles(n * n);
    w->order = (npy_intp*)PyMem_Malloc((size_t)n * sizeof(npy_intp));
    if (!w->a || !w->s || !w->u || !w->vt || !w->scaled || !w->order) {
        PyErr_NoMemory();
        return -1;
    }
    w->syevd(&jobz, &uplo, &w->n, w->a, &w->n, w->s, &wq, &query, &iwq, &query, &info);
    if (info != 0) return opw_nl_bad_argument(w->spec, "syevd", info);
    w->lwork = (int)wq;
    w->liwork = iwq;
    w->work = opw_svd_doubles(w->lwork);
    w->iwork = (int*)PyMem_Malloc((size_t)(w->liwork > 1 ? w->liwork : 1) * sizeof(int));
    if (!w->work || !w->iwork) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Whether |x| sorts after |y| in NumPy's ascending order (NaN last). */
static int opw_svd_after(double x, double y) {
    if (y != y) return 0;
    if (x != x) return 1;
    return x > y;
}

/* numpy.linalg.svd(hermitian=True)'s thin factors of the symmetric matrix in ``w->a``
 * (its lower triangle): U, s and VT (ldu = ldvt = n) rounded to the dtype. 0 or -1 with
 * an exception set. */
static int opw_svd_hermitian(opw_svd_work* w) {
    const npy_intp n = w->n;
    const int t = w->typenum;
    char jobz = 'V', uplo = 'L';
    double *ev = w->s + n, *s = w->s;
    npy_intp i, q;
    int info = 0;
    w->syevd(&jobz, &uplo, &w->n, w->a, &w->n, ev, w->work, &w->lwork, w->iwork, &w->liwork,
             &info);
    if (info < 0) return opw_nl_bad_argument(w->spec, "syevd", info);
    if (info > 0) {
        opw_nl_not_converged();
        return -1;
    }
    for (q = 0; q < n; q++) ev[q] = opw_svd_round(t, ev[q]);
    /* a stable insertion sort of the absolute values, ascending, NaN last */
    for (q = 0; q < n; q++) {
        npy_intp at = q;
        while (at > 0 && opw_svd_after(fabs(ev[w->order[at - 1]]), fabs(ev[q]))) {
            w->order[at] = w->order[at - 1];
            at--;
        }
        w->order[at] = q;
    }
    for (q = 0; q < n; q++) { /* descending: the sorted order reversed */
        npy_intp from = w->order[n - 1 - q];
        double e = ev[from];
        double sign = e > 0.0 ? 1.0 : (e < 0.0 ? -1.0 : (e == 0.0 ? 0.0 : e));
        s[q] = fabs(e);
        for (i = 0; i < n; i++) {
            double v = opw_svd_round(t, w->a[from * n + i]);
            w->u[q * n + i] = v;
            w->vt[i * n + q] = opw_svd_round(t, v * sign);
        }
    }
    return 0;
}

static int opw_svd_alloc(opw_svd_work* w) {
    const npy_intp m = w->m, n = w->n, k = w->k;
    double wq = 0.0;
    int query = -1, info = 0;
    if (w->spec->kind == OPW_SVD_PINVH) return opw_svd_alloc_hermitian(w);
    w->gesdd = opw_svd_routine();
    if (w->gesdd == NULL) return -1;
    w->a = opw_svd_doubles(m * n);
    w->s = opw_svd_doubles(k);
    w->u = opw_svd_doubles((npy_intp)w->ldu * w->ucols);
    w->vt = opw_svd_doubles((npy_intp)w->ldvt * n);
    w->iwork = (int*)PyMem_Malloc((size_t)(8 * k) * sizeof(int));
    if (w->spec->kind == OPW_SVD_PINV) w->scaled = opw_svd_doubles(k * m);
    if (!w->a || !w->s || !w->u || !w->vt || !w->iwork ||
        (w->spec->kind == OPW_SVD_PINV && !w->scaled)) {
        PyErr_NoMemory();
        return -1;
    }
    w->gesdd(&w->jobz, &w->m, &w->n, w->a, &w->m, w->s, w->u, &w->ldu, w->vt, &w->ldvt, &wq,
             &query, w->iwork, &info);
    if (info != 0) return opw_nl_bad_argument(w->spec, "gesdd", info);
    w->lwork = (int)wq;
    w->work = opw_svd_doubles(w->lwork);
    if (!w->work) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The pseudo-inverse (n x m, C order) of the factors in ``w`` into ``z``. */
static void opw_svd_pinv(opw_svd_work* w, char* z) {
    const npy_intp m = w->m, n = w->n, k = w->k, item = w->item;
    const int t = w->typenum;
    double top = -NPY_INFINITY, cutoff;
    int nan = 0;
    npy_intp i, j, q;
    for (q = 0; q < k; q++) { /* the largest, NaN if any is (numpy.amax) */
        double v = opw_svd_round(t, w->s[q]);
        if (v != v)
            nan = 1;
        else if (v > top)
            top = v;
    }
    cutoff = nan ? NPY_NAN : OPW_SVD_RCOND * top;
    for (q = 0; q < k; q++) {
        double v = opw_svd_round(t, w->s[q]);
        double inv = v > cutoff ? opw_svd_round(t, 1.0 / v) : 0.0;
        for (j = 0; j < m; j++)
            w->scaled[q * m + j] = opw_svd_round(t, inv * opw_svd_round(t, w->u[q * m + j]));
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            double acc = 0.0;
            for (q = 0; q < k; q++) {
                double prod = opw_svd_round(
                    t, opw_svd_round(t, w->vt[i * w->ldvt + q]) * w->scaled[q * m + j]);
                acc = opw_svd_round(t, acc + prod);
            }
            opw_nl_put(z + (i * m + j) * item, t, acc);
        }
}

/* One matrix, already in ``w->a``: its results into ``z0`` (and ``z1``, ``z2``). 0 or -1
 * with an exception set. */
static int opw_svd_matrix(opw_svd_work* w, char* z0, char* z1, char* z2) {
    const npy_intp n = w->n, k = w->k, item = w->item;
    const int t = w->typenum, kind = w->spec->kind;
    npy_intp r, c;
    int info = 0;
    if (kind == OPW_SVD_PINVH) {
        if (opw_svd_hermitian(w) < 0) return -1;
        opw_svd_pinv(w, z0);
        return 0;
    }
    w->gesdd(&w->jobz, &w->m, &w->n, w->a, &w->m, w->s, w->u, &w->ldu, w->vt, &w->ldvt,
             w->work, &w->lwork, w->iwork, &info);
    if (info != 0) {
        opw_svd_linalg_error("SVD did not converge");
        return -1;
    }
    if (kind == OPW_SVD_PINV) {
        opw_svd_pinv(w, z0);
        return 0;
    }
    if (kind == OPW_SVD_S) {
        for (c = 0; c < k; c++) opw_nl_put(z0 + c * item, t, w->s[c]);
        return 0;
    }
    for (r = 0; r < w->m; r++)
        for (c = 0; c < w->ucols; c++)
            opw_nl_put(z0 + (r * w->ucols + c) * item, t, w->u[c * w->ldu + r]);
    for (c = 0; c < k; c++) opw_nl_put(z1 + c * item, t, w->s[c]);
    for (r = 0; r < w->ldvt; r++)
        for (c = 0; c < n; c++) opw_nl_put(z2 + (r * n + c) * item, t, w->vt[c * w->ldvt + r]);
    return 0;
}

/* The identity of order ``n`` into the C-contiguous ``z``. */
static void opw_svd_eye(char* z, int typenum, npy_intp n, npy_intp item) {
    npy_intp r, c;
    for (r = 0; r < n; r++)
        for (c = 0; c < n; c++) opw_nl_put(z + (r * n + c) * item, typenum, r == c ? 1.0 : 0.0);
}

/* An output of ``nb`` batch dimensions ``dims`` and the core shape ``core`` (``ncore``
 * lengths), the previous one when it fits and shares no memory with ``x``. */
static int opw_svd_output(PyArrayObject** z, PyArrayObject* x, int nb, const npy_intp* dims,
                          int ncore, npy_intp c0, npy_intp c1, int typenum) {
    npy_intp shape[NPY_MAXDIMS];
    int i;
    for (i = 0; i < nb; i++) shape[i] = dims[i];
    if (ncore > 0) shape[nb] = c0;
    if (ncore > 1) shape[nb + 1] = c1;
    if (*z && opw_overlap(*z, x)) {
        Py_DECREF(*z);
        *z = NULL;
    }
    return opw_prep_output(z, nb + ncore, shape, typenum);
}

/* The node: cast ``x_in`` to the output's dtype, make the C-contiguous outputs (U, s, VT;
 * s alone; or the pseudo-inverse), then every matrix of the batch, in C order. 0 or -1
 * with an exception set. */
static int opw_svd_run(const opw_nl_spec* s, int typenum, PyArrayObject* x_in,
                       PyArrayObject** z0, PyArrayObject** z1, PyArrayObject** z2) {
    PyArrayObject* x = NULL;
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], st[NPY_MAXDIMS];
    npy_intp m, n, k, count, c, rs, cs, r, q, step0 = 0, step1 = 0, step2 = 0;
    int nd, nb, i, status = -1, kind = s->kind;
    char *px, *pz0, *pz1 = NULL, *pz2 = NULL;
    opw_svd_work w;
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
    count = 1;
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
    w.jobz = kind == OPW_SVD_FULL ? 'A' : (kind == OPW_SVD_S ? 'N' : 'S');
    w.ldu = kind == OPW_SVD_S ? 1 : w.m;
    w.ucols = kind == OPW_SVD_FULL ? w.m : (kind == OPW_SVD_S ? 1 : w.k);
    w.ldvt = kind == OPW_SVD_FULL ? w.n : (kind == OPW_SVD_S ? 1 : w.k);
    if (kind == OPW_SVD_PINVH && m != n) {
        PyObject* shape = opw_shape_str(nd, PyArray_DIMS(x), ", ");
        if (shape) {
            PyErr_Format(PyExc_ValueError,
                         "%s: the input x must hold square matrices, got shape %U", s->who,
                         shape);
            Py_DECREF(shape);
        }
        goto done;
    }
    if (kind == OPW_SVD_PINV || kind == OPW_SVD_PINVH) {
        if (opw_svd_output(z0, x_in, nb, dims, 2, n, m, typenum) < 0) goto done;
        step0 = n * m;
    } else if (kind == OPW_SVD_S) {
        if (opw_svd_output(z0, x_in, nb, dims, 1, k, 0, typenum) < 0) goto done;
        step0 = k;
    } else {
        if (opw_svd_output(z0, x_in, nb, dims, 2, m, w.ucols, typenum) < 0) goto done;
        if (opw_svd_output(z1, x_in, nb, dims, 1, k, 0, typenum) < 0) goto done;
        if (opw_svd_output(z2, x_in, nb, dims, 2, w.ldvt, n, typenum) < 0) goto done;
        step0 = m * w.ucols;
        step1 = k;
        step2 = (npy_intp)w.ldvt * n;
        pz1 = PyArray_BYTES(*z1);
        pz2 = PyArray_BYTES(*z2);
    }
    pz0 = PyArray_BYTES(*z0);
    w.item = PyArray_ITEMSIZE(*z0);
    if (count == 0) {
        status = 0;
        goto done;
    }
    if (k == 0) { /* no entries: the identities as U and VT (full_matrices) */
        if (kind == OPW_SVD_FULL)
            for (c = 0; c < count; c++) {
                opw_svd_eye(pz0 + c * step0 * w.item, typenum, m, w.item);
                opw_svd_eye(pz2 + c * step2 * w.item, typenum, n, w.item);
            }
        status = 0;
        goto done;
    }
    if (opw_svd_alloc(&w) < 0) goto done;
    px = PyArray_BYTES(x);
    for (c = 0; c < count; c++) {
        for (q = 0; q < n; q++)
            for (r = 0; r < m; r++) w.a[q * m + r] = opw_nl_get(px + r * rs + q * cs, typenum);
        if (opw_svd_matrix(&w, pz0, pz1, pz2) < 0) goto done;
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
    opw_svd_free(&w);
    Py_XDECREF(x);
    return status;
}

#section node

{
    static const opw_nl_spec opw_spec = {%(who)s, %(kind)s, 0};
    if (opw_svd_run(&opw_spec, %(typenum)s, %(x)s, &%(z0)s, %(z1)s, %(z2)s) < 0) %(fail)s
}
