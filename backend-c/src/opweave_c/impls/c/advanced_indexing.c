#section support

/* opweave AdvancedSubtensor / AdvancedIncSubtensor: NumPy's advanced indexing for any mix
 * of slices, integers, integer arrays (broadcast together) and boolean masks (their
 * nonzero() coordinates), with the Python backend's checks in its order: integer indices
 * against their axes (entry by entry, each array in C order), mask shapes, slice steps,
 * then the broadcast of the index arrays. Only NumPy's public C API is used. */

#define OPW_ADV_SLICE 0
#define OPW_ADV_INT 1
#define OPW_ADV_ARRAY 2
#define OPW_ADV_MASK 3

/* One entry of the index, as the generated code fills it in. */
typedef struct {
    int kind;            /* OPW_ADV_* */
    PyArrayObject* arr;  /* borrowed: an array or mask, a 0-d integer, or NULL */
    npy_int64 value;     /* a constant integer (arr NULL) */
    int has_start, has_stop, has_step;
    npy_int64 start, stop, step;
} opw_adv_entry;

/* The indexing of one array: the result's shape and, once strides are known, where each
 * of its elements lies in the array. */
typedef struct {
    int xnd;
    npy_intp xdims[NPY_MAXDIMS];
    int kind[NPY_MAXDIMS];                  /* per axis of x: OPW_ADV_* (MASK as ARRAY) */
    npy_intp start[NPY_MAXDIMS];            /* slice start, or the integer (normalised) */
    npy_intp len[NPY_MAXDIMS], step[NPY_MAXDIMS];
    int nf;                                 /* index arrays (a mask gives one per axis) */
    int fdim[NPY_MAXDIMS];                  /* the axis of x each indexes */
    int fnd[NPY_MAXDIMS];
    npy_intp fshape[NPY_MAXDIMS][NPY_MAXDIMS];
    npy_intp* fidx[NPY_MAXDIMS];            /* owned: the indices, normalised, C order */
    int bnd;
    npy_intp bshape[NPY_MAXDIMS];
    npy_intp bsize;
    int nd;                                 /* the result */
    npy_intp dims[NPY_MAXDIMS];
    int rsrc[NPY_MAXDIMS];                  /* its axis: an axis of x, or -1 - (axis of B) */
    /* filled by opw_adv_locate */
    npy_intp xs[NPY_MAXDIMS];               /* byte stride in x per result axis */
    npy_intp fs[NPY_MAXDIMS];               /* stride in fo per result axis */
    npy_intp base;
    npy_intp* fo;                           /* owned: byte offsets of the positions of B */
} opw_adv_plan;

/* One row of work: ``n`` elements at ``f + k * fst + fo[k * fos]`` (fo may be NULL) and
 * ``p + k * pst``. */
typedef void (*opw_adv_kernel)(char* f, npy_intp fst, const npy_intp* fo, npy_intp fos,
                               char* p, npy_intp pst, npy_intp n, int isz);

static void opw_adv_free(opw_adv_plan* pl) {
    int k;
    if (!pl) return;
    for (k = 0; k < pl->nf; k++) PyMem_Free(pl->fidx[k]);
    PyMem_Free(pl->fo);
    PyMem_Free(pl);
}

/* ``f(" (input shape <x.shape>)")``-style IndexError: "<op>: <msg> (input shape <s>)". */
static void opw_adv_numpy_error(const char* op, PyObject* msg, int nd, const npy_intp* dims) {
    PyObject* s = opw_shape_str(nd, dims, ", ");
    if (s && msg) PyErr_Format(PyExc_IndexError, "%s: %U (input shape %U)", op, msg, s);
    Py_XDECREF(s);
}

/* The integer at ``p`` of an integer array ``a``: 0 (``*v`` holds it) or 1 when it is an
 * unsigned value above the int64 range (``*u`` holds it). */
static int opw_adv_read(PyArrayObject* a, const char* p, npy_int64* v, npy_uint64* u) {
    int isz = (int)PyArray_ITEMSIZE(a);
    if (PyArray_ISUNSIGNED(a) || PyArray_TYPE(a) == NPY_BOOL) {
        npy_uint64 w;
        switch (isz) {
            case 1: w = *(const npy_uint8*)p; break;
            case 2: { npy_uint16 t; memcpy(&t, p, 2); w = t; break; }
            case 4: { npy_uint32 t; memcpy(&t, p, 4); w = t; break; }
            default: memcpy(&w, p, 8); break;
        }
        *u = w;
        if (w > (npy_uint64)NPY_MAX_INT64) return 1;
        *v = (npy_int64)w;
        return 0;
    }
    switch (isz) {
        case 1: *v = *(const npy_int8*)p; break;
        case 2: { npy_int16 t; memcpy(&t, p, 2); *v = t; break; }
        case 4: { npy_int32 t; memcpy(&t, p, 4); *v = t; break; }
        default: memcpy(v, p, 8); break;
    }
    return 0;
}

