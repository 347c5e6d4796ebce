#section support

/* Blockwise (opweave.tensor.blockwise): the core Op's C code, compiled as a function of its
 * own (opw_bw_core_t), run once per batch index on views of the inputs. */

/* At most this many inputs and outputs (the generated code refuses more). */
#define OPW_BW_MAX_IN 16
#define OPW_BW_MAX_OUT 16

/* The core code of one node: ``in`` the core inputs (borrowed), ``out`` the core outputs
 * (owned: NULL or the previous call's, replaced by the code). 0, or 1 with an exception. */
typedef int (*opw_bw_core_t)(PyArrayObject* const* in, PyArrayObject** out);

/* What a node asks for, fixed when its code is generated. */
typedef struct {
    const char* who;      /* str(op) */
    int nin, nout, nb;    /* inputs, outputs, batch dimensions */
    const int* in_core;   /* core dimensions of each input */
    const int* out_core;  /* core dimensions of each output */
    const int* one;       /* nin * nb: 1 where a batch dimension has static length 1 */
    const int* typenums;  /* of each output */
    const char* node;     /* the node, for opweave_c.impls.blockwise_loop.run_python */
} opw_bw_spec;

/* The node run by the Python backend's kernel (found by the core's resolver): for batch
 * lengths that do not broadcast (it raises its error) and for an empty batch (the core
 * Op never runs; its infer_shape gives the outputs' core shapes). 0 or -1. */
static int opw_bw_python(const opw_bw_spec* s, PyArrayObject** ins, PyArrayObject** outs) {
    PyObject *mod, *fn, *args = NULL, *r = NULL;
    int i, status = -1;
    mod = PyImport_ImportModule("opweave_c.impls.blockwise_loop");
    if (!mod) return -1;
    fn = PyObject_GetAttrString(mod, "run_python");
    Py_DECREF(mod);
    if (!fn) return -1;
    args = PyTuple_New(s->nin + 1);
    if (!args) goto done;
    PyTuple_SET_ITEM(args, 0, PyUnicode_FromString(s->node));
    if (!PyTuple_GET_ITEM(args, 0)) goto done;
    for (i = 0; i < s->nin; i++) {
        Py_INCREF(ins[i]);
        PyTuple_SET_ITEM(args, i + 1, (PyObject*)ins[i]);
    }
    r = PyObject_CallObject(fn, args);
    if (!r) goto done;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != s->nout) {
        PyErr_Format(PyExc_TypeError, "%s: run_python gave %R", s->who, r);
        goto done;
    }
    for (i = 0; i < s->nout; i++) {
        PyObject* o = PyTuple_GET_ITEM(r, i);
        if (!PyArray_Check(o)) {
            PyErr_Format(PyExc_TypeError, "%s: run_python gave %R", s->who, r);
            goto done;
        }
        Py_INCREF(o);
        Py_XDECREF(outs[i]);
        outs[i] = (PyArrayObject*)o;
    }
    status = 0;
done:
    Py_DECREF(fn);
    Py_XDECREF(args);
    Py_XDECREF(r);
    return status;
}

