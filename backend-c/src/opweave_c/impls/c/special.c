#section support

/* ``outer``, ``n`` and ``inner``: ``a``'s shape seen as (before, axis, after). */
static void opw_sm_split(PyArrayObject* a, int axis, npy_intp* outer, npy_intp* n,
                         npy_intp* inner) {
    int d;
    *outer = 1;
    *n = 1;
    *inner = 1;
    if (axis < 0) {
        *n = PyArray_SIZE(a);
        return;
    }
    for (d = 0; d < axis; d++) *outer *= PyArray_DIMS(a)[d];
    *n = PyArray_DIMS(a)[axis];
    for (d = axis + 1; d < PyArray_NDIM(a); d++) *inner *= PyArray_DIMS(a)[d];
}

/* ``a`` broadcast to ``dims`` (its length-1 axes stretched), as a C-contiguous array of
 * ``typenum`` (``a`` itself when it already is one). New reference, or NULL. */
static PyArrayObject* opw_sm_operand(PyArrayObject* a, int nd, const npy_intp* dims,
                                     int typenum) {
    npy_intp strides[NPY_MAXDIMS];
    PyArrayObject *src = a, *res;
    int d, stretched = 0;
    for (d = 0; d < nd; d++) {
        strides[d] = PyArray_STRIDES(a)[d];
        if (PyArray_DIMS(a)[d] != dims[d]) {
            strides[d] = 0;
            stretched = 1;
        }
    }
    if (stretched) {
        src = opw_make_view(a, nd, (npy_intp*)dims, strides, PyArray_BYTES(a));
        if (!src) return NULL;
    }
    res = (PyArrayObject*)PyArray_FromAny((PyObject*)src, PyArray_DescrFromType(typenum), 0,
                                          0, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, NULL);
    if (stretched) Py_DECREF(src);
    return res;
}

#section kernels

