/* opweave C runtime: its functions (the types, macros and inline helpers are in runtime.h).
 *
 * A module carries these functions itself, or is linked with the runtime object that holds
 * them once per compile directory and set of flags (opweave_c.prelude), compiled from
 * runtime.h, this text and tensor.h with OPW_RUNTIME_OBJECT defined. A module linked with
 * it is compiled with OPW_RUNTIME_LINKED defined, and then sees only the declarations:
 * GCC does not compile the runtime again for every module. Both ways run the same code.
 *
 * OPW_RT declares a function other C calls: static in a module that carries the runtime,
 * hidden (shared by the files of one shared object, never exported) otherwise. */
#ifndef OPW_RUNTIME_FUNCTIONS_H
#define OPW_RUNTIME_FUNCTIONS_H
#if defined(OPW_RUNTIME_LINKED) || defined(OPW_RUNTIME_OBJECT)
#define OPW_RT __attribute__((visibility("hidden")))
#else
#define OPW_RT static
#endif

/* Import NumPy's C API for the runtime's own functions (the runtime object is a file of
 * its own, with its own table): 0, or -1 with an exception set. */
OPW_RT int opw_runtime_init(void);
/* Pass ``*py`` through the Python callable ``filter`` (a Type's filter), in place.
 * Returns 0 on success, -1 with an exception set. */
OPW_RT int opw_filter(PyObject** py, PyObject* filter);
/* link(in_cells, out_cells, filters, failcell, n_args, upd_src, upd_dst, user_out, unpack,
 *      clear) -> (run, call) for one block. All cells are one-element lists, held by the
 * state; ``clear`` lists the cells call() empties when it returns. */
OPW_RT PyObject* opw_link(opw_block_fn block, Py_ssize_t n_in, Py_ssize_t n_out,
                          PyObject* args);

#ifndef OPW_RUNTIME_LINKED
#include <pthread.h>
/* How many forks this process descends from since the runtime was loaded: a call flag set
 * under another count was set by a thread that a fork left behind (only the forking
 * thread goes on in a child), so a call in the child clears it instead of waiting for ever. */
static unsigned long opw_forks = 0;
static void opw_count_fork(void) { opw_forks++; }
static pthread_once_t opw_forks_once = PTHREAD_ONCE_INIT;
static void opw_watch_forks(void) { pthread_atfork(NULL, NULL, opw_count_fork); }

OPW_RT int opw_runtime_init(void) {
    return PyArray_API == NULL ? _import_array() : 0;
}

static void opw_state_free(PyObject* capsule) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(capsule, "opweave.state");
    if (st) { Py_XDECREF(st->keep); PyMem_Free(st); }
}

/* Record which label failed and make sure an exception is set. */
static PyObject* opw_failed(opw_state* st, int label) {
    PyObject *t, *v, *tb, *num;
    if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError,
                        "generated C code failed without setting an exception");
    PyErr_Fetch(&t, &v, &tb);
    num = PyLong_FromLong(label);
    if (num) PyList_SetItem(st->failcell, 0, num);
    PyErr_Restore(t, v, tb);
    return NULL;
}

OPW_RT int opw_filter(PyObject** py, PyObject* filter) {
    PyObject* r;
    if (filter == NULL || filter == Py_None) return 0;
    r = PyObject_CallOneArg(filter, *py);
    if (r == NULL) return -1;
    Py_DECREF(*py);
    *py = r;
    return 0;
}

static PyObject* opw_run(PyObject* self, PyObject* unused) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(self, "opweave.state");
    PyObject* stack[OPW_STACK];
    PyObject** vals = stack;
    Py_ssize_t i;
    int rc;
    if (st == NULL) return NULL;
    if (st->n_in > OPW_STACK) {
        vals = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * st->n_in);
        if (!vals) return PyErr_NoMemory();
    }
    for (i = 0; i < st->n_in; i++) vals[i] = PyList_GET_ITEM(st->in_cells[i], 0);
    rc = st->block(vals, st);
    if (vals != stack) PyMem_Free(vals);
    if (rc) return opw_failed(st, rc);
    Py_RETURN_NONE;
}

static PyObject* opw_call_held(opw_state* st, PyObject* const* args, Py_ssize_t nargs) {
    PyObject* stack[OPW_STACK];
    PyObject** vals = stack;
    PyObject* result;
    Py_ssize_t i;
    int rc;
    if (st->n_in > OPW_STACK) {
        vals = (PyObject**)PyMem_Malloc(sizeof(PyObject*) * st->n_in);
        if (!vals) return PyErr_NoMemory();
    }
    for (i = 0; i < nargs; i++) {
        opw_cell_set(st->in_cells[i], args[i]);
        vals[i] = args[i];
    }
    for (; i < st->n_in; i++) vals[i] = PyList_GET_ITEM(st->in_cells[i], 0);
    rc = st->block(vals, st);
    if (vals != stack) PyMem_Free(vals);
    if (rc) return opw_failed(st, rc);
    for (i = 0; i < st->n_updates; i++)
        opw_cell_set(st->upd_dst[i], PyList_GET_ITEM(st->upd_src[i], 0));
    if (st->unpack) {
        result = PyList_GET_ITEM(st->user_out[0], 0);
        Py_INCREF(result);
        return result;
    }
    result = PyList_New(st->n_user);
    if (!result) return NULL;
    for (i = 0; i < st->n_user; i++) {
        PyObject* v = PyList_GET_ITEM(st->user_out[i], 0);
        Py_INCREF(v);
        PyList_SET_ITEM(result, i, v);
    }
    return result;
}