/* Check one integer against an axis of length ``n``, as the Python backend does (unsigned
 * values only from above); normalise it into ``*out``. 0, or -1 with IndexError set. */
static int opw_adv_check(const char* op, PyArrayObject* a, const char* p, int axis,
                         npy_intp n, npy_intp* out) {
    npy_int64 v = 0;
    npy_uint64 u = 0;
    int big = opw_adv_read(a, p, &v, &u);
    int uns = PyArray_ISUNSIGNED(a);
    if (big || v >= (npy_int64)n || (!uns && v < -(npy_int64)n)) {
        PyObject* b = (big || uns) ? PyLong_FromUnsignedLongLong((unsigned long long)(big ? u : (npy_uint64)v))
                                   : PyLong_FromLongLong((long long)v);
        if (b) {
            opw_sub_axis_take_error(op, b, axis, n);
            Py_DECREF(b);
        }
        return -1;
    }
    *out = (npy_intp)(v < 0 ? v + n : v);
    return 0;
}

#define OPW_ADV_NORMALISE(T, NEG)                                                   \
    {                                                                               \
        const T* src = (const T*)PyArray_DATA(c);                                   \
        for (q = 0; q < m; q++) {                                                   \
            T v = src[q];                                                           \
            if ((NEG && (npy_int64)v < -(npy_int64)n) || (npy_uint64)(v < 0 ? 0 : v) >= (npy_uint64)n) \
                break;                                                              \
            out[q] = (npy_intp)v + (v < 0 ? n : 0);                                 \
        }                                                                           \
    }

/* The ``m`` integers of the C-contiguous, aligned integer array ``c``, checked against an
 * axis of length ``n`` (the first bad one named) and normalised into ``out``. 0 or -1. */
static int opw_adv_normalise(const char* op, PyArrayObject* c, npy_intp m, int axis,
                             npy_intp n, npy_intp* out) {
    npy_intp q = 0;
    int uns = PyArray_ISUNSIGNED(c);
    if (PyArray_ISALIGNED(c) && !PyArray_ISBYTESWAPPED(c)) {
        switch (PyArray_ITEMSIZE(c) * (uns ? -1 : 1)) {
            case 1: OPW_ADV_NORMALISE(npy_int8, 1) break;
            case 2: OPW_ADV_NORMALISE(npy_int16, 1) break;
            case 4: OPW_ADV_NORMALISE(npy_int32, 1) break;
            case 8: OPW_ADV_NORMALISE(npy_int64, 1) break;
            case -1: OPW_ADV_NORMALISE(npy_uint8, 0) break;
            case -2: OPW_ADV_NORMALISE(npy_uint16, 0) break;
            case -4: OPW_ADV_NORMALISE(npy_uint32, 0) break;
            case -8: OPW_ADV_NORMALISE(npy_uint64, 0) break;
            default: break;
        }
    }
    for (; q < m; q++) {  /* the first bad index (or every index of an unusual array) */
        if (opw_adv_check(op, c, PyArray_BYTES(c) + q * PyArray_ITEMSIZE(c), axis, n,
                          &out[q]) < 0)
            return -1;
    }
    return 0;
}

