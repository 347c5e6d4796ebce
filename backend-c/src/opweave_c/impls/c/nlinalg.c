#section support

/* MatrixInverse, Det, SLogDet and Eigh of one matrix (opweave.tensor.nlinalg) through the
 * LAPACK SciPy ships (nlinalg_svd.c, nlinalg_qr.c, nlinalg_lstsq.c and nlinalg_eigen.c have
 * the other kernels and use the functions defined here):
 * scipy.linalg.cython_lapack exports its routines as capsules of function pointers, looked
 * up on first use (no LAPACK to link against).
 *
 * As numpy.linalg does, every matrix is computed in double (float32 values are widened,
 * the results rounded back): it is copied into a Fortran-ordered work array and handed to
 * dgesv with the identity as right-hand side (numpy.linalg.inv) or to dgetrf, whose
 * diagonal gives the sign and the sum of the logs of the absolute values in NumPy's order,
 * the determinant being sign * exp(logdet) (numpy.linalg.slogdet and det), or to dsyevd
 * (jobz 'V', the triangle Eigh names, the workspace its query asks for: numpy.linalg.eigh). */

enum { OPW_NL_INV, OPW_NL_DET, OPW_NL_SLOGDET, OPW_NL_EIGH };

/* LAPACK's dgetrf, dgesv and dsyevd (32-bit integers: SciPy's LAPACK is LP64). */
typedef void (*opw_nl_getrf_t)(int* m, int* n, double* a, int* lda, int* ipiv, int* info);
typedef void (*opw_nl_gesv_t)(int* n, int* nrhs, double* a, int* lda, int* ipiv, double* b,
                              int* ldb, int* info);
typedef void (*opw_nl_syevd_t)(char* jobz, char* uplo, int* n, double* a, int* lda, double* w,
                               double* work, int* lwork, int* iwork, int* liwork, int* info);

/* What a node asks for, fixed when its code is generated. */
typedef struct {
    const char* who; /* the Op as text, for messages */
    int kind;        /* OPW_NL_INV, OPW_NL_DET, OPW_NL_SLOGDET or OPW_NL_EIGH */
    int lower;       /* Eigh's lower: the triangle dsyevd reads */
} opw_nl_spec;

/* The routines ``names`` (``count`` of them), looked up once into ``found`` (static, NULL
 * until found). 0 or -1 with an exception set. */
static int opw_nl_lookup(void** found, const char* const* names, int count) {
    int i;
    for (i = 0; i < count; i++) {
        if (found[i] == NULL) {
            void* fn = opw_lapack_lookup(names[i]);
            if (fn == NULL) return -1;
            found[i] = fn;
        }
    }
    return 0;
}

/* dgetrf, dgesv and dsyevd, looked up once. 0 or -1. */
static int opw_nl_routines(opw_nl_getrf_t* getrf, opw_nl_gesv_t* gesv, opw_nl_syevd_t* syevd) {
    static void* found[3] = {NULL, NULL, NULL};
    static const char* const names[3] = {"dgetrf", "dgesv", "dsyevd"};
    if (opw_nl_lookup(found, names, 3) < 0) return -1;
    *getrf = (opw_nl_getrf_t)found[0];
    *gesv = (opw_nl_gesv_t)found[1];
    *syevd = (opw_nl_syevd_t)found[2];
    return 0;
}

/* The value at ``p`` (float32 or float64) as a double, and ``v`` stored there in the type. */
static double opw_nl_get(const char* p, int typenum) {
    return typenum == NPY_FLOAT64 ? *(const double*)p : (double)*(const float*)p;
}

static void opw_nl_put(char* p, int typenum, double v) {
    if (typenum == NPY_FLOAT64)
        *(double*)p = v;
    else
        *(float*)p = (float)v;
}

/* The ``rows`` x ``cols`` matrix at ``src`` (strides ``rs`` and ``cs``, float32 or float64)
 * as doubles into the Fortran-ordered ``dst`` of leading dimension ``ld``. */
static void opw_nl_load(double* dst, npy_intp ld, const char* src, npy_intp rs, npy_intp cs,
                        npy_intp rows, npy_intp cols, int typenum) {
    npy_intp r, c;
    for (c = 0; c < cols; c++)
        for (r = 0; r < rows; r++) dst[c * ld + r] = opw_nl_get(src + r * rs + c * cs, typenum);
}