/* opweave softmax (%(dtype)s): NumPy's pairwise sum of ``n`` contiguous values. */
OPW_HOT static %(t)s opw_sm_psum_%(dtype)s(const %(t)s* a, npy_intp n) {
    npy_intp i;
    if (n < 8) {
        %(t)s res = 0;
        for (i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        %(t)s r[8], res;
        int k;
        for (k = 0; k < 8; k++) r[k] = a[k];
        for (i = 8; i < n - (n %% 8); i += 8)
            for (k = 0; k < 8; k++) r[k] += a[i + k];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    } else {
        npy_intp n2 = n / 2;
        n2 -= n2 %% 8;
        return opw_sm_psum_%(dtype)s(a, n2) + opw_sm_psum_%(dtype)s(a + n2, n - n2);
    }
}

/* The maximum of ``n`` > 0 contiguous values, 0 when it is not finite (NaN is not looked
 * for: it makes the whole row NaN through the sum, whatever the maximum). */
OPW_HOT static %(t)s opw_sm_max_%(dtype)s(const %(t)s* x, npy_intp n) {
    %(t)s r[8], m;
    npy_intp i;
    int k;
    if (n < 8) {
        m = x[0];
        for (i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
    } else {
        for (k = 0; k < 8; k++) r[k] = x[k];
        for (i = 8; i + 8 <= n; i += 8)
            for (k = 0; k < 8; k++) r[k] = x[i + k] > r[k] ? x[i + k] : r[k];
        for (; i < n; i++) r[0] = x[i] > r[0] ? x[i] : r[0];
        m = r[0];
        for (k = 1; k < 8; k++) m = r[k] > m ? r[k] : m;
    }
    return npy_isfinite(m) ? m : (%(t)s)0;
}

/* ``m[j]``: the maximum of column ``j`` of the ``n`` x ``inner`` block ``x``, 0 when it is
 * not finite (NaN included). */
OPW_HOT static void opw_sm_colmax_%(dtype)s(const %(t)s* restrict x, npy_intp n, npy_intp inner,
                                       %(t)s* restrict m) {
    npy_intp i, j;
    for (j = 0; j < inner; j++) m[j] = x[j];
    for (i = 1; i < n; i++) {
        const %(t)s* row = x + i * inner;
        for (j = 0; j < inner; j++) m[j] = row[j] > m[j] || row[j] != row[j] ? row[j] : m[j];
    }
    for (j = 0; j < inner; j++) m[j] = npy_isfinite(m[j]) ? m[j] : (%(t)s)0;
}

/* ``s[j]``: the sum of column ``j`` of the ``n`` x ``inner`` block ``e``, row after row. */
OPW_HOT static void opw_sm_colsum_%(dtype)s(const %(t)s* restrict e, npy_intp n, npy_intp inner,
                                       %(t)s* restrict s) {
    npy_intp i, j;
    for (j = 0; j < inner; j++) s[j] = e[j];
    for (i = 1; i < n; i++) {
        const %(t)s* row = e + i * inner;
        for (j = 0; j < inner; j++) s[j] += row[j];
    }
}

/* ``z = exp(x - m)`` over ``n`` contiguous values. */
OPW_HOT static void opw_sm_exp_%(dtype)s(const %(t)s* restrict x, %(t)s* restrict z, npy_intp n,
                                    %(t)s m) {
    npy_intp i;
    for (i = 0; i < n; i++) z[i] = exp%(f)s(x[i] - m);
}

/* Softmax of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_softmax_rows_%(dtype)s(const %(t)s* restrict x, %(t)s* restrict z,
                                             npy_intp outer, npy_intp n) {
    npy_intp o, i;
    for (o = 0; o < outer; o++, x += n, z += n) {
        %(t)s s;
        opw_sm_exp_%(dtype)s(x, z, n, opw_sm_max_%(dtype)s(x, n));
        s = opw_sm_psum_%(dtype)s(z, n);
        for (i = 0; i < n; i++) z[i] = z[i] / s;
    }
}

/* Log-softmax of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_logsoftmax_rows_%(dtype)s(const %(t)s* restrict x, %(t)s* restrict z,
                                                npy_intp outer, npy_intp n) {
    npy_intp o, i;
    for (o = 0; o < outer; o++, x += n, z += n) {
        %(t)s m = opw_sm_max_%(dtype)s(x, n), lse;
        opw_sm_exp_%(dtype)s(x, z, n, m);
        lse = log%(f)s(opw_sm_psum_%(dtype)s(z, n));
        for (i = 0; i < n; i++) z[i] = (x[i] - m) - lse;
    }
}

/* Softmax gradient of ``outer`` contiguous rows of ``n`` > 0 values. */
OPW_HOT static void opw_sm_grad_rows_%(dtype)s(const %(t)s* restrict dy, const %(t)s* restrict sm,
                                          %(t)s* restrict z, npy_intp outer, npy_intp n) {
    npy_intp o, i;
    for (o = 0; o < outer; o++, dy += n, sm += n, z += n) {
        %(t)s s;
        for (i = 0; i < n; i++) z[i] = dy[i] * sm[i];
        s = opw_sm_psum_%(dtype)s(z, n);
        for (i = 0; i < n; i++) z[i] = (dy[i] - s) * sm[i];
    }
}

/* ``kind`` 0 softmax, 1 log-softmax, 2 gradient (``y`` is ``sm``) over ``outer`` blocks of
 * ``n`` > 0 rows of ``inner`` > 1 columns, normalized down the columns. 0, or -1 with
 * MemoryError set. */
OPW_HOT static int opw_sm_cols_%(dtype)s(int kind, const %(t)s* restrict x, const %(t)s* restrict y,
                                    %(t)s* restrict z, npy_intp outer, npy_intp n,
                                    npy_intp inner) {
    npy_intp o, i, j, block = n * inner;
    %(t)s* m = (%(t)s*)PyMem_Malloc(2 * inner * sizeof(%(t)s));
    %(t)s* s = m + inner;
    if (!m) {
        PyErr_NoMemory();
        return -1;
    }
    for (o = 0; o < outer; o++, x += block, z += block) {
        if (kind == 2) {
            const %(t)s* yb = y + o * block;
            for (i = 0; i < block; i++) z[i] = x[i] * yb[i];
            opw_sm_colsum_%(dtype)s(z, n, inner, s);
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++)
                    z[i * inner + j] = (x[i * inner + j] - s[j]) * yb[i * inner + j];
            continue;
        }
        opw_sm_colmax_%(dtype)s(x, n, inner, m);
        for (i = 0; i < n; i++)
            for (j = 0; j < inner; j++) z[i * inner + j] = exp%(f)s(x[i * inner + j] - m[j]);
        opw_sm_colsum_%(dtype)s(z, n, inner, s);
        if (kind == 0) {
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++) z[i * inner + j] = z[i * inner + j] / s[j];
        } else {
            for (j = 0; j < inner; j++) s[j] = log%(f)s(s[j]);
            for (i = 0; i < n; i++)
                for (j = 0; j < inner; j++)
                    z[i * inner + j] = (x[i * inner + j] - m[j]) - s[j];
        }
    }
    PyMem_Free(m);
    return 0;
}

#section softmax_like