/* The plan of ``x[entries]`` (shape and checks only), or NULL with an exception set. */
static opw_adv_plan* opw_adv_plan_new(const char* op, PyArrayObject* x,
                                      const opw_adv_entry* e, int n) {
    opw_adv_plan* pl = (opw_adv_plan*)PyMem_Calloc(1, sizeof(opw_adv_plan));
    int i, d, k, dim, first = -1, last = -1, count = 0, front, nsub, before = 0, j;
    int fslot[NPY_MAXDIMS + 1];
    if (!pl) {
        PyErr_NoMemory();
        return NULL;
    }
    pl->xnd = PyArray_NDIM(x);
    for (d = 0; d < pl->xnd; d++) {
        pl->xdims[d] = PyArray_DIMS(x)[d];
        pl->kind[d] = OPW_ADV_SLICE;
        pl->start[d] = 0;
        pl->len[d] = pl->xdims[d];
        pl->step[d] = 1;
    }
    /* 1. integers and integer arrays against their axes, in order */
    dim = 0;
    for (i = 0; i < n; i++) {
        fslot[i] = pl->nf;
        if (e[i].kind == OPW_ADV_SLICE) {
            dim++;
            continue;
        }
        if (first < 0) first = i;
        last = i;
        count++;
        if (e[i].kind == OPW_ADV_INT) {
            pl->kind[dim] = OPW_ADV_INT;
            if (e[i].arr) {
                if (opw_adv_check(op, e[i].arr, PyArray_BYTES(e[i].arr), dim, pl->xdims[dim],
                                  &pl->start[dim]) < 0)
                    goto fail;
            } else {
                npy_int64 v = e[i].value, m = (npy_int64)pl->xdims[dim];
                if (v >= m || v < -m) {
                    PyObject* b = PyLong_FromLongLong((long long)v);
                    if (b) {
                        opw_sub_axis_take_error(op, b, dim, pl->xdims[dim]);
                        Py_DECREF(b);
                    }
                    goto fail;
                }
                pl->start[dim] = (npy_intp)(v < 0 ? v + m : v);
            }
            dim++;
        } else if (e[i].kind == OPW_ADV_ARRAY) {
            PyArrayObject* c = (PyArrayObject*)PyArray_GETCONTIGUOUS(e[i].arr);
            npy_intp m;
            npy_intp* buf;
            if (!c) goto fail;
            m = PyArray_SIZE(c);
            buf = (npy_intp*)PyMem_Malloc((size_t)(m > 0 ? m : 1) * sizeof(npy_intp));
            if (!buf) {
                Py_DECREF(c);
                PyErr_NoMemory();
                goto fail;
            }
            k = pl->nf++;
            pl->fidx[k] = buf;
            pl->fdim[k] = dim;
            pl->fnd[k] = PyArray_NDIM(c);
            for (d = 0; d < pl->fnd[k]; d++) pl->fshape[k][d] = PyArray_DIMS(c)[d];
            if (opw_adv_normalise(op, c, m, dim, pl->xdims[dim], buf) < 0) {
                Py_DECREF(c);
                goto fail;
            }
            Py_DECREF(c);
            pl->kind[dim] = OPW_ADV_ARRAY;
            dim++;
        } else {
            int mnd = PyArray_NDIM(e[i].arr);
            for (d = 0; d < mnd; d++) {
                pl->kind[dim + d] = OPW_ADV_ARRAY;
                pl->fdim[pl->nf] = dim + d;
                pl->fnd[pl->nf] = 1;
                pl->fidx[pl->nf] = NULL;
                pl->nf++;
            }
            dim += mnd;
        }
    }
    fslot[n] = pl->nf;
    /* 2. the masks' shapes, then their coordinates */
    for (i = 0; i < n; i++) {
        PyArrayObject* mk = e[i].arr;
        if (e[i].kind != OPW_ADV_MASK) continue;
        dim = pl->fdim[fslot[i]];
        for (d = 0; d < PyArray_NDIM(mk); d++) {
            if (PyArray_DIMS(mk)[d] != pl->xdims[dim + d]) {
                PyObject* msg = PyUnicode_FromFormat(
                    "boolean index did not match indexed array along axis %d; size of axis "
                    "is %zd but size of corresponding boolean axis is %zd",
                    dim + d, (Py_ssize_t)pl->xdims[dim + d], (Py_ssize_t)PyArray_DIMS(mk)[d]);
                opw_adv_numpy_error(op, msg, pl->xnd, pl->xdims);
                Py_XDECREF(msg);
                goto fail;
            }
        }
    }
    for (i = 0; i < n; i++) {
        PyArrayObject* c;
        npy_intp m, q, cnt = 0, at = 0, pos[NPY_MAXDIMS];
        int mnd;
        if (e[i].kind != OPW_ADV_MASK) continue;
        c = (PyArrayObject*)PyArray_GETCONTIGUOUS(e[i].arr);
        if (!c) goto fail;
        mnd = PyArray_NDIM(c);
        m = PyArray_SIZE(c);
        for (q = 0; q < m; q++) cnt += PyArray_BYTES(c)[q] != 0;
        for (d = 0; d < mnd; d++) {
            k = fslot[i] + d;
            pl->fshape[k][0] = cnt;
            pl->fidx[k] = (npy_intp*)PyMem_Malloc((size_t)(cnt > 0 ? cnt : 1) * sizeof(npy_intp));
            if (!pl->fidx[k]) {
                Py_DECREF(c);
                PyErr_NoMemory();
                goto fail;
            }
            pos[d] = 0;
        }
        for (q = 0; q < m; q++) {
            if (PyArray_BYTES(c)[q]) {
                for (d = 0; d < mnd; d++) pl->fidx[fslot[i] + d][at] = pos[d];
                at++;
            }
            for (d = mnd - 1; d >= 0; d--) {
                if (++pos[d] < PyArray_DIMS(c)[d]) break;
                pos[d] = 0;
            }
        }
        Py_DECREF(c);
    }
    /* 3. the slices */
    dim = 0;
    for (i = 0; i < n; i++) {
        if (e[i].kind == OPW_ADV_SLICE) {
            if (opw_sub_slice(pl->xdims[dim], e[i].has_start, e[i].start, e[i].has_stop,
                              e[i].stop, e[i].has_step, e[i].step, &pl->start[dim],
                              &pl->len[dim], &pl->step[dim]) < 0)
                goto fail;
            dim++;
        } else if (e[i].kind == OPW_ADV_MASK) {
            dim += PyArray_NDIM(e[i].arr);
        } else {
            dim++;
        }
    }
    /* 4. the broadcast of the index arrays */
    pl->bnd = 0;
    for (k = 0; k < pl->nf; k++)
        if (pl->fnd[k] > pl->bnd) pl->bnd = pl->fnd[k];
    for (d = 0; d < pl->bnd; d++) pl->bshape[d] = 1;
    for (k = 0; k < pl->nf; k++) {
        int off = pl->bnd - pl->fnd[k];
        for (d = 0; d < pl->fnd[k]; d++) {
            npy_intp s = pl->fshape[k][d], *b = &pl->bshape[off + d];
            if (s == *b || s == 1) continue;
            if (*b == 1) {
                *b = s;
                continue;
            }
            {
                PyObject* all = PyUnicode_FromString("");
                for (j = 0; all && j < pl->nf; j++) {
                    PyObject* one = opw_shape_str(pl->fnd[j], pl->fshape[j], ",");
                    PyObject* cat = one ? PyUnicode_FromFormat("%U%U ", all, one) : NULL;
                    Py_XDECREF(one);
                    Py_DECREF(all);
                    all = cat;
                }
                if (all) {
                    PyObject* msg = PyUnicode_FromFormat(
                        "shape mismatch: indexing arrays could not be broadcast together "
                        "with shapes %U", all);
                    opw_adv_numpy_error(op, msg, pl->xnd, pl->xdims);
                    Py_XDECREF(msg);
                    Py_DECREF(all);
                }
            }
            goto fail;
        }
    }
    pl->bsize = 1;
    for (d = 0; d < pl->bnd; d++) {
        if (pl->bshape[d] != 0 && pl->bsize > NPY_MAX_INTP / (npy_intp)sizeof(npy_intp) / pl->bshape[d]) {
            PyErr_SetString(PyExc_MemoryError, "the broadcast index is too large");
            goto fail;
        }
        pl->bsize *= pl->bshape[d];
    }
    /* 5. the result's axes: the broadcast axes where the first advanced index is when the
     * advanced indices are adjacent, else first */
    front = count > 0 && last - first + 1 != count;
    dim = 0;
    for (i = 0; i < n && i != first; i++) before += e[i].kind == OPW_ADV_SLICE;
    nsub = 0;
    for (d = 0; d < pl->xnd; d++) nsub += pl->kind[d] == OPW_ADV_SLICE;
    if (nsub + pl->bnd > NPY_MAXDIMS) {
        PyErr_Format(PyExc_IndexError,
                     "number of dimensions must be within [0, %d], indexing result would have %d",
                     NPY_MAXDIMS, nsub + pl->bnd);
        goto fail;
    }
    if (front) before = 0;
    pl->nd = 0;
    j = 0; /* subspace axes placed */
    for (d = 0; d <= pl->xnd; d++) {
        if (j == before && pl->nd == before) {
            for (k = 0; k < pl->bnd; k++) {
                pl->rsrc[pl->nd] = -1 - k;
                pl->dims[pl->nd++] = pl->bshape[k];
            }
        }
        if (d == pl->xnd) break;
        if (pl->kind[d] == OPW_ADV_SLICE) {
            pl->rsrc[pl->nd] = d;
            pl->dims[pl->nd++] = pl->len[d];
            j++;
        }
    }
    return pl;
fail:
    opw_adv_free(pl);
    return NULL;
}

