#section support

/* Lstsq of opweave.tensor.nlinalg through the LAPACK SciPy ships (dgelsd, looked up in
 * scipy.linalg.cython_lapack on first use). Needs the support code of nlinalg.c
 * (opw_nl_load, opw_nl_store, opw_nl_output, opw_nl_linalg_error, opw_nl_bad_argument...).
 *
 * As numpy.linalg.lstsq does, a and b are computed in double (float32 values widened, the
 * results rounded back): a is copied into a Fortran-ordered work array, b into max(m, n)
 * rows (one zero column when b has none), and both go to dgelsd with the workspace its
 * query asks for and rcond (NumPy's default: float64's machine precision times max(m, n)).
 * The residuals are the sums of the squares of the rows beyond n of each column, in order,
 * kept only for a tall a of full rank; info other than 0 raises
 * numpy.linalg.LinAlgError("SVD did not converge in Linear Least Squares"), b with another
 * number of rows LinAlgError("Incompatible dimensions"). */

/* LAPACK's dgelsd (32-bit integers: SciPy's LAPACK is LP64). */
typedef void (*opw_ls_gelsd_t)(int* m, int* n, int* nrhs, double* a, int* lda, double* b,
                               int* ldb, double* s, double* rcond, int* rank, double* work,
                               int* lwork, int* iwork, int* info);

/* The node: x, the residuals, the rank and the singular values of a @ x = b. 0 or -1 with
 * an exception set. */
static int opw_ls_run(const opw_nl_spec* sp, int typenum, int real_typenum, PyArrayObject* a_in,
                      PyArrayObject* b_in, PyArrayObject* rcond_in, PyArrayObject** zx,
                      PyArrayObject** zr, PyArrayObject** zrank, PyArrayObject** zs) {
    static void* found = NULL;
    opw_ls_gelsd_t gelsd;
    PyArrayObject *a = NULL, *b = NULL;
    double *wa = NULL, *wb = NULL, *s = NULL, *work = NULL, cond, wq = 0.0;
    int *iwork = NULL, m, n, k, nrhs, cols, ldb, rank = 0, info = 0, query = -1, iwq = 0;
    int vector, status = -1, i, j;
    npy_intp dims[2], rkeep;
    a = opw_nl_cast(a_in, typenum);
    b = a ? opw_nl_cast(b_in, typenum) : NULL;
    if (!a || !b) goto done;
    vector = PyArray_NDIM(b) == 1;
    if (PyArray_DIMS(b)[0] != PyArray_DIMS(a)[0]) {
        opw_nl_linalg_error("Incompatible dimensions");
        goto done;
    }
    if (PyArray_DIMS(a)[0] > INT_MAX / 2 || PyArray_DIMS(a)[1] > INT_MAX / 2 ||
        (!vector && PyArray_DIMS(b)[1] > INT_MAX / 2)) {
        PyErr_Format(PyExc_ValueError, "%s: the matrices are too large for LAPACK's 32-bit "
                     "integers", sp->who);
        goto done;
    }
    m = (int)PyArray_DIMS(a)[0];
    n = (int)PyArray_DIMS(a)[1];
    k = m < n ? m : n;
    nrhs = vector ? 1 : (int)PyArray_DIMS(b)[1];
    cols = nrhs > 1 ? nrhs : 1;
    ldb = m > n ? m : n;
    if (ldb < 1) ldb = 1;
    if (rcond_in) {
        PyArrayObject* r = opw_nl_cast(rcond_in, NPY_FLOAT64);
        if (!r) goto done;
        cond = *(double*)PyArray_DATA(r);
        Py_DECREF(r);
    } else {
        cond = 2.220446049250313e-16 * (double)(m > n ? m : n); /* float64's eps */
    }
    wa = (double*)PyMem_Malloc((size_t)((npy_intp)m * n + 1) * sizeof(double));
    wb = (double*)PyMem_Calloc((size_t)((npy_intp)ldb * cols), sizeof(double));
    s = opw_nl_doubles(k);
    if (!wa || !wb || !s) {
        PyErr_NoMemory();
        goto done;
    }
    opw_nl_load(wa, m, PyArray_BYTES(a), PyArray_STRIDES(a)[0], PyArray_STRIDES(a)[1], m, n,
                typenum);
    opw_nl_load(wb, ldb, PyArray_BYTES(b), PyArray_STRIDES(b)[0],
                vector ? 0 : PyArray_STRIDES(b)[1], m, nrhs, typenum);
    if (k > 0) {
        int lda = m, lwork;
        if (found == NULL) found = opw_lapack_lookup("dgelsd");
        if (found == NULL) goto done;
        gelsd = (opw_ls_gelsd_t)found;
        gelsd(&m, &n, &cols, wa, &lda, wb, &ldb, s, &cond, &rank, &wq, &query, &iwq, &info);
        if (info != 0) {
            opw_nl_bad_argument(sp, "gelsd", info);
            goto done;
        }
        lwork = (int)wq;
        work = opw_nl_doubles(lwork);
        iwork = opw_nl_ints(iwq);
        if (!work || !iwork) {
            PyErr_NoMemory();
            goto done;
        }
        gelsd(&m, &n, &cols, wa, &lda, wb, &ldb, s, &cond, &rank, work, &lwork, iwork, &info);
        if (info != 0) {
            opw_nl_linalg_error("SVD did not converge in Linear Least Squares");
            goto done;
        }
    }
    /* the outputs */
    dims[0] = n;
    dims[1] = vector ? 0 : nrhs;
    if (opw_nl_output(zx, a_in, b_in, vector ? 1 : 2, dims, typenum) < 0) goto done;
    /* for m == 0, wb holds the zeros it was allocated with */
    opw_nl_store(PyArray_BYTES(*zx), typenum, PyArray_ITEMSIZE(*zx), wb, ldb, n, nrhs);
    rkeep = (rank == n && m > n) ? (vector ? 1 : nrhs) : 0;
    dims[0] = rkeep;
    if (opw_nl_output(zr, a_in, b_in, 1, dims, real_typenum) < 0) goto done;
    for (j = 0; j < rkeep; j++) {
        double acc = 0.0;
        for (i = n; i < m; i++) {
            double v = wb[(npy_intp)j * ldb + i];
            acc += v * v;
        }
        opw_nl_put(PyArray_BYTES(*zr) + j * PyArray_ITEMSIZE(*zr), real_typenum, acc);
    }
    if (opw_nl_output(zrank, a_in, b_in, 0, dims, NPY_INT32) < 0) goto done;
    *(npy_int32*)PyArray_DATA(*zrank) = (npy_int32)rank;
    dims[0] = k;
    if (opw_nl_output(zs, a_in, b_in, 1, dims, real_typenum) < 0) goto done;
    opw_nl_store(PyArray_BYTES(*zs), real_typenum, PyArray_ITEMSIZE(*zs), s, 1, 1, k);
    status = 0;
done:
    PyMem_Free(wa);
    PyMem_Free(wb);
    PyMem_Free(s);
    PyMem_Free(work);
    PyMem_Free(iwork);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return status;
}

#section node

{
    static const opw_nl_spec opw_spec = {%(who)s, 0, 0};
    if (opw_ls_run(&opw_spec, %(typenum)s, %(real_typenum)s, %(a)s, %(b)s, %(rcond)s, &%(zx)s,
                   &%(zr)s, &%(zrank)s, &%(zs)s) < 0)
        %(fail)s
}
