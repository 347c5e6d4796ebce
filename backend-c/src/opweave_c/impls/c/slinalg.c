#section support

/* Cholesky, Solve, SolveTriangular and CholeskySolve (opweave.tensor.slinalg) through the
 * LAPACK SciPy ships: scipy.linalg.cython_lapack exports its routines as capsules of
 * function pointers, looked up on first use (no LAPACK to link against).
 *
 * Every matrix is built as the Python backend builds it (the triangle read, zeros elsewhere;
 * a symmetric matrix as its triangle plus the mirrored strict triangle; ones on a unit
 * diagonal), copied into a Fortran-ordered work array, and handed to the routine NumPy's
 * function calls there: potrf('L') (numpy.linalg.cholesky) or gesv (numpy.linalg.solve). */

enum {
    OPW_SL_CHOLESKY,
    OPW_SL_GEN,
    OPW_SL_SYM,
    OPW_SL_POS,
    OPW_SL_TRIDIAGONAL,
    OPW_SL_TRIANGULAR,
    OPW_SL_CHO_SOLVE
};

/* The matrices a kernel builds from the values read (opw_sl_build_<dtype>). */
enum { OPW_SL_FULL, OPW_SL_TRIANGLE, OPW_SL_MIRROR, OPW_SL_BAND };

/* LAPACK's potrf and gesv (32-bit integers: SciPy's LAPACK is LP64). */
typedef void (*opw_sl_potrf_t)(char* uplo, int* n, void* a, int* lda, int* info);
typedef void (*opw_sl_gesv_t)(int* n, int* nrhs, void* a, int* lda, int* ipiv, void* b,
                              int* ldb, int* info);

/* What a node asks for, fixed when its code is generated. */
typedef struct {
    const char* who;     /* the Op as text, for messages */
    int kind;            /* OPW_SL_CHOLESKY ... */
    int lower;           /* the Op's lower */
    int unit;            /* SolveTriangular's unit_diagonal */
    int b_ndim;          /* 1 or 2; 0 for Cholesky (no b) */
    int raise_on_error;  /* Cholesky(on_error="raise") */
    const int* a_one;    /* per batch axis: a's static length is 1 */
    const int* b_one;    /* the same for b */
    const char* node;    /* the node as JSON, for opweave_c.impls.slinalg.raise_as_python */
} opw_sl_spec;

/* One call's work: the order of a, the columns of b, the strides of a matrix of a and of
 * b (bytes), the work arrays and the routines. */
typedef struct {
    const opw_sl_spec* spec;
    npy_intp n, k;
    npy_intp a_rs, a_cs, b_rs, b_cs;
    void* m;    /* n * n: the matrix solved with (overwritten by its factors) */
    void* f;    /* n * n: the Cholesky factor of Solve(assume_a="pos") */
    void* rhs;  /* n * k: the right-hand side, then the solution */
    int* ipiv;
    opw_sl_potrf_t potrf;
    opw_sl_gesv_t gesv;
} opw_sl_work;

/* A kernel: one matrix of the batch into ``z``. 0 when solved, 1 when LAPACK reports a
 * failure (not positive definite, exactly singular), -1 with an exception set. */
typedef int (*opw_sl_matrix_t)(opw_sl_work* w, const char* a, const char* b, char* z);

/* Set ``w``'s routines for ``typenum`` (float32: s..., float64: d...). 0 or -1. */
static int opw_sl_routines(int typenum, opw_sl_work* w) {
    static void* found[4] = {NULL, NULL, NULL, NULL};
    static const char* const names[4] = {"spotrf", "sgesv", "dpotrf", "dgesv"};
    int base = typenum == NPY_FLOAT64 ? 2 : 0, i;
    for (i = base; i < base + 2; i++) {
        if (found[i] == NULL) {
            void* fn = opw_lapack_lookup(names[i]);
            if (fn == NULL) return -1;
            found[i] = fn;
        }
    }
    w->potrf = (opw_sl_potrf_t)found[base];
    w->gesv = (opw_sl_gesv_t)found[base + 1];
    return 0;
}

/* ``x`` in the output's dtype (a new reference: ``x`` itself when it has it), as the
 * Python backend's ``numpy.asarray(x, dtype)``. */