/* Fill the plan's strides and offsets for an array of ``pl``'s shape and byte ``strides``.
 * 0, or -1 with MemoryError set. */
static int opw_adv_locate(opw_adv_plan* pl, const npy_intp* strides) {
    npy_intp bst[NPY_MAXDIMS], fst[NPY_MAXDIMS][NPY_MAXDIMS], bpos[NPY_MAXDIMS];
    npy_intp at[NPY_MAXDIMS], b, s;
    int d, k;
    pl->base = 0;
    for (d = 0; d < pl->xnd; d++) {
        if (pl->kind[d] == OPW_ADV_INT || (pl->kind[d] == OPW_ADV_SLICE && pl->len[d] > 0))
            pl->base += pl->start[d] * strides[d];
    }
    s = 1;
    for (d = pl->bnd - 1; d >= 0; d--) {
        bst[d] = s;
        s *= pl->bshape[d];
    }
    for (d = 0; d < pl->nd; d++) {
        int r = pl->rsrc[d];
        if (r >= 0) {
            pl->xs[d] = strides[r] * pl->step[r];
            pl->fs[d] = 0;
        } else {
            pl->xs[d] = 0;
            pl->fs[d] = bst[-1 - r];
        }
    }
    PyMem_Free(pl->fo);
    pl->fo = (npy_intp*)PyMem_Malloc((size_t)(pl->bsize > 0 ? pl->bsize : 1) * sizeof(npy_intp));
    if (!pl->fo) {
        PyErr_NoMemory();
        return -1;
    }
    pl->fo[0] = 0;
    if (pl->bsize == 0) return 0;
    /* element strides of each index array in the broadcast shape (0 where it broadcasts) */
    for (k = 0; k < pl->nf; k++) {
        int off = pl->bnd - pl->fnd[k];
        s = 1;
        for (d = pl->bnd - 1; d >= 0; d--) {
            if (d < off) {
                fst[k][d] = 0;
            } else {
                npy_intp len = pl->fshape[k][d - off];
                fst[k][d] = len == 1 ? 0 : s;
                s *= len;
            }
        }
        at[k] = 0;
    }
    for (d = 0; d < pl->bnd; d++) bpos[d] = 0;
    for (b = 0; b < pl->bsize; b++) {
        npy_intp o = 0;
        for (k = 0; k < pl->nf; k++) o += pl->fidx[k][at[k]] * strides[pl->fdim[k]];
        pl->fo[b] = o;
        for (d = pl->bnd - 1; d >= 0; d--) {
            for (k = 0; k < pl->nf; k++) at[k] += fst[k][d];
            if (++bpos[d] < pl->bshape[d]) break;
            for (k = 0; k < pl->nf; k++) at[k] -= fst[k][d] * pl->bshape[d];
            bpos[d] = 0;
        }
    }
    return 0;
}

