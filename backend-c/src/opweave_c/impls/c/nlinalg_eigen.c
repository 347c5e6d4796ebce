#section support

/* Eigvalsh (opweave.tensor.linalg.decomposition.eigen) and Eigh with a second matrix
 * (opweave.tensor.nlinalg) through the LAPACK SciPy ships (dsyevd, dsygvd, looked up in
 * scipy.linalg.cython_lapack on first use). Needs the support code of nlinalg.c
 * (opw_nl_load, opw_nl_store, opw_nl_square, opw_nl_bad_argument, opw_nl_not_converged...).
 *
 * Every matrix is computed in double (float32 values widened, the results rounded back),
 * copied into Fortran-ordered work arrays: the eigenvalues of one matrix are dsyevd's
 * (jobz 'N', the workspace its query asks for: numpy.linalg.eigvalsh), those of the
 * generalized problem a v = w b v dsygvd's (itype 1, jobz 'N' or 'V', the workspace
 * SciPy's wrapper sizes by default: scipy.linalg.eigh(a, b)). Both read the triangle the
 * Op names. b not positive definite (info > n) raises numpy.linalg.LinAlgError("<who>: b
 * is not positive definite"), a failure to converge LinAlgError("Eigenvalues did not
 * converge"). */

enum { OPW_EIG_VALS, OPW_EIG_GVALS, OPW_EIG_GVECS };

/* LAPACK's dsygvd (32-bit integers: SciPy's LAPACK is LP64; dsyevd's type is nlinalg.c's). */
typedef void (*opw_eig_sygvd_t)(int* itype, char* jobz, char* uplo, int* n, double* a, int* lda,
                                double* b, int* ldb, double* w, double* work, int* lwork,
                                int* iwork, int* liwork, int* info);

/* dsyevd and dsygvd, looked up once. 0 or -1 with an exception set. */
static int opw_eig_routines(opw_nl_syevd_t* syevd, opw_eig_sygvd_t* sygvd) {
    static void* found[2] = {NULL, NULL};
    static const char* const names[2] = {"dsyevd", "dsygvd"};
    if (opw_nl_lookup(found, names, 2) < 0) return -1;
    *syevd = (opw_nl_syevd_t)found[0];
    *sygvd = (opw_eig_sygvd_t)found[1];
    return 0;
}

/* One call's work. */
typedef struct {
    const opw_nl_spec* spec; /* kind: OPW_EIG_*; lower: the triangle read */
    int typenum;
    npy_intp item;
    int n;
    double *a, *b, *w, *work;
    int* iwork;
    int lwork, liwork;
    opw_nl_syevd_t syevd;
    opw_eig_sygvd_t sygvd;
} opw_eig_work;

static void opw_eig_free(opw_eig_work* w) {
    PyMem_Free(w->a);
    PyMem_Free(w->b);
    PyMem_Free(w->w);
    PyMem_Free(w->work);
    PyMem_Free(w->iwork);
}

/* ``w``'s work arrays and routines for matrices of order ``w->n`` > 0: dsyevd's workspace
 * as its query gives it, dsygvd's as SciPy's wrapper sizes it. 0 or -1 with an exception
 * set. */
