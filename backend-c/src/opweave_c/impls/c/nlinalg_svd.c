#section support

/* SVD and MatrixPinv (not Hermitian) of opweave.tensor.nlinalg through the LAPACK SciPy
 * ships (dgesdd, looked up in scipy.linalg.cython_lapack on first use). Needs the support
 * code of nlinalg.c (opw_nl_load, opw_nl_store, opw_nl_matrices, opw_nl_bad_argument...).
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

/* One call's work: the shapes, the work arrays, the routine. */
typedef struct {
    opw_nl_head h; /* h.spec->kind: OPW_SVD_* */
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

/* ``w``'s work arrays and routine for m x n matrices with k = min(m, n) > 0 (dgesdd's
 * workspace as its query gives it). 0 or -1 with an exception set. */
static int opw_svd_alloc_hermitian(opw_svd_work* w) {
    const npy_intp n = w->h.n;
    char jobz = 'V', uplo = 'L';
    double wq = 0.0;
    int iwq = 0, query = -1, info = 0;
    opw_nl_getrf_t getrf;
    opw_nl_gesv_t gesv;
    if (opw_nl_routines(&getrf, &gesv, &w->syevd) < 0) return -1;
    w->a = opw_nl_doubles(n * n);
    w->s = opw_nl_doubles(2 * n); /* the eigenvalues, then the singular values */
    w->u = opw_nl_doubles(n * n);
    w->vt = opw_nl_doubles(n * n);
    w->scaled = opw_nl_doubles(n * n);
    w->order = (npy_intp*)PyMem_Malloc((size_t)n * sizeof(npy_intp));
    if (!w->a || !w->s || !w->u || !w->vt || !w->scaled || !w->order) {
        PyErr_NoMemory();
        return -1;
    }
    w->syevd(&jobz, &uplo, &w->h.n, w->a, &w->h.n, w->s, &wq, &query, &iwq, &query, &info);
    if (info != 0) return opw_nl_bad_argument(w->h.spec, "syevd", info);
    w->lwork = (int)wq;
    w->liwork = iwq;
    w->work = opw_nl_doubles(w->lwork);
    w->iwork = opw_nl_ints(w->liwork);
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
    const npy_intp n = w->h.n;
    const int t = w->h.typenum;
    char jobz = 'V', uplo = 'L';
    double *ev = w->s + n, *s = w->s;
    npy_intp i, q;
    int info = 0;
    w->syevd(&jobz, &uplo, &w->h.n, w->a, &w->h.n, ev, w->work, &w->lwork, w->iwork, &w->liwork,
             &info);
    if (info < 0) return opw_nl_bad_argument(w->h.spec, "syevd", info);
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
    const npy_intp m = w->h.m, n = w->h.n, k = w->h.k;
    double wq = 0.0;
    int query = -1, info = 0;
    if (w->h.spec->kind == OPW_SVD_PINVH) return opw_svd_alloc_hermitian(w);
    w->gesdd = opw_svd_routine();
    if (w->gesdd == NULL) return -1;
    w->a = opw_nl_doubles(m * n);
    w->s = opw_nl_doubles(k);
    w->u = opw_nl_doubles((npy_intp)w->ldu * w->ucols);
    w->vt = opw_nl_doubles((npy_intp)w->ldvt * n);
    w->iwork = (int*)PyMem_Malloc((size_t)(8 * k) * sizeof(int));
    if (w->h.spec->kind == OPW_SVD_PINV) w->scaled = opw_nl_doubles(k * m);
    if (!w->a || !w->s || !w->u || !w->vt || !w->iwork ||
        (w->h.spec->kind == OPW_SVD_PINV && !w->scaled)) {
        PyErr_NoMemory();
        return -1;
    }
    w->gesdd(&w->jobz, &w->h.m, &w->h.n, w->a, &w->h.m, w->s, w->u, &w->ldu, w->vt, &w->ldvt, &wq,
             &query, w->iwork, &info);
    if (info != 0) return opw_nl_bad_argument(w->h.spec, "gesdd", info);
    w->lwork = (int)wq;
    w->work = opw_nl_doubles(w->lwork);
    if (!w->work) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The pseudo-inverse (n x m, C order) of the factors in ``w`` into ``z``. */
static void opw_svd_pinv(opw_svd_work* w, char* z) {
    const npy_intp m = w->h.m, n = w->h.n, k = w->h.k, item = w->h.item;
    const int t = w->h.typenum;
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
static int opw_svd_matrix(void* work, char* z0, char* z1, char* z2) {
    opw_svd_work* w = (opw_svd_work*)work;
    const npy_intp n = w->h.n, k = w->h.k, item = w->h.item;
    const int t = w->h.typenum, kind = w->h.spec->kind;
    int info = 0;
    if (kind == OPW_SVD_PINVH) {
        if (opw_svd_hermitian(w) < 0) return -1;
        opw_svd_pinv(w, z0);
        return 0;
    }
    w->gesdd(&w->jobz, &w->h.m, &w->h.n, w->a, &w->h.m, w->s, w->u, &w->ldu, w->vt, &w->ldvt,
             w->work, &w->lwork, w->iwork, &info);
    if (info != 0) {
        opw_nl_linalg_error("SVD did not converge");
        return -1;
    }
    if (kind == OPW_SVD_PINV) {
        opw_svd_pinv(w, z0);
        return 0;
    }
    if (kind == OPW_SVD_S) {
        opw_nl_store(z0, t, item, w->s, 1, 1, k);
        return 0;
    }
    opw_nl_store(z0, t, item, w->u, w->ldu, w->h.m, w->ucols);
    opw_nl_store(z1, t, item, w->s, 1, 1, k);
    opw_nl_store(z2, t, item, w->vt, w->ldvt, w->ldvt, n);
    return 0;
}

/* The node: cast ``x_in`` to the output's dtype, make the C-contiguous outputs (U, s, VT;
 * s alone; or the pseudo-inverse), then every matrix of the batch, in C order. 0 or -1
 * with an exception set. */
static int opw_svd_run(const opw_nl_spec* s, int typenum, PyArrayObject* x_in,
                       PyArrayObject** z0, PyArrayObject** z1, PyArrayObject** z2) {
    opw_nl_batch x;
    npy_intp c, steps[3] = {0, 0, 0};
    int status = -1, kind = s->kind;
    char* pz[3] = {NULL, NULL, NULL};
    opw_svd_work w;
    memset(&w, 0, sizeof w);
    if (opw_nl_matrices(s, typenum, x_in, &x, &w.h) < 0) goto done;
    w.jobz = kind == OPW_SVD_FULL ? 'A' : (kind == OPW_SVD_S ? 'N' : 'S');
    w.ldu = kind == OPW_SVD_S ? 1 : w.h.m;
    w.ucols = kind == OPW_SVD_FULL ? w.h.m : (kind == OPW_SVD_S ? 1 : w.h.k);
    w.ldvt = kind == OPW_SVD_FULL ? w.h.n : (kind == OPW_SVD_S ? 1 : w.h.k);
    if (kind == OPW_SVD_PINVH && opw_nl_square(s, x.x, "x") < 0) goto done;
    if (kind == OPW_SVD_PINV || kind == OPW_SVD_PINVH) {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 2, x.n, x.m, typenum) < 0) goto done;
        steps[0] = x.n * x.m;
    } else if (kind == OPW_SVD_S) {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 1, x.k, 0, typenum) < 0) goto done;
        steps[0] = x.k;
    } else {
        if (opw_nl_core_output(z0, x_in, x.nb, x.dims, 2, x.m, w.ucols, typenum) < 0) goto done;
        if (opw_nl_core_output(z1, x_in, x.nb, x.dims, 1, x.k, 0, typenum) < 0) goto done;
        if (opw_nl_core_output(z2, x_in, x.nb, x.dims, 2, w.ldvt, x.n, typenum) < 0) goto done;
        steps[0] = x.m * w.ucols;
        steps[1] = x.k;
        steps[2] = (npy_intp)w.ldvt * x.n;
        pz[1] = PyArray_BYTES(*z1);
        pz[2] = PyArray_BYTES(*z2);
    }
    pz[0] = PyArray_BYTES(*z0);
    w.h.item = PyArray_ITEMSIZE(*z0);
    if (x.count == 0) {
        status = 0;
        goto done;
    }
    if (x.k == 0) { /* no entries: the identities as U and VT (full_matrices) */
        if (kind == OPW_SVD_FULL)
            for (c = 0; c < x.count; c++) {
                opw_nl_eye(pz[0] + c * steps[0] * w.h.item, typenum, x.m, w.h.item);
                opw_nl_eye(pz[2] + c * steps[2] * w.h.item, typenum, x.n, w.h.item);
            }
        status = 0;
        goto done;
    }
    if (opw_svd_alloc(&w) < 0 ||
        opw_nl_each(&x, typenum, w.a, opw_svd_matrix, &w, pz, steps, w.h.item) < 0)
        goto done;
    status = 0;
done:
    opw_svd_free(&w);
    Py_XDECREF(x.x);
    return status;
}