/* Run ``kern`` over every row of an ``nd``-axis walk: the indexed side at ``f`` (strides
 * ``xs``, offsets ``fo`` with strides ``fs``; ``fo`` may be NULL), the plain side at ``p``
 * (byte strides ``ps``), in C order of the axes. */
static void opw_adv_walk(int nd, const npy_intp* dims, char* f, const npy_intp* xs,
                         const npy_intp* fo, const npy_intp* fs, char* p,
                         const npy_intp* ps, opw_adv_kernel kern, int isz) {
    npy_intp pos[NPY_MAXDIMS], fi = 0;
    int d;
    for (d = 0; d < nd; d++) {
        if (dims[d] == 0) return;
        pos[d] = 0;
    }
    if (nd == 0) {
        kern(f, 0, fo, 0, p, 0, 1, isz);
        return;
    }
    for (;;) {
        kern(f, xs[nd - 1], fo ? fo + fi : NULL, fs[nd - 1], p, ps[nd - 1], dims[nd - 1], isz);
        for (d = nd - 2; d >= 0; d--) {
            f += xs[d];
            p += ps[d];
            fi += fs[d];
            if (++pos[d] < dims[d]) break;
            f -= xs[d] * dims[d];
            p -= ps[d] * dims[d];
            fi -= fs[d] * dims[d];
            pos[d] = 0;
        }
        if (d < 0) break;
    }
}

#define OPW_ADV_COPY_LOOP(DST, SRC)                                                  \
    switch (isz) {                                                                   \
        case 1: for (k = 0; k < n; k++) memcpy(DST, SRC, 1); break;                  \
        case 2: for (k = 0; k < n; k++) memcpy(DST, SRC, 2); break;                  \
        case 4: for (k = 0; k < n; k++) memcpy(DST, SRC, 4); break;                  \
        case 8: for (k = 0; k < n; k++) memcpy(DST, SRC, 8); break;                  \
        default: for (k = 0; k < n; k++) memcpy(DST, SRC, (size_t)isz); break;       \
    }

/* The plain side from the indexed side. */
OPW_HOT static void opw_adv_take_row(char* f, npy_intp fst, const npy_intp* fo, npy_intp fos,
                                     char* p, npy_intp pst, npy_intp n, int isz) {
    npy_intp k;
    if (fos == 0) {
        f += fo[0];
        OPW_ADV_COPY_LOOP(p + k * pst, f + k * fst)
    } else {
        OPW_ADV_COPY_LOOP(p + k * pst, f + k * fst + fo[k * fos])
    }
}

/* The indexed side from the plain side (a repeated position keeps its last write). */
OPW_HOT static void opw_adv_set_row(char* f, npy_intp fst, const npy_intp* fo, npy_intp fos,
                                    char* p, npy_intp pst, npy_intp n, int isz) {
    npy_intp k;
    if (fos == 0) {
        f += fo[0];
        OPW_ADV_COPY_LOOP(f + k * fst, p + k * pst)
    } else {
        OPW_ADV_COPY_LOOP(f + k * fst + fo[k * fos], p + k * pst)
    }
}