/* The ``rows`` x ``cols`` Fortran-ordered ``src`` of leading dimension ``ld`` rounded to the
 * output's dtype into the C-contiguous ``z`` (items of ``item`` bytes). A vector is one row
 * (``ld`` 1). */
static void opw_nl_store(char* z, int typenum, npy_intp item, const double* src, npy_intp ld,
                         npy_intp rows, npy_intp cols) {
    npy_intp r, c;
    for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++) opw_nl_put(z + (r * cols + c) * item, typenum, src[c * ld + r]);
}

/* The identity of order ``n`` into the C-contiguous ``z``. */
static void opw_nl_eye(char* z, int typenum, npy_intp n, npy_intp item) {
    npy_intp r, c;
    for (r = 0; r < n; r++)
        for (c = 0; c < n; c++) opw_nl_put(z + (r * n + c) * item, typenum, r == c ? 1.0 : 0.0);
}

/* Work arrays of ``count`` entries (at least one). NULL when out of memory. */
static double* opw_nl_doubles(npy_intp count) {
    return (double*)PyMem_Malloc((size_t)(count > 1 ? count : 1) * sizeof(double));
}

static int* opw_nl_ints(npy_intp count) {
    return (int*)PyMem_Malloc((size_t)(count > 1 ? count : 1) * sizeof(int));
}

/* numpy.linalg.LinAlgError (a new reference), or NULL with an exception set. */
static PyObject* opw_nl_linalg_error_type(void) {
    PyObject *linalg = PyImport_ImportModule("numpy.linalg"), *exc;
    if (!linalg) return NULL;
    exc = PyObject_GetAttrString(linalg, "LinAlgError");
    Py_DECREF(linalg);
    return exc;
}

/* numpy.linalg.LinAlgError(msg). */
static void opw_nl_linalg_error(const char* msg) {
    PyObject* exc = opw_nl_linalg_error_type();
    if (!exc) return;
    PyErr_SetString(exc, msg);
    Py_DECREF(exc);
}

/* numpy.linalg.LinAlgError("Eigenvalues did not converge"), NumPy's error for eigh. */
static void opw_nl_not_converged(void) {
    opw_nl_linalg_error("Eigenvalues did not converge");
}

/* ValueError("<who>: the input <name> must hold square matrices, got shape <shape>")
 * unless ``x`` holds square matrices. 0 or -1. */
static int opw_nl_square(const opw_nl_spec* s, PyArrayObject* x, const char* name) {
    int nd = PyArray_NDIM(x);
    PyObject* shape;
    if (nd >= 2 && PyArray_DIMS(x)[nd - 1] == PyArray_DIMS(x)[nd - 2]) return 0;
    shape = opw_shape_str(nd, PyArray_DIMS(x), ", ");
    if (shape) {
        PyErr_Format(PyExc_ValueError, "%s: the input %s must hold square matrices, got shape %U",
                     s->who, name, shape);
        Py_DECREF(shape);
    }
    return -1;
}

/* ``*z`` for an output of ``nd`` lengths ``dims``: the previous one when it fits and shares
 * no memory with the input ``a`` (nor ``b`` unless NULL). 0 or -1 with an exception set. */
static int opw_nl_output(PyArrayObject** z, PyArrayObject* a, PyArrayObject* b, int nd,
                         const npy_intp* dims, int typenum) {
    if (*z && (opw_overlap(*z, a) || (b && opw_overlap(*z, b)))) Py_CLEAR(*z);
    return opw_prep_output(z, nd, dims, typenum);
}

/* An output of ``nb`` batch dimensions ``dims`` and the core shape (c0, c1) cut to its
 * first ``ncore`` lengths (:c:func:`opw_nl_output`). */
static int opw_nl_core_output(PyArrayObject** z, PyArrayObject* x, int nb, const npy_intp* dims,
                              int ncore, npy_intp c0, npy_intp c1, int typenum) {
    npy_intp shape[NPY_MAXDIMS];
    int i;
    for (i = 0; i < nb; i++) shape[i] = dims[i];
    if (ncore > 0) shape[nb] = c0;
    if (ncore > 1) shape[nb + 1] = c1;
    return opw_nl_output(z, x, NULL, nb + ncore, shape, typenum);
}

/* The next batch index after ``idx`` (``nb`` lengths ``dims``), in C order: ``*p`` (and
 * ``*p2`` unless ``p2`` or ``*p2`` is NULL) moved along by the strides ``st`` (``st2``). */
