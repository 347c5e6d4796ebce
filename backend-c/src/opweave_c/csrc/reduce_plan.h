/* opweave reductions: the plan of the loops over an input, shared by every reduction.
 *
 * Part of the runtime: compiled once into the runtime's object (opweave_c.prelude) that
 * modules of opweave-c's own link with, or, in a module built without it, into the module
 * (OPW_RT: see runtime_functions.h, which comes first).
 */
#ifndef OPW_REDUCE_PLAN_H
#define OPW_REDUCE_PLAN_H

/* A loop over an input, its axes reordered by stride, calling a kernel per row. */
typedef void (*opw_red_kernel)(const char* x, npy_intp n, npy_intp xs, char* acc,
                               npy_intp as);

typedef struct {
    int nd;
    npy_intp n[NPY_MAXDIMS];
    npy_intp is[NPY_MAXDIMS]; /* input byte strides */
    npy_intp as[NPY_MAXDIMS]; /* accumulator byte strides (0 on reduced axes) */
    int red[NPY_MAXDIMS];
} opw_red_plan;

static inline npy_intp opw_red_abs(npy_intp v) { return v < 0 ? -v : v; }

/* Plan the loops over a non-empty ``x`` whose axes ``reduced[i] != 0`` are reduced into a
 * C-contiguous accumulator of elements of ``acc_size`` bytes over the kept axes. */
OPW_RT void opw_red_plan_init(opw_red_plan* pl, PyArrayObject* x, const int* reduced,
                              npy_intp acc_size);
/* Run the plan: ``red`` when the innermost axis is reduced, ``comb`` otherwise. */
OPW_RT OPW_HOT void opw_red_plan_run(const opw_red_plan* pl, const char* x, char* acc,
                                    opw_red_kernel red, opw_red_kernel comb);

#ifndef OPW_RUNTIME_LINKED
OPW_RT void opw_red_plan_init(opw_red_plan* pl, PyArrayObject* x, const int* reduced,
                              npy_intp acc_size) {
    int nd = PyArray_NDIM(x), i, j, k = 0;
    const npy_intp* dims = PyArray_DIMS(x);
    const npy_intp* strides = PyArray_STRIDES(x);
    npy_intp as[NPY_MAXDIMS];
    npy_intp ostride = acc_size;
    for (i = nd - 1; i >= 0; i--) {
        if (reduced[i]) {
            as[i] = 0;
        } else {
            as[i] = ostride;
            ostride *= dims[i];
        }
    }
    for (i = 0; i < nd; i++) {
        if (dims[i] == 1) continue;
        pl->n[k] = dims[i];
        pl->is[k] = strides[i];
        pl->as[k] = as[i];
        pl->red[k] = reduced[i] != 0;
        k++;
    }
    /* Largest input stride outermost (insertion sort: stable, so C order on ties). */
    for (i = 1; i < k; i++) {
        npy_intp n = pl->n[i], s = pl->is[i], a = pl->as[i];
        int r = pl->red[i];
        for (j = i - 1; j >= 0; j--) {
            npy_intp sj = opw_red_abs(pl->is[j]), si = opw_red_abs(s);
            if (sj > si || (sj == si && opw_red_abs(pl->as[j]) >= opw_red_abs(a))) break;
            pl->n[j + 1] = pl->n[j];
            pl->is[j + 1] = pl->is[j];
            pl->as[j + 1] = pl->as[j];
            pl->red[j + 1] = pl->red[j];
        }
        pl->n[j + 1] = n;
        pl->is[j + 1] = s;
        pl->as[j + 1] = a;
        pl->red[j + 1] = r;
    }
    /* Merge an axis into the next inner one when together they are one strided axis. */
    for (i = k - 2; i >= 0; i--) {
        if (pl->red[i] == pl->red[i + 1] && pl->is[i] == pl->is[i + 1] * pl->n[i + 1] &&
            pl->as[i] == pl->as[i + 1] * pl->n[i + 1]) {
            pl->n[i + 1] *= pl->n[i];
            for (j = i; j < k - 1; j++) {
                pl->n[j] = pl->n[j + 1];
                pl->is[j] = pl->is[j + 1];
                pl->as[j] = pl->as[j + 1];
                pl->red[j] = pl->red[j + 1];
            }
            k--;
        }
    }
    /* A short kept axis innermost, a reduced one outside it: reduce the long rows instead. */
    if (k >= 2 && !pl->red[k - 1] && pl->red[k - 2] && pl->n[k - 1] <= 4 &&
        pl->n[k - 2] >= 64) {
        npy_intp n = pl->n[k - 1], s = pl->is[k - 1], a = pl->as[k - 1];
        pl->n[k - 1] = pl->n[k - 2];
        pl->is[k - 1] = pl->is[k - 2];
        pl->as[k - 1] = pl->as[k - 2];
        pl->red[k - 1] = 1;
        pl->n[k - 2] = n;
        pl->is[k - 2] = s;
        pl->as[k - 2] = a;
        pl->red[k - 2] = 0;
    }
    if (k == 0) {
        pl->n[0] = 1;
        pl->is[0] = 0;
        pl->as[0] = 0;
        pl->red[0] = 1;
        k = 1;
    }
    pl->nd = k;
}

OPW_RT OPW_HOT void opw_red_plan_run(const opw_red_plan* pl, const char* x, char* acc,
                                    opw_red_kernel red, opw_red_kernel comb) {
    int last = pl->nd - 1, d;
    npy_intp idx[NPY_MAXDIMS];
    opw_red_kernel kernel = pl->red[last] ? red : comb;
    const npy_intp n = pl->n[last], xs = pl->is[last], as = pl->as[last];
    for (d = 0; d < last; d++) idx[d] = 0;
    for (;;) {
        kernel(x, n, xs, acc, as);
        for (d = last - 1; d >= 0; d--) {
            x += pl->is[d];
            acc += pl->as[d];
            if (++idx[d] < pl->n[d]) break;
            x -= pl->is[d] * pl->n[d];
            acc -= pl->as[d] * pl->n[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
}
#endif /* !OPW_RUNTIME_LINKED */
#endif /* OPW_REDUCE_PLAN_H */