static PyObject* opw_call(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    opw_state* st = (opw_state*)PyCapsule_GetPointer(self, "opweave.state");
    PyObject* result;
    unsigned long me;
    Py_ssize_t i;
    if (st == NULL) return NULL;
    if (nargs != st->n_args) Py_RETURN_NOTIMPLEMENTED;
    me = PyThread_get_thread_ident();
    if (st->busy && st->busy_forks != opw_forks) st->busy = 0; /* set before a fork */
    if (st->busy) {
        if (st->owner == me) {
            PyErr_SetString(PyExc_RuntimeError,
                            "an opweave function was called again from inside its own call "
                            "(from a filter or an Op it runs)");
            return NULL;
        }
        /* Another thread is inside this call, with the GIL given away (a filter, or a
         * NumPy loop that releases it): give it the GIL until it is done. */
        while (st->busy) {
            Py_BEGIN_ALLOW_THREADS
            sched_yield();
            Py_END_ALLOW_THREADS
        }
    }
    st->busy = 1;
    st->busy_forks = opw_forks;
    st->owner = me;
    result = opw_call_held(st, args, nargs);
    /* On failure the cells stay for the caller to describe the failing node's inputs; it
     * empties them afterwards. */
    if (result != NULL)
        for (i = 0; i < st->n_clear; i++) opw_cell_set(st->clear[i], Py_None);
    st->busy = 0;
    return result;
}

static PyMethodDef opw_run_def = {"run", (PyCFunction)opw_run, METH_NOARGS,
                                  "Run the block on the values in its storage cells."};
static PyMethodDef opw_call_def = {"call", (PyCFunction)(void (*)(void))opw_call, METH_FASTCALL,
                                   "Run the block on the arguments; apply updates; return outputs."};

static int opw_check_cells(PyObject* t, const char* what) {
    Py_ssize_t i;
    if (!PyTuple_Check(t)) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple", what);
        return -1;
    }
    for (i = 0; i < PyTuple_GET_SIZE(t); i++) {
        PyObject* c = PyTuple_GET_ITEM(t, i);
        if (!PyList_Check(c) || PyList_GET_SIZE(c) != 1) {
            PyErr_Format(PyExc_TypeError, "%s[%zd] must be a one-element list", what, i);
            return -1;
        }
    }
    return 0;
}

OPW_RT PyObject* opw_link(opw_block_fn block, Py_ssize_t n_in, Py_ssize_t n_out,
                          PyObject* args) {
    PyObject *in_cells, *out_cells, *filters, *failcell, *upd_src, *upd_dst, *user_out, *clear;
    PyObject *capsule = NULL, *run = NULL, *call = NULL, *result = NULL;
    Py_ssize_t n_args;
    int unpack;
    opw_state* st;
    if (!PyArg_ParseTuple(args, "O!O!O!O!nO!O!O!pO!", &PyTuple_Type, &in_cells, &PyTuple_Type,
                          &out_cells, &PyTuple_Type, &filters, &PyList_Type, &failcell, &n_args,
                          &PyTuple_Type, &upd_src, &PyTuple_Type, &upd_dst, &PyTuple_Type,
                          &user_out, &unpack, &PyTuple_Type, &clear))
        return NULL;
    if (opw_check_cells(in_cells, "in_cells") || opw_check_cells(out_cells, "out_cells") ||
        opw_check_cells(upd_src, "upd_src") || opw_check_cells(upd_dst, "upd_dst") ||
        opw_check_cells(user_out, "user_out") || opw_check_cells(clear, "clear"))
        return NULL;
    if (PyTuple_GET_SIZE(in_cells) != n_in || PyTuple_GET_SIZE(out_cells) != n_out ||
        PyTuple_GET_SIZE(filters) != n_in || PyList_GET_SIZE(failcell) != 1 || n_args < 0 ||
        n_args > n_in || PyTuple_GET_SIZE(upd_src) != PyTuple_GET_SIZE(upd_dst) ||
        (unpack && PyTuple_GET_SIZE(user_out) < 1)) {
        PyErr_Format(PyExc_ValueError,
                     "link: this block takes %zd input and %zd output cells", n_in, n_out);
        return NULL;
    }
    pthread_once(&opw_forks_once, opw_watch_forks);
    st = (opw_state*)PyMem_Calloc(1, sizeof(opw_state));
    if (!st) return PyErr_NoMemory();
    st->keep =
        PyTuple_Pack(8, in_cells, out_cells, filters, failcell, upd_src, upd_dst, user_out, clear);
    if (!st->keep) { PyMem_Free(st); return NULL; }
    st->block = block;
    st->n_in = n_in; st->n_out = n_out; st->n_args = n_args;
    st->n_updates = PyTuple_GET_SIZE(upd_src);
    st->n_user = PyTuple_GET_SIZE(user_out);
    st->unpack = unpack;
    st->in_cells = OPW_ITEMS(in_cells);
    st->out_cells = OPW_ITEMS(out_cells);
    st->filters = OPW_ITEMS(filters);
    st->failcell = failcell;
    st->upd_src = OPW_ITEMS(upd_src);
    st->upd_dst = OPW_ITEMS(upd_dst);
    st->user_out = OPW_ITEMS(user_out);
    st->clear = OPW_ITEMS(clear);
    st->n_clear = PyTuple_GET_SIZE(clear);
    capsule = PyCapsule_New(st, "opweave.state", opw_state_free);
    if (!capsule) { Py_DECREF(st->keep); PyMem_Free(st); return NULL; }
    run = PyCFunction_New(&opw_run_def, capsule);
    call = PyCFunction_New(&opw_call_def, capsule);
    if (run && call) result = PyTuple_Pack(2, run, call);
    Py_XDECREF(run);
    Py_XDECREF(call);
    Py_DECREF(capsule);
    return result;
}

#endif /* !OPW_RUNTIME_LINKED */
#endif /* OPW_RUNTIME_FUNCTIONS_H */