/* ``x[entries]`` into ``*z`` (a new C-contiguous array, or ``*z`` reused). 0 or -1. */
static int opw_adv_take(const char* op, PyArrayObject* x, const opw_adv_entry* e, int n,
                        PyArrayObject** z) {
    npy_intp ps[NPY_MAXDIMS], s;
    int d;
    opw_adv_plan* pl = opw_adv_plan_new(op, x, e, n);
    if (!pl) return -1;
    if (opw_adv_locate(pl, PyArray_STRIDES(x)) < 0) goto fail;
    if (opw_overlap(*z, x)) Py_CLEAR(*z);
    if (opw_prep_output(z, pl->nd, pl->dims, PyArray_TYPE(x)) < 0) goto fail;
    s = PyArray_ITEMSIZE(x);
    for (d = pl->nd - 1; d >= 0; d--) {
        ps[d] = s;
        s *= pl->dims[d];
    }
    opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(x) + pl->base, pl->xs, pl->fo, pl->fs,
                 PyArray_BYTES(*z), ps, opw_adv_take_row, (int)PyArray_ITEMSIZE(x));
    opw_adv_free(pl);
    return 0;
fail:
    opw_adv_free(pl);
    return -1;
}

/* Whether NumPy's order of ``x[idx] = y`` may differ from C order: the result has no
 * subspace (every axis is a broadcast axis), repeated positions are possible and an index
 * array or ``y`` (when given) is not C-contiguous. */
static int opw_adv_numpy_order(const opw_adv_plan* pl, const opw_adv_entry* e, int n,
                               PyArrayObject* y) {
    int i, c_order = y == NULL || PyArray_IS_C_CONTIGUOUS(y);
    if (pl->nd != pl->bnd || pl->bsize < 2 || pl->nf == 0) return 0;
    for (i = 0; i < n; i++)
        if (e[i].kind == OPW_ADV_ARRAY) c_order &= PyArray_IS_C_CONTIGUOUS(e[i].arr);
    return !c_order;
}

/* NumPy's iterator over the index arrays (as they are, whatever their dtype; masks as
 * their C-ordered coordinates) and ``extra`` (``y``; NULL: a new array of ``descr``, which
 * is stolen, in the layout NumPy gives the result of ``x[idx]``; neither: no ``descr``),
 * in NPY_KEEPORDER, tracking the multi-index. NULL with an exception set. */
static NpyIter* opw_adv_numpy_iter(const opw_adv_plan* pl, const opw_adv_entry* e, int n,
                                   PyArrayObject* extra, PyArray_Descr* descr) {
    PyArrayObject* ops[NPY_MAXDIMS + 1];
    PyArray_Descr* dts[NPY_MAXDIMS + 1];
    npy_uint32 flags[NPY_MAXDIMS + 1];
    int nops = 0, i, d, k = 0;
    NpyIter* it = NULL;
    for (i = 0; i < n; i++) {
        PyArrayObject* a;
        if (e[i].kind == OPW_ADV_ARRAY) {
            a = e[i].arr;
            Py_INCREF(a);
            k++;
            ops[nops++] = a;
        } else if (e[i].kind == OPW_ADV_MASK) {
            for (d = 0; d < PyArray_NDIM(e[i].arr); d++, k++) {
                a = (PyArrayObject*)PyArray_SimpleNewFromData(1, (npy_intp*)pl->fshape[k],
                                                              NPY_INTP, pl->fidx[k]);
                if (!a) goto end;
                ops[nops++] = a;
            }
        }
    }
    for (i = 0; i < nops; i++) {
        flags[i] = NPY_ITER_READONLY;
        dts[i] = NULL;
    }
    if (extra) {
        Py_INCREF(extra);
        ops[nops] = extra;
        flags[nops] = NPY_ITER_READONLY;
        dts[nops++] = NULL;
    } else if (descr) {
        ops[nops] = NULL;
        flags[nops] = NPY_ITER_WRITEONLY | NPY_ITER_ALLOCATE;
        dts[nops++] = descr;
    }
    it = NpyIter_MultiNew(nops, ops, NPY_ITER_MULTI_INDEX | NPY_ITER_ZEROSIZE_OK,
                          NPY_KEEPORDER, NPY_NO_CASTING, flags, dts);
    if (it && NpyIter_GetNDim(it) != pl->bnd) {
        NpyIter_Deallocate(it);
        it = NULL;
        PyErr_SetString(PyExc_RuntimeError, "advanced indexing: unexpected iterator rank");
    }
end:
    for (i = 0; i < nops; i++) Py_XDECREF(ops[i]);
    Py_XDECREF(descr);
    return it;
}

/* ``y`` (strides ``ps`` on the result's axes) written into ``x[idx]`` at ``z`` in NumPy's
 * order of ``x[idx] = y`` without a subspace: an NpyIter over the index arrays and ``y``
 * in NPY_KEEPORDER (for ``x[idx] += y``, ``y`` is the indexed part plus the value, in the
 * layout NumPy gives that part). A repeated position keeps the write that comes last in
 * that order. 0 or -1. */