static void opw_nl_next(int nb, const npy_intp* dims, npy_intp* idx, const npy_intp* st, char** p,
                        const npy_intp* st2, char** p2) {
    int i;
    if (p2 && !*p2) p2 = NULL;
    for (i = nb - 1; i >= 0; i--) {
        *p += st[i];
        if (p2) *p2 += st2[i];
        if (++idx[i] < dims[i]) break;
        *p -= st[i] * dims[i];
        if (p2) *p2 -= st2[i] * dims[i];
        idx[i] = 0;
    }
}

/* ValueError: a matrix of order ``n`` does not fit LAPACK's 32-bit integers. Always -1. */
static int opw_nl_order_too_large(const opw_nl_spec* s, npy_intp n) {
    PyErr_Format(PyExc_ValueError,
                 "%s: a matrix of order %zd is too large for LAPACK's 32-bit integers", s->who,
                 (Py_ssize_t)n);
    return -1;
}

/* ``x`` in the output's dtype (a new reference: ``x`` itself when it has it), as the
 * Python backend's ``numpy.asarray(x, dtype)``. */
static PyArrayObject* opw_nl_cast(PyArrayObject* x, int typenum) {
    return (PyArrayObject*)PyArray_FromAny((PyObject*)x, PyArray_DescrFromType(typenum), 0, 0,
                                           NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
}

/* What the work of one call on a batch of m x n matrices starts with: the node, the
 * output's dtype and item size, the order of the matrices and k = min(m, n). */
typedef struct {
    const opw_nl_spec* spec;
    int typenum;
    npy_intp item;
    int m, n, k;
} opw_nl_head;

/* A batch of m x n matrices, the last two axes of an input cast to the output's dtype. */
typedef struct {
    PyArrayObject* x; /* the input in the output's dtype (a new reference) */
    int nd, nb;
    npy_intp m, n, k, count, rs, cs; /* k = min(m, n); count: the matrices */
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], st[NPY_MAXDIMS]; /* the batch's */
} opw_nl_batch;

/* ``x_in`` cast to the output's dtype as the batch ``b`` (``b->x`` to be released by the
 * caller, even on failure) and the head ``h`` of the call's work: ValueError unless it
 * holds matrices of at most INT_MAX rows and columns. 0 or -1 with an exception set. */
static int opw_nl_matrices(const opw_nl_spec* s, int typenum, PyArrayObject* x_in,
                           opw_nl_batch* b, opw_nl_head* h) {
    int i;
    h->spec = s;
    h->typenum = typenum;
    b->x = opw_nl_cast(x_in, typenum);
    if (!b->x) return -1;
    b->nd = PyArray_NDIM(b->x);
    if (b->nd < 2) {
        PyErr_Format(PyExc_ValueError, "%s: the input x must hold matrices", s->who);
        return -1;
    }
    b->nb = b->nd - 2;
    b->m = PyArray_DIMS(b->x)[b->nd - 2];
    b->n = PyArray_DIMS(b->x)[b->nd - 1];
    b->k = b->m < b->n ? b->m : b->n;
    b->rs = PyArray_STRIDES(b->x)[b->nd - 2];
    b->cs = PyArray_STRIDES(b->x)[b->nd - 1];
    b->count = 1;
    for (i = 0; i < b->nb; i++) {
        b->dims[i] = PyArray_DIMS(b->x)[i];
        b->st[i] = PyArray_STRIDES(b->x)[i];
        b->idx[i] = 0;
        b->count *= b->dims[i];
    }
    if (b->m > INT_MAX || b->n > INT_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a matrix of shape (%zd, %zd) is too large for LAPACK's 32-bit "
                     "integers",
                     s->who, (Py_ssize_t)b->m, (Py_ssize_t)b->n);
        return -1;
    }
    h->m = (int)b->m;
    h->n = (int)b->n;
    h->k = (int)b->k;
    return 0;
}

/* RuntimeError for a negative LAPACK info (a bad argument). Always -1. */
static int opw_nl_bad_argument(const opw_nl_spec* s, const char* routine, int info) {
    PyErr_Format(PyExc_RuntimeError, "%s: LAPACK's %s rejected argument %d", s->who, routine,
                 -info);
    return -1;
}