static int opw_eig_alloc(opw_eig_work* w) {
    const npy_intp n = w->n;
    const int kind = w->spec->kind;
    if (opw_eig_routines(&w->syevd, &w->sygvd) < 0) return -1;
    if (kind == OPW_EIG_VALS) {
        char jobz = 'N', uplo = w->spec->lower ? 'L' : 'U';
        double wq = 0.0, dummy = 0.0;
        int iwq = 0, query = -1, info = 0;
        w->syevd(&jobz, &uplo, &w->n, &dummy, &w->n, &dummy, &wq, &query, &iwq, &query, &info);
        if (info != 0) return opw_nl_bad_argument(w->spec, "syevd", info);
        w->lwork = (int)wq;
        w->liwork = iwq;
    } else if (kind == OPW_EIG_GVALS) {
        w->lwork = 2 * w->n + 1;
        w->liwork = 1;
    } else {
        w->lwork = 1 + 6 * w->n + 2 * w->n * w->n;
        w->liwork = 5 * w->n + 3;
    }
    w->a = opw_nl_doubles(n * n);
    w->w = opw_nl_doubles(n);
    w->work = opw_nl_doubles(w->lwork);
    w->iwork = opw_nl_ints(w->liwork);
    if (kind != OPW_EIG_VALS) w->b = opw_nl_doubles(n * n);
    if (!w->a || !w->w || !w->work || !w->iwork || (kind != OPW_EIG_VALS && !w->b)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* numpy.linalg.LinAlgError("<who>: b is not positive definite"), as the Python kernels
 * raise it. */
static void opw_eig_not_positive_definite(const opw_nl_spec* s) {
    PyObject* exc = opw_nl_linalg_error_type();
    if (!exc) return;
    PyErr_Format(exc, "%s: b is not positive definite", s->who);
    Py_DECREF(exc);
}

/* One problem, already in ``w->a`` (and ``w->b``): the eigenvalues into ``z0``, the
 * eigenvectors into ``z1``. 0 or -1 with an exception set. */
static int opw_eig_matrix(opw_eig_work* w, char* z0, char* z1) {
    const opw_nl_spec* s = w->spec;
    const npy_intp n = w->n, item = w->item;
    char uplo = s->lower ? 'L' : 'U';
    int info = 0;
    if (s->kind == OPW_EIG_VALS) {
        char jobz = 'N';
        w->syevd(&jobz, &uplo, &w->n, w->a, &w->n, w->w, w->work, &w->lwork, w->iwork,
                 &w->liwork, &info);
        if (info < 0) return opw_nl_bad_argument(s, "syevd", info);
    } else {
        char jobz = s->kind == OPW_EIG_GVECS ? 'V' : 'N';
        int itype = 1;
        w->sygvd(&itype, &jobz, &uplo, &w->n, w->a, &w->n, w->b, &w->n, w->w, w->work,
                 &w->lwork, w->iwork, &w->liwork, &info);
        if (info < 0) return opw_nl_bad_argument(s, "sygvd", info);
        if (info > w->n) {
            opw_eig_not_positive_definite(s);
            return -1;
        }
    }
    if (info > 0) {
        opw_nl_not_converged();
        return -1;
    }
    opw_nl_store(z0, w->typenum, item, w->w, 1, 1, n);
    if (s->kind == OPW_EIG_GVECS) opw_nl_store(z1, w->typenum, item, w->a, n, n, n);
    return 0;
}

/* ValueError("<who>: a has shape <shape> but b has <shape>") unless they agree. 0 or -1. */
static int opw_eig_same_shape(const opw_nl_spec* s, PyArrayObject* a, PyArrayObject* b) {
    int i, same = PyArray_NDIM(a) == PyArray_NDIM(b);
    PyObject *ta, *tb;
    for (i = 0; same && i < PyArray_NDIM(a); i++) same = PyArray_DIMS(a)[i] == PyArray_DIMS(b)[i];
    if (same) return 0;
    ta = opw_shape_str(PyArray_NDIM(a), PyArray_DIMS(a), ", ");
    tb = opw_shape_str(PyArray_NDIM(b), PyArray_DIMS(b), ", ");
    if (ta && tb) PyErr_Format(PyExc_ValueError, "%s: a has shape %U but b has %U", s->who, ta, tb);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return -1;
}

/* The node: cast the inputs to the output's dtype, check their shapes as the Python
 * kernels do, make the C-contiguous outputs (the eigenvalues, then the eigenvectors), then
 * every problem of the batch, in C order. 0 or -1 with an exception set. */
static int opw_eig_run(const opw_nl_spec* s, int typenum, PyArrayObject* a_in,
                       PyArrayObject* b_in, PyArrayObject** z0, PyArrayObject** z1) {
    PyArrayObject *a = NULL, *b = NULL;
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], sa[NPY_MAXDIMS], sb[NPY_MAXDIMS];
    npy_intp n, count = 1, c, ars = 0, acs = 0, brs = 0, bcs = 0;
    int nd, nb, i, status = -1;
    char *pa, *pb = NULL, *pz0, *pz1 = NULL;
    opw_eig_work w;
    memset(&w, 0, sizeof w);
    w.spec = s;
    w.typenum = typenum;
    a = opw_nl_cast(a_in, typenum);
    if (!a || opw_nl_square(s, a, "a") < 0) goto done;
    if (b_in) {
        b = opw_nl_cast(b_in, typenum);
        if (!b || opw_nl_square(s, b, "b") < 0 || opw_eig_same_shape(s, a, b) < 0) goto done;
    }
    nd = PyArray_NDIM(a);
    nb = nd - 2;
    n = PyArray_DIMS(a)[nd - 1];
    for (i = 0; i < nd; i++) dims[i] = PyArray_DIMS(a)[i];
    for (i = 0; i < nb; i++) {
        sa[i] = PyArray_STRIDES(a)[i];
        sb[i] = b ? PyArray_STRIDES(b)[i] : 0;
        idx[i] = 0;
        count *= dims[i];
    }
    ars = PyArray_STRIDES(a)[nd - 2];
    acs = PyArray_STRIDES(a)[nd - 1];
    if (b) {
        brs = PyArray_STRIDES(b)[nd - 2];
        bcs = PyArray_STRIDES(b)[nd - 1];
    }
    if (opw_nl_output(z0, a_in, b_in, nb + 1, dims, typenum) < 0) goto done;
    if (z1) {
        if (opw_nl_output(z1, a_in, b_in, nd, dims, typenum) < 0) goto done;
        pz1 = PyArray_BYTES(*z1);
    }
    if (count == 0 || n == 0) {
        status = 0;
        goto done;
    }
    if (n > 46340) { /* 2 n^2 workspace entries must fit LAPACK's 32-bit integers */
        opw_nl_order_too_large(s, n);
        goto done;
    }
    w.n = (int)n;
    w.item = PyArray_ITEMSIZE(*z0);
    if (opw_eig_alloc(&w) < 0) goto done;
    pa = PyArray_BYTES(a);
    if (b) pb = PyArray_BYTES(b);
    pz0 = PyArray_BYTES(*z0);
    for (c = 0; c < count; c++) {
        opw_nl_load(w.a, n, pa, ars, acs, n, n, typenum);
        if (pb) opw_nl_load(w.b, n, pb, brs, bcs, n, n, typenum);
        if (opw_eig_matrix(&w, pz0, pz1) < 0) goto done;
        pz0 += n * w.item;
        if (pz1) pz1 += n * n * w.item;
        opw_nl_next(nb, dims, idx, sa, &pa, sb, &pb);
    }
    status = 0;
done:
    opw_eig_free(&w);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return status;
}

#section node

{
    static const opw_nl_spec opw_spec = {%(who)s, %(kind)s, %(lower)s};
    if (opw_eig_run(&opw_spec, %(typenum)s, %(a)s, %(b)s, &%(z0)s, %(z1)s) < 0) %(fail)s
}