static int opw_adv_set_numpy_order(const opw_adv_plan* pl, const opw_adv_entry* e, int n,
                                   char* z, PyArrayObject* y, const npy_intp* ps, int isz) {
    npy_intp bst[NPY_MAXDIMS], mi[NPY_MAXDIMS], s;
    int d;
    NpyIter* it = opw_adv_numpy_iter(pl, e, n, y, NULL);
    NpyIter_IterNextFunc* next;
    NpyIter_GetMultiIndexFunc* get;
    const char* yd = PyArray_BYTES(y);
    if (!it) return -1;
    next = NpyIter_GetIterNext(it, NULL);
    get = NpyIter_GetGetMultiIndex(it, NULL);
    if (!next || !get) {
        NpyIter_Deallocate(it);
        return -1;
    }
    s = 1;
    for (d = pl->bnd - 1; d >= 0; d--) {
        bst[d] = s;
        s *= pl->bshape[d];
    }
    z += pl->base;
    do {
        npy_intp b = 0, yo = 0;
        get(it, mi);
        for (d = 0; d < pl->bnd; d++) {
            b += mi[d] * bst[d];
            yo += mi[d] * ps[d];
        }
        memcpy(z + pl->fo[b], yd + yo, (size_t)isz);
    } while (next(it));
    NpyIter_Deallocate(it);
    return 0;
}

/* A new array for ``x[idx]`` of ``x``'s dtype: C-contiguous, or in NumPy's layout when
 * its order may differ from C order. NULL with an exception set. */
static PyArrayObject* opw_adv_part(const opw_adv_plan* pl, const opw_adv_entry* e, int n,
                                   PyArrayObject* x) {
    PyArrayObject* part;
    NpyIter* it;
    PyArray_Descr* descr = PyArray_DESCR(x);
    if (!opw_adv_numpy_order(pl, e, n, NULL))
        return (PyArrayObject*)PyArray_EMPTY(pl->nd, (npy_intp*)pl->dims, PyArray_TYPE(x), 0);
    Py_INCREF(descr);
    it = opw_adv_numpy_iter(pl, e, n, NULL, descr);
    if (!it) return NULL;
    part = NpyIter_GetOperandArray(it)[NpyIter_GetNOp(it) - 1];
    Py_INCREF(part);
    NpyIter_Deallocate(it);
    return part;
}

#define OPW_ADV_SET 0
#define OPW_ADV_ADD_AT 1
#define OPW_ADV_ADD_ONCE 2

/* ``x`` (copied unless ``inplace``) with ``y`` set into (``OPW_ADV_SET``), accumulated
 * into (``OPW_ADV_ADD_AT``: ``numpy.add.at``) or added once to (``OPW_ADV_ADD_ONCE``:
 * ``x[idx] += y``) ``x[entries]``, into ``*z``; ``add`` adds one row (NULL when setting).
 * ``ystatic1[d]``: whether axis ``d`` of ``y`` has static length 1. 0 or -1. */