/* numpy.linalg.LinAlgError("<who>: the matrix[ at batch index <idx>] is singular and has no
 * inverse (input shape <shape>)"), as MatrixInverse raises it in the Python backend. */
static void opw_nl_singular(const opw_nl_spec* s, PyArrayObject* x, int nb, const npy_intp* idx) {
    PyObject *exc = opw_nl_linalg_error_type(), *shape, *where = NULL;
    if (!exc) return;
    shape = opw_shape_str(PyArray_NDIM(x), PyArray_DIMS(x), ", ");
    if (shape && nb > 0) where = opw_shape_str(nb, idx, ", ");
    if (shape && nb == 0) {
        PyErr_Format(exc, "%s: the matrix is singular and has no inverse (input shape %U)",
                     s->who, shape);
    } else if (shape && where) {
        PyErr_Format(exc,
                     "%s: the matrix at batch index %U is singular and has no inverse (input "
                     "shape %U)",
                     s->who, where, shape);
    }
    Py_XDECREF(where);
    Py_XDECREF(shape);
    Py_DECREF(exc);
}

/* The sign and log|det| of the n x n Fortran-ordered matrix ``m`` (overwritten by its LU
 * factors), as NumPy's slogdet: dgetrf, the sign of the row swaps, then along the diagonal
 * the sign flipped for each negative entry and the logs of the absolute values summed in
 * order; an exactly singular matrix gives (0, -inf). 0 or -1 with an exception set. */
static int opw_nl_slogdet(const opw_nl_spec* s, opw_nl_getrf_t getrf, double* m, int n,
                          int* ipiv, double* sign, double* logdet) {
    int info = 0, swaps = 0, i;
    double acc_sign, acc_log = 0.0;
    if (n == 0) {
        *sign = 1.0;
        *logdet = 0.0;
        return 0;
    }
    getrf(&n, &n, m, &n, ipiv, &info);
    if (info < 0) return opw_nl_bad_argument(s, "getrf", info);
    if (info > 0) {
        *sign = 0.0;
        *logdet = -NPY_INFINITY;
        return 0;
    }
    for (i = 0; i < n; i++) swaps += ipiv[i] != i + 1;
    acc_sign = swaps % 2 ? -1.0 : 1.0;
    for (i = 0; i < n; i++) {
        double d = m[(npy_intp)i * n + i];
        if (d < 0.0) {
            acc_sign = -acc_sign;
            d = -d;
        }
        acc_log += log(d);
    }
    *sign = acc_sign;
    *logdet = acc_log;
    return 0;
}

/* One call's work: the order and the work arrays, the routines, the output's dtype. */
typedef struct {
    const opw_nl_spec* spec;
    int typenum;
    npy_intp item;   /* the output's item size */
    int n;
    double* m;       /* n * n: the matrix, Fortran-ordered (overwritten by LAPACK) */
    double* rhs;     /* n * n: the identity, then the inverse */
    double* w;       /* n: the eigenvalues */
    double* work;    /* lwork: dsyevd's work array */
    int* iwork;      /* liwork: dsyevd's integer work array */
    int* ipiv;       /* n: the pivots */
    int lwork, liwork;
    opw_nl_getrf_t getrf;
    opw_nl_gesv_t gesv;
    opw_nl_syevd_t syevd;
} opw_nl_work;

/* ``w``'s work arrays and routines for matrices of order ``w->n`` > 0 (dsyevd's workspace
 * as its query gives it, as NumPy sizes it). 0 or -1 with an exception set. */
static int opw_nl_alloc(opw_nl_work* w) {
    const npy_intp n = w->n;
    if (opw_nl_routines(&w->getrf, &w->gesv, &w->syevd) < 0) return -1;
    w->m = opw_nl_doubles(n * n);
    w->ipiv = opw_nl_ints(n);
    if (!w->m || !w->ipiv) goto nomem;
    if (w->spec->kind == OPW_NL_INV) {
        w->rhs = opw_nl_doubles(n * n);
        if (!w->rhs) goto nomem;
    }
    if (w->spec->kind == OPW_NL_EIGH) {
        char jobz = 'V', uplo = w->spec->lower ? 'L' : 'U';
        double wq = 0.0;
        int iwq = 0, query = -1, info = 0;
        w->w = opw_nl_doubles(n);
        if (!w->w) goto nomem;
        w->syevd(&jobz, &uplo, &w->n, w->m, &w->n, w->w, &wq, &query, &iwq, &query, &info);
        if (info < 0) return opw_nl_bad_argument(w->spec, "syevd", info);
        w->lwork = (int)wq;
        w->liwork = iwq;
        w->work = opw_nl_doubles(w->lwork);
        w->iwork = opw_nl_ints(w->liwork);
        if (!w->work || !w->iwork) goto nomem;
    }
    return 0;
nomem:
    PyErr_NoMemory();
    return -1;
}