static PyArrayObject* opw_sl_cast(PyArrayObject* x, int typenum) {
    return (PyArrayObject*)PyArray_FromAny((PyObject*)x, PyArray_DescrFromType(typenum), 0, 0,
                                           NPY_ARRAY_ALIGNED | NPY_ARRAY_FORCECAST, NULL);
}

/* ValueError unless the last two axes of ``x`` have equal lengths. 0 or -1. */
static int opw_sl_square(const opw_sl_spec* s, PyArrayObject* x, const char* name) {
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

/* ValueError when a batch axis of length 1 would broadcast although its static length is
 * not 1 (the Python backend's ``batch_check``). 0 or -1. */
static int opw_sl_batch_check(const opw_sl_spec* s, PyArrayObject* a, PyArrayObject* b, int nb) {
    int axis;
    for (axis = 0; axis < nb; axis++) {
        npy_intp la = PyArray_DIMS(a)[axis], lb = PyArray_DIMS(b)[axis];
        PyObject *sa, *sb;
        if (la == lb) continue;
        if (!((la == 1 && !s->a_one[axis]) || (lb == 1 && !s->b_one[axis]))) continue;
        sa = opw_shape_str(nb, PyArray_DIMS(a), ", ");
        sb = opw_shape_str(nb, PyArray_DIMS(b), ", ");
        if (sa && sb)
            PyErr_Format(PyExc_ValueError,
                         "%s: the batch shapes [%U, %U] do not match on axis %d; a length-1 "
                         "batch axis broadcasts only when its static shape says so",
                         s->who, sa, sb, axis);
        Py_XDECREF(sa);
        Py_XDECREF(sb);
        return -1;
    }
    return 0;
}

/* ValueError unless b has as many rows as a. 0 or -1. */
static int opw_sl_rows(const opw_sl_spec* s, PyArrayObject* a, PyArrayObject* b) {
    int na = PyArray_NDIM(a), nb = PyArray_NDIM(b);
    npy_intp n = PyArray_DIMS(a)[na - 1];
    PyObject *sa, *sb;
    if (PyArray_DIMS(b)[nb - s->b_ndim] == n) return 0;
    sa = opw_shape_str(na, PyArray_DIMS(a), ", ");
    sb = opw_shape_str(nb, PyArray_DIMS(b), ", ");
    if (sa && sb)
        PyErr_Format(PyExc_ValueError, "%s: a has shape %U but b has %U: b must have %zd rows",
                     s->who, sa, sb, (Py_ssize_t)n);
    Py_XDECREF(sa);
    Py_XDECREF(sb);
    return -1;
}

/* Batch shapes that do not broadcast: the Python backend's kernel raises NumPy's error,
 * whose text depends on the step that meets the shapes first; it is raised by running
 * that kernel on the node's inputs. Always -1. */
static int opw_sl_raise_as_python(const opw_sl_spec* s, PyArrayObject* a, PyArrayObject* b) {
    PyObject* mod = PyImport_ImportModule("opweave_c.impls.slinalg");
    PyObject* r;
    if (!mod) return -1;
    r = PyObject_CallMethod(mod, "raise_as_python", "sOO", s->node, (PyObject*)a, (PyObject*)b);
    Py_DECREF(mod);
    if (r) {
        Py_DECREF(r);
        PyErr_Format(PyExc_ValueError, "%s: the batch shapes of a and b do not broadcast",
                     s->who);
    }
    return -1;
}

/* numpy.linalg.LinAlgError("<who>: the matrix[ at batch index <idx>] is not positive
 * definite"), as Cholesky(on_error="raise") raises it in the Python backend. */
static void opw_sl_not_positive_definite(const opw_sl_spec* s, int nb, const npy_intp* idx) {
    PyObject *linalg = PyImport_ImportModule("numpy.linalg"), *exc, *where = NULL;
    if (!linalg) return;
    exc = PyObject_GetAttrString(linalg, "LinAlgError");
    Py_DECREF(linalg);
    if (!exc) return;
    if (nb == 0) {
        PyErr_Format(exc, "%s: the matrix is not positive definite", s->who);
    } else {
        where = opw_shape_str(nb, idx, ", ");
        if (where) {
            PyErr_Format(exc, "%s: the matrix at batch index %U is not positive definite",
                         s->who, where);
            Py_DECREF(where);
        }
    }
    Py_DECREF(exc);
}

/* ``count`` NaN of ``typenum`` from ``z`` on. */
static void opw_sl_fill_nan(char* z, npy_intp count, int typenum) {
    npy_intp i;
    if (typenum == NPY_FLOAT64) {
        for (i = 0; i < count; i++) ((double*)z)[i] = NPY_NAN;
    } else {
        for (i = 0; i < count; i++) ((float*)z)[i] = NPY_NANF;
    }
}

/* The node: check the inputs as the Python backend does, make the C-contiguous output
 * ``*z`` (the previous one when it fits and shares no memory with the inputs), and run
 * ``matrix`` on every matrix of the broadcast batch. A matrix LAPACK fails on is NaN, or
 * raises LinAlgError for Cholesky(on_error="raise"). 0 or -1 with an exception set. */
static int opw_sl_run(const opw_sl_spec* s, opw_sl_matrix_t matrix, int typenum,
                      PyArrayObject* a_in, PyArrayObject* b_in, PyArrayObject** z) {
    PyArrayObject *a = NULL, *b = NULL;
    npy_intp dims[NPY_MAXDIMS], idx[NPY_MAXDIMS], a_st[NPY_MAXDIMS], b_st[NPY_MAXDIMS];
    npy_intp n, k, count, c, per;
    int nd, nb, i, status = -1;
    char *pa, *pb, *pz;
    opw_sl_work w;
    memset(&w, 0, sizeof w);
    w.spec = s;
    a = opw_sl_cast(a_in, typenum);
    if (!a) goto done;
    if (b_in) {
        b = opw_sl_cast(b_in, typenum);
        if (!b) goto done;
    }
    if (opw_sl_square(s, a, b_in ? "a" : "x") < 0) goto done;
    nd = PyArray_NDIM(a);
    nb = nd - 2;
    n = PyArray_DIMS(a)[nd - 1];
    w.a_rs = PyArray_STRIDES(a)[nd - 2];
    w.a_cs = PyArray_STRIDES(a)[nd - 1];
    for (i = 0; i < nb; i++) {
        dims[i] = PyArray_DIMS(a)[i];
        a_st[i] = PyArray_STRIDES(a)[i];
        b_st[i] = 0;
    }
    k = n;
    if (b) {
        int bd = PyArray_NDIM(b);
        if (opw_sl_batch_check(s, a, b, nb) < 0 || opw_sl_rows(s, a, b) < 0) goto done;
        for (i = 0; i < nb; i++) {
            npy_intp la = PyArray_DIMS(a)[i], lb = PyArray_DIMS(b)[i];
            if (la != lb && la != 1 && lb != 1) {
                opw_sl_raise_as_python(s, a_in, b_in);
                goto done;
            }
            dims[i] = la == 1 ? lb : la;
            a_st[i] = la == 1 ? 0 : PyArray_STRIDES(a)[i];
            b_st[i] = lb == 1 ? 0 : PyArray_STRIDES(b)[i];
        }
        if (s->b_ndim == 2) {
            k = PyArray_DIMS(b)[bd - 1];
            w.b_rs = PyArray_STRIDES(b)[bd - 2];
            w.b_cs = PyArray_STRIDES(b)[bd - 1];
        } else {
            k = 1;
            w.b_rs = PyArray_STRIDES(b)[bd - 1];
            w.b_cs = 0;
        }
    }
    dims[nb] = n;
    dims[nb + 1] = k;
    nd = (b && s->b_ndim == 1) ? nb + 1 : nb + 2;
    if (*z && (opw_overlap(*z, a_in) || (b_in && opw_overlap(*z, b_in)))) {
        Py_DECREF(*z);
        *z = NULL;
    }
    if (opw_prep_output(z, nd, dims, typenum) < 0) goto done;
    count = 1;
    for (i = 0; i < nb; i++) {
        count *= dims[i];
        idx[i] = 0;
    }
    if (count == 0 || n == 0 || k == 0) {
        status = 0;
        goto done;
    }
    if (n > INT_MAX || k > INT_MAX) {
        PyErr_Format(PyExc_ValueError,
                     "%s: a matrix of order %zd with %zd right-hand sides is too large for "
                     "LAPACK's 32-bit integers",
                     s->who, (Py_ssize_t)n, (Py_ssize_t)k);
        goto done;
    }
    if (opw_sl_routines(typenum, &w) < 0) goto done;
    w.n = n;
    w.k = k;
    w.m = PyMem_Malloc((size_t)(n * n) * PyArray_ITEMSIZE(*z));
    w.f = PyMem_Malloc((size_t)(n * n) * PyArray_ITEMSIZE(*z));
    w.rhs = PyMem_Malloc((size_t)(n * k) * PyArray_ITEMSIZE(*z));
    w.ipiv = (int*)PyMem_Malloc((size_t)n * sizeof(int));
    if (!w.m || !w.f || !w.rhs || !w.ipiv) {
        PyErr_NoMemory();
        goto done;
    }
    per = n * k;
    pa = PyArray_BYTES(a);
    pb = b ? PyArray_BYTES(b) : NULL;
    pz = PyArray_BYTES(*z);
    for (c = 0; c < count; c++) {
        int r = matrix(&w, pa, pb, pz);
        if (r < 0) goto done;
        if (r > 0) {
            if (s->raise_on_error) {
                opw_sl_not_positive_definite(s, nb, idx);
                goto done;
            }
            opw_sl_fill_nan(pz, per, typenum);
        }
        pz += per * PyArray_ITEMSIZE(*z);
        /* the next batch index, in C order */
        for (i = nb - 1; i >= 0; i--) {
            pa += a_st[i];
            if (pb) pb += b_st[i];
            if (++idx[i] < dims[i]) break;
            pa -= a_st[i] * dims[i];
            if (pb) pb -= b_st[i] * dims[i];
            idx[i] = 0;
        }
    }
    status = 0;
done:
    PyMem_Free(w.m);
    PyMem_Free(w.f);
    PyMem_Free(w.rhs);
    PyMem_Free(w.ipiv);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return status;
}

#section kernels

/* Fill the Fortran-ordered n x n matrix ``dst`` from ``src`` (element (r, c) at
 * ``src + r * rs + c * cs``) as the Python backend builds it with NumPy: OPW_SL_FULL all of
 * it; OPW_SL_TRIANGLE ``tril``/``triu`` (ones on a unit diagonal); OPW_SL_MIRROR the
 * symmetric matrix of one triangle, the triangle plus the mirrored strict triangle (that
 * sum turns -0.0 into 0.0 as NumPy's does); OPW_SL_BAND the three central diagonals. */
static void opw_sl_build_%(dtype)s(%(t)s* dst, const char* src, npy_intp rs, npy_intp cs,
                                   npy_intp n, int shape, int lower, int unit) {
    npy_intp r, c;
    for (c = 0; c < n; c++) {
        for (r = 0; r < n; r++) {
            %(t)s v = *(const %(t)s*)(src + r * rs + c * cs), out;
            int kept = lower ? r >= c : r <= c;
            if (shape == OPW_SL_FULL) {
                out = v;
            } else if (shape == OPW_SL_TRIANGLE) {
                out = (unit && r == c) ? (%(t)s)1 : (kept ? v : (%(t)s)0);
            } else if (shape == OPW_SL_MIRROR) {
                %(t)s mirrored = *(const %(t)s*)(src + c * rs + r * cs);
                out = (kept ? v : (%(t)s)0) + ((!kept) ? mirrored : (%(t)s)0);
            } else {
                out = (r - c <= 1 && c - r <= 1) ? v : (%(t)s)0;
            }
            dst[c * n + r] = out;
        }
    }
}

/* LAPACK's info: 0 solved, 1 failed (info > 0), -1 with an exception (a bad argument). */
static int opw_sl_info_%(dtype)s(const opw_sl_work* w, const char* routine, int info) {
    if (info == 0) return 0;
    if (info > 0) return 1;
    PyErr_Format(PyExc_RuntimeError, "%%s: LAPACK's %%s rejected argument %%d", w->spec->who,
                 routine, -info);
    return -1;
}

/* ``w->rhs`` solved with the matrix built into ``w->m``: gesv (numpy.linalg.solve). */
static int opw_sl_gesv_%(dtype)s(opw_sl_work* w) {
    int n = (int)w->n, k = (int)w->k, info = 0;
    w->gesv(&n, &k, w->m, &n, w->ipiv, w->rhs, &n, &info);
    return opw_sl_info_%(dtype)s(w, "gesv", info);
}

/* One matrix of the batch (see opw_sl_matrix_t). */
static int opw_sl_matrix_%(dtype)s(opw_sl_work* w, const char* a, const char* b, char* z) {
    const opw_sl_spec* s = w->spec;
    const npy_intp n = w->n, k = w->k, item = (npy_intp)sizeof(%(t)s);
    %(t)s *m = (%(t)s*)w->m, *f = (%(t)s*)w->f, *rhs = (%(t)s*)w->rhs, *out = (%(t)s*)z;
    npy_intp r, c;
    int ni = (int)n, info = 0, st;
    char uplo = 'L';
    if (s->kind == OPW_SL_CHOLESKY) {
        /* numpy.linalg.cholesky of a (lower) or of a's transpose (upper): potrf('L'). */
        if (s->lower)
            opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_FULL, 1, 0);
        else
            opw_sl_build_%(dtype)s(m, a, w->a_cs, w->a_rs, n, OPW_SL_FULL, 1, 0);
        w->potrf(&uplo, &ni, m, &ni, &info);
        st = opw_sl_info_%(dtype)s(w, "potrf", info);
        if (st) return st;
        for (r = 0; r < n; r++)
            for (c = 0; c < n; c++) {
                if (s->lower)
                    out[r * n + c] = r >= c ? m[c * n + r] : (%(t)s)0;
                else
                    out[r * n + c] = c >= r ? m[r * n + c] : (%(t)s)0;
            }
        return 0;
    }
    for (c = 0; c < k; c++)
        for (r = 0; r < n; r++) rhs[c * n + r] = *(const %(t)s*)(b + r * w->b_rs + c * w->b_cs);
    switch (s->kind) {
    case OPW_SL_GEN:
        opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_FULL, 1, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    case OPW_SL_SYM:
        opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_MIRROR, s->lower, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    case OPW_SL_TRIDIAGONAL:
        opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_BAND, 1, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    case OPW_SL_TRIANGULAR:
        opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_TRIANGLE, s->lower, s->unit);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    case OPW_SL_POS:
        /* the lower factor L of the symmetric matrix (potrf('L')), then L y = b and
         * L^T x = y, each a gesv on the triangle with zeros elsewhere */
        opw_sl_build_%(dtype)s(f, a, w->a_rs, w->a_cs, n, OPW_SL_MIRROR, s->lower, 0);
        w->potrf(&uplo, &ni, f, &ni, &info);
        st = opw_sl_info_%(dtype)s(w, "potrf", info);
        if (st) return st;
        opw_sl_build_%(dtype)s(m, (const char*)f, item, n * item, n, OPW_SL_TRIANGLE, 1, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        if (st) return st;
        opw_sl_build_%(dtype)s(m, (const char*)f, n * item, item, n, OPW_SL_TRIANGLE, 0, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    case OPW_SL_CHO_SOLVE:
        /* lower: c y = b, then c^T x = y; upper: c^T y = b, then c x = y */
        if (s->lower)
            opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_TRIANGLE, 1, 0);
        else
            opw_sl_build_%(dtype)s(m, a, w->a_cs, w->a_rs, n, OPW_SL_TRIANGLE, 1, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        if (st) return st;
        if (s->lower)
            opw_sl_build_%(dtype)s(m, a, w->a_cs, w->a_rs, n, OPW_SL_TRIANGLE, 0, 0);
        else
            opw_sl_build_%(dtype)s(m, a, w->a_rs, w->a_cs, n, OPW_SL_TRIANGLE, 0, 0);
        st = opw_sl_gesv_%(dtype)s(w);
        break;
    default:
        PyErr_Format(PyExc_RuntimeError, "%%s: unknown solver %%d", s->who, s->kind);
        return -1;
    }
    if (st) return st;
    for (r = 0; r < n; r++)
        for (c = 0; c < k; c++) out[r * k + c] = rhs[c * n + r];
    return 0;
}

#section node

{
    static const int opw_a_one[] = {%(a_one)s};
    static const int opw_b_one[] = {%(b_one)s};
    static const opw_sl_spec opw_spec = {%(who)s, %(kind)s, %(lower)s, %(unit)s, %(b_ndim)s,
                                         %(raise_on_error)s, opw_a_one, opw_b_one, %(node)s};
    if (opw_sl_run(&opw_spec, opw_sl_matrix_%(dtype)s, %(typenum)s, %(a)s, %(b)s, &%(z)s) < 0)
        %(fail)s
}