static int opw_adv_update(const char* op, PyArrayObject* x, PyArrayObject* y,
                          const int* ystatic1, const opw_adv_entry* e, int n, int inplace,
                          int mode, opw_adv_kernel add, PyArrayObject** z) {
    npy_intp ps[NPY_MAXDIMS];
    int d, off, yn = PyArray_NDIM(y), bad = 0, isz = (int)PyArray_ITEMSIZE(x);
    PyArrayObject *yc = NULL, *tmp = NULL;
    opw_adv_plan* pl = opw_adv_plan_new(op, x, e, n);
    if (!pl) return -1;
    off = pl->nd - yn;
    for (d = 0; d < yn && off >= 0; d++) {
        npy_intp ys = PyArray_DIMS(y)[d];
        bad |= ys != 1 && ys != pl->dims[off + d];
    }
    if (off < 0 || bad) {
        opw_broadcast_error(op, yn, PyArray_DIMS(y), pl->nd, pl->dims, "");
        goto fail;
    }
    for (d = 0; d < yn; d++) {
        if (!ystatic1[d] && PyArray_DIMS(y)[d] == 1 && pl->dims[off + d] != 1) {
            opw_runtime_broadcast_error(op, d, pl->dims[off + d]);
            goto fail;
        }
    }
    if (inplace) {
        if (!PyArray_ISWRITEABLE(x)) {
            PyErr_SetString(PyExc_ValueError, "assignment destination is read-only");
            goto fail;
        }
        Py_XDECREF(*z);
        *z = x;
        Py_INCREF(x);
    } else {
        if (opw_overlap(*z, x) || opw_overlap(*z, y)) Py_CLEAR(*z);
        if (opw_prep_output(z, PyArray_NDIM(x), PyArray_DIMS(x), PyArray_TYPE(x)) < 0) goto fail;
        if (PyArray_CopyInto(*z, x) < 0) goto fail;
    }
    if (opw_adv_locate(pl, PyArray_STRIDES(*z)) < 0) goto fail;
    if (PyArray_TYPE(y) != PyArray_TYPE(x)) {  /* y.astype(x.dtype): its layout kept */
        PyArray_Descr* dt = PyArray_DESCR(x);
        Py_INCREF(dt);
        yc = (PyArrayObject*)PyArray_NewLikeArray(y, NPY_KEEPORDER, dt, 0);
        if (yc && PyArray_CopyInto(yc, y) < 0) Py_CLEAR(yc);
    } else if (opw_overlap(*z, y))
        yc = (PyArrayObject*)PyArray_NewCopy(y, NPY_ANYORDER);
    else {
        yc = y;
        Py_INCREF(yc);
    }
    if (!yc) goto fail;
    for (d = 0; d < pl->nd; d++) {
        int jd = d - off;
        ps[d] = jd < 0 || PyArray_DIMS(yc)[jd] == 1 ? 0 : PyArray_STRIDES(yc)[jd];
    }
    if (mode == OPW_ADV_SET) {
        if (opw_adv_numpy_order(pl, e, n, yc)) {
            if (opw_adv_set_numpy_order(pl, e, n, PyArray_BYTES(*z), yc, ps, isz) < 0)
                goto fail;
        } else {
            opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(*z) + pl->base, pl->xs, pl->fo,
                         pl->fs, PyArray_BYTES(yc), ps, opw_adv_set_row, isz);
        }
    } else if (mode == OPW_ADV_ADD_AT) {
        opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(*z) + pl->base, pl->xs, pl->fo, pl->fs,
                     PyArray_BYTES(yc), ps, add, isz);
    } else {
        /* the indexed part, plus y, written back: a repeated position keeps its last */
        tmp = opw_adv_part(pl, e, n, x);
        if (!tmp) goto fail;
        opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(*z) + pl->base, pl->xs, pl->fo, pl->fs,
                     PyArray_BYTES(tmp), PyArray_STRIDES(tmp), opw_adv_take_row, isz);
        opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(tmp), PyArray_STRIDES(tmp), NULL,
                     PyArray_STRIDES(tmp), PyArray_BYTES(yc), ps, add, isz);
        if (opw_adv_numpy_order(pl, e, n, NULL)) {
            if (opw_adv_set_numpy_order(pl, e, n, PyArray_BYTES(*z), tmp,
                                        PyArray_STRIDES(tmp), isz) < 0) {
                Py_DECREF(tmp);
                goto fail;
            }
        } else {
            opw_adv_walk(pl->nd, pl->dims, PyArray_BYTES(*z) + pl->base, pl->xs, pl->fo,
                         pl->fs, PyArray_BYTES(tmp), PyArray_STRIDES(tmp), opw_adv_set_row,
                         isz);
        }
        Py_DECREF(tmp);
    }
    Py_DECREF(yc);
    opw_adv_free(pl);
    return 0;
fail:
    Py_XDECREF(yc);
    opw_adv_free(pl);
    return -1;
}

#section add_row

/* opweave AdvancedIncSubtensor (%(key)s): add one row of the plain side into the indexed
 * side, element by element in order (a repeated position adds up). */
OPW_HOT static void opw_adv_add_%(key)s(char* f, npy_intp fst, const npy_intp* fo,
                                       npy_intp fos, char* p, npy_intp pst, npy_intp n,
                                       int isz) {
    npy_intp k;
    (void)isz;
    if (fo && fos != 0) {
        for (k = 0; k < n; k++) {
            %(t)s* a = (%(t)s*)(f + k * fst + fo[k * fos]);
            const %(t)s b = *(const %(t)s*)(p + k * pst);
            *a = %(upd)s;
        }
        return;
    }
    if (fo) f += fo[0];
    for (k = 0; k < n; k++) {
        %(t)s* a = (%(t)s*)(f + k * fst);
        const %(t)s b = *(const %(t)s*)(p + k * pst);
        *a = %(upd)s;
    }
}

#section take

{
    opw_adv_entry opw_e[%(n1)s];
    memset(opw_e, 0, sizeof(opw_e));
    %(entries)s
    if (opw_adv_take(%(op)s, %(x)s, opw_e, %(n)s, &%(z)s) < 0) %(fail)s
}

#section update

{
    opw_adv_entry opw_e[%(n1)s];
    static const int opw_ys1[%(yn1)s] = {%(ystatic1)s};
    memset(opw_e, 0, sizeof(opw_e));
    %(entries)s
    if (opw_adv_update(%(op)s, %(x)s, %(y)s, opw_ys1, opw_e, %(n)s, %(inplace)s, %(mode)s,
                       %(add)s, &%(z)s) < 0) %(fail)s
}