static void opw_nl_free(opw_nl_work* w) {
    PyMem_Free(w->m);
    PyMem_Free(w->rhs);
    PyMem_Free(w->w);
    PyMem_Free(w->work);
    PyMem_Free(w->iwork);
    PyMem_Free(w->ipiv);
}

/* One matrix of order n > 0, already in ``w->m``: its results into ``z0`` (and ``z1``). 0,
 * 1 for a singular matrix to invert, or -1 with an exception set. */
static int opw_nl_matrix(opw_nl_work* w, char* z0, char* z1) {
    const opw_nl_spec* s = w->spec;
    const npy_intp n = w->n, item = w->item;
    npy_intp c;
    int info = 0;
    if (s->kind == OPW_NL_INV) {
        memset(w->rhs, 0, (size_t)(n * n) * sizeof(double));
        for (c = 0; c < n; c++) w->rhs[c * n + c] = 1.0;
        w->gesv(&w->n, &w->n, w->m, &w->n, w->ipiv, w->rhs, &w->n, &info);
        if (info < 0) return opw_nl_bad_argument(s, "gesv", info);
        if (info > 0) return 1;
        opw_nl_store(z0, w->typenum, item, w->rhs, n, n, n);
    } else if (s->kind == OPW_NL_EIGH) {
        char jobz = 'V', uplo = s->lower ? 'L' : 'U';
        w->syevd(&jobz, &uplo, &w->n, w->m, &w->n, w->w, w->work, &w->lwork, w->iwork,
                 &w->liwork, &info);
        if (info < 0) return opw_nl_bad_argument(s, "syevd", info);
        if (info > 0) {
            opw_nl_not_converged();
            return -1;
        }
        opw_nl_store(z0, w->typenum, item, w->w, 1, 1, n);
        opw_nl_store(z1, w->typenum, item, w->m, n, n, n);
    } else {
        double sign, logdet;
        if (opw_nl_slogdet(s, w->getrf, w->m, w->n, w->ipiv, &sign, &logdet) < 0) return -1;
        if (s->kind == OPW_NL_DET) {
            opw_nl_put(z0, w->typenum, sign * exp(logdet));
        } else {
            opw_nl_put(z0, w->typenum, sign);
            opw_nl_put(z1, w->typenum, logdet);
        }
    }
    return 0;
}

/* The node: cast ``x_in`` to the output's dtype, check that it holds square matrices, make
 * the C-contiguous outputs (the previous ones when they fit and share no memory with the
 * input): the inverses, the determinants, the signs and the logs, or the eigenvalues and
 * the eigenvectors (``*z0``, then ``*z1`` for two outputs); then every matrix of the batch,
 * in C order. An empty matrix has the determinant 1 and (1, 0); a singular matrix raises
 * LinAlgError for the inverse. 0 or -1 with an exception set. */