/* ``n`` lengths as a Python tuple (a new reference, or NULL with an exception). */
static PyObject* opw_bw_tuple(int n, const npy_intp* v) {
    PyObject* t = PyTuple_New(n);
    int i;
    if (!t) return NULL;
    for (i = 0; i < n; i++) {
        PyObject* x = PyLong_FromSsize_t((Py_ssize_t)v[i]);
        if (!x) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

/* The Python kernel's ValueError for a core output whose shape changes along the batch. */
static void opw_bw_shape_changed(const opw_bw_spec* s, int k, PyArrayObject* value,
                                 const npy_intp* before, const npy_intp* idx) {
    PyObject *now = opw_bw_tuple(PyArray_NDIM(value), PyArray_DIMS(value));
    PyObject *was = opw_bw_tuple(s->out_core[k], before);
    PyObject *where = opw_bw_tuple(s->nb, idx);
    if (now && was && where)
        PyErr_Format(PyExc_ValueError,
                     "%s: the core Op's output %d has shape %R at batch index %R, %R before; "
                     "the outputs must not change shape along the batch",
                     s->who, k, now, where, was);
    Py_XDECREF(now);
    Py_XDECREF(was);
    Py_XDECREF(where);
}

/* Copy the core output ``value`` into the batch entry at ``dst`` of ``full``. 0 or -1. */
static int opw_bw_store(PyArrayObject* full, int nb, char* dst, PyArrayObject* value) {
    PyArrayObject* view;
    int r;
    if (PyArray_TYPE(value) == PyArray_TYPE(full) && PyArray_IS_C_CONTIGUOUS(value) &&
        PyArray_ISNOTSWAPPED(value)) {
        memcpy(dst, PyArray_DATA(value), (size_t)PyArray_NBYTES(value));
        return 0;
    }
    view = opw_make_view(full, PyArray_NDIM(full) - nb, PyArray_DIMS(full) + nb,
                         PyArray_STRIDES(full) + nb, dst);
    if (!view) return -1;
    r = PyArray_CopyInto(view, value);
    Py_DECREF(view);
    return r < 0 ? -1 : 0;
}

/* The node: the broadcast batch shape (only batch dimensions of static length 1
 * broadcast, as in the Python kernel), then ``core`` on every batch index in C order,
 * its outputs stacked into new C-contiguous ``outs`` (allocated after the first index,
 * when the core shapes are known). 0 or -1 with an exception set. */
static int opw_bw_run(const opw_bw_spec* s, opw_bw_core_t core, PyArrayObject** ins,
                      PyArrayObject** outs) {
    npy_intp batch[NPY_MAXDIMS], idx[NPY_MAXDIMS], dims[NPY_MAXDIMS];
    npy_intp st[OPW_BW_MAX_IN][NPY_MAXDIMS];
    npy_intp core_dims[OPW_BW_MAX_OUT][NPY_MAXDIMS];
    char* ptr[OPW_BW_MAX_IN];
    char* dst[OPW_BW_MAX_OUT];
    PyArrayObject* views[OPW_BW_MAX_IN];
    PyArrayObject* values[OPW_BW_MAX_OUT];
    npy_intp count = 1, c, per[OPW_BW_MAX_OUT];
    int i, d, k, status = -1;
    for (i = 0; i < s->nin; i++) views[i] = NULL;
    for (k = 0; k < s->nout; k++) values[k] = NULL;
    for (d = 0; d < s->nb; d++) {
        npy_intp len = -1;
        for (i = 0; i < s->nin; i++) {
            npy_intp n = PyArray_DIMS(ins[i])[d];
            if (s->one[i * s->nb + d]) continue;
            if (len >= 0 && n != len) {
                if (opw_bw_python(s, ins, outs) == 0)
                    PyErr_Format(PyExc_ValueError, "%s: the batch dimensions do not broadcast",
                                 s->who);
                return -1;
            }
            len = n;
        }
        batch[d] = len < 0 ? 1 : len;
        count *= batch[d];
        idx[d] = 0;
    }
    if (count == 0) return opw_bw_python(s, ins, outs);
    for (i = 0; i < s->nin; i++) {
        for (d = 0; d < s->nb; d++)
            st[i][d] = PyArray_DIMS(ins[i])[d] == 1 ? 0 : PyArray_STRIDES(ins[i])[d];
        ptr[i] = PyArray_BYTES(ins[i]);
    }
    for (c = 0; c < count; c++) {
        for (i = 0; i < s->nin; i++) {
            views[i] = opw_make_view(ins[i], s->in_core[i], PyArray_DIMS(ins[i]) + s->nb,
                                     PyArray_STRIDES(ins[i]) + s->nb, ptr[i]);
            if (!views[i]) goto done;
        }
        if (core(views, values)) goto done;
        for (i = 0; i < s->nin; i++) Py_CLEAR(views[i]);
        for (k = 0; k < s->nout; k++) {
            PyArrayObject* v = values[k];
            int same = 1;
            if (!v || PyArray_NDIM(v) != s->out_core[k]) {
                PyErr_Format(PyExc_TypeError, "%s: the core Op's C code gave no %d-dimensional "
                             "output %d", s->who, s->out_core[k], k);
                goto done;
            }
            if (c == 0) {
                for (d = 0; d < s->nb; d++) dims[d] = batch[d];
                for (d = 0; d < s->out_core[k]; d++)
                    dims[s->nb + d] = core_dims[k][d] = PyArray_DIMS(v)[d];
                if (outs[k] && opw_overlap(outs[k], v)) Py_CLEAR(outs[k]);
                for (i = 0; i < s->nin && outs[k]; i++)
                    if (opw_overlap(outs[k], ins[i])) Py_CLEAR(outs[k]);
                if (opw_prep_output(&outs[k], s->nb + s->out_core[k], dims, s->typenums[k]) < 0)
                    goto done;
                dst[k] = PyArray_BYTES(outs[k]);
                per[k] = PyArray_ITEMSIZE(outs[k]);
                for (d = 0; d < s->out_core[k]; d++) per[k] *= core_dims[k][d];
            }
            for (d = 0; d < s->out_core[k]; d++) same &= PyArray_DIMS(v)[d] == core_dims[k][d];
            if (!same) {
                opw_bw_shape_changed(s, k, v, core_dims[k], idx);
                goto done;
            }
            if (opw_bw_store(outs[k], s->nb, dst[k], v) < 0) goto done;
            dst[k] += per[k];
        }
        /* the next batch index, in C order */
        for (d = s->nb - 1; d >= 0; d--) {
            for (i = 0; i < s->nin; i++) ptr[i] += st[i][d];
            if (++idx[d] < batch[d]) break;
            for (i = 0; i < s->nin; i++) ptr[i] -= st[i][d] * batch[d];
            idx[d] = 0;
        }
    }
    status = 0;
done:
    for (i = 0; i < s->nin; i++) Py_XDECREF(views[i]);
    for (k = 0; k < s->nout; k++) Py_XDECREF(values[k]);
    return status;
}

#section node

{
    static const int opw_in_core[] = {%(in_core)s};
    static const int opw_out_core[] = {%(out_core)s};
    static const int opw_one[] = {%(one)s};
    static const int opw_typenums[] = {%(typenums)s};
    static const opw_bw_spec opw_spec = {%(who)s, %(nin)s, %(nout)s, %(nb)s, opw_in_core,
                                         opw_out_core, opw_one, opw_typenums, %(node)s};
    PyArrayObject* opw_ins[] = {%(ins)s};
    PyArrayObject* opw_outs[] = {%(outs)s};
    int opw_status = opw_bw_run(&opw_spec, %(core)s, opw_ins, opw_outs);
%(store)s
    if (opw_status < 0) %(fail)s
}