{
    PyArrayObject* opw_x;
    npy_intp opw_outer, opw_n, opw_inner;
    int opw_bad = 0;
    if (opw_overlap(%(z)s, %(x)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, PyArray_NDIM(%(x)s), PyArray_DIMS(%(x)s), PyArray_TYPE(%(x)s)) < 0)
        %(fail)s
    if (PyArray_SIZE(%(x)s) > 0) {
        opw_x = (PyArrayObject*)PyArray_GETCONTIGUOUS(%(x)s);
        if (!opw_x) %(fail)s
        opw_sm_split(opw_x, %(axis)s, &opw_outer, &opw_n, &opw_inner);
        if (opw_inner == 1)
            opw_sm_%(rows)s_rows_%(dt)s((const %(t)s*)PyArray_DATA(opw_x),
                                    (%(t)s*)PyArray_DATA(%(z)s), opw_outer, opw_n);
        else
            opw_bad = opw_sm_cols_%(dt)s(%(kind)s, (const %(t)s*)PyArray_DATA(opw_x), NULL,
                                    (%(t)s*)PyArray_DATA(%(z)s), opw_outer, opw_n, opw_inner);
        Py_DECREF(opw_x);
        if (opw_bad < 0) %(fail)s
    }
}

#section grad

{
    PyArrayObject *opw_dy = NULL, *opw_sm = NULL, *opw_w = NULL;
    npy_intp opw_dims[%(ndims)s], opw_outer, opw_n, opw_inner;
    int opw_d, opw_bad = 0;
    for (opw_d = 0; opw_d < %(nd)s; opw_d++) {
        npy_intp opw_a = PyArray_DIMS(%(dy)s)[opw_d], opw_b = PyArray_DIMS(%(sm)s)[opw_d];
        opw_dims[opw_d] = opw_a == 1 ? opw_b : opw_a;
        opw_bad |= opw_a != opw_b && opw_a != 1 && opw_b != 1;
    }
    if (opw_bad) {
        PyObject* opw_sa = opw_shape_str(PyArray_NDIM(%(dy)s), PyArray_DIMS(%(dy)s), ",");
        PyObject* opw_sb = opw_shape_str(PyArray_NDIM(%(sm)s), PyArray_DIMS(%(sm)s), ",");
        if (opw_sa && opw_sb)
            PyErr_Format(PyExc_ValueError,
                         "operands could not be broadcast together with shapes %%U %%U ",
                         opw_sa, opw_sb);
        Py_XDECREF(opw_sa);
        Py_XDECREF(opw_sb);
        %(fail)s
    }
    if (opw_overlap(%(z)s, %(dy)s) || opw_overlap(%(z)s, %(sm)s)) Py_CLEAR(%(z)s);
    if (opw_prep_output(&%(z)s, %(nd)s, opw_dims, %(out)s) < 0) %(fail)s
    if (PyArray_SIZE(%(z)s) > 0) {
        opw_dy = opw_sm_operand(%(dy)s, %(nd)s, opw_dims, %(work)s);
        if (!opw_dy) goto %(label)s;
        opw_sm = opw_sm_operand(%(sm)s, %(nd)s, opw_dims, %(work)s);
        if (!opw_sm) goto %(label)s;
        if (%(work)s == %(out)s) {
            opw_w = %(z)s;
            Py_INCREF(opw_w);
        } else {
            opw_w = (PyArrayObject*)PyArray_EMPTY(%(nd)s, opw_dims, %(work)s, 0);
            if (!opw_w) goto %(label)s;
        }
        opw_sm_split(opw_w, %(axis)s, &opw_outer, &opw_n, &opw_inner);
        if (opw_inner == 1)
            opw_sm_grad_rows_%(dt)s((const %(t)s*)PyArray_DATA(opw_dy),
                                 (const %(t)s*)PyArray_DATA(opw_sm), (%(t)s*)PyArray_DATA(opw_w),
                                 opw_outer, opw_n);
        else if (opw_sm_cols_%(dt)s(2, (const %(t)s*)PyArray_DATA(opw_dy),
                                 (const %(t)s*)PyArray_DATA(opw_sm), (%(t)s*)PyArray_DATA(opw_w),
                                 opw_outer, opw_n, opw_inner) < 0)
            goto %(label)s;
        if (opw_w != %(z)s && PyArray_CopyInto(%(z)s, opw_w) < 0) goto %(label)s;
        Py_DECREF(opw_dy);
        Py_DECREF(opw_sm);
        Py_DECREF(opw_w);
    }
    if (0) {
    %(label)s:
        Py_XDECREF(opw_dy);
        Py_XDECREF(opw_sm);
        Py_XDECREF(opw_w);
        %(fail)s
    }
}