static int opw_nl_run(const opw_nl_spec* s, int typenum, PyArrayObject* x_in,
                      PyArrayObject** z0, PyArrayObject** z1) {
    PyArrayObject* x = NULL;
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], st[NPY_MAXDIMS];
    npy_intp n, count, c, rs, cs, step0, step1;
    int nd, nb, i, status = -1;
    char *px, *pz0, *pz1 = NULL;
    opw_nl_work w;
    memset(&w, 0, sizeof w);
    w.spec = s;
    w.typenum = typenum;
    x = opw_nl_cast(x_in, typenum);
    if (!x || opw_nl_square(s, x, s->kind == OPW_NL_EIGH ? "a" : "x") < 0) goto done;
    nd = PyArray_NDIM(x);
    nb = nd - 2;
    n = PyArray_DIMS(x)[nd - 1];
    rs = PyArray_STRIDES(x)[nd - 2];
    cs = PyArray_STRIDES(x)[nd - 1];
    count = 1;
    for (i = 0; i < nd; i++) dims[i] = PyArray_DIMS(x)[i];
    for (i = 0; i < nb; i++) {
        st[i] = PyArray_STRIDES(x)[i];
        idx[i] = 0;
        count *= dims[i];
    }
    /* the outputs' ranks: the matrix (inverse), the batch (determinants), the batch and a
     * vector (eigenvalues: dims[nb] is n) */
    if (opw_nl_output(z0, x_in, NULL,
                      s->kind == OPW_NL_INV ? nd : (s->kind == OPW_NL_EIGH ? nb + 1 : nb), dims,
                      typenum) < 0)
        goto done;
    if (z1) {
        if (opw_nl_output(z1, x_in, NULL, s->kind == OPW_NL_EIGH ? nd : nb, dims, typenum) < 0)
            goto done;
        pz1 = PyArray_BYTES(*z1);
    }
    if (count == 0) {
        status = 0;
        goto done;
    }
    if (n > INT_MAX) {
        opw_nl_order_too_large(s, n);
        goto done;
    }
    w.n = (int)n;
    w.item = PyArray_ITEMSIZE(*z0);
    if (n > 0 && opw_nl_alloc(&w) < 0) goto done;
    /* bytes from one matrix's results to the next one's */
    step0 = (s->kind == OPW_NL_INV ? n * n : (s->kind == OPW_NL_EIGH ? n : 1)) * w.item;
    step1 = (s->kind == OPW_NL_EIGH ? n * n : 1) * w.item;
    px = PyArray_BYTES(x);
    pz0 = PyArray_BYTES(*z0);
    for (c = 0; c < count; c++) {
        int res;
        opw_nl_load(w.m, n, px, rs, cs, n, n, typenum);
        if (n > 0) {
            res = opw_nl_matrix(&w, pz0, pz1);
        } else {
            res = 0;
            if (s->kind == OPW_NL_DET || s->kind == OPW_NL_SLOGDET) opw_nl_put(pz0, typenum, 1.0);
            if (s->kind == OPW_NL_SLOGDET) opw_nl_put(pz1, typenum, 0.0);
        }
        if (res < 0) goto done;
        if (res > 0) {
            opw_nl_singular(s, x, nb, idx);
            goto done;
        }
        pz0 += step0;
        if (pz1) pz1 += step1;
        opw_nl_next(nb, dims, idx, st, &px, NULL, NULL);
    }
    status = 0;
done:
    opw_nl_free(&w);
    Py_XDECREF(x);
    return status;
}

/* The results of one matrix of a batch (already in the work arrays of ``work``) into
 * ``z0``, ``z1``, ``z2`` (NULL where the node has no such output). 0 or -1 with an exception
 * set. */
typedef int (*opw_nl_matrix_fn)(void* work, char* z0, char* z1, char* z2);

/* Every matrix of the batch ``x``, in C order: copied as doubles into the Fortran-ordered
 * ``a`` (leading dimension m), then ``matrix(work, ...)`` with the places of its results;
 * ``pz[i]`` (NULL for no output) moves by ``steps[i]`` items of ``item`` bytes from one
 * matrix to the next. 0 or -1 with an exception set. */
static int opw_nl_each(opw_nl_batch* x, int typenum, double* a, opw_nl_matrix_fn matrix,
                       void* work, char** pz, const npy_intp* steps, npy_intp item) {
    char* px = PyArray_BYTES(x->x);
    npy_intp c;
    int i;
    for (c = 0; c < x->count; c++) {
        opw_nl_load(a, x->m, px, x->rs, x->cs, x->m, x->n, typenum);
        if (matrix(work, pz[0], pz[1], pz[2]) < 0) return -1;
        for (i = 0; i < 3; i++)
            if (pz[i]) pz[i] += steps[i] * item;
        opw_nl_next(x->nb, x->dims, x->idx, x->st, &px, NULL, NULL);
    }
    return 0;
}

#section node

{
    static const opw_nl_spec opw_spec = {%(who)s, %(kind)s, %(lower)s};
    if (opw_nl_run(&opw_spec, %(typenum)s, %(x)s, &%(z0)s, %(z1)s) < 0) %(fail)s
}

#section matrix_node

{
    static const opw_nl_spec opw_spec = {%(who)s, %(kind)s, 0};
    if (%(run)s(&opw_spec, %(typenum)s, %(x)s, &%(z0)s, %(z1)s, %(z2)s) < 0) %(fail)s
}
